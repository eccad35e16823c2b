"""The database lifecycle in one place: URLs, engines, sessions, migrations.

SQLite runs in WAL mode with a busy timeout: committed transactions go to ``study.sqlite-wal``
first and reach ``study.sqlite`` at checkpoints; :func:`checkpoint_sqlite` (run by ``lexgold
serve`` on every clean stop) moves them all, and :func:`backup_study` copies a study into one
self-contained file while it is served. Transactions that write start with ``BEGIN
IMMEDIATE`` (sessions from :func:`session_factory` with ``write=True``, the default) so that
concurrent writers queue instead of failing on a read-to-write upgrade; read-only sessions
(``write=False``) start a plain deferred ``BEGIN`` and never wait for the write lock (WAL
readers are not blocked by a writer).
PostgreSQL is used as is (READ COMMITTED; claims and submissions rely on conditional UPDATEs
and unique constraints, which are safe there). The schema is made only by Alembic.
"""

from __future__ import annotations

import os
import re
import secrets
import shlex
import sqlite3
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote, unquote

from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError
from sqlalchemy.orm import Session, sessionmaker

from lexgold.study.health import DatabaseHealth
from lexgold.errors import InputError, redact

if TYPE_CHECKING:
    from alembic.config import Config
    from alembic.script import ScriptDirectory

MIGRATIONS = Path(__file__).resolve().parent / "migrations"


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


def open_study(study: str | Path, *, read_only: bool = False) -> Engine:
    """An engine on an existing study database at the current schema, else InputError.

    ``read_only`` (``study export``, ``study report``): a SQLite study that this user cannot
    write (a read-only file system, a folder or file without write permission) is still
    opened, read-only (:func:`read_only_sqlite_url`); a command that writes gets a one-line
    error saying what cannot be written (:func:`sqlite_write_problem`)."""
    url = database_url(study, must_exist=True)
    engine = make_engine(url)
    try:
        check_connects(engine)
    except InputError:
        fallback = read_only_sqlite_url(url) if read_only else None
        if fallback is None:
            raise
        engine = make_engine(fallback).execution_options(lexgold_read_only=True)
        check_connects(engine)
    if not is_current(engine):
        engine.dispose()
        raise InputError("not a lexgold study database at the current schema (create it with "
                         "`lexgold study create`, or run `lexgold study upgrade`)", path=study)
    return engine


def make_engine(url: str, busy_timeout_s: float = 30, *, connect_timeout_s: float = 3,
                statement_timeout_s: float = 5, pool_timeout_s: float = 5,
                health: DatabaseHealth | None = None) -> Engine:
    """An engine; SQLite gets WAL and a busy timeout (how long a writer waits for the lock).

    PostgreSQL (psycopg) gets time limits, so that a server that stops answering costs a
    request seconds, not forever (:mod:`lexgold.study.health`): ``connect_timeout_s`` for a
    new connection, ``statement_timeout_s`` for a statement (enforced by the server), the
    statement timeout + 2 s for any exchange with the server (enforced here: a stopped server
    enforces nothing) and ``pool_timeout_s`` to wait for a free pooled connection. The URL's
    own ``connect_timeout`` and ``options=-c statement_timeout=...`` take precedence. Every
    failure and success is recorded in ``health`` (fail fast while the database is down).

    A missing database driver (psycopg for PostgreSQL) is an :class:`InputError` saying what to
    install."""
    if not url.startswith("sqlite"):
        try:
            if make_url(url).get_driver_name() != "psycopg":
                engine = create_engine(url, pool_pre_ping=True)
                engine.lexgold_health = DatabaseHealth()
                return engine
            return _postgres_engine(url, connect_timeout_s, statement_timeout_s,
                                    pool_timeout_s, health or DatabaseHealth())
        except ModuleNotFoundError as err:
            hint = (" (pip install -e '.[postgres]' in the lexgold clone)"
                    if url.startswith("postgresql") else "")
            raise InputError(f"the database driver {err.name} is not installed{hint}",
                             path=_shown(make_url(url))) from None
        except NoSuchModuleError:
            raise InputError(f"unknown database kind or driver "
                             f"{make_url(url).drivername!r} (lexgold studies are SQLite files "
                             f"or postgresql+psycopg://... URLs)",
                             path=_shown(make_url(url))) from None
    database = make_url(url).database
    if database and database != ":memory:" and not database.startswith("file:"):
        create_private(database)         # SQLite gives its -wal and -shm files the same mode
    engine = create_engine(url, connect_args={"timeout": busy_timeout_s,
                                              "check_same_thread": False})
    engine.lexgold_health = DatabaseHealth()         # the admin view's latency figure

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
        # on the driver's connection: a BEGIN needs none of a statement's execution round
        # (events, compiled cache, result set-up) that exec_driver_sql would give it
        read_only = connection.get_execution_options().get("lexgold_read_only", False)
        statement = "BEGIN" if read_only else "BEGIN IMMEDIATE"
        try:
            connection.connection.driver_connection.execute(statement)
        except sqlite3.Error as err:     # SQLAlchemy's error, as from any statement
            raise DBAPIError.instance(statement, (), err, sqlite3.Error) from None

    return engine


class Prepared:
    """A Core statement compiled once per dialect and sent on the driver's cursor of a
    connection: for the statements every rater's request runs (the rater read with its slot,
    a page's answers stored).

    SQLAlchemy's round of each execution (the compiled-cache lookup, execution events, the
    execution context and result set-up) is skipped; what decides the values sent and read is
    kept: parameters go through the column types' bind processors and rows through their
    result processors for the dialect, as in SQLAlchemy's own execution, and a driver's error
    is raised as SQLAlchemy's (:meth:`sqlalchemy.exc.DBAPIError.instance`: a locked database
    is an ``OperationalError``, a unique constraint an ``IntegrityError``; a lost connection
    is invalidated). The statement runs in the connection's transaction, begun first if none
    is (SQLite: :func:`make_engine`'s ``BEGIN`` or ``BEGIN IMMEDIATE``). An INSERT is compiled
    for the keys of its rows: SQLAlchemy fills in no column default.
    """

    def __init__(self, statement):
        self.statement = statement
        self._forms: dict = {}

    def _form(self, dialect, keys: tuple | None):
        form = self._forms.get((dialect, keys))
        if form is None:
            compiled = self.statement.compile(dialect=dialect,
                                              column_keys=list(keys) if keys else None)
            names = list(compiled.positiontup) if compiled.positional else list(compiled.binds)
            binds = [(name, compiled.binds[name],
                      compiled.binds[name].type.dialect_impl(dialect).bind_processor(dialect))
                     for name in names]
            results = [column.type.dialect_impl(dialect).result_processor(dialect, None)
                       for column in self.statement.exported_columns]
            form = self._forms[(dialect, keys)] = (compiled.string, compiled.positional,
                                                   binds, results)
        return form

    @staticmethod
    def _parameters(form, values: dict):
        _, positional, binds, _ = form
        sent = [(name, values[name] if name in values else bind.effective_value, process)
                for name, bind, process in binds]
        sent = [(name, process(value) if process is not None else value)
                for name, value, process in sent]
        return tuple(value for _, value in sent) if positional else dict(sent)

    def _run(self, connection, form, parameters, many: bool = False):
        """The driver's cursor after running the statement (the caller closes it)."""
        if not connection.in_transaction():
            connection.begin()
        dialect, pooled = connection.dialect, connection.connection
        cursor = pooled.driver_connection.cursor()
        try:
            (cursor.executemany if many else cursor.execute)(form[0], parameters)
        except dialect.loaded_dbapi.Error as err:
            lost = dialect.is_disconnect(err, pooled, cursor)
            cursor.close()
            if lost:
                connection.invalidate()
            raise DBAPIError.instance(form[0], parameters, err, dialect.loaded_dbapi.Error,
                                      connection_invalidated=lost) from err
        return cursor

    def first(self, connection, values: dict) -> tuple | None:
        """The first row of the statement (a SELECT, or an INSERT or UPDATE with RETURNING)
        run with ``values``, or None."""
        form = self._form(connection.dialect, None)
        cursor = self._run(connection, form, self._parameters(form, values))
        try:
            row = cursor.fetchone()
        finally:
            cursor.close()
        if row is None:
            return None
        return tuple(value if process is None else process(value)
                     for value, process in zip(row, form[3]))

    def rowcount(self, connection, values: dict) -> int:
        """Run the statement (an UPDATE) with ``values``; the rows it matched."""
        form = self._form(connection.dialect, None)
        cursor = self._run(connection, form, self._parameters(form, values))
        try:
            return cursor.rowcount
        finally:
            cursor.close()

    def many(self, connection, rows: list[dict]) -> None:
        """Run the statement (an INSERT, compiled for the keys of the rows) once per row, in
        one executemany."""
        form = self._form(connection.dialect, tuple(rows[0]))
        self._run(connection, form, [self._parameters(form, row) for row in rows],
                  many=True).close()


def create_private(path: str | Path) -> None:
    """Create the empty file ``path`` readable and writable by its owner only (mode 0600,
    whatever the umask), unless it exists: a SQLite study holds the raters' answers and platform
    IDs, and SQLite makes its ``-wal``, ``-shm`` and ``-journal`` files with the database's
    mode."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:
        pass


def readable_by_others(path: str | Path) -> bool:
    """True when users other than the owner and group may read ``path``."""
    import stat

    return bool(Path(path).stat().st_mode & stat.S_IROTH)


def _postgres_engine(url: str, connect_timeout_s: float, statement_timeout_s: float,
                     pool_timeout_s: float, health: DatabaseHealth) -> Engine:
    import psycopg

    query = make_url(url).query
    options = query.get("options", "")
    options = " ".join(options) if isinstance(options, tuple) else options
    if "statement_timeout" not in options:
        options = f"{options} -c statement_timeout={int(statement_timeout_s * 1000)}".strip()
    else:
        found = re.search(r"statement_timeout\s*=\s*(\d+)", options)
        statement_timeout_s = int(found.group(1)) / 1000 if found else statement_timeout_s
    connect_args = {"options": options}
    if "connect_timeout" not in query:
        connect_args["connect_timeout"] = max(2, round(connect_timeout_s))
    deadline_s = statement_timeout_s + 2

    class GuardedConnection(psycopg.Connection):
        """psycopg's connection, each exchange with the server bounded by ``deadline_s``."""

        def wait(self, gen, interval=0.1, timeout=None):
            refused = health.refused()
            if refused is not None:
                gen.close()
                self.close()          # never reused: SQLAlchemy sees a disconnect
                raise psycopg.OperationalError(refused)
            try:
                result = super().wait(gen, interval, deadline_s if timeout is None else timeout)
            except psycopg.errors._WaitTimeout:  # noqa: SLF001 (psycopg's own timeout)
                reason = f"no answer from the database server within {deadline_s:g} s"
                health.failed(reason)
                self.close()
                raise psycopg.OperationalError(reason) from None
            health.succeeded()
            return result

    engine = create_engine(url, pool_pre_ping=True, pool_timeout=pool_timeout_s,
                           connect_args=connect_args)
    engine.lexgold_health = health

    @event.listens_for(engine, "do_connect")
    def _connect(_dialect, _record, cargs, cparams):
        refused = health.refused()
        if refused is not None:
            raise psycopg.OperationalError(refused)
        try:
            connection = GuardedConnection.connect(*cargs, **cparams)
        except psycopg.OperationalError as err:
            health.failed(str(err).strip().splitlines()[0] if str(err).strip() else repr(err))
            raise
        health.succeeded()
        return connection

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


def shown(study: str | Path) -> str:
    """A study as printed: the path of a SQLite file, a URL without its password.

    >>> shown("postgresql+psycopg://u:secret@db/study")
    'postgresql+psycopg://u:***@db/study'
    """
    text = str(study)
    if "://" not in text:
        return text
    try:
        return redact(make_url(text).render_as_string(hide_password=True))
    except ArgumentError:
        return "the study database"


def sqlite_write_problem(path: str | Path) -> str | None:
    """Why this user cannot write the SQLite study at ``path``, or None.

    SQLite in WAL mode writes the database file and ``study.sqlite-wal`` and
    ``study.sqlite-shm`` beside it, which it makes in the folder when they are not there: a
    read-only file system, a folder without write permission (while either file is missing) or
    an unwritable one of the three files each stop it, even from reading."""
    if not str(path) or str(path) == ":memory:" or not Path(path).is_file():
        return None
    path = Path(path)
    try:
        if os.statvfs(path).f_flag & os.ST_RDONLY:
            return f"read-only file system at {path.parent}"
    except OSError:
        pass
    sides = [path.with_name(path.name + suffix) for suffix in ("-wal", "-shm")]
    if not all(side.exists() for side in sides) and not os.access(path.parent,
                                                                   os.W_OK | os.X_OK):
        return f"permission denied on the folder {path.parent}"
    for name in (path, *sides):
        if name.exists() and not os.access(name, os.W_OK):
            return f"permission denied on {name}"
    return None


def read_only_sqlite_url(url: str) -> str | None:
    """A URL that opens the SQLite study at ``url`` read-only, for a user who cannot write it
    (:func:`sqlite_write_problem`); None when it can be written, or cannot be read safely.

    With ``study.sqlite-shm`` present SQLite reads through it (``mode=ro``); with no
    write-ahead log (``study.sqlite-wal`` missing or empty: the file alone holds the study,
    as after ``lexgold serve`` stops) it reads the file as it is (``immutable=1``: no lock
    taken, safe because nobody can be writing it: a writer would have made the
    ``-shm`` file). A log without its ``-shm`` file cannot be read without writing."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or not parsed.database or \
            parsed.database == ":memory:" or parsed.query.get("uri"):
        return None
    path = Path(parsed.database)
    if sqlite_write_problem(path) is None:
        return None
    wal, shm = (path.with_name(path.name + suffix) for suffix in ("-wal", "-shm"))
    if shm.exists():
        mode = "mode=ro"
    elif not wal.exists() or wal.stat().st_size == 0:
        mode = "mode=ro&immutable=1"
    else:
        return None
    return f"sqlite:///file:{quote(str(path.resolve()))}?{mode}&uri=true"


def check_connects(engine: Engine) -> None:
    """:class:`InputError` (one line) when the study database cannot be opened: a file that is
    not a SQLite database, one this user cannot write (:func:`sqlite_write_problem`: SQLite
    needs to, even to read a WAL-mode database), a wrong PostgreSQL user or password, a server
    that cannot be reached, a database that does not exist."""
    try:
        with engine.connect():
            pass
    except DBAPIError as err:
        reason = str(err.orig or err).strip().splitlines()[0]
        if engine.url.get_backend_name() == "sqlite":
            problem = sqlite_write_problem(_sqlite_file(engine.url))
            message = (f"cannot write to the study database ({problem}): {reason}" if problem
                       else f"not a lexgold study database ({reason})")
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
        problem = sqlite_write_problem(_sqlite_file(engine.url)) \
            if engine.url.get_backend_name() == "sqlite" else None
        where = f" ({problem})" if problem else ""
        raise InputError(f"cannot write to the study database{where}: {reason}",
                         path=_shown(engine.url)) from None


def _sqlite_file(url) -> str:
    """The file of a SQLite URL (a ``file:`` URI's path without its query)."""
    database = url.database or ""
    if url.query.get("uri") and database.startswith("file:"):
        database = unquote(database[5:].split("?", 1)[0])
    return database


def _alembic_config(engine: Engine) -> Config:
    from alembic.config import Config  # Alembic where used (start-up time)

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option("sqlalchemy.url",
                           engine.url.render_as_string(hide_password=False).replace("%", "%%"))
    return config


def upgrade(engine: Engine, revision: str = "head", *, key: str | None = None) -> None:
    """Apply the Alembic revisions up to ``revision`` (the only way the schema is made).
    ``key``: the session-signing key, with which revision 0014 hashes the raters' stored
    credentials (without it, it clears them).

    :class:`InputError` (nothing written) for a database at a revision this lexgold does not
    know (made by a newer version) and for one that is neither empty nor lexgold's (another
    application's tables, no ``alembic_version``)."""
    from alembic import command
    from alembic.script import ScriptDirectory

    config = _alembic_config(engine)
    check_upgradable(engine, ScriptDirectory.from_config(config))
    with engine.begin() as connection:
        config.attributes.update(connection=connection, lexgold_secret_key=key)
        command.upgrade(config, revision)


def check_upgradable(engine: Engine, scripts: ScriptDirectory) -> None:
    """See :func:`upgrade`: refuse a newer lexgold's study and another application's
    database."""
    from alembic.runtime.migration import MigrationContext
    from sqlalchemy import inspect

    with engine.connect() as connection:
        current = MigrationContext.configure(connection).get_current_revision()
        tables = sorted(inspect(connection).get_table_names())
    if current is not None:
        known = {script.revision for script in scripts.walk_revisions()}
        if current not in known:
            raise InputError(f"the study database is at schema revision {current}, which this "
                             f"lexgold does not know (its newest is "
                             f"{scripts.get_current_head()}): it was made by a newer lexgold; "
                             "upgrade lexgold", path=_shown(engine.url))
    elif tables:
        shown = ", ".join(tables[:5]) + (", ..." if len(tables) > 5 else "")
        raise InputError(f"not a lexgold study database: it holds other tables ({shown}); "
                         "lexgold makes its schema only in an empty database",
                         path=_shown(engine.url))


def downgrade(engine: Engine, revision: str) -> None:
    from alembic import command

    config = _alembic_config(engine)
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.downgrade(config, revision)


_REVISION_LINE = re.compile(r"^(revision|down_revision)\b[^=\n]*=\s*['\"]([^'\"]+)['\"]",
                            re.MULTILINE)


def head_revision() -> str | None:
    """The newest migration's revision, read from the ``revision`` and ``down_revision`` lines
    of lexgold/study/migrations/versions (what Alembic's ``get_current_head`` gives, without
    importing Alembic); None when the files are not one plain chain (then ask Alembic)."""
    revisions, parents = set(), set()
    for path in (MIGRATIONS / "versions").glob("*.py"):
        found = dict(_REVISION_LINE.findall(path.read_text(encoding="utf-8")))
        if "revision" not in found:
            return None
        revisions.add(found["revision"])
        parents.update([found["down_revision"]] if "down_revision" in found else [])
    heads = revisions - parents
    return heads.pop() if len(heads) == 1 and parents <= revisions else None


def is_current(engine: Engine) -> bool:
    """True when the database is at the newest revision."""
    head = head_revision()
    if head is not None:          # without importing Alembic (start-up time)
        with engine.connect() as connection:
            try:
                current = connection.execute(
                    text("SELECT version_num FROM alembic_version")).scalars().all()
            except DBAPIError:    # no version table: not a lexgold study yet
                return False
        return current == [head]
    from alembic.runtime.migration import MigrationContext
    from alembic.script import ScriptDirectory

    head = ScriptDirectory.from_config(_alembic_config(engine)).get_current_head()
    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision() == head


def checkpoint_sqlite(url: str, busy_timeout_s: float = 30) -> tuple[int, int, int] | None:
    """``PRAGMA wal_checkpoint(TRUNCATE)`` on a SQLite study: every committed transaction of the
    write-ahead log (``study.sqlite-wal``) is written into the database file and the log is
    emptied, so ``study.sqlite`` alone holds the whole study.

    Returns SQLite's ``(busy, log frames, frames checkpointed)``: ``busy`` is 1 when another
    connection (another process) kept the checkpoint from finishing within ``busy_timeout_s``.
    None for a database that is not SQLite (PostgreSQL has no such step).
    """
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or not parsed.database:
        return None
    connection = sqlite3.connect(parsed.database, timeout=busy_timeout_s)
    try:
        busy, frames, done = connection.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    finally:
        connection.close()
    return int(busy), int(frames), int(done)


def pg_dump_command(url: str, out: str | Path) -> str:
    """The ``pg_dump`` command line that backs up the PostgreSQL study at ``url`` into ``out``
    (custom format, restored with ``pg_restore``). The password is left out of the URL (pg_dump
    asks for it, or reads ``PGPASSWORD`` or ``~/.pgpass``), so the line can be shown and run.

    >>> print(pg_dump_command("postgresql+psycopg://u:secret@db:5432/study", "s.dump"))
    pg_dump --format=custom --file s.dump postgresql://u@db:5432/study
    """
    given = make_url(url)
    text = URL.create("postgresql", username=given.username, host=given.host, port=given.port,
                      database=given.database, query=given.query).render_as_string()
    return f"pg_dump --format=custom --file {shlex.quote(str(out))} {shlex.quote(text)}"


def backup_study(study: str | Path, out: str | Path, *, force: bool = False) -> dict:
    """Copy a SQLite study into ``out`` through SQLite's online backup API.

    Safe while ``lexgold serve`` runs: the copy is one snapshot of the committed answers (in
    WAL mode a reader never blocks the site's writers). The copy is self-contained (journal
    mode DELETE: no ``-wal`` file), checked (``PRAGMA quick_check``) and written under a
    temporary name, then renamed, so ``out`` is never half-written.

    Returns
    -------
    dict
        ``out``, ``bytes``, ``answers``, ``raters`` of the copy.

    Raises
    ------
    InputError
        A PostgreSQL URL (the message gives the ``pg_dump`` command line), a missing file or
        one that is not a lexgold study, an existing ``out`` without ``force``, or ``out`` with
        a write-ahead log of its own (open, or not closed cleanly).
    """
    parsed = make_url(database_url(study, must_exist=True))
    if parsed.get_backend_name() != "sqlite":
        raise InputError("a PostgreSQL study is backed up with pg_dump (it asks for the "
                         f"password): {pg_dump_command(str(study), out)}")
    source_path, target = Path(parsed.database), Path(out)
    _check_backup_target(source_path, target, force)
    source = sqlite3.connect(source_path, timeout=30)
    try:
        _check_is_study(source, study)
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(f".{target.name}.{secrets.token_hex(4)}.partial")
        try:
            counts = _copy(source, partial)
            os.replace(partial, target)
        except sqlite3.Error as err:
            raise InputError(f"backup failed: {err}", path=target) from None
        finally:
            partial.unlink(missing_ok=True)
    finally:
        source.close()
    return {"out": str(target), "bytes": target.stat().st_size, **counts}


def _check_backup_target(source: Path, target: Path, force: bool) -> None:
    if target.is_dir():
        raise InputError("is a folder; give the name of the backup file", path=target)
    if not target.exists():
        return
    if target.resolve() == source.resolve():
        raise InputError("is the study itself; give another file", path=target)
    if not force:
        raise InputError("already exists (--force replaces it)", path=target)
    if Path(f"{target}-wal").exists():
        raise InputError(f"{target.name}-wal is next to it (a database that is open, or was "
                         "not closed cleanly): not replaced", path=target)


def _check_is_study(source: sqlite3.Connection, study) -> None:
    try:
        tables = {row[0] for row in source.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.DatabaseError as err:
        raise InputError(f"not a lexgold study database ({err})", path=study) from None
    if not {"study", "answer", "alembic_version"} <= tables:
        raise InputError("not a lexgold study database (no study tables)", path=study)


def _copy(source: sqlite3.Connection, path: Path) -> dict:
    """The backup proper: all pages in one step (one consistent snapshot), then DELETE mode;
    the copy readable by its owner only, as the study."""
    create_private(path)
    copy = sqlite3.connect(path)
    try:
        source.backup(copy)
        copy.execute("PRAGMA journal_mode=DELETE")
        check = copy.execute("PRAGMA quick_check").fetchone()[0]
        if check != "ok":
            raise sqlite3.DatabaseError(f"the copy fails quick_check: {check}")
        return {"answers": copy.execute("SELECT count(*) FROM answer").fetchone()[0],
                "raters": copy.execute("SELECT count(*) FROM rater").fetchone()[0]}
    finally:
        copy.close()
