"""Time ``lexgold replay`` at its defaults on the shipped logs, and the site's rule at scale.

Figures (each a fresh process of the CLI of the checkout holding this file, the median of
``--runs`` runs; wall and CPU seconds, user + system, of the child: on a shared machine CPU is
the steadier figure; the load average printed before and after):

- **defaults**: ``lexgold replay LOG --json`` (every policy, 100 splits, pool 8, k = 4, 5, 6) on
  each shipped log of ``--logs`` (``lexgold.crowd.shipped_log``: simverb, wordsim353, danish,
  card660; Card-660 with ``--pool 6 --k 4,5``, its 8 annotators);
- **scale**: ``lexgold replay ratings_10000.csv --policy error --json`` (the site's adaptive
  rule, 100 splits) on ``bench/bench_scale.py``'s study of 10,000 simulated SimLex raters
  (1,409,000 rows; built once into ``--data``), unless ``--skip-scale``.

Each figure is printed beside its anchor (:data:`ANCHORS`): the same command run once by the
checkout of ``main`` before the banded misordering sum (commit 6a7bb54), on this 2-core machine
shared with seven other sessions (load average 8-19: wall times are several times what a quiet
machine gives; CPU seconds are the figure to compare, and even they grow with the load).
Issue 49 measured the defaults on SimVerb at 31.6 s wall on a quiet machine (load about 1).

``--check DIR`` compares each log's JSON (and the scale figure's, ``scale.json``) with
``DIR/<log>.json`` (written by ``--out DIR`` from another checkout) and prints the largest
difference of any figure: a faster replay must leave the printed figures as they were.

    PYTHONPATH=. python bench/bench_replay.py [--logs simverb ...] [--splits 100] [--runs 1]
        [--data /tmp/lexgold-bench-scale] [--skip-scale] [--out DIR] [--check DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
LOGS = ("simverb", "wordsim353", "danish", "card660")
#: the options a log needs beside the defaults (Card-660: 8 annotators, so a pool of 6)
OPTIONS = {"card660": ["--pool", "6", "--k", "4,5"]}
#: main before the banded sum (6a7bb54), measured once (module docstring):
#: figure -> (wall s, CPU s, load average during the run)
ANCHORS = {"defaults, simverb": (119.2, 33.0, "8.2-13"),
           "defaults, wordsim353": (67.4, 6.8, "13"),
           "defaults, danish": (40.3, 5.0, "13"),
           "defaults, card660": (43.8, 7.7, "13"),
           "scale, --policy error": (509.7, 49.6, "15-16")}


def _env() -> dict:
    return {**os.environ, "PYTHONPATH": f"{HERE}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}


def _timed(argv: list[str], out: Path | None) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of ``lexgold ARGV`` in a fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    with open(out, "w") if out else open(os.devnull, "w") as sink:
        subprocess.run([sys.executable, "-c", "from lexgold.cli import cli; cli()", *argv],
                       check=True, env=_env(), stdout=sink)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _median(argv, runs, out):
    times = [_timed(argv, out) for _ in range(runs)]
    return statistics.median(t[0] for t in times), statistics.median(t[1] for t in times)


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def _print(figure: str, wall: float, cpu: float) -> None:
    anchor_wall, anchor_cpu, load = ANCHORS.get(figure, (None, None, ""))
    anchor = (f"anchor {anchor_wall:.1f} s wall, {anchor_cpu:.1f} s CPU (load {load}): "
              f"{anchor_cpu / cpu:.2f}x less CPU" if anchor_cpu else "anchor: not measured")
    print(f"{figure:<24} {wall:7.1f} s wall {cpu:7.1f} s CPU   {anchor}", flush=True)


def _figures(document: dict) -> dict:
    """Every number of a replay JSON, keyed by policy, k and name."""
    found = {}
    for row in document["policies"]:
        for name, value in row.items():
            if isinstance(value, float):
                found[(row["policy"], row["k"], name)] = value
    return found


def _check(log: str, new: Path, old: Path) -> None:
    a, b = _figures(json.loads(new.read_text())), _figures(json.loads(old.read_text()))
    if a.keys() != b.keys():
        print(f"  {log}: rows differ from {old}")
        return
    worst = max((abs(a[key] - b[key]) for key in a), default=0.0)
    print(f"  {log}: {len(a)} figures, largest difference from {old}: {worst:.3g}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logs", nargs="+", default=list(LOGS), choices=LOGS)
    parser.add_argument("--splits", type=int, default=100)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--data", type=Path,
                        default=Path(tempfile.gettempdir()) / "lexgold-bench-scale")
    parser.add_argument("--skip-scale", action="store_true")
    parser.add_argument("--out", type=Path, help="keep each log's JSON in this folder")
    parser.add_argument("--check", type=Path, help="compare with the JSON in this folder")
    args = parser.parse_args()
    from lexgold.crowd.logs import shipped_log

    folder = Path(tempfile.mkdtemp(prefix="bench-replay-"))
    out = args.out or folder
    out.mkdir(parents=True, exist_ok=True)
    print(f"load before: {_load()}; {args.splits} splits, median of {args.runs} run(s)")
    for log in args.logs:
        path = folder / f"{log}.csv"
        shipped_log(log)[0].to_csv(path, index=False)
        argv = ["replay", str(path), "--splits", str(args.splits), "--json",
                *OPTIONS.get(log, [])]
        wall, cpu = _median(argv, args.runs, out / f"{log}.json")
        _print(f"defaults, {log}", wall, cpu)
        if args.check:
            _check(log, out / f"{log}.json", args.check / f"{log}.json")
    if not args.skip_scale:
        sys.path.insert(0, str(HERE / "bench"))
        from bench_scale import build_study

        ratings, _ = build_study(10000, args.data)
        argv = ["replay", str(ratings), "--policy", "error", "--splits", str(args.splits),
                "--json"]
        wall, cpu = _median(argv, args.runs, out / "scale.json")
        _print("scale, --policy error", wall, cpu)
        if args.check:
            _check("scale", out / "scale.json", args.check / "scale.json")
    print(f"load after: {_load()}")


if __name__ == "__main__":
    main()
