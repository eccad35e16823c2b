"""The admin view at research scale, and what an open admin tab costs the raters (issue 22,
item 1).

A SimLex study (the packaged protocol, 999 same-POS USF pairs, 10 tranches) is created and
``--raters`` finished raters are bulk-inserted into it (SQL inserts, not rehearsal: every item
of the rater's tranche answered, on the pair's true score plus noise, 5 % uniform spammers,
checkpoints right, 3 s a pair). Then a real ``lexgold serve`` (waitress, 8 threads, its
figures refresher in a child process) serves it and the script prints:

- ``figures``: the refresher's computation (``lexgold study figures --force`` in a subprocess:
  wall time, and the ``seconds`` it stores);
- ``admin``: GET /admin/ wall time (median of 5) and page size, once the figures are stored;
- ``raters``: p50/p95/p99 of the raters' requests (GET /task, POST /step) with ``--active``
  raters working through their tranche (think time ``--think-s``) for ``--phase-s`` seconds,
  first with no admin tab, then with an admin tab reloading every ``--admin-every-s`` seconds
  (the page's own reload is 60 s: this is harsher), and the admin page times meanwhile.

Usage: python bench/bench_admin.py [--raters 2000 10000] [--active 40] [--phase-s 60]
       [--think-s 1] [--admin-every-s 5] [--data DIR [--reuse]] [--json out.json]
The machine may be shared: quote the load with the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime, timedelta
from pathlib import Path

import httpx
import numpy as np
from sqlalchemy import bindparam, insert, select, update

sys.path.insert(0, str(Path(__file__).resolve().parent))
from load_test import (CSRF, Recorder, RaterRun, Server, pair_file,  # noqa: E402
                       protocol_file, simulate_rater)

from lexgold.study import models as m  # noqa: E402
from lexgold.study.db import database_url, make_engine  # noqa: E402
from lexgold.study.store import create_study  # noqa: E402

TRANCHES = 10
EXTRA_SLOTS = 12          # free slots per tranche for the raters who work during the bench


def build(folder: Path, raters: int, seed: int = 0) -> str:
    """A SimLex study of ``raters`` finished raters (bulk-inserted); returns its URL."""
    folder.mkdir(parents=True, exist_ok=True)
    pairs = pair_file(folder / "pairs.csv", 999, seed)
    per_tranche = raters // TRANCHES
    protocol = protocol_file(folder / "simlex.toml", TRANCHES, per_tranche + EXTRA_SLOTS)
    url = database_url(folder / f"admin_{raters}.sqlite")
    create_study(protocol, pairs, url, seed=seed, completion_code="BENCH")
    engine = make_engine(url)
    rng = np.random.default_rng(seed)
    with engine.begin() as connection:
        truth = {pid: float(rng.uniform(0, 6)) for pid in connection.scalars(select(m.Pair.id))}
        checkpoints = connection.scalars(select(m.Study.config)).one()["checkpoints"]
        start = connection.scalar(select(m.Study.created_at))
        for tranche_id, n_steps in connection.execute(select(m.Tranche.id, m.Tranche.n_steps)):
            _fill_tranche(connection, rng, tranche_id, n_steps, per_tranche, truth, checkpoints,
                          start)
    engine.dispose()
    return url


def _fill_tranche(connection, rng, tranche_id, n_steps, n_raters, truth, checkpoints, start):
    items = connection.execute(select(m.Item.id, m.Item.pair_id, m.Step.position)
                               .join(m.Step, m.Item.step_id == m.Step.id)
                               .where(m.Item.tranche_id == tranche_id)).all()
    checks = connection.execute(select(m.Step.id, m.Step.checkpoint, m.Step.position).where(
        m.Step.tranche_id == tranche_id, m.Step.kind == "checkpoint")).all()
    slots = connection.scalars(select(m.Slot.id).where(m.Slot.tranche_id == tranche_id)
                               .order_by(m.Slot.number).limit(n_raters)).all()
    began = [start - timedelta(days=8, seconds=-float(s))       # over the week before
             for s in rng.uniform(0, 7 * 86400, n_raters)]
    connection.execute(insert(m.Rater), [
        {"public_id": f"b{tranche_id:02d}r{r:05d}", "platform": "prolific",
         "external_id": f"p{tranche_id:02d}r{r:05d}", "stage": "done", "slot_id": slots[r],
         "native_speaker": True, "created_at": began[r],
         "completed_at": began[r] + timedelta(minutes=20)} for r in range(n_raters)])
    ids = dict(connection.execute(select(m.Rater.public_id, m.Rater.id).where(
        m.Rater.public_id.like(f"b{tranche_id:02d}r%"))).all())
    rater_ids = [ids[f"b{tranche_id:02d}r{r:05d}"] for r in range(n_raters)]
    table = m.Slot.__table__
    connection.execute(update(table).where(table.c.id == bindparam("slot")).values(
        status="completed", rater_id=bindparam("rater"), step=n_steps,
        claimed_at=bindparam("began"), completed_at=bindparam("done")), [
        {"slot": slots[r], "rater": rater_ids[r], "began": began[r],
         "done": began[r] + timedelta(minutes=20)} for r in range(n_raters)])
    pair_truth = np.array([truth[p] for _, p, _ in items])
    for r in range(n_raters):
        spammer = rng.random() < 0.05
        values = rng.integers(0, 7, len(items)) if spammer else np.clip(np.rint(
            pair_truth + rng.normal(0, 1.0, len(items))), 0, 6).astype(int)
        connection.execute(insert(m.Answer), [
            {"rater_id": rater_ids[r], "item_id": item, "slot_id": slots[r], "rating": int(v),
             "response_ms": 3000, "server_ms": 3000,
             "answered_at": began[r] + timedelta(seconds=10 * position)}
            for (item, _, position), v in zip(items, values)])
        if checks:
            connection.execute(insert(m.CheckpointAnswer), [
                {"rater_id": rater_ids[r], "step_id": step, "slot_id": slots[r],
                 "choice": checkpoints[index]["answer"], "correct": True, "response_ms": 3000,
                 "server_ms": 3000, "answered_at": began[r] + timedelta(seconds=10 * position)}
                for step, index, position in checks])


def figures_once(folder: Path, raters: int) -> dict:
    """``lexgold study figures --force`` in a subprocess: what the refresher costs."""
    started = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", "from lexgold.cli import main; main()",
                          "study", "figures", str(folder / f"admin_{raters}.sqlite"), "--force"],
                         capture_output=True, text=True, check=True)
    return {"wall_s": round(time.perf_counter() - started, 2), **json.loads(out.stdout)}


def login(base: str, password: str) -> httpx.Client:
    client = httpx.Client(base_url=base, timeout=300)
    token = CSRF.search(client.get("/admin/login").text).group(1)
    assert client.post("/admin/login", data={"csrf_token": token,
                                             "password": password}).status_code == 302
    return client


def admin_times(client: httpx.Client, n: int = 5) -> dict:
    times, size = [], 0
    for _ in range(n):
        started = time.perf_counter()
        response = client.get("/admin/")
        times.append(time.perf_counter() - started)
        size = len(response.content)
        assert response.status_code == 200 and "figures as of" in response.text
    return {"median_s": round(statistics.median(times), 3), "max_s": round(max(times), 3),
            "bytes": size}


def rater_phase(base: str, prefix: str, active: int, think_s: float, phase_s: float,
                seed: int) -> dict:
    """``active`` raters working for ``phase_s`` seconds; latency percentiles of their
    requests (entry and consent excluded)."""
    rec = Recorder()
    runs = [RaterRun(f"{prefix}{k:04d}") for k in range(active)]
    deadline = time.monotonic() + phase_s

    async def one(k):
        await asyncio.sleep(min(5.0, phase_s / 4) * k / active)
        await simulate_rater(base, runs[k], rec, np.random.default_rng([seed, k]), think_s,
                             deadline)

    async def all_raters():
        await asyncio.gather(*(one(k) for k in range(active)))

    asyncio.run(all_raters())
    latencies = np.array(rec.latencies["GET /task"] + rec.latencies["POST /step"]) * 1000
    return {"requests": len(latencies), "errors": len(rec.errors),
            "first_errors": sorted(set(rec.errors))[:3],
            **{f"p{q}_ms": round(float(np.percentile(latencies, q)), 1) for q in (50, 95, 99)}}


def measure(folder: Path, raters: int, args) -> dict:
    started = time.perf_counter()
    folder.mkdir(parents=True, exist_ok=True)
    url = database_url(folder / f"admin_{raters}.sqlite")
    if args.reuse and (folder / f"admin_{raters}.sqlite").exists():
        print(f"reusing {raters} raters (claims of earlier runs freed) ...", flush=True)
        engine = make_engine(url)
        with engine.begin() as connection:
            connection.execute(update(m.Slot).where(m.Slot.status == "active").values(
                status="free", rater_id=None, step=0))
        engine.dispose()
    else:
        print(f"building {raters} raters ...", flush=True)
        url = build(folder, raters)
    result = {"raters": raters, "build_s": round(time.perf_counter() - started, 1),
              "figures": figures_once(folder, raters)}
    print(f"  figures: {result['figures']}", flush=True)
    server = Server(url, folder, threads=8, password="bench-admin",
                    args=("--figures-every", str(args.figures_every_s)))
    base = server.start()
    try:
        admin = login(base, "bench-admin")
        result["admin"] = admin_times(admin)
        print(f"  admin: {result['admin']}", flush=True)
        run = os.urandom(3).hex()              # fresh platform IDs on a reused study
        result["raters_alone"] = rater_phase(base, f"alone{run}", args.active, args.think_s,
                                             args.phase_s, 1)
        print(f"  raters, no admin tab: {result['raters_alone']}", flush=True)
        stop, loads = threading.Event(), []

        def reload():
            while not stop.is_set():
                began = time.perf_counter()
                admin.get("/admin/")
                loads.append(time.perf_counter() - began)
                stop.wait(args.admin_every_s)

        tab = threading.Thread(target=reload)
        tab.start()
        try:
            result["raters_with_admin"] = rater_phase(base, f"tab{run}", args.active, args.think_s,
                                                      args.phase_s, 2)
        finally:
            stop.set()
            tab.join()
        result["raters_with_admin"]["admin_loads"] = len(loads)
        result["raters_with_admin"]["admin_median_s"] = round(statistics.median(loads), 3)
        print(f"  raters, admin tab every {args.admin_every_s:g} s: "
              f"{result['raters_with_admin']}", flush=True)
        alone, tab_open = (result["raters_alone"]["p95_ms"],
                           result["raters_with_admin"]["p95_ms"])
        result["p95_ratio"] = round(tab_open / alone, 2)
        print(f"  p95 with / without the admin tab: {result['p95_ratio']}", flush=True)
    finally:
        server.stop()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--raters", type=int, nargs="+", default=[2000, 10000])
    parser.add_argument("--active", type=int, default=40, help="raters working (40)")
    parser.add_argument("--think-s", type=float, default=1.0, help="mean think time (1 s)")
    parser.add_argument("--phase-s", type=float, default=60.0,
                        help="seconds of each rater phase (60)")
    parser.add_argument("--admin-every-s", type=float, default=5.0,
                        help="admin tab reload interval (5 s)")
    parser.add_argument("--figures-every-s", type=float, default=5.0,
                        help="lexgold serve --figures-every (5 s)")
    parser.add_argument("--data", type=Path, help="folder for the studies (default: a temp dir)")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--reuse", action="store_true",
                        help="reuse a study built by an earlier run in --data")
    args = parser.parse_args()
    print(f"{datetime.now():%Y-%m-%d %H:%M}, load average {os.getloadavg()[0]:.1f} on "
          f"{os.cpu_count()} CPUs", flush=True)
    results = []
    with tempfile.TemporaryDirectory(prefix="lexgold-bench-admin-") as tmp:
        for raters in args.raters:
            folder = (args.data or Path(tmp)) / f"r{raters}"
            results.append(measure(folder, raters, args))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
