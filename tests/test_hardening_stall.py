"""A PostgreSQL server that stops answering (``kill -STOP``) while raters are on the site.

The server is a private cluster started for this module (``initdb`` + ``pg_ctl`` on a free
port), so stopping it disturbs nobody else. Before: every thread of ``lexgold serve`` waited
forever on the stopped server and even ``/static/lexgold.css`` timed out, with nothing logged.
LEXGOLD_STALL_S sets how long the server is stopped (default 12; docs/hardening.md quotes 60).
"""

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import httpx
import numpy as np
import pytest
from sqlalchemy import create_engine, func, select

from lexgold.study import models as m
from lexgold.study.db import postgres_schema
from lexgold.study.store import create_study
from test_annotate_app import protocol_variant
from test_hardening_faults import HttpRater, load_test, pairs  # noqa: F401

pytestmark = pytest.mark.slow            # hardening: servers, faults and fuzzing of the site

INITDB = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
STALL_S = float(os.environ.get("LEXGOLD_STALL_S", "12"))


def _children(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


@pytest.fixture(scope="module")
def private_postgres():
    """``(url, stalled)``: a PostgreSQL cluster of our own; ``stalled()`` is a context manager
    during which every process of it is stopped (SIGSTOP), continued on exit."""
    if not INITDB:
        pytest.skip("needs Debian's postgresql package (/usr/lib/postgresql/*/bin/initdb)")
    bin_dir = INITDB[-1].parent
    root = Path(tempfile.mkdtemp(prefix="lexgold-pg-"))
    as_user = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    if as_user:
        shutil.chown(root, "postgres")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    data = root / "data"
    subprocess.run([*as_user, str(bin_dir / "initdb"), "-D", str(data), "-A", "trust",
                    "-U", "postgres", "--no-sync"], check=True, capture_output=True)
    subprocess.run([*as_user, str(bin_dir / "pg_ctl"), "-D", str(data), "-l", str(root / "log"),
                    "-w", "-o", f"-p {port} -k {root} -c listen_addresses=127.0.0.1 "
                    "-c fsync=off", "start"], check=True, capture_output=True)
    postmaster = int((data / "postmaster.pid").read_text().split()[0])

    @contextmanager
    def stalled():
        # The postmaster first (it forks no backend once stopped), then the children it has.
        # A backend may exit and be reaped between the scan and its signal (a connection just
        # closed): skip it. Whatever happens, every stopped process is continued, or the
        # fixture's teardown would wait forever on a stopped server.
        stopped = []
        try:
            os.kill(postmaster, signal.SIGSTOP)
            stopped.append(postmaster)
            for pid in _children(postmaster):
                try:
                    os.kill(pid, signal.SIGSTOP)
                except ProcessLookupError:
                    continue
                stopped.append(pid)
            yield
        finally:
            for pid in reversed(stopped):   # backends first, the postmaster last
                try:
                    os.kill(pid, signal.SIGCONT)
                except ProcessLookupError:  # a backend that had exited and was reaped
                    pass

    try:
        yield f"postgresql+psycopg://postgres@127.0.0.1:{port}/postgres", stalled
    finally:
        subprocess.run([*as_user, str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate",
                        "stop"], capture_output=True)
        shutil.rmtree(root, ignore_errors=True)


def _timed(client, method, path, **kwargs):
    start = time.monotonic()
    try:
        response = client.request(method, path, **kwargs)
    except httpx.TimeoutException:
        return None, time.monotonic() - start
    return response, time.monotonic() - start


def test_stalled_postgres_fails_fast_serves_static_and_loses_nothing(tmp_path, pairs,
                                                                      private_postgres):
    server_url, stalled = private_postgres
    with postgres_schema(server_url, "stall") as (_schema, url):
        protocol = protocol_variant(tmp_path, "simlex", tranches=4, raters_per_tranche=1)
        create_study(protocol, pairs, url, seed=5, completion_code="STALL-OK")
        server = load_test.Server(url, tmp_path, threads=4, password="stall-admin")
        where = {"base": server.start()}
        try:
            raters = [HttpRater(f"stall{k}", where, seed=k) for k in range(3)]
            for rater in raters:
                rater.enter()
                rater.finish(stop_after=2)
            admin = httpx.Client(base_url=where["base"], timeout=30)
            token = load_test._csrf(admin.get("/admin/login").text)
            assert admin.post("/admin/login", data={"csrf_token": token,
                                                    "password": "stall-admin"}).status_code == 302
            # the page rater 0 will send while the database is stopped
            form = load_test.answer_form(raters[0].client.get("/task").text,
                                         np.random.default_rng(99))
            engine = create_engine(url)
            with engine.connect() as connection:
                stored_before = connection.scalar(select(func.count()).select_from(m.Answer))
            engine.dispose()

            results = {"post": [], "admin": [], "task": [], "static": []}
            with stalled():
                stop_at = time.monotonic() + STALL_S

                def hammer(rater):
                    client = httpx.Client(base_url=where["base"], timeout=60,
                                          cookies=rater.client.cookies)
                    while time.monotonic() < stop_at:
                        results["task"].append(_timed(client, "GET", "/task"))
                threads = [threading.Thread(target=hammer, args=(r,), daemon=True)
                           for r in raters * 3]               # more than the server's threads
                for thread in threads:
                    thread.start()
                static = httpx.Client(base_url=where["base"], timeout=60)
                time.sleep(0.5)
                results["post"].append(_timed(raters[0].client, "POST", form[0], data=form[1]))
                results["admin"].append(_timed(admin, "GET", "/admin/"))
                while time.monotonic() < stop_at:
                    results["static"].append(_timed(static, "GET", "/static/lexgold.css"))
                    time.sleep(0.2)
                for thread in threads:
                    thread.join(120)
            # what raters and the admin saw while the database was stopped
            for kind, answers in results.items():
                assert answers, kind
                for response, elapsed in answers:
                    # any answer is the fast failure: the database stays stopped until these
                    # requests end, so a server waiting on it never answers; times are printed,
                    # not judged (a loaded machine stretches them)
                    assert response is not None, f"{kind} timed out after {elapsed:.1f} s"
                    if kind == "static":
                        assert response.status_code == 200
                    else:
                        assert response.status_code == 503, (kind, response.status_code)
                        assert response.headers["Retry-After"] == "5"
                        assert ("not answering" if kind == "admin" else "try again") \
                            in response.text
            fast = sorted(elapsed for _, elapsed in results["static"])
            print(f"\nstall {STALL_S:.0f} s: {len(results['task'])} page requests, all 503, "
                  f"slowest {max(e for _, e in results['task']):.1f} s; static files: "
                  f"{len(fast)}, median {fast[len(fast) // 2] * 1000:.0f} ms, "
                  f"slowest {fast[-1] * 1000:.0f} ms")
            log = server.log.read_text(errors="replace")
            assert "study database down" in log and "database unavailable for GET /task" in log
            engine = create_engine(url)
            with engine.connect() as connection:     # the POST during the stall stored nothing
                assert connection.scalar(select(func.count()).select_from(m.Answer)) == \
                    stored_before
            engine.dispose()
            # the database is back: raters resend and finish; nothing lost or doubled
            deadline = time.monotonic() + 60
            while admin.get("/admin/").status_code != 200 and time.monotonic() < deadline:
                time.sleep(1)
            page = admin.get("/admin/").text
            assert "Database: answering" in page and "Last error" in page
            for rater in raters:
                rater.finish()
        finally:
            server.stop()
        assert [r.run.outcome for r in raters] == ["done"] * 3
        assert load_test.check_database(url, [r.run for r in raters]) == []
        print(f"answers lost: 0; log lines: "
              f"{[line for line in log.splitlines() if 'database' in line][:3]}")
