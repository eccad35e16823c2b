"""Prolific's webhook: ``POST /hooks/prolific`` (thin; :mod:`lexgold.prolific.webhook` checks).

Enabled only when the app has ``PROLIFIC_WEBHOOK_SECRET`` (``lexgold serve`` reads it from
``LEXGOLD_PROLIFIC_WEBHOOK_SECRET``); else the route is a 404. Exempt from the CSRF check (the
caller is Prolific's server, not a browser) and verified instead by the request's signature and
timestamp. A ``submission.status.change`` to RETURNED or TIMED-OUT ends the participant's claim
at once (:func:`lexgold.annotate.flow.release_claims`), so the place goes to the next rater
instead of waiting for the idle timeout.

The secret is the workspace's, so a signed event may be about a submission of another of its
studies, by a participant who also entered this one. Prolific's event names no study; its
submission ID is the ``SESSION_ID`` the participant's link to this study carried, whose keyed
hash the rater's row keeps (:func:`lexgold.annotate.flow.session_hash`). Only a rater whose
stored session is the event's submission is released (and, when an event names a
``study_id``, whose ``STUDY_ID`` is that one); a rater who entered without a ``SESSION_ID`` is
left to the idle timeout.
"""

from __future__ import annotations

from datetime import UTC

from flask import Blueprint, abort, current_app, jsonify, request
from sqlalchemy import select

from lexgold.study import models as m
from lexgold.annotate.context import db, now
from lexgold.annotate.flow import release_claims, session_hash
from lexgold.prolific.webhook import (
    DEFAULT_WINDOW_S,
    FREES_PLACE,
    MAX_BODY,
    BadHook,
    parse_event,
    verify,
)

prolific = Blueprint("prolific", __name__)


@prolific.post("/hooks/prolific")
def hook():
    secret = current_app.config.get("PROLIFIC_WEBHOOK_SECRET")
    if not secret:
        abort(404)
    try:
        if request.mimetype != "application/json":
            raise BadHook(415, "expected application/json")
        if (request.content_length or 0) > MAX_BODY:
            raise BadHook(413, "body too large")
        body = request.get_data(cache=False)
        if len(body) > MAX_BODY:
            raise BadHook(413, "body too large")
        moment = now()
        verify(secret, request.headers, body, moment.replace(tzinfo=UTC).timestamp(),
               float(current_app.config.get("PROLIFIC_WEBHOOK_WINDOW_S", DEFAULT_WINDOW_S)))
        event = parse_event(body)
    except BadHook as err:
        current_app.logger.warning("Prolific webhook refused: %s", err)
        return jsonify(error=str(err)), err.status
    if event is None or event["status"] not in FREES_PLACE:
        return jsonify(released=0)
    session = db()
    mine = select(m.Rater.id).where(
        m.Rater.platform == "prolific", m.Rater.external_id == event["participant"],
        m.Rater.external_session == session_hash(current_app.secret_key, event["submission"]))
    if event.get("study"):
        mine = mine.where(m.Rater.external_study == event["study"])
    raters = list(session.scalars(mine))
    if not raters:
        current_app.logger.warning("Prolific webhook: submission %s of participant %s is not "
                                   "one of this study's (nothing released)",
                                   event["submission"], event["participant"])
    return jsonify(released=release_claims(session, raters, moment))
