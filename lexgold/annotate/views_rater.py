"""Rater flow blueprint: entry, consent, instructions, qualification, steps, completion.

Views stay short: they read the rater from the signed session cookie, call one function of
:mod:`lexgold.annotate.flow` and redirect to ``/task``, which always shows where the rater is
(so reloads and returns resume exactly there).
"""

from __future__ import annotations

import hmac
import re
import secrets
from datetime import datetime, timedelta

from flask import (Blueprint, current_app, flash, redirect, render_template, request,
                   session, url_for)
from itsdangerous import BadSignature, URLSafeTimedSerializer
from markupsafe import Markup, escape
from sqlalchemy import select

from lexgold.annotate import flow, throttle
from lexgold.study import models as m
from lexgold.study.config import consent_paragraphs
from lexgold.study.design import option_order
from lexgold.annotate.context import (connection, csrf_token, db, fill, message_page, now,
                                      state, write_db)
from lexgold.annotate.bws_site import page_tuples
from lexgold.ratings import SIMULATED

rater = Blueprint("rater", __name__)


def _current_rater() -> flow.CurrentRater | None:
    """The rater of this browser: its public ID and the browser secret must both match."""
    cookie = session._get_current_object()
    public_id, secret = cookie.get("rater"), cookie.get("browser")
    if not public_id:
        known = legacy_rater()
        return flow.as_current(connection(), known) if known is not None else None
    if not isinstance(secret, str):
        return None
    return flow.current_rater(connection(), public_id, flow.browser_hash(secret))


def legacy_rater() -> m.Rater | None:
    """The rater of a cookie signed with the key the study held before revision 0010 (kept by
    ``lexgold study upgrade`` in the key file until ``LEGACY_SECRET_UNTIL``), now signed anew.

    Only ``rater`` and ``browser`` are read from such a cookie (never ``resume``, an admin
    token or an entry): a bound rater needs its browser secret, which no copy of the database
    holds (only its hash); a rater enrolled before browser binding (revision 0005, no hash
    stored) is bound to the first browser that comes back with its cookie
    (:func:`flow.bind_unbound`), as that cookie was its only credential."""
    key, until = current_app.config.get("LEGACY_SECRET_KEY"), \
        current_app.config.get("LEGACY_SECRET_UNTIL")
    cookie = request.cookies.get(current_app.config["SESSION_COOKIE_NAME"])
    if not key or until is None or not cookie or now() > until:
        return None
    interface = current_app.session_interface
    serializer = URLSafeTimedSerializer(key, salt=interface.salt,
                                        serializer=interface.serializer,
                                        signer_kwargs={"key_derivation": interface.key_derivation,
                                                       "digest_method": interface.digest_method})
    try:
        old = serializer.loads(cookie, max_age=int(
            current_app.permanent_session_lifetime.total_seconds()))
    except BadSignature:
        return None
    public_id, secret = old.get("rater"), old.get("browser")
    if not isinstance(public_id, str) or not public_id:
        return None
    known = db().scalars(select(m.Rater).where(m.Rater.public_id == public_id)).first()
    if known is None:
        return None
    if isinstance(secret, str):         # bound (revisions 0005-0009): its secret must match
        if not known.browser_sha256 or not hmac.compare_digest(known.browser_sha256,
                                                               flow.browser_hash(secret)):
            return None
    elif known.browser_sha256 or (secret := flow.bind_unbound(write_db(), known)) is None:
        return None
    _bind(known, secret)
    return known


def _rate_limit(kind: str) -> None:
    """At most ``RATE_LIMIT_PER_HOUR`` new raters (``kind="enrol"``) or tranche claims
    (``"claim"``) per client address and hour, counted in the study database (shared by every
    server process); 0 = no limit. Over it: 429 with the text ``error_busy``."""
    limit = int(current_app.config.get("RATE_LIMIT_PER_HOUR") or 0)
    client = throttle.client(request.remote_addr)          # an IPv6 client: its /64
    if limit and not throttle.hit(db(), f"{kind}:{client}", limit, 3600, now()):
        raise flow.Rejected("error_busy", f"{kind} rate limit")


def _bind(rater: flow.CurrentRater | m.Rater, secret: str) -> None:
    session["rater"], session["browser"] = rater.public_id, secret
    session.pop("resume", None)
    session.permanent = True


def _show_word(word: str) -> str:
    return _word_case(state().config.word_case)(word)


@rater.get("/")
def entry():
    try:
        entry = flow.parse_entry(request.args)
    except flow.BadEntry as err:
        return message_page("error_entry_link", parameter=err.parameter), 400
    flow.check_entry(entry, state().entries)
    if entry.external_id is not None:
        # A platform ID names the rater: the browser's own rater resumes; a known rater of
        # another browser is asked before resuming here; another person on a shared computer
        # (a different ID than this browser's rater) starts afresh, never as the first.
        known_id = flow.enrolled(connection(), entry)
        if known_id is not None:
            known, current = db().get(m.Rater, known_id), _current_rater()
            if current is not None and current.id == known.id:
                return redirect(url_for("rater.task"))
            if known.stage in ("done", "screened_out") and \
                    flow.own_link(known, entry, key=current_app.secret_key):
                return finished_page(known)       # its own link again: its code, nothing moved
            return _ask_to_resume(known, entry)
        session.pop("rater", None)
    elif _current_rater() is not None:
        return redirect(url_for("rater.task"))
    session["entry"] = vars(entry)
    session.permanent = True        # kept when the browser is closed, as the rater's cookie
    preview = request.args.get("assignmentId") == "ASSIGNMENT_ID_NOT_AVAILABLE"
    return _consent_page(preview, None)


def _consent_page(preview: bool, error: str | None) -> str:
    """Consent text with the expected duration of a tranche filled in (``{minutes}``)."""
    cache = current_app.extensions.setdefault("lexgold_minutes", {})
    if "minutes" not in cache:
        cache["minutes"] = flow.expected_minutes(db(), state().config)
    paragraphs = [fill(text, minutes=cache["minutes"], **values)
                  for text, values in consent_paragraphs(state().config)]
    return render_template("consent.html", preview=preview, error=error, paragraphs=paragraphs)


#: how long the question "continue in this browser?" can be answered
RESUME_S = 600


def _ask_to_resume(known: m.Rater, entry: flow.RaterEntry):
    """Another browser with a known platform ID: asked before resuming when the link is the
    rater's own (:func:`flow.own_link`), else told to use it or to contact the researcher.

    The session keeps a ticket for the answer: the rater, its browser count now and until when
    it holds (:data:`RESUME_S`). The move is conditional on that count, so the ticket moves the
    rater once: replayed later (a copied cookie), it moves no one."""
    session.pop("resume", None)
    if not flow.own_link(known, entry, key=current_app.secret_key):
        return message_page("resume_refused"), 403
    session["resume"] = {"rater": known.public_id, "browsers": known.browsers,
                         "until": (now() + timedelta(seconds=RESUME_S)).isoformat()}
    return render_template("resume.html")


@rater.post("/resume")
def resume():
    """Confirmed: continue here a rater begun in another browser (which is let go)."""
    ticket = session.pop("resume", None)
    known, secret = None, None
    try:
        live = isinstance(ticket, dict) and isinstance(ticket.get("rater"), str) and \
            isinstance(ticket.get("browsers"), int) and \
            now() < datetime.fromisoformat(str(ticket.get("until")))
    except ValueError:
        live = False
    if live:
        known = db().scalars(select(m.Rater).where(m.Rater.public_id == ticket["rater"])).first()
    if known is not None:
        secret = flow.move_to_browser(db(), known, ticket["browsers"])
    if secret is None:
        return redirect(url_for("rater.entry"))
    _bind(known, secret)
    return redirect(url_for("rater.task"))


@rater.get("/move/<token>")
def move_link(token: str):
    """A link from the admin view that moves a rater's place to this browser: asked first
    (a GET or HEAD changes nothing; the link is spent by the POST)."""
    return render_template("resume.html", action=url_for("rater.move", token=token))


@rater.post("/move/<token>")
def move(token: str):
    moved = flow.use_move_link(db(), token, now(), key=current_app.secret_key)
    if moved is None:
        return message_page("move_link_invalid"), 410
    _bind(*moved)
    return redirect(url_for("rater.task"))


@rater.post("/consent")
def consent():
    if _current_rater() is not None:
        return redirect(url_for("rater.task"))
    if not (request.form.get("consent") == "yes" and request.form.get("native") == "yes"):
        return _consent_page(False, state().config.texts.error_no_consent), 400
    entry = flow.RaterEntry(**session.get("entry", vars(flow.RaterEntry("anonymous", None))))
    flow.check_entry(entry, state().entries)
    if current_app.config.get("SIMULATED_RATERS"):    # lexgold study rehearse's raters
        entry = flow.RaterEntry(**{**vars(entry), "platform": SIMULATED})
    if flow.enrolled(connection(), entry) is None:
        _rate_limit("enrol")
    new, secret = flow.enrol(connection(), entry, native_speaker=True, now=now(),
                             key=current_app.secret_key)
    if new is None:      # enrolled meanwhile (another browser): ask before resuming it
        return _ask_to_resume(flow.find_rater(db(), entry), entry)
    _bind(new, secret)
    return redirect(url_for("rater.task"))


@rater.get("/task")
def task():
    current = _current_rater()
    if current is None:
        return redirect(url_for("rater.entry"))
    study = state()
    texts = study.config.texts
    if current.stage == "instructions":
        page = min(current.instructions_page, len(texts.instructions) - 1)
        return render_template("instructions.html", page=page,
                               paragraphs=texts.instructions[page].split("\n\n"))
    if current.stage == "qualification":
        left = session.pop("qualification_left", 0)
        return render_template("qualification.html", qualification=study.config.qualification,
                               retry=fill(texts.qualification_retry, left=left) if left else "")
    if current.stage == "screened_out":
        return finished_page(current)
    if current.stage == "full" and request.method == "HEAD":   # HEAD changes nothing
        return message_page("full_text")
    if current.stage == "full":
        retried = write_db().get(m.Rater, current.id)
        flow.retry_claim(write_db(), retried, study.config, now())
        if retried.stage == "full":
            return message_page("full_text")
        connection().rollback()                      # a fresh read that sees the claim
        current = db().get(m.Rater, current.id, populate_existing=True)
    if current.stage == "done":
        return finished_page(current)
    return _step_page(current)


def finished_page(current: flow.CurrentRater | m.Rater) -> str:
    """The completion (or screen-out) page: the text, the code large in its own box with a
    copy button (shown by lexgold.js; the code stays selectable without it) and the link back
    to the platform as the primary button."""
    texts, study = state().config.texts, state()
    done = current.stage == "done"
    code = study.completion_code if done else study.screenout_code
    return render_template(
        "completion.html", code=code,
        heading=texts.completion_heading if done else texts.screened_out_heading,
        body=fill(texts.completion_text if done else texts.screened_out_text, code=code),
        link=study.completion_url if done else study.screenout_url)


def _step_page(current: flow.CurrentRater | m.Rater):
    slot = flow.current_slot(connection(), current)
    step, items, n_steps = flow.step_content(connection(), slot)
    return render_step(step, items, n_steps, slot.step, current.id)


def render_step(step: m.Step, items, n_steps: int, position: int, rater_id: int,
                action: str | None = None, banner: str = "") -> str:
    """The page of one step (a group of pairs or a checkpoint) as rater ``rater_id`` sees it
    (slider start values and option order depend on it). ``action``: where the form goes
    (default: the rater's ``/step``); ``banner``: a notice above the page (admin preview)."""
    study = state()
    config, texts = study.config, study.config.texts
    progress = fill(texts.progress, current=position + 1, total=n_steps)
    common = {"position": position, "progress": progress, "done": position, "total": n_steps,
              "action": action or url_for("rater.step"), "banner": banner}
    if config.task == "bws":
        return _bws_page(step, items, rater_id, common)
    if step.kind == "checkpoint":
        check = config.checkpoints[step.checkpoint]
        options = tuple((i, tuple(_show_word(w) for w in check.options[i]))
                        for i in option_order(len(check.options), rater_id, step.id))
        if banner or session.get("_flashes"):
            return render_template("checkpoint.html", options=options, **common)
        return filled_page("checkpoint.html", {         # a pattern per option order
            "csrf_token": csrf_token(),
            **{name: common[name] for name in ("position", "progress", "done", "total",
                                               "action")}}, banner="", options=options)
    show, titles, seed = _word_case(config.word_case), config.topic_titles, study.seed
    patterns = _item_patterns()
    shown = []
    for item, pair in items:
        template = texts.question_by_pos.get(pair.pos, texts.question)
        question = fill(template, word1=show(pair.word1), word2=show(pair.word2),
                        topic=titles.get(pair.topic, pair.topic))
        shown.append(_item_html(item.kind, {
            "id": str(item.id), "question": str(escape(question)),
            "start": str(flow.start_value(config, seed, rater_id, item.id))}, patterns))
    topic = items[0][1].topic if items else ""
    topic = titles.get(topic, topic) if config.group_by == "topic" else ""
    if banner or session.get("_flashes"):
        return render_template("group.html", items=shown, **common, topic=topic)
    return filled_page("group.html", {        # the items are Markup: joined as they are
        "items": Markup("".join(shown)), "topic": topic, "csrf_token": csrf_token(),
        **{name: common[name] for name in ("position", "progress", "done", "total", "action")}},
        banner="")


def _word_case(case: str):
    """How the study shows a word (``[study] word_case``)."""
    return str.upper if case == "upper" else str.lower if case == "lower" else str


#: the values ``group_item.html`` is rendered with per item (the rest is the study's own)
ITEM_FIELDS = ("id", "question", "start")


def _item_patterns() -> dict:
    """The app's kept patterns of :func:`_item_html`, by item kind."""
    return current_app.extensions.setdefault("lexgold_item_html", {})


def _item_html(kind: str, values: dict[str, str], patterns: dict | None = None) -> Markup:
    """One pair of a group page: ``group_item.html`` rendered once per study and ``kind`` with
    markers in place of :data:`ITEM_FIELDS` (kept per app in ``patterns``, default
    :func:`_item_patterns`: a study's texts never change), the markers replaced by ``values``
    (already escaped). A page of pairs then costs one join per pair instead of a template
    pass with some 25 escapes."""
    if patterns is None:
        patterns = _item_patterns()
    if kind not in patterns:
        mark = secrets.token_hex(8)              # never in a study's text: split on it
        html = render_template("group_item.html", item={
            "kind": kind, **{name: f"{mark}{name}{mark}" for name in ITEM_FIELDS}})
        patterns[kind] = re.split(f"{mark}({'|'.join(ITEM_FIELDS)}){mark}", html)
    parts = patterns[kind]
    out = [parts[0]]
    for at in range(1, len(parts), 2):
        out += (values[parts[at]], parts[at + 1])
    return Markup("".join(out))


def filled_page(template: str, values: dict, **context) -> str:
    """``render_template(template, **values, **context)``, from a pattern: ``template``
    rendered once per app, script root, ``context`` and truthy ``values`` with markers in
    place of ``values`` (``csrf_token``: the value of the template's ``csrf_token()``), the
    markers replaced by ``values`` escaped as Jinja's autoescape would. A page then costs one
    join instead of a template pass over the study's texts. ``context`` holds what the
    pattern depends on (hashable); a page with flashed messages is rendered as it is (they
    are read, once, by ``base.html``)."""
    truthy = tuple(sorted(name for name, value in values.items() if value))
    key = (template, request.script_root, truthy, tuple(sorted(context.items())))
    patterns = current_app.extensions.setdefault("lexgold_page_html", {})
    if key not in patterns:
        mark = secrets.token_hex(8)              # never in a study's text: split on it
        marked = {name: Markup(f"{mark}{name}{mark}") if name in truthy else value
                  for name, value in values.items()}
        token = marked.pop("csrf_token")
        html = render_template(template, **marked, **context, csrf_token=lambda: token)
        patterns[key] = re.split(f"{mark}({'|'.join(map(re.escape, values))}){mark}", html)
    parts = patterns[key]
    out = [parts[0]]
    for at in range(1, len(parts), 2):
        out += (str(escape(values[parts[at]])), parts[at + 1])
    return "".join(out)


def _bws_page(step: m.Step, items, rater_id: int, common: dict) -> str:
    """A Best-Worst page: a tuple per row, a most and a least radio group each
    (:mod:`lexgold.annotate.bws_site`); a check tuple's pairs in an order fixed per rater."""

    if step.kind == "checkpoint":
        check = state().config.bws.checkpoints[step.checkpoint]
        order = option_order(len(check.pairs), rater_id, step.id)
        tuples = [{"key": "c", "kind": "checkpoint",
                   "pairs": [(p, [_show_word(w) for w in check.pairs[p]]) for p in order]}]
    else:
        tuples = [{"key": str(t["tuple_id"]), "kind": t["kind"],
                   "pairs": [(row, [_show_word(pair.word1), _show_word(pair.word2)])
                             for row, pair in t["pairs"]]} for t in page_tuples(items)]
    return render_template("bws.html", tuples=tuples, checkpoint=step.kind == "checkpoint",
                           **common)


@rater.post("/instructions")
def instructions():
    current = _current_rater()
    if current is None:
        return redirect(url_for("rater.entry"))
    page = flow.parse_int(request.form.get("page", ""))
    if page is None:
        raise flow.Rejected("error_invalid", "bad page")
    if current.stage == "instructions" and page == current.instructions_page and \
            page + 1 >= len(state().config.texts.instructions) and \
            state().config.qualification is None:
        _rate_limit("claim")                     # this page's "Next" claims a place
    flow.advance_instructions(connection(), current, page, state().config, now())
    return redirect(url_for("rater.task"))


@rater.post("/qualification")
def qualification():
    current = _current_rater()
    if current is None:
        return redirect(url_for("rater.entry"))
    choice = flow.parse_int(request.form.get("choice", ""))
    if choice is None:
        raise flow.Rejected("error_incomplete")
    if current.stage == "qualification":
        _rate_limit("claim")                     # a right answer claims a place
    left = flow.answer_qualification(db(), current, choice, state().config, now())
    if left:
        session["qualification_left"] = left     # shown once, on the page asked again
    return redirect(url_for("rater.task"))


@rater.post("/step")
def step():
    current = _current_rater()
    if current is None:
        return redirect(url_for("rater.entry"))
    if current.stage != "rating":
        return redirect(url_for("rater.task"))
    form, study = request.form, state()
    position = flow.parse_int(form.get("position", ""))
    if position is None:
        raise flow.Rejected("error_invalid", "bad position")
    if flow.submit_step(connection(), current, position, form, study.config, study.seed,
                        now()) == "repeat":      # another tab, the back button, a retry
        flash(study.config.texts.repeat_notice)
    return redirect(url_for("rater.task"))
