"""Benchmark: loading the resources (target: all USF files in under 3 s), and with
``--commands`` the WordNet-bound commands end to end, cold and warm.

    .venv/bin/python bench/bench_resources.py [--repeat 5]
    .venv/bin/python bench/bench_resources.py --commands [--repeat 3] [--cold-repeat 1]

``--commands`` times, each in a fresh process (wall time, median of the runs):

- ``lexgold build simlex --seed 1`` and ``lexgold build hyperlex --seed 1 --no-check``;
- ``lexgold relations`` on the USF N/V pool (35,975 pairs, as ``bench/bench_relations.py``);
- the same pairs through a per-pair NLTK loop (``lexgold.builder.relations.reference_relation``
  over ``load_wordnet()``, the CSV read and written as ``lexgold relations`` does).

"cold" is an empty lexgold cache folder (``LEXGOLD_CACHE``): the WordNet layout and the WordNet
graph are built in the run; "warm" is the cache as the first cold run left it (what
``lexgold resources`` or ``scripts/setup.sh`` prepare). The outputs of every run of one command
must be byte-identical. Set ``PYTHONPATH`` to time another checkout of lexgold.
"""

import argparse
import hashlib
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LOOP = """
import sys
import pandas as pd
from lexgold.builder.relations import read_pairs, reference_relation
from lexgold.resources import load_wordnet
pairs = read_pairs(sys.argv[1])
reader = load_wordnet()
pairs["relation"] = [reference_relation(reader, a.strip().lower(), b.strip().lower(),
                                        p.strip().upper())
                     for a, b, p in zip(pairs["word1"], pairs["word2"], pairs["pos"])]
pairs.to_csv(sys.argv[2], index=False, lineterminator="\\n", encoding="utf-8")
"""


def timed(function, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times), min(times)


def loading(repeat):
    from lexgold.resources import load_wordnet, read_brysbaert, read_usf
    from lexgold.resources.pos import penn_tag_counts
    start = time.perf_counter()
    load_wordnet()
    print(f"wordnet first load (incl. layout copy if needed): {time.perf_counter() - start:.2f} s")
    for name, function in [("usf (8 files, 72,176 rows)", read_usf),
                           ("brysbaert (39,954 rows)", read_brysbaert),
                           ("lingua penn tag counts", penn_tag_counts)]:
        median, best = timed(function, repeat)
        print(f"{name:<30} median {median:.3f} s  best {best:.3f} s  ({repeat} runs)")


def _digest(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            digest.update(path.relative_to(folder).as_posix().encode() + path.read_bytes())
    return digest.hexdigest()[:16]


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run(argv, cache: Path, out: Path) -> tuple[float, float]:
    """(wall, CPU) seconds of one run of ``argv`` in a fresh process."""
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    env = {**os.environ, "LEXGOLD_CACHE": str(cache)}
    start, cpu = time.perf_counter(), _cpu()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start, _cpu() - cpu
    if done.returncode:
        raise SystemExit(f"{' '.join(map(str, argv))} failed:\n{done.stderr[-2000:]}")
    return seconds


def _median(runs):
    return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)


def _show(measure):
    return f"{measure[0]:.2f}s ({measure[1]:.2f}s)"


def commands(repeat, cold_repeat):
    from lexgold.resources import read_usf
    work = Path(tempfile.mkdtemp(prefix="lexgold-bench-commands-"))
    try:
        usf = read_usf()
        same = ((usf["qps"] == usf["tps"]).fillna(False)
                & usf["qps"].isin(["N", "V"]).fillna(False))
        pairs = usf.loc[same, ["cue", "target", "qps"]].set_axis(["word1", "word2", "pos"], axis=1)
        pairs = pairs.assign(word1=pairs["word1"].str.lower(), word2=pairs["word2"].str.lower())
        pairs.to_csv(work / "pairs.csv", index=False, lineterminator="\n")
        lexgold = [sys.executable, "-c", "from lexgold.cli import main; main()"]
        out = work / "out"
        jobs = {
            "build simlex": lexgold + ["build", "simlex", "--seed", "1", "--out", str(out)],
            "build hyperlex": lexgold + ["build", "hyperlex", "--seed", "1", "--no-check",
                                         "--out", str(out)],
            "relations (USF N/V pool)": lexgold + ["relations", str(work / "pairs.csv"),
                                                   "--out", str(out / "labelled.csv")],
            "per-pair NLTK loop (same pool)": [sys.executable, "-c", LOOP,
                                               str(work / "pairs.csv"), str(out / "labelled.csv")],
        }
        print(f"{len(pairs)} pairs; {repeat} warm / {cold_repeat} cold runs; median wall (CPU)")
        print(f"{'command':<32} {'cold':>17} {'warm':>17}  output")
        results = {}
        for name, argv in jobs.items():
            cold, digests = [], set()
            for run in range(cold_repeat):
                cache = work / f"cache-{list(jobs).index(name)}-{run}"   # one per command
                cold.append(_run(argv, cache, out))
                digests.add(_digest(out))
            warm = []
            for _ in range(repeat):
                warm.append(_run(argv, cache, out))
                digests.add(_digest(out))
            if name.startswith("per-pair"):
                labels = (out / "labelled.csv").read_bytes()
                assert labels == results["relations (USF N/V pool)"][2], "the labels differ"
            else:
                labels = (out / "labelled.csv").read_bytes() if "relations" in name else b""
            assert len(digests) == 1, f"{name}: the runs wrote different bytes"
            results[name] = (_median(cold), _median(warm), labels)
            print(f"{name:<32} {_show(results[name][0]):>17} {_show(results[name][1]):>17}  "
                  f"{digests.pop()}", flush=True)
        fast, loop = results["relations (USF N/V pool)"], results["per-pair NLTK loop (same pool)"]
        print("relations vs the NLTK loop, wall (CPU): "
              f"cold {loop[0][0] / fast[0][0]:.2f}x ({loop[0][1] / fast[0][1]:.2f}x), "
              f"warm {loop[1][0] / fast[1][0]:.2f}x ({loop[1][1] / fast[1][1]:.2f}x); "
              "labels identical")
        print("load average (1, 5, 15 min):", " ".join(f"{x:.2f}" for x in os.getloadavg()))
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=None,
                        help="runs per measure (default 5; 3 with --commands)")
    parser.add_argument("--commands", action="store_true",
                        help="time build simlex / hyperlex and relations cold and warm")
    parser.add_argument("--cold-repeat", type=int, default=1,
                        help="cold runs per command with --commands (each builds the cache)")
    args = parser.parse_args()
    if args.commands:
        commands(args.repeat or 3, args.cold_repeat)
    else:
        loading(args.repeat or 5)


if __name__ == "__main__":
    main()
