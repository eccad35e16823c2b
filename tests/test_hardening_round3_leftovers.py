"""Security round 3, item 10's leftovers (docs/hardening.md, "Items 8, 9, 10"): a study on a
read-only filesystem, raters of a study made before browser binding after ``study upgrade``,
and the admin view's agreement warnings. Each test failed before its fix."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from test_hardening_security import answer_page, pairs, rater_client, small_study  # noqa: F401

from lexgold.study.db import database_url, sqlite_write_problem

pytestmark = pytest.mark.slow            # hardening: servers, faults and fuzzing of the site

LEXGOLD = str(Path(sys.executable).with_name("lexgold"))


# -- a study this user cannot write --------------------------------------------------------------

def as_unprivileged(command: list[str]) -> list[str]:
    """``command`` run so that file permissions apply to it.

    The tests run as root, which ignores them through the capabilities CAP_DAC_OVERRIDE and
    CAP_DAC_READ_SEARCH. ``setpriv`` (util-linux, in Debian's essential set) drops both from
    the bounding set, so the command stays root (it can still run this Python, which lives in
    root's 0700 home) but reads and writes as a plain owner: a file or folder without a ``w``
    bit is unwritable to it, as on a read-only mount or for a service user without permission.
    A mode=ro SQLite URI was not used: it reproduces the error but not the path a user takes
    (a plain path to a study they cannot write). As another user, chmod alone is enough."""
    if os.geteuid() != 0:
        return command
    setpriv = shutil.which("setpriv")
    assert setpriv, "setpriv (util-linux) is needed to drop root's file-permission override"
    drop = "-dac_override,-dac_read_search"
    return [setpriv, f"--bounding-set={drop}", f"--inh-caps={drop}", *command]


@pytest.fixture(params=["folder", "file"])
def unwritable_study(request, tmp_path, pairs):
    """A study with a rater's answers, then its folder and file (or the file only) made
    read-only; permissions restored afterwards."""
    url = small_study(tmp_path, pairs)
    from test_annotate_app import enter, make_app, page
    app = make_app(url)
    client = app.test_client()
    enter(client)
    for _ in range(5):      # the opening checkpoints, the noun checkpoint, then groups
        _, position, ids, checkpoint = page(client)
        data = {"choice": 0} if checkpoint else {f"r{i}": 2 for i in ids}
        client.post("/step", data={"position": position, **data})
    from test_annotate_app import answers
    expected = answers(app)
    app.extensions["lexgold_engine"].dispose()
    study = tmp_path / "security.sqlite"
    from lexgold.study.db import checkpoint_sqlite
    checkpoint_sqlite(url)
    for side in ("-wal", "-shm"):                  # as after `lexgold serve` stops cleanly
        Path(f"{study}{side}").unlink(missing_ok=True)
    study.chmod(0o444)
    if request.param == "folder":
        tmp_path.chmod(0o555)
    yield study, request.param, expected
    tmp_path.chmod(0o755)
    study.chmod(0o644)


def run_lexgold(*args, cwd=None):
    env = {**os.environ, "LEXGOLD_ADMIN_PASSWORD": "x" * 12}
    return subprocess.run(as_unprivileged([LEXGOLD, *map(str, args)]), capture_output=True,
                          text=True, timeout=120, env=env, cwd=cwd, check=False)


def test_a_study_it_cannot_write_is_read_by_export_and_report_and_named_by_serve(
        unwritable_study, tmp_path_factory):
    """Before: `serve`, `study export` and `study report` all said "not a lexgold study
    database (attempt to write a readonly database)"."""
    study, kind, expected = unwritable_study
    out = tmp_path_factory.mktemp("export-out")
    out.chmod(0o777)
    served = run_lexgold("serve", study, "--port", "0", "--check")
    lines = served.stderr.strip().splitlines()
    assert served.returncode == 1 and len(lines) == 1, served.stderr
    where = f"the folder {study.parent}" if kind == "folder" else str(study)
    assert lines[0] == (f"Error: {study}: cannot write to the study database (permission "
                        f"denied on {where}): attempt to write a readonly database")
    assert "not a lexgold study database" not in served.stderr
    exported = run_lexgold("study", "export", study, "--out", out / "ratings.csv")
    assert exported.returncode == 0, exported.stderr
    assert len(pd.read_csv(out / "ratings.csv")) == 0       # one rater, unfinished
    everyone = run_lexgold("study", "export", study, "--out", out / "all.csv", "--all-raters")
    assert everyone.returncode == 0, everyone.stderr
    exported = pd.read_csv(out / "all.csv", keep_default_na=False, dtype={"rater_id": str})
    assert len(expected) > 10 and len(exported) == len(expected)
    assert exported["rating"].tolist() == expected["rating"].tolist()
    reported = run_lexgold("study", "report", study, "--json")
    assert reported.returncode == 0, reported.stderr
    assert json.loads(reported.stdout)["completion_code"] == "SEC-OK"
    assert sorted(p.name for p in study.parent.iterdir() if p.name.startswith(study.name)) \
        == sorted([study.name] + ([] if kind == "folder" else
                                  [f"{study.name}-shm", f"{study.name}-wal"]))


def test_a_read_only_file_system_is_named(tmp_path, monkeypatch):
    study = tmp_path / "study.sqlite"
    study.write_bytes(b"")
    assert sqlite_write_problem(study) is None

    class ReadOnly:
        f_flag = os.ST_RDONLY

    monkeypatch.setattr(os, "statvfs", lambda _path: ReadOnly())
    assert sqlite_write_problem(study) == f"read-only file system at {tmp_path}"
    assert database_url(study).startswith("sqlite:///")


# -- raters of a study made before browser binding (0005) and the key's move (0010) ---------------

def old_cookie(key: str, session: dict) -> str:
    """A session cookie as lexgold signed them before revision 0010: Flask's own cookie
    session, signed with the key kept in ``study.secret_key``."""
    from flask import Flask
    from flask.sessions import SecureCookieSessionInterface

    app = Flask("before-0010")
    app.secret_key = key
    return SecureCookieSessionInterface().get_signing_serializer(app).dumps(
        {**session, "_permanent": True})


def serve_without_key_setting(url: str, workdir: Path):
    """``lexgold serve`` with no key in its environment (it reads STUDY.key); (process, base)."""
    import re
    import time
    env = {k: v for k, v in os.environ.items() if not k.startswith("LEXGOLD_SECRET")}
    env["LEXGOLD_ADMIN_PASSWORD"] = "admin-pw-1234"
    log = workdir / "serve.log"
    with log.open("wb") as out:
        process = subprocess.Popen([LEXGOLD, "serve", url, "--port", "0", "--rate-limit", "0"],
                                   stdout=out, stderr=subprocess.STDOUT, env=env)
    deadline = time.monotonic() + 300            # returns once served: long only when loaded
    while time.monotonic() < deadline:
        found = re.search(r"at (http://127\.0\.0\.1:\d+)/", log.read_text())
        if found:
            return process, found.group(1), log
        assert process.poll() is None, log.read_text()
        time.sleep(0.05)
    process.terminate()
    raise AssertionError(log.read_text())


def browser_with(base: str, cookie: str):
    """A browser holding ``cookie`` as the site's own (host-only, so the site replaces it)."""
    import httpx
    client = httpx.Client(base_url=base, timeout=30)
    client.cookies.set("session", cookie, domain=base.split("//")[1].split(":")[0], path="/")
    return client


@pytest.fixture
def served(tmp_path):
    processes = []

    def start(url):
        process, base, log = serve_without_key_setting(url, tmp_path)
        processes.append(process)
        return base, log

    yield start
    for process in processes:
        process.terminate()
        process.wait(10)


@pytest.mark.parametrize("made_at", ["0004", "0009"])
def test_raters_of_a_study_made_before_binding_continue_after_study_upgrade(
        made_at, tmp_path, pairs, served):
    """Before: `study upgrade` dropped the key the study held (0010) and a rater's cookie
    carried no browser secret (before 0005), so raters halfway through started over.

    The study is made at head, answered halfway by one anonymous rater and taken back to
    ``made_at`` (0004: before browser binding; 0009: bound, the key still in the study); the
    rater's cookie is then what that lexgold signed with ``study.secret_key``."""

    from click.testing import CliRunner
    from flask.sessions import SecureCookieSessionInterface
    from sqlalchemy import text
    from test_annotate_app import enter, make_app, page

    from lexgold.study.db import downgrade, make_engine
    from lexgold.cli import cli

    url = small_study(tmp_path, pairs)
    app = make_app(url)
    browser = app.test_client()
    enter(browser)
    for _ in range(4):
        _, position, ids, checkpoint = page(browser)
        data = {"choice": 0} if checkpoint else {f"r{i}": 4 for i in ids}
        assert browser.post("/step", data={"position": position, **data}).status_code == 302
    reached = page(browser)[1]
    cookie = browser.get_cookie("session").value
    stored = SecureCookieSessionInterface().get_signing_serializer(app).loads(cookie)
    app.extensions["lexgold_engine"].dispose()
    engine = make_engine(url)
    downgrade(engine, made_at)
    with engine.connect() as connection:
        old_key = connection.execute(text("SELECT secret_key FROM study")).scalar_one()
        answered = connection.execute(text("SELECT count(*) FROM answer")).scalar_one()
    engine.dispose()
    kept = {"rater": stored["rater"]} if made_at == "0004" else \
        {"rater": stored["rater"], "browser": stored["browser"]}
    study = tmp_path / "security.sqlite"
    upgraded = CliRunner(env={"LEXGOLD_SECRET_KEY": None, "LEXGOLD_SECRET_KEY_FILE": None}) \
        .invoke(cli, ["study", "upgrade", str(study)])
    assert upgraded.exit_code == 0, upgraded.output
    key_file = Path(f"{study}.key")
    assert f"session-signing key: {key_file} (new, readable by you only); the key the study " \
           "held is kept in it until" in upgraded.output
    assert oct(key_file.stat().st_mode & 0o777) == "0o600"
    assert f"legacy {old_key} until " in key_file.read_text()
    assert not key_file.read_text().startswith(old_key)        # new cookies: a new key

    base, log = served(url)
    assert "sessions signed with the key the study held" in log.read_text()
    rater = browser_with(base, old_cookie(old_key, kept))
    html = rater.get("/task").text
    assert f'name="position" value="{reached}"' in html, html[:400]   # before: sent to consent
    assert answer_page(rater, html).status_code == 302
    assert f'name="position" value="{reached + 1}"' in rater.get("/task").text
    engine = make_engine(url)
    with engine.connect() as connection:
        raters = connection.execute(text("SELECT public_id, browser_sha256 FROM rater")).all()
        now_answered = connection.execute(text("SELECT count(*) FROM answer")).scalar_one()
    engine.dispose()
    assert [r[0] for r in raters] == [stored["rater"]] and raters[0][1]     # bound, no new one
    assert now_answered > answered
    # the old cookie again, from another browser (a copy): the rater is bound, it gets nothing
    copy = browser_with(base, old_cookie(old_key, {"rater": stored["rater"]}))
    assert copy.get("/task").status_code == 302
    # the old key with a forged "resume" (anyone with an old copy of the database has the
    # key) moves no one: only the rater of an unbound row, or with its secret, is read
    from itsdangerous import URLSafeTimedSerializer
    raw = "f" * 40
    forger = browser_with(base, old_cookie(old_key, {"resume": stored["rater"],
                                                     "csrf_token": raw}))
    token = URLSafeTimedSerializer(old_key, salt="wtf-csrf-token").dumps(raw)
    assert forger.post("/resume", data={"csrf_token": token}).status_code in (302, 400)
    assert 'name="position"' not in forger.get("/task", follow_redirects=True).text
    assert f'name="position" value="{reached + 1}"' in rater.get("/task").text


def test_the_old_key_is_read_only_until_its_date_and_only_for_unbound_raters(tmp_path, pairs):
    """In the app: a cookie signed with the old key finds an unbound rater (binding it) while
    ``LEGACY_SECRET_UNTIL`` is ahead, never after it, and never a bound rater without its
    secret."""
    from datetime import datetime, timedelta

    from sqlalchemy import text
    from test_annotate_app import enter, make_app

    from lexgold.study.db import make_engine

    url = small_study(tmp_path, pairs)
    enter(make_app(url).test_client())
    engine = make_engine(url)
    with engine.begin() as connection:
        public_id = connection.execute(text("SELECT public_id FROM rater")).scalar_one()
        connection.execute(text("UPDATE rater SET browser_sha256 = ''"))     # as before 0005
    old = "o" * 64
    cookie = old_cookie(old, {"rater": public_id})
    for until, found in ((datetime(2000, 1, 1), False), (datetime(2999, 1, 1), True)):
        client = make_app(url, LEGACY_SECRET_KEY=old, LEGACY_SECRET_UNTIL=until).test_client()
        client.set_cookie("session", cookie)
        assert (client.get("/task").status_code == 200) is found
    with engine.connect() as connection:
        assert connection.execute(text("SELECT browser_sha256 FROM rater")).scalar_one()
    client = make_app(url, LEGACY_SECRET_KEY=old,
                      LEGACY_SECRET_UNTIL=datetime.now() + timedelta(days=1)).test_client()
    client.set_cookie("session", cookie)                      # bound now: the cookie is spent
    assert client.get("/task").status_code == 302
    engine.dispose()


def test_key_files_keep_their_key_and_the_old_one_with_its_date(tmp_path):
    from lexgold.study.secret import (
        keep_legacy_key,
        read_key_file,
        read_legacy_key,
        write_key_file,
    )

    path = write_key_file(tmp_path / "study.sqlite.key")
    key = read_key_file(path)
    assert read_legacy_key(path) is None
    from datetime import datetime
    until = keep_legacy_key(path, "o" * 64, now=datetime(2026, 3, 1, 12, 0, 30))
    assert until == datetime(2026, 3, 15, 12, 0, 30)
    assert read_key_file(path) == key                       # its own key is kept
    assert read_legacy_key(path) == ("o" * 64, until)
    assert path.read_text() == f"{key}\nlegacy {'o' * 64} until 2026-03-15T12:00:30Z\n"
    assert oct(path.stat().st_mode & 0o777) == "0o600"


# -- the admin view's agreement warnings ---------------------------------------------------------

def test_admin_reloads_log_no_agreement_warning_and_show_the_caveat(tmp_path, pairs):
    """Before: `warnings.catch_warnings` (process-wide filters) in two admin requests at once
    restored each other's filters, so `AgreementWarning: IAA-1 is undefined ...` reached the
    server's log (1-3 times in 30 reloads from 6 threads; none when reloads came one at a
    time), and the page never said why IAA-1 and IAA-2 were blank.

    Two raters with constant ratings per tranche: both figures are undefined (a tranche of
    one rater computes none: issue 47)."""
    import concurrent.futures

    from test_annotate_app import enter, make_app, rate_all, refresh_figures
    from test_hardening_faults import load_test
    from test_hardening_security import login

    url = small_study(tmp_path, pairs)
    app = make_app(url)
    for _ in range(4):
        client = app.test_client()
        enter(client)
        rate_all(client, rating=lambda _item: 3)
    refresh_figures(app)     # as serve's refresher does (in its own process): the page shows them
    app.extensions["lexgold_engine"].dispose()
    server = load_test.Server(url, tmp_path, threads=8, password="admin-pw")
    base = server.start()
    try:
        admin = login(base)
        pages = [admin.get("/admin/") for _ in range(3)]
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            pages += list(pool.map(lambda _k: admin.get("/admin/"), range(24)))
    finally:
        server.stop()
    assert {page.status_code for page in pages} == {200}
    assert all("tranche 1: IAA-1 is undefined: no rater pair with a defined correlation"
               in page.text for page in pages)
    log = server.log.read_text()
    assert "Warning" not in log, log[-2000:]
