"""Pause, resume and close a study: whether the rating site takes new raters, and whether the
raters already in may finish (``lexgold study pause|resume|close``, the admin view).

Stored in the study's row (revision 0015), so every server process and host sees it:

- ``open``: new raters are taken (the default);
- ``paused``: new raters are told the study is paused and to come back later;
- ``closed``: new raters are told the study has closed.

``stop_current`` (paused or closed only): the raters already in (consented, not finished) are
stopped too and see the same page; else they may finish their tranche. A finished or
screened-out rater always sees the completion (or screen-out) page and its link back to the
platform. Resuming reopens a paused or closed study.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from lexgold.errors import InputError
from lexgold.study import models as m

#: the states of a study's intake
INTAKE = ("open", "paused", "closed")


@dataclass(frozen=True)
class Intake:
    """A study's intake as stored: its state, whether raters already in are stopped, since when."""

    state: str = "open"
    stop_current: bool = False
    changed_at: datetime | None = None

    @property
    def open(self) -> bool:
        return self.state == "open"


def read_intake(session: Session) -> Intake:
    """The stored intake of the study (``open`` for a database without a study row)."""
    row = session.execute(select(m.Study.intake, m.Study.stop_current,
                                 m.Study.intake_changed_at).limit(1)).first()
    return Intake(*row) if row is not None else Intake()


def set_intake(session: Session, state: str, *, stop_current: bool = False,
               now: datetime | None = None) -> Intake:
    """Store ``state`` (``open``, ``paused`` or ``closed``); ``stop_current`` only applies to a
    paused or closed study (resuming lets everyone in again). Returns the new intake."""
    if state not in INTAKE:
        raise InputError(f"expected one of {', '.join(INTAKE)}", field="intake")
    stop = bool(stop_current) and state != "open"
    if session.execute(update(m.Study).values(intake=state, stop_current=stop,
                                              intake_changed_at=now or m.utcnow())).rowcount != 1:
        session.rollback()
        raise InputError("the database holds no study", field="db")
    session.commit()
    return read_intake(session)


def describe_intake(intake: Intake) -> str:
    """One line for the researcher: ``paused: no new raters; raters already in may finish``."""
    if intake.open:
        return "open: new raters are taken"
    current = "stopped too" if intake.stop_current else "may finish"
    return f"{intake.state}: no new raters; raters already in {current}"
