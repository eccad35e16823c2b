"""Where a rater request's milliseconds go: cProfile of a rehearsal (issue 39).

Creates the packaged SimLex study (``lexgold build simlex --seed 1``), rehearses it with
``--max-raters`` simulated raters (default 50, seed 3) under cProfile, and prints the
milliseconds per request, SQL statements per request (every statement SQLite runs inside the
app, by its trace callback: an executemany once per row), the self time by package
(sqlalchemy, werkzeug, flask, jinja2, sqlite3, lexgold, ...) and the functions with the most
cumulative time inside lexgold (the rehearsal and its browser left out). Simulated raters: the
figures are the site's own cost per request, not a real crowd's.

Usage: python bench/profile_rehearsal.py [--max-raters 50] [--out DIR]
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np
from sqlalchemy import event
from sqlalchemy.engine import Engine

import lexgold.annotate.rehearse as rehearsal
from lexgold.annotate.rehearse import create_app, rehearse
from lexgold.study.db import database_url
from lexgold.study.store import create_study


def _package(filename: str) -> str:
    if filename.startswith("~") or filename.startswith("<"):
        return "builtins (C: sqlite3, re, ...)"
    parts = Path(filename).parts
    for name in ("sqlalchemy", "werkzeug", "flask", "jinja2", "flask_wtf", "wtforms",
                 "itsdangerous", "numpy", "pandas", "markupsafe"):
        if name in parts:
            return name
    if "lexgold" in parts:
        return "lexgold." + parts[parts.index("lexgold") + 1].removesuffix(".py")
    return "python stdlib / other"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-raters", type=int, default=50)
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--out", type=Path, help="Work folder (kept); default: a temporary one.")
    parser.add_argument("--dump", type=Path, help="Also write the profile here (pstats).")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temporary:
        folder = args.out or Path(temporary)
        folder.mkdir(parents=True, exist_ok=True)
        if not (folder / "simlex" / "pairs.csv").is_file():
            subprocess.run([sys.executable, "-c", "from lexgold.cli import main; main()",
                            "build", "simlex", "--seed", "1", "--out", str(folder / "simlex")],
                           check=True, stdout=subprocess.DEVNULL)
        db = folder / "profile.sqlite"
        for suffix in ("", "-wal", "-shm"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)
        create_study("simlex", folder / "simlex" / "pairs.csv", database_url(db), seed=1)
        statements, inside = Counter(), [False]

        @event.listens_for(Engine, "connect")
        def _count(dbapi_connection, _record):
            # every statement SQLite runs while a request is inside the app, from SQLAlchemy
            # or sent on the driver's connection (BEGIN, COMMIT, prepared statements); an
            # executemany counts once per row
            dbapi_connection.set_trace_callback(lambda sql: inside[0] and statements.update(
                [sql.split(None, 1)[0].upper()]))

        def counted(config):
            app = create_app(config)
            wsgi = app.wsgi_app

            def inside_app(environ, start_response):
                inside[0] = True
                try:
                    return wsgi(environ, start_response)
                finally:
                    inside[0] = False

            app.wsgi_app = inside_app
            return app

        rehearsal.create_app = counted

        profile = cProfile.Profile()
        started = time.perf_counter()
        profile.enable()
        result = rehearse(database_url(db), rng=np.random.default_rng(args.seed),
                          max_raters=args.max_raters)
        profile.disable()
        wall = time.perf_counter() - started
    requests = result["requests"]
    if args.dump:
        profile.dump_stats(args.dump)
    stats = pstats.Stats(profile)
    total = sum(row[2] for row in stats.stats.values())          # self (tottime)
    by_package = Counter()
    for (filename, _line, _name), row in stats.stats.items():
        by_package[_package(filename)] += row[2]
    print(f"{requests} requests in {wall:.1f} s under cProfile "
          f"({1000 * total / requests:.2f} ms of profiled time per request); "
          f"load {os.getloadavg()[0]:.1f}")
    print("SQL statements per request: " + ", ".join(
        f"{kind} {n / requests:.2f}" for kind, n in statements.most_common()) +
        f" (all {sum(statements.values()) / requests:.2f})")
    print("self time by package:")
    for package, seconds in by_package.most_common(12):
        print(f"  {package:34s} {100 * seconds / total:5.1f} %  "
              f"{1000 * seconds / requests:.3f} ms/request")
    print("lexgold functions by cumulative time (ms per request):")
    rows = [(row[3], key) for key, row in stats.stats.items()
            if "lexgold" in key[0] and "rehearse" not in key[0]
            and not key[0].endswith("browser.py")]
    for cumulative, (filename, line, name) in sorted(rows, reverse=True)[:14]:
        print(f"  {1000 * cumulative / requests:7.3f}  {Path(filename).name}:{line} {name}")


if __name__ == "__main__":
    main()
