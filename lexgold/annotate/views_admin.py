"""Admin blueprint: password login, progress per tranche, raters, live agreement, exclusions,
quality flags per rater (:mod:`lexgold.process.quality`). The page reloads itself every
:data:`REFRESH_S` seconds (a ``<meta http-equiv="refresh">``: no script under the CSP); times are
ISO 8601 with their UTC offset.

The password is checked against a werkzeug hash from the configuration or the environment
(``LEXGOLD_ADMIN_PASSWORD_HASH``); it is never stored in the repository or the study.
Agreement (IAA-1, IAA-2) and the exclusions preview come from :mod:`lexgold.process`.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import secrets
import tomllib
from datetime import datetime, timedelta, timezone

import pandas as pd
from flask import (Blueprint, abort, current_app, redirect, render_template, request, session,
                   url_for)
from sqlalchemy import delete, func, select
from werkzeug.security import check_password_hash

from lexgold.annotate import flow, throttle
from lexgold.annotate import models as m
from lexgold.annotate.context import db, now, state
from lexgold.annotate.health import measure
from lexgold.annotate.quiet import collected_warnings
from lexgold.annotate.recruit import recruitment
from lexgold.annotate.study import export_ratings, progress

admin = Blueprint("admin", __name__, url_prefix="/admin")
#: password checks allowed from one client address within LOCKOUT_S (a successful login resets
#: the count); others can still log in: no lock-out by strangers. Behind a reverse proxy the
#: client address is the proxy's unless ``lexgold serve --trusted-proxies N`` is given.
MAX_FAILURES, LOCKOUT_S = 10, 300.0
#: an admin login lasts this long at most (then log in again)
ADMIN_SESSION_S = 12 * 3600
#: the overview reloads itself this often while the study runs (seconds)
REFRESH_S = 60


@admin.app_template_filter("iso")
def iso_time(value: datetime | None) -> str:
    """A stored (naive UTC) time as ISO 8601 with its offset: ``2026-03-01T12:00:00+00:00``."""
    if value is None:
        return ""
    if value.tzinfo is None:
        value = value.replace(tzinfo=timezone.utc)
    return value.isoformat(timespec="seconds")


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _password_id() -> str:
    """Fingerprint of the admin password in force (a new password voids old sessions), the same
    on every host: keyed with the session-signing key (which hosts share), over
    ``ADMIN_PASSWORD_ID`` (what ``lexgold serve`` derives from a plain password: each host's
    salted hash of it differs) or else the hash itself."""
    named = current_app.config.get("ADMIN_PASSWORD_ID") or \
        current_app.config.get("ADMIN_PASSWORD_HASH") or ""
    key = current_app.secret_key
    return hmac.new(key if isinstance(key, bytes) else key.encode(),
                    b"admin-password\0" + named.encode(), hashlib.sha256).hexdigest()


def is_admin() -> bool:
    """True when the session cookie's token names a live server-side admin session.

    The signed cookie alone is not enough: the token must be on record (deleted at logout),
    made under the current password and not expired. The record holds only the token's
    SHA-256, so a copy of the study database cannot forge a session."""
    token = session.get("admin")
    if not isinstance(token, str) or not current_app.config.get("ADMIN_PASSWORD_HASH"):
        return False
    return db().scalar(select(m.AdminSession.id).where(
        m.AdminSession.token_sha256 == _sha256(token),
        m.AdminSession.password_sha256 == _password_id(),
        m.AdminSession.expires_at > now())) is not None


def admin_required(view):
    @functools.wraps(view)
    def wrapped(*args, **kwargs):
        if not is_admin():
            return redirect(url_for("admin.login"))
        return view(*args, **kwargs)
    return wrapped


def _start_admin_session() -> None:
    token, started = secrets.token_urlsafe(32), now()
    db().execute(delete(m.AdminSession).where(
        (m.AdminSession.expires_at <= started)
        | (m.AdminSession.password_sha256 != _password_id())))
    db().add(m.AdminSession(token_sha256=_sha256(token), password_sha256=_password_id(),
                            created_at=started,
                            expires_at=started + timedelta(seconds=ADMIN_SESSION_S)))
    db().commit()
    session["admin"] = token


@admin.route("/login", methods=["GET", "POST"])
def login():
    stored = current_app.config.get("ADMIN_PASSWORD_HASH")
    if not stored:
        return render_template("admin_login.html", error="The admin view is disabled: start the "
                               "server with LEXGOLD_ADMIN_PASSWORD set."), 403
    if request.method != "POST":     # GET, and HEAD (Flask routes it here): never a login
        return render_template("admin_login.html", error=None)
    key = f"login:{request.remote_addr or '-'}"
    # counted before the (slow) hash check, atomically in the database: parallel guesses
    # cannot all see the old count, and every server process shares it
    if not throttle.hit(db(), key, MAX_FAILURES, LOCKOUT_S):
        return render_template("admin_login.html", error="Too many failed attempts; try again "
                               "in a few minutes."), 429
    if check_password_hash(stored, request.form.get("password", "")):
        throttle.clear(db(), key)
        _start_admin_session()
        return redirect(url_for("admin.overview"))
    return render_template("admin_login.html", error="Wrong password."), 401


@admin.post("/logout")
def logout():
    token = session.pop("admin", None)
    if isinstance(token, str):
        db().execute(delete(m.AdminSession).where(m.AdminSession.token_sha256 == _sha256(token)))
        db().commit()
    return redirect(url_for("admin.login"))


@admin.get("", strict_slashes=True)
def no_slash():
    """``/admin`` -> ``/admin/`` with a relative Location (Werkzeug's own slash redirect builds
    an absolute URL from the request's Host header)."""
    return redirect(url_for("admin.overview"))


@admin.get("/")
@admin_required
def overview():
    db_health = measure(db(), current_app.extensions["lexgold_engine"].lexgold_health)
    ratings = export_ratings(db())
    table = progress(db(), now())
    agreement_notes: list[str] = []
    agreement = _agreement(ratings, agreement_notes)
    found = recruitment(db(), state().config)     # HyperLex section 4.4: accepted raters
    table = table.merge(agreement, on="tranche", how="left").merge(
        found["tranches"][["tranche", "accepted", "missing"]], on="tranche", how="left").merge(
        _completion_minutes(), on="tranche", how="left")
    stages = db().execute(select(m.Rater.stage, func.count()).group_by(m.Rater.stage)).all()
    platform_ids = _platform_ids()
    exclusions = _exclusions(ratings)
    if not isinstance(exclusions, str):
        exclusions = [{**row, **platform_ids.get(row["rater_id"], {})} for row in exclusions]
    return render_template("admin.html", name=state().name, progress=table.to_dict("records"),
                           stages=dict(stages), exclusions=exclusions,
                           n_answers=len(ratings), raters=_raters(), recruitment=found,
                           quality=_quality(ratings, platform_ids), refresh_s=REFRESH_S,
                           too_fast_s=_too_fast_s(), platform=_platform(), db_health=db_health,
                           agreement_notes=agreement_notes)


def _platform() -> dict:
    """What the researcher gives the platform: the completion and screen-out codes, the link
    back (``--completion-url``) and the entry link of each accepted platform. The site's root
    URL is Flask's (this request's host and scheme; behind a reverse proxy only as far as
    ``--trusted-proxies`` lets forwarded headers in)."""
    study = state()
    return {"completion_code": study.completion_code, "screenout_code": study.screenout_code,
            "qualification": study.config.qualification is not None,
            "completion_url": study.completion_url, "screenout_url": study.screenout_url,
            "entry_links": flow.entry_links(url_for("rater.entry", _external=True),
                                            study.entries),
            "notes": flow.ENTRY_NOTES}


@admin.route("/preview/<int(max=999999999):tranche>/<int(max=999999999):position>",
              methods=["GET", "POST"])
@admin_required
def preview(tranche: int, position: int):
    """Preview as rater: page ``position`` (from 0) of a tranche as a rater sees it. Nothing
    is written: no rater, no slot taken, no answer; sending a page only moves to the next."""
    from lexgold.annotate.views_rater import render_step

    if request.method == "POST":
        return redirect(url_for("admin.preview", tranche=tranche, position=position + 1))
    row = db().scalars(select(m.Tranche).where(m.Tranche.number == tranche)).first()
    if row is None:
        abort(404)
    back = url_for("admin.overview")
    if position >= row.n_steps:
        return render_template("admin_preview_end.html", tranche=tranche, n_steps=row.n_steps,
                               back=back)
    step, items, n_steps = flow.page_content(db(), row.id, position)
    return render_step(step, items, n_steps, position, rater_id=0,
                       action=url_for("admin.preview", tranche=tranche, position=position),
                       banner=f"Preview as rater: tranche {tranche}, page {position + 1} of "
                              f"{n_steps}. Nothing is stored and no place is taken.")


@admin.post("/move")
@admin_required
def move():
    """A one-time link (valid :data:`flow.MOVE_LINK_S`) that moves a rater to a new browser,
    for a participant who contacted the researcher. ``rater``: its rater ID or platform ID.
    Anonymous raters are not moved: nothing tells the researcher who is asking."""
    wanted = request.form.get("rater", "").strip()
    found = db().scalars(select(m.Rater).where(
        (m.Rater.public_id == wanted) |
        ((m.Rater.external_id == wanted) & (m.Rater.platform != "anonymous"))).limit(2)).all() \
        if wanted else []
    if len(found) != 1 or found[0].platform == "anonymous":
        error = (f"No rater with the rater or platform ID {wanted!r}" if not found else
                 f"{wanted!r} names an anonymous rater, who cannot be moved" if len(found) == 1
                 else f"{wanted!r} names several raters: give the rater ID")
        return render_template("admin_move.html", error=error, link=None), 404
    token = flow.issue_move_link(db(), found[0], now())
    return render_template("admin_move.html", error=None, rater=found[0],
                           link=url_for("rater.move_link", token=token, _external=True),
                           hours=flow.MOVE_LINK_S // 3600)


def _platform_ids() -> dict[str, dict]:
    """Rater id -> its platform and platform ID (to reject a submission on the platform)."""
    rows = db().execute(select(m.Rater.public_id, m.Rater.platform, m.Rater.external_id)).all()
    return {r[0]: {"platform": r[1], "platform_id": r[2] or ""} for r in rows}


def _completion_minutes() -> pd.DataFrame:
    """Median minutes from entering (consent) to completion, per tranche, completed raters."""
    rows = db().execute(
        select(m.Tranche.number, m.Rater.created_at, m.Rater.completed_at)
        .join(m.Slot, (m.Slot.id == m.Rater.slot_id) & (m.Slot.rater_id == m.Rater.id))
        .join(m.Tranche, m.Tranche.id == m.Slot.tranche_id)
        .where(m.Rater.completed_at.is_not(None))).all()
    frame = pd.DataFrame(rows, columns=["tranche", "created_at", "completed_at"])
    frame["minutes"] = (pd.to_datetime(frame["completed_at"]) -
                        pd.to_datetime(frame["created_at"])).dt.total_seconds() / 60.0
    return frame.groupby("tranche", as_index=False).agg(median_minutes=("minutes", "median"))


def _too_fast_s() -> float:
    """Seconds per pair below which the view marks a rater too fast: the protocol's
    ``too_fast_s_per_pair`` when set, else the study's ``min_seconds_per_pair``."""
    protocol = tomllib.loads(state().protocol_text)
    limit = protocol.get("process", {}).get("exclusions", {}).get("too_fast_s_per_pair", 0)
    return float(limit or state().config.min_seconds_per_pair)


def _quality(ratings: pd.DataFrame, platform_ids: dict) -> list[dict]:
    """Quality flags per rater (:func:`lexgold.process.quality.quality_flags`), with the
    rater's tranche, platform and platform ID; raters in tranche order."""
    from lexgold.process.quality import quality_flags

    if ratings.empty:
        return []
    flags = quality_flags(ratings)
    flags["tranche"] = flags["rater_id"].map(
        ratings.groupby("rater_id")["tranche"].agg(lambda t: t.mode().iloc[0]))
    rows = flags.sort_values(["tranche", "rater_id"], kind="stable").to_dict("records")
    return [{**row, **platform_ids.get(row["rater_id"], {})} for row in rows]


def _raters(limit: int = 1000) -> list:
    """The newest raters: platform, stage, tranche and pages done (a claim lost shows no slot)."""
    return db().execute(
        select(m.Rater.public_id, m.Rater.platform, m.Rater.external_id, m.Rater.stage,
               m.Tranche.number, m.Slot.step, m.Rater.created_at, m.Rater.completed_at)
        .outerjoin(m.Slot, (m.Slot.id == m.Rater.slot_id) & (m.Slot.rater_id == m.Rater.id))
        .outerjoin(m.Tranche, m.Tranche.id == m.Slot.tranche_id)
        .order_by(m.Rater.id.desc()).limit(limit)).all()


def _agreement(ratings: pd.DataFrame, notes: list[str]) -> pd.DataFrame:
    """IAA-1 and IAA-2 per tranche (HyperLex section 5), NaN where undefined; why a figure is
    undefined goes to ``notes`` (the page shows them; never the log, at every reload)."""
    rows = []
    try:
        from lexgold.process.agreement import iaa_against_mean, iaa_pairwise
    except ImportError:
        return pd.DataFrame(columns=["tranche", "iaa1", "iaa2"])
    rated = ratings[ratings["kind"] != "checkpoint"] if len(ratings) else ratings
    for tranche, frame in rated.groupby("tranche"):
        with collected_warnings() as caveats:       # shown on the page, not logged
            rows.append({"tranche": tranche, "iaa1": iaa_pairwise(frame),
                         "iaa2": iaa_against_mean(frame)})
        notes.extend(f"tranche {tranche}: {caveat}" for caveat in caveats)
    return pd.DataFrame(rows, columns=["tranche", "iaa1", "iaa2"])


def _exclusions(ratings: pd.DataFrame) -> list[dict] | str:
    """The protocol's exclusion rules applied to the ratings so far (a preview)."""
    if ratings.empty:
        return []
    try:
        from lexgold.process.exclusions import exclusion_table
    except ImportError:
        return "not available in this version"
    protocol = tomllib.loads(state().protocol_text)
    protocol["_path"] = "<study protocol>"
    with collected_warnings():
        try:
            table = exclusion_table(ratings, protocol)
        except ValueError as err:   # too few ratings for a rule yet: say so
            return f"not yet computable: {err}"
    return table.to_dict("records")


