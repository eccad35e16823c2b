"""Request time from the database server, the one clock every app host shares.

Claims expire and places are given away by comparing stored times with "now". With several app
hosts on one database, each host's own clock would decide: a host 2 h ahead took the place of a
rater who had answered seconds earlier. So "now" is the database server's time, naive UTC
(:func:`database_now`). :class:`DatabaseClock` asks the server at most every
:data:`REFRESH_S` seconds and counts the time between on this process's monotonic clock (which
the machine's wall clock, right or wrong, does not move), so a request costs no extra query.
"""

from __future__ import annotations

import threading
import time
from datetime import datetime, timedelta

from sqlalchemy import text
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.orm import Session

#: how long a reading of the database server's clock is reused (seconds)
REFRESH_S = 5.0


def database_now(bind: Engine | Connection | Session) -> datetime:
    """The database server's current time, naive UTC, to the millisecond or better.

    SQLite's clock is its host's (one machine serves a SQLite study); PostgreSQL's
    ``clock_timestamp()`` is the server's, the same for every app host."""
    dialect = bind.get_bind().dialect.name if isinstance(bind, Session) else bind.dialect.name
    query = text("SELECT clock_timestamp() AT TIME ZONE 'UTC'" if dialect == "postgresql"
                 else "SELECT strftime('%Y-%m-%d %H:%M:%f', 'now')")
    if isinstance(bind, Engine):          # a read (SQLite: no write lock taken)
        with bind.execution_options(lexgold_read_only=True).connect() as connection:
            value = connection.execute(query).scalar()
    else:
        value = bind.execute(query).scalar()
    if isinstance(value, str):              # SQLite: text
        value = datetime.fromisoformat(value)
    return value.replace(tzinfo=None)


class DatabaseClock:
    """The database server's time, read every ``refresh_s`` seconds and carried forward on the
    monotonic clock in between (thread-safe; one per app)."""

    def __init__(self, engine: Engine, refresh_s: float = REFRESH_S, monotonic=time.monotonic):
        self.engine, self.refresh_s, self.monotonic = engine, refresh_s, monotonic
        self._reading: tuple[datetime, float] | None = None      # (server time, monotonic)
        self._lock = threading.Lock()

    def __call__(self) -> datetime:
        reading = self._reading
        tick = self.monotonic()
        if reading is None or not 0 <= tick - reading[1] < self.refresh_s:
            with self._lock:
                before = self.monotonic()
                server = database_now(self.engine)
                after = self.monotonic()
                reading = self._reading = (server, (before + after) / 2)
            tick = self.monotonic()
        return reading[0] + timedelta(seconds=tick - reading[1])
