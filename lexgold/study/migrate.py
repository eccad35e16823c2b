"""``lexgold study upgrade``: a study database made by an older lexgold brought to the current
schema (the Alembic revisions of ``migrations/``, :func:`lexgold.study.db.upgrade`), with what
the revisions cannot do alone.

Two revisions drop what a study held: 0010 the session-signing key (:mod:`lexgold.study.
secret`: a copy of the database must not be enough to sign a session), 0014 the raters'
own-link session IDs stored in plain text (hashed with the key, or cleared without one). So
the key the study held is read first, before 0010 drops it, and kept in the key file
``lexgold serve`` reads for :data:`~lexgold.study.secret.LEGACY_DAYS` days (the session
lifetime), so raters who started before the upgrade continue; and the own-link session IDs
are counted before and after, to say how many were cleared.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from sqlalchemy import Engine, inspect, text


@dataclass(frozen=True)
class KeptKey:
    """Where the key a study held before revision 0010 is kept, and until when (naive UTC)."""

    path: Path
    made: bool            # the key file was made by the upgrade
    until: datetime


@dataclass(frozen=True)
class Upgraded:
    """What :func:`upgrade_study` did."""

    held_key: bool                  # the study held its session-signing key (before 0010)
    kept: KeptKey | None            # where that key is kept (None: dropped, or in the env)
    sessions_cleared: int           # own-link session IDs cleared (no key to hash them)
    key_found: bool                 # a session-signing key is set for the study


def stored_sessions(engine: Engine) -> int:
    """Raters with an own-link session ID stored (plain before revision 0014, then hashed)."""
    with engine.connect() as connection:
        if not inspect(connection).has_table("rater"):
            return 0
        return connection.execute(text("SELECT count(*) FROM rater WHERE external_session "
                                       "NOT IN ('', 'ASSIGNMENT_ID_NOT_AVAILABLE')")).scalar()


def stored_key(engine: Engine) -> str | None:
    """The session-signing key a study made before revision 0010 holds, else None."""
    with engine.connect() as connection:
        inspector = inspect(connection)
        if not inspector.has_table("study") or "secret_key" not in {
                column["name"] for column in inspector.get_columns("study")}:
            return None
        return connection.execute(text("SELECT secret_key FROM study")).scalar() or None


def keep_stored_key(study: str, key_file: str | None, old_key: str) -> KeptKey | None:
    """Keep the key the study held in the key file ``serve`` will read; None when there is no
    such file (the key is then in the environment, or the study is a database URL without a
    key file)."""
    from lexgold.study.secret import ENV_KEY, default_key_file, keep_legacy_key, key_source

    path = key_file or key_source(study)
    if path == ENV_KEY:
        return None
    path = path or default_key_file(study)
    if path is None:
        return None
    made = not Path(path).exists()
    return KeptKey(Path(path), made, keep_legacy_key(path, old_key))


def upgrade_study(study: str, key_file: str | None = None) -> Upgraded:
    """Bring the study ``study`` (a SQLite path or a database URL) to the current schema.

    ``key_file``: the key file ``lexgold serve`` reads (default: as :func:`~lexgold.study.
    secret.find_key` finds it). The key a study made before revision 0010 holds is kept there
    (:func:`keep_stored_key`); the key found then hashes the own-link session IDs (revision
    0014). :class:`~lexgold.errors.InputError` for a missing database, one made by a newer
    lexgold or another application's (:func:`lexgold.study.db.upgrade`)."""
    from lexgold.study.db import check_connects, database_url, make_engine, upgrade
    from lexgold.study.secret import find_key

    engine = make_engine(database_url(study, must_exist=True))
    try:
        check_connects(engine)
        old_key = stored_key(engine)
        kept = keep_stored_key(study, key_file, old_key) if old_key else None
        found = find_key(study, key_file)
        before = stored_sessions(engine)
        upgrade(engine, key=found[0] if found else None)
        cleared = before - stored_sessions(engine)
    finally:
        engine.dispose()
    return Upgraded(held_key=old_key is not None, kept=kept, sessions_cleared=cleared,
                    key_found=found is not None)
