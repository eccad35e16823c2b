"""Reading a study's ratings back: the long format ``lexgold agree`` and ``lexgold process`` read.

``export_ratings`` returns the long format of docs/contract.md (``rater_id, tranche, word1,
word2, rating, pos, kind, answered_at``; plus ``topic`` for topic studies and ``start_value``,
``response_ms``, ``server_ms``, then the rater checks); ``export_chunks`` and ``write_export``
stream it a few hundred raters at a time (the SQL is :mod:`lexgold.study.export_sql`). A
Best-Worst Scaling study's answers are one row per pair of an answered tuple
(:func:`export_bws`; Kiritchenko & Mohammad 2016, section 3).
"""

from __future__ import annotations

import re

import pandas as pd
from sqlalchemy import select
from sqlalchemy.orm import Session

from lexgold.study import models as m
from lexgold.study.design import option_order
from lexgold.study.export_sql import (
    EXPORT_COLUMNS,
    RATER_CHECKS,
    keeps_topic,
    write_study_export,
)


def export_ratings(session: Session, *, complete_only: bool = False) -> pd.DataFrame:
    """Every stored answer in the long format (one row per answer, checkpoints included).

    Checkpoint rows carry 1 (correct) or 0 (wrong) in ``rating`` and the chosen pair in
    ``word1, word2``. With ``complete_only`` only raters who finished their tranche are kept.
    Sorted by tranche, rater and answer time; :func:`export_chunks` gives the same rows a few
    hundred raters at a time.
    """
    study = session.scalars(select(m.Study)).one()
    if study.config.get("task") == "bws":     # tuples: lexgold.process.bws' long format
        return export_bws(session, complete_only=complete_only)
    # Core rows as plain tuples (as export_chunks): pandas builds its frame at C speed
    rated = list(map(tuple, session.connection().execute(_answers_query()).all()))
    checks = _checkpoint_rows(session, study)
    frame = _export_frame(rated, checks, study, _rater_checks(session), complete_only)
    if not (frame["topic"] != "").any() and study.config["group_by"] != "topic":
        frame = frame.drop(columns="topic")
    return frame


#: raters per chunk of :func:`export_chunks` (well under SQLite's 999 bound parameters)
EXPORT_CHUNK_RATERS = 500


def export_chunks(session: Session, *, complete_only: bool = False,
                  raters: int = EXPORT_CHUNK_RATERS):
    """:func:`export_ratings` in pieces: yields frames of at most ``raters`` raters each whose
    concatenation is the rows of :func:`export_ratings` in its order (the same CSV, header
    once), so an export of any size holds only one piece in memory.

    The (tranche, rater) keys are read and sorted first, as :func:`export_ratings` sorts;
    each piece then reads the answers of its raters only. Yields at least one frame (empty
    when nothing is stored), so the header is always written.
    """
    study = session.scalars(select(m.Study)).one()
    if study.config.get("task") == "bws":     # one piece: lexgold.annotate.bws_site
        yield export_ratings(session, complete_only=complete_only)
        return
    keep_topic = keeps_topic(session, study, complete_only)
    keys = set(session.execute(
        _answers_query(complete_only).with_only_columns(m.Tranche.number, m.Rater.public_id,
                                                        m.Rater.id).order_by(None)
        .distinct()).all())
    keys |= set(session.execute(
        _checkpoints_query(complete_only).with_only_columns(m.Tranche.number, m.Rater.public_id,
                                                            m.Rater.id).distinct()).all())
    keys = sorted(keys, key=lambda key: (key[0], key[1]))
    checks = _rater_checks(session)
    for start in range(0, max(len(keys), 1), raters):
        part = keys[start:start + raters]
        ids = sorted({key[2] for key in part})
        # Core rows as plain tuples: no ORM loading, and pandas builds its frame at C speed
        rated = list(map(tuple, session.connection().execute(
            _answers_query(complete_only, ids)).all()))
        points = _checkpoint_rows(session, study, complete_only, ids)
        frame = _export_frame(rated, points, study, checks, complete_only)
        wanted = pd.MultiIndex.from_tuples([key[:2] for key in part], names=["t", "r"])
        frame = frame[pd.MultiIndex.from_arrays([frame["tranche"], frame["rater_id"]])
                      .isin(wanted)] if part else frame
        yield frame if keep_topic else frame.drop(columns="topic")


def write_export(session: Session, handle, *, complete_only: bool = False,
                 escape: bool = False, raters: int | None = None) -> tuple[int, int]:
    """Write :func:`export_ratings` as CSV to the text ``handle``: the bytes of
    ``export_ratings(...).to_csv(handle, index=False)`` (through :func:`escape_formulas` with
    ``escape``). Returns (answers, raters).

    Without ``escape`` and ``raters`` the database writes the CSV lines of a slider study
    (:mod:`lexgold.study.export_sql`, `lexgold study export`); otherwise (and for a
    Best-Worst study, :mod:`lexgold.annotate.bws_site`) the rows go through
    pandas, ``raters`` (default :data:`EXPORT_CHUNK_RATERS`) raters at a time
    (:func:`export_chunks`)."""
    if not escape and raters is None:
        written = write_study_export(session, handle, complete_only=complete_only)
        if written is not None:
            return written
    answers, seen = 0, set()
    for number, frame in enumerate(export_chunks(session, complete_only=complete_only,
                                                 raters=raters or EXPORT_CHUNK_RATERS)):
        (escape_formulas(frame) if escape else frame).to_csv(handle, index=False,
                                                             header=number == 0)
        answers += len(frame)
        seen.update(frame["rater_id"].unique())
    return answers, len(seen)


def _answers_query(complete_only: bool = False, raters=None):
    query = (select(m.Rater.public_id, m.Tranche.number, m.Pair.word1, m.Pair.word2,
                    m.Answer.rating, m.Pair.pos, m.Item.kind, m.Answer.answered_at,
                    m.Pair.topic, m.Answer.start_value, m.Answer.response_ms,
                    m.Rater.completed_at, m.Answer.server_ms)
             .join(m.Rater, m.Answer.rater_id == m.Rater.id)
             .join(m.Item, m.Answer.item_id == m.Item.id)
             .join(m.Tranche, m.Item.tranche_id == m.Tranche.id)
             .join(m.Pair, m.Item.pair_id == m.Pair.id)
             .order_by(m.Answer.id))
    if complete_only:
        query = query.where(m.Rater.completed_at.is_not(None))
    return query if raters is None else query.where(m.Answer.rater_id.in_(raters))


def _export_frame(rated, checks, study, rater_checks, complete_only) -> pd.DataFrame:
    """The export's rows (answers, then checkpoint answers) as :func:`export_ratings` gives
    them, before the ``topic`` column is dropped."""
    columns = EXPORT_COLUMNS + ["topic", "start_value", "response_ms", "completed_at",
                                "server_ms"]
    frame = pd.DataFrame(rated, columns=columns)
    frame = pd.concat([frame, pd.DataFrame(checks, columns=columns)], ignore_index=True)
    if complete_only:
        frame = frame[frame["completed_at"].notna()]
    frame = frame.drop(columns="completed_at").merge(rater_checks, on="rater_id", how="left")
    frame["answered_at"] = pd.to_datetime(frame["answered_at"]).dt.strftime("%Y-%m-%dT%H:%M:%SZ")
    for column in ("start_value", "response_ms", "server_ms"):
        frame[column] = frame[column].astype("Int64")
    frame["rating"] = frame["rating"].astype(int)
    return frame.sort_values(["tranche", "rater_id", "answered_at"], kind="stable",
                             ignore_index=True)


#: first characters that make a spreadsheet read a cell as a formula (OWASP "CSV Injection")
FORMULA_START = ("=", "+", "@", "\t", "\r")
#: a cell starting with ``-`` that a spreadsheet can only read as a number, a name or a cell
#: reference (rater IDs such as ``-Xb3_k``, negative numbers): nothing to run, left as it is
PLAIN_MINUS = re.compile(r"-[A-Za-z0-9_.-]*")


def escape_formulas(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy in which every text cell a spreadsheet would run as a formula gets a leading
    ``'`` (OWASP's advice against CSV injection), so a pair word such as ``=HYPERLINK(...)``
    is shown as text, never run, when the export is opened in a spreadsheet.

    Escaped: cells starting with ``= + @``, tab or CR, and cells starting with ``-`` followed
    by anything but letters, digits, ``_ . -`` (``-2+cmd|...``, ``-HYPERLINK(...)``). Left as
    they are: ``-`` followed only by those characters (rater IDs like ``-Xb3_k``, which must
    match the database, and negative numbers).

    >>> escape_formulas(pd.DataFrame({"a": ["-Xb3_k", "-1.5", "-2+3", "=1+1", "cat"]}))["a"].tolist()
    ['-Xb3_k', '-1.5', "'-2+3", "'=1+1", 'cat']
    """
    out = frame.copy()
    for column in out.columns:
        if not pd.api.types.is_numeric_dtype(out[column]):
            out[column] = out[column].map(lambda v: "'" + v if _runs(v) else v)
    return out


def _runs(value) -> bool:
    """Would a spreadsheet run this cell as a formula? (see :func:`escape_formulas`)"""
    if not isinstance(value, str):
        return False
    return value.startswith(FORMULA_START) or (value.startswith("-")
                                                and not PLAIN_MINUS.fullmatch(value))




def _rater_checks(session: Session) -> pd.DataFrame:
    """``platform``; ``platform_confirmed`` 1 when the platform ID was found in the platform's
    participant list (``lexgold study confirm``), else 0 (never for the anonymous link);
    ``fast_pages`` (pages sent faster than ``min_seconds_per_pair``); ``browsers`` used."""
    rows = session.execute(select(m.Rater.public_id, m.Rater.platform, m.Rater.confirmed,
                                  m.Rater.fast_pages, m.Rater.browsers)).all()
    frame = pd.DataFrame(rows, columns=["rater_id"] + RATER_CHECKS)
    frame["platform_confirmed"] = frame["platform_confirmed"].astype(bool).astype(int)
    return frame


def _checkpoints_query(complete_only: bool = False, raters=None):
    query = (select(m.Rater.public_id, m.Tranche.number, m.Step.checkpoint, m.Step.batch,
                    m.CheckpointAnswer.choice, m.CheckpointAnswer.correct,
                    m.CheckpointAnswer.answered_at, m.CheckpointAnswer.response_ms,
                    m.Rater.completed_at, m.CheckpointAnswer.server_ms)
             .join(m.Rater, m.CheckpointAnswer.rater_id == m.Rater.id)
             .join(m.Step, m.CheckpointAnswer.step_id == m.Step.id)
             .join(m.Tranche, m.Step.tranche_id == m.Tranche.id))
    if complete_only:
        query = query.where(m.Rater.completed_at.is_not(None))
    if raters is not None:
        query = query.where(m.CheckpointAnswer.rater_id.in_(raters)).order_by(
            m.CheckpointAnswer.id)
    return query


def _checkpoint_rows(session: Session, study, complete_only: bool = False,
                     raters=None) -> list[tuple]:
    checkpoints = study.config["checkpoints"]
    rows = session.connection().execute(_checkpoints_query(complete_only, raters)).all()
    out = []
    for rater, tranche, index, batch, choice, correct, at, ms, done, server in rows:
        word1, word2 = checkpoints[index]["options"][choice]
        out.append((rater, tranche, word1, word2, int(correct), batch, "checkpoint", at, "",
                    None, ms, done, server))
    return out




#: the columns of a BWS study's export (:mod:`lexgold.process.bws`' long format, then timing
#: and the rater checks of :func:`lexgold.study.export.export_ratings`)
BWS_EXPORT_COLUMNS = ["rater_id", "tranche", "tuple_id", "position", "word1", "word2", "pos",
                      "rating", "kind", "answered_at", "response_ms", "server_ms"]


def export_bws(session: Session, *, complete_only: bool = False) -> pd.DataFrame:
    """Every stored BWS answer in the long format of :mod:`lexgold.process.bws` (one row per
    pair of an answered tuple; check tuples as ``tuple_id`` ``check-<n>``, ``kind``
    ``checkpoint``, positions as the rater saw them), then ``response_ms``, ``server_ms`` and
    the rater checks (``platform``, ``platform_confirmed``, ``fast_pages``, ``browsers``).
    Sorted by tranche, rater, answer time, tuple and position."""
    study = session.scalars(select(m.Study)).one()
    size = int(study.config["bws"]["tuple_size"])
    done = m.Rater.completed_at.is_not(None)
    query = (select(m.Rater.public_id, m.Tranche.number, m.Item.tuple_id, m.Item.position,
                    m.Pair.word1, m.Pair.word2, m.Pair.pos, m.Answer.rating, m.Item.kind,
                    m.Answer.answered_at, m.Answer.response_ms, m.Answer.server_ms)
             .join(m.Rater, m.Answer.rater_id == m.Rater.id)
             .join(m.Item, m.Answer.item_id == m.Item.id)
             .join(m.Tranche, m.Item.tranche_id == m.Tranche.id)
             .join(m.Pair, m.Item.pair_id == m.Pair.id).order_by(m.Answer.id))
    rows = [(r, t, str(tid), pos % size, *rest)
            for r, t, tid, pos, *rest in session.execute(
                query.where(done) if complete_only else query).all()]
    checks = study.config["bws"]["checkpoints"]
    cquery = (select(m.Rater.public_id, m.Rater.id, m.Tranche.number, m.Step.id,
                     m.Step.checkpoint, m.CheckpointAnswer.choice, m.CheckpointAnswer.worst,
                     m.CheckpointAnswer.answered_at, m.CheckpointAnswer.response_ms,
                     m.CheckpointAnswer.server_ms)
              .join(m.Rater, m.CheckpointAnswer.rater_id == m.Rater.id)
              .join(m.Step, m.CheckpointAnswer.step_id == m.Step.id)
              .join(m.Tranche, m.Step.tranche_id == m.Tranche.id)
              .order_by(m.CheckpointAnswer.id))
    for public, rid, tranche, step_id, index, best, worst, at, ms, server in session.execute(
            cquery.where(done) if complete_only else cquery).all():
        pairs = checks[index]["pairs"]
        for shown, p in enumerate(option_order(len(pairs), rid, step_id)):
            rows.append((public, tranche, f"check-{index + 1}", shown, pairs[p][0], pairs[p][1],
                         "", int(p == best) - int(p == (worst if worst is not None else -1)),
                         "checkpoint", at, ms, server))
    frame = pd.DataFrame(rows, columns=BWS_EXPORT_COLUMNS)
    frame["answered_at"] = pd.to_datetime(frame["answered_at"]).dt.strftime(
        "%Y-%m-%dT%H:%M:%SZ")
    for column in ("response_ms", "server_ms"):
        frame[column] = frame[column].astype("Int64")
    frame["rating"] = frame["rating"].astype(int)
    frame = frame.merge(_rater_checks(session), on="rater_id", how="left")
    return frame.sort_values(["tranche", "rater_id", "answered_at", "tuple_id", "position"],
                             kind="stable", ignore_index=True)
