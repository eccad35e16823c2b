"""Counting attempts per client in the study database, shared by every server process.

Used for the admin lock-out and the rate limits on entry and claims. An attempt is counted
*before* the work it guards (a password check, an enrolment), by one atomic conditional UPDATE
(row lock on PostgreSQL, the write lock on SQLite), so parallel requests cannot all read the
same old count: at most ``limit`` attempts per window go ahead, however many arrive at once.

Decision: a table in the study database rather than Flask-Limiter. Flask-Limiter's shared
storages are Redis, Memcached and MongoDB (its memory storage is per process); a rating site
is one study database and one ``lexgold serve``, so the database every process already shares
is the store, with no further service to run.
"""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import case, delete, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from lexgold.study import models as m
from lexgold.study.clock import database_now

#: rows whose window began longer ago than this are deleted (no key keeps a longer window)
FORGET_S = 24 * 3600


def client(address: str | None) -> str:
    """The client an address counts as: an IPv4 address itself, an IPv6 address its /64
    (RFC 4291 section 2.5.4: a site's subnet; one host commonly holds the whole /64, so each of
    its 2**64 addresses must not count afresh). IPv4-mapped IPv6 addresses count as IPv4.

    >>> client("2001:db8:1:2:aaaa::1"), client("::ffff:192.0.2.7"), client("192.0.2.7")
    ('2001:db8:1:2::/64', '192.0.2.7', '192.0.2.7')
    """
    import ipaddress

    try:
        parsed = ipaddress.ip_address((address or "").split("%")[0])
    except ValueError:
        return address or "-"
    if parsed.version == 6 and parsed.ipv4_mapped is not None:
        return str(parsed.ipv4_mapped)
    if parsed.version == 6:
        return str(ipaddress.ip_network(f"{parsed}/64", strict=False))
    return str(parsed)


def hit(session: Session, key: str, limit: int, window_s: float, now=None) -> bool:
    """Count one attempt under ``key``; True when it is within ``limit`` per ``window_s``.

    A window starts at the first attempt and lasts ``window_s`` seconds; the count restarts
    after it. The attempt is committed before returning.
    """
    now = now or database_now(session)
    old = now - timedelta(seconds=window_s)
    expired = m.Throttle.window_start <= old
    for _ in range(5):
        count = session.execute(
            update(m.Throttle).where(m.Throttle.key == key)
            .values(count=case((expired, 1), else_=m.Throttle.count + 1),
                    window_start=case((expired, now), else_=m.Throttle.window_start))
            .returning(m.Throttle.count)).scalar()
        if count is None:
            session.add(m.Throttle(key=key, window_start=now, count=1))
            try:
                session.flush()
            except IntegrityError:         # another process inserted the key first: count there
                session.rollback()
                continue
            count = 1
        session.execute(delete(m.Throttle).where(
            m.Throttle.window_start < now - timedelta(seconds=FORGET_S)))
        session.commit()
        return count <= limit
    raise RuntimeError(f"could not count an attempt under {key!r}")


def clear(session: Session, key: str) -> None:
    """Forget the attempts under ``key`` (e.g. after a successful login)."""
    session.execute(delete(m.Throttle).where(m.Throttle.key == key))
    session.commit()
