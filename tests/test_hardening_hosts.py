"""Security round 3, items 2 and 6 (docs/hardening.md, "Round 3"): the session-signing key is
kept out of the study database, and several app hosts on one database agree on admin sessions
and on time. Over HTTP against ``lexgold serve`` processes; each test failed before its fix.
"""

import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner
from flask import Flask
from flask.sessions import SecureCookieSessionInterface
from itsdangerous import URLSafeTimedSerializer
from sqlalchemy import create_engine, inspect, text

from lexgold.study.db import database_url, downgrade, make_engine, postgres_schema
from lexgold.study.store import create_study
from lexgold.cli import cli
from test_annotate_app import protocol_variant
from test_hardening_faults import load_test
from test_hardening_security import (admin_page, answer_page, login, pairs,  # noqa: F401
                                     rater_client, serve, small_study)

pytestmark = pytest.mark.slow            # hardening: servers, faults and fuzzing of the site

#: ``lexgold`` with this host's clock (the function every time in lexgold came from) 2 h ahead;
#: the database server's clock is untouched
AHEAD = ("import sys, datetime; import lexgold.study.models as m; real = m.utcnow; "
         "m.utcnow = lambda: real() + datetime.timedelta(hours=2); "
         "from lexgold.cli import main; sys.argv[0] = 'lexgold'; main()")


# -- item 2: a copy of the study database signs nothing ----------------------------------------

def forged(key: str, session: dict) -> tuple[str, str]:
    """A session cookie signed with ``key`` holding ``session`` and a CSRF token, and the
    matching form token (what flask-wtf would have made with that key)."""
    app = Flask("forger")
    app.secret_key = key
    raw = "f" * 40
    cookie = SecureCookieSessionInterface().get_signing_serializer(app).dumps(
        {**session, "csrf_token": raw})
    return cookie, URLSafeTimedSerializer(key, salt="wtf-csrf-token").dumps(raw)


def test_a_copy_of_the_study_database_cannot_sign_a_raters_session(tmp_path, pairs, serve):
    """Before: ``study.secret_key`` signed every session; with it, ``{"resume": public_id}`` and
    ``POST /resume`` took over any rater (an anonymous one for good)."""
    url = small_study(tmp_path, pairs)
    _, base = serve(url)
    victim = rater_client(base, "")
    assert 'name="position"' in victim.get("/task").text
    engine = create_engine(url)
    with engine.connect() as connection:
        public_id = connection.execute(text("SELECT public_id FROM rater")).scalar_one()
        tables = inspect(connection).get_table_names()
        stored = {value for table in tables for row in connection.execute(
            text(f'SELECT * FROM "{table}"')) for value in row
            if isinstance(value, str) and 16 <= len(value) <= 200}
    engine.dispose()
    taken = []
    for key in sorted(stored):
        cookie, token = forged(key, {"resume": public_id})
        moved = httpx.post(base + "/resume", data={"csrf_token": token}, timeout=30,
                           headers={"Cookie": f"session={cookie}"})
        cookie = moved.cookies.get("session") or cookie
        if 'name="position"' in httpx.get(base + "/task", timeout=30,
                                          headers={"Cookie": f"session={cookie}"}).text:
            taken.append(key)
    assert taken == []                   # before: the study's own key
    assert 'name="position"' in victim.get("/task").text


def test_study_create_writes_a_key_file_only_its_owner_reads(tmp_path, pairs):
    db = tmp_path / "study.sqlite"
    protocol = protocol_variant(tmp_path, "simlex", tranches=2, raters_per_tranche=2)
    result = CliRunner().invoke(cli, ["study", "create", "--protocol", str(protocol),
                                      "--pairs", str(pairs), "--db", str(db)])
    assert result.exit_code == 0, result.output
    key_file = tmp_path / "study.sqlite.key"
    assert f"session-signing key: {key_file} (new" in result.output
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert len(key_file.read_text().strip()) == 64
    with make_engine(database_url(db)).connect() as connection:      # and none in the study
        assert "secret_key" not in {c["name"] for c in inspect(connection).get_columns("study")}
    again = CliRunner().invoke(cli, ["study", "secret", str(db)])
    assert again.exit_code == 1 and "exists" in again.output and "--force" in again.output
    old = key_file.read_text()
    assert CliRunner().invoke(cli, ["study", "secret", str(db), "--force"]).exit_code == 0
    assert key_file.read_text() != old
    key_file.chmod(0o644)
    refused = CliRunner().invoke(cli, ["serve", str(db), "--check"])
    assert refused.exit_code == 1
    assert f"readable by others: chmod 600 {key_file}" in refused.output


def serve_once(url, *args, timeout=60) -> subprocess.CompletedProcess:
    """``lexgold serve`` with no key in its environment."""
    command = [str(Path(sys.executable).with_name("lexgold")), "serve", url, "--port", "0",
               *args]
    env = {k: v for k, v in os.environ.items() if not k.startswith("LEXGOLD_SECRET")}
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env)


def test_serve_refuses_to_face_the_public_without_a_key(tmp_path, pairs):
    """Before: the key came from the study, so any server started; now a public server (any
    address beyond loopback, or behind a proxy) needs a key kept outside the database."""
    url = small_study(tmp_path, pairs)
    try:
        result = serve_once(url, "--host", "127.0.0.1", "--trusted-proxies", "1", timeout=120)
    except subprocess.TimeoutExpired:       # before: it served
        pytest.fail("serve started without a session-signing key")
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 1 and len(lines) == 1
    assert lines[0].startswith("Error: no session-signing key for a public server: run "
                               "`lexgold study secret ")
    checked = serve_once(url, "--check")           # loopback: a key for this run only, said so
    assert checked.returncode == 0, checked.stderr
    assert "one made for this run only (a restart logs every rater and admin out" in \
        checked.stdout


def test_upgrading_an_old_study_moves_its_key_out_of_the_database(tmp_path, pairs):
    """The key leaves the study; `study upgrade` keeps it in the key file for the cookies it
    signed (tests/test_hardening_round3_leftovers.py), or says it is dropped when the key is
    in the environment."""
    url = small_study(tmp_path, pairs)
    db = str(tmp_path / "security.sqlite")
    for environment in ({"LEXGOLD_SECRET_KEY": "e" * 64, "LEXGOLD_SECRET_KEY_FILE": None},
                        {"LEXGOLD_SECRET_KEY": None, "LEXGOLD_SECRET_KEY_FILE": None}):
        engine = make_engine(url)
        downgrade(engine, "0007")                    # as made before round 3: the key inside
        with engine.connect() as connection:
            old_key = connection.execute(text("SELECT secret_key FROM study")).scalar()
        engine.dispose()
        result = CliRunner(env=environment).invoke(cli, ["study", "upgrade", db])
        assert result.exit_code == 0, result.output
        with make_engine(url).connect() as connection:
            assert "secret_key" not in {c["name"] for c in
                                        inspect(connection).get_columns("study")}
        if environment["LEXGOLD_SECRET_KEY"]:
            assert "the session-signing key the study held is dropped: raters who started " \
                   "before this upgrade start over" in result.output
            assert not Path(f"{db}.key").exists()
        else:
            assert f"session-signing key: {db}.key (new, readable by you only); the key the " \
                   "study held is kept in it until" in result.output
            lines = Path(f"{db}.key").read_text().splitlines()
            assert len(lines) == 2 and old_key not in lines[0] and \
                lines[1].startswith(f"legacy {old_key} until ")


# -- item 6: two hosts on one database ---------------------------------------------------------

@pytest.fixture(params=["sqlite", "postgres"])
def one_place(request, tmp_path, pairs):
    """A study with one place (one tranche, one rater)."""
    protocol = protocol_variant(tmp_path, "simlex", tranches=1, raters_per_tranche=1)
    if request.param == "sqlite":
        url = database_url(tmp_path / "hosts.sqlite")
        create_study(protocol, pairs, url, seed=2, completion_code="HOSTS-OK")
        yield url
        return
    with postgres_schema(request.getfixturevalue("postgres_url")) as (_, url):
        create_study(protocol, pairs, url, seed=2, completion_code="HOSTS-OK")
        yield url


@pytest.fixture
def two_hosts(one_place, tmp_path):
    """Two servers on one database with the same key and plain admin password; the second
    host's clock is 2 h ahead."""
    first = load_test.Server(one_place, tmp_path, threads=4, password="admin-pw")
    second = load_test.Server(one_place, tmp_path, threads=4, password="admin-pw",
                              launcher=(sys.executable, "-c", AHEAD))
    second.secret_key = first.secret_key
    try:
        yield first.start(), second.start()
    finally:
        first.stop()
        second.stop()


def test_a_host_with_its_clock_ahead_gives_no_place_away(two_hosts):
    """Before: host 2 (clock 2 h ahead) saw the claim of a rater who had answered seconds
    earlier as expired and gave the place away; the rater got 409 on host 1."""
    base1, base2 = two_hosts
    holder = rater_client(base1, "")
    assert answer_page(holder, holder.get("/task").text).status_code == 302
    newcomer = rater_client(base2, "")
    assert 'name="position"' not in newcomer.get("/task").text      # the only place is taken
    page = holder.get("/task")
    assert page.status_code == 200 and 'name="position" value="1"' in page.text
    assert answer_page(holder, page.text).status_code == 302       # before: 409
    assert 'name="position" value="2"' in holder.get("/task").text


def test_an_admin_session_works_on_every_host(two_hosts):
    """Before: each host hashed the plain password with its own salt; a cookie of host 1 was
    refused on host 2, and a login on host 2 deleted host 1's session."""
    base1, base2 = two_hosts
    first = login(base1).cookies["session"]
    assert admin_page(base2, first) == 200          # before: 302 to the login page
    second = login(base2).cookies["session"]
    assert admin_page(base1, first) == 200          # before: deleted by the login on host 2
    assert admin_page(base1, second) == 200


# -- issue 49: one figures refresher per PostgreSQL study, whatever the number of hosts -------

#: what a refresher says on stderr (the server's log) when it takes the study's lock
TAKEN = "refreshes the study's figures (PostgreSQL advisory lock"


def _lock_holders(url: str, key: int) -> int:
    """Backends holding the advisory lock ``key`` (PostgreSQL splits it in two 32-bit ids)."""
    unsigned = key & 0xFFFFFFFFFFFFFFFF
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            return connection.execute(text(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted "
                "AND classid::bigint = :high AND objid::bigint = :low AND objsubid = 1"),
                {"high": unsigned >> 32, "low": unsigned & 0xFFFFFFFF}).scalar()
    finally:
        engine.dispose()


def _wait_for(condition, timeout_s: float = 60) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.2)
    return False


def test_one_refresher_per_postgresql_study_and_another_host_takes_over(tmp_path, pairs,
                                                                       postgres_url):
    """Before: every host's ``serve`` ran its own refresher (top-ups and figures once per
    host) unless all but one were started with ``--figures-every 0``. Now the refresher that
    holds the study's advisory lock runs; killed, another host's takes over."""
    from lexgold.live.refresher import lock_key

    protocol = protocol_variant(tmp_path, "simlex", tranches=1, raters_per_tranche=1)
    with postgres_schema(postgres_url) as (_, url):
        create_study(protocol, pairs, url, seed=2)
        engine = make_engine(url)
        with engine.connect() as connection:
            key = lock_key(connection)
        engine.dispose()
        hosts = [load_test.Server(url, tmp_path, threads=2, args=("--figures-every", "0.5"))
                 for _ in range(2)]
        try:
            for host in hosts:
                host.start()

            def holders():
                return [host for host in hosts if TAKEN in host.log.read_text(errors="replace")]

            assert _wait_for(lambda: holders() and _lock_holders(url, key) == 1)
            time.sleep(3)                          # six periods: the other host still waits
            assert len(holders()) == 1 and _lock_holders(url, key) == 1
            first = holders()[0]
            first.kill()                           # SIGKILL: its refresher sees it gone
            other = next(host for host in hosts if host is not first)
            assert _wait_for(lambda: TAKEN in other.log.read_text(errors="replace"))
            assert _lock_holders(url, key) == 1
        finally:
            for host in hosts:
                host.stop()
