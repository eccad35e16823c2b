"""The deployment of deploy/ on loopback: nginx terminating HTTPS with a self-signed certificate,
``lexgold serve --trusted-proxies 1 --secure-cookies`` behind it, one rater in Chromium.

deploy/README.md describes the same set-up on a real host.
"""

import os
import re
import shutil
import socket
import ssl
import subprocess
import threading
import time
from pathlib import Path

import httpx
import pytest
from sqlalchemy import create_engine, select

from lexgold.study import models as m
from lexgold.study.db import database_url
from lexgold.study.store import create_study
from test_annotate_app import protocol_variant, usf_pair_file
from test_annotate_browser import (CHROMIUM, browser, rate_slider_page, start,  # noqa: F401
                                   submit_and_wait)
from test_hardening_faults import load_test

CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
DEPLOY = Path(__file__).resolve().parents[1] / "deploy"
TEMPLATE, SHARED = DEPLOY / "nginx-lexgold.conf", DEPLOY / "nginx-lexgold-http.conf"
#: nginx.conf's events {} value that deploy/README.md (step 6) asks for
WORKER_CONNECTIONS = 4096
NGINX = shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx",) if Path(p).exists()),
                                      None)

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not CHROMIUM.exists(), reason="needs /usr/bin/chromium")]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def nginx_config(tmp_path: Path, upstream: str, https_port: int, http_port: int) -> Path:
    """The deploy/ template inside a minimal nginx.conf whose files all live in ``tmp_path``."""
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    site = TEMPLATE.read_text()
    for name, value in {"SERVER_NAME": "localhost 127.0.0.1", "UPSTREAM": upstream,
                        "HTTPS_PORT": str(https_port), "HTTP_PORT": str(http_port),
                        "CERT": str(cert), "KEY": str(key)}.items():
        site = site.replace(f"@{name}@", value)
    for port in (https_port, http_port):                     # loopback only
        site = site.replace(f"listen {port}", f"listen 127.0.0.1:{port}")
    assert not re.search(r"^[^#]*@[A-Z_]+@", site, re.M)       # every placeholder filled
    temp = tmp_path / "nginx-temp"
    temp.mkdir()
    paths = "\n".join(f"    {kind}_temp_path {temp / kind};"
                      for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    conf = tmp_path / "nginx.conf"
    conf.write_text(f"""{"user root;" if os.geteuid() == 0 else ""}
worker_processes 1;
pid {tmp_path / "nginx.pid"};
error_log {tmp_path / "nginx-error.log"} warn;
worker_rlimit_nofile {2 * WORKER_CONNECTIONS};
events {{ worker_connections {WORKER_CONNECTIONS}; }}
http {{
    access_log {tmp_path / "nginx-access.log"};
{paths}
{SHARED.read_text()}
{site}
}}
""")
    return conf


@pytest.fixture
def nginx():
    if NGINX is None:
        if os.environ.get("CI"):
            pytest.fail("nginx is not installed: scripts/setup.sh --test installs it")
        pytest.skip("needs nginx (Debian package nginx)")
    processes = []

    def run(conf: Path, https_port: int):
        process = subprocess.Popen([NGINX, "-e", str(conf.parent / "nginx-error.log"),
                                    "-c", str(conf), "-g", "daemon off;"],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        processes.append(process)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise RuntimeError(f"nginx did not start: {process.stderr.read().decode()}")
            try:
                socket.create_connection(("127.0.0.1", https_port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("nginx did not open its port")

    yield run
    for process in processes:
        process.terminate()
        process.wait(10)


def test_rater_over_https_behind_nginx(browser, nginx, tmp_path, usf):
    pairs = usf_pair_file(usf, tmp_path / "pairs.csv")
    protocol = protocol_variant(tmp_path, "simlex", tranches=2, raters_per_tranche=2)
    url = database_url(tmp_path / "deploy.sqlite")
    create_study(protocol, pairs, url, completion_code="HTTPS-DONE")
    server = load_test.Server(url, tmp_path, threads=4, password="admin-pw",
                              args=("--trusted-proxies", "1", "--secure-cookies"))
    upstream = server.start().removeprefix("http://")
    try:
        https_port, http_port = free_port(), free_port()
        nginx(nginx_config(tmp_path, upstream, https_port, http_port), https_port)
        site = f"https://localhost:{https_port}/"

        plain = httpx.get(f"http://127.0.0.1:{http_port}/?PROLIFIC_PID=p1", timeout=30)
        assert plain.status_code in (301, 308)
        assert plain.headers["location"] == f"https://127.0.0.1:{https_port}/?PROLIFIC_PID=p1"

        # certificate errors are ignored for this context only: it trusts the test certificate
        context = browser.new_context(ignore_https_errors=True)
        try:
            page = context.new_page()
            start(page, site + "?PROLIFIC_PID=httpsrater1&STUDY_ID=s1&SESSION_ID=x1")
            cookies = [c for c in context.cookies() if c["domain"].endswith("localhost")]
            assert cookies
            assert all(c["secure"] and c["httpOnly"] for c in cookies), cookies
            chosen, pages = {}, 0
            while pages < 3 and not page.locator("#message").count():
                if page.locator("input[name=choice]").count():      # a checkpoint question
                    page.locator("input[name=choice]").first.check()
                    submit_and_wait(page)
                    continue
                chosen.update(rate_slider_page(page, lambda item, k: ((item + k) % 7,
                                                                      "keyboard"), "HTTPS-DONE"))
                pages += 1
                assert page.url.startswith(site)           # the app's redirects stay on https
        finally:
            context.close()
        assert pages == 3 and chosen
        engine = create_engine(url)
        try:
            with engine.connect() as connection:
                stored = dict(connection.execute(select(m.Answer.item_id, m.Answer.rating)).all())
        finally:
            engine.dispose()
        assert stored == chosen

        # nginx overwrites X-Forwarded-For with the real address: forged ones buy no guesses
        from lexgold.annotate.views_admin import MAX_FAILURES
        # the app sees https (X-Forwarded-Proto), so its CSRF check wants a same-site Referer
        trust = ssl.create_default_context(cafile=tmp_path / "cert.pem")
        statuses = []
        for k in range(MAX_FAILURES + 2):
            with httpx.Client(base_url=site, verify=trust, timeout=30,
                              headers={"X-Forwarded-For": f"192.0.2.{k}",
                                       "Referer": f"{site}admin/login"}) as client:
                token = CSRF.search(client.get("/admin/login").text).group(1)
                statuses.append(client.post("/admin/login", data={
                    "csrf_token": token, "password": "wrong"}).status_code)
        assert statuses[:MAX_FAILURES] == [401] * MAX_FAILURES and statuses[-1] == 429
    finally:
        server.stop()


def test_deploy_readme_asks_for_the_tested_nginx_settings():
    readme = (DEPLOY / "README.md").read_text()
    assert f"worker_connections {WORKER_CONNECTIONS}" in readme
    assert "nginx-lexgold-http.conf" in readme and "conf.d" in readme
    assert "limit_conn_zone" not in TEMPLATE.read_text()         # shared part only in SHARED


def _trickle(port: int, stop: threading.Event, counts: dict, n: int = 300) -> None:
    """Keep ``n`` slowloris connections from 127.0.0.2 open: TLS, then one header line a second,
    never the blank line that ends the headers; reopen each one nginx closes."""
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    open_ = []
    while not stop.is_set():
        while len(open_) < n and not stop.is_set():
            try:
                raw = socket.create_connection(("127.0.0.1", port), timeout=2,
                                               source_address=("127.0.0.2", 0))
                sock = context.wrap_socket(raw, server_hostname="localhost")
                sock.sendall(b"GET / HTTP/1.1\r\nHost: localhost\r\n")
                open_.append(sock)
                counts["opened"] += 1
            except OSError:
                counts["refused"] += 1
                break
        for sock in list(open_):
            try:
                sock.sendall(b"X-a: b\r\n")
            except OSError:
                sock.close()
                open_.remove(sock)
                counts["dropped"] += 1
        counts["peak"] = max(counts["peak"], len(open_))
        stop.wait(1)
    for sock in open_:
        sock.close()


def test_slowloris_behind_nginx_does_not_block_a_rater(nginx, tmp_path, usf):
    """Round 3, item 7: 300 trickling connections at nginx while a rater loads pages."""
    pairs = usf_pair_file(usf, tmp_path / "pairs.csv")
    protocol = protocol_variant(tmp_path, "simlex", tranches=2, raters_per_tranche=2)
    url = database_url(tmp_path / "slow.sqlite")
    create_study(protocol, pairs, url)
    server = load_test.Server(url, tmp_path, threads=4, args=("--trusted-proxies", "1"))
    upstream = server.start().removeprefix("http://")
    stop, counts = threading.Event(), {"opened": 0, "refused": 0, "dropped": 0, "peak": 0}
    try:
        https_port = free_port()
        nginx(nginx_config(tmp_path, upstream, https_port, free_port()), https_port)
        site = f"https://localhost:{https_port}/"
        attacker = threading.Thread(target=_trickle, args=(https_port, stop, counts),
                                    daemon=True)
        attacker.start()
        deadline = time.monotonic() + 60
        while counts["peak"] < 300 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert counts["peak"] == 300
        loads = []
        trust = ssl.create_default_context(cafile=tmp_path / "cert.pem")
        for k in range(12):                        # over two of nginx's header timeouts
            with httpx.Client(base_url=site, verify=trust, timeout=60) as client:
                start_s = time.monotonic()
                entry = client.get(f"/?PROLIFIC_PID=real{k}")
                css = client.get("/static/lexgold.css")
                loads.append((entry.status_code, css.status_code, time.monotonic() - start_s))
            time.sleep(1)
        stop.set()
        attacker.join(30)
    finally:
        stop.set()
        server.stop()
    print(f"\nslowloris: {counts}; page loads (status, css, s): {loads}")
    assert counts["dropped"] >= 300                      # nginx drops trickling connections
    assert [(e, c) for e, c, _ in loads] == [(200, 200)] * 12
    # Held out, a rater would wait for a trickling connection to be dropped (timing, which a
    # loaded machine blurs); nginx says so itself when its connections run out.
    errors = (tmp_path / "nginx-error.log").read_text(errors="replace")
    assert "worker_connections are not enough" not in errors, errors[-2000:]
