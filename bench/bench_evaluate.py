"""Benchmark: ``lexgold evaluate`` and ``lexgold analogy`` beside their floors, in one run.

Each row runs a lexgold command and its anchor as fresh subprocesses, in turn (A, B, A, B ...),
and prints the median wall and CPU seconds, the peak resident memory, the ratio and the load
average of the machine:

- imports: ``python -c "import numpy"`` vs importing what ``lexgold evaluate`` loads
  (``lexgold.cli`` and ``lexgold.evaluate.output``);
- evaluate: a minimal Python scan of the vector file (line by line in binary, keeping the rows
  of the gold words, numpy for the cosines and Spearman's rho) vs
  ``lexgold evaluate --gold SimLex-999 --vectors FILE --case lower --json`` (default 1,000
  bootstrap resamples; ``--bootstrap 0`` printed too); both must print the same rho;
- analogy: pandas' ``read_csv`` of the vector file plus lexgold's ADD solve of the same
  questions vs ``lexgold analogy --method ADD --json``; both must give the same accuracy.

The vector files are synthetic and seeded (``--seed``), written to a temporary folder and
deleted after: word2vec text with a header, 300 values of 6 decimals per row (2,000 random rows
drawn once and cycled: parsing costs the same), the words of SimLex-999 (gensim's copy) or of
gensim's ``questions-words.txt`` at random rows among filler words ``zz0000000`` ...

    nice .venv/bin/python bench/bench_evaluate.py [--rows 300000] [--analogy-rows 100000]
        [--repeat 3] [--parts imports,evaluate,analogy] [--dir /tmp] [--before CLONE]

``--before CLONE`` runs the same lexgold command from another checkout (e.g. the main branch
before a change) as a third side, in the same turns, for a before/after in one run.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import gensim
import numpy as np

REPO = Path(__file__).resolve().parent.parent
DATA = Path(gensim.__file__).parent / "test" / "test_data"
SIMLEX = DATA / "simlex999.txt"
QUESTIONS = DATA / "questions-words.txt"
POOL = 2_000

MINIMAL_SCAN = r'''
import sys
import numpy as np
vectors, gold = sys.argv[1], sys.argv[2]
pairs = []
for line in open(gold, encoding="utf-8"):
    if line.startswith("#") or not line.strip():
        continue
    a, b, score = line.split("\t")[:3]
    pairs.append((a.lower(), b.lower(), float(score)))
wanted = {w for a, b, _ in pairs for w in (a, b)}
rows = {}
with open(vectors, "rb") as handle:
    handle.readline()
    for line in handle:
        word = line[:line.find(b" ")].decode("utf-8").lower()
        if word in wanted and word not in rows:
            rows[word] = np.asarray(line.split()[1:], dtype=np.float32)
kept = [(rows[a], rows[b], s) for a, b, s in pairs if a in rows and b in rows]
left = np.array([k[0] for k in kept], dtype=float)
right = np.array([k[1] for k in kept], dtype=float)
cosine = (left * right).sum(1) / np.linalg.norm(left, axis=1) / np.linalg.norm(right, axis=1)
def ranks(x):
    order = np.argsort(x, kind="stable")
    r = np.empty(len(x))
    r[order] = np.arange(1, len(x) + 1)
    for value in np.unique(x):                  # ties share their mean rank
        tied = x == value
        r[tied] = r[tied].mean()
    return r
rho = np.corrcoef(ranks(np.array([k[2] for k in kept])), ranks(cosine))[0, 1]
print(f"{rho:.12f} {len(kept)}")
'''

PANDAS_SOLVE = r'''
import csv, json, sys
import numpy as np
import pandas as pd
from lexgold.evaluate.analogy import read_questions, solve
from lexgold.evaluate.vectors import Vectors
path, questions = sys.argv[1], sys.argv[2]
frame = pd.read_csv(path, sep=" ", header=None, skiprows=1, quoting=csv.QUOTE_NONE,
                    dtype={0: str}, keep_default_na=False, engine="c")
words = frame[0].tolist()
matrix = frame.iloc[:, 1:].to_numpy(dtype=np.float32)
del frame
result = solve(read_questions(questions), Vectors(words, matrix, path), ["ADD"], in_place=True)
print(json.dumps({"ADD": result["ADD"]["all"], "covered": result["counts"]["all"]["covered"]}))
'''


def load() -> str:
    return ", ".join(f"{v:.2f}" for v in os.getloadavg())


def measure(command, pythonpath: str | None = None) -> dict:
    """Wall and CPU seconds, peak RSS (MiB) and stdout of ``command`` in a fresh measuring
    process (RUSAGE_CHILDREN then covers that command alone)."""
    probe = ("import json, resource, subprocess, sys, time\n"
             "start = time.perf_counter()\n"
             "done = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
             "seconds = time.perf_counter() - start\n"
             "usage = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
             "print(json.dumps({'wall': seconds, 'cpu': usage.ru_utime + usage.ru_stime,\n"
             "                  'rss': usage.ru_maxrss / 1024, 'code': done.returncode,\n"
             "                  'out': done.stdout, 'err': done.stderr}))\n")
    checkout = pythonpath or str(REPO)     # ``python -c`` imports from its working folder first
    env = dict(os.environ, PYTHONPATH=checkout)
    done = subprocess.run([sys.executable, "-c", probe, *map(str, command)], capture_output=True,
                          text=True, check=True, env=env, cwd=checkout)
    report = json.loads(done.stdout)
    if report["code"]:
        raise SystemExit(f"{' '.join(map(str, command))} failed:\n{report['err']}")
    return report


def paired(name, ours, anchor, repeat: int, check=None, before: str | None = None) -> None:
    """Run ``anchor`` and ``ours`` (and ``ours`` from the checkout ``before``) in turn
    ``repeat`` times; print medians and the ratios."""
    runs = {"anchor": [], "lexgold": [], **({"before": []} if before else {})}
    start = load()
    for _ in range(repeat):
        runs["anchor"].append(measure(anchor))
        runs["lexgold"].append(measure(ours))
        if before:
            runs["before"].append(measure(ours, before))
    after = load()
    median = {side: {key: statistics.median(r[key] for r in found) for key in ("wall", "cpu", "rss")}
              for side, found in runs.items()}
    for side in runs:
        m = median[side]
        walls = ", ".join(f"{r['wall']:.2f}" for r in runs[side])
        print(f"  {side:8s} wall {m['wall']:6.2f} s (runs {walls})  CPU {m['cpu']:6.2f} s  "
              f"peak {m['rss']:5.0f} MiB")
    for side in [s for s in runs if s != "anchor"]:
        print(f"  {name}: {side} / anchor = "
              f"{median[side]['wall'] / median['anchor']['wall']:.2f}x wall, "
              f"{median[side]['cpu'] / median['anchor']['cpu']:.2f}x CPU (median of {repeat})")
    print(f"  load average (1, 5, 15 min) before {start}, after {after}")
    if check:
        print("  " + check(runs["lexgold"][0]["out"], runs["anchor"][0]["out"]))


def write_vectors(path: Path, rows: int, words: list[str], seed: int) -> None:
    """word2vec text: ``words`` at random rows among filler words, 300 values per row."""
    rng = np.random.default_rng(seed)
    pool = [" ".join(f"{v:.6f}" for v in row) for row in rng.normal(0, 0.1, size=(POOL, 300))]
    rows = max(rows, len(words))
    names = [f"zz{i:07d}" for i in range(rows)]
    for word, row in zip(words, rng.choice(rows, size=len(words), replace=False)):
        names[row] = word
    picks = rng.integers(0, POOL, size=rows)
    with open(path, "w", encoding="utf-8") as out:
        out.write(f"{rows} 300\n")
        for start in range(0, rows, 10_000):
            out.write("".join(f"{names[i]} {pool[picks[i]]}\n"
                              for i in range(start, min(rows, start + 10_000))))


def simlex_words() -> list[str]:
    words = set()
    for line in SIMLEX.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            words.update(w.lower() for w in line.split("\t")[:2])
    return sorted(words)


def question_words() -> list[str]:
    words = set()
    for line in QUESTIONS.read_text(encoding="utf-8").splitlines():
        if not line.startswith(":"):
            words.update(w.lower() for w in line.split())
    return sorted(words)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=300_000, help="rows of the evaluate file")
    parser.add_argument("--analogy-rows", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--parts", default="imports,evaluate,analogy")
    parser.add_argument("--dir", type=Path, help="folder for the temporary files")
    parser.add_argument("--before", help="another lexgold checkout, run as a third side")
    args = parser.parse_args()
    sys.stdout.reconfigure(line_buffering=True)
    parts = {p.strip() for p in args.parts.split(",")}
    python = sys.executable
    lexgold = [python, "-c", "from lexgold.cli import main; main()"]
    print(f"load average (1, 5, 15 min): {load()}; {os.cpu_count()} cores; "
          f"nice {os.nice(0)}; {args.repeat} runs per side")
    if "imports" in parts:
        print("\nimports")
        paired("imports", [python, "-c", "import lexgold.cli, lexgold.evaluate.output"],
               [python, "-c", "import numpy"], args.repeat)
        paired("import lexgold.evaluate.report (what the command needed before)",
               [python, "-c", "import lexgold.cli, lexgold.evaluate.report"],
               [python, "-c", "import numpy"], args.repeat, before=args.before)
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        folder = Path(tmp)
        if "evaluate" in parts:
            path = folder / "evaluate.vec"
            start = time.perf_counter()
            write_vectors(path, args.rows, simlex_words(), args.seed)
            print(f"\nevaluate: {args.rows:,} x 300 word2vec text ({path.stat().st_size / 2**20:,.0f}"
                  f" MiB, written in {time.perf_counter() - start:.0f} s), gold {SIMLEX.name}")

            def same_rho(ours, anchor):
                ours, anchor = json.loads(ours), anchor.split()
                equal = abs(ours["spearman"] - float(anchor[0])) < 1e-9
                return (f"spearman lexgold {ours['spearman']:.9f} on {ours['used']} pairs, "
                        f"scan {float(anchor[0]):.9f} on {anchor[1]}: "
                        f"{'EQUAL' if equal else 'DIFFERENT'}")

            scan = [python, "-c", MINIMAL_SCAN, path, SIMLEX]
            command = [*lexgold, "evaluate", "--gold", SIMLEX, "--vectors", path, "--case",
                       "lower", "--json"]
            paired("evaluate", command, scan, args.repeat, same_rho, args.before)
            print("without bootstrap intervals (--bootstrap 0):")
            paired("evaluate --bootstrap 0", [*command, "--bootstrap", "0"], scan, args.repeat,
                   same_rho, args.before)
            path.unlink()
        if "analogy" in parts:
            path = folder / "analogy.vec"
            write_vectors(path, args.analogy_rows, question_words(), args.seed)
            print(f"\nanalogy: {args.analogy_rows:,} x 300 word2vec text "
                  f"({path.stat().st_size / 2**20:,.0f} MiB), {QUESTIONS.name}, ADD")

            def same_accuracy(ours, anchor):
                ours, anchor = json.loads(ours), json.loads(anchor)
                same = (ours["ADD"]["all"] == anchor["ADD"]
                        and ours["counts"]["all"]["covered"] == anchor["covered"])
                return (f"ADD accuracy lexgold {ours['ADD']['all']:.6f} on "
                        f"{ours['counts']['all']['covered']:,} questions, pandas + solve "
                        f"{anchor['ADD']:.6f} on {anchor['covered']:,}: "
                        f"{'EQUAL' if same else 'DIFFERENT'} (random vectors: about 0)")

            paired("analogy", [*lexgold, "analogy", "--questions", QUESTIONS, "--vectors", path,
                               "--method", "ADD", "--json"],
                   [python, "-c", PANDAS_SOLVE, path, QUESTIONS], args.repeat, same_accuracy,
                   args.before)


if __name__ == "__main__":
    main()
