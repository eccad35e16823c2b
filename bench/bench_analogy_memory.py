"""Benchmark: peak memory of analogy solving, ``lexgold analogy`` vs gensim, side by side
(issue 22 item 7: lexgold held the matrix, a unit-length copy and 256 MiB score blocks,
585 MiB against gensim's 369 MiB at 100k rows).

A word2vec text file of ``--rows`` random 300-d vectors is written to a temporary folder,
holding every word of gensim's ``questions-words.txt`` first (so the questions are covered).
Each side runs in its own process and reports its peak resident set size (``ru_maxrss``):

- lexgold: ``lexgold analogy --method ADD`` (reads with ``--restrict-vocab`` = rows);
- gensim: ``KeyedVectors.load_word2vec_format`` then ``evaluate_word_analogies``.

    .venv/bin/python bench/bench_analogy_memory.py [--rows 100000]
"""

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import gensim
import numpy as np

QUESTIONS = Path(gensim.__file__).parent / "test" / "test_data" / "questions-words.txt"

PEAK = ("import resource, sys; sys.stdout.flush(); "
        "print('PEAK', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)")
LEXGOLD = ("import sys; from lexgold.cli import main; sys.argv = ['lexgold', 'analogy', "
           "'--questions', {q!r}, '--vectors', {v!r}, '--method', 'ADD', '--restrict-vocab', "
           "'{n}', '--json']\ntry:\n    main()\nexcept SystemExit:\n    pass\n" + PEAK)
GENSIM = ("from gensim.models import KeyedVectors\n"
          "kv = KeyedVectors.load_word2vec_format({v!r})\n"
          "print(kv.evaluate_word_analogies({q!r}, restrict_vocab={n}, "
          "case_insensitive=True)[0])\n" + PEAK)


def write_vectors(path: Path, rows: int, dim: int = 300) -> None:
    words = list(dict.fromkeys(w.lower() for line in QUESTIONS.read_text().splitlines()
                               if not line.startswith(":") for w in line.split()))
    words += [f"w{i}" for i in range(rows - len(words))]
    matrix = np.random.default_rng(0).standard_normal((rows, dim)).astype(np.float32)
    with path.open("w") as handle:
        handle.write(f"{rows} {dim}\n")
        for word, row in zip(words, matrix):
            handle.write(word + " " + " ".join(f"{x:.5f}" for x in row) + "\n")


def peak_mib(code: str) -> float:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    return int(out.split("PEAK")[-1]) / 1024


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=100_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "vectors.txt"
        write_vectors(path, args.rows)
        keys = {"q": str(QUESTIONS), "v": str(path), "n": args.rows}
        ours = peak_mib(LEXGOLD.format(**keys))
        theirs = peak_mib(GENSIM.format(**keys))
    matrix = args.rows * 300 * 4 / 2**20
    print(f"{args.rows:,} x 300 float32 = {matrix:.0f} MiB per copy of the matrix")
    print(f"peak RSS: lexgold analogy {ours:.0f} MiB, gensim {theirs:.0f} MiB "
          f"({ours / theirs:.2f}x)")


if __name__ == "__main__":
    main()
