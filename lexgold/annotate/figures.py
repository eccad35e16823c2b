"""Study figures: what the admin view and live recruitment show, computed once, off the raters'
requests, and stored in the study database for every server process and host.

One computation (:func:`compute`) reads the answers once (:func:`~lexgold.annotate.study.
export_ratings`), runs the protocol's exclusion rules once, over the raters who completed their
tranche (HyperLex section 4.5; the same raters ``lexgold process`` would judge), and derives
from them, with vectorised pandas and SQL aggregates:

- per tranche: slots, completed, excluded, accepted and missing raters against
  ``min_accepted_raters`` (HyperLex section 4.4, :mod:`lexgold.annotate.recruit`), IAA-1 and
  IAA-2 (HyperLex section 5; SimLex-999 section 3.5), median completion minutes;
- the pairs below the minimum of accepted raters;
- the exclusions preview and the quality flags per rater (:mod:`lexgold.process.quality`),
  with each rater's platform and platform ID.

:func:`refresh` recomputes them only when the study changed: the version key counts the slots,
the completed slots and the last answer ids. With ``[study] allocation = "adaptive"`` it also
draws the allocation's picture and adds the next top-up tranche once no slot is open
(:func:`lexgold.annotate.adaptive.refresh_step`). It also tops up recruitment, as the site did in the
request of the rater who completed a tranche's last slot: when a tranche has become fully
completed since the stored figures, every tranche short of accepted raters gets new slots
(:func:`lexgold.annotate.recruit.top_up`'s rule; concurrent refreshers collide on (tranche,
number) and add nothing twice). ``lexgold serve`` runs :func:`watch` in a child process
(:func:`start_refresher`; its own interpreter, so no GIL is shared with the raters' requests,
computing at a lower priority, writing at the server's), at most every ``--figures-every`` seconds, and waiting at least
:data:`BACKOFF` times as long as the last computation took (so it uses at most a fifth of a
core); ``lexgold study figures`` runs it by hand or as a loop
(``--watch``) on another host. The admin view only reads the stored figures (:func:`load`):
one row with what the page shows (long lists cut at :data:`SHOWN`), one with the full lists.
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
from dataclasses import dataclass
from datetime import datetime

import numpy as np
import pandas as pd
from sqlalchemy import case, func, insert, select, update
from sqlalchemy.exc import IntegrityError, OperationalError, SQLAlchemyError
from sqlalchemy.orm import Session

from lexgold.annotate import models as m
from lexgold.annotate import recruit
from lexgold.annotate.clock import database_now
from lexgold.annotate.quiet import collected_warnings
from lexgold.annotate.schema import StudyConfig, config_from_dict
from lexgold.annotate.study import export_ratings
from lexgold.errors import redact
from lexgold.process import exclusions
from lexgold.process.config import process_config

#: the rows of ``study_figures``: what the admin page shows (long lists cut at :data:`SHOWN`,
#: marked raters first), and the full lists (``quality.csv``, ``study report``)
ROW_ID, DETAILS_ID = 1, 2
#: rows of each long list on the admin page
SHOWN = 200
LISTS = ("quality", "exclusions", "pairs_below")
#: ``lexgold serve --figures-every`` default (seconds)
EVERY_S = 5.0
#: a refresher waits at least this many times its last computation before the next
BACKOFF = 4.0
TRANCHE_FIELDS = [*recruit.TRANCHE_COLUMNS, "iaa1", "iaa2", "alpha_interval", "icck",
                  "median_minutes"]


@dataclass
class Stored:
    """Figures as stored: the version key they were computed from, when, and the figures."""

    version: str
    computed_at: datetime
    figures: dict


def version_key(session: Session) -> dict:
    """What the figures depend on, from four index lookups and one count: ``slots``,
    ``completed`` (slots), ``answer`` and ``checkpoint`` (the last answer ids)."""
    slots, completed = session.execute(select(
        func.count(), func.coalesce(func.sum(case((m.Slot.status == "completed", 1), else_=0)),
                                    0)).select_from(m.Slot)).one()
    answer = session.scalar(select(func.coalesce(func.max(m.Answer.id), 0)))
    checkpoint = session.scalar(select(func.coalesce(func.max(m.CheckpointAnswer.id), 0)))
    return {"slots": int(slots), "completed": int(completed), "answer": int(answer),
            "checkpoint": int(checkpoint)}


def _key_text(key: dict) -> str:
    return "{slots}:{completed}:{answer}:{checkpoint}".format(**key)


def compute(session: Session, config: StudyConfig, protocol: dict, *,
            admin: bool = True) -> dict:
    """Every figure of the admin view and recruitment (module docstring), JSON-ready; with
    ``admin=False`` only recruitment's (``tranches`` without agreement and completion times,
    ``full``; the rest empty), for a top-up.

    Returns
    -------
    dict
        ``n_answers``; ``min_accepted_raters``; ``too_fast_s`` (:func:`too_fast_s`);
        ``tranches`` (one dict per tranche with
        :data:`TRANCHE_FIELDS`; NaN as None); ``full`` (tranches without an open slot);
        ``pairs_below`` (``word1, word2, pos, accepted``); ``note`` (the rules not yet
        computable, :func:`lexgold.annotate.recruit.exclusion_forecast`); ``exclusions`` (rows
        of :func:`lexgold.process.exclusions.exclusion_table` with ``platform, platform_id``;
        the rules not yet computable exclude nobody); ``quality`` (rows of
        :func:`lexgold.process.quality.quality_flags` with ``tranche, platform, platform_id``).
    """
    ratings = export_ratings(session)
    raters = pd.DataFrame(session.execute(select(
        m.Rater.public_id, m.Rater.platform, m.Rater.external_id,
        m.Rater.completed_at.is_not(None))).all(),
        columns=["rater_id", "platform", "platform_id", "done"])
    slots, shown = recruit.slot_frame(session), recruit.shown_frame(session)
    minutes = completion_minutes(session) if admin else _none("median_minutes")
    session.commit()                   # end the read: SQLite holds its snapshot until then
    raters["platform_id"] = raters["platform_id"].fillna("")
    complete = ratings[ratings["rater_id"].isin(raters.loc[raters["done"], "rater_id"])]
    table, note = recruit.exclusion_forecast(complete, protocol)
    excluded = set() if table is None else set(exclusions.excluded_raters(table))
    found = recruit.tally(slots, shown, excluded, config.min_accepted_raters)
    notes: list[str] = []
    bws = config.task == "bws"     # Best-Worst answers: no IAA or slider quality flags
    if bws:
        notes.append("Best-Worst Scaling: agreement is the split-half reliability of "
                     "`lexgold process` (docs/process.md), not IAA")
    tranches = found["tranches"].merge(
        agreement(ratings, notes) if admin and not bws
        else _none("iaa1", "iaa2", "alpha_interval", "icck"),
        on="tranche", how="left").merge(minutes, on="tranche", how="left")[TRANCHE_FIELDS]
    ids = raters[["rater_id", "platform", "platform_id"]]
    answered = ratings.groupby(["rater_id", "tranche", "tuple_id"]).ngroups if bws \
        else len(ratings)                     # BWS: answered tuples (check tuples included)
    return {"n_answers": answered, "min_accepted_raters": config.min_accepted_raters,
            "too_fast_s": too_fast_s(protocol, config), "tranches": _records(tranches),
            "full": [int(t) for t in tranches.loc[tranches["open"] == 0, "tranche"]],
            "pairs_below": _records(found["pairs_below"]),
            "note": note,
            "exclusions": (_records(table.merge(ids, on="rater_id", how="left"))
                           if table is not None else []),
            "quality": _records(quality(ratings, ids)) if admin and not bws else [],
            "agreement_notes": notes}


def too_fast_s(protocol: dict, config: StudyConfig) -> float:
    """Seconds per pair below which a rater is marked too fast: the protocol's
    ``too_fast_s_per_pair`` when set, else the study's ``min_seconds_per_pair``."""
    limit = process_config(protocol).exclusions.too_fast_s_per_pair
    return float(limit or config.min_seconds_per_pair)


def marked(row: dict, limit: float) -> bool:
    """Is this quality row marked on the admin page (too fast, one value throughout, a
    checkpoint failed)?"""
    fast = row.get("median_s_per_pair")
    return ((fast is not None and fast < limit) or (row.get("top_value_share") or 0) >= 1
            or bool(row.get("checkpoints_failed")))


def _none(*columns: str) -> pd.DataFrame:
    """No figure for any tranche: ``tranche`` and ``columns``, no rows."""
    return pd.DataFrame({"tranche": pd.Series(dtype="int64"),
                         **{c: pd.Series(dtype=float) for c in columns}})


def agreement(ratings: pd.DataFrame, notes: list[str] | None = None) -> pd.DataFrame:
    """IAA-1 and IAA-2 per tranche (HyperLex section 5), Krippendorff's interval alpha and
    ICC(2,k) (:mod:`lexgold.process.reliability`), NaN where undefined; why a figure is
    undefined goes to ``notes`` (the admin page shows them; never the log)."""
    from lexgold.process.agreement import iaa_against_mean, iaa_pairwise
    from lexgold.process.reliability import icc, krippendorff_alpha

    rows = []
    rated = ratings[ratings["kind"] != "checkpoint"] if len(ratings) else ratings
    columns = ["tranche", "iaa1", "iaa2", "alpha_interval", "icck"]
    for tranche, frame in rated.groupby("tranche"):
        with collected_warnings() as caveats:
            rows.append({"tranche": tranche, "iaa1": iaa_pairwise(frame),
                         "iaa2": iaa_against_mean(frame),
                         "alpha_interval": krippendorff_alpha(frame, "interval"),
                         "icck": icc(frame)["icck"]})
        if notes is not None:
            notes.extend(f"tranche {tranche}: {caveat}" for caveat in caveats)
    return pd.DataFrame(rows, columns=columns)


def quality(ratings: pd.DataFrame, ids: pd.DataFrame) -> pd.DataFrame:
    """Quality flags per rater (:func:`lexgold.process.quality.quality_flags`) with the
    rater's tranche (the one most of its answers are in; the lowest on a tie), platform and
    platform ID; raters in tranche order."""
    from lexgold.process.quality import quality_flags

    if ratings.empty:
        return pd.DataFrame()
    flags = quality_flags(ratings)
    counts = ratings.groupby(["rater_id", "tranche"]).size().rename("n").reset_index()
    counts = counts.sort_values(["rater_id", "n", "tranche"], ascending=[True, False, True],
                                kind="stable").drop_duplicates("rater_id")
    flags = flags.merge(counts[["rater_id", "tranche"]], on="rater_id", how="left")
    flags = flags.sort_values(["tranche", "rater_id"], kind="stable")
    return flags.merge(ids, on="rater_id", how="left")


def completion_minutes(session: Session) -> pd.DataFrame:
    """Median minutes from entering (consent) to completion, per tranche, completed raters."""
    rows = session.execute(
        select(m.Tranche.number, m.Rater.created_at, m.Rater.completed_at)
        .join(m.Slot, (m.Slot.id == m.Rater.slot_id) & (m.Slot.rater_id == m.Rater.id))
        .join(m.Tranche, m.Tranche.id == m.Slot.tranche_id)
        .where(m.Rater.completed_at.is_not(None))).all()
    frame = pd.DataFrame(rows, columns=["tranche", "created_at", "completed_at"])
    frame["minutes"] = (pd.to_datetime(frame["completed_at"]) -
                        pd.to_datetime(frame["created_at"])).dt.total_seconds() / 60.0
    return frame.groupby("tranche", as_index=False).agg(median_minutes=("minutes", "median"))


def _records(frame: pd.DataFrame) -> list[dict]:
    """Rows as plain Python values (numpy scalars unwrapped, NaN and NA as None)."""
    return [{k: _plain(v) for k, v in row.items()} for row in frame.to_dict("records")]


def _plain(value):
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


# -- storing ------------------------------------------------------------------------------------

def load(session: Session, *, details: bool = False) -> Stored | None:
    """The stored figures (with ``details``: the full lists), or None before the first
    computation."""
    row = session.get(m.StudyFigures, DETAILS_ID if details else ROW_ID)
    if row is None:
        return None
    return Stored(row.version, row.computed_at, json.loads(row.figures))


def save(session: Session, key: dict, computed_at: datetime, figures: dict) -> None:
    """Store ``figures`` (replacing the row; commits). The JSON is written before the
    transaction starts, so the write lock is held for one row only. Another process storing at
    the same moment wins (IntegrityError is left to the caller)."""
    shown = {**figures, "key": key}
    limit = figures.get("too_fast_s", 0.0)
    for name in LISTS:
        rows = figures.get(name, [])
        if name == "quality":
            rows = sorted(rows, key=lambda q: not marked(q, limit))
        shown[name] = rows if isinstance(rows, str) else rows[:SHOWN]
        shown[f"n_{name}"] = 0 if isinstance(rows, str) else len(rows)
    texts = {ROW_ID: json.dumps(shown, allow_nan=False, default=str),
             DETAILS_ID: json.dumps({name: figures.get(name, []) for name in LISTS},
                                    allow_nan=False, default=str)}
    session.commit()
    table = m.StudyFigures.__table__
    for row_id, text in texts.items():   # two statements: the old rows are never read here
        values = {"version": _key_text(key), "computed_at": computed_at, "figures": text}
        if not session.execute(update(table).where(table.c.id == row_id)
                               .values(**values)).rowcount:
            session.execute(insert(table).values(id=row_id, **values))
    session.commit()


# -- refreshing and topping up ------------------------------------------------------------------

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
    protocol = recruit.protocol_from_text(study.protocol_text)
    figures = (run or _call)(compute, reads, config, protocol)
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
        from lexgold.annotate.adaptive import refresh_step

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


def add_slots(session: Session, figures: dict, key: dict, minimum: int) -> dict:
    """Give every tranche short of ``minimum`` accepted raters beyond its open slots the
    slots it lacks (HyperLex section 4.4), and update ``figures`` and ``key`` to match
    (flushed, not committed; a concurrent top-up raises IntegrityError)."""
    table = pd.DataFrame(figures["tranches"], columns=TRANCHE_FIELDS)
    short = table[table["accepted"] + table["open"] < minimum]
    if short.empty:
        return {}
    added = recruit._add_slots(session, short, minimum)
    for row in figures["tranches"]:
        count = added.get(int(row["tranche"]), 0)
        row["slots"] += count
        row["open"] += count
    figures["full"] = [t for t in figures["full"] if t not in added]
    key["slots"] += sum(added.values())
    return added


def top_up(session: Session, config: StudyConfig, tranche_id: int | None = None) -> dict:
    """:func:`lexgold.annotate.recruit.top_up`: compute recruitment's figures and add the
    missing slots (one session; ``lexgold study top-up`` and ``lexgold study rehearse``, which
    has no refresher). The admin view's figures are left to the refresher."""
    if config.min_accepted_raters <= 0:
        return {}
    try:
        if tranche_id is not None and session.scalar(
                select(func.count()).select_from(m.Slot).where(
                    m.Slot.tranche_id == tranche_id, m.Slot.status != "completed")):
            session.commit()
            return {}
        figures = compute(session, config, recruit.study_protocol(session), admin=False)
        added = add_slots(session, figures, version_key(session), config.min_accepted_raters)
        session.commit()
        return added
    except (IntegrityError, OperationalError):
        session.rollback()     # a concurrent top-up took these numbers, or the database is busy
        return {}


def watch(url: str, every_s: float = EVERY_S, parent: int | None = None,
          rounds: int | None = None, nice: int = 0) -> None:
    """Refresh the figures of the study at ``url`` in a loop: every ``every_s`` seconds, or
    :data:`BACKOFF` times the last computation if longer; stops when the process ``parent``
    is gone (the server that started it) or after ``rounds``. A database error is reported on
    stderr and retried at the next round.

    ``nice`` (> 0) lowers the priority of the computation only (its own thread; Linux keeps
    a priority per thread): the short writes that follow hold SQLite's write lock, and a
    process of low priority holding it on a busy machine made raters' writes wait over 5 s
    (the 503 retry page; issue 22)."""
    from concurrent.futures import ThreadPoolExecutor

    from lexgold.annotate.db import make_engine, session_factory

    engine = make_engine(url, statement_timeout_s=600)
    reads, writes = session_factory(engine, write=False), session_factory(engine)
    worker = ThreadPoolExecutor(1, initializer=_lower_priority, initargs=(nice,))

    def run(function, *args):
        return worker.submit(function, *args).result()

    done = 0
    try:
        while (parent is None or os.getppid() == parent) and (rounds is None or done < rounds):
            started = time.perf_counter()
            try:
                with reads() as r, writes() as w:
                    refresh(r, w, run=run)
            except SQLAlchemyError as err:
                print(f"lexgold figures: {redact(str(err).splitlines()[0])}", file=sys.stderr)
            done += 1
            if rounds is None or done < rounds:
                time.sleep(max(every_s, BACKOFF * (time.perf_counter() - started)))
    finally:
        worker.shutdown()
        engine.dispose()


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
    import subprocess

    env = {**os.environ, URL_VARIABLE: url}
    return subprocess.Popen([sys.executable, "-m", "lexgold.annotate.figures", str(every_s),
                             str(os.getpid())], env=env, start_new_session=True)


class Supervised:
    """The refresher child of :func:`start_refresher`, restarted when it dies (a crash, an OOM
    kill, ``kill -9``): a thread of the server polls it every second (which also reaps it: no
    ``<defunct>`` process), says so through ``log`` and starts a new one, waiting 1 s before
    the first restart, twice as long after each quick death, at most 60 s. :meth:`stop` ends
    both."""

    def __init__(self, url: str, every_s: float, log):
        import threading

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


#: figures older than this many refresh periods, with answers since, are said to be stale
STALE_PERIODS = 6


def stale(stored: Stored | None, answers_since: int, now: datetime,
          every_s: float) -> float | None:
    """How old (seconds) the stored figures are when they should have been refreshed by now:
    answers came in since, and more than :data:`STALE_PERIODS` periods went by (a period is
    ``every_s``, or :data:`BACKOFF` times the last computation if longer). None otherwise."""
    if stored is None or answers_since <= 0 or every_s <= 0:
        return None
    period = max(every_s, BACKOFF * float(stored.figures.get("seconds") or 0.0))
    age = (now - stored.computed_at).total_seconds()
    return age if age > STALE_PERIODS * period else None


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
