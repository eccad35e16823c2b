"""``lexgold serve``'s start-up, as a library: checks, waitress or gunicorn workers, the
figures refresher child, the admin password and session key, a clean stop.

:func:`serve_study` is the command's logic; :mod:`lexgold.annotate.cli` keeps the click options
and the help. Heavy modules (waitress, werkzeug, Flask, SQLAlchemy) are imported when a server
starts, not when the command line starts (tests/test_startup.py).
"""

from __future__ import annotations

import errno
import hashlib
import ipaddress
import os
import secrets
import signal
import socket
import threading
import urllib.request
from pathlib import Path

import click


def shown(study) -> str:
    """A study as printed: its path, or its URL without the password."""
    from lexgold.study.db import shown as shown_study

    return shown_study(study)


def serve_study(study_db: str | None, *, host: str = "127.0.0.1", port: int = 8000,
                threads: int = 8, workers: int = 1, connection_limit: int = 1000,
                channel_timeout: int = 30, rate_limit: int = 30, trusted_proxies: int = 0,
                secure_cookies: bool | None = None, check: bool = False,
                figures_every: float = 5.0, secret_key_file: str | None = None,
                prolific_webhook_secret_file: str | None = None) -> None:
    """Serve the study ``study_db`` (None or ``env:``: LEXGOLD_DATABASE_URL) until a stop
    signal; with ``check``, until one fetch of the entry page. The options are those of
    ``lexgold serve`` (its help says what each does); messages go to the terminal as click
    output, and a bad study, key or check is a :class:`click.ClickException`."""
    from waitress.server import create_server
    from werkzeug.security import generate_password_hash

    from lexgold.annotate.app import MAX_REQUEST_BYTES, create_app
    from lexgold.study.db import check_writable, database_url, open_study
    from lexgold.prolific.webhook import read_secret

    study_db = study_from_environment(study_db)
    engine = open_study(study_db)           # one-line error for a missing / foreign database
    try:
        check_writable(engine)              # ... and for one it cannot write (read-only)
    finally:
        engine.dispose()
    hook_secret = read_secret(prolific_webhook_secret_file)      # before anything starts
    ensure_port_free(host, port)            # one line naming the port, not waitress' traceback
    db_url = database_url(study_db)
    _warn_if_readable(db_url)
    loopback = host in ("127.0.0.1", "localhost", "::1")
    if not _is_loopback(host) and trusted_proxies == 0:      # slowloris reaches the app port
        click.echo(PUBLIC_WITHOUT_PROXY.format(host=host), err=True)
    secret_key = _secret_key(study_db, secret_key_file,
                             temporary_ok=check or (loopback and not trusted_proxies))
    password_hash, password_id = os.environ.get("LEXGOLD_ADMIN_PASSWORD_HASH"), None
    if not password_hash:
        password = os.environ.get("LEXGOLD_ADMIN_PASSWORD")
        if not password:
            password = secrets.token_urlsafe(12)
            if not _to_terminal(f"admin password (this run only): {password}"):
                password = None          # no terminal: never into a log file
                click.echo("admin view disabled (no terminal to show a random password on): "
                           "set LEXGOLD_ADMIN_PASSWORD or LEXGOLD_ADMIN_PASSWORD_HASH")
        password_hash = generate_password_hash(password) if password else None
        # every host hashes the plain password with its own salt: sessions name it by this
        password_id = hashlib.sha256(password.encode()).hexdigest() if password else None
    secure = (not loopback) if secure_cookies is None else secure_cookies
    settings = {"DATABASE_URL": db_url, "ADMIN_PASSWORD_HASH": password_hash,
                "SESSION_COOKIE_SECURE": secure, "TRUSTED_PROXIES": trusted_proxies,
                "RATE_LIMIT_PER_HOUR": rate_limit, "SECRET_KEY": secret_key,
                "FIGURES_EVERY_S": figures_every,
                "ADMIN_PASSWORD_ID": password_id, **_legacy_key(study_db, secret_key_file),
                **({"PROLIFIC_WEBHOOK_SECRET": hook_secret} if hook_secret else {})}
    refresher = None
    if figures_every > 0 and not check:     # admin figures and top-ups, off the raters' path
        from lexgold.live.refresher import Supervised
        refresher = Supervised(db_url, figures_every,
                               lambda line: click.echo(f"warning: {line}", err=True))
    if workers > 1 and not check:
        from lexgold.annotate.multiprocess import serve_workers
        if secure:
            click.echo("session cookies are Secure: serve behind HTTPS (or --no-secure-cookies)")

        def on_exit():
            _stop_refresher(refresher)
            _checkpoint(db_url, study_db)
        serve_workers(settings, study_db, host=host, port=port, workers=workers, threads=threads,
                      connection_limit=connection_limit, channel_timeout=channel_timeout,
                      on_exit=on_exit)
        return
    app = create_app(settings)
    # waitress drops X-Forwarded-* headers unless told otherwise; with trusted proxies the
    # app's ProxyFix reads them (only the last ``trusted_proxies`` hops are believed)
    try:
        server = create_server(app, host=host, port=port, threads=threads,
                               connection_limit=connection_limit,
                               channel_timeout=channel_timeout,
                               cleanup_interval=min(30, max(1, channel_timeout // 2)),
                               clear_untrusted_proxy_headers=trusted_proxies == 0,
                               # a longer body is answered 413 as its Content-Length (or its
                               # chunks) arrive, never spooled to a temporary file first
                               max_request_body_size=MAX_REQUEST_BYTES)
    except OSError as err:                  # taken between the check above and now
        _stop_refresher(refresher)
        raise click.ClickException(_bind_failed(host, port, err)) from None
    url = f"http://{'localhost' if host in ('0.0.0.0', '::') else host}:{server.effective_port}/"
    click.echo(f"serving {shown(study_db)} at {url} (admin: {url}admin/)")
    if secure:
        click.echo("session cookies are Secure: serve behind HTTPS (or --no-secure-cookies)")
    if check:
        try:
            _check(server, url)
        finally:
            app.extensions["lexgold_engine"].dispose()
            _checkpoint(db_url, study_db)
        return
    previous = {number: signal.signal(number, _stop) for number in STOP_SIGNALS}
    try:
        server.run()        # returns on SIGTERM / SIGINT, the requests in progress finished
    finally:
        server.close()
        app.extensions["lexgold_engine"].dispose()
        _stop_refresher(refresher)
        _checkpoint(db_url, study_db)
        for number, handler in previous.items():
            signal.signal(number, handler)


def ensure_port_free(host: str, port: int) -> None:
    """Bind ``host``:``port`` once as waitress and gunicorn do (SO_REUSEADDR) and let it go, so
    that a port in use (another ``lexgold serve``, any server) is a one-line error naming it
    rather than the server's ``OSError`` traceback."""
    if port == 0:
        return
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except OSError as err:
        raise click.ClickException(f"--host {host}: cannot be resolved ({err.strerror or err})") \
            from None
    family, kind, proto, _name, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as err:
            raise click.ClickException(_bind_failed(host, port, err)) from None


def _bind_failed(host: str, port: int, err: OSError) -> str:
    """The one line for a listening socket that cannot be had."""
    if err.errno == errno.EADDRINUSE:
        return (f"port {port} on {host} is already in use (another lexgold serve, or another "
                f"server): stop it, or choose a free port with --port")
    if err.errno == errno.EACCES:
        return f"port {port} on {host}: permission denied (ports below 1024 need root): use --port"
    return f"cannot listen on {host}:{port}: {err.strerror or err}"


PUBLIC_WITHOUT_PROXY = ("warning: listening on {host}, a public address, with no reverse proxy "
                        "(--trusted-proxies 0): slow clients can tie up every connection; put "
                        "nginx in front (deploy/README.md) and serve on 127.0.0.1")


def _warn_if_readable(db_url: str) -> None:
    """One line when others may read a SQLite study (one made before lexgold made them 0600):
    it holds the raters' answers and platform IDs."""
    from sqlalchemy.engine import make_url

    from lexgold.study.db import readable_by_others

    path = make_url(db_url).database
    if make_url(db_url).get_backend_name() == "sqlite" and path and readable_by_others(path):
        click.echo(f"warning: {path} is readable by other users of this machine: "
                   f"chmod 600 {path}", err=True)


def _stop_refresher(refresher) -> None:
    """Stop the figures refresher and its supervisor (:class:`lexgold.live.refresher.
    Supervised`)."""
    if refresher is not None:
        refresher.stop()


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


#: signals that stop `lexgold serve` cleanly (systemd and `kill` send SIGTERM; Ctrl-C SIGINT)
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


def _secret_key(study_db: str, key_file: str | None, temporary_ok: bool) -> str:
    """The session-signing key (:func:`lexgold.study.secret.find_key`), or one for this run
    only where that is allowed; else a one-line error saying how to make one."""
    from lexgold.study.secret import find_key, how_to_make, new_key

    found = find_key(study_db, key_file)
    if found is not None:
        click.echo(f"session-signing key: {found[1]}")
        return found[0]
    if not temporary_ok:
        raise click.ClickException(f"no session-signing key for a public server: "
                                   f"{how_to_make(study_db)}")
    click.echo("session-signing key: none set, one made for this run only (a restart logs "
               f"every rater and admin out; to keep one: {how_to_make(study_db)})")
    return new_key()


def _legacy_key(study_db: str, key_file: str | None) -> dict:
    """``LEGACY_SECRET_KEY`` and ``LEGACY_SECRET_UNTIL`` for ``create_app`` while the key file
    keeps the key the study held before revision 0010 (`study upgrade`), said once."""
    from lexgold.study.secret import ENV_KEY, key_source, read_legacy_key

    source = key_source(study_db, key_file)
    legacy = read_legacy_key(source) if source not in (None, ENV_KEY) else None
    if legacy is None:
        return {}
    click.echo(f"sessions signed with the key the study held before its upgrade: their raters "
               f"are found until {legacy[1]:%Y-%m-%d %H:%M} UTC")
    return {"LEGACY_SECRET_KEY": legacy[0], "LEGACY_SECRET_UNTIL": legacy[1]}


def _stop(_signum, _frame):
    """A stop signal: SystemExit in the main thread, which waitress's loop catches (it stops
    serving, lets the requests in progress finish, 5 s at most, and returns). Later stop
    signals are ignored, so nothing interrupts the checkpoint."""
    for number in STOP_SIGNALS:
        signal.signal(number, signal.SIG_IGN)
    raise SystemExit(0)


def _checkpoint(db_url: str, study_db: str) -> None:
    """On a clean stop: move a SQLite study's write-ahead log into the database file and say so
    (nothing for PostgreSQL)."""
    from lexgold.study.db import checkpoint_sqlite

    result = checkpoint_sqlite(db_url)
    if result is None:
        return
    busy, frames, done = result
    if busy:
        click.echo(f"stopped; {shown(study_db)}: checkpoint incomplete ({done} of {frames} log "
                   "frames; "
                   f"another process has the database open): keep {Path(study_db).name}-wal "
                   "with it", err=True)
    else:
        click.echo(f"stopped; {shown(study_db)}: write-ahead log checkpointed, the file alone "
                   "holds "
                   "the study")


def study_from_environment(study_db: str | None) -> str:
    """``study_db``; when it is omitted or ``env:``, LEXGOLD_DATABASE_URL (see ``serve``)."""
    if study_db not in (None, "env:"):
        return study_db
    value = os.environ.get("LEXGOLD_DATABASE_URL", "").strip()
    if not value:
        raise click.UsageError("no STUDY given and LEXGOLD_DATABASE_URL is not set (give the "
                               "study's path or URL, or set the variable)")
    return value


def _to_terminal(line: str) -> bool:
    """Write ``line`` to the controlling terminal only (not stdout: that may be a log file)."""
    try:
        with open("/dev/tty", "w", encoding="utf-8") as tty:
            tty.write(line + "\n")
        return True
    except OSError:
        return False


def _check(server, url: str) -> None:
    """Serve from this thread until one fetch of the entry page (in another) is done."""
    from waitress import wasyncore

    result = {}

    def fetch():
        try:
            with urllib.request.urlopen(url, timeout=30) as response:
                result["status"] = response.status
        except OSError as err:
            result["error"] = str(err)

    thread = threading.Thread(target=fetch, daemon=True)
    thread.start()
    while thread.is_alive():
        wasyncore.loop(timeout=0.1, map=server._map, count=1)
    server.close()
    if result.get("status") != 200:
        raise click.ClickException(f"entry page failed: {result}")
    click.echo(f"entry page OK (HTTP {result['status']})")
