"""The cost tools at research scale (issue 49): `lexgold plan`, `machine worth`, `crowd fit` and
`replay`, wall time, CPU time and peak memory on bench/bench_scale.py's SimLex studies of 2,000,
10,000 and 20,000 finished raters (281,800, 1.41 M and 2.82 M rows, 999 USF pairs;
``build_study``, cached under ``--data``).

- plan: ``lexgold plan LOG --json --quiet`` (defaults: ``--max-raters 20``, seed 0);
- machine worth: ``lexgold machine worth LOG --vectors KV --json`` (defaults: pool 5, 40
  splits; the alternative annotator test runs, the raters being identified). The machine is
  the cosine of word vectors: ``--vectors``, default the wefe wheel's ``test_model.kv``
  (docs/evaluate.md says how to get it), which covers 429 of the 999 pairs;
- crowd fit: ``lexgold crowd fit LOG --out crowd.json --json`` (defaults);
- replay: ``lexgold replay LOG --policy error --json`` (the site's rule; 100 splits, pool 8).

Each command is one fresh subprocess of this checkout or the one given by ``--root``: wall
seconds, CPU seconds (user + system) and the child's peak resident memory (``ru_maxrss`` of
``os.wait4``). Beside each figure, its anchors:

- **read**: a fresh process that reads the same file with plain pandas (``read_csv`` of the
  columns used, categorical keys) and takes each pair's mean, measured in the same run: the
  floor of any tool that reads the log;
- **before**: ``--anchor-root DIR``, a checkout of the tree before (``git archive main``),
  measured right after each command (paired); without it, :data:`BEFORE`.

``--outputs DIR`` keeps every run's output (``NAME_RATERS_now.json``, ``..._before.json``), to
compare them byte for byte.

Measured on 2026-11-29 (load 2-8 on the shared 2-core machine; CPU seconds and peak RSS are
the figures, wall was 1-5x CPU), beside main at cff59bb, paired: see docs/performance.md's
cost-scale row for the figures and what each command still holds per rating.

Usage: python bench/bench_cost_scale.py [--raters 2000 10000] [--commands plan worth fit
       replay] [--root DIR] [--anchor-root DIR] [--vectors test_model.kv]
       [--data /tmp/lexgold-bench-scale] [--timeout 3600] [--outputs DIR]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
CLI = "from lexgold.cli import main; main()"
COMMANDS = ("plan", "worth", "fit", "replay")
#: the plain pandas reading of the same file: the columns used, the pair means
READ = """
import sys
import pandas as pd
frame = pd.read_csv(sys.argv[1], usecols=["rater_id", "word1", "word2", "rating", "kind"],
                    dtype={"rater_id": "category", "word1": "category", "word2": "category",
                           "kind": "category"})
frame = frame[frame["kind"] != "checkpoint"]
print(len(frame.groupby(["word1", "word2"], observed=True)["rating"].mean()))
"""
#: main at cff59bb (before), measured paired at load 2-8 on the shared 2-core machine:
#: (wall s, CPU s, peak MB)
BEFORE = {("plan", 2000): (111.2, 24.0, 237), ("plan", 10000): (396.5, 109.6, 509),
          ("worth", 2000): (19.9, 3.2, 266), ("worth", 10000): (45.4, 8.1, 608),
          ("worth", 20000): (73.7, 14.7, 1037), ("fit", 2000): (297.7, 78.0, 425),
          ("fit", 10000): (389.9, 226.0, 603), ("replay", 2000): (16.0, 4.2, 183),
          ("replay", 10000): (48.8, 13.7, 452), ("replay", 20000): (117.8, 26.8, 818)}


def command(name: str, log: Path, vectors: Path, folder: Path) -> list[str]:
    if name == "plan":
        return [sys.executable, "-c", CLI, "plan", str(log), "--json", "--quiet"]
    if name == "fit":
        return [sys.executable, "-c", CLI, "crowd", "fit", str(log), "--out",
                str(folder / "crowd.json"), "--json"]
    if name == "replay":
        return [sys.executable, "-c", CLI, "replay", str(log), "--policy", "error", "--json"]
    return [sys.executable, "-c", CLI, "machine", "worth", str(log), "--vectors", str(vectors),
            "--json"]


def shown(figures) -> str:
    if figures is None:
        return "not run"
    wall, cpu, mb = figures
    return (f"{'stopped' if wall is None else f'{wall:.1f} s'} wall, {cpu:.1f} s CPU, "
            f"{mb:.0f} MB")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--raters", type=int, nargs="+", default=[2000, 10000])
    parser.add_argument("--commands", nargs="+", choices=COMMANDS, default=list(COMMANDS))
    parser.add_argument("--root", type=Path, default=HERE)
    parser.add_argument("--anchor-root", type=Path, default=None)
    parser.add_argument("--vectors", type=Path, default=Path("test_model.kv"))
    parser.add_argument("--data", type=Path,
                        default=Path(tempfile.gettempdir()) / "lexgold-bench-scale")
    parser.add_argument("--timeout", type=float, default=3600)
    parser.add_argument("--outputs", type=Path, default=None,
                        help="keep each run's output here (NAME_RATERS_now.json, ..._before.json)")
    args = parser.parse_args()
    if "worth" in args.commands and not args.vectors.is_file():
        raise SystemExit(f"{args.vectors}: no such file (--vectors; docs/evaluate.md)")
    sys.path.insert(0, str(HERE / "bench"))
    from bench_scale import build_study, measure_until

    print(f"load average {os.getloadavg()[0]:.1f}; checkout {args.root}")
    for raters in args.raters:
        log = build_study(raters, args.data)[0]
        with tempfile.TemporaryDirectory() as folder:
            script = Path(folder) / "read.py"
            script.write_text(READ)
            read = measure_until([sys.executable, str(script), str(log)], HERE, args.timeout)
        for name in args.commands:
            with tempfile.TemporaryDirectory() as folder:
                argv = command(name, log.resolve(), args.vectors.resolve(), Path(folder))

                def run(root: Path, which: str):
                    if args.outputs is None:
                        return measure_until(argv, root.resolve(), args.timeout)
                    args.outputs.mkdir(parents=True, exist_ok=True)
                    with open(args.outputs / f"{name}_{raters}_{which}.json", "wb") as out:
                        return measure_until(argv, root.resolve(), args.timeout, out)

                now = run(args.root, "now")
                before = (run(args.anchor_root, "before") if args.anchor_root
                          else BEFORE.get((name, raters)))
            label = "before (measured now)" if args.anchor_root else "before (cff59bb)"
            print(f"{name:<6} {raters:>6} raters: {shown(now)}   (read: {shown(read)}; "
                  f"{label}: {shown(before)}; load average now {os.getloadavg()[0]:.1f})",
                  flush=True)


if __name__ == "__main__":
    main()
