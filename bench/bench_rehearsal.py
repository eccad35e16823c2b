"""Rehearsals of the packaged studies: time, raters, top-ups, and a release of every pair.

For each protocol asked for (default: simlex and hyperlex), the builder's pair set is built
(`lexgold build ... --seed 1`, HyperLex as a draft with `--no-check`), a study is created from
it with the packaged protocol, rehearsed by simulated raters through its own site
(`lexgold.annotate.rehearse`, seed 1, default crowd) and processed from the study
(`lexgold process STUDY`). Printed per protocol: pairs, tranches, places at the start and added
by top-ups, raters who entered, pages, requests, simulated hours, the rehearsal's wall time and
requests per second, the processing time, and whether the release holds every pair of the
study (HyperLex: each on at least 10 accepted raters).

Targets (issue 20, 2 cores): SimLex under 3 minutes, HyperLex under 5 minutes.

``--fsync-ab N`` instead rehearses the same study N times in turn with the site's per-commit
fsync (SQLite's synchronous=FULL) and without it (synchronous=NORMAL, what the rehearsal uses),
each on a fresh copy, ``--max-raters`` raters each (default 40), and prints each run's wall
time, the medians and the load average; the stored answers must be the same.

Usage: python bench/bench_rehearsal.py [--protocol simlex] [--protocol hyperlex] [--out DIR]
       python bench/bench_rehearsal.py --protocol simlex --fsync-ab 3 [--max-raters 40]
"""

from __future__ import annotations

import os

for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

import lexgold.annotate.rehearse as rehearsal  # noqa: E402
from lexgold.study.db import database_url  # noqa: E402
from lexgold.annotate.rehearse import rehearse  # noqa: E402
from lexgold.study.store import create_study  # noqa: E402
from lexgold.process.pipeline import run  # noqa: E402

BUILD = {"simlex": ["build", "simlex", "--seed", "1"],
         "hyperlex": ["build", "hyperlex", "--seed", "1", "--no-check"],
         "tr9856": ["build", "tr9856", "--seed", "1"]}


def lexgold(*args: str) -> None:
    subprocess.run([sys.executable, "-c", "from lexgold.cli import main; main()", *args],
                   check=True, stdout=subprocess.DEVNULL)


def bench(protocol: str, folder: Path) -> dict:
    pairs = folder / protocol / "pairs.csv"
    if not pairs.is_file():
        lexgold(*BUILD[protocol], "--out", str(folder / protocol))
    db = folder / f"{protocol}.sqlite"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    design = create_study(protocol, pairs, database_url(db), seed=1)
    started = time.perf_counter()
    result = rehearse(database_url(db), rng=np.random.default_rng(1))
    rehearsal = time.perf_counter() - started
    started = time.perf_counter()
    report = run(db, None, folder / f"{protocol}-gold", seed=1, plots=False)
    processing = time.perf_counter() - started
    counts = report["counts"]
    return {"pairs": design["pairs"], "tranches": design["tranches"],
            "places": result["places"], "top_up_places": result["top_up_places"],
            "raters": result["raters"], "completed": result["completed"],
            "screened_out": result["screened_out"], "pages": result["pages"],
            "requests": result["requests"], "simulated_hours": result["simulated_hours"],
            "rehearsal_s": round(rehearsal, 1),
            "requests_per_s": round(result["requests"] / rehearsal),
            "process_s": round(processing, 1), "released_pairs": counts["released_pairs"],
            "every_pair_released": counts["released_pairs"] == design["pairs"],
            "fewest_accepted_raters": counts["min_raters_per_pair"]}


def fsync_ab(protocol: str, folder: Path, turns: int, max_raters: int) -> None:
    """Paired runs, with and without the per-commit fsync, on copies of one fresh study."""
    pairs = folder / protocol / "pairs.csv"
    if not pairs.is_file():
        lexgold(*BUILD[protocol], "--out", str(folder / protocol))
    fresh = folder / f"{protocol}-fresh.sqlite"
    fresh.unlink(missing_ok=True)
    create_study(protocol, pairs, database_url(fresh), seed=1)
    without_sync = rehearsal._without_sync
    times = {"fsync per commit (synchronous=FULL)": [], "rehearsal (synchronous=NORMAL)": []}
    answers = set()
    for turn in range(turns):
        for mode in times:
            rehearsal._without_sync = (without_sync if "NORMAL" in mode
                                       else lambda engine: None)
            db = folder / f"{protocol}-ab.sqlite"
            for suffix in ("", "-wal", "-shm"):
                Path(f"{db}{suffix}").unlink(missing_ok=True)
            shutil.copy(fresh, db)
            started = time.perf_counter()
            result = rehearse(database_url(db), rng=np.random.default_rng(1),
                              max_raters=max_raters)
            times[mode].append(time.perf_counter() - started)
            answers.add((result["pages"], result["requests"]))
            print(f"turn {turn + 1} {mode}: {times[mode][-1]:.1f} s, "
                  f"{result['requests']} requests, load {os.getloadavg()[0]:.1f}", flush=True)
    rehearsal._without_sync = without_sync
    for mode, values in times.items():
        print(f"median {mode}: {statistics.median(values):.1f} s over {turns} runs")
    print("same pages and requests in every run:", len(answers) == 1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--protocol", action="append", choices=sorted(BUILD))
    parser.add_argument("--out", type=Path, help="Work folder (kept); default: a temporary one.")
    parser.add_argument("--fsync-ab", type=int, default=0, metavar="N",
                        help="Paired runs with and without the per-commit fsync (see above).")
    parser.add_argument("--max-raters", type=int, default=40,
                        help="Raters per run of --fsync-ab.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temporary:
        folder = args.out or Path(temporary)
        folder.mkdir(parents=True, exist_ok=True)
        for protocol in args.protocol or ["simlex", "hyperlex"]:
            if args.fsync_ab:
                fsync_ab(protocol, folder, args.fsync_ab, args.max_raters)
                continue
            print(protocol, json.dumps(bench(protocol, folder)), flush=True)


if __name__ == "__main__":
    main()
