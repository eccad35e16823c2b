"""``lexgold serve --workers N``: several gunicorn processes serve one study, and what must hold
across processes (the admin lock-out count, answers) holds, because it lives in the database."""

import re
import time
from pathlib import Path

import httpx
import pytest
from sqlalchemy import func, select

from lexgold.study import models as m
from lexgold.study.db import database_url, make_engine, session_factory
from lexgold.study.store import create_study
from test_annotate_app import protocol_variant, usf_pair_file
from test_hardening_faults import load_test

pytestmark = pytest.mark.slow            # several server processes per test (gunicorn workers)

CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


@pytest.fixture(params=["sqlite", "postgres"])
def study_url(request, usf, tmp_path):
    pairs = usf_pair_file(usf, tmp_path / "pairs.csv")
    protocol = protocol_variant(tmp_path, "simlex", tranches=2, raters_per_tranche=4)
    if request.param == "sqlite":
        url = database_url(tmp_path / "workers.sqlite")
        create_study(protocol, pairs, url, seed=3, completion_code="WORKERS-OK")
        yield url
        return
    from lexgold.study.db import postgres_schema
    with postgres_schema(request.getfixturevalue("postgres_url")) as (_, url):
        create_study(protocol, pairs, url, seed=3, completion_code="WORKERS-OK")
        yield url


@pytest.fixture
def served(study_url, tmp_path):
    server = load_test.Server(study_url, tmp_path, threads=2, password="admin-pw",
                              args=("--workers", "3"))
    base = server.start(timeout_s=120)
    yield server, base, study_url
    server.stop()


def worker_pids(server, expected: int) -> set[int]:
    """Process ids of the server's children (gunicorn's workers), from /proc, once ``expected``
    of them run (gunicorn announces readiness before it forks them; 300 s at most, a bound
    reached only on a loaded machine)."""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        found = {pid for pid in children(server) if b"lexgold.live.refresher" not in
                 Path(f"/proc/{pid}/cmdline").read_bytes()}
        if len(found) >= expected:
            break
        time.sleep(0.1)
    return found


def children(server) -> set[int]:
    """Process ids of the server's children: its workers and the figures refresher
    (lexgold.live.refresher)."""
    path = Path(f"/proc/{server.process.pid}/task/{server.process.pid}/children")
    return {int(p) for p in path.read_text().split()}


def test_several_processes_serve_and_share_the_admin_lock_out(served):
    from lexgold.annotate.views_admin import MAX_FAILURES
    server, base, _ = served
    assert len(worker_pids(server, 3)) == 3
    assert len(children(server)) == 4           # and one figures refresher for them all
    assert "with 3 workers" in server.log.read_text()
    statuses = []
    for k in range(MAX_FAILURES + 5):          # a new connection each time: any worker answers
        with httpx.Client(base_url=base, timeout=60) as client:
            token = CSRF.search(client.get("/admin/login").text).group(1)
            statuses.append(client.post("/admin/login", data={
                "csrf_token": token, "password": f"wrong-{k}"}).status_code)
    assert statuses[:MAX_FAILURES] == [401] * MAX_FAILURES
    assert set(statuses[MAX_FAILURES:]) == {429}


def test_a_rater_walks_pages_served_by_different_processes(served):
    server, base, url = served
    client = httpx.Client(base_url=base, timeout=60, headers={"Connection": "close"})
    html = client.get("/?PROLIFIC_PID=multi01").text
    client.post("/consent", data={"csrf_token": CSRF.search(html).group(1), "consent": "yes",
                                  "native": "yes"})
    stored_pages = 0
    for _ in range(12):
        html = client.get("/task").text
        page = re.search(r'name="page" value="(\d+)"', html)
        position = re.search(r'name="position" value="(\d+)"', html)
        token = CSRF.search(html).group(1)
        if page:
            client.post("/instructions", data={"csrf_token": token, "page": page.group(1)})
            continue
        if not position:
            break
        data = {"csrf_token": token, "position": position.group(1), "choice": "1"}
        data.update({f"r{i}": "2" for i in set(re.findall(r'name="r(\d+)"', html))})
        assert client.post("/step", data=data).status_code == 302
        stored_pages += 1
    assert stored_pages >= 5
    engine = make_engine(url)
    try:
        with session_factory(engine)() as session:
            rater = session.scalars(select(m.Rater).where(m.Rater.external_id == "multi01")).one()
            answers = session.scalar(select(func.count()).select_from(m.Answer)
                                     .where(m.Answer.rater_id == rater.id))
    finally:
        engine.dispose()
    assert answers > 0
    assert len(worker_pids(server, 3)) == 3
