"""Shareable preview links: a link a researcher gives a collaborator or an ethics
board to walk the study as a rater sees it, without the admin password, without storing
anything, until it expires or is revoked.

A link is ``/preview/<token>``; the token is a :class:`~lexgold.study.models.PreviewLink`
row's id, the time it was made and the study's own random ``uid`` (revision 0018), signed with
the session-signing key (:mod:`itsdangerous`, HMAC-SHA1 over a salted derived key), so a copy of
the study database cannot make one; the row says until when the link works and whether it was
revoked. A link opens only the study it was made for, where one key serves several studies
(issue 48), and only the row it was made with: a row of the same id made later (after a backup
was restored) is another link. ``lexgold study preview-link`` and the admin view make and
revoke them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from itsdangerous import BadSignature, URLSafeSerializer
from sqlalchemy import select, update
from sqlalchemy.orm import Session

from lexgold.study import models as m

SALT = "lexgold.preview-link"
#: ``--days`` default and the longest a link may live
DAYS, MAX_DAYS = 7, 365


@dataclass
class Link:
    """A link made: its id, token and expiry (naive UTC)."""

    id: int
    token: str
    expires_at: datetime


def _serializer(key: str | bytes) -> URLSafeSerializer:
    return URLSafeSerializer(key, salt=SALT)


def _study_uid(session: Session) -> str:
    return session.scalar(select(m.Study.uid).limit(1)) or ""


def _payload(uid: str, row: m.PreviewLink) -> dict:
    return {"preview": row.id, "study": uid, "made": row.created_at.isoformat()}


def make(session: Session, key: str | bytes, now: datetime, days: float = DAYS,
         made_by: str = "cli") -> Link:
    """Store a link valid ``days`` from ``now`` (0 < days <= :data:`MAX_DAYS`; commits) and
    return it with its signed token."""
    if not 0 < days <= MAX_DAYS:
        raise ValueError(f"days must be above 0 and at most {MAX_DAYS}; got {days:g}")
    row = m.PreviewLink(created_at=now, expires_at=now + timedelta(days=days), made_by=made_by)
    session.add(row)
    session.commit()
    session.refresh(row)         # the row as stored: its time as the database keeps it
    return Link(row.id, token_of(session, key, row), row.expires_at)


def token_of(session: Session, key: str | bytes, row: m.PreviewLink) -> str:
    """The token of the link ``row`` (the admin view lists the live links)."""
    return _serializer(key).dumps(_payload(_study_uid(session), row))


def check(session: Session, key: str | bytes, token: str, now: datetime) -> int | None:
    """The id of the live link ``token`` names: well signed, made for this study (its
    ``uid``) as this row (its time of making), on record, not revoked, not expired; None
    otherwise. Reads only."""
    try:
        payload = _serializer(key).loads(token)
    except BadSignature:
        return None
    link_id = payload.get("preview") if isinstance(payload, dict) else None
    if not isinstance(link_id, int):
        return None
    uid = _study_uid(session)
    row = session.scalars(select(m.PreviewLink).where(
        m.PreviewLink.id == link_id, m.PreviewLink.revoked_at.is_(None),
        m.PreviewLink.expires_at > now)).first()
    if row is None or not uid or payload != _payload(uid, row):
        return None
    return row.id


def live(session: Session, now: datetime) -> list[m.PreviewLink]:
    """The links neither revoked nor expired, newest first."""
    return list(session.scalars(select(m.PreviewLink).where(
        m.PreviewLink.revoked_at.is_(None), m.PreviewLink.expires_at > now)
        .order_by(m.PreviewLink.id.desc())))


def revoke(session: Session, now: datetime, link_id: int | None = None) -> int:
    """Revoke link ``link_id`` (None: every live link); returns how many (commits)."""
    query = update(m.PreviewLink).where(m.PreviewLink.revoked_at.is_(None),
                                        m.PreviewLink.expires_at > now)
    if link_id is not None:
        query = query.where(m.PreviewLink.id == link_id)
    count = session.execute(query.values(revoked_at=now)).rowcount
    session.commit()
    return count
