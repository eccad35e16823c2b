"""The figures refresher: the background process that keeps a live study's figures current.

:func:`refresh` recomputes the figures (:func:`lexgold.live.figures.compute`) only when the
study changed (the version key counts the slots, the completed slots and the last answer ids),
tops up recruitment as the site did in the request of the rater who completed a tranche's last
slot (:func:`lexgold.live.recruit.add_slots`: when a tranche has become fully completed since
the stored figures, every tranche short of accepted raters gets new slots; concurrent
refreshers collide on (tranche, number) and add nothing twice), and, with ``[study]
allocation = "adaptive"``, lets the allocator add the next tranche
(:func:`lexgold.live.allocator.refresh_step`). ``lexgold serve`` runs :func:`watch` in a child
process (:func:`start_refresher`; its own interpreter, so no GIL is shared with the raters'
requests, computing at a lower priority, writing at the server's), at most every
``--figures-every`` seconds, waiting at least :data:`~lexgold.live.figures.BACKOFF` times as
long as the last computation took; :class:`Supervised` restarts it when it dies. ``lexgold study
figures`` runs it by hand or as a loop (``--watch``) on another host.

On PostgreSQL, where several app hosts serve one study, :func:`watch` refreshes only while it
holds the study's advisory lock (:class:`StudyLock`): one refresher per study whatever the number
of hosts; the others try again every period and one of them takes over within a period of the
holder's death (the lock is a session-level one, released when its connection closes). SQLite
(one host) takes no lock.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from functools import partial

from sqlalchemy import select, text
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import IntegrityError, OperationalError, SQLAlchemyError
from sqlalchemy.orm import Session

from lexgold.errors import redact
from lexgold.live.allocator import refresh_step
from lexgold.live.figures import BACKOFF, EVERY_S, ROW_ID, _key_text, compute, load, save, version_key
from lexgold.live.recruit import add_slots
from lexgold.live.tally import protocol_from_text
from lexgold.study import models as m
from lexgold.study.clock import database_now
from lexgold.study.config import config_from_dict
from lexgold.study.db import make_engine, session_factory


def refresh(reads: Session, writes: Session, *, now: datetime | None = None,
            force: bool = False, run=None) -> dict:
    """Recompute and store the figures if the study changed since they were stored (or
    ``force``), topping up recruitment when a tranche has become fully completed since.

    ``reads`` computes (never holding the write lock; on SQLite a writing session would keep
    every rater waiting), ``writes`` adds slots and stores. ``run(function, *args)`` runs the
    computation (default: here; :func:`watch` runs it in a thread of lower priority, so the
    writes, which hold SQLite's write lock, run at the server's priority).

    Returns
    -------
    dict
        ``computed`` (bool), ``seconds`` (computation), ``added`` (``{tranche: slots}``).
    """
    study = reads.scalars(select(m.Study)).one()
    config = config_from_dict(study.config)
    key = version_key(reads)
    if not force and reads.scalar(select(m.StudyFigures.version).where(
            m.StudyFigures.id == ROW_ID)) == _key_text(key):
        reads.commit()
        return {"computed": False, "seconds": 0.0, "added": {}}
    stored, now = load(reads), now or database_now(reads)
    reads.commit()
    started = time.perf_counter()
    protocol = protocol_from_text(study.protocol_text)
    figures = (run or _call)(partial(compute, previous=stored.figures if stored else None),
                             reads, config, protocol)
    seconds = time.perf_counter() - started
    added = {}
    before = set(stored.figures.get("full", [])) if stored is not None else set()
    try:
        if config.min_accepted_raters > 0 and set(figures["full"]) - before:
            added = add_slots(writes, figures, key, config.min_accepted_raters)
            writes.commit()
    except (IntegrityError, OperationalError):
        writes.rollback()     # another refresher took these numbers, or the database is busy
        return {"computed": True, "seconds": seconds, "added": {}}
    if config.allocation == "adaptive":
        step = refresh_step(reads, writes, config, figures, allocate_now=not added)
        if step["status"] == "added":
            added = {step["tranche"]: step["slots"]}
    try:
        save(writes, key, now, {**figures, "seconds": seconds})
    except (IntegrityError, OperationalError):
        writes.rollback()     # stored by another refresher, or busy: the next round stores
    return {"computed": True, "seconds": seconds, "added": added}


def _call(function, *args):
    return function(*args)


def watch(url: str, every_s: float = EVERY_S, parent: int | None = None,
          rounds: int | None = None, nice: int = 0) -> None:
    """Refresh the figures of the study at ``url`` in a loop: every ``every_s`` seconds, or
    :data:`BACKOFF` times the last computation if longer; stops when the process ``parent``
    is gone (the server that started it) or after ``rounds``. A database error is reported on
    stderr and retried at the next round. On PostgreSQL a round refreshes only while this
    process holds the study's :class:`StudyLock` (one refresher per study across hosts).

    ``nice`` (> 0) lowers the priority of the computation only (its own thread; Linux keeps
    a priority per thread): the short writes that follow hold SQLite's write lock, and a
    process of low priority holding it on a busy machine made raters' writes wait over 5 s
    (the 503 retry page)."""
    engine = make_engine(url, statement_timeout_s=600)
    reads, writes = session_factory(engine, write=False), session_factory(engine)
    worker = ThreadPoolExecutor(1, initializer=_lower_priority, initargs=(nice,))
    lock = StudyLock(engine) if engine.dialect.name == "postgresql" else None

    def run(function, *args):
        return worker.submit(function, *args).result()

    done = 0
    try:
        while (parent is None or os.getppid() == parent) and (rounds is None or done < rounds):
            started = time.perf_counter()
            try:
                if lock is None or lock.held():
                    with reads() as r, writes() as w:
                        refresh(r, w, run=run)
            except SQLAlchemyError as err:
                print(f"lexgold figures: {redact(str(err).splitlines()[0])}", file=sys.stderr)
            done += 1
            if rounds is None or done < rounds:
                time.sleep(max(every_s, BACKOFF * (time.perf_counter() - started)))
    finally:
        worker.shutdown()
        if lock is not None:
            lock.release()
        engine.dispose()


def lock_key(connection: Connection) -> int:
    """The advisory lock key of the study on ``connection``: a signed 64-bit integer from the
    SHA-256 of the study's identity (its schema, name, seed, codes and the checksums of its
    protocol and pairs), so two studies on one PostgreSQL server never share a refresher."""
    study = connection.execute(select(
        m.Study.__table__.c.name, m.Study.__table__.c.seed, m.Study.__table__.c.completion_code,
        m.Study.__table__.c.screenout_code, m.Study.__table__.c.protocol_sha256,
        m.Study.__table__.c.pairs_sha256)).one()
    schema = connection.execute(text("SELECT current_schema()")).scalar() or ""
    identity = "\x1f".join(["lexgold figures", schema, *(str(value) for value in study)])
    return int.from_bytes(hashlib.sha256(identity.encode()).digest()[:8], "big", signed=True)


class StudyLock:
    """The PostgreSQL advisory lock (``pg_try_advisory_lock``, session level) that lets one
    refresher per study run, whatever the number of hosts: held on a connection of its own
    for as long as this process lives; released when that connection closes (the process
    died, or the database dropped it), after which another host's :meth:`held` takes it.

    :meth:`held` is asked every round: it checks that the connection holding the lock is still
    alive, or tries to take the lock (without waiting). It says on stderr when this process
    takes the lock and when it loses it."""

    def __init__(self, engine: Engine):
        self.engine, self.connection, self.key = engine, None, None

    def held(self) -> bool:
        if self.connection is not None:
            try:
                self.connection.exec_driver_sql("SELECT 1")
                self.connection.commit()
                return True
            except SQLAlchemyError:
                self.release()
                print("lexgold figures: lost the study's refresher lock (database connection "
                      "closed); trying again", file=sys.stderr)
        connection = self.engine.connect()
        try:
            if self.key is None:
                self.key = lock_key(connection)
            taken = connection.execute(text("SELECT pg_try_advisory_lock(:key)"),
                                       {"key": self.key}).scalar()
            connection.commit()
        except BaseException:
            connection.invalidate()
            raise
        if not taken:
            connection.close()
            return False
        self.connection = connection
        print(f"lexgold figures: this process (pid {os.getpid()}) refreshes the study's figures "
              f"(PostgreSQL advisory lock {self.key}); other hosts' refreshers wait",
              file=sys.stderr, flush=True)
        return True

    def release(self) -> None:
        """Close the lock's connection (closed, not pooled: a pooled one would keep the lock)."""
        if self.connection is not None:
            connection, self.connection = self.connection, None
            try:
                connection.invalidate()
                connection.close()
            except SQLAlchemyError:
                pass


def _lower_priority(nice: int) -> None:
    """Lower the calling thread's priority by ``nice`` (per thread on Linux; where ``os.nice``
    applies to the whole process, the whole refresher, as before)."""
    if nice > 0 and hasattr(os, "nice"):
        os.nice(nice)


def start_refresher(url: str, every_s: float = EVERY_S):
    """:func:`watch` in a child process (its own interpreter, so no GIL is shared with the
    raters' requests; at a lower priority, :data:`NICE`), which stops by itself when this
    process is gone; returns the
    :class:`subprocess.Popen` (``terminate()`` it at shutdown). The URL goes through the
    environment: a password in it never shows on a command line."""
    env = {**os.environ, URL_VARIABLE: url}
    return subprocess.Popen([sys.executable, "-m", "lexgold.live.refresher", str(every_s),
                             str(os.getpid())], env=env, start_new_session=True)


class Supervised:
    """The refresher child of :func:`start_refresher`, restarted when it dies (a crash, an OOM
    kill, ``kill -9``): a thread of the server polls it every second (which also reaps it: no
    ``<defunct>`` process), says so through ``log`` and starts a new one, waiting 1 s before
    the first restart, twice as long after each quick death, at most 60 s. :meth:`stop` ends
    both."""

    def __init__(self, url: str, every_s: float, log):
        self.url, self.every_s, self.log, self.restarts = url, every_s, log, 0
        self._lock, self._stopping = threading.Lock(), threading.Event()
        self.process = start_refresher(url, every_s)
        self._thread = threading.Thread(target=self._watch, name="figures-supervisor",
                                        daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        delay, started = 1.0, time.monotonic()
        while not self._stopping.wait(1.0):
            code = self.process.poll()
            if code is None:
                continue
            lived = time.monotonic() - started
            delay = 1.0 if lived > 60 else min(60.0, delay * 2) if self.restarts else 1.0
            # 0 also when gunicorn's arbiter (serve --workers) reaped it first: status unknown
            how = f"killed by signal {-code}" if code < 0 else f"exit status {code}" if code \
                else "exited"
            self.log(f"figures refresher (pid {self.process.pid}) stopped ({how}) after "
                     f"{lived:.0f} s: restarting it in {delay:.0f} s")
            if self._stopping.wait(delay):
                return
            with self._lock:
                if self._stopping.is_set():
                    return
                self.process, started = start_refresher(self.url, self.every_s), \
                    time.monotonic()
                self.restarts += 1

    def stop(self) -> None:
        with self._lock:
            self._stopping.set()
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(10)
        self._thread.join(5)


#: the environment variable :func:`start_refresher` passes the database URL in
URL_VARIABLE = "LEXGOLD_FIGURES_URL"


#: the refresher's scheduling priority below the server's (``os.nice``): on a busy machine the
#: raters' requests get the CPU first
NICE = 10


if __name__ == "__main__":         # started by start_refresher
    try:
        watch(os.environ[URL_VARIABLE], float(sys.argv[1]), int(sys.argv[2]), nice=NICE)
    except KeyboardInterrupt:
        pass
