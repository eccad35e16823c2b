"""Load benchmark of the rating site: N simulated raters through full tranches.

Every simulated rater is an HTTP client with its own cookies that goes the way a browser does
(entry with Prolific parameters, consent, instructions, then every page of its tranche to the
completion code), with the CSRF token of each form, over loopback only. The server is the
production one: ``lexgold serve`` (waitress, several worker threads) in its own process, on a
fresh study in SQLite (WAL) or in a private schema of a PostgreSQL database.

It reports p50/p95/p99 latency per endpoint, throughput and errors, and then checks the
database against what the raters were told was accepted: every accepted group stored exactly
once with the posted values (none lost, none duplicated, no half-written group), no tranche given
to more raters than its target, and every finished rater's answers complete.

Every loop is bounded (requests per rater, ``--max-seconds`` overall); the script stops by itself
and exits non-zero on any error or failed check.

Examples::

    python bench/load_test.py                       # 200 raters, SQLite, full SimLex tranches
    python bench/load_test.py --db postgresql+psycopg://lexgold:lexgold@127.0.0.1:5432/lexgold_load
    python bench/load_test.py --short               # the bounded CI mode (12 raters, 2 tranches)
    python bench/load_test.py --raters 1000 --workers 4 --db postgresql+psycopg://...  # SimLex pace
    python bench/load_test.py --stress --workers 2 --db postgresql+psycopg://...       # saturation
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import re
import secrets
import ssl
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import numpy as np
import pandas as pd
from sqlalchemy import func, select

from lexgold.study import models as m
from lexgold.study.db import database_url, make_engine, postgres_schema, session_factory
from lexgold.study.store import create_study
from lexgold.protocols import protocol_path

CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
TARGET_P95_S = 0.150
PEAK_WINDOW_S = 10.0
MAX_REQUESTS_PER_RATER = 200


# -- the study --------------------------------------------------------------------------------

def pair_file(path: Path, n_pairs: int, seed: int) -> Path:
    """Real USF cue-target pairs of one shared POS (N:V:A as in SimLex-999, 666:222:111)."""
    from lexgold.resources import read_usf

    usf = read_usf()
    words = usf["cue"].str.fullmatch("[A-Z]{3,}") & usf["target"].str.fullmatch("[A-Z]{3,}")
    same = usf[words & (usf["qps"] == usf["tps"]) & (usf["cue"] != usf["target"])]
    n_v, n_a = round(n_pairs * 2 / 9), round(n_pairs / 9)
    parts = []
    for pos, tag, n in (("N", "N", n_pairs - n_v - n_a), ("V", "V", n_v), ("A", "AJ", n_a)):
        sample = same[same["qps"] == tag].sample(n, random_state=seed)
        parts.append(pd.DataFrame({"word1": sample["cue"].str.lower(),
                                   "word2": sample["target"].str.lower(), "pos": pos}))
    pd.concat(parts).to_csv(path, index=False)
    return path


def protocol_file(path: Path, tranches: int, raters_per_tranche: int) -> Path:
    """The packaged SimLex-999 protocol with the tranche count and raters per tranche set."""
    source = protocol_path("simlex").read_text(encoding="utf-8")
    head, rest = source.split("[study]\n", 1)
    for key, value in (("tranches", tranches), ("raters_per_tranche", raters_per_tranche)):
        rest = re.sub(rf"^{key} = [^\n#]*", f"{key} = {value} ", rest, count=1, flags=re.M)
    path.write_text(head + "[study]\n" + rest, encoding="utf-8")
    return path


# -- the server -------------------------------------------------------------------------------

class Server:
    """``lexgold serve`` in its own process on 127.0.0.1 (any free port), logs in ``workdir``."""

    def __init__(self, url: str, workdir: Path, threads: int, password: str = "load-admin",
                 args: tuple[str, ...] = (), launcher: tuple[str, ...] = ()):
        self.url, self.workdir, self.threads, self.password = url, workdir, threads, password
        self.args = tuple(args)
        # how ``lexgold`` is run (default: the installed command beside this Python)
        self.launcher = tuple(launcher) or (str(Path(sys.executable).with_name("lexgold")),)
        # the session-signing key, kept over restarts (a restart must not log raters out)
        self.secret_key = secrets.token_hex(32)
        self.process: subprocess.Popen | None = None
        self.base = ""
        self.log: Path | None = None

    def start(self, timeout_s: float = 300) -> str:
        log = self.log = self.workdir / f"server-{time.monotonic_ns()}.log"
        command = [*self.launcher, "serve", self.url,
                   "--host", "127.0.0.1", "--port", "0", "--threads", str(self.threads),
                   "--rate-limit", "0",          # every simulated rater comes from loopback
                   *self.args]
        env = {**os.environ, "LEXGOLD_ADMIN_PASSWORD": self.password,
               "LEXGOLD_SECRET_KEY": self.secret_key}
        with log.open("wb") as out:
            self.process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT,
                                            env=env)
        # a readiness check, not a delay: it returns once the server says where it listens, so
        # the long deadline costs nothing on a quiet machine and holds on a loaded one
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            found = re.search(r"at (http://127\.0\.0\.1:\d+/)", log.read_text(errors="replace"))
            if found:
                self.base = found.group(1).rstrip("/")
                return self.base
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"server did not start: {log.read_text(errors='replace')[-2000:]}")

    def kill(self) -> None:
        """SIGKILL: no clean shutdown, as a crash or an OOM kill."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()


# -- a simulated rater --------------------------------------------------------------------------

@dataclass
class RaterRun:
    """What one simulated rater did and was told (the reference for the database check)."""

    external_id: str
    outcome: str = "unfinished"            # done / full / unfinished / error
    items: dict[int, int] = field(default_factory=dict)          # accepted ratings
    checkpoints: dict[int, int] = field(default_factory=dict)    # position -> accepted choice
    code: str | None = None


@dataclass
class Recorder:
    """Latencies per endpoint and errors."""

    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: list[str] = field(default_factory=list)
    finished_at: list[float] = field(default_factory=list)  # monotonic time of each answer

    async def request(self, client: httpx.AsyncClient, method: str, path: str, expect: int,
                      **kwargs) -> httpx.Response | None:
        endpoint = f"{method} {path.split('?')[0]}"
        start = time.perf_counter()
        try:
            response = await client.request(method, path, **kwargs)
        except httpx.HTTPError as err:
            self.errors.append(f"{endpoint}: {type(err).__name__}")
            return None
        self.latencies[endpoint].append(time.perf_counter() - start)
        self.finished_at.append(time.perf_counter())
        if response.status_code != expect:
            self.errors.append(f"{endpoint}: HTTP {response.status_code}")
            return None
        return response


def _csrf(html: str) -> str:
    found = CSRF.search(html)
    return found.group(1) if found else ""


def answer_form(html: str, rng: np.random.Generator):
    """The form data for the page ``html`` (and what it answers), or None at the end."""
    position = re.search(r'name="position" value="(\d+)"', html)
    page = re.search(r'name="page" value="(\d+)"', html)
    token = {"csrf_token": _csrf(html)}
    if page:
        return "/instructions", {**token, "page": page.group(1)}, None
    if position is None:
        return None
    choices = re.findall(r'name="choice" value="(\d+)"', html)
    if choices:
        picked = int(rng.choice([int(c) for c in choices]))
        data = {**token, "position": position.group(1), "choice": str(picked),
                "t": str(int(rng.integers(1500, 9000)))}
        return "/step", data, ("checkpoint", int(position.group(1)), picked)
    ids = list(dict.fromkeys(int(i) for i in re.findall(r'name="r(\d+)"', html)))
    ratings = {i: int(rng.integers(0, 7)) for i in ids}
    data = {**token, "position": position.group(1),
            **{f"r{i}": str(r) for i, r in ratings.items()},
            **{f"t{i}": str(int(rng.integers(800, 6000))) for i in ids}}
    return "/step", data, ("group", ratings)


TLS = ssl.create_default_context()     # unused on loopback HTTP; made once, not per rater


async def simulate_rater(base: str, run: RaterRun, rec: Recorder, rng: np.random.Generator,
                         think_s: float, deadline: float) -> None:
    """One rater through entry, consent, instructions and every page of a tranche."""
    async with httpx.AsyncClient(base_url=base, timeout=60, follow_redirects=False,
                                 verify=TLS) as client:
        query = f"/?PROLIFIC_PID={run.external_id}&STUDY_ID=load&SESSION_ID=s{run.external_id}"
        entry = await rec.request(client, "GET", query, 200)
        if entry is None:
            run.outcome = "error"
            return
        consent = {"csrf_token": _csrf(entry.text), "consent": "yes", "native": "yes"}
        if await rec.request(client, "POST", "/consent", 302, data=consent) is None:
            run.outcome = "error"
            return
        for _ in range(MAX_REQUESTS_PER_RATER):
            if time.monotonic() > deadline:
                return
            page = await rec.request(client, "GET", "/task", 200)
            if page is None:
                run.outcome = "error"
                return
            form = answer_form(page.text, rng)
            if form is None:
                code = re.search(r'<code id="code">([^<]+)</code>', page.text)
                run.outcome, run.code = ("done", code.group(1)) if code else ("full", None)
                return
            await asyncio.sleep(float(rng.exponential(think_s)) if think_s else 0)
            path, data, answered = form
            if await rec.request(client, "POST", path, 302, data=data) is None:
                run.outcome = "error"
                return
            if answered and answered[0] == "group":
                run.items.update(answered[1])
            elif answered:
                run.checkpoints[answered[1]] = answered[2]
        run.outcome = "error"        # more requests than any tranche needs


async def run_raters(base: str, n_raters: int, think_s: float, max_seconds: float,
                     seed: int, ramp_s: float) -> tuple[list[RaterRun], Recorder, float]:
    rec = Recorder()
    runs = [RaterRun(f"load{k:04d}") for k in range(n_raters)]
    deadline = time.monotonic() + max_seconds

    async def one(k: int):
        rng = np.random.default_rng([seed, k])
        await asyncio.sleep(ramp_s * k / max(n_raters, 1))
        await simulate_rater(base, runs[k], rec, rng, think_s, deadline)

    start = time.perf_counter()
    await asyncio.gather(*(one(k) for k in range(n_raters)))
    return runs, rec, time.perf_counter() - start


# -- the checks ---------------------------------------------------------------------------------

def check_database(url: str, runs: list[RaterRun]) -> list[str]:
    """Compare the database with what the raters were told; returns the problems found."""
    problems = []
    engine = make_engine(url)
    with session_factory(engine)() as session:
        study = session.scalars(select(m.Study)).one()
        target = study.config["raters_per_tranche"]
        raters = {r.external_id: r for r in session.scalars(select(m.Rater))}
        stored = defaultdict(dict)
        for rater_id, item_id, rating in session.execute(
                select(m.Answer.rater_id, m.Answer.item_id, m.Answer.rating)):
            if item_id in stored[rater_id]:
                problems.append(f"rater {rater_id}: item {item_id} stored twice")
            stored[rater_id][item_id] = rating
        checks = defaultdict(dict)
        for rater_id, position, choice in session.execute(
                select(m.CheckpointAnswer.rater_id, m.Step.position, m.CheckpointAnswer.choice)
                .join(m.Step, m.CheckpointAnswer.step_id == m.Step.id)):
            checks[rater_id][position] = choice
        problems += _check_runs(session, runs, raters, stored, checks, study.completion_code)
        problems += _check_groups(session, stored)
        problems += _check_tranches(session, target)
    engine.dispose()
    return problems


def _check_runs(session, runs, raters, stored, checks, completion_code) -> list[str]:
    problems = []
    items_of = defaultdict(set)
    for tranche_id, item_id in session.execute(select(m.Item.tranche_id, m.Item.id)):
        items_of[tranche_id].add(item_id)
    for run in runs:
        rater = raters.get(run.external_id)
        if rater is None:
            if run.items or run.checkpoints:
                problems.append(f"{run.external_id}: answers accepted but no rater stored")
            continue
        if stored.get(rater.id, {}) != run.items:
            lost = set(run.items) - set(stored.get(rater.id, {}))
            problems.append(f"{run.external_id}: stored answers differ from accepted ones "
                            f"({len(lost)} lost)")
        if checks.get(rater.id, {}) != run.checkpoints:
            problems.append(f"{run.external_id}: checkpoint answers differ")
        if run.outcome == "done":
            slot = session.get(m.Slot, rater.slot_id)
            if run.code != completion_code or rater.stage != "done" or slot.status != "completed":
                problems.append(f"{run.external_id}: finished but not recorded as finished")
            elif set(stored[rater.id]) != items_of[slot.tranche_id]:
                problems.append(f"{run.external_id}: finished with items missing")
        elif run.outcome == "full" and rater.stage != "full":
            problems.append(f"{run.external_id}: told the study is full, stored {rater.stage}")
    return problems


def _check_groups(session, stored) -> list[str]:
    """No half-written group: each (rater, page) has all of the page's items or none."""
    step_of, size = {}, defaultdict(int)
    for item_id, step_id in session.execute(select(m.Item.id, m.Item.step_id)):
        step_of[item_id] = step_id
        size[step_id] += 1
    problems = []
    for rater_id, answers in stored.items():
        per_step = defaultdict(int)
        for item_id in answers:
            per_step[step_of[item_id]] += 1
        half = [s for s, n in per_step.items() if n != size[s]]
        if half:
            problems.append(f"rater {rater_id}: half-written groups on steps {half}")
    return problems


def _check_tranches(session, target: int) -> list[str]:
    """No tranche holds answers or live claims of more raters than its target."""
    problems = []
    answered = session.execute(
        select(m.Item.tranche_id, func.count(func.distinct(m.Answer.rater_id)))
        .join(m.Item, m.Answer.item_id == m.Item.id).group_by(m.Item.tranche_id)).all()
    for tranche_id, n in answered:
        if n > target:
            problems.append(f"tranche {tranche_id}: answers of {n} raters, target {target}")
    per_rater = session.execute(
        select(m.Answer.rater_id, func.count(func.distinct(m.Item.tranche_id)))
        .join(m.Item, m.Answer.item_id == m.Item.id).group_by(m.Answer.rater_id)
        .having(func.count(func.distinct(m.Item.tranche_id)) > 1)).all()
    problems += [f"rater {r}: answers in {n} tranches" for r, n in per_rater]
    holders = session.execute(select(m.Slot.rater_id, func.count()).where(
        m.Slot.rater_id.is_not(None), m.Slot.status != "free").group_by(m.Slot.rater_id)
        .having(func.count() > 1)).all()
    problems += [f"rater {r}: holds {n} slots" for r, n in holders]
    return problems


# -- the report ---------------------------------------------------------------------------------

def peak_rate(times: list[float], window_s: float) -> float:
    """The most requests answered in any ``window_s`` seconds, per second: the throughput a
    saturated server sustains, without the ramp-up and the last raters' tail."""
    if not times:
        return 0.0
    t = np.sort(np.asarray(times))
    if t[-1] - t[0] < window_s:
        return len(t) / max(t[-1] - t[0], 1e-9)
    ends = np.searchsorted(t, t + window_s, side="left")
    return float((ends - np.arange(len(t))).max() / window_s)


def summarise(runs: list[RaterRun], rec: Recorder, seconds: float) -> dict:
    endpoints = {}
    for endpoint, values in sorted(rec.latencies.items()):
        ms = np.asarray(values) * 1000
        endpoints[endpoint] = {"n": len(ms), "p50_ms": float(np.percentile(ms, 50)),
                               "p95_ms": float(np.percentile(ms, 95)),
                               "p99_ms": float(np.percentile(ms, 99)),
                               "max_ms": float(ms.max())}
    everything = np.concatenate([np.asarray(v) for v in rec.latencies.values()]) * 1000 \
        if rec.latencies else np.zeros(1)
    outcomes = pd.Series([r.outcome for r in runs]).value_counts().to_dict()
    n_requests = sum(len(v) for v in rec.latencies.values())
    return {"raters": len(runs), "outcomes": outcomes, "seconds": seconds,
            "requests": n_requests, "requests_per_s": n_requests / seconds,
            "peak_requests_per_s": peak_rate(rec.finished_at, PEAK_WINDOW_S),
            "answers_accepted": sum(len(r.items) + len(r.checkpoints) for r in runs),
            "errors": len(rec.errors), "error_kinds": pd.Series(rec.errors, dtype=str)
            .value_counts().head(10).to_dict(),
            "p50_ms": float(np.percentile(everything, 50)),
            "p95_ms": float(np.percentile(everything, 95)),
            "p99_ms": float(np.percentile(everything, 99)), "endpoints": endpoints}


def print_report(summary: dict, problems: list[str], settings: dict) -> None:
    server = (f"waitress, {settings['threads']} threads" if settings["workers"] == 1 else
              f"gunicorn, {settings['workers']} workers x {settings['threads']} threads")
    print(f"database: {settings['backend']}; server: lexgold serve ({server}); "
          f"{summary['raters']} raters, think time mean "
          f"{settings['think_s']} s; {settings['tranches']} tranches x "
          f"{settings['raters_per_tranche']} raters")
    print(f"{'endpoint':<20}{'n':>7}{'p50 ms':>9}{'p95 ms':>9}{'p99 ms':>9}{'max ms':>9}")
    for name, row in summary["endpoints"].items():
        print(f"{name:<20}{row['n']:>7}{row['p50_ms']:>9.1f}{row['p95_ms']:>9.1f}"
              f"{row['p99_ms']:>9.1f}{row['max_ms']:>9.1f}")
    print(f"{'all':<20}{summary['requests']:>7}{summary['p50_ms']:>9.1f}"
          f"{summary['p95_ms']:>9.1f}{summary['p99_ms']:>9.1f}")
    print(f"throughput: {summary['requests_per_s']:.1f} requests/s over "
          f"{summary['seconds']:.1f} s (peak {summary['peak_requests_per_s']:.1f} in "
          f"{PEAK_WINDOW_S:.0f} s); raters: {summary['outcomes']}; "
          f"answers accepted: {summary['answers_accepted']}")
    print(f"errors: {summary['errors']} {summary['error_kinds'] or ''}")
    if settings.get("stress"):
        print("p95 target: not applied in stress mode (the server is saturated on purpose; "
              "read the peak throughput)")
    else:
        verdict = "PASS" if summary["p95_ms"] < TARGET_P95_S * 1000 else "FAIL"
        print(f"p95 target < {TARGET_P95_S * 1000:.0f} ms: {verdict}")
    print(f"database check: {'OK' if not problems else f'{len(problems)} problems'}")
    for problem in problems[:20]:
        print(f"  {problem}")


# -- main -------------------------------------------------------------------------------------

def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", help="SQLite file (new) or a PostgreSQL database URL, in which "
                        "a private schema is made and dropped (default: a temporary SQLite file)")
    parser.add_argument("--raters", type=int, default=200, help="simulated raters (200)")
    parser.add_argument("--tranches", type=int, default=10, help="tranches (10, as SimLex)")
    parser.add_argument("--raters-per-tranche", type=int, help="slots per tranche (default: "
                        "90%% of the raters spread over the tranches, so some find it full)")
    parser.add_argument("--threads", type=int, default=8, help="threads per server process (8)")
    parser.add_argument("--workers", type=int, default=1,
                        help="server processes (1: waitress; more: lexgold serve --workers N, "
                             "gunicorn)")
    parser.add_argument("--think-s", type=float, default=30.0,
                        help="mean think time per page in seconds, exponential (30: the fast "
                        "end of SimLex-999 section 3.5, 8-21 minutes for ~20 pages)")
    parser.add_argument("--ramp-s", type=float, default=60.0, help="arrival spread (60 s)")
    parser.add_argument("--max-seconds", type=float, default=1800, help="overall bound (1800 s)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    parser.add_argument("--short", action="store_true", help="bounded CI mode: 12 raters, 2 "
                        "tranches of 5, think 0.02 s, at most 120 s")
    parser.add_argument("--stress", action="store_true", help="saturation: 200 raters "
                        "arriving within 5 s, think 0.25 s (about 100x the paper's pace); read "
                        "the peak throughput")
    args = parser.parse_args(argv)
    if args.stress:
        args.raters, args.think_s, args.ramp_s = 200, 0.25, 5.0
    if args.short:
        args.raters, args.tranches, args.raters_per_tranche = 12, 2, 5
        args.think_s, args.ramp_s, args.max_seconds = 0.02, 1.0, 120
    if args.raters_per_tranche is None:
        args.raters_per_tranche = max(1, math.floor(0.9 * args.raters / args.tranches))
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="lexgold-load-") as tmp, ExitStack() as stack:
        workdir = Path(tmp)
        url, schema = database_url(args.db or workdir / "load.sqlite"), None
        if url.startswith("postgresql"):  # a private schema, dropped when the run ends
            schema, url = stack.enter_context(postgres_schema(url, "load"))
        pairs = pair_file(workdir / "pairs.csv", args.tranches * 100 + 20, args.seed)
        protocol = protocol_file(workdir / "load.toml", args.tranches,
                                 args.raters_per_tranche)
        create_study(protocol, pairs, url, seed=args.seed, completion_code="LOAD-DONE")
        server = Server(url, workdir, args.threads,
                        args=("--workers", str(args.workers)) if args.workers > 1 else ())
        base = server.start()
        try:
            runs, rec, seconds = asyncio.run(run_raters(
                base, args.raters, args.think_s, args.max_seconds, args.seed, args.ramp_s))
        finally:
            server.stop()
        problems = check_database(url, runs)
    summary = summarise(runs, rec, seconds)
    settings = {"backend": "PostgreSQL" if schema else "SQLite (WAL)", "threads": args.threads,
                "workers": args.workers, "stress": args.stress,
                "think_s": args.think_s, "tranches": args.tranches,
                "raters_per_tranche": args.raters_per_tranche}
    print_report(summary, problems, settings)
    unfinished = summary["outcomes"].get("unfinished", 0) + summary["outcomes"].get("error", 0)
    if args.json:
        args.json.write_text(json.dumps({**summary, "settings": settings,
                                         "problems": problems}, indent=2))
    return 1 if summary["errors"] or problems or unfinished else 0


if __name__ == "__main__":
    sys.exit(main())
