"""Time ``lexgold machine rate`` on SimVerb-3500's 3,500 pairs against a local fake
chat-completions server (bench/chat_fake.py), and check that a run stopped by a dead server
resumes (issue 45, goal: 3,500 pairs in under a minute with concurrency, resumable).

The pairs are those of the shipped SimVerb-3500 log (``lexgold.crowd.logs.shipped_log``),
written as a two-column ``word1,word2`` CSV; the fake answers each request after ``--latency``
seconds (a fast local server; a hosted API is slower and rate-limited: then ``--concurrency``
and ``--rate-limit`` decide). ``lexgold machine rate`` runs as a user runs it, in a fresh
process (``python -c 'from lexgold.cli import main; main()'``), with ``--protocol simlex``.

1. a full run: wall seconds, requests sent, answers parsed;
2. a resumed run: a new output whose server dies after half the requests (the run fails and
   says what is cached), then the same command again against a live server: the requests the
   rerun sends (the other half only) and the wall seconds of each run.

The load average is printed before and after.

    PYTHONPATH=. python bench/bench_machine_rate.py [--concurrency 16] [--latency 0.02]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from chat_fake import FakeChat  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def simverb_pairs(path: Path, n: int) -> int:
    from lexgold.crowd.logs import shipped_log

    frame, _ = shipped_log("simverb")
    pairs = frame[["word1", "word2"]].drop_duplicates().head(n)
    pairs.to_csv(path, index=False)
    return len(pairs)


def rate(pairs: Path, out: Path, url: str, args) -> tuple[float, subprocess.CompletedProcess]:
    command = [sys.executable, "-c", "from lexgold.cli import main; main()", "machine", "rate",
               str(pairs), "--protocol", "simlex", "--endpoint", url, "--model", "fake-1",
               "--out", str(out), "--concurrency", str(args.concurrency), "--pairs-per-request",
               str(args.pairs_per_request), "--retries", "0", "--quiet"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    return time.perf_counter() - start, done


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=3500)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--pairs-per-request", type=int, default=1)
    parser.add_argument("--latency", type=float, default=0.02,
                        help="seconds the fake server takes per answer")
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()}")
    with tempfile.TemporaryDirectory() as folder, FakeChat(delay_s=args.latency) as fake:
        folder = Path(folder)
        n = simverb_pairs(folder / "pairs.csv", args.pairs)
        seconds, done = rate(folder / "pairs.csv", folder / "full.csv", fake.url, args)
        assert done.returncode == 0, done.stderr + done.stdout
        rows = len((folder / "full.csv").read_text().splitlines()) - 1
        requests = len(fake.calls)
        print(f"full run: {n} pairs in the file, {requests} requests, {rows} ratings, "
              f"concurrency {args.concurrency}, {args.pairs_per_request} pair(s) per request, "
              f"server latency {args.latency} s: {seconds:.1f} s wall")
        fake.calls, fake.answered, fake.die_after = [], 0, requests // 2
        first, done = rate(folder / "pairs.csv", folder / "resumed.csv", fake.url, args)
        assert done.returncode == 1 and "run the same command again to resume" in done.stderr, \
            done.stderr
        print(f"stopped run: the server died after {fake.die_after} answers; "
              f"{done.stderr.strip().splitlines()[-1]} ({first:.1f} s)")
        fake.calls, fake.die_after = [], None
        second, done = rate(folder / "pairs.csv", folder / "resumed.csv", fake.url, args)
        assert done.returncode == 0, done.stderr
        same = (folder / "resumed.csv").read_bytes() == (folder / "full.csv").read_bytes()
        print(f"rerun: {len(fake.calls)} requests sent (of {requests}), {second:.1f} s wall; "
              f"output identical to the full run's: {same}")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
