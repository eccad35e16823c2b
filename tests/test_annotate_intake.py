"""Issue 37: pause, resume and close a study (the admin view, ``lexgold study pause|resume|close``),
the completion page and its reopening, the cookie that survives the browser, and the consent
page's ``[study.consent]`` keys (``study create --consent FILE``).

Browser-side checks (copy button, a browser restart, 44 px targets) are in
tests/test_annotate_intake_browser.py.
"""

import re
from datetime import datetime

import pytest
from click.testing import CliRunner
from sqlalchemy import func, select

from lexgold.cli import cli
from lexgold.study import models as m
from lexgold.study.db import database_url, downgrade, make_engine, postgres_schema, \
    session_factory, upgrade
from lexgold.study.intake import read_intake, set_intake
from lexgold.study.store import create_study
from test_annotate_app import (YES, enter, make_app, page, protocol_variant, rate_all,
                               usf_pair_file)

PROLIFIC = "?PROLIFIC_PID={pid}&STUDY_ID=st1&SESSION_ID={session}"
BACK = "https://app.prolific.com/submissions/complete?cc={code}"


@pytest.fixture(scope="module")
def pairs(usf, tmp_path_factory):
    return usf_pair_file(usf, tmp_path_factory.mktemp("intake") / "pairs.csv")


@pytest.fixture
def study(tmp_path, pairs):
    """A small SimLex study (2 tranches, 2 places each) with a link back to Prolific; the
    site reads the intake on every request (``INTAKE_CACHE_S`` 0)."""
    protocol = protocol_variant(tmp_path, "simlex", tranches=2, raters_per_tranche=2)
    db = tmp_path / "study.sqlite"
    consent = tmp_path / "consent.toml"
    consent.write_text('contact = "Dr Ada Researcher, ada@example.org"\n', encoding="utf-8")
    create_study(protocol, pairs, database_url(db), completion_code="DONE-37",
                 completion_url=BACK, consent=consent)
    return db, make_app(database_url(db), INTAKE_CACHE_S=0)


def invoke(*args):
    result = CliRunner().invoke(cli, [str(a) for a in args])
    return result


def counts(app):
    with app.extensions["lexgold"].sessions() as session:
        return (session.scalar(select(func.count()).select_from(m.Rater)),
                session.scalar(select(func.count()).select_from(m.Answer)) +
                session.scalar(select(func.count()).select_from(m.CheckpointAnswer)))


def answer_one_page(client):
    _, position, ids, checkpoint = page(client)
    data = {"choice": 1} if checkpoint else {f"r{i}": 3 for i in ids}
    return client.post("/step", data={"position": position, **data})


def test_pause_turns_new_raters_away_and_lets_raters_already_in_finish(study):
    db, app = study
    current = app.test_client()
    enter(current, PROLIFIC.format(pid="in1", session="s1"))
    assert answer_one_page(current).status_code == 302
    paused = invoke("study", "pause", db)
    assert paused.exit_code == 0, paused.output
    assert paused.output.strip().endswith("paused: no new raters; raters already in may finish")
    before = counts(app)
    new = app.test_client()
    response = new.get("/" + PROLIFIC.format(pid="new1", session="s2"))
    html = response.get_data(as_text=True)
    assert response.status_code == 503 and "The study is paused" in html
    assert 'href="https://app.prolific.com/"' in html and "DONE-37" not in html
    assert new.post("/consent", data=YES).status_code == 503       # nor by posting the form
    assert counts(app) == before                                     # no rater, no answer
    _, position, _, _ = page(current)                                # already in: carries on
    assert position == 1 and answer_one_page(current).status_code == 302
    posted, _, last = rate_all(current)
    assert "DONE-37" in last and posted
    assert invoke("study", "resume", db).exit_code == 0
    assert new.get("/" + PROLIFIC.format(pid="new1", session="s2")).status_code == 200


def test_close_stop_now_stops_raters_already_in_and_keeps_their_answers(study):
    db, app = study
    finished, current = app.test_client(), app.test_client()
    enter(finished, PROLIFIC.format(pid="done1", session="s1"))
    rate_all(finished)
    enter(current, PROLIFIC.format(pid="in2", session="s2"))
    assert answer_one_page(current).status_code == 302
    closed = invoke("study", "close", db, "--stop-now")
    assert closed.output.strip().endswith("closed: no new raters; raters already in stopped too")
    kept = counts(app)
    stopped = current.get("/task")
    assert stopped.status_code == 410
    html = stopped.get_data(as_text=True)
    assert "The researcher has closed this study" in html
    # the way out: whom to contact, the screen-out code in its box, the link that hands it back
    assert "Contact the researcher: Dr Ada Researcher, ada@example.org." in html
    code = re.search(r'<code id="code">([^<]+)</code>', html).group(1)
    assert code != "DONE-37" and f'id="return" class="button" href="{BACK.format(code=code)}"' \
        in html.replace("&amp;", "&")
    _, position, ids, _ = page(current)
    assert position is None                                  # no page of the tranche shown
    refused = current.post("/step", data={"position": 1, **{f"r{i}": 3 for i in range(9)}})
    assert refused.status_code == 410 and counts(app) == kept   # nothing stored
    html = finished.get("/task").get_data(as_text=True)      # a finished rater: its code
    assert "DONE-37" in html and 'id="copy"' in html
    new = app.test_client().get("/")
    assert new.status_code == 410 and "The study has closed" in new.get_data(as_text=True)
    assert invoke("study", "resume", db).output.strip().endswith("open: new raters are taken")
    assert page(current)[1] == 1                              # resumed where it was


def test_the_admin_view_pauses_resumes_and_closes(study):
    db, app = study
    admin = app.test_client()
    assert admin.post("/admin/intake", data={"intake": "paused"}).status_code == 302
    assert read_state(app) == ("open", False)                # not logged in: nothing changed
    admin.post("/admin/login", data={"password": "s3cret"})
    overview = admin.get("/admin/").get_data(as_text=True)
    assert 'id="intake"' in overview and 'id="pause"' in overview and 'id="resume"' not in \
        overview
    done = admin.post("/admin/intake", data={"intake": "paused", "current": "finish"})
    assert done.status_code == 302 and done.headers["Location"].endswith("/admin/#intake")
    assert read_state(app) == ("paused", False)
    overview = admin.get("/admin/").get_data(as_text=True)
    assert "New raters: paused" in overview and "may finish" in overview
    assert 'id="resume"' in overview and 'id="pause"' not in overview
    asked = admin.post("/admin/intake", data={"intake": "closed", "current": "stop"})
    html = asked.get_data(as_text=True)                     # a page of its own asks first
    assert asked.status_code == 200 and "Close the study?" in html
    assert read_state(app) == ("paused", False)
    assert 'name="confirmed" value="yes"' in html and 'id="cancel"' in html
    assert "The 0 raters already in (consented, not finished) are stopped now" in html
    admin.post("/admin/intake", data={"intake": "closed", "current": "stop",
                                      "confirmed": "yes"})
    assert read_state(app) == ("closed", True)
    asked = admin.post("/admin/intake", data={"intake": "paused", "current": "stop"})
    assert "Pause the study and stop the raters already in?" in asked.get_data(as_text=True)
    assert read_state(app) == ("closed", True)
    assert admin.post("/admin/intake", data={"intake": "halted"}).status_code == 400
    admin.post("/admin/intake", data={"intake": "open", "current": "stop"})
    assert read_state(app) == ("open", False)                # resume lets everyone in


def test_the_admin_form_needs_its_csrf_token(study):
    db, _ = study
    app = make_app(database_url(db), WTF_CSRF_ENABLED=True, INTAKE_CACHE_S=0)
    admin = app.test_client()
    login = admin.get("/admin/login").get_data(as_text=True)
    token = re.search(r'name="csrf_token" value="([^"]+)"', login).group(1)
    admin.post("/admin/login", data={"password": "s3cret", "csrf_token": token})
    assert admin.post("/admin/intake", data={"intake": "closed"}).status_code == 400
    assert read_state(app) == ("open", False)
    token = re.search(r'name="csrf_token" value="([^"]+)"',
                      admin.get("/admin/").get_data(as_text=True)).group(1)
    asked = admin.post("/admin/intake", data={"intake": "closed", "csrf_token": token})
    assert asked.status_code == 200 and read_state(app) == ("open", False)
    token = re.search(r'name="csrf_token" value="([^"]+)"', asked.get_data(as_text=True)).group(1)
    assert admin.post("/admin/intake", data={"intake": "closed", "confirmed": "yes",
                                             "csrf_token": token}).status_code == 302
    assert read_state(app) == ("closed", False)


def read_state(app):
    with app.extensions["lexgold"].sessions() as session:
        found = read_intake(session)
    return found.state, found.stop_current


def test_a_cached_intake_is_read_again_after_its_period(study):
    db, _ = study
    app = make_app(database_url(db), INTAKE_CACHE_S=3600)     # a process that read it once
    client = app.test_client()
    assert client.get("/").status_code == 200
    with app.extensions["lexgold"].sessions() as session:
        set_intake(session, "paused")
    assert client.get("/").status_code == 200                # the copy it holds
    app.extensions["lexgold_intake"] = (0.0, app.extensions["lexgold_intake"][1])  # expired
    assert client.get("/").status_code == 503


def test_set_intake_refuses_an_unknown_state_and_an_empty_database(tmp_path):
    from lexgold.errors import InputError

    engine = make_engine(database_url(tmp_path / "empty.sqlite"))
    upgrade(engine)
    with session_factory(engine)() as session:
        assert read_intake(session).state == "open"
        with pytest.raises(InputError, match="no study"):
            set_intake(session, "paused")
        with pytest.raises(InputError, match="open, paused, closed"):
            set_intake(session, "stopped")
    engine.dispose()


def test_cli_commands_refuse_a_missing_study(tmp_path):
    result = invoke("study", "pause", tmp_path / "none.sqlite")
    assert result.exit_code != 0 and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_reopening_the_link_after_finishing_shows_the_completion_page(study):
    _, app = study
    rater = app.test_client()
    link = "/" + PROLIFIC.format(pid="fin1", session="own")
    enter(rater, link[1:])
    rate_all(rater)
    again = rater.get(link, follow_redirects=True).get_data(as_text=True)
    assert "DONE-37" in again and "another browser" not in again
    other = app.test_client()                                # another browser, own link
    html = other.get(link).get_data(as_text=True)
    assert 'id="code">DONE-37</code>' in html and "another browser" not in html
    assert re.search(r'<a id="return" class="button" href="https://app\.prolific\.com/'
                     r'submissions/complete\?cc=DONE-37">', html)
    assert rater.get("/task").status_code == 200             # nothing moved
    stranger = app.test_client()                             # the ID without its session
    refused = stranger.get("/" + PROLIFIC.format(pid="fin1", session="guess"))
    assert refused.status_code == 403 and "DONE-37" not in refused.get_data(as_text=True)


def test_the_session_cookie_outlives_the_browser_from_the_first_page_and_is_set_once(study):
    _, app = study
    client = app.test_client()
    first = client.get("/" + PROLIFIC.format(pid="ck1", session="s"))
    cookie = first.headers["Set-Cookie"]
    expires = re.search(r"Expires=([^;]+)", cookie)
    assert expires, cookie                                    # not a browser-session cookie
    at = datetime.strptime(expires.group(1), "%a, %d %b %Y %H:%M:%S GMT")
    assert (at - datetime.utcnow()).days >= 13               # PERMANENT_SESSION_LIFETIME
    assert "Expires=" in client.post("/consent", data=YES).headers["Set-Cookie"]
    # set when the session changes, not re-signed on every page (SESSION_REFRESH_EACH_REQUEST)
    page = client.get("/task")
    assert page.status_code == 200 and "Set-Cookie" not in page.headers


def test_consent_page_shows_contact_ethics_and_paragraphs(tmp_path, pairs):
    consent = tmp_path / "consent.toml"
    consent.write_text('contact = "Dr A. Researcher, a.r@example.org"\n'
                       'ethics_reference = "UREC-2026-117"\n'
                       'paragraphs = ["Paid within {minutes} days.", "Data kept 5 years."]\n',
                       encoding="utf-8")
    db = tmp_path / "c.sqlite"
    created = invoke("study", "create", "--protocol", "simlex", "--pairs", pairs, "--db", db,
                     "--consent", consent)
    assert created.exit_code == 0, created.output
    assert "consent page: contact Dr A. Researcher, a.r@example.org; ethics approval " \
           "UREC-2026-117" in created.output
    html = make_app(database_url(db)).test_client().get("/").get_data(as_text=True)
    shown = re.findall(r"<p>([^<]*)</p>", html)
    minutes = re.search(r"takes about (\S+) minutes", shown[0]).group(1)
    assert shown[1:] == [
        f"Paid within {minutes} days.", "Data kept 5 years.",
        "Questions about the study, or want your answers withdrawn? Contact the researcher: "
        "Dr A. Researcher, a.r@example.org.",
        "The study was approved by research ethics review: UREC-2026-117."]
    plain = tmp_path / "plain.sqlite"
    created = invoke("study", "create", "--protocol", "simlex", "--pairs", pairs, "--db", plain)
    assert "consent page: no contact and no ethics_reference given" in created.output
    html = make_app(database_url(plain)).test_client().get("/").get_data(as_text=True)
    assert len(re.findall(r"<p>([^<]*)</p>", html)) == 1 and "Contact the researcher" not in html


@pytest.mark.parametrize("text,message", [
    ('contact = 3\n', r"\[study\.consent\] contact: allowed a string, given 3"),
    ('contact = "' + "x" * 501 + '"\n',
     r"\[study\.consent\] contact: allowed a length of 0 to 500, given 'x"),
    ('paragraphs = [""]\n', r"\[study\.consent\] paragraphs\[0\]: allowed a length of 1 to 5,000"),
    ('paragraphs = [' + ', '.join(['"p"'] * 21) + ']\n',
     r"\[study\.consent\] paragraphs: allowed a length of 0 to 20"),
    ('ethic_reference = "x"\n', r"\[study\.consent\] ethic_reference: allowed keys contact \| "
                                r"ethics_reference \| paragraphs, given an unknown key"),
    ('contact = "x\n', r"not a valid TOML consent file"),
])
def test_a_bad_consent_file_is_one_line_naming_file_and_key(tmp_path, pairs, text, message):
    consent = tmp_path / "consent.toml"
    consent.write_text(text, encoding="utf-8")
    result = invoke("study", "create", "--protocol", "simlex", "--pairs", pairs, "--db",
                    tmp_path / "x.sqlite", "--consent", consent)
    assert result.exit_code != 0 and "Traceback" not in result.output
    assert re.search(r"^Error: .*consent\.toml: " + message, result.output), result.output
    assert not (tmp_path / "x.sqlite").exists()              # nothing made


def revision_0015_round_trip(url: str, pairs, tmp_path):
    """A study made at 0014 gains an open intake at 0015 and loses it going back."""
    create_study(protocol_variant(tmp_path, "simlex", tranches=1, raters_per_tranche=1),
                 pairs, url)
    engine = make_engine(url)
    downgrade(engine, "0014_hashed_credentials")
    with engine.connect() as connection:
        columns = {c["name"] for c in __import__("sqlalchemy").inspect(connection)
                   .get_columns("study")}
    assert "intake" not in columns
    upgrade(engine)
    with session_factory(engine)() as session:
        assert read_intake(session).state == "open"
        assert set_intake(session, "closed", stop_current=True).stop_current
    engine.dispose()


def test_revision_0015_sqlite(tmp_path, pairs):
    revision_0015_round_trip(database_url(tmp_path / "mig.sqlite"), pairs, tmp_path)


@pytest.mark.postgres
def test_revision_0015_postgres(postgres_url, pairs, tmp_path):
    with postgres_schema(postgres_url, "intake") as (_, url):
        revision_0015_round_trip(url, pairs, tmp_path)
