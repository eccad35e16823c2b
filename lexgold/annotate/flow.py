"""The rater flow as functions over a database session (the views stay thin).

Entry (Prolific / MTurk parameters or an anonymous link) -> consent and native-speaker
confirmation -> instruction pages -> qualification (HyperLex section 4.4) -> a claimed tranche
slot -> its steps (checkpoints, SimLex section 3.4, and groups of pairs) -> completion.

Every write is one transaction guarded by a conditional UPDATE or a unique constraint, so a
double click, a reload or a retry stores one answer and never loses an accepted one.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import weakref
from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np
from sqlalchemy import DateTime, and_, bindparam, case, func, insert, or_, select, update
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from lexgold.annotate import bws_site, throttle
from lexgold.annotate.forms import Rejected, parse_int
from lexgold.study import models as m
from lexgold.study.clock import database_now
from lexgold.study.config import StudyConfig
from lexgold.study.db import Prepared
from lexgold.study.entries import PLATFORMS
from lexgold.study.secret import keyed_hash
from lexgold.study.store import expected_minutes  # noqa: F401  (the consent page's)

#: platform IDs: letters, digits, ``_``, ``-`` (matched against the whole value: no newline)
ID_PATTERN = re.compile(r"[A-Za-z0-9_\-]{1,100}")
#: entry links a study accepts: platforms, ``anonymous`` (no platform ID), and the platform's
#: own ID formats. Prolific IDs are 24 hexadecimal digits; MTurk worker IDs an ``A`` and
#: 9-20 capitals or digits, HIT and assignment IDs 20-40 capitals or digits.
STRICT_IDS = {"prolific": [re.compile(r"[0-9a-f]{24}")] * 3,
              "mturk": [re.compile(r"A[A-Z0-9]{9,20}"), re.compile(r"[A-Z0-9]{20,40}"),
                        re.compile(r"[A-Z0-9]{20,40}")]}
MTURK_PREVIEW = "ASSIGNMENT_ID_NOT_AVAILABLE"
MAX_RESPONSE_MS = 24 * 3600 * 1000


class BadEntry(Rejected):
    """An entry link whose platform parameter ``parameter`` is empty or not an ID (for
    instance a platform placeholder such as ``{{%PROLIFIC_PID%}}`` that was never filled)."""

    def __init__(self, parameter: str):
        super().__init__("error_entry_link", f"bad {parameter} parameter")
        self.parameter = parameter


@dataclass
class RaterEntry:
    """How a rater came in: the platform of the link and its IDs (none for an anonymous link)."""

    platform: str
    external_id: str | None
    external_study: str = ""
    external_session: str = ""


def parse_entry(args) -> RaterEntry:
    """Platform parameters of the entry URL, checked (letters, digits, ``_``, ``-``)."""
    for platform, (pid, study, session) in PLATFORMS.items():
        if pid in args:
            values = [args.get(key, "") for key in (pid, study, session)]
            for key, value in zip((pid, study, session), values):
                if value and not ID_PATTERN.fullmatch(value) or key == pid and not value:
                    raise BadEntry(key)
            return RaterEntry(platform, values[0], values[1], values[2])
    return RaterEntry("anonymous", None)


def check_entry(entry: RaterEntry, entries: dict | None) -> None:
    """:class:`Rejected` (``entry_refused``) unless the study accepts this kind of entry link;
    with strict IDs, :class:`BadEntry` naming a parameter that is missing or not in the
    platform's format.

    ``entries`` is the study's ``{"platforms": [...], "strict_ids": bool}``; ``None`` (a study
    made before entries were declared) accepts every platform and the anonymous link."""
    if entries is None:
        return
    if entry.platform not in entries.get("platforms", m.ENTRY_KINDS):
        raise Rejected("entry_refused", f"{entry.platform} entry not accepted by this study")
    if entries.get("strict_ids") and entry.platform in STRICT_IDS:
        # every parameter of the platform's link, in its format: a missing or malformed one is
        # named (:class:`BadEntry`, 400), as parse_entry names one that is not an ID at all
        values = (entry.external_id, entry.external_study, entry.external_session)
        for key, value, pattern in zip(PLATFORMS[entry.platform], values,
                                       STRICT_IDS[entry.platform]):
            if value != MTURK_PREVIEW and not (value and pattern.fullmatch(value)):
                raise BadEntry(key)


def browser_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


_r, _s = m.Rater.__table__.c, m.Slot.__table__.c


def _core(session: Session | Connection) -> Connection:
    """The connection of ``session`` (an ORM session), or ``session`` itself (a connection:
    the site's request connection, :func:`lexgold.annotate.context.connection`)."""
    return session if isinstance(session, Connection) else session.connection()


#: the rater of a platform ID (prepared once: every entry link and consent asks)
_ENROLLED = Prepared(select(_r.id).where(
    _r.platform == bindparam("platform"), _r.external_id == bindparam("external_id")).limit(1))


def enrolled(session: Session | Connection, entry: RaterEntry) -> int | None:
    """The id of the rater already enrolled with the entry's platform ID, if any (one Core
    statement: no ORM entity is loaded)."""
    if entry.external_id is None:
        return None
    row = _ENROLLED.first(_core(session), {"platform": entry.platform,
                                           "external_id": entry.external_id})
    return None if row is None else row[0]


def find_rater(session: Session, entry: RaterEntry) -> m.Rater | None:
    """The rater already enrolled with the entry's platform ID, if any (loaded: the flow's
    rarer steps, resuming and a finished rater's page, read its other columns)."""
    rater_id = enrolled(session, entry)
    return None if rater_id is None else session.get(m.Rater, rater_id)


def session_hash(key: str, value: str) -> str:
    """What is stored of the session ID of a rater's own link (Prolific ``SESSION_ID``, MTurk
    ``assignmentId``): its keyed hash (:func:`lexgold.study.secret.keyed_hash`), or "" for
    none (and for MTurk's preview value, which every worker has)."""
    return keyed_hash(key, value) if value and value != MTURK_PREVIEW else ""


#: what a new rater is given (:func:`enrol`); the other columns take their defaults
_ENROL_GIVEN = ("public_id", "platform", "external_id", "external_study", "external_session",
                "native_speaker", "browser_sha256", "created_at")
#: a new rater, its id read back (prepared once, with the columns' scalar defaults written in)
_ENROL = Prepared(insert(m.Rater.__table__).values(
    **{column.key: column.default.arg for column in m.Rater.__table__.c
       if column.default is not None and column.default.is_scalar
       and column.key not in _ENROL_GIVEN},
    **{key: bindparam(f"new_{key}") for key in _ENROL_GIVEN}).returning(_r.id))


def enrol(session: Session | Connection, entry: RaterEntry, native_speaker: bool,
          now=None, *, key: str) -> tuple[CurrentRater | None, str]:
    """A new rater for ``entry`` after consent (as :func:`current_rater` gives it, at the
    first instructions page), and the secret its browser keeps. ``key``: the session-signing
    key, which keys the stored hash of the link's session ID. Core statements on ``session``,
    a connection or an ORM session's connection; the transaction is committed on it.

    Returns ``(None, "")`` when the platform ID is already enrolled: resuming it from another
    browser needs :func:`move_to_browser` (the rater is asked first)."""
    if enrolled(session, entry) is not None:
        return None, ""
    secret = secrets.token_urlsafe(24)
    given = {"public_id": secrets.token_urlsafe(12), "platform": entry.platform,
             "external_id": entry.external_id, "external_study": entry.external_study,
             "external_session": session_hash(key, entry.external_session),
             "native_speaker": native_speaker, "browser_sha256": browser_hash(secret),
             "created_at": now or database_now(session)}
    try:
        (rater_id,) = _ENROL.first(_core(session), {f"new_{k}": v for k, v in given.items()})
        session.commit()
    except IntegrityError:   # the same platform ID enrolled concurrently
        session.rollback()
        return None, ""
    stage, page = (m.Rater.__table__.c[name].default.arg for name in ("stage",
                                                                       "instructions_page"))
    return CurrentRater(rater_id, given["public_id"], stage, page, None, None), secret


def own_link(rater: m.Rater, entry: RaterEntry, *, key: str) -> bool:
    """True when ``entry`` carries what only the rater's own platform link has: the study and
    session IDs given when it enrolled (Prolific ``STUDY_ID`` and ``SESSION_ID``; MTurk
    ``hitId`` and ``assignmentId``). A platform ID alone is no credential: it shows in
    screenshots and support e-mails; nor is the study ID, which every participant of the study
    has. Only the keyed hash of the session ID is stored (:func:`session_hash`), so a copy of
    the database does not give it. A rater enrolled without them (or anonymously) can be moved
    to a new browser only by the admin view (:func:`issue_move_link`)."""
    if rater.platform != entry.platform or entry.platform not in PLATFORMS:
        return False
    study, stored = rater.external_study or "", rater.external_session or ""
    given = session_hash(key, entry.external_session)
    return bool(study and study != MTURK_PREVIEW and stored and given) and \
        hmac.compare_digest(study, entry.external_study) and hmac.compare_digest(stored, given)


#: how long a link from the admin view that moves a rater to a new browser stays valid
MOVE_LINK_S = 24 * 3600


def move_hash(key: str, token: str) -> str:
    """What is stored of a move link's token: the keyed hash of its SHA-256 (revision 0014
    turned the SHA-256 stored before into this)."""
    return keyed_hash(key, browser_hash(token))


def issue_move_link(session: Session, rater: m.Rater, now, *, key: str) -> str:
    """A one-time token that moves ``rater`` to the browser that opens its link (the admin
    view gives it to a participant who contacted the researcher). Only its keyed hash is
    stored (:func:`move_hash`); a newer token replaces an older one."""
    token = secrets.token_urlsafe(24)
    session.execute(update(m.Rater).where(m.Rater.id == rater.id).values(
        move_sha256=move_hash(key, token),
        move_expires_at=now + timedelta(seconds=MOVE_LINK_S)))
    session.commit()
    return token


def use_move_link(session: Session, token: str, now, *,
                  key: str) -> tuple[m.Rater, str] | None:
    """Bind the rater of a live move token to a new browser (the old one is let go) and spend
    the token; ``(rater, browser secret)``, or ``None`` for an unknown, used or expired token.
    One conditional UPDATE: two browsers opening the same link cannot both get the rater."""
    if not token or not ID_PATTERN.fullmatch(token):
        return None
    digest, secret = move_hash(key, token), secrets.token_urlsafe(24)
    rater = session.scalars(select(m.Rater).where(m.Rater.move_sha256 == digest)).first()
    if rater is None or session.execute(update(m.Rater).where(
            m.Rater.id == rater.id, m.Rater.move_sha256 == digest,
            m.Rater.move_expires_at > now).values(
            browser_sha256=browser_hash(secret), browsers=m.Rater.browsers + 1,
            move_sha256="", move_expires_at=None)).rowcount != 1:
        session.rollback()
        return None
    session.commit()
    return rater, secret


def move_to_browser(session: Session, rater: m.Rater, browsers: int) -> str | None:
    """Bind ``rater`` to a new browser (after asking, and only from the rater's own link:
    :func:`own_link`); the secret for it. The old browser's secret no longer matches, so only
    one browser at a time can answer as the rater.

    ``browsers`` is the rater's browser count when the question was asked: the move is one
    conditional UPDATE on it, so a confirmation is used once (a replayed one, or one given
    after the rater moved again, moves nothing: None)."""
    secret = secrets.token_urlsafe(24)
    if session.execute(update(m.Rater).where(
            m.Rater.id == rater.id, m.Rater.browsers == browsers).values(
            browser_sha256=browser_hash(secret), browsers=m.Rater.browsers + 1)).rowcount != 1:
        session.rollback()
        return None
    session.commit()
    return secret


def bind_unbound(session: Session, rater: m.Rater) -> str | None:
    """Bind a rater enrolled before browser binding (revision 0005: no browser hash stored) to
    the browser whose cookie names it; the secret for it, or None when the rater is bound
    already (by another browser meanwhile: one conditional UPDATE, so only one wins)."""
    secret = secrets.token_urlsafe(24)
    if session.execute(update(m.Rater).where(
            m.Rater.id == rater.id, m.Rater.browser_sha256 == "").values(
            browser_sha256=browser_hash(secret))).rowcount != 1:
        session.rollback()
        return None
    session.commit()
    return secret


#: the rater read instructions page ``page`` (conditional: a repeated POST moves nothing)
_PAGE_READ = Prepared(update(m.Rater.__table__).where(
    _r.id == bindparam("rater"), _r.instructions_page == bindparam("page"),
    _r.stage == "instructions").values(instructions_page=bindparam("next")))
_TO_QUALIFICATION = Prepared(update(m.Rater.__table__).where(_r.id == bindparam("rater"))
                             .values(stage="qualification"))


def advance_instructions(session: Session | Connection, rater: CurrentRater | m.Rater,
                         page: int, config: StudyConfig, now=None) -> None:
    """Page ``page`` of the instructions was read; a repeated POST is ignored. Core
    statements on ``session`` (a connection or an ORM session's), committed on it; an ORM
    ``rater`` of an ORM session is refreshed."""
    if rater.stage != "instructions" or page < rater.instructions_page:
        return
    if page != rater.instructions_page:
        raise Rejected("error_invalid", "instructions page out of order")
    connection = _core(session)
    done = _PAGE_READ.rowcount(connection, {"rater": rater.id, "page": page, "next": page + 1})
    if done and page + 1 >= len(config.texts.instructions):
        if config.qualification is not None:
            _TO_QUALIFICATION.rowcount(connection, {"rater": rater.id})
        else:
            _claim(session, rater.id, config, now or database_now(session))
    session.commit()
    if isinstance(session, Session) and isinstance(rater, m.Rater):
        session.refresh(rater)


#: the qualification answered: screened out, unless a right answer then claims a place
_ANSWERED = Prepared(update(m.Rater.__table__).where(
    _r.id == bindparam("rater"), _r.stage == "qualification").values(
    qualification_choice=bindparam("choice"), stage="screened_out"))


def answer_qualification(session: Session, rater: CurrentRater | m.Rater, choice: int,
                         config: StudyConfig, now=None) -> int:
    """HyperLex section 4.4: the ``attempts``-th wrong answer ends the study; no rating is
    collected. Returns the attempts left after a wrong answer that did not end it, else 0.

    Wrong answers are counted in the shared attempt counter (:mod:`lexgold.annotate.throttle`,
    one key per rater), atomically, so parallel posts cannot earn extra attempts. The answer
    and the claim are Core statements on the session's connection; an ORM ``rater`` is
    refreshed."""
    qual = config.qualification
    if rater.stage != "qualification":
        return 0
    if qual is None or not 0 <= choice < len(qual.options):
        raise Rejected("error_invalid", "qualification choice out of range")
    if choice != qual.answer and qual.attempts > 1:
        key = f"qualification:{rater.id}"
        if throttle.hit(session, key, qual.attempts - 1, throttle.FORGET_S, now):
            wrong = session.scalar(select(m.Throttle.count).where(m.Throttle.key == key))
            session.execute(update(m.Rater).where(m.Rater.id == rater.id)
                            .values(qualification_choice=choice))
            session.commit()
            if isinstance(rater, m.Rater):
                session.refresh(rater)
            return qual.attempts - wrong
    if _ANSWERED.rowcount(_core(session), {"rater": rater.id, "choice": choice}):
        if choice == qual.answer:
            _claim(session, rater.id, config, now or database_now(session))
    session.commit()
    if isinstance(rater, m.Rater):
        session.refresh(rater)
    return 0


_t, _NOW = m.Tranche.__table__.c, bindparam("now", type_=DateTime)
#: a slot free to claim at ``now``: free, or active with an expired claim
_FREE = or_(_s.status == "free", and_(_s.status == "active",
                                      _s.expires_at <= _NOW))
#: the tranche with the fewest completed-or-active raters that has a free slot
_TAKEN = func.sum(case((_FREE, 0), else_=1))
_LEAST_TAKEN = Prepared(
    select(_s.tranche_id, _TAKEN.label("taken"), func.min(_s.number))
    .join(m.Tranche.__table__, _s.tranche_id == _t.id)
    .group_by(_s.tranche_id, _t.number)
    .having(func.sum(case((_FREE, 1), else_=0)) > 0)
    .order_by(_TAKEN, _t.number).limit(1))
#: its first free slot
_FIRST_FREE = Prepared(select(_s.id).where(_s.tranche_id == bindparam("tranche"), _FREE)
                       .order_by(_s.number).limit(1))
#: the slot taken, if still free (two claims of one slot: one wins)
_TAKE = Prepared(update(m.Slot.__table__).where(_s.id == bindparam("slot"), _FREE).values(
    status="active", rater_id=bindparam("rater"), claimed_at=_NOW,
    expires_at=bindparam("expires"), step=0, step_at=_NOW))
_RATER_RATING = Prepared(update(m.Rater.__table__).where(_r.id == bindparam("rater"))
                         .values(stage="rating", slot_id=bindparam("slot")))
_RATER_FULL = Prepared(update(m.Rater.__table__).where(_r.id == bindparam("rater"))
                       .values(stage="full"))


def _claim(session: Session | Connection, rater_id: int, config: StudyConfig,
           now) -> int | None:
    """Give the rater a slot of the tranche with the fewest completed-or-active raters; the
    slot's id, or None when none is free (the rater's stage is then ``full``).

    The slot is taken by a conditional UPDATE (free, or active with an expired claim), so two
    concurrent claims can never take the same slot and no tranche gets more than its target.
    Core statements on ``session`` (a connection or an ORM session's), in its transaction:
    the caller commits.
    """
    # until its first page is answered a claim lasts only first_answer_timeout_s
    expires = now + timedelta(seconds=min(config.claim_timeout_s, config.first_answer_timeout_s))
    connection = _core(session)
    for _ in range(50):
        ranked = _LEAST_TAKEN.first(connection, {"now": now})
        if ranked is None:
            _RATER_FULL.rowcount(connection, {"rater": rater_id})
            return None
        first = _FIRST_FREE.first(connection, {"tranche": ranked[0], "now": now})
        if first is None:
            continue
        if _TAKE.rowcount(connection, {"slot": first[0], "rater": rater_id, "now": now,
                                       "expires": expires}):
            _RATER_RATING.rowcount(connection, {"rater": rater_id, "slot": first[0]})
            return first[0]
    raise Rejected("error_invalid", "could not claim a tranche; please reload")


def release_claims(session: Session, rater_ids, now) -> int:
    """End the unfinished claims of ``rater_ids`` at ``now``, as the idle timeout would later:
    an active slot whose claim has expired is free to :func:`_claim` (the same predicate), so
    the next rater gets it at once (a platform said the participant returned or timed out).
    Completed slots are kept. Returns the slots released."""
    ids = list(rater_ids)
    if not ids:
        return 0
    released = session.execute(update(m.Slot).where(
        m.Slot.rater_id.in_(ids), m.Slot.status == "active", m.Slot.expires_at > now)
        .values(expires_at=now)).rowcount
    session.commit()
    return released


def retry_claim(session: Session, rater: m.Rater, config: StudyConfig, now=None) -> None:
    """A rater turned away because the study was full tries again (claims may have expired)."""
    if rater.stage != "full":
        return
    session.execute(update(m.Rater).where(m.Rater.id == rater.id).values(stage="rating"))
    _claim(session, rater.id, config, now or database_now(session))
    session.commit()
    session.refresh(rater)


@dataclass(frozen=True)
class Place:
    """A rater's slot as the rater's path reads it (columns of
    :class:`lexgold.study.models.Slot`)."""

    id: int
    rater_id: int | None
    tranche_id: int
    status: str
    step: int
    step_at: datetime | None
    claimed_at: datetime | None


@dataclass(frozen=True)
class CurrentRater:
    """The rater of a request with its slot, read in one Core statement
    (:func:`current_rater`): what the rater's pages and :func:`submit_step` need, no ORM
    entity (the flow's rarer steps load :class:`lexgold.study.models.Rater` by ``id``)."""

    id: int
    public_id: str
    stage: str
    instructions_page: int
    slot_id: int | None
    slot: Place | None


#: the rater of a public ID and browser hash, with its slot (prepared once: every request asks)
_RATER_AND_SLOT = Prepared(select(
    _r.id, _r.public_id, _r.stage, _r.instructions_page, _r.slot_id,
    _s.id, _s.rater_id, _s.tranche_id, _s.status, _s.step, _s.step_at, _s.claimed_at).select_from(
    m.Rater.__table__.outerjoin(m.Slot.__table__, _s.id == _r.slot_id)).where(
    _r.public_id == bindparam("public_id"), _r.browser_sha256 == bindparam("browser")))
_SLOT = select(_s.id, _s.rater_id, _s.tranche_id, _s.status, _s.step, _s.step_at,
               _s.claimed_at).where(_s.id == bindparam("slot"))


def current_rater(session: Session | Connection, public_id: str,
                  browser: str) -> CurrentRater | None:
    """The rater whose public ID and browser hash (:func:`browser_hash`) are these, with its
    slot; None when none matches."""
    row = _RATER_AND_SLOT.first(_core(session), {"public_id": public_id, "browser": browser})
    if row is None:
        return None
    return CurrentRater(*row[:5], Place(*row[5:]) if row[5] is not None else None)


def as_current(session: Session | Connection, rater: m.Rater) -> CurrentRater:
    """``rater`` (an ORM entity) as :func:`current_rater` gives it, with its slot."""
    row = _core(session).execute(_SLOT, {"slot": rater.slot_id}).first() \
        if rater.slot_id is not None else None
    return CurrentRater(rater.id, rater.public_id, rater.stage, rater.instructions_page,
                        rater.slot_id, Place(*row) if row is not None else None)


def current_slot(session: Session | Connection, rater: CurrentRater | m.Rater) -> Place:
    """The rater's slot; :class:`Rejected` (``expired_text``) if it went to someone else."""
    if isinstance(rater, CurrentRater):
        slot = rater.slot
    else:
        row = _core(session).execute(_SLOT, {"slot": rater.slot_id}).first() \
            if rater.slot_id is not None else None
        slot = Place(*row) if row is not None else None
    if slot is None or slot.rater_id != rater.id:
        raise Rejected("expired_text", "claim expired and given to another rater")
    return slot


def step_content(session: Session | Connection, slot: Place):
    """The step the slot is at, its items with their pairs, and the step count."""
    return page_content(session, slot.tranche_id, slot.step)


@dataclass(frozen=True)
class PageStep:
    """A step as a page shows it (the columns of :class:`lexgold.study.models.Step`)."""

    id: int
    tranche_id: int
    position: int
    kind: str
    batch: str
    checkpoint: int | None


@dataclass(frozen=True)
class PageItem:
    """An item of a page (the columns of :class:`lexgold.study.models.Item`)."""

    id: int
    step_id: int
    position: int
    pair_id: int
    kind: str
    tuple_id: int | None


@dataclass(frozen=True)
class PagePair:
    """The pair of an item (the columns of :class:`lexgold.study.models.Pair` a page shows)."""

    id: int
    word1: str
    word2: str
    pos: str
    topic: str


#: page content per connection pool (one study database): ``(tranche id, position) ->
#: content``. A tranche's pages are written once with the tranche (:mod:`lexgold.study.store`,
#: at ``study create`` or a top-up) and never change, so a page read once is served from here.
_PAGES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def page_content(session: Session | Connection, tranche_id: int, position: int):
    """Page ``position`` of a tranche (read only): its step, its items with their pairs, and
    the tranche's step count, as immutable rows (read from the database once per pool, a
    tranche's pages at once: :data:`_PAGES`)."""
    bind = session if isinstance(session, Connection) else session.get_bind()
    cache = _PAGES.setdefault(bind.engine.pool, {})
    key = (tranche_id, position)
    if key not in cache:
        cache.update(_read_tranche(session, tranche_id))
    return cache[key]


def _read_tranche(session: Session | Connection, tranche_id: int) -> dict:
    """Every page of a tranche, ``(tranche id, position) -> (step, items, step count)``, in
    three statements (the tranche, its steps, their items with their pairs)."""
    s, i, p = m.Step.__table__.c, m.Item.__table__.c, m.Pair.__table__.c
    connection = _core(session)                # Core statements: no ORM entity is loaded
    n_steps = connection.execute(select(m.Tranche.__table__.c.n_steps)
                                 .where(m.Tranche.__table__.c.id == tranche_id)).scalar_one()
    steps = {row[0]: PageStep(*row) for row in connection.execute(
        select(s.id, s.tranche_id, s.position, s.kind, s.batch, s.checkpoint)
        .where(s.tranche_id == tranche_id))}
    items: dict = {step_id: [] for step_id in steps}
    for row in connection.execute(
            select(i.id, i.step_id, i.position, i.pair_id, i.kind, i.tuple_id,
                   p.id, p.word1, p.word2, p.pos, p.topic)
            .join_from(m.Item.__table__, m.Pair.__table__, i.pair_id == p.id)
            .join(m.Step.__table__, i.step_id == s.id)
            .where(s.tranche_id == tranche_id).order_by(i.step_id, i.position)):
        items[row[1]].append((PageItem(*row[:6]), PagePair(*row[6:])))
    return {(tranche_id, step.position): (step, tuple(items[step.id]), n_steps)
            for step in steps.values()}


def start_value(config: StudyConfig, study_seed: int, rater_id: int, item_id: int) -> int | None:
    """Where a slider starts (recorded with the answer); ``None`` for binary questions."""
    if config.task == "binary":
        return None
    if config.slider_start == "random":
        rng = np.random.default_rng([study_seed, rater_id, item_id])
        return int(rng.integers(config.scale_min, config.scale_max + 1))
    return int(config.slider_start)


#: a page's answers move the slot on, if it is still the rater's and at that page (prepared
#: once, as the statements below)
_NEXT_STEP = Prepared(update(m.Slot.__table__).where(
    _s.id == bindparam("slot"), _s.rater_id == bindparam("rater"),
    _s.step == bindparam("position")).values(
    step=bindparam("next"), step_at=bindparam("now"), expires_at=bindparam("expires")))
#: a page answered faster than ``min_seconds_per_pair`` per pair
_FAST_PAGE = Prepared(update(m.Rater.__table__).where(_r.id == bindparam("rater")).values(
    fast_pages=_r.fast_pages + 1))
#: the last page answered: the slot and the rater are done
_SLOT_DONE = Prepared(update(m.Slot.__table__).where(_s.id == bindparam("slot")).values(
    status="completed", completed_at=bindparam("now")))
#: a page's answer rows, inserted in one executemany (no ids read back)
_INSERTS = {table.name: Prepared(insert(table)) for table in (m.Answer.__table__,
                                                               m.CheckpointAnswer.__table__)}
_RATER_DONE = Prepared(update(m.Rater.__table__).where(_r.id == bindparam("rater")).values(
    stage="done", completed_at=bindparam("now")))


def submit_step(session: Session | Connection, rater: CurrentRater | m.Rater, position: int,
                form, config: StudyConfig, study_seed: int, now=None) -> str:
    """Store the answers of step ``position``; returns ``stored`` or ``repeat``.

    A step already submitted (double click, reload, retry) is a ``repeat`` and stores nothing.
    Raises :class:`Rejected` for a step out of order, unknown or foreign item ids, values out
    of range (``error_invalid``) or unanswered items (``error_incomplete``). Every statement
    is a Core one on ``session``, a connection or an ORM session's connection (no ORM entity
    is loaded or flushed); the transaction is committed or rolled back on it.
    """
    now = now or database_now(session)
    slot = current_slot(session, rater)
    if slot.status == "completed" or position < slot.step:
        return "repeat"
    if position != slot.step:
        raise Rejected("error_invalid", "step out of order")
    step, items, n_steps = step_content(session, slot)
    shown = None                                  # items of the page (BWS: tuples)
    if config.task == "bws":                      # Best-Worst Scaling (lexgold.annotate.bws_site)
        if step.kind == "checkpoint":
            rows = [bws_site.check_tuple_answer(form, step, rater, slot, config, now,
                                                MAX_RESPONSE_MS)]
        else:
            rows = bws_site.tuple_answers(form, items, rater, slot, now,
                                          MAX_RESPONSE_MS)
        table = type(rows[0]).__table__
        rows = [{key: value for key, value in vars(row).items() if key in table.c}
                for row in rows]
        inserting = _INSERTS[table.name]
        shown = max(1, len(rows) // config.bws.tuple_size) if step.kind != "checkpoint" else 1
    elif step.kind == "checkpoint":
        inserting, rows = _INSERTS["checkpoint_answer"], [
            _checkpoint_answer(form, step, rater, slot, config, now)]
    else:
        inserting, rows = _INSERTS["answer"], _group_answers(form, items, rater, slot, config,
                                                             study_seed, now)
    shown = len(rows) if shown is None else shown
    given = slot.step_at or slot.claimed_at or now       # when this page was given
    for row in rows:      # timed by the server: a browser's own t<id> fields are not believed
        row["server_ms"] = server_ms(given, now, shown)
    connection = _core(session)
    try:
        moved = _NEXT_STEP.rowcount(connection, {
            "slot": slot.id, "rater": rater.id, "position": position, "next": position + 1,
            "now": now, "expires": now + timedelta(seconds=config.claim_timeout_s)})
        if not moved:
            session.rollback()
            return "repeat"
        # a page's answers in one executemany, in order; no ids are read back
        inserting.many(connection, rows)
        if (now - given).total_seconds() < config.min_seconds_per_pair * shown:
            _FAST_PAGE.rowcount(connection, {"rater": rater.id})
        if position + 1 >= n_steps:
            _SLOT_DONE.rowcount(connection, {"slot": slot.id, "now": now})
            _RATER_DONE.rowcount(connection, {"rater": rater.id, "now": now})
        session.commit()
    except IntegrityError:
        session.rollback()
        return "repeat"
    if isinstance(session, Session):
        session.expire_all()
    # HyperLex section 4.4 (recruit until enough are accepted) is not run here: the figures
    # refresher of lexgold.live.figures tops up tranches outside raters' requests
    return "stored"


def server_ms(given, answered, n_items: int) -> int:
    """Milliseconds per item of a page given at ``given`` and answered at ``answered`` (both
    from the site's clock, never the browser's), capped at 24 days (an INTEGER column)."""
    elapsed = max(0.0, (answered - given).total_seconds()) * 1000.0
    return min(round(elapsed / max(1, n_items)), 2_000_000_000)


def _group_answers(form, items, rater, slot, config, study_seed, now) -> list[dict]:
    """The rows of :class:`lexgold.study.models.Answer` a page of pairs stores, as dicts."""
    expected = {item.id for item, _ in items}
    sent = {parse_int(key[1:]) for key in form.keys() if _ANSWER_FIELD.fullmatch(key)}
    if sent - expected:
        raise Rejected("error_invalid", "answer for an item not on this page")
    low, high = (0, 1) if config.task == "binary" else (config.scale_min, config.scale_max)
    rows = []
    for item, _ in items:
        raw = form.get(f"r{item.id}", "").strip()
        if raw == "":
            raise Rejected("error_incomplete")
        rating = parse_int(raw)
        if rating is None or not low <= rating <= high:
            raise Rejected("error_invalid", f"rating {raw!r} outside {low}..{high}")
        ms = parse_int(form.get(f"t{item.id}", ""))
        rows.append({"rater_id": rater.id, "item_id": item.id, "slot_id": slot.id,
                     "rating": rating,
                     "start_value": start_value(config, study_seed, rater.id, item.id),
                     "response_ms": ms if ms is not None and 0 <= ms <= MAX_RESPONSE_MS
                     else None, "answered_at": now})
    return rows


#: the form fields of a page's answers: ``r<item id>`` (rating) and ``t<item id>`` (browser time)
_ANSWER_FIELD = re.compile(r"[rt][0-9]+")


def _checkpoint_answer(form, step, rater, slot, config, now) -> dict:
    """The row of :class:`lexgold.study.models.CheckpointAnswer` a checkpoint page stores."""
    check = config.checkpoints[step.checkpoint]
    if any(re.fullmatch(r"r\d+", key) for key in form.keys()):
        raise Rejected("error_invalid", "rating fields on a checkpoint page")
    raw = form.get("choice", "").strip()
    if raw == "":
        raise Rejected("error_incomplete")
    choice = parse_int(raw)
    if choice is None or not 0 <= choice < len(check.options):
        raise Rejected("error_invalid", f"checkpoint choice {raw!r} out of range")
    ms = parse_int(form.get("t", ""))
    return {"rater_id": rater.id, "step_id": step.id, "slot_id": slot.id, "choice": choice,
            "correct": choice == check.answer, "answered_at": now,
            "response_ms": ms if ms is not None and 0 <= ms <= MAX_RESPONSE_MS else None}
