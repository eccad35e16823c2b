"""What a request of the rating site works with: the study, its database session, message pages.

The blueprints (``views_*.py``) import these from here, never from :mod:`lexgold.annotate.app`,
which registers them: the factory imports the views, the views do not import the factory (as in
Flask's tutorial, where ``db.py`` holds the database handle).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from string import Formatter

from flask import current_app, g, render_template, request, session
from flask_wtf.csrf import generate_csrf
from sqlalchemy.orm import sessionmaker

from lexgold.study.config import StudyConfig


@dataclass
class StudyState:
    """What the views need of the (immutable) study, loaded once."""

    sessions: sessionmaker       # writing sessions (SQLite: BEGIN IMMEDIATE)
    reads: sessionmaker          # read-only sessions (never wait for the write lock)
    config: StudyConfig
    name: str
    seed: int
    completion_code: str
    screenout_code: str
    completion_url: str          # the link back to the platform, completion code filled in
    protocol_text: str
    entries: dict | None = None     # accepted entry links (see flow.check_entry)
    screenout_url: str = ""      # the same link with the screen-out code ("" without a link)


def state() -> StudyState:
    """The study served by the current app (loaded once by ``create_app``)."""
    return current_app.extensions["lexgold"]


def now():
    """The time of this request, naive UTC: ``app.config["CLOCK"]()`` when set (``lexgold study
    rehearse`` runs the site on a simulated clock), else the database server's clock (shared by
    every app host; :mod:`lexgold.study.clock`), never this machine's."""
    clock = current_app.config.get("CLOCK") or current_app.extensions["lexgold_clock"]
    return clock()


def connection():
    """The request's database connection (SQLAlchemy Core), taken from the pool at its first
    statement and given back at the end of the request: a writing one (SQLite: ``BEGIN
    IMMEDIATE``) for POST, a read-only one (no write lock) for GET and HEAD. Every statement of
    the request goes through it, the ORM session's of :func:`db` too; the rater's pages use it
    alone (no ORM session)."""
    kept = g._get_current_object()
    opened = kept.get("connection")
    if opened is None:
        study = current_app.extensions["lexgold"]
        reading = request.method in ("GET", "HEAD", "OPTIONS")
        opened = kept.connection = (study.reads if reading else study.sessions).kw[
            "bind"].connect()
    return opened


def db():
    """The request's ORM session (closed at the end of the request) on its one
    :func:`connection`, whose transaction it takes over: its ``commit`` commits the
    connection's."""
    if "db" not in g:
        reading = request.method in ("GET", "HEAD", "OPTIONS")
        g.db = (state().reads if reading else state().sessions)(
            bind=connection(), join_transaction_mode="control_fully")
    return g.db


def write_db():
    """A writing session for the rare write made while showing a page (GET)."""
    if request.method not in ("GET", "HEAD", "OPTIONS"):
        return db()
    if "db_write" not in g:
        g.db_write = state().sessions()
    return g.db_write


#: signed CSRF tokens kept per app (:func:`csrf_token`, :class:`lexgold.annotate.app.KeptCSRF`),
#: some a hundred bytes each, emptied when full
KEPT_TOKENS = 10_000


def csrf_token() -> str:
    """flask-wtf's ``generate_csrf()`` (the token the site's forms carry), signed once per
    session: the signature of a session's raw token is kept per app and signing key
    (:data:`KEPT_TOKENS`), so every page of a session carries the same token instead of one
    signed anew (a key derivation and two HMACs) per page. Only with
    ``WTF_CSRF_TIME_LIMIT = None`` (the site's setting): the token's signing time is then
    never checked; with a time limit every page gets a token signed afresh, as flask-wtf's."""
    app, request_globals = current_app._get_current_object(), g._get_current_object()
    config = app.config
    field = config.get("WTF_CSRF_FIELD_NAME", "csrf_token")
    raw = session.get(field)
    if field in request_globals or config.get("WTF_CSRF_TIME_LIMIT", 3600) is not None or \
            not isinstance(raw, str):
        return generate_csrf()
    kept = app.extensions.setdefault("lexgold_csrf_signed", {})
    key = (config.get("WTF_CSRF_SECRET_KEY") or app.secret_key, raw)
    token = kept.get(key)
    if token is None:
        if len(kept) >= KEPT_TOKENS:
            kept.clear()
        token = kept[key] = generate_csrf()
    setattr(request_globals, field, token)     # generate_csrf() answers it for this request
    return token


def fill(template: str, **values) -> str:
    """``template`` with its ``{name}`` fields replaced by ``values`` (``{{`` and ``}}`` are
    braces), as ``str.format`` would, but nothing else: a field with an attribute or an index
    (``{minutes.__class__.__mro__}``), a conversion, a format spec or an unknown name is left
    as written, so a text of the protocol reads no Python object.

    >>> fill("About {minutes} min {{sic}}; {minutes.__class__} {x} {minutes:>9}", minutes=8)
    'About 8 min {sic}; {minutes.__class__} {x} {minutes:>9}'
    """
    parsed = _parsed(template)
    if parsed is None:                      # a lone brace: shown as written
        return template
    out = []
    for literal, field, spec, conversion in parsed:
        out.append(literal)
        if field is None:
            continue
        if field in values and not spec and conversion is None:
            out.append(str(values[field]))
        else:
            out.append("{" + field + (f"!{conversion}" if conversion else "") +
                       (f":{spec}" if spec else "") + "}")
    return "".join(out)


@lru_cache(maxsize=256)
def _parsed(template: str) -> tuple | None:
    """``template`` parsed by :class:`string.Formatter` (a study's few texts, parsed once), or
    None when it has a lone brace."""
    try:
        return tuple(Formatter().parse(template))
    except ValueError:
        return None


def message_page(text: str, heading: str | None = None, link: str = "", **values) -> str:
    """A page showing one text of ``[study.texts]`` (filled with ``values``) and a link."""
    texts = state().config.texts
    body = fill(getattr(texts, text), **values) if values else getattr(texts, text)
    return render_template("message.html", heading=heading or texts.error_heading, body=body,
                           link=link)
