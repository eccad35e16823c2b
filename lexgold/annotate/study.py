"""Creating a study in a database, and reading it back: progress and the ratings export.

``create_study`` reads a protocol and a pair set, runs the tranche designer and stores the
design, so every rater of a tranche sees the same groups. ``export_ratings`` writes the long
format of docs/contract.md (``rater_id, tranche, word1, word2, rating, pos, kind, answered_at``;
plus ``topic`` for topic studies and ``start_value``, ``response_ms``, ``server_ms``), which
``lexgold agree`` and ``lexgold process`` read.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import unicodedata
from pathlib import Path

import numpy as np
import pandas as pd
from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from lexgold.annotate import models as m
from lexgold.annotate.clock import database_now
from lexgold.annotate.db import check_connects, make_engine, session_factory, upgrade
from lexgold.annotate.design import design_study
from lexgold.annotate.export_sql import (  # noqa: F401 (names of this module, moved there)
    DESCRIPTION_VERSION,
    EXPORT_COLUMNS,
    RATER_CHECKS,
    keeps_topic,
    study_description,
    write_study_export,
)
from lexgold.annotate.models import ENTRY_KINDS
from lexgold.annotate.pairs import read_study_pairs
from lexgold.annotate.schema import config_to_dict, load_study_config
from lexgold.errors import InputError
from lexgold.languages.packs import pack_record
from lexgold.manifest import manifest_beside
from lexgold.protocols import load_protocol


def create_study(protocol: str | Path, pairs: str | Path, url: str, *, seed: int = 0,
                 name: str | None = None, completion_code: str | None = None,
                 screenout_code: str | None = None, completion_url: str = "",
                 entries: dict | None = None, topics: str | Path | None = None) -> dict:
    """Design a study and store it in the (new or empty) database at ``url``.

    ``topics`` (topic studies): the TR9856 topics file whose definitions are shown to raters as
    the topics' titles; by default the builder's default topics file when it defines every
    topic of the pair file (else the topic ids are shown).

    Returns
    -------
    dict
        The design report (see :func:`lexgold.annotate.design.design_study`) plus ``slots``,
        ``completion_code`` and ``screenout_code`` (given, or drawn at random).

    Raises
    ------
    InputError
        Bad protocol or pair file, or a database that already holds a study.
    """
    if completion_url and not re.fullmatch(r"https?://[^\s\"'<>]+", completion_url):
        raise InputError("expected an http(s) URL (with {code} where the code goes)",
                         field="completion-url")
    if entries is None:
        entries = {"platforms": list(ENTRY_KINDS), "strict_ids": False}
    unknown = set(entries.get("platforms", [])) - set(ENTRY_KINDS)
    if unknown or not entries.get("platforms"):
        raise InputError(f"expected one or more of {', '.join(ENTRY_KINDS)}", field="accept")
    if name is not None and any(unicodedata.category(c) in ("Cc", "Zl", "Zp") for c in name):
        raise InputError("control characters (line breaks, tabs, ...) are not allowed in a "
                         "study name", field="name")
    _check_lengths(name=name, completion_code=completion_code, screenout_code=screenout_code,
                   completion_url=completion_url)
    spec = load_protocol(protocol)
    config = load_study_config(spec)
    _check_lengths(protocol_name=str(spec.get("name", "")),
                   name=None if name else str(spec.get("name", Path(spec["_path"]).stem)))
    if config.min_accepted_raters > 0:   # recruitment runs the [process.exclusions] rules
        from lexgold.process.config import process_config
        process_config(spec)
    frame = read_study_pairs(pairs, group_by=config.group_by)
    if config.group_by == "topic":
        config.topic_titles = {**topic_titles(set(frame["topic"]), topics),
                               **config.topic_titles}
    if config.task == "bws":             # Best-Worst Scaling: tuples (lexgold.annotate.bws)
        from lexgold.annotate.bws import design_bws
        design = design_bws(frame, config, np.random.default_rng(seed))
    else:
        design = design_study(frame, config, np.random.default_rng(seed))
    places = first_slots(config) * len(design.tranches)
    if places > MAX_PLACES:
        raise InputError(f"{len(design.tranches):,} tranches x {first_slots(config):,} places "
                         f"= {places:,} places: at most {MAX_PLACES:,} (docs/protocols.md, "
                         f"\"Bounds\")", path=spec["_path"], field="raters_per_tranche")
    completion_code = completion_code or secrets.token_hex(4).upper()
    screenout_code = screenout_code or secrets.token_hex(4).upper()
    design.report["skipped_pairs"] = dict(frame.attrs.get("skipped", {}))
    design.report["builder_manifest"] = manifest_beside(pairs)
    engine = make_engine(url)
    check_connects(engine)
    upgrade(engine)
    with session_factory(engine)() as session, session.begin():
        if session.scalar(select(func.count()).select_from(m.Study)):
            raise InputError("this database already holds a study; use a new --db", field="db")
        session.add(m.Study(
            name=name or str(spec.get("name", Path(spec["_path"]).stem)),
            protocol_name=str(spec.get("name", "")),
            protocol_text=Path(spec["_path"]).read_text(encoding="utf-8"),
            protocol_sha256=spec["_sha256"],
            pairs_sha256=hashlib.sha256(Path(pairs).read_bytes()).hexdigest(),
            config=config_to_dict(config), report=design.report, seed=seed,
            completion_code=completion_code, screenout_code=screenout_code,
            completion_url=completion_url, entries=entries, pack=pack_record(spec["_path"])))
        if config.task == "bws":
            from lexgold.annotate.bws_site import store_bws_design
            store_bws_design(session, frame, design, config.raters_per_tranche)
        else:
            _store_design(session, frame, design, set(design.consistency), first_slots(config))
    engine.dispose()
    return {**design.report, "slots": first_slots(config) * len(design.tranches),
            "completion_code": completion_code, "screenout_code": screenout_code}


#: the most places (tranche slots) a study starts with: 10,000 raters of 100 tranches
MAX_PLACES = 1_000_000


def first_slots(config) -> int:
    """Slots each tranche of the design starts with: ``raters_per_tranche``, or
    ``first_round_raters`` with adaptive allocation (:mod:`lexgold.annotate.adaptive`)."""
    return config.first_round_raters if config.allocation == "adaptive" else \
        config.raters_per_tranche


#: the longest value each study setting holds in the database (lexgold.annotate.models.Study)
LENGTHS = {"name": 200, "protocol_name": 200, "completion_code": 100, "screenout_code": 100,
           "completion_url": 500}


def _check_lengths(**values) -> None:
    """One-line :class:`InputError` for a study setting longer than its column, or holding a
    control character: the same on SQLite and PostgreSQL, before anything is written."""
    for field, value in values.items():
        if value is None:
            continue
        if len(value) > LENGTHS[field]:
            raise InputError(f"longer than {LENGTHS[field]} characters ({len(value)})",
                             field=field.replace("_", "-"))
        if any(unicodedata.category(c) in ("Cc", "Zl", "Zp") for c in value):
            raise InputError("holds a control character (a NUL byte, a tab or a line break)",
                             field=field.replace("_", "-"))


def _store_design(session: Session, frame, design, consistency, raters_per_tranche):
    pair_rows = store_pairs(session, frame, consistency)
    for number, steps in enumerate(design.tranches, start=1):
        store_tranche(session, number, steps, lambda i: pair_rows[i].id, raters_per_tranche)


def store_pairs(session: Session, frame, consistency) -> list:
    """A ``Pair`` row per row of the pair file ``frame``, in its order, flushed (so each has
    its id); ``consistency``: the row numbers of the consistency set."""
    pair_rows = [m.Pair(word1=r.word1, word2=r.word2, pos=r.pos, topic=r.topic,
                        consistency=i in consistency, extra=r.extra)
                 for i, r in enumerate(frame.itertuples(index=False))]
    session.add_all(pair_rows)
    session.flush()
    return pair_rows


def store_tranche(session: Session, number: int, steps, pair_id, raters: int,
                  items=None) -> None:
    """Store tranche ``number`` of a design: its ``Tranche`` row, a ``Step`` per page of
    ``steps`` (:class:`lexgold.annotate.design.Step`, or
    :class:`lexgold.annotate.bws.BwsPage`), their ``Item`` rows and ``raters`` free slots;
    flushed. The design's tranches and the top-up tranches of adaptive allocation
    (:mod:`lexgold.annotate.adaptive`) are stored by this one function.

    ``pair_id`` maps a step's pair key (the design's pair row, or a pair id) to the stored
    pair's id. ``items(step)`` gives the step's ``(pair key, kind, tuple_id)`` in page order
    (an item's ``position``); by default ``step.items`` with no tuple (slider studies). The
    unique tranche number makes a concurrent second insert of ``number`` fail
    (IntegrityError).
    """
    items = items or (lambda step: ((i, kind, None) for i, kind in step.items))
    tranche = m.Tranche(number=number, n_steps=len(steps))
    session.add(tranche)
    session.flush()
    rows = [m.Step(tranche_id=tranche.id, position=p, kind=s.kind, batch=s.batch,
                   checkpoint=s.checkpoint) for p, s in enumerate(steps)]
    session.add_all(rows)
    session.flush()
    session.add_all(m.Item(step_id=row.id, tranche_id=tranche.id, position=k,
                           pair_id=pair_id(i), kind=kind, tuple_id=tuple_id)
                    for row, s in zip(rows, steps)
                    for k, (i, kind, tuple_id) in enumerate(items(s)))
    session.add_all(m.Slot(tranche_id=tranche.id, number=k) for k in range(1, raters + 1))
    session.flush()


def export_ratings(session: Session, *, complete_only: bool = False) -> pd.DataFrame:
    """Every stored answer in the long format (one row per answer, checkpoints included).

    Checkpoint rows carry 1 (correct) or 0 (wrong) in ``rating`` and the chosen pair in
    ``word1, word2``. With ``complete_only`` only raters who finished their tranche are kept.
    Sorted by tranche, rater and answer time; :func:`export_chunks` gives the same rows a few
    hundred raters at a time.
    """
    study = session.scalars(select(m.Study)).one()
    if study.config.get("task") == "bws":     # tuples: lexgold.process.bws' long format
        from lexgold.annotate.bws_site import export_bws
        return export_bws(session, complete_only=complete_only)
    rated = session.execute(_answers_query()).all()
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
    once), so an export of any size holds only one piece in memory (issue 22).

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
    (:mod:`lexgold.annotate.export_sql`, `lexgold study export`); otherwise (and for a
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


def confirm_raters(session: Session, platform: str, external_ids) -> dict:
    """Mark the raters of ``platform`` whose IDs are in ``external_ids`` (the platform's own
    participant list) as confirmed; returns counts (confirmed, unknown_in_list,
    unconfirmed_raters)."""
    ids = {str(i).strip() for i in external_ids if str(i).strip()}
    raters = dict(session.execute(select(m.Rater.external_id, m.Rater.id)
                                  .where(m.Rater.platform == platform)).all())
    found = [raters[i] for i in ids if i in raters]
    if found:
        session.execute(update(m.Rater).where(m.Rater.id.in_(found)).values(confirmed=True))
    session.commit()
    unconfirmed = session.scalar(select(func.count()).select_from(m.Rater)
                                 .where(m.Rater.confirmed.is_(False)))
    return {"confirmed": len(found), "unknown_in_list": len(ids) - len(found),
            "unconfirmed_raters": int(unconfirmed)}


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


def progress(session: Session, now=None) -> pd.DataFrame:
    """Per tranche: target raters, completed, active (unexpired claims), expired claims."""
    now = now or database_now(session)
    slots = pd.DataFrame(session.execute(
        select(m.Tranche.number, m.Slot.status, m.Slot.expires_at)
        .join(m.Tranche, m.Slot.tranche_id == m.Tranche.id)).all(),
        columns=["tranche", "status", "expires_at"])
    active = slots["status"] == "active"
    live = active & (slots["expires_at"] > now)
    slots = slots.assign(target=1, completed=slots["status"] == "completed", active=live,
                         expired=active & ~live)
    table = slots.groupby("tranche")[["target", "completed", "active", "expired"]].sum()
    return table.astype(int).reset_index()


def topic_titles(used: set[str], topics: str | Path | None = None) -> dict[str, str]:
    """Topic id -> definition (the title raters see, TR9856 section 3.1) from a topics file.

    Without ``topics`` the builder's default topics file is used if it defines every topic in
    ``used``; otherwise no titles. A given file must define every topic (else InputError).
    """
    from importlib import resources

    from lexgold.builder.tr9856 import DEFAULT_TOPICS
    from lexgold.builder.tr9856_topics import read_topics
    path = Path(topics) if topics is not None else Path(
        str(resources.files("lexgold.protocols") / DEFAULT_TOPICS))
    titles = {topic.key: topic.definition for topic in read_topics(path) if topic.definition}
    missing = sorted(used - set(titles))
    if missing and topics is not None:
        raise InputError(f"no definition for topic {missing[0]!r} of the pair file", path=path,
                         field=f"topics.{missing[0]}")
    return {} if missing else {key: titles[key] for key in sorted(used)}
