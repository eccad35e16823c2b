"""Hostile input against the rating site, with CSRF on as in production (docs/hardening.md).

Property-based (hypothesis) over every POST endpoint: wrong types, huge bodies, out-of-range and
non-integer ratings, unknown and other raters' item ids, replayed CSRF tokens. Each gets a 4xx
with a clear message and changes nothing stored. Every example that posts runs on its own copy of
the study database (:func:`fork`), so an answer wrongly accepted in one example fails that example
and cannot change what the next one, or another test, sees. Then: markup and SQL in every text that reaches
a page is escaped, admin and export need a login, no rater reads another's data or the completion
code before finishing, and every response (errors and static files too) carries the security
headers.
"""

import itertools
import re
import sqlite3

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import func, select

from lexgold.study import models as m
from lexgold.study.db import database_url
from lexgold.annotate.flow import parse_int
from lexgold.study.store import create_study
from conftest import examples
from test_annotate_app import make_app, protocol_variant, usf_pair_file

pytestmark = pytest.mark.slow            # hardening: servers, faults and fuzzing of the site

CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
INVALID = "This answer could not be accepted"
INCOMPLETE = "Please answer every pair"
NASTY = ["'; DROP TABLE answer; --", "1 OR 1=1", "<script>alert(1)</script>",
         "\" onmouseover=\"alert(1)", "{{ 7*7 }}", "\u202e\u0000", "%00", "../../etc/passwd"]
FUZZ = settings(max_examples=examples(25), deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])


# -- a production-like app and one rater parked on a group page ---------------------------------

def csrf_app(url):
    return make_app(url, WTF_CSRF_ENABLED=True, TESTING=False)


def token(client, path="/task"):
    return CSRF.search(client.get(path).get_data(as_text=True)).group(1)


def enter_with_csrf(client, query=""):
    """Entry, consent and instructions with real CSRF tokens; returns the client."""
    html = client.get("/" + query).get_data(as_text=True)
    consent = {"csrf_token": CSRF.search(html).group(1), "consent": "yes", "native": "yes"}
    assert client.post("/consent", data=consent).status_code == 302
    while True:
        html = client.get("/task").get_data(as_text=True)
        number = re.search(r'name="page" value="(\d+)"', html)
        if not number:
            return client
        client.post("/instructions", data={"csrf_token": CSRF.search(html).group(1),
                                           "page": number.group(1)})


def current_form(client):
    """(position, item ids, csrf token, is checkpoint) of the page the rater is on."""
    html = client.get("/task").get_data(as_text=True)
    position = re.search(r'name="position" value="(\d+)"', html)
    ids = list(dict.fromkeys(int(i) for i in re.findall(r'name="r(\d+)"', html)))
    return (int(position.group(1)) if position else None, ids, CSRF.search(html).group(1)
            if CSRF.search(html) else None, 'name="choice"' in html)


def snapshot(app):
    """Everything a request could change: rows of every rater-written table."""
    with app.extensions["lexgold"].sessions() as session:
        return {
            "raters": session.execute(select(m.Rater.id, m.Rater.stage, m.Rater.slot_id,
                                             m.Rater.instructions_page,
                                             m.Rater.qualification_choice)
                                      .order_by(m.Rater.id)).all(),
            "answers": session.execute(select(m.Answer.rater_id, m.Answer.item_id,
                                              m.Answer.rating).order_by(m.Answer.id)).all(),
            "checks": session.scalar(select(func.count()).select_from(m.CheckpointAnswer)),
            "slots": session.execute(select(m.Slot.id, m.Slot.status, m.Slot.rater_id,
                                            m.Slot.step).order_by(m.Slot.id)).all()}


@pytest.fixture(scope="module")
def site(usf, tmp_path_factory):
    """A SimLex study with CSRF on; rater ``parked`` is on its first group page."""
    tmp = tmp_path_factory.mktemp("hostile")
    pairs = usf_pair_file(usf, tmp / "pairs.csv")
    protocol = protocol_variant(tmp, "simlex", tranches=2, raters_per_tranche=20)
    url = database_url(tmp / "hostile.sqlite")
    create_study(protocol, pairs, url, seed=5, completion_code="SECRET-CODE-77",
                 screenout_code="SCREEN-55")
    app = csrf_app(url)
    parked = enter_with_csrf(app.test_client(), "?PROLIFIC_PID=parked")
    position, _, csrf, checkpoint = current_form(parked)
    assert checkpoint
    while checkpoint:            # the two checks after the instructions, then the noun one
        parked.post("/step", data={"csrf_token": csrf, "position": position, "choice": 1})
        position, _, csrf, checkpoint = current_form(parked)
    other = enter_with_csrf(app.test_client(), "?PROLIFIC_PID=other")
    with app.extensions["lexgold"].sessions() as session:
        mine = session.scalars(select(m.Rater).where(m.Rater.external_id == "parked")).one()
        theirs = session.scalars(select(m.Rater).where(m.Rater.external_id == "other")).one()
        slot = session.get(m.Slot, mine.slot_id)
        other_slot = session.get(m.Slot, theirs.slot_id)
        foreign = session.scalars(select(m.Item.id).where(
            m.Item.tranche_id != slot.tranche_id)).first()
        later = session.scalars(select(m.Item.id).join(m.Step).where(
            m.Item.tranche_id == slot.tranche_id, m.Step.position > 3)).first()
    assert other_slot.tranche_id != slot.tranche_id
    return {"app": app, "parked": parked, "other": other, "foreign": foreign, "later": later,
            "db": tmp / "hostile.sqlite", "tmp": tmp}


FORKS = itertools.count()


def fork(site):
    """A private copy of ``site``: the study database as it is now, and the parked rater's browser.

    The copy is taken with SQLite's backup API (consistent under WAL); the parked rater's session
    cookie is signed with the study's key, which the copy carries, so it works unchanged.
    """
    path = site["tmp"] / f"fork-{next(FORKS)}.sqlite"
    source, target = sqlite3.connect(site["db"]), sqlite3.connect(path)
    with source, target:
        source.backup(target)
    source.close()
    target.close()
    app = csrf_app(database_url(path))
    parked = app.test_client()
    parked.set_cookie("session", site["parked"].get_cookie("session").value)
    return {**site, "app": app, "parked": parked, "db": path}


@pytest.fixture
def forks():
    """Forks made by a test, their engines disposed (and files removed) when it ends."""
    made = []
    yield lambda site: made.append(fork(site)) or made[-1]
    for copy in made:
        copy["app"].extensions["lexgold_engine"].dispose()
        copy["db"].unlink(missing_ok=True)


def valid_group(site):
    position, ids, csrf, checkpoint = current_form(site["parked"])
    assert not checkpoint and ids
    return {"csrf_token": csrf, "position": str(position), **{f"r{i}": "3" for i in ids}}, ids


# -- what a form field may hold ------------------------------------------------------------------

@pytest.mark.parametrize("text, value", [
    ("0", 0), ("6", 6), (" 3\r\n", 3), ("-1", -1), ("123456789", 123456789),
    ("٠", None), ("٣", None), ("３", None), ("\u00a03", None), ("06", None), ("-0", None),
    ("+3", None), ("3.0", None), ("1e0", None), ("", None), ("1234567890", None), ("3\n4", None)])
def test_parse_int_takes_only_what_the_forms_send(text, value):
    assert parse_int(text) == value


# -- property-based: POST /step -----------------------------------------------------------------

bad_rating = st.one_of(
    st.integers().filter(lambda v: not 0 <= v <= 6).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.text(max_size=40).filter(lambda s: not re.fullmatch(r"\s*[0-6]\s*", s)),
    st.sampled_from(NASTY + ["3.0", "+3", "0x3", "1e0", "٣", "٠", "３", "-0", "03", "00",
                             "3 4", "99999999999"]))


@FUZZ
@given(rating=bad_rating, which=st.integers(0, 20))
def test_any_bad_rating_is_refused_and_stores_nothing(site, forks, rating, which):
    site = forks(site)
    data, ids = valid_group(site)
    data[f"r{ids[which % len(ids)]}"] = rating
    before = snapshot(site["app"])
    response = site["parked"].post("/step", data=data)
    body = response.get_data(as_text=True)
    if rating.strip() == "":
        assert response.status_code == 400 and INCOMPLETE in body
    else:
        assert response.status_code == 400 and INVALID in body
    assert snapshot(site["app"]) == before


@FUZZ
@given(extra=st.one_of(st.sampled_from(["foreign", "later"]),
                       st.integers(min_value=10 ** 6, max_value=10 ** 9)),
       position=st.one_of(st.none(), st.integers(-5, 100), st.text(max_size=12)))
def test_foreign_unknown_items_and_positions_are_refused(site, forks, extra, position):
    site = forks(site)
    data, ids = valid_group(site)
    current = int(data["position"])
    item = site[extra] if isinstance(extra, str) else extra
    data[f"r{item}"] = "2"
    if position is not None:
        data["position"] = str(position)
    before = snapshot(site["app"])
    response = site["parked"].post("/step", data=data)
    # what the forms send: ASCII digits, no leading zero or sign on zero (flow.parse_int)
    written = str(position) if position is not None else None
    if written is not None and re.fullmatch(r"[ \t\r\n]*(0|-?[1-9][0-9]{0,8})[ \t\r\n]*", written) \
            and int(written) < current:
        assert response.status_code == 302        # a replay of a page already stored
    else:
        assert response.status_code == 400 and INVALID in response.get_data(as_text=True)
    assert snapshot(site["app"]) == before


@FUZZ
@given(form=st.dictionaries(st.text(max_size=12), st.text(max_size=30), max_size=8),
       json_body=st.booleans())
def test_arbitrary_forms_and_json_bodies_never_store_or_crash(site, forks, form, json_body):
    site = forks(site)
    _, _, csrf, _ = current_form(site["parked"])
    before = snapshot(site["app"])
    payload = {"csrf_token": csrf, **{k: v for k, v in form.items() if k != "csrf_token"}}
    for path in ("/step", "/instructions", "/qualification", "/consent"):
        if json_body:
            response = site["parked"].post(path, json=payload,
                                           headers={"X-CSRFToken": csrf})
        else:
            response = site["parked"].post(path, data=payload)
        # consent/instructions/qualification of a rater already rating: back to the page
        assert response.status_code in (302, 400), (path, response.status_code)
        if response.status_code == 400:
            assert "could not be accepted" in response.get_data(as_text=True) or \
                INCOMPLETE in response.get_data(as_text=True)
    assert snapshot(site["app"]) == before


# -- CSRF: missing, forged and replayed tokens -----------------------------------------------------

def test_csrf_tokens_cannot_be_replayed_across_sessions(site):
    data, _ = valid_group(site)
    before = snapshot(site["app"])
    stranger = site["app"].test_client()              # no session: the token is worthless
    assert stranger.post("/step", data=data).status_code == 400
    theirs = site["other"]                            # another rater's session, my token
    response = theirs.post("/step", data={**data, "position": "0", "choice": "1"})
    assert response.status_code == 400 and INVALID in response.get_data(as_text=True)
    for forged in ("", "x", data["csrf_token"][:-2] + "aa", data["csrf_token"] * 2):
        response = site["parked"].post("/step", data={**data, "csrf_token": forged})
        assert response.status_code == 400 and INVALID in response.get_data(as_text=True)
    assert snapshot(site["app"]) == before


def test_huge_bodies_and_too_many_fields_are_refused(site):
    data, ids = valid_group(site)
    before = snapshot(site["app"])
    huge = site["parked"].post("/step", data={**data, "t" + str(ids[0]): "9" * 400_000})
    assert huge.status_code == 413
    import io
    many = site["parked"].post("/step", content_type="multipart/form-data", data={
        **data, **{f"x{i}": "1" for i in range(3000)}, "f": (io.BytesIO(b"x"), "f.txt")})
    assert many.status_code == 413                     # werkzeug's max_form_parts (1000)
    junk = site["parked"].post("/step", data={**data, f"r{ids[0]}": "9",
                                               **{f"x{i}": "1" for i in range(3000)}})
    assert junk.status_code == 400 and INVALID in junk.get_data(as_text=True)
    assert huge.headers["X-Content-Type-Options"] == "nosniff"
    assert snapshot(site["app"]) == before


# -- consent, instructions, qualification and admin login ---------------------------------------

@FUZZ
@given(consent=st.one_of(st.text(max_size=20), st.sampled_from(NASTY)),
       query=st.sampled_from(["", "?PROLIFIC_PID=fuzz1", "?workerId=w1&hitId=h&assignmentId=a"]))
def test_consent_without_both_yes_enrols_nobody(site, forks, consent, query):
    site = forks(site)
    client = site["app"].test_client()
    html = client.get("/" + query).get_data(as_text=True)
    before = snapshot(site["app"])
    data = {"csrf_token": CSRF.search(html).group(1), "consent": consent, "native": "yes"}
    response = client.post("/consent", data=data)
    if consent == "yes":
        assert response.status_code == 302
        return
    assert response.status_code == 400
    assert "Please tick both boxes" in response.get_data(as_text=True)
    assert snapshot(site["app"]) == before


@pytest.mark.parametrize("value", NASTY + ["%3Cb%3E", "a" * 101, "p p"])
def test_hostile_platform_ids_are_refused(site, value):
    before = snapshot(site["app"])
    for key in ("PROLIFIC_PID", "workerId"):
        response = site["app"].test_client().get("/", query_string={key: value})
        html = response.get_data(as_text=True)
        assert response.status_code == 400 and f"{key} holds no valid ID" in html
        assert "<script>" not in html and "<b>" not in html
    assert snapshot(site["app"]) == before


def test_instructions_out_of_order_and_bad_pages(site):
    client = site["app"].test_client()
    html = client.get("/").get_data(as_text=True)
    client.post("/consent", data={"csrf_token": CSRF.search(html).group(1), "consent": "yes",
                                  "native": "yes"})
    csrf = token(client)
    before = snapshot(site["app"])
    for page in ("5", "1.0", "x", "", NASTY[0], "99999999999"):
        response = client.post("/instructions", data={"csrf_token": csrf, "page": page})
        assert response.status_code == 400, page
        assert INVALID in response.get_data(as_text=True)
    # an earlier page is a replay (back button): ignored, the rater stays where it was
    assert client.post("/instructions", data={"csrf_token": csrf, "page": "-1"}).status_code \
        == 302
    assert snapshot(site["app"]) == before


@pytest.fixture(scope="module")
def hyperlex_site(usf, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("hostile-hl")
    pairs = usf_pair_file(usf, tmp / "h.csv", (("N", "N", 60), ("V", "V", 20)))
    protocol = protocol_variant(tmp, "hyperlex", tranches=1, raters_per_tranche=5)
    url = database_url(tmp / "h.sqlite")
    create_study(protocol, pairs, url, completion_code="HL-DONE", screenout_code="HL-OUT")
    return csrf_app(url)


@FUZZ
@given(choice=st.one_of(st.integers().filter(lambda v: not 0 <= v <= 2).map(str),
                        st.text(max_size=10).filter(lambda s: not re.fullmatch(r"\s*[0-2]\s*", s)),
                        st.sampled_from(NASTY)))
def test_qualification_choice_out_of_range_is_refused(hyperlex_site, choice):
    client = enter_with_csrf(hyperlex_site.test_client())
    html = client.get("/task").get_data(as_text=True)
    assert "Qualification question" in html and "HL-OUT" not in html
    before = snapshot(hyperlex_site)
    response = client.post("/qualification", data={"csrf_token": CSRF.search(html).group(1),
                                                   "choice": choice})
    assert response.status_code == 400
    assert re.search(f"{INVALID}|{INCOMPLETE}", response.get_data(as_text=True))
    assert snapshot(hyperlex_site) == before
    page = client.get("/task").get_data(as_text=True)
    assert "Qualification question" in page and "HL-OUT" not in page


@pytest.mark.parametrize("password", NASTY + ["", "s3cret ", "S3CRET", "x" * 10_000])
def test_admin_login_refuses_hostile_passwords(site, password):
    client = site["app"].test_client()
    csrf = token(client, "/admin/login")
    response = client.post("/admin/login", data={"csrf_token": csrf, "password": password})
    body = response.get_data(as_text=True)           # 429 once failures pile up (lockout)
    assert response.status_code == 401 and "Wrong password." in body or \
        response.status_code == 429 and "Too many failed attempts" in body
    assert client.get("/admin/").status_code == 302
    assert client.get("/admin/ratings.csv").status_code == 302


# -- access control --------------------------------------------------------------------------------

def test_admin_and_export_need_a_login(site):
    rater = site["parked"]
    for path in ("/admin/", "/admin/ratings.csv", "/admin/ratings.csv?complete=1"):
        response = rater.get(path)
        assert response.status_code == 302 and response.location.endswith("/admin/login")
    assert rater.post("/admin/logout", data={"csrf_token": token(rater)}).status_code == 302
    forged = site["app"].test_client()                 # a cookie signed with another key
    from flask.sessions import SecureCookieSessionInterface
    from flask import Flask
    fake = Flask("fake")
    fake.secret_key = "not-the-study-key"
    signer = SecureCookieSessionInterface().get_signing_serializer(fake)
    forged.set_cookie("session", signer.dumps({"admin": True}))
    assert forged.get("/admin/ratings.csv").status_code == 302


def test_a_forged_rater_cookie_reads_nothing(site):
    with site["app"].extensions["lexgold"].sessions() as session:
        victim = session.scalars(select(m.Rater).where(m.Rater.external_id == "parked")).one()
    from flask import Flask
    from flask.sessions import SecureCookieSessionInterface
    fake = Flask("fake")
    fake.secret_key = "guessed"
    client = site["app"].test_client()
    client.set_cookie("session", SecureCookieSessionInterface().get_signing_serializer(fake)
                      .dumps({"rater": victim.public_id}))
    response = client.get("/task")
    assert response.status_code == 302 and response.location.endswith("/")
    html = client.get("/").get_data(as_text=True)
    assert "Before you start" in html and 'name="position"' not in html


def test_platform_id_of_another_rater_resumes_only_their_own_page(site):
    """Another browser with a Prolific ID is asked before it continues; the page then shows
    no earlier answers."""
    own_link = "?PROLIFIC_PID=resumer&STUDY_ID=study1&SESSION_ID=session1"
    first = enter_with_csrf(site["app"].test_client(), own_link)
    position, _, csrf, _ = current_form(first)
    first.post("/step", data={"csrf_token": csrf, "position": position, "choice": 1})
    client = site["app"].test_client()
    asked = client.get("/" + own_link).get_data(as_text=True)
    assert "another browser" in asked and client.get("/task").status_code == 302
    token = re.search(r'name="csrf_token" value="([^"]+)"', asked).group(1)
    client.post("/resume", data={"csrf_token": token})
    html = client.get("/task").get_data(as_text=True)
    assert 'name="position"' in html
    assert not re.search(r'name="r\d+" value="\d', html)       # no stored rating is echoed
    assert "SECRET-CODE-77" not in html


def test_completion_code_appears_only_on_the_last_page(site, forks):
    site = forks(site)
    client = enter_with_csrf(site["app"].test_client(), "?PROLIFIC_PID=finisher")
    seen = []
    for _ in range(60):
        html = client.get("/task").get_data(as_text=True)
        seen.append("SECRET-CODE-77" in html)
        position, ids, csrf, checkpoint = current_form(client)
        if position is None:
            break
        data = {"csrf_token": csrf, "position": position}
        data.update({"choice": 1} if checkpoint else {f"r{i}": 4 for i in ids})
        for probe in ("/admin/", "/admin/ratings.csv", "/static/lexgold.js", "/?x=1"):
            assert "SECRET-CODE-77" not in client.get(probe).get_data(as_text=True)
        assert client.post("/step", data=data).status_code == 302
    assert seen[-1] and not any(seen[:-1]) and len(seen) > 10


# -- escaping and headers -------------------------------------------------------------------------

def test_markup_and_sql_in_study_texts_are_escaped(usf, tmp_path):
    import pandas as pd
    pairs = usf_pair_file(usf, tmp_path / "p.csv")
    frame = pd.read_csv(pairs)
    frame["word1"] = [f"<script>alert({k})</script>" for k in range(len(frame))]
    frame["word2"] = [f"x{k}'); DROP TABLE answer; --" for k in range(len(frame))]
    frame.to_csv(pairs, index=False)
    protocol = protocol_variant(tmp_path, "simlex", tranches=1, raters_per_tranche=2)
    url = database_url(tmp_path / "x.sqlite")
    create_study(protocol, pairs, url, name="<img src=x onerror=alert(1)>")
    app = make_app(url)
    admin = app.test_client()
    admin.post("/admin/login", data={"password": "s3cret"})
    overview = admin.get("/admin/").get_data(as_text=True)
    assert "<img src=x" not in overview and "&lt;img src=x onerror=alert(1)&gt;" in overview
    client = app.test_client()
    client.get("/")
    client.post("/consent", data={"consent": "yes", "native": "yes"})
    client.post("/instructions", data={"page": 0})
    pages = []
    for _ in range(40):
        html = client.get("/task").get_data(as_text=True)
        pages.append(html)
        position = re.search(r'name="position" value="(\d+)"', html)
        if not position:
            break
        ids = set(re.findall(r'name="r(\d+)"', html))
        data = {"position": position.group(1), "choice": 1, **{f"r{i}": 1 for i in ids}}
        client.post("/step", data=data)
    text = "".join(pages)
    assert "<script>alert(" not in text
    assert re.search(r"&lt;script&gt;alert\(\d+\)&lt;/script&gt;", text)
    assert re.search(r"x\d+&#39;\); drop table answer; --", text)
    with app.extensions["lexgold"].sessions() as session:    # the table is still there
        assert session.scalar(select(func.count()).select_from(m.Answer)) > 0


@pytest.mark.parametrize("method, path", [
    ("get", "/"), ("get", "/task"), ("get", "/static/lexgold.css"), ("get", "/nope"),
    ("post", "/step"), ("get", "/step"), ("get", "/admin/login"), ("get", "/admin/")])
def test_security_headers_on_every_response(site, method, path):
    response = getattr(site["app"].test_client(), method)(path)
    csp = response.headers["Content-Security-Policy"]
    assert "frame-ancestors 'none'" in csp and "default-src 'none'" in csp
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["X-Frame-Options"] == "DENY"
    assert response.headers["Referrer-Policy"] == "same-origin"
