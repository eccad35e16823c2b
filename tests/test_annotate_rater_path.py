"""The rater's lean path (issue 49): the rater and its slot read as plain rows, and a group
page's pairs filled into a pattern of ``group_item.html`` rendered once per study and kind."""

import re

import pytest
from flask import render_template
from flask import request as flask_request
from markupsafe import Markup, escape

from lexgold.annotate import flow
from lexgold.annotate.views_rater import ITEM_FIELDS, _item_html, filled_page
from lexgold.study.db import database_url
from lexgold.study.store import create_study
from test_annotate_app import YES, enter, make_app, page, protocol_variant, usf_pair_file

HOSTILE = "<script>alert('x')</script> & {word1}"


@pytest.fixture(scope="module")
def pairs(usf, tmp_path_factory):
    return usf_pair_file(usf, tmp_path_factory.mktemp("pairs") / "pairs.csv",
                         counts=(("N", "N", 12), ("V", "V", 4), ("A", "AJ", 4)))


@pytest.mark.parametrize("task", ["slider", "binary"])
def test_a_filled_pattern_is_the_template_rendered_for_the_item(tmp_path, pairs, task):
    """Each kind of item, with a hostile question: the pattern filled with escaped values is
    byte for byte what rendering ``group_item.html`` for that item gives."""
    protocol = protocol_variant(tmp_path, "simlex", tranches=1, raters_per_tranche=1,
                                task=f'"{task}"')
    url = database_url(tmp_path / "study.sqlite")
    create_study(protocol, pairs, url, seed=1)
    app = make_app(url)
    with app.test_request_context("/task"):
        for kind in ("pair", "calibration", "consistency"):
            for item_id, start in ((7, 3), (12345, 0)):
                item = {"kind": kind, "id": item_id, "question": HOSTILE, "start": start}
                direct = render_template("group_item.html", item=item)
                filled = _item_html(kind, {"id": str(item_id),
                                           "question": str(escape(HOSTILE)),
                                           "start": str(start)})
                assert filled == direct
                assert "<script>" not in filled and "&lt;script&gt;" in filled
        assert set(ITEM_FIELDS) == {"id", "question", "start"}


def test_the_current_rater_needs_its_browser_and_comes_with_its_slot(tmp_path, pairs):
    protocol = protocol_variant(tmp_path, "simlex", tranches=1, raters_per_tranche=2)
    url = database_url(tmp_path / "study.sqlite")
    create_study(protocol, pairs, url, seed=1)
    app = make_app(url)
    client = app.test_client()
    enter(client)
    _, position, _, _ = page(client)
    with client.session_transaction() as cookie:
        public_id, secret = cookie["rater"], cookie["browser"]
    state = app.extensions["lexgold"]
    with state.reads() as session:
        found = flow.current_rater(session, public_id, flow.browser_hash(secret))
        assert found.stage == "rating" and found.slot is not None
        assert found.slot.id == found.slot_id and found.slot.rater_id == found.id
        assert found.slot.step == position == 0 and found.slot.status == "active"
        assert flow.current_rater(session, public_id, flow.browser_hash(secret + "x")) is None
        assert flow.current_rater(session, public_id + "x", flow.browser_hash(secret)) is None
    other = app.test_client()                     # another browser: consent gives a new rater
    other.get("/")
    assert other.post("/consent", data=YES).status_code == 302
    with other.session_transaction() as cookie:
        assert cookie["rater"] != public_id
    assert re.search(r'name="position" value="0"', client.get("/task").get_data(as_text=True))


def test_a_filled_page_is_the_template_rendered_for_its_values(tmp_path, pairs):
    """A group page from its pattern is byte for byte ``group.html`` rendered with the same
    values, hostile ones included, for pages at and after the first, with and without a
    topic, under a script root; the pattern is made once and filled for every page."""
    protocol = protocol_variant(tmp_path, "simlex", tranches=1, raters_per_tranche=1)
    url = database_url(tmp_path / "study.sqlite")
    create_study(protocol, pairs, url, seed=1)
    app = make_app(url)
    items = [Markup(f'<fieldset data-item="{n}">{escape(HOSTILE)}</fieldset>') for n in (1, 2)]
    cases = [{"position": 0, "done": 0, "topic": ""}, {"position": 3, "done": 3, "topic": ""},
             {"position": 4, "done": 4, "topic": HOSTILE}, {"position": 5, "done": 5,
                                                             "topic": "sport"}]
    for root in ("", "/under"):
        with app.test_request_context("/task", base_url=f"http://localhost{root}/"):
            for case in cases:
                values = {**case, "progress": f"{HOSTILE} {case['position']}", "total": 25,
                          "action": f"{root}/step?a=1&b=<x>", "csrf_token": "t<o>k&en"}
                direct = render_template(
                    "group.html", items=items, banner="", csrf_token=lambda: "t<o>k&en",
                    **{k: v for k, v in values.items() if k != "csrf_token"})
                filled = filled_page("group.html", {**values, "items": Markup("").join(items)},
                                     banner="")
                assert filled == direct
                assert "<script>alert" not in filled and f'href="{root}/static/lexgold.css"' in filled
    assert len(app.extensions["lexgold_page_html"]) == 2 * 3    # (first page, later, topic) x root


def test_a_kept_cookie_is_checked_for_age_and_each_request_gets_its_own_copy(
        tmp_path, pairs, monkeypatch):
    """KeptSessionInterface: the same cookie again gives the same contents (a fresh copy each
    time), a cookie with another signature gives an empty session, and a kept cookie older
    than the session's lifetime is refused as Flask's own check would."""
    from lexgold.annotate import app as site

    protocol = protocol_variant(tmp_path, "simlex", tranches=1, raters_per_tranche=1)
    url = database_url(tmp_path / "study.sqlite")
    create_study(protocol, pairs, url, seed=1)
    app = make_app(url)
    interface = app.session_interface
    cookie = interface.get_signing_serializer(app).dumps({"rater": "r1", "entry": {"a": 1}})
    name = app.config["SESSION_COOKIE_NAME"]

    def opened(value):
        with app.test_request_context("/", headers={"Cookie": f"{name}={value}"}):
            return interface.open_session(app, flask_request)

    first = opened(cookie)
    first["entry"]["a"] = 2
    assert dict(opened(cookie)) == {"rater": "r1", "entry": {"a": 1}}
    head, signature = cookie.rsplit(".", 1)      # a signature's first character: its top bits
    assert dict(opened(f"{head}.{'B' if signature[0] == 'A' else 'A'}{signature[1:]}")) == {}
    lifetime = app.permanent_session_lifetime.total_seconds()
    later = site.time.time() + lifetime + 5
    monkeypatch.setattr(site.time, "time", lambda: later)
    assert dict(opened(cookie)) == {}


def test_a_session_keeps_one_csrf_token_and_a_kept_token_passes_only_its_own_session(
        tmp_path, pairs):
    """KeptCSRF and context.csrf_token: every page of a session carries one signed token; a
    token checked once passes again without a new signature check, but only with the session
    whose raw token it signs; another session, a forged copy and no session are refused as
    before; with a time limit nothing is kept. (A rater who consented again is sent on to
    /task, 302, when the CSRF check passes; a refused token gives 400.)"""
    from test_hardening_input import CSRF, enter_with_csrf

    protocol = protocol_variant(tmp_path, "simlex", tranches=1, raters_per_tranche=3)
    url = database_url(tmp_path / "study.sqlite")
    create_study(protocol, pairs, url, seed=1)
    app = make_app(url, WTF_CSRF_ENABLED=True, TESTING=False)
    mine, theirs = (enter_with_csrf(app.test_client(), f"?PROLIFIC_PID={n * 12}")
                    for n in ("a1", "b2"))
    first = CSRF.search(mine.get("/task").get_data(as_text=True)).group(1)
    assert CSRF.search(mine.get("/task").get_data(as_text=True)).group(1) == first
    other = CSRF.search(theirs.get("/task").get_data(as_text=True)).group(1)
    assert other != first
    kept = app.extensions["csrf"]._checked
    kept.clear()                          # the tokens of the consent and instructions pages
    forged = first[:-2] + ("aa" if first[-2:] != "aa" else "bb")
    for turn in range(2):                 # checked by flask-wtf, then from what it kept
        assert mine.post("/consent", data={"csrf_token": first, **YES}).status_code == 302
        assert [token for _, token in kept] == [first]
        for token, client in ((first, theirs), (first, app.test_client()), (forged, mine),
                              ("", mine)):
            assert client.post("/consent", data={"csrf_token": token, **YES}
                               ).status_code == 400
    assert [token for _, token in kept] == [first]

    timed = make_app(url, WTF_CSRF_ENABLED=True, TESTING=False, WTF_CSRF_TIME_LIMIT=3600)
    client = enter_with_csrf(timed.test_client(), "?PROLIFIC_PID=" + "c3" * 12)
    token = CSRF.search(client.get("/task").get_data(as_text=True)).group(1)
    assert client.post("/consent", data={"csrf_token": token, **YES}).status_code == 302
    assert not timed.extensions["csrf"]._checked
    assert not timed.extensions.get("lexgold_csrf_signed")


def test_a_filled_checkpoint_page_is_the_template_rendered_for_its_options(tmp_path, pairs):
    """A checkpoint page from its pattern (one per option order) is byte for byte
    ``checkpoint.html`` rendered with the same values and hostile option words, at the first
    page and later, under a script root."""
    protocol = protocol_variant(tmp_path, "simlex", tranches=1, raters_per_tranche=1)
    url = database_url(tmp_path / "study.sqlite")
    create_study(protocol, pairs, url, seed=1)
    app = make_app(url)
    first, second = (1, (HOSTILE, "b&b")), (0, ("<i>", "x"))
    orders = [(first, second), (second, first)]
    for root in ("", "/under"):
        with app.test_request_context("/task", base_url=f"http://localhost{root}/"):
            for options in orders:
                for position in (0, 4):
                    values = {"position": position, "done": position, "total": 25,
                              "progress": f"{HOSTILE} {position}", "action": f"{root}/step",
                              "csrf_token": "t<o>k&en"}
                    direct = render_template(
                        "checkpoint.html", options=options, banner="",
                        csrf_token=lambda: "t<o>k&en",
                        **{k: v for k, v in values.items() if k != "csrf_token"})
                    filled = filled_page("checkpoint.html", values, banner="", options=options)
                    assert filled == direct
                    assert "<i>" not in filled and "&lt;i&gt;" in filled
    assert len(app.extensions["lexgold_page_html"]) == 2 * 2 * 2    # root x order x first


def test_a_rater_enrolled_in_core_has_the_columns_the_orm_gives(tmp_path, pairs):
    """:func:`flow.enrol` writes the rater in one Core INSERT: every column it does not give
    is the model's default, as an ORM ``Rater`` added and flushed has it; a platform ID is
    enrolled once (:func:`flow.enrolled` names it), an anonymous link never matches."""
    from datetime import datetime

    from sqlalchemy import select

    from lexgold.study import models as m

    protocol = protocol_variant(tmp_path, "simlex", tranches=1, raters_per_tranche=2)
    url = database_url(tmp_path / "study.sqlite")
    create_study(protocol, pairs, url, seed=1)
    state = make_app(url).extensions["lexgold"]
    at = datetime(2026, 11, 1, 12, 0, 0)
    entry = flow.RaterEntry("prolific", "a" * 24, "b" * 24, "c" * 24)
    with state.sessions.kw["bind"].connect() as connection:     # as the site's requests
        new, secret = flow.enrol(connection, entry, True, at, key="k" * 32)
        assert (new.stage, new.instructions_page, new.slot_id, new.slot) == \
            ("instructions", 0, None, None)
        assert flow.enrol(connection, entry, True, at, key="k" * 32) == (None, "")
    with state.sessions() as session:
        assert flow.enrolled(session, entry) == new.id
        assert flow.enrolled(session, flow.RaterEntry("prolific", "d" * 24)) is None
        assert flow.enrolled(session, flow.RaterEntry("anonymous", None)) is None
        session.add(m.Rater(public_id="orm", platform="prolific", external_id="e" * 24,
                            external_study="b" * 24,
                            external_session=flow.session_hash("k" * 32, "c" * 24),
                            native_speaker=True, browser_sha256="", created_at=at))
        session.commit()
        rows = {row.public_id: row._asdict() for row in session.execute(
            select(*m.Rater.__table__.c)).all()}
    ours, orm = rows[new.public_id], rows["orm"]
    assert ours["browser_sha256"] == flow.browser_hash(secret) and ours["created_at"] == at
    differ = {"id", "public_id", "external_id", "browser_sha256"}
    assert {k: v for k, v in ours.items() if k not in differ} == \
        {k: v for k, v in orm.items() if k not in differ}


def test_the_last_instructions_page_claims_a_place_of_the_least_taken_tranche(tmp_path, pairs):
    """:func:`flow.advance_instructions` on a :class:`flow.CurrentRater`: pages in order (a
    repeat moves nothing, a page skipped is refused); the last claims the first free slot of
    the tranche with the fewest raters, held for ``first_answer_timeout_s``; with no free slot
    the rater is ``full``, and an expired claim is free again."""
    from datetime import datetime, timedelta

    from sqlalchemy import select, update

    from lexgold.study import models as m

    protocol = protocol_variant(tmp_path, "simlex", tranches=2, raters_per_tranche=1)
    url = database_url(tmp_path / "study.sqlite")
    create_study(protocol, pairs, url, seed=1)
    state = make_app(url).extensions["lexgold"]
    config, at = state.config, datetime(2026, 11, 1, 12, 0, 0)
    pages = len(config.texts.instructions)

    def read_all(session, n):
        rater, _ = flow.enrol(session, flow.RaterEntry("anonymous", None), True, at,
                              key="k" * 32)
        with pytest.raises(flow.Rejected):
            flow.advance_instructions(session, rater, 1, config, at)
        for page in range(pages):
            flow.advance_instructions(session, rater, page, config, at)
            flow.advance_instructions(session, rater, page, config, at)     # a repeat
            rater = flow.CurrentRater(rater.id, rater.public_id, *session.execute(
                select(m.Rater.stage, m.Rater.instructions_page).where(
                    m.Rater.id == rater.id)).one(), None, None)
        return session.execute(select(m.Rater.stage, m.Rater.slot_id, m.Rater.instructions_page)
                               .where(m.Rater.id == rater.id)).one(), rater.id

    with state.sessions() as session:
        slots = session.execute(select(m.Slot.id, m.Tranche.number).join(m.Tranche)
                                .order_by(m.Tranche.number, m.Slot.number)).all()
        first, one = read_all(session, 0)
        second, _ = read_all(session, 1)
        third, three = read_all(session, 2)
        assert first == ("rating", slots[0][0], pages) and second == ("rating", slots[1][0], pages)
        assert third == ("full", None, pages)
        held = session.execute(select(m.Slot.rater_id, m.Slot.status, m.Slot.claimed_at,
                                      m.Slot.expires_at, m.Slot.step)
                               .where(m.Slot.id == slots[0][0])).one()
        hold = min(config.claim_timeout_s, config.first_answer_timeout_s)
        assert tuple(held) == (one, "active", at, at + timedelta(seconds=hold), 0)
        session.execute(update(m.Slot).where(m.Slot.id == slots[1][0])
                        .values(expires_at=at))           # the second's claim ran out
        session.commit()
        assert flow._claim(session, three, config, at) == slots[1][0]
        session.commit()
        assert session.scalar(select(m.Slot.rater_id).where(m.Slot.id == slots[1][0])) == three


def test_a_kept_cookie_header_parses_as_werkzeugs_and_a_long_one_is_not_kept(tmp_path, pairs):
    """KeptCookiesRequest: the same Cookie header again gives werkzeug's own parse, shared;
    no header, several cookies, a quoted value; a header longer than a browser sends is parsed
    but not kept."""
    from werkzeug.wrappers import Request

    from lexgold.annotate.app import KEPT_COOKIE_HEADER_BYTES, KeptCookiesRequest

    protocol = protocol_variant(tmp_path, "simlex", tranches=1, raters_per_tranche=1)
    url = database_url(tmp_path / "study.sqlite")
    create_study(protocol, pairs, url, seed=1)
    app = make_app(url)
    assert app.request_class is KeptCookiesRequest
    for header in (None, "a=1", 'session=x.y.z; b="q \\"w\\""; a=2; a=3',
                   "long=" + "v" * KEPT_COOKIE_HEADER_BYTES):
        headers = {} if header is None else {"Cookie": header}
        with app.test_request_context("/task", headers=headers):
            first = flask_request.cookies
            environ = flask_request.environ
        with app.test_request_context("/task", headers=headers):
            again = flask_request.cookies
        assert first == Request(environ).cookies
        assert first.to_dict(flat=False) == Request(environ).cookies.to_dict(flat=False)
        assert (again is first) == (header is None or len(header) <= KEPT_COOKIE_HEADER_BYTES)


def test_every_response_gets_the_security_headers_once_in_order(tmp_path, pairs):
    """The fixed headers appended after the view's own, each once, and ``no-store`` only
    where the response set no Cache-Control (the static files set theirs)."""
    from lexgold.annotate.app import CSP, SECURITY_HEADERS

    protocol = protocol_variant(tmp_path, "simlex", tranches=1, raters_per_tranche=1)
    url = database_url(tmp_path / "study.sqlite")
    create_study(protocol, pairs, url, seed=1)
    client = make_app(url).test_client()
    enter(client, "?PROLIFIC_PID=" + "d4" * 12)
    for path in ("/task", "/nowhere", "/static/lexgold.css"):
        response = client.get(path)
        names = [name.lower() for name, _ in response.headers]
        fixed = [(name, value) for name, value in response.headers
                 if name.lower() in {n.lower() for n, _ in SECURITY_HEADERS}]
        assert fixed == list(SECURITY_HEADERS)
        assert response.headers["Content-Security-Policy"] == CSP
        assert names.count("cache-control") == 1
        assert (response.headers["Cache-Control"] == "no-store") == (path != "/static/lexgold.css")
    response = client.post("/step", data={"position": "0"})       # a redirect
    assert response.status_code in (302, 400)
    assert [n for n, _ in response.headers].count("X-Frame-Options") == 1
