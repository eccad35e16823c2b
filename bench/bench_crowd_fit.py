"""`lexgold crowd fit` at research scale (issues 48 and 49): wall time and peak memory on three
logs made here, deterministically (seeded):

- ``scale10k``: bench/bench_scale.py's 10,000-rater SimLex study (1.39 M rows, 999 pairs,
  ``build_study(10000, ...)``, cached under ``--data``);
- ``pairs30k``: 300,000 ratings of 30,000 pairs (10 each) by 3,000 identified raters (100
  each, the raters of a pair distinct), drawn from the default crowd (seed 1);
- ``oneeach1800``: 1,800 raters with one rating each, 10 ratings of each of 180 pairs (seed 2).

Each fit is one fresh subprocess (``lexgold crowd fit LOG --json --out ...``, ``--replicates
1``) of this checkout or the one given by ``--root``: wall seconds, CPU seconds (user + system),
the child's peak resident memory (``ru_maxrss`` of ``os.wait4``), and the EM iterations the
crowd's notes record (CPU seconds per iteration: the whole command's CPU over them, the read
and the SD comparison included); a fit still running after ``--timeout`` seconds is stopped and
reported as such.

Anchor: the tree before issue 49's fitting changes (commit 6a7bb54), ANCHOR below: measured
once by the author where the machine allowed, else the figure of issues 48/49 (said so); for
``scale10k`` also the tree before the lapse/df step on expected counts (commit d2f11cf),
measured in process at load 10-19: 79-101 s CPU an EM iteration (68 s at load 6-10), 584 MB
peak, so about an hour of CPU for a fit of up to 40 iterations; and the tree before issue 49's
third bullet's fitting changes (c0e7765, this command, quiet machine): 231 s CPU, 689 MB peak,
26 EM iterations of 8.9 s CPU, stopped on a figure that left out the spammers' part of the
fit's objective (it fell after iteration 21 while the objective rose); the tree after that
bullet (3083deb, this command, 2026-11-29, load 5.1 falling to 2.6): 219.2 s CPU, 609 MB, 40
EM iterations (the cap) of 5.5 s CPU, bound -1,957,278.33. A warm start from a seeded
subsample of 1,000 raters (f6e0817, taken out by the commit after it; ``--root`` an export of
that tree, load 1.6-2.1): 244.3 s CPU (260.4 s at load 4.2), 607 MB, 36 subsample and 40
full iterations (the cap), bound -1,956,656.13: the subsample costs about 40 s CPU and the
full fit gains from its start as a cold one does (docs/performance.md, crowd-fit row). The
pass over the filled cells at the grid cells of positive weight only (1d34eb9; this command,
2026-11-29, two runs alternating with two of an export of the tree before it by ``--root``,
load 5.3-7.7): 139.2 and 141.2 s CPU, 491 and 498 MB, 40 EM iterations of 3.5 s CPU, bound
-1,957,278.33 and every figure below equal to the tree before's (222.1 and 217.4 s CPU, 600
and 610 MB, 40 iterations of 5.4-5.6 s CPU, the same bound). After the tree before this
change (b01e8bf: 140.8 s CPU, 452 MB, 40 iterations, quiet machine), the centring within the
raters' bounds and cheaper iterations (docs/performance.md, crowd-fit row; this command,
2026-11-29, load 0.9): 55.2 s CPU, 430 MB, 21 EM iterations of 2.6 s CPU, bound
-1,964,872.18. Below each fit's timing line, its figures (:func:`figures_of`) to compare two
fits of one log by.

Usage: python bench/bench_crowd_fit.py [--logs scale10k pairs30k oneeach1800] [--root DIR]
       [--data /tmp/lexgold-bench-crowd-fit] [--timeout 600]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HERE / "bench"))
from bench_scale import build_study, measure_until  # noqa: E402

CLI = "from lexgold.cli import main; main()"
LOGS = ("scale10k", "pairs30k", "oneeach1800")
#: the tree before this change (commit 6a7bb54)
ANCHOR = {"scale10k": "6a7bb54 not fitted: issue 49 (its spammer step alone holds [1.3 M "
                      "ratings, 675] float arrays, 7 GB each); d2f11cf 68-101 s CPU an EM "
                      "iteration, 584 MB, about an hour of CPU a fit; c0e7765 231 s CPU, "
                      "689 MB, 26 EM iterations of 8.9 s CPU (quiet machine); b01e8bf "
                      "140.8 s CPU, 452 MB, 40 EM iterations (the cap) of 3.5 s CPU, its "
                      "raters drifting beyond their bounds (quiet machine)",
          "pairs30k": "6.5 GB peak, 72 s (issue 48's log of that size, its raters "
                      "not given; not remeasured)",
          "oneeach1800": "one EM iteration of up to 40 unfinished after 300 s wall (in "
                         "process, load 8-13); 300 such raters: 85 s wall an iteration"}


def drawn_log(path: Path, n_pairs: int, per_pair: int, n_raters: int, seed: int) -> Path:
    """A long-format log of ``n_pairs`` pairs rated ``per_pair`` times each on 0-6 by
    ``n_raters`` identified raters (each rater the same number of ratings, a pair's raters
    distinct), drawn from the default crowd (cached)."""
    import numpy as np
    import pandas as pd

    from lexgold.crowd.model import default_model, draw_pairs, draw_raters, draw_ratings

    if path.exists():
        return path
    rng = np.random.default_rng(seed)
    model = default_model()
    pair = np.repeat(np.arange(n_pairs), per_pair)
    rater = (np.arange(len(pair)) + pair // max(1, n_raters // per_pair)) % n_raters
    scores, spreads = draw_pairs(model, n_pairs, rng)
    people = draw_raters(model, n_raters, rng)
    values = draw_ratings(model, scores[pair], spreads[pair], rng,
                          bias=people["bias"].to_numpy()[rater],
                          scale=people["scale"].to_numpy()[rater],
                          noise=people["noise"].to_numpy()[rater],
                          spammer=people["spammer"].to_numpy()[rater])
    frame = pd.DataFrame({"rater_id": [f"r{r:05d}" for r in rater], "tranche": 1,
                          "word1": [f"w{p:05d}" for p in pair], "word2": "x",
                          "rating": values.astype(int)})
    partial = path.with_suffix(".partial")
    frame.to_csv(partial, index=False)
    partial.rename(path)
    return path


def make_log(name: str, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    if name == "scale10k":
        return build_study(10_000, folder)[0]
    if name == "pairs30k":
        return drawn_log(folder / "pairs30k.csv", 30_000, 10, 3_000, 1)
    return drawn_log(folder / "oneeach1800.csv", 180, 10, 1_800, 2)


def measure(log: Path, root: Path, timeout: float) -> tuple[float | None, float, float,
                                                            int | None, str]:
    """Wall seconds (None: stopped at ``timeout``), peak RSS (MB), CPU seconds (user +
    system), EM iterations (None: stopped) and the fitted figures (:func:`figures_of`) of
    one fit."""
    out = Path(tempfile.mkdtemp()) / "crowd.json"
    argv = [sys.executable, "-c", CLI, "crowd", "fit", str(log), "--scale", "0", "6",
            "--replicates", "1", "--json", "--out", str(out)]
    printed = Path(tempfile.mkdtemp()) / "fit.json"
    with printed.open("wb") as stdout:
        seconds, cpu, mb = measure_until(argv, root, timeout, stdout)
    if seconds is None:
        return None, mb, cpu, None, ""
    return seconds, mb, cpu, iterations_of(out), figures_of(out, printed)


def iterations_of(crowd: Path) -> int:
    """The EM iterations a fitted crowd's notes record ("fitted by EM in N iterations")."""
    import json
    import re

    notes = json.loads(crowd.read_text(encoding="utf-8"))["notes"]
    return int(re.search(r"fitted by EM in (\d+) iterations", notes[0]).group(1))


def figures_of(crowd: Path, printed: Path) -> str:
    """What to compare two fits of one log by: the variational bound (or log-likelihood) the
    crowd's notes record, sigma, lapse, df, the pairs' spread tau, the rater SDs and spammer
    share (scale units, from ``--json``'s ``model``) and the per-pair SD quantiles of the log
    and of the copy simulated from the fit."""
    import json
    import re

    note = json.loads(crowd.read_text(encoding="utf-8"))["notes"][0]
    bound = re.findall(r"(-?\d+\.\d+)\)?$", note.split(";")[0])
    result = json.loads(printed.read_text(encoding="utf-8"))
    model, sds = result["model"], result["sd_quantiles"]
    raters = model.get("raters") or {}
    parts = [f"bound {bound[-1] if bound else '?'}", f"sigma {model['sigma']:.4f}",
             f"lapse {model['lapse']:.4f}", f"df {model['df'] or 0:.1f}",
             f"tau {model['pair_spread_tau']:.4f}"]
    parts += [f"{name} {raters[name]:.4f}" for name in ("bias_sd", "scale_sd_log",
                                                        "noise_sd_log", "spammers")
              if name in raters]
    parts.append("pair SD quantiles real " + "/".join(f"{v:.3f}" for v in sds["real"])
                 + " simulated " + "/".join(f"{v:.3f}" for v in sds["simulated"]))
    return ", ".join(parts)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logs", nargs="+", choices=LOGS, default=list(LOGS))
    parser.add_argument("--root", type=Path, default=HERE)
    parser.add_argument("--data", type=Path,
                        default=Path(tempfile.gettempdir()) / "lexgold-bench-crowd-fit")
    parser.add_argument("--timeout", type=float, default=600)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f}; checkout {args.root}")
    for name in args.logs:
        log = make_log(name, args.data)
        seconds, mb, cpu, iterations, figures = measure(log, args.root.resolve(),
                                                        args.timeout)
        wall = f"stopped after {args.timeout:.0f} s" if seconds is None else f"{seconds:.1f} s"
        per = "" if not iterations else f", {iterations} EM iterations, " \
            f"{cpu / iterations:.1f} s CPU each"
        print(f"{name:<12s} {wall:>22s} wall {cpu:7.1f} s CPU {mb:7.0f} MB peak{per}   "
              f"(anchor: {ANCHOR[name]}; load average now {os.getloadavg()[0]:.1f})",
              flush=True)
        if figures:
            print(f"{'':<12s} {figures}", flush=True)


if __name__ == "__main__":
    main()
