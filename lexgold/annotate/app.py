"""The Flask application factory of the rating site (one study per database).

Nothing is built at import time: ``create_app({"DATABASE_URL": ...})`` opens the study, and
registers six blueprints: the rater flow, the admin view, the shareable preview, the ratings
export, Prolific's webhook and the intake (pausing, resuming and closing the study).
Security: CSRF on every form (flask-wtf), signed HttpOnly SameSite session cookies (Secure when
served beyond loopback or asked for; set when the session changes, not re-signed on every
response), a strict Content-Security-Policy with
``frame-ancestors 'none'``, ``nosniff``, referrers to the same origin only (platform IDs stay
out of other sites' logs; over HTTPS the CSRF check wants the site's own Referer), and
``no-store`` caching so a completion code never sits in a cache. Admin sessions live in the
study database (:mod:`lexgold.annotate.views_admin`); raters are bound to their browser.
"""

from __future__ import annotations

import copy
import hmac
import os
import time
from datetime import timedelta
from urllib.parse import quote

from flask import Flask, Request, current_app, g, render_template, request, session
from flask.sessions import SecureCookieSession, SecureCookieSessionInterface
from flask_wtf.csrf import CSRFError, CSRFProtect
from itsdangerous import BadSignature, TimestampSigner, URLSafeTimedSerializer
from itsdangerous.encoding import want_bytes
from sqlalchemy import select
from sqlalchemy.exc import InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from werkzeug.http import parse_cookie
from werkzeug.middleware.proxy_fix import ProxyFix
from werkzeug.utils import cached_property

from lexgold.study import models as m
from lexgold.study.clock import DatabaseClock
from lexgold.study.db import is_current, make_engine, session_factory
from lexgold.annotate.context import (KEPT_TOKENS, StudyState, csrf_token, fill, message_page,
                                      state)
from lexgold.annotate.flow import BadEntry, Rejected
from lexgold.annotate.views_admin import admin
from lexgold.annotate.views_export import export
from lexgold.annotate.views_intake import intake
from lexgold.annotate.views_prolific import prolific
from lexgold.annotate.views_preview import preview
from lexgold.annotate.views_rater import rater
from lexgold.study.config import config_from_dict
from lexgold.errors import TOKEN_PATHS, InputError, redact

#: the PostgreSQL limits of :func:`lexgold.study.db.make_engine` as configuration keys
DB_LIMITS = ("DATABASE_CONNECT_TIMEOUT_S", "DATABASE_STATEMENT_TIMEOUT_S",
             "DATABASE_POOL_TIMEOUT_S")
#: the largest request body the site takes (bytes): Flask's MAX_CONTENT_LENGTH, waitress's
#: ``max_request_body_size`` (:mod:`lexgold.annotate.server`) and the docs' nginx
#: ``client_max_body_size 256k`` (deploy/nginx-lexgold.conf); a rater's page of 100 pairs is
#: about 3 KB
MAX_REQUEST_BYTES = 256 * 1024
#: signed session cookies kept checked per app (:class:`KeptSessionInterface`): some
#: a few hundred bytes each, emptied when full
KEPT_COOKIES = 10_000
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
       "form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
#: the headers every response gets, in this order (a response without ``Cache-Control`` gets
#: ``no-store`` after them); same-origin referrers: the site's own form POSTs carry a Referer
#: (flask-wtf's strict check over HTTPS needs it), other sites get none, so platform IDs stay
#: out of their logs
SECURITY_HEADERS = (("Content-Security-Policy", CSP), ("X-Content-Type-Options", "nosniff"),
                    ("X-Frame-Options", "DENY"), ("Referrer-Policy", "same-origin"))
SECURITY_NAMES = frozenset(name.lower() for name, _ in SECURITY_HEADERS)


def create_app(config: dict | None = None) -> Flask:
    """Build the app for the study in ``config["DATABASE_URL"]``.

    Other keys: ``TRUSTED_PROXIES`` (number of reverse proxies in front whose
    ``X-Forwarded-For``/``-Proto``/``-Host`` headers are believed; default 0: none, the client
    address is the connection's), ``ADMIN_PASSWORD_HASH`` (werkzeug hash; default from the
    environment variable ``LEXGOLD_ADMIN_PASSWORD_HASH``; no hash = admin disabled),
    ``RATE_LIMIT_PER_HOUR`` (new raters and claims per client address; default 0: none),
    ``DATABASE_BUSY_TIMEOUT_S`` (how long a write waits for SQLite's lock, default 5),
    ``DATABASE_CONNECT_TIMEOUT_S``, ``DATABASE_STATEMENT_TIMEOUT_S``,
    ``DATABASE_POOL_TIMEOUT_S`` (PostgreSQL: defaults 3, 5, 5; :mod:`lexgold.study.health`),
    ``SECRET_KEY`` (required: the session-signing key, kept out of the study database; see
    :mod:`lexgold.study.secret`), ``ADMIN_PASSWORD_ID`` (what names the admin password on
    every host: ``lexgold serve`` sets it from a plain ``LEXGOLD_ADMIN_PASSWORD``; default: the
    hash), ``CLOCK`` (a simulated clock; default: the database server's, see
    :mod:`lexgold.study.clock`), ``SIMULATED_RATERS`` (every rater who consents is stored
    with platform ``simulated``; :mod:`lexgold.annotate.rehearse`'s in-process site only), ``LEGACY_SECRET_KEY`` and ``LEGACY_SECRET_UNTIL`` (naive
    UTC; the key a study held before revision 0010, read only to find the rater of a cookie it
    signed: :func:`lexgold.annotate.views_rater.legacy_rater`), ``SESSION_COOKIE_SECURE``,
    ``TESTING``, ``WTF_CSRF_ENABLED``, ``PROLIFIC_WEBHOOK_SECRET`` (default from
    ``LEXGOLD_PROLIFIC_WEBHOOK_SECRET``; none: no webhook) and ``PROLIFIC_WEBHOOK_WINDOW_S``
    (replay window, default 300; :mod:`lexgold.annotate.views_prolific`).
    """
    app = Flask(__name__)
    app.request_class = KeptCookiesRequest
    app.session_interface = KeptSessionInterface()
    app.config.update(SESSION_COOKIE_HTTPONLY=True, SESSION_COOKIE_SAMESITE="Lax",
                      SESSION_COOKIE_SECURE=True, PERMANENT_SESSION_LIFETIME=timedelta(days=14),
                      WTF_CSRF_TIME_LIMIT=None, MAX_CONTENT_LENGTH=MAX_REQUEST_BYTES,
                      SESSION_REFRESH_EACH_REQUEST=False,
                      ADMIN_PASSWORD_HASH=os.environ.get("LEXGOLD_ADMIN_PASSWORD_HASH"),
                      PROLIFIC_WEBHOOK_SECRET=os.environ.get("LEXGOLD_PROLIFIC_WEBHOOK_SECRET"))
    app.config.update(config or {})
    if not app.config.get("DATABASE_URL"):
        raise InputError("no study database given", field="DATABASE_URL")
    if not app.config.get("SECRET_KEY"):      # never in the study: a copy of it signs nothing
        raise InputError("no session-signing key given (lexgold.study.secret)",
                         field="SECRET_KEY")
    # a write waits this long for SQLite's lock before the request gets the 503 "retry" page
    # and PostgreSQL's limits, so that a stalled server fails requests fast (health.py)
    engine = make_engine(app.config["DATABASE_URL"],
                         busy_timeout_s=float(app.config.get("DATABASE_BUSY_TIMEOUT_S", 5)),
                         **{key.lower()[9:]: float(app.config[key]) for key in DB_LIMITS
                            if key in app.config})
    if not is_current(engine):
        raise InputError("not a lexgold study database at the current schema "
                         "(create it with `lexgold study create`)", field="db")
    sessions = session_factory(engine)
    with sessions() as session:
        study = session.scalars(select(m.Study)).first()
        if study is None:
            raise InputError("the database holds no study", field="db")
        state = StudyState(sessions, session_factory(engine, write=False),
                           config_from_dict(study.config), study.name, study.seed,
                           study.completion_code, study.screenout_code,
                           _platform_link(study.completion_url, study.completion_code),
                           study.protocol_text, study.entries,
                           _platform_link(study.completion_url, study.screenout_code))
    app.extensions["lexgold"] = state
    app.extensions["lexgold_engine"] = engine
    app.extensions["lexgold_clock"] = DatabaseClock(engine)      # context.now() without CLOCK
    proxies = int(app.config.get("TRUSTED_PROXIES") or 0)
    if proxies > 0:     # only then is a forwarded client address believed
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=proxies, x_proto=proxies, x_host=proxies)
    KeptCSRF(app)
    _register(app)
    _redact_logs(app, token_paths(app.url_map))    # the server log: no password, no token
    return app


class KeptCSRF(CSRFProtect):
    """flask-wtf's CSRF protection, the signed tokens it checked kept per app
    (:data:`lexgold.annotate.context.KEPT_TOKENS`, per signing key): a POST whose form carries a
    token checked before is valid when that token's raw value is its session's (compared as
    flask-wtf compares them), without verifying the signature again. Everything else goes
    through flask-wtf's own check (a token not seen before, a missing or forged one, a token in
    a header, HTTPS with its strict Referer check, a ``WTF_CSRF_TIME_LIMIT``), and only a token
    it passed is kept. The pages carry :func:`lexgold.annotate.context.csrf_token`."""

    def init_app(self, app: Flask) -> None:
        super().init_app(app)
        self._checked: dict[tuple, str] = {}
        app.jinja_env.globals["csrf_token"] = csrf_token
        app.context_processor(lambda: {"csrf_token": csrf_token})    # after flask-wtf's

    def protect(self, apply_exemptions: bool = False) -> None:
        app, asked = current_app._get_current_object(), request._get_current_object()
        config = app.config
        if asked.method not in config["WTF_CSRF_METHODS"]:
            return                   # flask-wtf checks only these methods, exempt view or not
        field = config["WTF_CSRF_FIELD_NAME"]
        sent = asked.form.get(field)
        key = (config.get("WTF_CSRF_SECRET_KEY") or app.secret_key, sent)
        raw = session.get(field) if sent else None      # a form without a token: no session read
        if sent and config["WTF_CSRF_TIME_LIMIT"] is None and isinstance(raw, str) and \
                not (asked.is_secure and config["WTF_CSRF_SSL_STRICT"]):
            kept = self._checked.get(key)
            if kept is not None and hmac.compare_digest(raw, kept):
                g.csrf_valid = True
                return
        super().protect(apply_exemptions)
        if sent and g.get("csrf_valid") and config["WTF_CSRF_TIME_LIMIT"] is None and \
                isinstance(raw, str):
            if len(self._checked) >= KEPT_TOKENS:
                self._checked.clear()
            self._checked[key] = raw


#: ``Cookie`` headers kept parsed (:class:`KeptCookiesRequest`), emptied when full, and the
#: longest kept (a browser's cookie is at most 4096 bytes): at most some 4 MB
KEPT_COOKIE_HEADERS = 1_000
KEPT_COOKIE_HEADER_BYTES = 4096


class KeptCookiesRequest(Request):
    """Flask's request, the cookies of a ``Cookie`` header parsed once per process
    (:data:`KEPT_COOKIE_HEADERS` headers of at most :data:`KEPT_COOKIE_HEADER_BYTES`): a
    browser sends the same header on every request until a cookie changes, and werkzeug
    parses it again on each. The parsed cookies are werkzeug's own, immutable, so requests
    can share them."""

    _parsed: dict = {}

    @cached_property
    def cookies(self):
        sent = self.environ.get("HTTP_COOKIE")      # the header (WSGI gives it once)
        parsed = self._parsed.get(sent)
        if parsed is None:
            parsed = parse_cookie(";".join(self.headers.getlist("Cookie")),
                                  cls=self.dict_storage_class)        # as werkzeug parses it
            if sent is None or len(sent) <= KEPT_COOKIE_HEADER_BYTES:
                if len(self._parsed) >= KEPT_COOKIE_HEADERS:
                    self._parsed.clear()
                self._parsed[sent] = parsed
        return parsed


def _copied(value):
    """A deep copy of a session's contents (what Flask's tagged JSON decodes: dicts, lists and
    tuples of strings, numbers and other immutable values), as ``copy.deepcopy`` makes it
    without its memo; any other kind of value through ``copy.deepcopy``."""
    kind = type(value)
    if kind is dict:
        return {key: _copied(item) for key, item in value.items()}
    if kind is list or kind is tuple:
        return kind(_copied(item) for item in value)
    if kind in _IMMUTABLE:
        return value
    return copy.deepcopy(value)


_IMMUTABLE = (str, int, float, bool, type(None), bytes)


class _KeptKeySigner(TimestampSigner):
    """itsdangerous' timestamp signer, its derived keys kept in ``derived`` (one dict per app):
    the key derivation (an HMAC of the salt) depends only on the key, the salt and the method,
    and Flask's session otherwise redoes it on every request."""

    def __init__(self, *args, derived: dict, **kwargs):
        super().__init__(*args, **kwargs)
        self.derived = derived

    def derive_key(self, secret_key: str | bytes | None = None) -> bytes:
        key = (self.secret_keys[-1] if secret_key is None else want_bytes(secret_key),
               self.salt, self.key_derivation, self.digest_method)
        if key not in self.derived:
            self.derived[key] = super().derive_key(secret_key)
        return self.derived[key]


class KeptSessionInterface(SecureCookieSessionInterface):
    """Flask's signed-cookie session (same cookie, same signature), its serializer built once
    per key and its derived signing keys kept: Flask builds both on every request.

    A cookie whose signature was checked is kept with its contents and signing time
    (:data:`KEPT_COOKIES` of them, per signing key): a browser sends the same cookie on every
    request until its session changes, and checking it again (an HMAC, a decompression, a
    tagged-JSON decoding) would give the same answer. Its age is still checked on every
    request, as Flask's own ``max_age`` check; each request gets its own copy of the
    contents."""

    def __init__(self):
        self._derived: dict = {}
        self._serializer: tuple | None = None
        self._checked: dict[str, tuple[int, dict]] = {}

    def open_session(self, app: Flask, request) -> SecureCookieSession | None:
        serializer = self.get_signing_serializer(app)
        if serializer is None:
            return None
        value = request.cookies.get(self.get_cookie_name(app))
        if not value:
            return self.session_class()
        max_age = int(app.permanent_session_lifetime.total_seconds())
        kept = self._checked.get(value)
        if kept is None:
            try:
                data, signed = serializer.loads(value, max_age=max_age, return_timestamp=True)
            except BadSignature:
                return self.session_class()
            if len(self._checked) >= KEPT_COOKIES:
                self._checked.clear()
            kept = self._checked[value] = (int(signed.timestamp()), data)
        elif not 0 <= int(time.time()) - kept[0] <= max_age:     # itsdangerous' age check
            return self.session_class()
        return self.session_class(_copied(kept[1]))

    def save_session(self, app: Flask, session, response) -> None:
        """Flask's own, with its early return taken first: a session neither changed nor
        refreshed on every request (``SESSION_REFRESH_EACH_REQUEST``, False on the site) sets
        no cookie, and gets only ``Vary: Cookie`` when it was read."""
        if not session.modified and not app.config["SESSION_REFRESH_EACH_REQUEST"]:
            if session.accessed:
                response.vary.add("Cookie")
            return
        super().save_session(app, session, response)

    def get_signing_serializer(self, app: Flask) -> URLSafeTimedSerializer | None:
        if not app.secret_key:
            return None
        keys = [*(app.config.get("SECRET_KEY_FALLBACKS") or ()), app.secret_key]
        if self._serializer is None or self._serializer[0] != keys:
            self._checked.clear()                # checked with other keys
            self._serializer = (keys, URLSafeTimedSerializer(
                keys, salt=self.salt, serializer=self.serializer, signer=_KeptKeySigner,
                signer_kwargs={"key_derivation": self.key_derivation,
                               "digest_method": self.digest_method,
                               "derived": self._derived}))
        return self._serializer[1]


#: the loggers of the WSGI servers the app runs in (waitress's "exception while serving <path>",
#: gunicorn's error log, lexgold turning its access log off; werkzeug's development server's
#: request lines)
SERVER_LOGGERS = ("waitress", "waitress.queue", "gunicorn.error", "gunicorn.access", "werkzeug")


def token_paths(url_map) -> tuple[str, ...]:
    """The path prefixes whose next segment is a secret: the static part before ``<token``
    of every URL rule with a ``token`` variable (``/move/``, ``/preview/``), with
    :data:`lexgold.errors.TOKEN_PATHS`. A new route with a ``<token>`` is masked in the log
    without another edit."""
    found = {rule.rule.split("<token", 1)[0] for rule in url_map.iter_rules()
             if "token" in rule.arguments}
    return tuple(sorted(found | set(TOKEN_PATHS)))


class Redacted:
    """A log filter: the record's message through :func:`lexgold.errors.redact` with the
    site's token paths (a database URL, a ``token=`` or a ``/move/<token>`` a message or a
    traceback line carries is masked)."""

    def __init__(self, paths: tuple[str, ...]):
        self.paths = paths

    def filter(self, record) -> bool:
        record.msg, record.args = redact(record.getMessage(), self.paths), ()
        if record.exc_info:
            import traceback
            record.exc_text = redact("".join(traceback.format_exception(*record.exc_info))
                                     .rstrip(), self.paths)
            record.exc_info = None
        return True


def _redact_logs(app: Flask, paths: tuple[str, ...]) -> None:
    """Put :class:`Redacted` on the app's logger and the servers' (one filter each: an app
    made again replaces the one before)."""
    import logging

    for logger in (app.logger, *map(logging.getLogger, SERVER_LOGGERS)):
        for old in [f for f in logger.filters if isinstance(f, Redacted)]:
            logger.removeFilter(old)
        logger.addFilter(Redacted(paths))


def _platform_link(completion_url: str, code: str) -> str:
    """The study's ``--completion-url`` with ``{code}`` filled in (URL-quoted), or ""."""
    return completion_url.replace("{code}", quote(code, safe="")) if completion_url else ""


def _register(app: Flask) -> None:

    app.register_blueprint(rater)
    app.register_blueprint(admin)
    app.register_blueprint(preview)
    app.register_blueprint(export)
    app.register_blueprint(prolific)
    app.register_blueprint(intake)           # pause/resume/close; its gate on the rater pages
    app.extensions["csrf"].exempt(prolific)     # Prolific's server, verified by its signature

    @app.context_processor
    def _study():
        study = state()
        return {"study": study, "texts": study.config.texts, "fill": fill}

    @app.teardown_appcontext
    def _close(_exc):
        kept = g._get_current_object()
        for name in ("db", "db_write", "connection"):    # the sessions before their connection
            opened = kept.pop(name, None)
            if opened is not None:
                try:
                    opened.close()
                except (OperationalError, InterfaceError):   # connection died: no rollback
                    if not getattr(opened, "closed", False):  # (a connection it closed is
                        opened.invalidate()                  # invalidated already)

    @app.after_request
    def _headers(response):
        headers = response.headers
        present = {name.lower() for name, _ in headers}
        if present.isdisjoint(SECURITY_NAMES):       # none set before: appended, no search
            for name, value in SECURITY_HEADERS:
                headers.add(name, value)
        else:
            for name, value in SECURITY_HEADERS:         # replaced, as one header each
                headers[name] = value
        if "cache-control" not in present:
            headers.add("Cache-Control", "no-store")
        elif not headers.get("Cache-Control"):
            headers["Cache-Control"] = "no-store"
        return response

    @app.errorhandler(Rejected)
    def _rejected(err):
        status = 409 if err.text in ("expired_text", "full_text") else \
            403 if err.text == "entry_refused" else 429 if err.text == "error_busy" else 400
        named = {"parameter": err.parameter} if isinstance(err, BadEntry) else {}
        return message_page(err.text, **named), status

    @app.errorhandler(OperationalError)
    @app.errorhandler(InterfaceError)
    @app.errorhandler(PoolTimeout)
    def _database_unavailable(err):
        """A dropped, locked or stalled database (health.py): nothing was stored; ask for a
        reload. The admin view says since when the database is down."""
        reason = (str(getattr(err, "orig", None) or err).strip() or repr(err)).splitlines()[0]
        app.logger.error("database unavailable for %s %s: %s", request.method, request.path,
                         reason)
        health = getattr(app.extensions["lexgold_engine"], "lexgold_health", None)
        if request.blueprint == "admin" and health is not None:
            return render_template("admin_down.html", health=health.report()), 503, \
                {"Retry-After": "5"}
        return message_page("error_retry"), 503, {"Retry-After": "5"}

    @app.errorhandler(CSRFError)
    def _csrf(_err):
        return message_page("error_invalid"), 400

    @app.errorhandler(404)
    def _missing(_err):
        return message_page("error_invalid"), 404

    @app.errorhandler(405)
    def _method(_err):
        return message_page("error_invalid"), 405
