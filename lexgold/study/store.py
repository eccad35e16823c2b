"""Creating a study in a database: its design stored, its raters confirmed, its progress.

``create_study`` reads a protocol and a pair set, runs the tranche designer (or, for a
Best-Worst Scaling study, the tuple designer of :mod:`lexgold.study.bws`) and stores the
design, so every rater of a tranche sees the same groups. Reading the ratings back is
:mod:`lexgold.study.export`.
"""

from __future__ import annotations

import re
import secrets
from pathlib import Path

import numpy as np
import pandas as pd
from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from lexgold.compression import read_input_text, sha256_file
from lexgold.study import models as m
from lexgold.study.clock import database_now
from lexgold.study.db import check_connects, make_engine, session_factory, shown, upgrade
from lexgold.study.bws import design_bws, tuple_columns
from lexgold.study.design import design_study
from lexgold.study.machine import read_study_machine, store_machine
from lexgold.study.models import ENTRY_KINDS
from lexgold.study.pairs import read_study_pairs
from lexgold.study.config import StudyConfig, config_to_dict, load_consent, load_study_config
from lexgold.errors import InputError
from lexgold.tables import line_problem
from lexgold.builder.tr9856 import DEFAULT_TOPICS
from lexgold.builder.tr9856_topics import read_topics
from lexgold.languages.packs import pack_record
from lexgold.manifest import manifest_beside
from lexgold.protocols import load_protocol


def create_study(protocol: str | Path, pairs: str | Path, url: str, *, seed: int = 0,
                 name: str | None = None, completion_code: str | None = None,
                 screenout_code: str | None = None, completion_url: str = "",
                 entries: dict | None = None, topics: str | Path | None = None,
                 consent: str | Path | None = None, machine: str | Path | None = None,
                 machine_column: str | None = None) -> dict:
    """Design a study and store it in the (new or empty) database at ``url``.

    ``topics`` (topic studies): the TR9856 topics file whose definitions are shown to raters as
    the topics' titles; by default the builder's default topics file when it defines every
    topic of the pair file (else the topic ids are shown). ``consent``: a small TOML file of
    ``[study.consent]`` keys (:func:`lexgold.study.config.load_consent`) that replaces the
    protocol's. ``machine``: a machine rater's ratings file (any file
    :func:`lexgold.machine.ratings.read_machine` reads; ``machine_column`` its number's column)
    that the adaptive allocator spends (:mod:`lexgold.study.machine`, mode ``allocate``).

    Returns
    -------
    dict
        The design report (see :func:`lexgold.study.design.design_study`) plus ``slots``,
        ``completion_code`` and ``screenout_code`` (given, or drawn at random); with a machine,
        ``machine`` (``mode``, ``model``, ``file``, ``file_sha256``, ``pairs``,
        ``pairs_covered``).

    Raises
    ------
    InputError
        Bad protocol or pair file, a database that already holds a study, or a machine
        that cannot be spent (not an adaptive study, a file :func:`read_study_machine`
        refuses).
    """
    if completion_url and not re.fullmatch(r"https?://[^\s\"'<>]+", completion_url):
        raise InputError("expected an http(s) URL (with {code} where the code goes)",
                         field="completion-url")
    if entries is None:
        entries = {"platforms": list(ENTRY_KINDS), "strict_ids": False}
    unknown = set(entries.get("platforms", [])) - set(ENTRY_KINDS)
    if unknown or not entries.get("platforms"):
        raise InputError(f"expected one or more of {', '.join(ENTRY_KINDS)}", field="accept")
    _check_lengths(name=name, completion_code=completion_code, screenout_code=screenout_code,
                   completion_url=completion_url)
    if completion_code and completion_code == screenout_code:
        raise InputError("the same as --completion-code: a screened-out rater would be paid as "
                         "one who finished (give two different codes)", field="screenout-code")
    spec = load_protocol(protocol)
    config = load_study_config(spec)
    if consent is not None:
        config.consent = load_consent(consent)
    _check_lengths(protocol_name=str(spec.get("name", "")),
                   name=None if name else str(spec.get("name", Path(spec["_path"]).stem)))
    frame = read_study_pairs(pairs, group_by=config.group_by)
    found = None
    if machine is not None:
        if config.allocation != "adaptive" or config.task == "bws":
            raise InputError("a machine rater decides adaptive top-ups (machine-allocate): it "
                             "needs [study] allocation = \"adaptive\" and a rating study, not "
                             f"allocation = \"{config.allocation}\", task = "
                             f"\"{config.task}\"", path=spec["_path"], field="allocation")
        found, scores = read_study_machine(machine, frame, machine_column)
    if config.group_by == "topic":
        config.topic_titles = {**topic_titles(set(frame["topic"]), topics),
                               **config.topic_titles}
    if config.task == "bws":             # Best-Worst Scaling: tuples (lexgold.study.bws)
        design = design_bws(frame, config, np.random.default_rng(seed))
    else:
        design = design_study(frame, config, np.random.default_rng(seed))
    places = first_slots(config) * len(design.tranches)
    if places > MAX_PLACES:
        raise InputError(f"{len(design.tranches):,} tranches x {first_slots(config):,} places "
                         f"= {places:,} places: at most {MAX_PLACES:,} (docs/protocols.md, "
                         f"\"Bounds\")", path=spec["_path"], field="raters_per_tranche")
    completion_code = completion_code or secrets.token_hex(4).upper()
    while not screenout_code or screenout_code == completion_code:      # two different codes
        screenout_code = secrets.token_hex(4).upper()
    design.report["skipped_pairs"] = dict(frame.attrs.get("skipped", {}))
    design.report["builder_manifest"] = manifest_beside(pairs)
    engine = make_engine(url)
    check_connects(engine)
    upgrade(engine)
    with session_factory(engine)() as session, session.begin():
        existing = session.scalar(select(m.Study.name).limit(1))
        if existing is not None:
            where = url.removeprefix("sqlite:///") if url.startswith("sqlite:///") \
                else shown(url)
            raise InputError(f"{where} already holds the study {existing!r} (one study per "
                             f"database): `lexgold serve {where}` serves it, `lexgold study "
                             f"report {where}` shows it; for a new study give a new --db")
        session.add(m.Study(
            name=name or str(spec.get("name", Path(spec["_path"]).stem)),
            protocol_name=str(spec.get("name", "")),
            protocol_text=read_input_text(spec["_path"], encoding="utf-8"),
            protocol_sha256=spec["_sha256"],
            pairs_sha256=sha256_file(pairs),
            config=config_to_dict(config), report=design.report, seed=seed,
            completion_code=completion_code, screenout_code=screenout_code,
            completion_url=completion_url, entries=entries, pack=pack_record(spec["_path"])))
        if config.task == "bws":
            store_bws_design(session, frame, design, config.raters_per_tranche)
        else:
            rows = _store_design(session, frame, design, set(design.consistency),
                                 first_slots(config))
            if found is not None:
                stored = store_machine(session, rows, found, scores)
                design.report["machine"] = {
                    "mode": stored.mode, "model": stored.model,
                    "file": stored.provenance["file"],
                    "file_sha256": stored.provenance["file_sha256"], "pairs": len(frame),
                    "pairs_covered": stored.pairs_covered}
        session.flush()
        minutes = expected_minutes(session, config)
    engine.dispose()
    return {**design.report, "slots": first_slots(config) * len(design.tranches),
            "minutes": minutes,
            "completion_code": completion_code, "screenout_code": screenout_code,
            "consent": {"contact": config.consent.contact,
                        "ethics_reference": config.consent.ethics_reference,
                        "paragraphs": len(config.consent.paragraphs)}}


#: the most places (tranche slots) a study starts with: 10,000 raters of 100 tranches
MAX_PLACES = 1_000_000


def first_slots(config) -> int:
    """Slots each tranche of the design starts with: ``raters_per_tranche``, or
    ``first_round_raters`` with adaptive allocation (:mod:`lexgold.live.allocator`)."""
    return config.first_round_raters if config.allocation == "adaptive" else \
        config.raters_per_tranche


#: the longest value each study setting holds in the database (lexgold.study.models.Study)
LENGTHS = {"name": 200, "protocol_name": 200, "completion_code": 100, "screenout_code": 100,
           "completion_url": 500}


def _check_lengths(**values) -> None:
    """One-line :class:`InputError` for a study setting longer than its column, or holding a
    control or bidi formatting character (:func:`lexgold.tables.line_problem`): the same on
    SQLite and PostgreSQL, before anything is written."""
    for field, value in values.items():
        if value is None:
            continue
        if len(value) > LENGTHS[field]:
            raise InputError(f"longer than {LENGTHS[field]} characters ({len(value)})",
                             field=field.replace("_", "-"))
        problem = line_problem(value)
        if problem:                  # a NUL byte, a line break, a bidi override U+202E
            raise InputError(problem, field=field.replace("_", "-"))


def _store_design(session: Session, frame, design, consistency, raters_per_tranche) -> list:
    """Store the pairs and the tranches of a slider design; returns the pair rows."""
    pair_rows = store_pairs(session, frame, consistency)
    for number, steps in enumerate(design.tranches, start=1):
        store_tranche(session, number, steps, lambda i: pair_rows[i].id, raters_per_tranche)
    return pair_rows


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
    ``steps`` (:class:`lexgold.study.design.PlannedStep`, or
    :class:`lexgold.study.bws.BwsPage`), their ``Item`` rows and ``raters`` free slots;
    flushed. The design's tranches and the top-up tranches of adaptive allocation
    (:mod:`lexgold.live.allocator`) are stored by this one function.

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

    path = Path(topics) if topics is not None else Path(
        str(resources.files("lexgold.protocols") / DEFAULT_TOPICS))
    titles = {topic.key: topic.definition for topic in read_topics(path) if topic.definition}
    missing = sorted(used - set(titles))
    if missing and topics is not None:
        raise InputError(f"no definition for topic {missing[0]!r} of the pair file", path=path,
                         field=f"topics.{missing[0]}")
    return {} if missing else {key: titles[key] for key in sorted(used)}


def store_bws_design(session: Session, frame: pd.DataFrame, design, raters_per_tranche: int):
    """Store the pairs, tranches, pages (``Step``), tuple items and slots of a BWS design
    (each tranche by :func:`store_tranche`)."""
    columns = tuple_columns(design.tuples)
    members = dict(zip(design.tuples["tuple_id"].astype(int),
                       design.tuples[columns].to_numpy().tolist()))
    in_consistency = {int(i) for t in design.consistency for i in members[t]}
    pair_rows = store_pairs(session, frame, in_consistency)
    row_of = {label: k for k, label in enumerate(frame.index)}

    def tuple_items(page):      # a tuple's pairs in its order: position = row x size + k
        return ((label, kind, int(tuple_id)) for tuple_id, kind in page.tuples
                for label in members[int(tuple_id)])

    for number, pages in enumerate(design.tranches, start=1):
        store_tranche(session, number, pages, lambda label: pair_rows[row_of[label]].id,
                      raters_per_tranche, tuple_items)


def expected_minutes(session: Session, config: StudyConfig) -> str:
    """The duration a rater is told on the consent page: ``"8–24"`` or ``"10"`` (minutes).

    Items of a tranche = its pairs (Best-Worst Scaling: its tuples) and checkpoints as
    designed, plus the qualification
    question; times ``seconds_per_item`` (one average, or a low and a high value). With a range
    the shortest tranche gives the low end (rounded down), the longest the high end (rounded
    up); with one value the mean tranche is used.
    """
    counts = session.execute(
        select(m.Tranche.id, func.count(m.Item.id))
        .join(m.Item, m.Item.tranche_id == m.Tranche.id, isouter=True)
        .group_by(m.Tranche.id)).all()
    checks = dict(session.execute(
        select(m.Step.tranche_id, func.count(m.Step.id)).where(m.Step.kind == "checkpoint")
        .group_by(m.Step.tranche_id)).all())
    extra = 1 if config.qualification is not None else 0
    per = config.bws.tuple_size if config.task == "bws" else 1    # BWS: seconds per tuple
    items = [n // per + checks.get(tranche, 0) + extra for tranche, n in counts] or [extra]
    seconds = config.seconds_per_item
    if len(seconds) == 1:
        return str(max(1, round(sum(items) / len(items) * seconds[0] / 60)))
    low = max(1, int(min(items) * seconds[0] // 60))
    high = max(low, -int(-max(items) * seconds[1] // 60))
    return f"{low}\u2013{high}"
