"""The database lifecycle in one place: URLs, engines, sessions, migrations.

SQLite runs in WAL mode with a busy timeout. Transactions that write start with ``BEGIN
IMMEDIATE`` (sessions from :func:`session_factory` with ``write=True``, the default) so that
concurrent writers queue instead of failing on a read-to-write upgrade; read-only sessions
(``write=False``) start a plain deferred ``BEGIN`` and never wait for the write lock (WAL
readers are not blocked by a writer).
PostgreSQL is used as is (READ COMMITTED; claims and submissions rely on conditional UPDATEs
and unique constraints, which are safe there). The schema is made only by Alembic.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DBAPIError
from sqlalchemy.orm import Session, sessionmaker

from lexgold.errors import InputError

MIGRATIONS = Path(__file__).resolve().parents[1] / "migrations"


@contextmanager
def postgres_schema(url: str, prefix: str = "lexgold") -> Iterator[tuple[str, str]]:
    """A fresh schema ``<prefix>_<random>`` in the PostgreSQL database ``url``, dropped on exit.

    Yields ``(schema, url_using_it)``: the URL sets ``search_path`` so a study made through it
    lives only in that schema. Tests and benchmarks use it to share one server without touching
    each other's tables.
    """
    schema = f"{prefix}_{uuid.uuid4().hex[:10]}"
    engine = create_engine(url)
    try:
        with engine.begin() as connection:
            connection.execute(text(f'CREATE SCHEMA "{schema}"'))
        sep = "&" if "?" in url else "?"
        yield schema, f"{url}{sep}options=-csearch_path%3D{schema}"
    finally:
        with engine.begin() as connection:
            connection.execute(text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
        engine.dispose()


def database_url(study: str | Path, *, must_exist: bool = False) -> str:
    """A database URL from a URL or a path to a SQLite file (``study.sqlite``).

    With ``must_exist`` a SQLite file that is not there is an :class:`InputError` (rather than
    silently creating an empty database)."""
    text = str(study)
    if "://" in text:
        try:
            make_url(text)
        except ArgumentError:
            raise InputError("not a valid database URL", field="db") from None
        return text
    path = Path(text)
    if must_exist and not path.is_file():
        raise InputError("no such study database (create it with `lexgold study create`)",
                         path=path)
    if not path.parent.is_dir():
        raise InputError("folder does not exist", path=path.parent)
    return f"sqlite:///{path.resolve()}"


def open_study(study: str | Path) -> Engine:
    """An engine on an existing study database at the current schema, else InputError."""
    engine = make_engine(database_url(study, must_exist=True))
    check_connects(engine)
    if not is_current(engine):
        engine.dispose()
        raise InputError("not a lexgold study database at the current schema (create it with "
                         "`lexgold study create`, or run `lexgold study upgrade`)", path=study)
    return engine


def make_engine(url: str, busy_timeout_s: float = 30) -> Engine:
    """An engine; SQLite gets WAL and a busy timeout (how long a writer waits for the lock).

    A missing database driver (psycopg for PostgreSQL) is an :class:`InputError` saying what to
    install."""
    if not url.startswith("sqlite"):
        try:
            return create_engine(url, pool_pre_ping=True)
        except ModuleNotFoundError as err:
            hint = (" (pip install 'lexgold[postgres]')" if url.startswith("postgresql")
                    else "")
            raise InputError(f"the database driver {err.name} is not installed{hint}",
                             path=_shown(make_url(url))) from None
    engine = create_engine(url, connect_args={"timeout": busy_timeout_s,
                                              "check_same_thread": False})

    @event.listens_for(engine, "connect")
    def _connect(dbapi_connection, _record):
        dbapi_connection.isolation_level = None   # we issue BEGIN ourselves
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={int(busy_timeout_s * 1000)}")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(connection):
        read_only = connection.get_execution_options().get("lexgold_read_only", False)
        connection.exec_driver_sql("BEGIN" if read_only else "BEGIN IMMEDIATE")

    return engine


def session_factory(engine: Engine, write: bool = True) -> sessionmaker[Session]:
    """Sessions on ``engine``; ``write=False`` for requests that only read (no write lock)."""
    if not write:
        engine = engine.execution_options(lexgold_read_only=True)
    return sessionmaker(engine, expire_on_commit=False)


def _shown(url) -> str:
    """A database URL as shown in messages: the file path for SQLite, no password."""
    if url.get_backend_name() == "sqlite":
        return url.database or ":memory:"
    return url.render_as_string(hide_password=True)


def check_connects(engine: Engine) -> None:
    """:class:`InputError` (one line) when the study database cannot be opened: a file that is
    not a SQLite database, a wrong PostgreSQL user or password, a server that cannot be
    reached, a database that does not exist."""
    try:
        with engine.connect():
            pass
    except DBAPIError as err:
        reason = str(err.orig or err).strip().splitlines()[0]
        if engine.url.get_backend_name() == "sqlite":
            message = f"not a lexgold study database ({reason})"
        else:
            message = f"cannot connect to the study database: {reason}"
        engine.dispose()
        raise InputError(message, path=_shown(engine.url)) from None


def check_writable(engine: Engine) -> None:
    """:class:`InputError` (one line) when the study database cannot be written: a read-only
    file or user, or a lock held by another process for longer than the busy timeout."""
    try:
        with engine.connect() as connection:
            transaction = connection.begin()
            connection.execute(text("UPDATE study SET name = name"))
            transaction.rollback()
    except DBAPIError as err:
        reason = str(err.orig or err).strip().splitlines()[0]
        raise InputError(f"cannot write to the study database: {reason}", field="db") from None


def _alembic_config(engine: Engine) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option("sqlalchemy.url",
                           engine.url.render_as_string(hide_password=False).replace("%", "%%"))
    return config


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Apply the Alembic revisions up to ``revision`` (the only way the schema is made)."""
    config = _alembic_config(engine)
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, revision)


def downgrade(engine: Engine, revision: str) -> None:
    config = _alembic_config(engine)
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.downgrade(config, revision)


def is_current(engine: Engine) -> bool:
    """True when the database is at the newest revision."""
    head = ScriptDirectory.from_config(_alembic_config(engine)).get_current_head()
    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision() == head
