"""Security probes against the rating site, over HTTP against ``lexgold serve`` where they concern
the server (docs/hardening.md, "Security probes", lists each with its result).

Each test is the probe that found the weakness; it failed before the fix it names.
"""

import concurrent.futures
import re

import httpx
import pytest

from lexgold.study.db import database_url
from lexgold.study.store import create_study
from test_annotate_app import protocol_variant, usf_pair_file
from test_hardening_faults import load_test

pytestmark = pytest.mark.slow            # hardening: servers, faults and fuzzing of the site

CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


@pytest.fixture(scope="module")
def pairs(usf, tmp_path_factory):
    return usf_pair_file(usf, tmp_path_factory.mktemp("security-pairs") / "pairs.csv")


def small_study(tmp_path, pairs, name="security", study=None, **create):
    protocol = protocol_variant(tmp_path, "simlex", **{"tranches": 2, "raters_per_tranche": 2,
                                                       **(study or {})})
    url = database_url(tmp_path / "security.sqlite")
    create_study(protocol, pairs, url, seed=5, completion_code="SEC-OK", name=name, **create)
    return url


@pytest.fixture
def serve(tmp_path):
    """Start ``lexgold serve`` (own process) with extra arguments; stopped at the end."""
    servers = []

    def start(url, *args, password="admin-pw", threads=8):
        server = load_test.Server(url, tmp_path, threads=threads, password=password, args=args)
        servers.append(server)
        return server, server.start()

    yield start
    for server in servers:
        server.stop()


def login_form(client: httpx.Client) -> str:
    return CSRF.search(client.get("/admin/login").text).group(1)


def login(base, password="admin-pw", headers=None) -> httpx.Client:
    client = httpx.Client(base_url=base, timeout=30, headers=headers or {})
    token = login_form(client)
    response = client.post("/admin/login", data={"csrf_token": token, "password": password})
    assert response.status_code == 302, response.text
    return client


# -- 2. admin lock-out: atomic, per real client address --------------------------------------

def test_parallel_password_guesses_check_at_most_the_allowed_number(tmp_path, pairs, serve):
    """Before: the failure count was read before the ~100 ms hash check and written after it,
    so parallel guesses got many more passwords checked than the limit allows."""
    from lexgold.annotate.views_admin import MAX_FAILURES
    _, base = serve(small_study(tmp_path, pairs), threads=8)
    clients = []
    for _ in range(16):
        client = httpx.Client(base_url=base, timeout=60)
        clients.append((client, login_form(client)))

    def guess(k):
        client, token = clients[k % len(clients)]
        return client.post("/admin/login", data={"csrf_token": token,
                                                 "password": f"wrong-{k}"}).status_code

    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        statuses = list(pool.map(guess, range(48)))
    assert set(statuses) <= {401, 429}
    assert statuses.count(401) <= MAX_FAILURES
    assert statuses.count(429) == 48 - statuses.count(401)


def test_behind_a_trusted_proxy_a_strangers_guesses_do_not_lock_out_the_admin(
        tmp_path, pairs, serve):
    """Before: every client behind a reverse proxy had the proxy's address, so a stranger's
    guesses locked the admin out; there was no way to trust the proxy's X-Forwarded-For."""
    from lexgold.annotate.views_admin import MAX_FAILURES
    _, base = serve(small_study(tmp_path, pairs), "--trusted-proxies", "1")
    stranger = httpx.Client(base_url=base, timeout=30,
                            headers={"X-Forwarded-For": "203.0.113.9"})
    token = login_form(stranger)
    statuses = [stranger.post("/admin/login", data={"csrf_token": token, "password": "x"})
                .status_code for _ in range(MAX_FAILURES + 2)]
    assert statuses[:MAX_FAILURES] == [401] * MAX_FAILURES and statuses[-1] == 429
    login(base, headers={"X-Forwarded-For": "198.51.100.7"})       # the admin still gets in


def test_without_trusted_proxies_a_forged_forwarded_for_is_ignored(tmp_path, pairs, serve):
    from lexgold.annotate.views_admin import MAX_FAILURES
    _, base = serve(small_study(tmp_path, pairs))
    client = httpx.Client(base_url=base, timeout=30)
    token = login_form(client)
    statuses = [client.post("/admin/login", data={"csrf_token": token, "password": "x"},
                            headers={"X-Forwarded-For": f"192.0.2.{k}"}).status_code
                for k in range(MAX_FAILURES + 2)]
    assert statuses[-1] == 429                  # a fresh forged address buys no new guesses


# -- 3. admin sessions: revocable, not forgeable from the study file --------------------------

def admin_page(base, cookie) -> int:
    return httpx.get(base + "/admin/", cookies={"session": cookie}, timeout=30).status_code


def test_a_copied_admin_cookie_dies_at_logout(tmp_path, pairs, serve):
    _, base = serve(small_study(tmp_path, pairs))
    client = login(base)
    copied = client.cookies["session"]
    assert admin_page(base, copied) == 200
    token = CSRF.search(client.get("/admin/").text).group(1)
    assert client.post("/admin/logout", data={"csrf_token": token}).status_code == 302
    assert admin_page(base, copied) == 302           # before: still 200 after logout


def test_a_password_change_revokes_admin_sessions(tmp_path, pairs, serve):
    url = small_study(tmp_path, pairs)
    server, base = serve(url)
    copied = login(base).cookies["session"]
    server.stop()
    server.password = "a-new-password"
    base = server.start()
    assert admin_page(base, copied) == 302           # before: 200 (same study key signs it)
    login(base, password="a-new-password")


def test_the_study_file_alone_cannot_forge_an_admin_session(tmp_path, pairs, serve):
    from flask import Flask
    from flask.sessions import SecureCookieSessionInterface
    from sqlalchemy import create_engine, text
    url = small_study(tmp_path, pairs)
    server, base = serve(url)
    login(base)                                       # a live admin session exists
    key = server.secret_key          # even with the key (kept out of the study since round 3)
    engine = create_engine(url)
    with engine.connect() as connection:
        tables = [row[0] for row in connection.execute(
            text("SELECT name FROM sqlite_master WHERE type = 'table'"))]
        stored = [tuple(row) for table in tables for row in connection.execute(
            text(f'SELECT * FROM "{table}"'))]
    engine.dispose()
    forger = Flask("forger")
    forger.secret_key = key
    sign = SecureCookieSessionInterface().get_signing_serializer(forger).dumps
    guesses = [{"admin": True}, {"admin": 1}] + [
        {"admin": value} for row in stored for value in row
        if isinstance(value, str) and re.fullmatch(r"[\w-]{16,}", value)]   # token-like values
    assert {admin_page(base, sign(guess)) for guess in guesses} == {302}


# -- 4. a platform ID alone is not a rater's credential ---------------------------------------

def rater_client(base, query) -> httpx.Client:
    """A browser that entered with ``query``, consented and read the instructions."""
    client = httpx.Client(base_url=base, timeout=30)
    token = CSRF.search(client.get("/" + query).text).group(1)
    client.post("/consent", data={"csrf_token": token, "consent": "yes", "native": "yes"})
    while 'name="page"' in (html := client.get("/task").text):
        number = re.search(r'name="page" value="(\d+)"', html).group(1)
        client.post("/instructions", data={"csrf_token": token, "page": number})
    return client


def test_another_browser_with_the_same_platform_id_does_not_resume_the_rater(
        tmp_path, pairs, serve):
    _, base = serve(small_study(tmp_path, pairs))
    own_link = "?PROLIFIC_PID=victim01&STUDY_ID=study01&SESSION_ID=session01"
    owner = rater_client(base, own_link)
    page = owner.get("/task").text
    position = re.search(r'name="position" value="(\d+)"', page).group(1)
    stranger = httpx.Client(base_url=base, timeout=30)
    shown = stranger.get("/" + own_link).text           # the ID alone: round 3, item 1
    token = CSRF.search(shown).group(1)
    assert 'name="position"' not in shown
    task = stranger.get("/task")                # before: the victim's page, ready to submit
    assert task.status_code == 302 or 'name="position"' not in task.text
    sent = stranger.post("/step", data={"csrf_token": token, "position": position,
                                         "choice": "0"})
    assert sent.status_code == 302 and sent.headers["location"].rstrip("/") in ("", base)
    assert re.search(r'name="position" value="(\d+)"', owner.get("/task").text).group(1) \
        == position                                # the owner's page did not move
    # asked first: confirming moves the rater to this browser; the first one is let go
    assert "another browser" in shown
    assert stranger.post("/resume", data={"csrf_token": token}).status_code == 302
    assert 'name="position"' in stranger.get("/task").text
    assert owner.get("/task").status_code == 302


def test_a_platform_id_with_a_trailing_newline_is_refused(tmp_path, pairs, serve):
    """``$`` matched before a final newline: FUZZ0001%0A made a second rater."""
    _, base = serve(small_study(tmp_path, pairs))
    rater_client(base, "?PROLIFIC_PID=FUZZ0001")
    response = httpx.get(base + "/?PROLIFIC_PID=FUZZ0001%0A", timeout=30)
    assert response.status_code == 400


# -- 5. export file names: any study name -----------------------------------------------------

def test_the_export_of_a_non_latin_study_name_is_served(tmp_path, pairs, serve):
    from urllib.parse import unquote
    name = "מחקר דמיון"
    _, base = serve(small_study(tmp_path, pairs, name=name))
    response = login(base).get("/admin/ratings.csv")          # before: HTTP 500
    assert response.status_code == 200
    disposition = response.headers["content-disposition"]
    encoded = re.search(r"filename\*=UTF-8''(\S+)", disposition).group(1)
    assert unquote(encoded) == f"{name}-ratings.csv"
    assert re.search(r'filename="[ -~]+"', disposition)          # an ASCII fallback too


def test_control_characters_in_a_study_name(tmp_path, pairs, serve):
    from sqlalchemy import create_engine, text
    with pytest.raises(ValueError, match="name"):
        small_study(tmp_path, pairs, name="evil\r\nSet-Cookie: x=1")
    url = small_study(tmp_path, pairs, name="old")
    engine = create_engine(url)                    # a database written by an older version
    with engine.begin() as connection:
        connection.execute(text("UPDATE study SET name = :n"), {"n": "evil\r\nX-Injected: 1"})
    engine.dispose()
    _, base = serve(url)
    response = login(base).get("/admin/ratings.csv")          # before: HTTP 500
    assert response.status_code == 200 and "x-injected" not in response.headers


# -- 6. database faults: reads without the write lock, faults logged, no read-only start ------

def test_a_held_write_lock_stalls_no_page_view_and_a_refused_write_is_logged(
        tmp_path, pairs, serve):
    import sqlite3
    url = small_study(tmp_path, pairs)
    server, base = serve(url, threads=4)
    rater = rater_client(base, "?PROLIFIC_PID=reader1")
    admin = login(base)
    page = rater.get("/task").text
    token = CSRF.search(page).group(1)
    holder = sqlite3.connect(tmp_path / "security.sqlite", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")      # another process holds the write lock (a backup...)
    try:
        views = [(client, path) for _ in range(3) for client, path in (
            (rater, "/task"), (admin, "/admin/"), (rater, "/static/lexgold.css"))]
        with concurrent.futures.ThreadPoolExecutor(len(views)) as pool:
            # before: every view waited for the lock (30 s busy timeout), then 503
            statuses = list(pool.map(lambda view: view[0].get(view[1], timeout=20).status_code,
                                     views))
        assert statuses == [200] * len(views)
        refused = rater.post("/step", data={"csrf_token": token, "position": "0",
                                             "choice": "0"}, timeout=60)
        assert refused.status_code == 503 and "try again" in refused.text
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert re.search(r"database.*POST /step.*locked", server.log.read_text())   # logged
    position = re.compile(r'name="position" value="(\d+)"')
    assert position.search(rater.get("/task").text).group(1) == position.search(page).group(1)


def test_serve_refuses_a_database_it_cannot_write(tmp_path, pairs):
    import os
    import subprocess
    import sys
    from pathlib import Path
    small_study(tmp_path, pairs)
    read_only = f"sqlite:///file:{tmp_path / 'security.sqlite'}?mode=ro&uri=true"
    done = subprocess.run([str(Path(sys.executable).with_name("lexgold")), "serve", read_only,
                           "--port", "0", "--check"], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "LEXGOLD_ADMIN_PASSWORD": "x"})
    assert done.returncode != 0                   # before: started, then 503 on every write
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error:") and "write" in lines[0]


# -- 7. forms over HTTPS: referrer policy and CSRF's strict referrer check together ------------

def referer_sent(policy: str, page_url: str, target_url: str) -> dict:
    """The Referer header a browser sends for a form POST under ``policy`` (W3C Referrer
    Policy, section 3); both URLs here are https."""
    same = page_url.split("/")[:3] == target_url.split("/")[:3]
    origin = "/".join(page_url.split("/")[:3]) + "/"
    full = {"unsafe-url": page_url, "no-referrer-when-downgrade": page_url,
            "same-origin": page_url if same else None, "origin": origin,
            "strict-origin": origin, "origin-when-cross-origin": page_url if same else origin,
            "strict-origin-when-cross-origin": page_url if same else origin,
            "no-referrer": None}[policy]
    return {"Referer": full} if full else {}


@pytest.mark.parametrize("proxied", [False, True])
def test_forms_work_over_https_under_the_sites_own_referrer_policy(tmp_path, pairs, proxied):
    """Before: Referrer-Policy: no-referrer suppressed the Referer that flask-wtf's strict
    HTTPS check requires, so every form failed with 400 over https."""
    from test_annotate_app import make_app
    settings = {"WTF_CSRF_ENABLED": True, "SESSION_COOKIE_SECURE": True}
    if proxied:                                  # TLS ends at a trusted reverse proxy
        settings["TRUSTED_PROXIES"] = 1
    app = make_app(small_study(tmp_path, pairs), **settings)
    client = app.test_client()
    site = "https://rate.example.org"
    over = {"base_url": "http://rate.example.org",
            "headers": {"X-Forwarded-Proto": "https"}} if proxied else {"base_url": site}
    entry = client.get("/?PROLIFIC_PID=https1", **over)
    policy = entry.headers["Referrer-Policy"]
    token = CSRF.search(entry.get_data(as_text=True)).group(1)
    form = {"csrf_token": token, "consent": "yes", "native": "yes"}
    headers = {**over.get("headers", {}),
               **referer_sent(policy, f"{site}/?PROLIFIC_PID=https1", f"{site}/consent")}
    response = client.post("/consent", data=form, base_url=over["base_url"], headers=headers)
    assert response.status_code == 302                       # before: 400
    assert referer_sent(policy, f"{site}/?PROLIFIC_PID=x", "https://other.example/") == {}
    forged = client.post("/consent", data=form, base_url=over["base_url"],
                         headers={**over.get("headers", {}),
                                  "Referer": "https://evil.example/"})
    assert forged.status_code == 400                         # the strict check stays on


# -- 9. lesser: spreadsheet formulas, foreign fields, Content-Type, the password in logs -----

def answer_page(client, html, rating="3"):
    """POST the page shown in ``html`` with every item answered; returns the response."""
    token = CSRF.search(html).group(1)
    position = re.search(r'name="position" value="(\d+)"', html).group(1)
    data = {"csrf_token": token, "position": position, "choice": "0",
            **{f"r{i}": rating for i in set(re.findall(r'name="r(\d+)"', html))}}
    return client.post("/step", data=data)


def test_the_web_export_escapes_spreadsheet_formulas_and_names_its_type_once(
        tmp_path, pairs, serve):
    import io

    import pandas as pd
    from sqlalchemy import create_engine, text
    url = small_study(tmp_path, pairs)
    engine = create_engine(url)
    with engine.begin() as connection:           # words a hostile pair file could carry
        connection.execute(text("UPDATE pair SET word1 = substr('=+-@', 1 + id % 4, 1) "
                                "|| 'cmd|calc' || word1"))
    engine.dispose()
    _, base = serve(url)
    rater = rater_client(base, "?PROLIFIC_PID=formula1")
    for _ in range(5):                    # three checkpoints, then two pages of pairs
        assert answer_page(rater, rater.get("/task").text).status_code == 302
    engine = create_engine(url)
    with engine.begin() as connection:           # round 3, item 10: a rater ID may start with -
        connection.execute(text("UPDATE rater SET public_id = '-' || substr(public_id, 2)"))
        ids = set(connection.execute(text("SELECT public_id FROM rater")).scalars())
    engine.dispose()
    response = login(base).get("/admin/ratings.csv")
    assert response.headers["content-type"] == "text/csv; charset=utf-8"   # before: twice
    frame = pd.read_csv(io.StringIO(response.text), dtype=str, keep_default_na=False)
    rated = frame[frame["kind"] != "checkpoint"]
    assert len(rated) > 0
    for column in frame.columns:                 # OWASP: no cell starts a formula
        assert not frame[column].str.match(r"[=+@\t\r]|-(?![A-Za-z0-9_.-]*$)").any(), column
    assert rated["word1"].str.match(r"'[=+\-@]cmd\|calc").all()
    assert set(frame["rater_id"]) == ids and all(i.startswith("-") for i in ids)


def test_a_checkpoint_page_refuses_rating_fields(tmp_path, pairs, serve):
    _, base = serve(small_study(tmp_path, pairs))
    rater = rater_client(base, "?PROLIFIC_PID=foreign1")
    html = rater.get("/task").text
    assert 'name="choice"' in html               # the tranche opens with a checkpoint
    token = CSRF.search(html).group(1)
    position = re.search(r'name="position" value="(\d+)"', html).group(1)
    response = rater.post("/step", data={"csrf_token": token, "position": position,
                                         "choice": "0", "r1": "6"})
    assert response.status_code == 400           # before: 302, the r1 field ignored
    assert re.search(r'name="position" value="(\d+)"', rater.get("/task").text).group(1) \
        == position


def test_a_random_admin_password_is_not_written_to_the_server_log(tmp_path, pairs):
    import os
    import subprocess
    import sys
    from pathlib import Path
    small_study(tmp_path, pairs)
    env = {k: v for k, v in os.environ.items() if not k.startswith("LEXGOLD_ADMIN_PASSWORD")}
    log = tmp_path / "serve.log"
    with log.open("w") as out:                   # a log file, no terminal (own session)
        done = subprocess.run([str(Path(sys.executable).with_name("lexgold")), "serve",
                               str(tmp_path / "security.sqlite"), "--port", "0", "--check"],
                              stdout=out, stderr=subprocess.STDOUT, env=env, timeout=120,
                              start_new_session=True, stdin=subprocess.DEVNULL)
    text = log.read_text()
    assert done.returncode == 0, text
    assert "admin password" not in text.lower()  # before: "admin password (this run only): ..."
    assert "LEXGOLD_ADMIN_PASSWORD" in text      # says how to enable the admin view


# -- 8. slow clients: idle and half-open connections are closed ------------------------------

def test_a_half_open_connection_is_closed_after_the_channel_timeout(tmp_path, pairs, serve):
    """Before: waitress's 120 s default (no option) let 1,000 half-open connections from one
    client hold every place for two minutes at a time."""
    import socket
    _, base = serve(small_study(tmp_path, pairs), "--channel-timeout", "2")
    host, port = base.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port))) as sock:
        sock.sendall(b"GET / HTTP/1.1\r\nHost: rater\r\n")     # the request never ends
        sock.settimeout(90)
        assert sock.recv(1024) == b""                          # closed by the server


# -- 1. filling every place: accepted entries, rate limits, idle claims, flags ------------------

PROLIFIC = "5f1e2d3c4b5a69788796a5b4"


def test_a_prolific_study_refuses_other_links_and_made_up_ids(tmp_path, pairs, serve):
    """Before: the anonymous link and any made-up PROLIFIC_PID entered a Prolific study."""
    url = small_study(tmp_path, pairs, entries={"platforms": ["prolific"], "strict_ids": True})
    _, base = serve(url)
    for query in ("", "?workerId=A1B2C3D4E5F6G7&hitId=H&assignmentId=A"):
        response = httpx.get(base + "/" + query, timeout=30)
        assert response.status_code == 403 and "not valid for this study" in response.text
    # round 3: a missing or malformed parameter is named (400), the same for each of the three;
    # before, a malformed STUDY_ID got the generic 403 and a missing one was accepted
    for query, wrong in (("?PROLIFIC_PID=bot0001", "PROLIFIC_PID"),
                         (f"?PROLIFIC_PID={PROLIFIC}&STUDY_ID=x&SESSION_ID={PROLIFIC}",
                          "STUDY_ID"),
                         (f"?PROLIFIC_PID={PROLIFIC}&SESSION_ID={PROLIFIC}", "STUDY_ID"),
                         (f"?PROLIFIC_PID={PROLIFIC}&STUDY_ID={PROLIFIC}&SESSION_ID=y",
                          "SESSION_ID"),
                         (f"?PROLIFIC_PID={PROLIFIC}&STUDY_ID={PROLIFIC}", "SESSION_ID")):
        response = httpx.get(base + "/" + query, timeout=30)
        assert response.status_code == 400, query
        assert f"not complete: {wrong} holds no valid ID" in response.text, query
    client = httpx.Client(base_url=base, timeout=30)        # no entry page: POST directly
    token = CSRF.search(client.get("/admin/login").text).group(1)
    response = client.post("/consent", data={"csrf_token": token, "consent": "yes",
                                             "native": "yes"})
    assert response.status_code == 403
    ok = f"?PROLIFIC_PID={PROLIFIC}&STUDY_ID={PROLIFIC[::-1]}&SESSION_ID={PROLIFIC}"
    assert 'name="position"' in rater_client(base, ok).get("/task").text


def test_new_raters_per_client_address_are_rate_limited(tmp_path, pairs, serve):
    """Before: one client took all 30 places of a small study in 1.1 s (155 requests)."""
    url = small_study(tmp_path, pairs, study={"raters_per_tranche": 10})
    _, base = serve(url, "--rate-limit", "3", "--trusted-proxies", "1")
    bot = {"X-Forwarded-For": "203.0.113.50"}
    statuses = []
    for k in range(5):
        client = httpx.Client(base_url=base, timeout=30, headers=bot)
        token = CSRF.search(client.get(f"/?PROLIFIC_PID=bot{k}").text).group(1)
        statuses.append(client.post("/consent", data={"csrf_token": token, "consent": "yes",
                                                      "native": "yes"}).status_code)
    assert statuses == [302] * 3 + [429] * 2
    other = httpx.Client(base_url=base, timeout=30, headers={"X-Forwarded-For": "198.51.100.9"})
    token = CSRF.search(other.get("/?PROLIFIC_PID=person1").text).group(1)
    assert other.post("/consent", data={"csrf_token": token, "consent": "yes",
                                        "native": "yes"}).status_code == 302


def study_with_keys(tmp_path, pairs, keys: str, **variant):
    """A SimLex study whose protocol sets extra ``[study]`` keys (TOML lines)."""
    protocol = protocol_variant(tmp_path, "simlex", **{"tranches": 2, "raters_per_tranche": 2,
                                                       **variant})
    text = protocol.read_text(encoding="utf-8").replace("[study]\n", f"[study]\n{keys}\n", 1)
    protocol.write_text(text, encoding="utf-8")
    url = database_url(tmp_path / "security.sqlite")
    create_study(protocol, pairs, url, seed=5, completion_code="SEC-OK")
    return url


def test_a_claim_with_no_answer_is_released_after_the_first_answer_timeout(
        tmp_path, pairs, serve):
    """Before: each claim held a place for claim_timeout_s (3,600 s) without a single answer."""
    import time
    url = study_with_keys(tmp_path, pairs, "first_answer_timeout_s = 2", tranches=1,
                          raters_per_tranche=1)
    _, base = serve(url)
    squatter = rater_client(base, "?PROLIFIC_PID=squatter")
    assert 'name="position"' in squatter.get("/task").text       # holds the only place
    waiting = rater_client(base, "?PROLIFIC_PID=waiting")
    assert "all the participants" in waiting.get("/task").text
    time.sleep(3)                                                 # no answer meanwhile
    assert 'name="position"' in waiting.get("/task").text        # the place was released
    assert squatter.get("/task").status_code == 409


def test_the_export_marks_unconfirmed_platform_ids_and_too_fast_pages(tmp_path, pairs, serve):
    """Before: nothing told a bot's ratings from a person's: made-up IDs finished with
    constant ratings in ~25 POSTs and got the completion code."""
    import io
    import os
    import subprocess
    import sys
    import time
    from pathlib import Path

    import pandas as pd
    url = study_with_keys(tmp_path, pairs, "min_seconds_per_pair = 0.5")
    _, base = serve(url)
    bot = rater_client(base, "?PROLIFIC_PID=madeup1")
    person = rater_client(base, "?PROLIFIC_PID=realperson")
    for _ in range(5):                    # three checkpoints, then two pages of pairs
        assert answer_page(bot, bot.get("/task").text).status_code == 302
    html = person.get("/task").text
    assert 'name="choice"' in html                            # a checkpoint: one question
    time.sleep(1.0)                                           # a person reads it
    assert answer_page(person, html).status_code == 302
    listed = tmp_path / "prolific_export.csv"
    pd.DataFrame({"Participant id": ["realperson", "never-came"],
                  "Status": ["AWAITING REVIEW", "RETURNED"]}).to_csv(listed, index=False)
    done = subprocess.run([str(Path(sys.executable).with_name("lexgold")), "study", "confirm",
                           str(tmp_path / "security.sqlite"), "--participants", str(listed)],
                          capture_output=True, text=True, env=os.environ, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "1 raters confirmed; 1 IDs of the list never entered" in done.stdout
    frame = pd.read_csv(io.StringIO(login(base).get("/admin/ratings.csv").text))
    by_rater = frame.groupby("rater_id")[["platform_confirmed", "fast_pages"]].first()
    assert sorted(by_rater["platform_confirmed"]) == [0, 1]
    confirmed = by_rater[by_rater["platform_confirmed"] == 1].iloc[0]
    unconfirmed = by_rater[by_rater["platform_confirmed"] == 0].iloc[0]
    # the bot's two group pages (6-7 pairs: 3 s or more) at least; its checkpoint too unless
    # the machine was slow
    assert confirmed["fast_pages"] == 0 and unconfirmed["fast_pages"] >= 2
