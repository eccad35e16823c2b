"""Rehearsals of the packaged studies: time, raters, top-ups, and a release of every pair.

For each protocol asked for (default: simlex and hyperlex), the builder's pair set is built
(`lexgold build ... --seed 1`, HyperLex as a draft with `--no-check`), a study is created from
it with the packaged protocol, rehearsed by simulated raters through its own site
(`lexgold.annotate.rehearse`, seed 1, default crowd) and processed from the study
(`lexgold process STUDY`). Printed per protocol: pairs, tranches, places at the start and added
by top-ups, raters who entered, pages, requests, simulated hours, the rehearsal's wall time and
requests per second, the processing time, and whether the release holds every pair of the
study (HyperLex: each on at least 10 accepted raters).

Targets (issue 20, 2 cores): SimLex under 3 minutes, HyperLex under 5 minutes.

``--fsync-ab N`` instead rehearses the same study N times in turn with the site's per-commit
fsync (SQLite's synchronous=FULL) and without it (synchronous=NORMAL, what the rehearsal uses),
each on a fresh copy, ``--max-raters`` raters each (default 40), and prints each run's wall
time, the medians and the load average; the stored answers must be the same.

``--floor N`` instead times, in turn N times, a rehearsal of the packaged study
(``--max-raters`` raters, default 40) and its floor: a minimal Flask app over SQLite (sqlite3,
WAL, synchronous=NORMAL as the rehearsal), driven by as many raters doing the same round-trips
with the rehearsal's own driver (:class:`~lexgold.annotate.browser.Browser`; a page of as many
pairs read with the rehearsal's own :func:`~lexgold.annotate.rehearse.read_page`, its answers
posted, the redirect followed), and
prints the milliseconds per request of each (the whole run, the time inside the app's WSGI
callable, and the process's CPU time, steadier than wall time on a shared machine), their
ratios (issue 39: within 1.5x; issue 49: within 2.5x) and the load.

Usage: python bench/bench_rehearsal.py [--protocol simlex] [--protocol hyperlex] [--out DIR]
       [--max-raters N]
       python bench/bench_rehearsal.py --protocol simlex --fsync-ab 3 [--max-raters 40]
       python bench/bench_rehearsal.py --protocol simlex --floor 3 [--max-raters 40]
"""

from __future__ import annotations

import os

for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

import lexgold.annotate.rehearse as rehearsal  # noqa: E402
from lexgold.study.db import database_url  # noqa: E402
from lexgold.annotate.rehearse import rehearse  # noqa: E402
from lexgold.study.store import create_study  # noqa: E402
from lexgold.process.pipeline import run  # noqa: E402

BUILD = {"simlex": ["build", "simlex", "--seed", "1"],
         "hyperlex": ["build", "hyperlex", "--seed", "1", "--no-check"],
         "tr9856": ["build", "tr9856", "--seed", "1"]}


def lexgold(*args: str) -> None:
    subprocess.run([sys.executable, "-c", "from lexgold.cli import main; main()", *args],
                   check=True, stdout=subprocess.DEVNULL)


def _built_pairs(protocol: str, folder: Path) -> Path:
    """The builder's pair set of ``protocol`` in ``folder`` (built once, seed 1)."""
    pairs = folder / protocol / "pairs.csv"
    if not pairs.is_file():
        lexgold(*BUILD[protocol], "--out", str(folder / protocol))
    return pairs


def _removed(db: Path) -> Path:
    """``db`` with its SQLite write-ahead files gone (a fresh path to create or copy to)."""
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    return db


def _fresh_study(protocol: str, folder: Path) -> Path:
    """A study of ``protocol`` nobody entered, to copy before each paired run."""
    fresh = _removed(folder / f"{protocol}-fresh.sqlite")
    create_study(protocol, _built_pairs(protocol, folder), database_url(fresh), seed=1)
    return fresh


def bench(protocol: str, folder: Path, max_raters: int | None = None) -> dict:
    db = _removed(folder / f"{protocol}.sqlite")
    design = create_study(protocol, _built_pairs(protocol, folder), database_url(db), seed=1)
    started = time.perf_counter()
    result = rehearse(database_url(db), rng=np.random.default_rng(1), max_raters=max_raters)
    rehearsal = time.perf_counter() - started
    started = time.perf_counter()
    report = run(db, None, folder / f"{protocol}-gold", seed=1, plots=False,
                 allow_incomplete=max_raters is not None)
    processing = time.perf_counter() - started
    counts = report.counts
    return {"pairs": design["pairs"], "tranches": design["tranches"],
            "places": result["places"], "top_up_places": result["top_up_places"],
            "raters": result["raters"], "completed": result["completed"],
            "screened_out": result["screened_out"], "pages": result["pages"],
            "requests": result["requests"], "simulated_hours": result["simulated_hours"],
            "rehearsal_s": round(rehearsal, 3),
            "requests_per_s": round(result["requests"] / rehearsal),
            "process_s": round(processing, 1), "released_pairs": counts.released_pairs,
            "every_pair_released": counts.released_pairs == design["pairs"],
            "fewest_accepted_raters": counts.min_raters_per_pair}


def fsync_ab(protocol: str, folder: Path, turns: int, max_raters: int) -> None:
    """Paired runs, with and without the per-commit fsync, on copies of one fresh study."""
    fresh = _fresh_study(protocol, folder)
    without_sync = rehearsal._without_sync
    times = {"fsync per commit (synchronous=FULL)": [], "rehearsal (synchronous=NORMAL)": []}
    answers = set()
    for turn in range(turns):
        for mode in times:
            rehearsal._without_sync = (without_sync if "NORMAL" in mode
                                       else lambda engine: None)
            db = _removed(folder / f"{protocol}-ab.sqlite")
            shutil.copy(fresh, db)
            started = time.perf_counter()
            result = rehearse(database_url(db), rng=np.random.default_rng(1),
                              max_raters=max_raters)
            times[mode].append(time.perf_counter() - started)
            answers.add((result["pages"], result["requests"]))
            print(f"turn {turn + 1} {mode}: {times[mode][-1]:.1f} s, "
                  f"{result['requests']} requests, load {os.getloadavg()[0]:.1f}", flush=True)
    rehearsal._without_sync = without_sync
    for mode, values in times.items():
        print(f"median {mode}: {statistics.median(values):.1f} s over {turns} runs")
    print("same pages and requests in every run:", len(answers) == 1)


FLOOR_PAGE = """<!doctype html><html><head><title>Rate</title></head><body>
<form method="post" action="/step"><input type="hidden" name="position" value="{{ position }}">
<progress max="{{ total }}" value="{{ position }}"></progress>
{% for id, word1, word2 in pairs %}<p>{{ word1 }} - {{ word2 }}
<input type="range" name="r{{ id }}" min="0" max="6" value="3"></p>{% endfor %}
<button>Next</button></form></body></html>"""


def floor_app(path: Path, n_pages: int, per_page: int):
    """The minimal Flask app: a signed session names the rater, ``/task`` reads its page from
    SQLite and renders it, ``/step`` stores the page's answers and moves the rater on (one
    transaction, a conditional UPDATE as the site's), then redirects to ``/task``."""
    import sqlite3

    from flask import Flask, redirect, request, session

    app = Flask("floor")
    app.secret_key = "floor"
    db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.executescript("CREATE TABLE pair (id INTEGER PRIMARY KEY, word1 TEXT, word2 TEXT);"
                     "CREATE TABLE rater (id INTEGER PRIMARY KEY, step INTEGER);"
                     "CREATE TABLE answer (id INTEGER PRIMARY KEY, rater_id INTEGER, "
                     "pair_id INTEGER, rating INTEGER, answered_at TEXT, "
                     "UNIQUE (rater_id, pair_id))")
    db.executemany("INSERT INTO pair VALUES (?, ?, ?)",
                   [(i, f"w{i}", f"v{i}") for i in range(n_pages * per_page)])
    page = app.jinja_env.from_string(FLOOR_PAGE)

    @app.post("/start")
    def start():
        session["rater"] = db.execute("INSERT INTO rater (step) VALUES (0)").lastrowid
        return redirect("/task")

    @app.get("/task")
    def task():
        step = db.execute("SELECT step FROM rater WHERE id = ?", (session["rater"],)).fetchone()[0]
        if step >= n_pages:
            return "done"
        pairs = db.execute("SELECT id, word1, word2 FROM pair WHERE id >= ? AND id < ? "
                           "ORDER BY id", (step * per_page, (step + 1) * per_page)).fetchall()
        return page.render(position=step, total=n_pages, pairs=pairs)

    @app.post("/step")
    def step():
        rater, position = session["rater"], int(request.form["position"])
        answers = [(rater, int(key[1:]), int(value)) for key, value in request.form.items()
                   if key[:1] == "r"]
        db.execute("BEGIN IMMEDIATE")
        if db.execute("UPDATE rater SET step = step + 1 WHERE id = ? AND step = ?",
                      (rater, position)).rowcount:
            db.executemany("INSERT INTO answer (rater_id, pair_id, rating, answered_at) "
                           "VALUES (?, ?, ?, datetime('now'))", answers)
        db.execute("COMMIT")
        return redirect("/task")

    return app


def floor(folder: Path, raters: int, n_pages: int, per_page: int) -> tuple[float, int]:
    """Seconds and requests of ``raters`` raters through the minimal app (one page after
    another, each page read with the rehearsal's own parser)."""
    from lexgold.annotate.browser import Browser
    from lexgold.annotate.rehearse import read_page

    path = folder / "floor.sqlite"
    _removed(path)
    app, rng, requests = floor_app(path, n_pages, per_page), np.random.default_rng(1), 0
    in_app = _timed(app)
    started = time.perf_counter()
    for _ in range(raters):
        browser = Browser(app)
        response = browser.post("/start", {})
        while True:
            page = read_page(response.text())
            if not page.action:
                break
            data = {**page.fields, **{f"r{i}": str(rng.integers(0, 7)) for i in page.items}}
            response = browser.post(page.action, data, referer=response.url)
        requests += browser.requests
    return time.perf_counter() - started, requests, in_app[0]


def _timed(app) -> list:
    """Wrap ``app``'s WSGI callable; the list returned holds the seconds spent inside it."""
    spent, wsgi = [0.0], app.wsgi_app

    def timed(environ, start_response):
        started = time.perf_counter()
        try:
            return wsgi(environ, start_response)
        finally:
            spent[0] += time.perf_counter() - started

    app.wsgi_app = timed
    return spent


def floor_ab(protocol: str, folder: Path, turns: int, max_raters: int) -> None:
    """Paired runs: a rehearsal of ``max_raters`` raters, then its floor (see above)."""
    fresh = _fresh_study(protocol, folder)
    ratios = []
    for turn in range(turns):
        db = _removed(folder / f"{protocol}-floor.sqlite")
        shutil.copy(fresh, db)
        load = os.getloadavg()[0]
        in_app = []
        create_app = rehearsal.create_app
        rehearsal.create_app = lambda config: _timed_app(create_app(config), in_app)
        started, cpu = time.perf_counter(), time.process_time()
        try:
            result = rehearse(database_url(db), rng=np.random.default_rng(1),
                              max_raters=max_raters)
        finally:
            rehearsal.create_app = create_app
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
        per_page = round(_answers(db) / max(1, result["pages"]))
        n_pages = round(result["pages"] / max(1, result["raters"]))
        floor_cpu = time.process_time()
        floor_s, floor_requests, floor_app_s = floor(folder, result["raters"], n_pages,
                                                     per_page)
        floor_cpu = time.process_time() - floor_cpu
        ours, anchor = 1000 * seconds / result["requests"], 1000 * floor_s / floor_requests
        ours_app = 1000 * in_app[0][0] / result["requests"]
        anchor_app = 1000 * floor_app_s / floor_requests
        ratios.append((ours / anchor, ours_app / anchor_app))
        print(f"turn {turn + 1}: rehearsal {result['requests']} requests in {seconds:.1f} s, "
              f"{ours:.2f} ms/request ({ours_app:.2f} ms inside the app); minimal Flask app "
              f"over SQLite {floor_requests} requests ({n_pages} pages of {per_page} pairs per "
              f"rater) in {floor_s:.1f} s, {anchor:.2f} ms/request ({anchor_app:.2f} ms inside "
              f"the app); ratio {ours / anchor:.2f} whole run, {ours_app / anchor_app:.2f} "
              f"inside the app; CPU {1000 * cpu / result['requests']:.2f} and "
              f"{1000 * floor_cpu / floor_requests:.2f} ms/request (ratio "
              f"{(cpu / result['requests']) / (floor_cpu / floor_requests):.2f}); "
              f"load {load:.1f} -> {os.getloadavg()[0]:.1f}", flush=True)
    print(f"median ratio over {turns} turns: whole run "
          f"{statistics.median(r[0] for r in ratios):.2f}, inside the app "
          f"{statistics.median(r[1] for r in ratios):.2f} (targets: 1.5, issue 39; 2.5, issue 49)")


def _timed_app(app, into: list):
    into.append(_timed(app))
    return app


def _answers(db: Path) -> int:
    import sqlite3

    with sqlite3.connect(db) as connection:
        return connection.execute("SELECT count(*) FROM answer").fetchone()[0] + \
            connection.execute("SELECT count(*) FROM checkpoint_answer").fetchone()[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--protocol", action="append", choices=sorted(BUILD))
    parser.add_argument("--out", type=Path, help="Work folder (kept); default: a temporary one.")
    parser.add_argument("--fsync-ab", type=int, default=0, metavar="N",
                        help="Paired runs with and without the per-commit fsync (see above).")
    parser.add_argument("--max-raters", type=int,
                        help="Raters per run of --fsync-ab or --floor (default 40); without "
                        "them, stop the rehearsal after this many raters (default: the whole "
                        "study) and release what was rated (--allow-incomplete).")
    parser.add_argument("--floor", type=int, default=0, metavar="N",
                        help="Paired runs of a rehearsal and a minimal Flask app (see above).")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temporary:
        folder = args.out or Path(temporary)
        folder.mkdir(parents=True, exist_ok=True)
        for protocol in args.protocol or ["simlex", "hyperlex"]:
            if args.floor:
                floor_ab(protocol, folder, args.floor, args.max_raters or 40)
                continue
            if args.fsync_ab:
                fsync_ab(protocol, folder, args.fsync_ab, args.max_raters or 40)
                continue
            print(protocol, json.dumps(bench(protocol, folder, args.max_raters)), flush=True)


if __name__ == "__main__":
    main()
