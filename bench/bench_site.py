"""The site's throughput beside an anchor, in one run (issue 39): paired load tests.

For each tree given (``LABEL=PATH``: a checkout of lexgold, e.g. this one and a worktree of an
older commit made with ``git worktree add /tmp/anchor SHA``), runs that tree's own
``bench/load_test.py`` with its own code (``PYTHONPATH=PATH``), in turn, ``--turns`` times:
``--stress`` (200 raters, 0.25 s think; SQLite WAL, ``--workers 2``) and, with ``--pace``,
SimLex pace (1,000 raters, 30 s think, which takes about 22 minutes a run; ``--pace-only``: that
alone). Run nothing else meanwhile: three pace runs at once gave p95 of 300-400 ms where one
alone gives about 11 ms. Printed per run:
requests per second (overall and the peak in 10 s), p50/p95/p99 over all requests, errors,
the load average before and after, and the server's CPU milliseconds per request (the user and
system time of the ``lexgold serve`` process tree, read with ``getrusage(RUSAGE_CHILDREN)`` in
the process that ran the load test: on a shared machine this figure moves much less with the
load than the throughput does).

The raters are load_test.py's simulated HTTP clients: figures of the site's cost, not of a
real crowd.

Usage: python bench/bench_site.py now=. anchor=/tmp/bisect-3a2dd77 [--turns 1] [--pace | --pace-only]
       [--db postgresql+psycopg://...]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

#: runs a tree's load_test.py and prints the CPU of its children (the server) as JSON
RUNNER = """
import json, resource, runpy, sys
sys.argv = ["load_test.py", *sys.argv[1:]]
try:
    runpy.run_path("bench/load_test.py", run_name="__main__")
except SystemExit:
    pass
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print("SERVER_CPU", json.dumps(usage.ru_utime + usage.ru_stime))
"""


def run(path: Path, mode: list[str], db: str | None) -> dict:
    with tempfile.TemporaryDirectory() as folder:
        figures = Path(folder) / "figures.json"
        args = [*mode, "--workers", "2", "--json", str(figures)] + (["--db", db] if db else [])
        before = os.getloadavg()[0]
        done = subprocess.run([sys.executable, "-c", RUNNER, *args], cwd=path, text=True,
                              env={**os.environ, "PYTHONPATH": str(path)},
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        after = os.getloadavg()[0]
        cpu = [line.split(None, 1)[1] for line in done.stdout.splitlines()
               if line.startswith("SERVER_CPU ")]
        if not figures.is_file() or not cpu:
            return {"failed": done.stdout[-2000:]}
        summary = json.loads(figures.read_text())
    requests = summary.get("requests") or 0
    return {"summary": summary, "server_cpu_s": float(json.loads(cpu[-1])),
            "requests": requests, "load": (before, after)}


def _line(label: str, result: dict) -> str:
    if "failed" in result:
        return f"{label}: failed\n{result['failed']}"
    s = result["summary"]
    text = (f"{s['requests_per_s']:.1f} req/s over {s['seconds']:.0f} s (peak "
            f"{s['peak_requests_per_s']:.1f} in 10 s), p50/p95/p99 {s['p50_ms']:.0f}/"
            f"{s['p95_ms']:.0f}/{s['p99_ms']:.0f} ms, {s['errors']} errors"
            f"{' ' + str(s['error_kinds']) if s.get('error_kinds') else ''}, "
            f"outcomes {s['outcomes']}")
    ends = "; ".join(f"{name} p95/p99/max {e['p95_ms']:.0f}/{e['p99_ms']:.0f}/{e['max_ms']:.0f}"
                     for name, e in (s.get("endpoints") or {}).items())
    text += f" ({ends} ms)" if ends else ""
    cpu = 1000 * result["server_cpu_s"] / max(1, result["requests"])
    return (f"{label}: {text}; server CPU {result['server_cpu_s']:.1f} s = {cpu:.2f} ms per "
            f"request ({result['requests']} requests); load {result['load'][0]:.1f} -> "
            f"{result['load'][1]:.1f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trees", nargs="+", metavar="LABEL=PATH")
    parser.add_argument("--turns", type=int, default=1)
    parser.add_argument("--pace", action="store_true", help="also SimLex pace (slow)")
    parser.add_argument("--pace-only", action="store_true", help="SimLex pace, no stress run")
    parser.add_argument("--db", help="a PostgreSQL URL (default: a temporary SQLite file)")
    args = parser.parse_args()
    trees = [(spec.split("=", 1)[0], Path(spec.split("=", 1)[1]).resolve())
             for spec in args.trees]
    modes = [] if args.pace_only else [("stress", ["--stress"])]
    if args.pace or args.pace_only:
        modes.append(("pace", ["--raters", "1000", "--think-s", "30"]))
    for turn in range(args.turns):
        for name, mode in modes:
            for label, path in trees:
                print(f"turn {turn + 1} {name} " + _line(label, run(path, mode, args.db)),
                      flush=True)


if __name__ == "__main__":
    main()
