"""The time of :func:`lexgold.errors.redact` on long adversarial lines (issue 48 item 2).

Before round 5 its URL pattern retried the scheme at every letter of a run: 10,000 letters took
0.05 s, 80,000 3.4 s, and one ``GET /move/`` followed by 250,000 letters froze a waitress
process for 47 s while the database was down. Each line below is printed with its length and
the best of ``--repeat`` runs; the time should grow with the length, not with its square.

Usage: python bench/bench_redact.py [--length 250000] [--repeat 3]
The machine may be shared: quote the load with the figures.
"""

from __future__ import annotations

import argparse
import os
import time

from lexgold.errors import TOKEN_PATHS, redact


def lines(length: int) -> dict[str, str]:
    """The adversarial lines of ``length`` characters: what the probes sent."""
    return {
        "letters": "a" * length,
        "GET /move/ + letters": "database unavailable for GET /move/" + "a" * length,
        "letters then ://u:pw@": "a" * length + "://u:hunter2@db",
        "'a://' repeated": "a://" * (length // 4),
        "'a://b:' repeated": "a://b:" * (length // 6),
        "'password' repeated": "password" * (length // 8),
        "'key ' repeated, no =": "key " * (length // 4),
        "'/move/' repeated": "/move/" * (length // 6),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--length", type=int, default=250_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f}; best of {args.repeat}")
    for name, line in lines(args.length).items():
        best = min(_timed(line) for _ in range(args.repeat))
        print(f"{name:24} {len(line):>9,} characters  {best:.3f} s")


def _timed(line: str) -> float:
    start = time.perf_counter()
    redact(line, TOKEN_PATHS)          # as the site's log filter calls it
    return time.perf_counter() - start


if __name__ == "__main__":
    main()
