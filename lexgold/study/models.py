"""Database models of a rating study (SQLAlchemy 2 typed ORM). One study per database.

The schema is created and changed only by the Alembic revisions in ``lexgold/study/migrations``;
these classes must match them (a test compares the two).

- ``Study``: the protocol (full text and parsed ``[study]`` table), design report, codes.
- ``Pair`` -> ``Tranche`` -> ``Step`` (a page: group, tuples or checkpoint) -> ``Item`` (a
  showing of a pair, with its kind: unique/consistency/calibration/duplicate; in a Best-Worst
  study also its tuple).
- ``Slot``: one of a tranche's ``raters_per_tranche`` places. Claiming a slot is a conditional
  UPDATE, so no race hands out more places than the target; a claim expires after
  ``claim_timeout_s`` and the slot can then be given to another rater.
- ``Rater``, ``Answer`` (one per rater and item, unique), ``CheckpointAnswer``.
- ``Throttle``: attempts per key (e.g. failed admin logins of one client address) in a time
  window, counted by atomic UPDATEs so that every server process shares them.
- ``AdminSession``: a logged-in admin browser, known by the SHA-256 of its random token (the
  cookie holds the token): deleted at logout, void when the admin password changes.
- ``StudyFigures``: the admin view's and recruitment's figures, computed in the background and
  shared by every server process and host (:mod:`lexgold.live.figures`).
- ``Machine``: the machine rater a study's allocator uses (``study create --machine``; its
  scores are ``Pair.machine_score``), with its provenance (:mod:`lexgold.study.machine`).
"""

from __future__ import annotations

import secrets
from datetime import datetime, timezone

from sqlalchemy import (JSON, Boolean, DateTime, Float, ForeignKey, Integer, String, Text,
                        UniqueConstraint, false)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


def utcnow() -> datetime:
    """Naive UTC (stored the same way on SQLite and PostgreSQL)."""
    return datetime.now(timezone.utc).replace(tzinfo=None)


class Base(DeclarativeBase):
    pass


class Study(Base):
    __tablename__ = "study"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    protocol_name: Mapped[str] = mapped_column(String(200))
    protocol_text: Mapped[str] = mapped_column(Text)
    protocol_sha256: Mapped[str] = mapped_column(String(64))
    pairs_sha256: Mapped[str] = mapped_column(String(64))
    config: Mapped[dict] = mapped_column(JSON)
    report: Mapped[dict] = mapped_column(JSON)
    seed: Mapped[int] = mapped_column(Integer)
    completion_code: Mapped[str] = mapped_column(String(100))
    screenout_code: Mapped[str] = mapped_column(String(100))
    #: where a finished rater is sent back to, ``{code}`` filled in
    completion_url: Mapped[str] = mapped_column(String(500), default="", server_default="")
    #: accepted entry links: ``{"platforms": [...], "strict_ids": bool}``;
    #: ``None`` (older studies): every platform and the anonymous link, any well-formed ID
    entries: Mapped[dict | None] = mapped_column(JSON, nullable=True)
    #: the language pack of the protocol: ``{"language", "folder",
    #: "packaged", "protocol_file"}``; ``None``: a protocol outside any pack
    pack: Mapped[dict | None] = mapped_column(JSON, nullable=True)
    #: new raters are taken (``open``), or not (``paused``, ``closed``); ``stop_current``: the
    #: raters already in are stopped too (else they may finish);
    #: :mod:`lexgold.study.intake`
    intake: Mapped[str] = mapped_column(String(20), default="open", server_default="open")
    stop_current: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    intake_changed_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    #: the study's own random identity (128 bits, hex), signed into every preview link and
    #: checked against it (:mod:`lexgold.study.preview_links`; revision 0018)
    uid: Mapped[str] = mapped_column(String(32), default=lambda: secrets.token_hex(16),
                                     server_default="")


class Pair(Base):
    __tablename__ = "pair"
    id: Mapped[int] = mapped_column(primary_key=True)
    word1: Mapped[str] = mapped_column(String(300))
    word2: Mapped[str] = mapped_column(String(300))
    pos: Mapped[str] = mapped_column(String(20), default="")
    topic: Mapped[str] = mapped_column(String(500), default="")
    consistency: Mapped[bool] = mapped_column(Boolean, default=False)
    extra: Mapped[dict] = mapped_column(JSON, default=dict)
    #: the machine rater's number for the pair, on the machine's own scale (``Machine``);
    #: ``None``: no machine, or one that does not cover the pair
    machine_score: Mapped[float | None] = mapped_column(Float, nullable=True)


class Tranche(Base):
    __tablename__ = "tranche"
    id: Mapped[int] = mapped_column(primary_key=True)
    number: Mapped[int] = mapped_column(Integer, unique=True)
    n_steps: Mapped[int] = mapped_column(Integer)


class Step(Base):
    __tablename__ = "step"
    __table_args__ = (UniqueConstraint("tranche_id", "position"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    tranche_id: Mapped[int] = mapped_column(ForeignKey("tranche.id"), index=True)
    position: Mapped[int] = mapped_column(Integer)
    kind: Mapped[str] = mapped_column(String(20))          # group / tuples / checkpoint
    batch: Mapped[str] = mapped_column(String(500))        # POS or topic
    checkpoint: Mapped[int | None] = mapped_column(Integer, nullable=True)


class Item(Base):
    __tablename__ = "item"
    __table_args__ = (UniqueConstraint("step_id", "position"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    step_id: Mapped[int] = mapped_column(ForeignKey("step.id"), index=True)
    tranche_id: Mapped[int] = mapped_column(ForeignKey("tranche.id"), index=True)
    position: Mapped[int] = mapped_column(Integer)
    pair_id: Mapped[int] = mapped_column(ForeignKey("pair.id"))
    kind: Mapped[str] = mapped_column(String(20))
    #: Best-Worst Scaling: the design's tuple the item is a pair of (``None``
    #: in slider and binary studies); its row in the tuple is ``position % tuple_size``
    tuple_id: Mapped[int | None] = mapped_column(Integer, nullable=True)


class Slot(Base):
    __tablename__ = "slot"
    __table_args__ = (UniqueConstraint("tranche_id", "number"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    tranche_id: Mapped[int] = mapped_column(ForeignKey("tranche.id"), index=True)
    number: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(20), default="free")  # free/active/completed
    rater_id: Mapped[int | None] = mapped_column(ForeignKey("rater.id"), nullable=True)
    claimed_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    expires_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    step: Mapped[int] = mapped_column(Integer, default=0)
    completed_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    #: when the current page was first given (claim or previous page accepted)
    step_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)


#: the ways a rater can enter a study (``study create --accept``)
ENTRY_KINDS = ("prolific", "mturk", "anonymous")


class Rater(Base):
    __tablename__ = "rater"
    __table_args__ = (UniqueConstraint("platform", "external_id"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    public_id: Mapped[str] = mapped_column(String(64), unique=True)
    #: prolific / mturk / anonymous, or ``simulated`` (:data:`lexgold.ratings.SIMULATED`): a
    #: rater of ``lexgold study rehearse``, never matched to a platform's participant
    platform: Mapped[str] = mapped_column(String(20))
    external_id: Mapped[str | None] = mapped_column(String(100), nullable=True)
    external_study: Mapped[str] = mapped_column(String(100), default="")
    external_session: Mapped[str] = mapped_column(String(100), default="")
    stage: Mapped[str] = mapped_column(String(20), default="instructions")
    instructions_page: Mapped[int] = mapped_column(Integer, default=0)
    native_speaker: Mapped[bool] = mapped_column(Boolean, default=False)
    qualification_choice: Mapped[int | None] = mapped_column(Integer, nullable=True)
    #: the rater's current slot (no foreign key: slot.rater_id already points back)
    slot_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    completed_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    #: SHA-256 of the secret held in the session of the browser the rater uses
    browser_sha256: Mapped[str] = mapped_column(String(64), default="", server_default="")
    #: browsers the rater has used (more than 1: resumed elsewhere after being asked)
    browsers: Mapped[int] = mapped_column(Integer, default=1, server_default="1")
    #: pages sent faster than ``min_seconds_per_pair`` allows
    fast_pages: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    #: the platform ID was found in the platform's participant list (``lexgold study confirm``)
    confirmed: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    #: SHA-256 of the one-time link the admin view issued to move the rater to a new browser
    #: ("" = none) and when that link expires
    move_sha256: Mapped[str] = mapped_column(String(64), default="", server_default="")
    move_expires_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)


class Answer(Base):
    __tablename__ = "answer"
    __table_args__ = (UniqueConstraint("rater_id", "item_id"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    rater_id: Mapped[int] = mapped_column(ForeignKey("rater.id"), index=True)
    item_id: Mapped[int] = mapped_column(ForeignKey("item.id"))
    slot_id: Mapped[int] = mapped_column(ForeignKey("slot.id"))
    rating: Mapped[int] = mapped_column(Integer)
    start_value: Mapped[int | None] = mapped_column(Integer, nullable=True)
    response_ms: Mapped[int | None] = mapped_column(Integer, nullable=True)
    answered_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    #: server time per item: from the page being given to its answers arriving, divided by
    #: the items of the page; ``response_ms`` is the browser's own figure
    server_ms: Mapped[int | None] = mapped_column(Integer, nullable=True)


class CheckpointAnswer(Base):
    __tablename__ = "checkpoint_answer"
    __table_args__ = (UniqueConstraint("rater_id", "step_id"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    rater_id: Mapped[int] = mapped_column(ForeignKey("rater.id"), index=True)
    step_id: Mapped[int] = mapped_column(ForeignKey("step.id"))
    slot_id: Mapped[int] = mapped_column(ForeignKey("slot.id"))
    choice: Mapped[int] = mapped_column(Integer)
    correct: Mapped[bool] = mapped_column(Boolean)
    #: Best-Worst check tuples: the pair chosen as least (``choice`` is the most)
    worst: Mapped[int | None] = mapped_column(Integer, nullable=True)
    response_ms: Mapped[int | None] = mapped_column(Integer, nullable=True)
    answered_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    #: server time per item: from the page being given to its answers arriving, divided by
    #: the items of the page; ``response_ms`` is the browser's own figure
    server_ms: Mapped[int | None] = mapped_column(Integer, nullable=True)


class Throttle(Base):
    """Attempts under ``key`` since ``window_start``."""

    __tablename__ = "throttle"
    key: Mapped[str] = mapped_column(String(200), primary_key=True)
    window_start: Mapped[datetime] = mapped_column(DateTime)
    count: Mapped[int] = mapped_column(Integer)


class AdminSession(Base):
    """A logged-in admin; only hashes are stored, so the file forges none."""

    __tablename__ = "admin_session"
    id: Mapped[int] = mapped_column(primary_key=True)
    token_sha256: Mapped[str] = mapped_column(String(64), unique=True)
    #: SHA-256 of the password hash in force at login: another password voids the session
    password_sha256: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(DateTime)


class StudyFigures(Base):
    """What the admin view and recruitment show, computed off the raters' requests
    (:mod:`lexgold.live.figures`): one row, replaced when the answers change."""

    __tablename__ = "study_figures"
    id: Mapped[int] = mapped_column(primary_key=True)
    #: what the figures were computed from (slots, completed slots, last answer ids)
    version: Mapped[str] = mapped_column(String(200))
    computed_at: Mapped[datetime] = mapped_column(DateTime)
    #: the figures as JSON text (NaN written as null)
    figures: Mapped[str] = mapped_column(Text)


class ProlificAction(Base):
    """An action lexgold took on Prolific's API (:mod:`lexgold.prolific.review`):
    ``approve``, ``reject`` or ``return`` of a submission, or ``bonus`` of one participant in one
    bonus batch. ``key`` is unique: the same action is never taken twice. ``state``: ``pending``
    (claimed, the call not known to have succeeded), ``done``; bonuses ``set_up`` (the bulk
    payment ``bulk_id`` exists, its payment not known) then ``paid``."""

    __tablename__ = "prolific_action"
    id: Mapped[int] = mapped_column(primary_key=True)
    key: Mapped[str] = mapped_column(String(300), unique=True)
    prolific_study: Mapped[str] = mapped_column(String(100))
    submission_id: Mapped[str] = mapped_column(String(100))
    participant_id: Mapped[str] = mapped_column(String(100))
    action: Mapped[str] = mapped_column(String(20))
    #: the reason (rejection category and message, return reasons) or the bonus batch's label
    detail: Mapped[str] = mapped_column(String(500))
    amount_cents: Mapped[int | None] = mapped_column(Integer, nullable=True)
    bulk_id: Mapped[str] = mapped_column(String(100), default="")
    state: Mapped[str] = mapped_column(String(20))
    #: the last failed call's one-line error ("" = none)
    error: Mapped[str] = mapped_column(String(500), default="")
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    done_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)


class PreviewLink(Base):
    """A shareable preview link (:mod:`lexgold.study.preview_links`): the link
    carries this row's id and time of making and the study's ``uid``, signed with the
    session-signing key; the row says until when it works and whether it was revoked."""

    __tablename__ = "preview_link"
    id: Mapped[int] = mapped_column(primary_key=True)
    created_at: Mapped[datetime] = mapped_column(DateTime)
    expires_at: Mapped[datetime] = mapped_column(DateTime)
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    #: ``admin`` (the admin view) or ``cli`` (``lexgold study preview-link``)
    made_by: Mapped[str] = mapped_column(String(20))


class Machine(Base):
    """The machine rater of a study (``lexgold study create --machine FILE``): one row, or
    none. Its number for each pair is ``Pair.machine_score``; it is spent in ``mode``
    ``allocate`` only (machine-allocate: it decides which pairs get top-up raters and which
    stop; every released score stays a human mean)."""

    __tablename__ = "machine"
    id: Mapped[int] = mapped_column(primary_key=True)
    mode: Mapped[str] = mapped_column(String(20))
    #: the model as the ratings file's provenance names it (``None``: not named)
    model: Mapped[str | None] = mapped_column(String(300), nullable=True)
    #: the ratings file's column read
    column: Mapped[str] = mapped_column(String(300))
    #: :func:`lexgold.machine.ratings.read_provenance`'s record (``file``, ``file_sha256`` ...)
    provenance: Mapped[dict] = mapped_column(JSON)
    #: the study's pairs the machine has a number for
    pairs_covered: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
