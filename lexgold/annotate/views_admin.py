"""Admin blueprint: password login, progress per tranche, raters, live agreement, exclusions,
quality flags per rater (:mod:`lexgold.process.quality`). Asked to (``?reload=1``, a link on the
page: a page that reloads by itself unasked fails WCAG 2.2.1), the page reloads itself every
:data:`REFRESH_S` seconds (a ``<meta http-equiv="refresh">``: no script under the CSP); times are
ISO 8601 with their UTC offset.

The page never runs the analysis: agreement, exclusions, recruitment and quality flags come
from the figures stored by the background refresher (:mod:`lexgold.live.figures`), with
when they were computed and how many answers came since; only cheap SQL aggregates (slots per
tranche, raters by stage, a page of the newest raters) are read live. Long tables are capped
(flagged raters first; every rater in ``/admin/quality.csv``).

The password is checked against a werkzeug hash from the configuration or the environment
(``LEXGOLD_ADMIN_PASSWORD_HASH``); it is never stored in the repository or the study.
Agreement (IAA-1, IAA-2) and the exclusions preview come from :mod:`lexgold.process`.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import secrets
from datetime import datetime, timedelta, timezone

import pandas as pd
from flask import (Blueprint, abort, current_app, redirect, render_template, request,
                   session, url_for)
from sqlalchemy import case, delete, func, select
from werkzeug.security import check_password_hash

from lexgold.annotate import flow, throttle
from lexgold.live import figures, tally
from lexgold.study import models as m
from lexgold.study import preview_links
from lexgold.study.entries import ENTRY_NOTES, entry_links
from lexgold.annotate.context import db, now, state
from lexgold.annotate.views_rater import render_step
from lexgold.study.health import measure
from lexgold.study.machine import study_machine
from lexgold.ratings import SIMULATED

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
    key = f"login:{throttle.client(request.remote_addr)}"      # an IPv6 client: its /64
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
    """The study at a glance. Live (a few SQL aggregates): database health, slots per
    tranche, raters by stage, the newest raters. From the stored figures
    (:mod:`lexgold.live.figures`, computed off the raters' requests): accepted raters,
    agreement, completion time, pairs below the minimum, exclusions, quality flags."""
    db_health = measure(db(), current_app.extensions["lexgold_engine"].lexgold_health)
    stored = figures.load(db())
    shown = stored.figures if stored is not None else {}
    table = _progress(now()).merge(
        pd.DataFrame(shown.get("tranches", []), columns=figures.TRANCHE_FIELDS)[
            ["tranche", "accepted", "missing", "iaa1", "iaa2", "alpha_interval", "icck",
             "median_minutes"]],
        on="tranche", how="left").astype(object)
    table = table.where(table.notna(), None)
    stages = db().execute(select(m.Rater.stage, func.count()).group_by(m.Rater.stage)).all()
    n_answers = tally.stored_rows(db())
    page = _raters_page(request.args.get("raters", ""))
    since = n_answers - shown.get("n_rows", 0) if stored is not None else 0
    stale_s = figures.stale(stored, since, now(),
                            float(current_app.config.get("FIGURES_EVERY_S", figures.EVERY_S)))
    if stale_s is not None:
        current_app.logger.warning("admin figures are %.0f s old with %d answers since: is the "
                                   "figures refresher running?", stale_s, since)
    return render_template(
        "admin.html", name=state().name, progress=table.to_dict("records"),
        stages=dict(stages), n_answers=n_answers, stored=stored, stale_s=stale_s,
        since=since,
        exclusions=shown.get("exclusions", []), n_exclusions=shown.get("n_exclusions", 0),
        recruitment=shown, quality=shown.get("quality", []),
        n_quality=shown.get("n_quality", 0),
        raters=_raters(page), raters_page=page, raters_per_page=RATERS_PER_PAGE,
        refresh_s=REFRESH_S, reload=request.args.get("reload") == "1", too_fast_s=shown.get("too_fast_s", _too_fast_s()),
        platform=_platform(), db_health=db_health,
        agreement_notes=shown.get("agreement_notes", []), adaptive=shown.get("adaptive"),
        bars=_bars(table, dict(stages), shown), dashboard=shown.get("dashboard"),
        preview_links=_preview_links(), preview_days=preview_links.DAYS,
        machine=_machine(), long_table=LONG_TABLE, simulated=db().scalar(   # the banner
            select(func.count()).where(m.Rater.platform == SIMULATED)))


def _machine() -> dict | None:
    """The study's machine rater as the admin view names it (``study create --machine``):
    model, mode, the SHA-256 of its ratings file and of its prompt, pairs covered; None
    without one."""
    found = study_machine(db())
    if found is None:
        return None
    provenance = found.provenance or {}
    return {"model": found.model, "mode": f"machine-{found.mode}",
            "file": provenance.get("file"), "file_sha256": provenance.get("file_sha256"),
            "prompt_sha256": provenance.get("prompt_sha256"),
            "pairs_covered": found.pairs_covered,
            "pairs": db().scalar(select(func.count()).select_from(m.Pair))}


def _bars(table: pd.DataFrame, stages: dict, shown: dict) -> list[dict]:
    """The dashboard's progress bars: ``id, label, value, max`` (places completed of the
    target, raters active in the open places, screened out of those who entered, excluded so
    far of the completed: live counts, the exclusions from the stored figures)."""
    target, completed = int(table["target"].sum()), int(table["completed"].sum())
    entered = sum(stages.values())
    screened = [{"id": "screened", "label": "screened out of the raters who entered",
                 "value": int(stages.get("screened_out", 0)), "max": entered}] \
        if state().config.qualification is not None else []     # none without a question
    return [
        {"id": "places", "label": "places completed", "value": completed, "max": target},
        {"id": "active", "label": "raters active in the open places",
         "value": int(table["active"].sum()), "max": max(target - completed, 0)},
        *screened,
        {"id": "excluded", "label": "excluded so far of the raters who completed (forecast)",
         "value": int(shown.get("n_excluded", 0)), "max": completed}]


#: a table of more rows than this is folded (a ``<details>`` the admin opens): the page of a
#: 520-rater study stays a page of sections, not 29,000 pixels of rows
LONG_TABLE = 20
#: rows of the raters table per page (``?raters=N`` pages back)
RATERS_PER_PAGE = 100
QUALITY_COLUMNS = ["rater_id", "platform", "platform_id", "tranche", "median_s_per_pair",
                   "top_value_share", "checkpoints_failed", "checkpoints", "repeat_difference"]


def _progress(at) -> pd.DataFrame:
    """Per tranche: target (slots), completed, active (unexpired claims), expired claims; one
    SQL aggregate."""
    active = m.Slot.status == "active"
    live = active & (m.Slot.expires_at > at)
    rows = db().execute(
        select(m.Tranche.number, func.count(),
               func.sum(case((m.Slot.status == "completed", 1), else_=0)),
               func.sum(case((live, 1), else_=0)),
               func.sum(case((live, 0), (active, 1), else_=0)))
        .join(m.Tranche, m.Slot.tranche_id == m.Tranche.id)
        .group_by(m.Tranche.number).order_by(m.Tranche.number)).all()
    return pd.DataFrame([tuple(int(v or 0) for v in row) for row in rows],
                        columns=["tranche", "target", "completed", "active", "expired"])


def _platform() -> dict:
    """What the researcher gives the platform: the completion and screen-out codes, the link
    back (``--completion-url``) and the entry link of each accepted platform. The site's root
    URL is Flask's (this request's host and scheme; behind a reverse proxy only as far as
    ``--trusted-proxies`` lets forwarded headers in)."""
    study = state()
    return {"completion_code": study.completion_code, "screenout_code": study.screenout_code,
            "qualification": study.config.qualification is not None,
            "completion_url": study.completion_url, "screenout_url": study.screenout_url,
            "entry_links": entry_links(url_for("rater.entry", _external=True), study.entries),
            "notes": ENTRY_NOTES}


@admin.route("/preview/<int(max=999999999):tranche>/<int(max=999999999):position>",
              methods=["GET", "POST"])
@admin_required
def preview(tranche: int, position: int):
    """Preview as rater: page ``position`` (from 0) of a tranche as a rater sees it. Nothing
    is written: no rater, no slot taken, no answer; sending a page only moves to the next."""

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


@admin.post("/preview-links")
@admin_required
def make_preview_link():
    """A shareable preview link (:mod:`lexgold.study.preview_links`) valid ``days`` days
    (1 to 365; default 7), shown on the admin page."""
    days = flow.parse_int(request.form.get("days", "") or str(preview_links.DAYS))
    if days is None or not 0 < days <= preview_links.MAX_DAYS:
        abort(400)
    preview_links.make(db(), current_app.secret_key, now(), days, made_by="admin")
    return redirect(url_for("admin.overview") + "#preview-links")


@admin.post("/preview-links/<int(max=999999999):link_id>/revoke")
@admin_required
def revoke_preview_link(link_id: int):
    preview_links.revoke(db(), now(), link_id)
    return redirect(url_for("admin.overview") + "#preview-links")


def _preview_links() -> list[dict]:
    """The live preview links with their URLs (this request's host and scheme)."""
    return [{"id": row.id, "expires_at": row.expires_at, "made_by": row.made_by,
             "url": url_for("preview.start", _external=True,
                            token=preview_links.token_of(db(), current_app.secret_key,
                                                            row))}
            for row in preview_links.live(db(), now())]


@admin.post("/move")
@admin_required
def move():
    """A one-time link (valid :data:`flow.MOVE_LINK_S`) that moves a rater to a new browser,
    for a participant who contacted the researcher. ``rater``: its rater ID or platform ID.
    Anonymous raters are not moved: nothing tells the researcher who is asking; a platform ID
    never names a simulated rater (``lexgold study rehearse``), whatever ID it entered with."""
    wanted = request.form.get("rater", "").strip()
    found = db().scalars(select(m.Rater).where(
        (m.Rater.public_id == wanted) |
        ((m.Rater.external_id == wanted)
         & m.Rater.platform.not_in(("anonymous", SIMULATED)))).limit(2)).all() \
        if wanted else []
    if len(found) != 1 or found[0].platform == "anonymous":
        error = (f"No rater with the rater or platform ID {wanted!r}" if not found else
                 f"{wanted!r} names an anonymous rater, who cannot be moved" if len(found) == 1
                 else f"{wanted!r} names several raters: give the rater ID")
        return render_template("admin_move.html", error=error, link=None), 404
    token = flow.issue_move_link(db(), found[0], now(), key=current_app.secret_key)
    return render_template("admin_move.html", error=None, rater=found[0],
                           link=url_for("rater.move_link", token=token, _external=True),
                           hours=flow.MOVE_LINK_S // 3600)


def _too_fast_s() -> float:
    """Seconds per pair below which the view marks a rater too fast (before any figures:
    :func:`lexgold.live.figures.too_fast_s`)."""
    return figures.too_fast_s(tally.protocol_from_text(state().protocol_text), state().config)


def _raters_page(text: str) -> int:
    """The ``?raters=N`` page of the rater list: "" is 0; anything but a number of at most 9
    digits (``2**64`` overflowed the database's integer) is a 404."""
    if text == "":
        return 0
    page = flow.parse_int(text)
    if page is None or page < 0:
        abort(404)
    return page


def _raters(page: int = 0) -> list:
    """The newest raters, :data:`RATERS_PER_PAGE` a page (0: the newest): platform, stage,
    tranche and pages done (a claim lost shows no slot)."""
    return db().execute(
        select(m.Rater.public_id, m.Rater.platform, m.Rater.external_id, m.Rater.stage,
               m.Tranche.number, m.Slot.step, m.Rater.created_at, m.Rater.completed_at)
        .outerjoin(m.Slot, (m.Slot.id == m.Rater.slot_id) & (m.Slot.rater_id == m.Rater.id))
        .outerjoin(m.Tranche, m.Tranche.id == m.Slot.tranche_id)
        .order_by(m.Rater.id.desc()).limit(RATERS_PER_PAGE)
        .offset(page * RATERS_PER_PAGE)).all()
