"""The study database's health as one site process sees it, and fail-fast while it is down.

A PostgreSQL server that stops answering (stopped with ``kill -STOP``, a frozen VM, a full
network path) never closes its connections: the kernel keeps accepting and acknowledging, so
a client waits forever and every server thread ends up waiting. Three limits bound the wait
(:func:`lexgold.study.db.make_engine`): ``connect_timeout`` for a new connection,
``statement_timeout`` on the server for a slow statement, and a client-side deadline on every
exchange with the server (statement timeout + 2 s), which also covers a server that does not
answer at all. When one of them expires the process marks the database *down*: for the next
``cooldown_s`` requests that need the database fail at once with the 503 "try again" page
instead of waiting too, then one request alone tries again (a probe); its success marks the
database up. Static files and pages that need no database are served throughout.

Nothing is lost: a request that failed stored nothing (its transaction never committed, or
the server never saw the commit), and the rater is asked to send it again.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timezone

log = logging.getLogger(__name__)


@dataclass
class HealthReport:
    """What the admin view shows at its top."""

    up: bool
    down_since: datetime | None      # UTC, while down
    failures: int                    # failed attempts since the process started
    last_error: str                  # "" if none
    last_error_at: datetime | None   # UTC
    latency_ms: float | None         # of a trivial query, when measured


class DatabaseHealth:
    """Up or down, with a short cool-down after a failure (a circuit breaker).

    Thread-safe; one per engine (so per server process).
    """

    def __init__(self, cooldown_s: float = 5.0, probe_s: float = 10.0):
        self.cooldown_s, self.probe_s = cooldown_s, probe_s
        self._lock = threading.Lock()
        self._down_since: float | None = None        # monotonic
        self._down_since_utc: datetime | None = None
        self._retry_at = 0.0
        self._probe_until = 0.0
        self.failures = 0
        self.last_error, self.last_error_at = "", None
        self.latency_ms: float | None = None
        #: the database answered once: only then is a failure an outage worth logging (a
        #: command that never reached it, a wrong password, says so in its own error)
        self._answered = False

    def refused(self) -> str | None:
        """Why a request must not try the database now (it is down and cooling off, or another
        request is probing it), else None: go ahead."""
        if self._down_since is None:
            return None
        with self._lock:
            if self._down_since is None:
                return None
            now = time.monotonic()
            if now < self._retry_at or now < self._probe_until:
                return (f"the database is not answering (down for {now - self._down_since:.0f} s;"
                        f" last error: {self.last_error})")
            self._probe_until = now + self.probe_s       # this request is the probe
            return None

    def failed(self, reason: str) -> None:
        with self._lock:
            now = time.monotonic()
            self.failures += 1
            self.last_error, self.last_error_at = reason, datetime.now(timezone.utc)
            self._retry_at, self._probe_until = now + self.cooldown_s, 0.0
            if self._down_since is None:
                self._down_since, self._down_since_utc = now, self.last_error_at
                if self._answered:
                    log.error("study database down: %s; requests that need it get the 503 "
                              "'try again' page (retried every %.0f s)", reason,
                              self.cooldown_s)

    def succeeded(self) -> None:
        self._answered = True
        if self._down_since is None:
            return
        with self._lock:
            if self._down_since is not None:
                log.warning("study database answering again after %.1f s",
                            time.monotonic() - self._down_since)
                self._down_since = self._down_since_utc = None
                self._probe_until = 0.0

    def report(self) -> HealthReport:
        return HealthReport(self._down_since is None, self._down_since_utc, self.failures,
                            self.last_error, self.last_error_at, self.latency_ms)


def measure(session, health: DatabaseHealth) -> HealthReport:
    """Time a trivial query (``SELECT 1``) on ``session`` and report."""
    from sqlalchemy import text
    start = time.perf_counter()
    session.execute(text("SELECT 1"))
    health.latency_ms = (time.perf_counter() - start) * 1000
    return health.report()
