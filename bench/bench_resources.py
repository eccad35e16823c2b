"""Benchmark: loading the resources (target: all USF files in under 3 s).

    .venv/bin/python bench/bench_resources.py [--repeat 5]
"""

import argparse
import statistics
import time

from lexgold.resources import load_wordnet, read_brysbaert, read_usf
from lexgold.resources.pos import penn_tag_counts


def timed(function, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times), min(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    start = time.perf_counter()
    load_wordnet()
    print(f"wordnet first load (incl. layout copy if needed): {time.perf_counter() - start:.2f} s")
    for name, function in [("usf (8 files, 72,176 rows)", read_usf),
                           ("brysbaert (39,954 rows)", read_brysbaert),
                           ("lingua penn tag counts", penn_tag_counts)]:
        median, best = timed(function, args.repeat)
        print(f"{name:<30} median {median:.3f} s  best {best:.3f} s  ({args.repeat} runs)")


if __name__ == "__main__":
    main()
