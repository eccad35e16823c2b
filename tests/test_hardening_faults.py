"""Faults against the rating site: crashes, dropped connections, tabs, late returns.

The server runs as in production (``lexgold serve``, waitress, its own process) and raters are
HTTP clients with their own cookies. After each fault the database is compared with what the
raters were told was accepted (the check of ``bench/load_test.py``): nothing accepted is lost,
nothing is stored twice, no half-written group is visible, and raters resume where they were.
"""

import importlib.util
import re
import sys
import threading
import time
from pathlib import Path

import httpx
import numpy as np
import pytest
from sqlalchemy import create_engine, select, text

from lexgold.study import models as m
from lexgold.study.db import database_url, make_engine, postgres_schema, session_factory
from lexgold.study.store import create_study
from test_annotate_app import protocol_variant, usf_pair_file

pytestmark = pytest.mark.slow            # hardening: servers, faults and fuzzing of the site

_spec = importlib.util.spec_from_file_location(
    "lexgold_load_test", Path(__file__).resolve().parents[1] / "bench" / "load_test.py")
load_test = sys.modules.setdefault("lexgold_load_test", importlib.util.module_from_spec(_spec))
_spec.loader.exec_module(load_test)


@pytest.fixture(scope="module")
def pairs(usf, tmp_path_factory):
    return usf_pair_file(usf, tmp_path_factory.mktemp("fault-pairs") / "pairs.csv")


class HttpRater:
    """One rater's browser over HTTP that keeps going through server crashes.

    A POST whose response never came is ``pending``: the next page shown tells whether it was
    stored (the rater moved on) or not (the same page again), as a person would see it.
    """

    def __init__(self, pid: str, where: dict, seed: int):
        self.where, self.rng = where, np.random.default_rng(seed)
        self.client = httpx.Client(base_url=where["base"], timeout=30, follow_redirects=False)
        self.run = load_test.RaterRun(pid)
        self.pending, self.server_errors, self.resumed_at = None, [], []

    def _send(self, method, path, **kwargs):
        deadline = time.monotonic() + 300           # bounded: 300 s of retries (a loaded machine)
        while time.monotonic() < deadline:
            self.client.base_url = self.where["base"]
            try:
                response = self.client.request(method, path, **kwargs)
            except httpx.TransportError:
                if method == "POST":
                    return None                     # unknown outcome: pending
                time.sleep(0.1)
                continue
            if response.status_code >= 500:
                self.server_errors.append((path, response.status_code, response.text))
                if method == "POST":
                    return None
                time.sleep(0.1)
                continue
            return response
        raise AssertionError(f"{self.run.external_id}: server unreachable for 300 s")

    def enter(self):
        html = self._send("GET", f"/?PROLIFIC_PID={self.run.external_id}").text
        csrf = load_test._csrf(html)
        self._send("POST", "/consent", data={"csrf_token": csrf, "consent": "yes",
                                              "native": "yes"})

    def _settle(self, html):
        """Resolve a pending POST from the page now shown."""
        if self.pending is None:
            return
        position = re.search(r'name="position" value="(\d+)"', html)
        moved = position is None or int(position.group(1)) > self.pending[1]
        self.resumed_at.append((self.pending[1], moved))
        if moved:
            self._accept(self.pending)
        self.pending = None

    def _accept(self, answered):
        if answered[0] == "group":
            self.run.items.update(answered[2])
        else:
            self.run.checkpoints[answered[1]] = answered[2]

    def finish(self, stop_after: int | None = None):
        """Answer pages until the end (or ``stop_after`` pages); returns the last page."""
        for done in range(200):
            response = self._send("GET", "/task")
            if response.status_code == 302:          # crashed before consent was stored
                self.enter()
                continue
            self._settle(response.text)
            form = load_test.answer_form(response.text, self.rng)
            if form is None or stop_after is not None and done >= stop_after:
                if form is None:
                    code = re.search(r'<code id="code">([^<]+)</code>', response.text)
                    self.run.outcome = "done" if code else "full"
                    self.run.code = code.group(1) if code else None
                return response
            path, data, answered = form
            if answered and answered[0] == "group":
                answered = ("group", int(data["position"]), answered[1])
            result = self._send("POST", path, data=data)
            if result is None:
                self.pending = answered        # None for an instructions page
            elif result.status_code == 302 and answered:
                self._accept(answered)
        raise AssertionError("more pages than a tranche has")


def sqlite_study(tmp_path, pairs, tranches=6, raters=1):
    """Six short tranches (~50 showings, ~9 pages) of one place each: fast enough for CI."""
    protocol = protocol_variant(tmp_path, "simlex", tranches=tranches,
                                raters_per_tranche=raters)
    url = database_url(tmp_path / "fault.sqlite")
    create_study(protocol, pairs, url, seed=2, completion_code="FAULT-OK")
    return url


def half_written_groups(url):
    engine = make_engine(url)
    with session_factory(engine)() as session:
        stored = {}
        for rater_id, item_id, rating in session.execute(
                select(m.Answer.rater_id, m.Answer.item_id, m.Answer.rating)):
            stored.setdefault(rater_id, {})[item_id] = rating
        problems = load_test._check_groups(session, stored)
        steps_ok = []
        for slot in session.scalars(select(m.Slot).where(m.Slot.rater_id.is_not(None))):
            answered = session.scalar(select(text("count(distinct item.step_id)")).select_from(
                m.Answer).join(m.Item, m.Answer.item_id == m.Item.id)
                .where(m.Answer.slot_id == slot.id))
            checks = session.scalar(select(text("count(*)")).select_from(m.CheckpointAnswer)
                                    .where(m.CheckpointAnswer.slot_id == slot.id))
            steps_ok.append(answered + checks == slot.step)
    engine.dispose()
    return problems, all(steps_ok)


def run_raters_through(raters, kill_points, server, where, url):
    """Raters in threads; SIGKILL the server each time accepted pages pass a kill point."""
    threads = [threading.Thread(target=r.finish, daemon=True) for r in raters]
    for thread in threads:
        thread.start()
    snapshots = []
    for point in kill_points:
        deadline = time.monotonic() + 120
        while sum(len(r.run.items) > 0 for r in raters) < 1 or \
                sum(len(r.run.items) + len(r.run.checkpoints) for r in raters) < point:
            assert time.monotonic() < deadline, "raters made no progress"
            time.sleep(0.01)
        server.kill()                                # mid-study, requests in flight
        snapshots.append(half_written_groups(url))
        time.sleep(0.3)
        where["base"] = server.start()
    for thread in threads:
        thread.join(180)
    return snapshots


def test_sigkill_mid_study_loses_nothing_and_raters_resume(tmp_path, pairs):
    url = sqlite_study(tmp_path, pairs)
    server = load_test.Server(url, tmp_path, threads=4)
    where = {"base": server.start()}
    try:
        raters = [HttpRater(f"kill{k}", where, seed=k) for k in range(6)]
        for rater in raters:
            rater.enter()
        snapshots = run_raters_through(raters, [40, 160], server, where, url)
    finally:
        server.stop()
    for problems, steps_match in snapshots:       # the database as the crash left it
        assert problems == [] and steps_match
    assert [r.run.outcome for r in raters] == ["done"] * 6
    assert {r.run.code for r in raters} == {"FAULT-OK"}
    assert load_test.check_database(url, [r.run for r in raters]) == []
    engine = create_engine(url)
    with engine.connect() as connection:
        assert connection.exec_driver_sql("PRAGMA integrity_check").scalar() == "ok"
    engine.dispose()


@pytest.fixture
def pg_app_url(postgres_url):
    """A private schema on the test server; the app's connections carry a unique name."""
    with postgres_schema(postgres_url, "hardening") as (schema, url):
        admin = create_engine(postgres_url)
        yield f"{url}&application_name={schema}", schema, admin
        admin.dispose()


def terminate(admin, name) -> int:
    """pg_terminate_backend on every connection of the app (and of nobody else)."""
    with admin.begin() as connection:
        return len(connection.execute(text(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE application_name = :name AND pid <> pg_backend_pid()"), {"name": name}).all())


@pytest.mark.postgres
def test_postgres_connections_dropped_between_and_during_requests(tmp_path, pairs, pg_app_url):
    url, name, admin = pg_app_url
    protocol = protocol_variant(tmp_path, "simlex", tranches=4, raters_per_tranche=1)
    create_study(protocol, pairs, url, seed=4, completion_code="PG-FAULT")
    server = load_test.Server(url, tmp_path, threads=4)
    where = {"base": server.start()}
    try:
        raters = [HttpRater(f"pg{k}", where, seed=k) for k in range(4)]
        for rater in raters:
            rater.enter()
            rater.finish(stop_after=3)
        assert terminate(admin, name) >= 1          # every pooled connection is dead now
        for rater in raters:                         # the next requests reconnect: no error
            rater.finish(stop_after=2)
        assert [r.server_errors for r in raters] == [[]] * 4
        stop = threading.Event()
        killed = []

        def keep_terminating():
            while not stop.is_set():
                killed.append(terminate(admin, name))
                time.sleep(0.05)

        killer = threading.Thread(target=keep_terminating, daemon=True)
        killer.start()
        threads = [threading.Thread(target=r.finish, daemon=True) for r in raters]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(180)
        stop.set()
        killer.join()
    finally:
        server.stop()
    assert sum(killed) > 0
    assert [r.run.outcome for r in raters] == ["done"] * 4
    assert load_test.check_database(url, [r.run for r in raters]) == []
    errors = [e for r in raters for e in r.server_errors]
    for _, status, body in errors:                    # any failure is a clear retry message
        assert status == 503 and "try again" in body


def test_hundreds_of_idle_browser_connections_do_not_lock_out_a_new_rater(tmp_path, pairs):
    """Each rater's browser keeps a connection open while reading; waitress's default of 100
    open connections left rater 101 waiting for minutes (until idle ones timed out)."""
    import socket
    url = sqlite_study(tmp_path, pairs)
    server = load_test.Server(url, tmp_path, threads=4)
    base = server.start()
    host, port = base.removeprefix("http://").split(":")
    sockets = []
    try:
        for _ in range(150):
            sock = socket.create_connection((host, int(port)))
            sock.sendall(b"GET /static/lexgold.css HTTP/1.1\r\nHost: rater\r\n\r\n")
            sockets.append(sock)
        time.sleep(0.5)
        response = httpx.get(base + "/?PROLIFIC_PID=late", timeout=10)
        assert response.status_code == 200 and "Before you start" in response.text
    finally:
        for sock in sockets:
            sock.close()
        server.stop()
