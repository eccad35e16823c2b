"""Security round 4, the site and server half (issue 35 items 1, 2, 3, 5, 6 and the web parts
of 11; docs/hardening.md, "Round 4: the site"). Each test is the probe that found the weakness
and failed before its fix.
"""

import json
import os
import re
import select
import shutil
import signal
import socket
import sqlite3
import stat
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest
from sqlalchemy import select as sql_select
from sqlalchemy import text
from test_annotate_app import enter, make_app, page, past_checkpoints, protocol_variant
from test_hardening_security import (CSRF, login, pairs, rater_client, serve,  # noqa: F401
                                     small_study)

from lexgold.study import models as m
from lexgold.study.db import database_url, downgrade, postgres_schema, upgrade
from lexgold.study.store import create_study
from lexgold.errors import InputError
from lexgold.prolific.client import Client, ProlificError
from lexgold.prolific.webhook import signature

pytestmark = pytest.mark.slow            # hardening: servers, faults and fuzzing of the site

LEXGOLD = str(Path(sys.executable).with_name("lexgold"))
VICTIM = "?PROLIFIC_PID=victim01&STUDY_ID=study01&SESSION_ID=session01"
KEY = "round4-key-" + "k" * 32


def position(client) -> str | None:
    found = re.search(r'name="position" value="(\d+)"', client.get("/task").text)
    return found.group(1) if found else None


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


# -- 1. a copy of the study database takes over no rater ----------------------------------------

def test_a_copied_study_file_gives_no_one_a_raters_place(tmp_path, pairs, serve):
    """Before: as user ``nobody``, copy ``a.sqlite`` and ``a.sqlite-wal`` (mode 0644), read the
    rater's row, open its own link rebuilt from ``external_study`` and ``external_session`` in a
    fresh browser and ``POST /resume``: the rater's page, and the real rater redirected away.
    Now the files are 0600 and the row holds only a keyed hash of the session ID."""
    old = os.umask(0o022)                         # a usual umask: files would be 0644
    try:
        url = small_study(tmp_path, pairs)
        server, base = serve(url)
        owner = rater_client(base, VICTIM)
        start = position(owner)
        assert start is not None
        study = tmp_path / "security.sqlite"
        for path in (study, Path(f"{study}-wal"), Path(f"{study}-shm")):
            assert mode(path) == 0o600, path             # before: 0644
        copy = tmp_path / "copy"
        copy.mkdir()
        for side in ("", "-wal"):                         # what the probe copied
            shutil.copy(f"{study}{side}", copy / f"a.sqlite{side}")
        with sqlite3.connect(copy / "a.sqlite") as connection:
            pid, study_id, session = connection.execute(
                "SELECT external_id, external_study, external_session FROM rater").fetchone()
        assert (pid, study_id) == ("victim01", "study01")   # not credentials (docs/hardening.md)
        assert "session01" not in session and re.fullmatch(r"[0-9a-f]{64}", session)
        thief = httpx.Client(base_url=base, timeout=30)
        shown = thief.get(f"/?PROLIFIC_PID={pid}&STUDY_ID={study_id}&SESSION_ID={session}")
        assert shown.status_code == 403 and 'action="/resume"' not in shown.text
        token = CSRF.search(thief.get("/?PROLIFIC_PID=someoneelse").text).group(1)
        assert thief.post("/resume", data={"csrf_token": token}).headers["location"] == "/"
        assert position(thief) is None and position(owner) == start      # the owner stays in
        # the participant's own link (from Prolific) still moves the rater, once asked
        laptop = httpx.Client(base_url=base, timeout=30)
        asked = laptop.get("/" + VICTIM)
        assert asked.status_code == 200 and 'action="/resume"' in asked.text
        laptop.post("/resume", data={"csrf_token": CSRF.search(asked.text).group(1)})
        assert position(laptop) == start and position(owner) is None
        server.stop()
        backup = tmp_path / "backup.sqlite"
        made = subprocess.run([LEXGOLD, "study", "backup", str(study), str(backup)],
                              capture_output=True, text=True, check=False)
        assert made.returncode == 0, made.stderr
        assert mode(backup) == 0o600                                   # before: 0644
    finally:
        os.umask(old)


def test_study_create_writes_the_study_and_its_key_for_the_owner_only(tmp_path, pairs):
    old = os.umask(0o022)
    try:
        done = subprocess.run([LEXGOLD, "study", "create", "--pairs", str(pairs),
                               "--protocol", "simlex", "--db", str(tmp_path / "s.sqlite")],
                              capture_output=True, text=True, check=False)
    finally:
        os.umask(old)
    assert done.returncode == 0, done.stderr
    assert mode(tmp_path / "s.sqlite") == 0o600 and mode(tmp_path / "s.sqlite.key") == 0o600
    (tmp_path / "s.sqlite").chmod(0o644)                   # a study made by an older lexgold
    checked = subprocess.run([LEXGOLD, "serve", str(tmp_path / "s.sqlite"), "--port", "0",
                              "--check"], capture_output=True, text=True, check=False,
                             env={**os.environ, "LEXGOLD_ADMIN_PASSWORD": "x" * 12})
    assert f"chmod 600 {tmp_path / 's.sqlite'}" in checked.stderr


@pytest.fixture(params=["sqlite", "postgres"])
def any_url(request, tmp_path):
    if request.param == "sqlite":
        yield database_url(tmp_path / "r4.sqlite")
        return
    postgres = request.getfixturevalue("postgres_url")
    with postgres_schema(postgres, "round4") as (_, url):
        yield url


def _with_study(url, pairs, tmp_path):
    protocol = protocol_variant(tmp_path, "simlex", tranches=2, raters_per_tranche=2)
    create_study(protocol, pairs, url, seed=5, completion_code="R4-OK")
    return make_app(url, SECRET_KEY=KEY)


def test_the_stored_row_replays_nothing_and_the_migration_hashes_old_rows(any_url, pairs,
                                                                        tmp_path):
    """SQLite and PostgreSQL: what the rater row holds, replayed as the entry link, is refused;
    a study at revision 0013 (plain session IDs, a pending move link) upgraded with the key
    keeps both working, hashed; upgraded without a key, they are dropped."""
    app = _with_study(any_url, pairs, tmp_path)
    owner = app.test_client()
    enter(owner, VICTIM)
    start = page(owner)[1]
    state = app.extensions["lexgold"]
    with state.sessions() as session:
        row = session.scalars(sql_select(m.Rater)).one()
        stored = (row.external_id, row.external_study, row.external_session)
    assert stored[2] != "session01"
    thief = app.test_client()
    assert thief.get(f"/?PROLIFIC_PID={stored[0]}&STUDY_ID={stored[1]}"
                     f"&SESSION_ID={stored[2]}").status_code == 403
    assert thief.post("/resume").headers["location"] == "/" and page(owner)[1] == start
    engine = app.extensions["lexgold_engine"]
    downgrade(engine, "0013_bws")                 # an older study: plain values in the row
    move_token = "M" * 32
    import hashlib
    with engine.begin() as connection:
        connection.execute(text("UPDATE rater SET external_session = 'session01', "
                                "move_sha256 = :digest, move_expires_at = :until"),
                           {"digest": hashlib.sha256(move_token.encode()).hexdigest(),
                            "until": datetime.now(UTC).replace(tzinfo=None) + timedelta(hours=1)})
    upgrade(engine, key=KEY)
    with engine.connect() as connection:
        session, move = connection.execute(text("SELECT external_session, move_sha256 "
                                                "FROM rater")).one()
    assert "session01" not in session and len(session) == 64 and len(move) == 64
    laptop = app.test_client()
    assert laptop.get("/" + VICTIM).status_code == 200            # own link: asked
    assert laptop.post("/resume").status_code == 302 and page(laptop)[1] == start
    phone = app.test_client()
    phone.post(f"/move/{move_token}")                              # the move link converted
    assert page(phone)[1] == start and page(laptop)[1] is None
    downgrade(engine, "0013_bws")
    with engine.begin() as connection:
        connection.execute(text("UPDATE rater SET external_session = 'session01'"))
    upgrade(engine)                                                 # no key: dropped
    with engine.connect() as connection:
        assert connection.execute(text("SELECT external_session FROM rater")).scalar() == ""
    engine.dispose()


def test_a_replayed_resume_ticket_moves_no_one(tmp_path, pairs):
    """Before (round 3's residual): the signed ``resume`` value of a session cookie moved the
    rater whenever it was posted again, e.g. after the rater had moved back."""
    app = _with_study(database_url(tmp_path / "r4.sqlite"), pairs, tmp_path)
    owner = app.test_client()
    enter(owner, VICTIM)
    start = page(owner)[1]
    laptop = app.test_client()
    assert laptop.get("/" + VICTIM).status_code == 200
    ticket = laptop.get_cookie("session").value            # the asked-for session, copied
    assert laptop.post("/resume").status_code == 302 and page(laptop)[1] == start
    assert owner.get("/" + VICTIM).status_code == 200        # the rater moves back home
    assert owner.post("/resume").status_code == 302 and page(owner)[1] == start
    replay = app.test_client()
    replay.set_cookie("session", ticket)
    assert replay.post("/resume").headers["location"] == "/"   # before: the rater's page
    assert page(replay)[1] is None and page(owner)[1] == start
    stale = app.test_client()                               # a ticket past its 10 minutes
    assert stale.get("/" + VICTIM).status_code == 200
    later = datetime.now(UTC).replace(tzinfo=None) + timedelta(minutes=11)
    app.config["CLOCK"] = lambda: later
    assert stale.post("/resume").headers["location"] == "/" and page(owner)[1] == start
    app.extensions["lexgold_engine"].dispose()


# -- 2. no password in any output ------------------------------------------------------------------

def _password_in(text_: str, password: str) -> bool:
    return f":{password}@" in text_ or f"={password}" in text_


def _wait_for(path: Path, pattern: str, process, timeout_s: float = 60) -> str:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = path.read_text(errors="replace")
        if re.search(pattern, found) or process.poll() is not None:
            return found
        time.sleep(0.1)
    return path.read_text(errors="replace")


@pytest.mark.postgres
def test_no_command_and_no_server_log_shows_the_database_password(postgres_url, pairs,
                                                                   tmp_path):
    """Before: ``serve --workers 2`` printed "serving postgresql+psycopg://lexgold:PW@..."
    and ``agree URL`` echoed it in click's "File '...' does not exist". Every command that
    takes a study, given a URL with its password, and the server's log (waitress, gunicorn,
    and the URL in LEXGOLD_DATABASE_URL) hold no password."""
    from sqlalchemy.engine import make_url
    password = make_url(postgres_url).password
    assert password
    with postgres_schema(postgres_url, "round4pw") as (_, url):
        protocol = protocol_variant(tmp_path, "simlex", tranches=2, raters_per_tranche=2)
        create_study(protocol, pairs, url, seed=5)
        wrong = url.replace(f":{password}@", ":Wr0ngPassw0rd@")
        env = {**os.environ, "LEXGOLD_ADMIN_PASSWORD": "x" * 12, "LEXGOLD_SECRET_KEY": KEY}
        out = tmp_path / "out"
        commands = [["agree", url], ["agree", wrong], ["process", url, "--out", str(out)],
                    ["study", "export", url, "--out", str(tmp_path / "r.csv")],
                    ["study", "report", url], ["study", "figures", url],
                    ["study", "upgrade", url], ["study", "upgrade", wrong],
                    ["study", "top-up", url], ["study", "top-up", wrong],
                    ["study", "backup", url, str(tmp_path / "b.dump")],
                    ["serve", url, "--port", "0", "--check"],
                    ["serve", wrong, "--port", "0", "--check"],
                    ["prolific", "sync", url, "--prolific-study", "x"],
                    ["study", "rehearse", wrong]]
        shown = []
        for command in commands:
            done = subprocess.run([LEXGOLD, *command], capture_output=True, text=True,
                                  env=env, timeout=300, check=False)
            shown.append((command[:2], done.stdout + done.stderr))
        for variables, args in (({}, [url, "--workers", "2"]),
                                ({"LEXGOLD_DATABASE_URL": url}, []),
                                ({"LEXGOLD_DATABASE_URL": url}, ["--workers", "2"])):
            log = tmp_path / f"serve-{len(shown)}.log"
            with log.open("wb") as sink:
                server = subprocess.Popen([LEXGOLD, "serve", *args, "--port", "0",
                                           "--figures-every", "1"], stdout=sink,
                                          stderr=subprocess.STDOUT, env={**env, **variables})
            try:
                found = _wait_for(log, r"at (http://127\.0\.0\.1:\d+/)", server)
                base = re.search(r"at (http://127\.0\.0\.1:\d+/)", found).group(1)
                assert httpx.get(base, timeout=30).status_code == 200
                assert httpx.get(base + "admin/", timeout=30).status_code in (200, 302)
            finally:
                server.send_signal(signal.SIGTERM)
                server.wait(30)
            shown.append((["serve", *args[1:]], log.read_text(errors="replace")))
        for command, output in shown:
            assert output.strip(), command                     # every command said something
            assert not _password_in(output, password), (command, output)
            assert "Wr0ngPassw0rd" not in output, (command, output)
        assert any(":***@" in output for _, output in shown)


# -- 3. request bodies are bounded in waitress ---------------------------------------------------

def _stream_until_answered(base: str, head: bytes, chunks, limit: int) -> tuple[bytes, int]:
    """Send ``head`` then body ``chunks`` until the server answers or ``limit`` bytes went;
    (the answer's first bytes, body bytes sent)."""
    host, port = re.match(r"http://([\d.]+):(\d+)", base).groups()
    sent = 0
    with socket.create_connection((host, int(port)), timeout=30) as connection:
        connection.sendall(head)
        for chunk in chunks:
            ready, _, _ = select.select([connection], [], [], 0)
            if ready or sent >= limit:
                break
            try:
                connection.sendall(chunk)
            except (BrokenPipeError, ConnectionResetError):
                break
            sent += len(chunk)
        connection.settimeout(30)
        try:
            answer = connection.recv(200)
        except (ConnectionResetError, TimeoutError):
            answer = b""
    return answer, sent


def test_a_300_mb_post_is_refused_before_it_is_spooled(tmp_path, pairs, serve):
    """Before: waitress read up to 1 GiB of body into a temporary file before the app could
    answer 413 (15 such connections filled a 24 MB TMPDIR). Now 413 at once for a declared
    length over 256 KiB, and after 256 KiB of a chunked body; the 300 MB are never sent."""
    _, base = serve(small_study(tmp_path, pairs))
    block = b"x" * 65536
    declared = (b"POST /step HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                b"application/x-www-form-urlencoded\r\nContent-Length: 300000000\r\n\r\n")
    answer, sent = _stream_until_answered(base, declared, iter(lambda: block, None),
                                          8 * 1024 * 1024)
    assert answer.startswith(b"HTTP/1.1 413"), answer
    assert sent < 8 * 1024 * 1024
    chunked = (b"POST /step HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
               b"application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\n\r\n")
    piece = b"%x\r\n" % len(block) + block + b"\r\n"
    answer, sent = _stream_until_answered(base, chunked, iter(lambda: piece, None),
                                          8 * 1024 * 1024)
    assert answer.startswith(b"HTTP/1.1 413"), answer
    assert sent < 8 * 1024 * 1024
    # a rater's page still goes through
    owner = rater_client(base, "?PROLIFIC_PID=body01")
    assert position(owner) is not None


def test_flask_and_the_docs_nginx_take_waitress_body_limit():
    """The limit waitress enforces (test above) is Flask's and deploy/'s nginx's."""
    from lexgold.annotate.app import MAX_REQUEST_BYTES
    conf = (Path(__file__).resolve().parents[1] / "deploy" / "nginx-lexgold.conf").read_text()
    size = re.search(r"^\s*client_max_body_size\s+(\d+)k;", conf, re.M)
    assert size and int(size.group(1)) * 1024 == MAX_REQUEST_BYTES


# -- 5. the figures refresher is supervised ----------------------------------------------------

def _refresher_pids(server_pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if int(fields[1]) == server_pid and b"lexgold.live.refresher" in command \
                and fields[0] != "Z":
            found.append(int(entry.name))
    return found


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_killed_refresher_is_restarted_and_said_in_the_log(tmp_path, pairs, serve, workers):
    """Before: SIGKILL left the refresher ``<defunct>``, never restarted; the admin view went on
    showing old figures with no warning and top-ups stopped. Under waitress and gunicorn
    (whose arbiter may reap the child first: its status is then unknown, "exited")."""
    server, base = serve(small_study(tmp_path, pairs), "--figures-every", "1",
                         "--workers", workers)
    deadline = time.monotonic() + 60
    while not (first := _refresher_pids(server.process.pid)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert len(first) == 1
    os.kill(first[0], signal.SIGKILL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        now = _refresher_pids(server.process.pid)
        if now and now != first:
            break
        time.sleep(0.2)
    assert now and now != first                                # a new refresher
    zombie = Path(f"/proc/{first[0]}/stat")
    assert not zombie.exists() or zombie.read_text().rsplit(")", 1)[1].split()[0] != "Z"
    log = server.log.read_text(errors="replace")
    assert re.search(rf"figures refresher \(pid {first[0]}\) stopped \((killed by signal 9"
                     rf"{'' if workers == '1' else '|exited'})\)", log), log
    # the new one computes: a rater's answers reach the stored figures
    owner = rater_client(base, "?PROLIFIC_PID=fig01")
    assert position(owner) is not None
    admin = login(base)
    deadline = time.monotonic() + 60
    while "figures as of" not in admin.get("/admin/").text and time.monotonic() < deadline:
        time.sleep(0.5)
    assert "figures as of" in admin.get("/admin/").text


def test_stale_figures_are_warned_in_the_admin_view(tmp_path, pairs):
    from test_annotate_app import refresh_figures

    app = _with_study(database_url(tmp_path / "r4.sqlite"), pairs, tmp_path)
    app.config["FIGURES_EVERY_S"] = 5.0
    rater = app.test_client()
    enter(rater, "?PROLIFIC_PID=stale01")
    refresh_figures(app)
    admin = app.test_client()
    admin.post("/admin/login", data={"password": "s3cret"})
    assert 'id="figures-stale"' not in admin.get("/admin/").get_data(as_text=True)
    past_checkpoints(rater)                                # answers after the figures
    state = app.extensions["lexgold"]
    with state.sessions() as session:                      # ... which are 10 minutes old
        for row in session.scalars(sql_select(m.StudyFigures)):
            row.computed_at -= timedelta(minutes=10)
        session.commit()
    shown = admin.get("/admin/").get_data(as_text=True)
    assert 'id="figures-stale"' in shown and "refresher" in shown      # before: no warning
    refresh_figures(app)
    assert 'id="figures-stale"' not in admin.get("/admin/").get_data(as_text=True)
    app.extensions["lexgold_engine"].dispose()


# -- 6. the webhook releases only this study's submission ---------------------------------------

SECRET = "whsec-round4-0123456789"


def _hook(client, event: dict | None = None, body: bytes | None = None):
    body = json.dumps(event).encode() if body is None else body
    stamp = str(int(time.time()))
    return client.post("/hooks/prolific", data=body, content_type="application/json",
                       headers={"X-Prolific-Request-Signature": signature(SECRET, stamp, body),
                                "X-Prolific-Request-Timestamp": stamp})


def _holders(app) -> set:
    with app.extensions["lexgold"].sessions() as session:
        now = datetime.now(UTC).replace(tzinfo=None)
        return set(session.scalars(sql_select(m.Rater.external_id).join(
            m.Slot, m.Slot.rater_id == m.Rater.id).where(m.Slot.expires_at > now)))


def test_a_signed_event_of_another_prolific_study_frees_no_place(tmp_path, pairs):
    """Before: a RETURNED event for a submission of another study of the workspace (its secret
    signs them all) freed the place of a rater here with the same participant ID."""
    app = _with_study(database_url(tmp_path / "r4.sqlite"), pairs, tmp_path)
    app.config["PROLIFIC_WEBHOOK_SECRET"] = SECRET
    for query in (VICTIM, "?PROLIFIC_PID=nosession1&STUDY_ID=study01"):
        enter(app.test_client(), query)
    assert _holders(app) == {"victim01", "nosession1"}
    hook = app.test_client()
    event = {"event_type": "submission.status.change", "participant_id": "victim01",
             "resource_id": "otherstudysub", "status": "RETURNED"}
    assert _hook(hook, event).get_json() == {"released": 0}
    assert _hook(hook, {**event, "resource_id": "session01", "study_id": "study02"}) \
        .get_json() == {"released": 0}                 # an event naming another study
    assert _hook(hook, {**event, "participant_id": "nosession1"}).get_json() == \
        {"released": 0}                                # entered without SESSION_ID: unknown
    assert _holders(app) == {"victim01", "nosession1"}
    deep = b'{"event_type": "submission.status.change", "x": ' + b"[" * 8000 + b"]" * 8000 + b"}"
    assert _hook(hook, body=deep).status_code == 400                    # before: 500
    assert _hook(hook, {**event, "resource_id": "session01"}).get_json() == {"released": 1}
    assert _holders(app) == {"nosession1"}
    app.extensions["lexgold_engine"].dispose()


def test_a_webhook_secret_file_others_may_read_is_refused(tmp_path, pairs):
    url = small_study(tmp_path, pairs)
    secret = tmp_path / "hook.secret"
    secret.write_text(SECRET + "\n")
    secret.chmod(0o644)
    done = subprocess.run([LEXGOLD, "serve", url, "--port", "0", "--check",
                           "--prolific-webhook-secret-file", str(secret)],
                          capture_output=True, text=True, check=False,
                          env={**os.environ, "LEXGOLD_ADMIN_PASSWORD": "x" * 12})
    assert done.returncode == 1 and f"chmod 600 {secret}" in done.stderr    # before: served
    assert "Traceback" not in done.stderr


# -- 11. the lower ones --------------------------------------------------------------------------

def test_the_admin_lock_out_counts_an_ipv6_64_as_one_client(tmp_path, pairs):
    """Before: every address of one /64 had its own 10 guesses (2**64 addresses)."""
    app = _with_study(database_url(tmp_path / "r4.sqlite"), pairs, tmp_path)
    codes = []
    for n in range(12):
        client = app.test_client()
        codes.append(client.post("/admin/login", data={"password": f"guess{n}"},
                                 environ_base={"REMOTE_ADDR": f"2001:db8:0:1::{n + 1:x}"})
                     .status_code)
    assert codes[:10] == [401] * 10 and codes[10:] == [429, 429]
    other = app.test_client().post("/admin/login", data={"password": "s3cret"},
                                   environ_base={"REMOTE_ADDR": "2001:db8:0:2::1"})
    assert other.status_code == 302                         # another /64 is another client
    app.extensions["lexgold_engine"].dispose()


def test_a_huge_rater_page_number_is_not_found(tmp_path, pairs):
    app = _with_study(database_url(tmp_path / "r4.sqlite"), pairs, tmp_path)
    admin = app.test_client()
    admin.post("/admin/login", data={"password": "s3cret"})
    assert admin.get(f"/admin/?raters={2 ** 64}").status_code == 404       # before: 500
    assert admin.get("/admin/?raters=-1").status_code == 404
    assert admin.get("/admin/?raters=1").status_code == 200
    app.extensions["lexgold_engine"].dispose()


def test_protocol_texts_read_no_python_attributes(tmp_path, pairs):
    """Before: consent text ``{minutes.__class__.__mro__}`` showed "(<class 'str'>, <class
    'object'>)" on the consent page. Now `study create` refuses it, naming the text, and the
    site fills plain placeholders only."""
    protocol = protocol_variant(tmp_path, "simlex", tranches=2, raters_per_tranche=2)
    body = protocol.read_text(encoding="utf-8")
    protocol.write_text(re.sub(r"^consent_text = .*$",
                               'consent_text = "About {minutes.__class__.__mro__} minutes."',
                               body, count=1, flags=re.M), encoding="utf-8")
    with pytest.raises(InputError, match=r"consent_text.*minutes\.__class__"):
        create_study(protocol, pairs, database_url(tmp_path / "r4.sqlite"))
    from lexgold.annotate.context import fill
    assert fill("{minutes.__class__.__mro__} {minutes}", minutes="8") == \
        "{minutes.__class__.__mro__} 8"


class _Fake(BaseHTTPRequestHandler):
    """Prolific's submissions list whose next page (or a redirect) is on another host."""

    seen: list = []

    def do_GET(self):  # noqa: N802
        type(self).seen.append((self.headers.get("Host"), self.headers.get("Authorization")))
        if self.path.startswith("/redirect"):
            self.send_response(302)
            self.send_header("Location", f"http://localhost:{self.server.server_port}/x")
            self.end_headers()
            return
        body = json.dumps({"results": [], "_links": {"next": {
            "href": f"http://localhost:{self.server.server_port}/steal"}}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_args):
        pass


def test_the_prolific_client_keeps_its_token_on_the_apis_origin():
    """Before: a ``next`` page on another host got the token, and ``http://`` API URLs were
    accepted."""
    with pytest.raises(InputError, match="https://"):
        Client(token="t0ken", base_url="http://api.example.org")
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Fake)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        _Fake.seen = []
        client = Client(token="t0ken", base_url=f"http://127.0.0.1:{server.server_port}",
                        retries=0)
        with pytest.raises(ProlificError, match="another site"):
            client.submissions("study01")
        with pytest.raises(ProlificError, match="another site"):
            client.request("GET", "/redirect")
        assert [host.split(":")[0] for host, _ in _Fake.seen] == ["127.0.0.1", "127.0.0.1"]
    finally:
        server.shutdown()
        server.server_close()
