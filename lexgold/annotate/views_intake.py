"""Pause, resume and close the study from the site: the admin view's buttons (a POST with its
CSRF token, as its other forms) and the gate before the rater pages
(:mod:`lexgold.study.intake` stores the state; ``lexgold study pause|resume|close`` sets it
from the command line).

The gate costs a rater's request nothing while the study is open beyond one read of the
study's row every :data:`INTAKE_CACHE_S` seconds per server process (the admin view's POST
clears its own process's copy at once; ``INTAKE_CACHE_S`` in the app's configuration sets
another period, 0 = read on every request). While it is paused or closed:

- a new rater (no rater in this browser, no known platform ID in the link) gets the paused or
  closed page, with a link to the platform (its address, never the completion code);
- a rater already in (consented, not finished) carries on, unless the researcher stopped the
  raters already in too; then every page of the flow is that page (answers sent are kept);
- a finished or screened-out rater always gets the completion (screen-out) page.
"""

from __future__ import annotations

import time
from urllib.parse import urlsplit

from flask import (Blueprint, current_app, redirect, render_template, request, session,
                   url_for)
from lexgold.annotate import flow
from lexgold.annotate.context import connection, db, fill, message_page, now, state
from lexgold.annotate.views_admin import admin_required
from lexgold.annotate.views_rater import _current_rater, rater
from lexgold.study.intake import INTAKE, Intake, describe_intake, read_intake, set_intake

intake = Blueprint("intake", __name__, url_prefix="/admin")
#: how long a server process keeps the intake it read (seconds)
INTAKE_CACHE_S = 2.0
#: a rater in one of these stages has finished: never stopped
FINISHED = ("done", "screened_out")


def current_intake() -> Intake:
    """The study's intake, read at most every ``INTAKE_CACHE_S`` seconds by this process."""
    app = current_app._get_current_object()
    cached = app.extensions.get("lexgold_intake")
    if cached is not None and time.monotonic() < cached[0]:
        return cached[1]
    period = float(app.config.get("INTAKE_CACHE_S", INTAKE_CACHE_S))
    found = read_intake(connection())
    app.extensions["lexgold_intake"] = (time.monotonic() + period, found)
    return found


def _platform_home() -> str:
    """The platform's address (scheme and host of ``--completion-url``), or ""."""
    parts = urlsplit(state().completion_url)
    return f"{parts.scheme}://{parts.netloc}/" if parts.scheme and parts.netloc else ""


def closed_page(found: Intake, current: bool):
    """The page of a paused or closed study: for a new rater, or one already in (stopped).

    A rater stopped by the researcher also gets the study's contact (``[study.consent]
    contact``, in ``texts.consent_contact``) and a way back to the platform: from a closed
    study, where the platform takes a code (``--completion-url``), the screen-out code in its
    box with the link that hands it back; else the platform's address (no code)."""
    study = state()
    texts = study.config.texts
    heading = texts.paused_heading if found.state == "paused" else texts.closed_heading
    text = ("paused" if found.state == "paused" else "closed") + \
        ("_current_text" if current else "_text")
    status = 503 if found.state == "paused" else 410
    contact = study.config.consent.contact
    contact_line = fill(texts.consent_contact, contact=contact) if current and contact else ""
    if current and found.state == "closed" and study.screenout_url:
        return render_template("completion.html", heading=heading, body=getattr(texts, text),
                               contact=contact_line, code=study.screenout_code,
                               link=study.screenout_url), status
    return render_template("message.html", heading=heading, body=getattr(texts, text),
                           contact=contact_line, link=_platform_home(),
                           link_text=texts.platform_link), status


def _known_entry() -> bool:
    """The entry link (``GET /``) or the entry kept for the consent names a rater already in."""
    if request.endpoint == "rater.entry":
        try:
            entry = flow.parse_entry(request.args)
        except flow.BadEntry:
            return True                      # the entry view says what is wrong
    else:
        kept = session.get("entry")
        if not isinstance(kept, dict):
            return False
        try:
            entry = flow.RaterEntry(**kept)
        except TypeError:
            return False
    return flow.enrolled(connection(), entry) is not None


@rater.before_request
def gate():
    """Turn new raters (and, when stopped, raters already in) away from a paused or closed
    study; nothing to do while it is open."""
    found = current_intake()
    if found.open or request.endpoint in ("rater.resume", "rater.move_link", "rater.move"):
        return None
    current = _current_rater()
    if request.endpoint in ("rater.entry", "rater.consent") and current is None:
        if not _known_entry():
            return closed_page(found, current=False)
        return None                          # asked to resume, or shown its code, by the view
    if current is not None and found.stop_current and current.stage not in FINISHED:
        return closed_page(found, current=True)
    return None


@intake.app_template_global("study_intake")
def study_intake() -> Intake:
    """The intake for the admin view's pause/resume/close form (read afresh)."""
    return read_intake(db())


@intake.post("/intake")
@admin_required
def change():
    """The admin view's Pause, Resume and Close buttons; ``current``: ``finish`` (raters
    already in may finish) or ``stop`` (they are stopped too)."""
    wanted = request.form.get("intake", "")
    if wanted not in INTAKE:
        return message_page("error_invalid"), 400
    stop = request.form.get("current") == "stop" and wanted != "open"
    if needs_confirmation(wanted, stop) and request.form.get("confirmed") != "yes":
        return render_template("admin_intake_confirm.html", wanted=wanted, stop=stop,
                               started=_started_raters())
    found = set_intake(db(), wanted, stop_current=stop, now=now())
    current_app.extensions["lexgold_intake"] = (0.0, found)      # this process: at once
    current_app.logger.info("study intake set from the admin view: %s", describe_intake(found))
    return redirect(url_for("admin.overview") + "#intake")


def needs_confirmation(wanted: str, stop: bool) -> bool:
    """Close (for good) and stopping the raters already in are asked again on a page of their
    own before they take effect; pause letting raters finish, and resume, are not."""
    return wanted == "closed" or stop


def _started_raters() -> int:
    """Raters in the study now (consented, not finished, not turned away): those a stop hits."""
    from sqlalchemy import func, select

    from lexgold.study import models as m

    return int(db().scalar(select(func.count()).select_from(m.Rater).where(
        m.Rater.stage.in_(("instructions", "qualification", "rating")))) or 0)
