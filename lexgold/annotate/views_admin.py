"""Admin blueprint: password login, progress per tranche, raters, live agreement, exclusions.

The password is checked against a werkzeug hash from the configuration or the environment
(``LEXGOLD_ADMIN_PASSWORD_HASH``); it is never stored in the repository or the study.
Agreement (IAA-1, IAA-2) and the exclusions preview come from :mod:`lexgold.process`.
"""

from __future__ import annotations

import functools
import time
import tomllib
import warnings

import pandas as pd
from flask import (Blueprint, current_app, redirect, render_template, request, session,
                   url_for)
from sqlalchemy import func, select
from werkzeug.security import check_password_hash

from lexgold.annotate import models as m
from lexgold.annotate.app import db, state
from lexgold.annotate.recruit import recruitment
from lexgold.annotate.study import export_ratings, progress

admin = Blueprint("admin", __name__, url_prefix="/admin")
#: failed logins from one client address tolerated within LOCKOUT_S before the login refuses
#: to check passwords from that address (others can still log in: no lock-out by strangers)
MAX_FAILURES, LOCKOUT_S = 10, 300.0


def admin_required(view):
    @functools.wraps(view)
    def wrapped(*args, **kwargs):
        if not session.get("admin"):
            return redirect(url_for("admin.login"))
        return view(*args, **kwargs)
    return wrapped


@admin.route("/login", methods=["GET", "POST"])
def login():
    stored = current_app.config.get("ADMIN_PASSWORD_HASH")
    if not stored:
        return render_template("admin_login.html", error="The admin view is disabled: start the "
                               "server with LEXGOLD_ADMIN_PASSWORD set."), 403
    if request.method == "GET":
        return render_template("admin_login.html", error=None)
    by_address = current_app.extensions.setdefault("lexgold_login_failures", {})
    now, address = time.monotonic(), request.remote_addr or "-"
    for key in [k for k, times in by_address.items() if now - times[-1] >= LOCKOUT_S]:
        del by_address[key]  # forget addresses whose last failure is old
    failures = [t for t in by_address.get(address, []) if now - t < LOCKOUT_S]
    if len(failures) >= MAX_FAILURES:
        return render_template("admin_login.html", error="Too many failed attempts; try again "
                               "in a few minutes."), 429
    if check_password_hash(stored, request.form.get("password", "")):
        session["admin"] = True
        return redirect(url_for("admin.overview"))
    by_address[address] = failures + [now]
    return render_template("admin_login.html", error="Wrong password."), 401


@admin.post("/logout")
def logout():
    session.pop("admin", None)
    return redirect(url_for("admin.login"))


@admin.get("/")
@admin_required
def overview():
    ratings = export_ratings(db())
    table = progress(db())
    agreement = _agreement(ratings)
    found = recruitment(db(), state().config)     # HyperLex section 4.4: accepted raters
    table = table.merge(agreement, on="tranche", how="left").merge(
        found["tranches"][["tranche", "accepted", "missing"]], on="tranche", how="left")
    stages = db().execute(select(m.Rater.stage, func.count()).group_by(m.Rater.stage)).all()
    return render_template("admin.html", name=state().name, progress=table.to_dict("records"),
                           stages=dict(stages), exclusions=_exclusions(ratings),
                           n_answers=len(ratings), raters=_raters(), recruitment=found)


def _raters(limit: int = 1000) -> list:
    """The newest raters: platform, stage, tranche and pages done (a claim lost shows no slot)."""
    return db().execute(
        select(m.Rater.public_id, m.Rater.platform, m.Rater.external_id, m.Rater.stage,
               m.Tranche.number, m.Slot.step, m.Rater.created_at, m.Rater.completed_at)
        .outerjoin(m.Slot, (m.Slot.id == m.Rater.slot_id) & (m.Slot.rater_id == m.Rater.id))
        .outerjoin(m.Tranche, m.Tranche.id == m.Slot.tranche_id)
        .order_by(m.Rater.id.desc()).limit(limit)).all()


def _agreement(ratings: pd.DataFrame) -> pd.DataFrame:
    """IAA-1 and IAA-2 per tranche (HyperLex section 5), NaN where undefined."""
    rows = []
    try:
        from lexgold.process.agreement import iaa_against_mean, iaa_pairwise
    except ImportError:
        return pd.DataFrame(columns=["tranche", "iaa1", "iaa2"])
    rated = ratings[ratings["kind"] != "checkpoint"] if len(ratings) else ratings
    for tranche, frame in rated.groupby("tranche"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rows.append({"tranche": tranche, "iaa1": iaa_pairwise(frame),
                         "iaa2": iaa_against_mean(frame)})
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
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            table = exclusion_table(ratings, protocol)
        except ValueError as err:   # too few ratings for a rule yet: say so
            return f"not yet computable: {err}"
    return table.to_dict("records")


