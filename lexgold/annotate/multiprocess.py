"""``lexgold serve --workers N``: the rating site in N processes under gunicorn.

One waitress process (the default) serves 1,000 raters at once at the SimLex paper's pace (p95
46 ms on 2 cores over PostgreSQL; docs/hardening.md). For headroom, and to use several cores,
gunicorn runs N worker processes with threads each (``gthread``; on 2 cores, 2 workers answer
about 40 % more requests per second than one, 4 no more than 2): each
worker builds its own app with :func:`~lexgold.annotate.app.create_app` after the fork (no
database connection is shared across processes). Nothing a request depends on lives in a
process: answers, claims, the admin lock-out counts, admin sessions and rate limits are all in
the study database, time comes from the database server, and the session-signing key from
``settings`` (read once by ``serve``; every host is given the same key), so any number of
processes, on one host or several behind one reverse proxy and one PostgreSQL server, serve one
study consistently.

waitress stays the default for one process: it is pure Python, runs everywhere (gunicorn needs
a POSIX system) and buffers slow clients itself.
"""

from __future__ import annotations

from collections.abc import Callable

import click


def serve_workers(settings: dict, study_db: str, *, host: str, port: int, workers: int,
                  threads: int, connection_limit: int, channel_timeout: int,
                  on_exit: Callable[[], None] | None = None) -> None:
    """Run gunicorn until it is stopped (SIGTERM or SIGINT stops the workers cleanly).

    ``settings`` are :func:`~lexgold.annotate.app.create_app`'s (the admin password hash is made
    once, here, so every worker checks the same one). X-Forwarded-* headers are left to the
    app (``TRUSTED_PROXIES``): gunicorn itself trusts none.

    On SIGTERM the arbiter stops accepting, lets each worker finish its requests (10 s at most),
    and exits; on SIGINT (Ctrl-C) the workers stop at once. Either way each worker closes its
    database connections as it exits (gunicorn's ``worker_exit`` hook), and ``on_exit`` runs in
    the arbiter once every worker is gone (``on_exit`` hook): ``lexgold serve`` checkpoints a
    SQLite study there.
    """
    from gunicorn.app.base import BaseApplication

    from lexgold.study.db import shown as shown_study

    def when_ready(server):
        bound = server.LISTENERS[0].getsockname()
        shown = "localhost" if host in ("0.0.0.0", "::") else host
        click.echo(f"serving {shown_study(study_db)} at http://{shown}:{bound[1]}/ "
                   f"(admin: http://{shown}:{bound[1]}/admin/) with {workers} workers")

    def worker_exit(_server, worker):
        app = getattr(worker, "wsgi", None)        # None in the arbiter and before loading
        engine = getattr(app, "extensions", {}).get("lexgold_engine")
        if engine is not None:
            engine.dispose()

    options = {
        "bind": f"[{host}]:{port}" if ":" in host else f"{host}:{port}",
        "workers": workers, "worker_class": "gthread", "threads": threads,
        "worker_connections": connection_limit, "keepalive": min(channel_timeout, 5),
        "timeout": max(30, channel_timeout), "graceful_timeout": 10,
        "forwarded_allow_ips": "", "proxy_allow_ips": "",
        "accesslog": None, "errorlog": "-", "loglevel": "warning",
        "when_ready": when_ready, "worker_exit": worker_exit,
        "on_exit": lambda _server: on_exit() if on_exit is not None else None,
    }

    class Server(BaseApplication):
        def load_config(self):
            for key, value in options.items():
                self.cfg.set(key, value)

        def load(self):
            from lexgold.annotate.app import create_app
            return create_app(settings)

    Server().run()
