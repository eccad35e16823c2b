"""Recruitment's top-ups: every tranche gets raters until it has ``[study] min_accepted_raters``
accepted ones (HyperLex section 4.4: raters whose answers the exclusion rules reject are
replaced).

:func:`top_up` computes recruitment's figures (:func:`lexgold.live.figures.compute`, the
counts of :mod:`lexgold.live.tally`) and adds the missing slots; :func:`add_slots` is the
rule itself, which the refresher (:mod:`lexgold.live.refresher`) also applies to the figures it
has just computed.
"""

from __future__ import annotations

import pandas as pd
from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlalchemy.orm import Session

from lexgold.live.figures import TRANCHE_FIELDS, compute, version_key
from lexgold.live.tally import study_protocol
from lexgold.study import models as m
from lexgold.study.config import StudyConfig


def top_up(session: Session, config: StudyConfig, tranche_id: int | None = None) -> dict:
    """Add slots to tranches whose accepted raters, with the open slots, fall short.

    A tranche gets ``minimum - accepted - open`` new slots (numbered after its last), so a
    repeated or concurrent call adds nothing more for the same state. With ``tranche_id``
    (a rater completed a slot of it) nothing is computed unless that tranche has no open slot
    left: the rules then run once per round of a tranche, not once per rater
    (once per round of a tranche).

    Returns
    -------
    dict
        ``{tranche number: slots added}``; empty when nothing was added (minimum 0, open
        slots left, enough accepted raters, a concurrent call won, or the database busy).
    """
    if config.min_accepted_raters <= 0:
        return {}
    try:
        if tranche_id is not None and session.scalar(
                select(func.count()).select_from(m.Slot).where(
                    m.Slot.tranche_id == tranche_id, m.Slot.status != "completed")):
            session.commit()
            return {}
        figures = compute(session, config, study_protocol(session), admin=False)
        added = add_slots(session, figures, version_key(session), config.min_accepted_raters)
        session.commit()
        return added
    except (IntegrityError, OperationalError):
        session.rollback()     # a concurrent top-up took these numbers, or the database is busy
        return {}


def add_slots(session: Session, figures: dict, key: dict, minimum: int) -> dict:
    """Give every tranche short of ``minimum`` accepted raters beyond its open slots the
    slots it lacks (HyperLex section 4.4; :func:`_new_slots`), and update ``figures`` and ``key`` to match
    (flushed, not committed; a concurrent top-up raises IntegrityError)."""
    table = pd.DataFrame(figures["tranches"], columns=TRANCHE_FIELDS)
    short = table[table["accepted"] + table["open"] < minimum]
    if short.empty:
        return {}
    added = _new_slots(session, short, minimum)
    for row in figures["tranches"]:
        count = added.get(int(row["tranche"]), 0)
        row["slots"] += count
        row["open"] += count
    figures["full"] = [t for t in figures["full"] if t not in added]
    key["slots"] += sum(added.values())
    return added


def _new_slots(session: Session, short: pd.DataFrame, minimum: int) -> dict:
    """New slots numbered after the ones counted: a concurrent call that counted the same
    slots collides on (tranche, number) and adds nothing."""
    ids = dict(session.execute(select(m.Tranche.number, m.Tranche.id)).all())
    added = {}
    for row in short.itertuples(index=False):
        count = minimum - int(row.accepted) - int(row.open)
        session.add_all(m.Slot(tranche_id=ids[int(row.tranche)], number=int(row.slots) + k)
                        for k in range(1, count + 1))
        session.flush()
        added[int(row.tranche)] = count
    return added
