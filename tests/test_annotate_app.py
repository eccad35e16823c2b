"""The rating site through Flask's test client, on SQLite (WAL) and on the real PostgreSQL.

Covers the rater flow end to end, resume after reload, double submission, expired claims,
tampered fields, balanced assignment under concurrency, admin and the export round trip.
"""

import re
import threading
from pathlib import Path

import pandas as pd
import pytest
from sqlalchemy import func, select, update
from werkzeug.security import generate_password_hash

from lexgold.annotate import flow
from lexgold.study import models as m
from lexgold.annotate.app import create_app
from lexgold.study.db import database_url, downgrade, make_engine, postgres_schema, upgrade
from lexgold.study.config import load_study_config
from lexgold.study.store import create_study
from lexgold.study.export import export_ratings
from lexgold.protocols import protocol_path

YES = {"consent": "yes", "native": "yes"}


# -- fixtures and helpers (the browser tests import these) -------------------------------------

def protocol_variant(directory: Path, name: str, **values) -> Path:
    """A copy of a packaged protocol with some ``[study]`` keys changed."""
    text = protocol_path(name).read_text(encoding="utf-8")
    head, rest = text.split("[study]\n", 1)
    for key, value in values.items():
        rest, n = re.subn(rf"^{key} = [^\n#]*", f"{key} = {value}", rest, count=1, flags=re.M)
        assert n == 1, key
    path = directory / f"{name}-variant.toml"
    path.write_text(head + "[study]\n" + rest, encoding="utf-8")
    return path


def usf_pair_file(usf, path: Path, counts=(("N", "N", 144), ("V", "V", 44), ("A", "AJ", 22))):
    """Real USF cue-target pairs with one shared POS, lower case (a SimLex-like pair set)."""
    words = usf["cue"].str.fullmatch("[A-Z]{3,}") & usf["target"].str.fullmatch("[A-Z]{3,}")
    same = usf[words & (usf["qps"] == usf["tps"]) & (usf["cue"] != usf["target"])]
    parts = []
    for pos, tag, n in counts:
        sample = same[same["qps"] == tag].sample(n, random_state=0)
        parts.append(pd.DataFrame({"word1": sample["cue"].str.lower(),
                                   "word2": sample["target"].str.lower(), "pos": pos}))
    pd.concat(parts).to_csv(path, index=False)
    return path


def tr9856_pair_file(usf, path: Path):
    """Term pairs from USF grouped under two topics (the TR9856 file layout)."""
    sample = usf[usf["cue"].str.fullmatch("[A-Z]{3,}")].sample(24, random_state=1)
    topics = ["Sport should be subsidised"] * 12 + ["Nuclear power should be banned"] * 12
    pd.DataFrame({"topic": topics, "term1": sample["cue"].str.lower(),
                  "term2": sample["target"].str.lower(), "source": "S_top"}).to_csv(path,
                                                                                      index=False)
    return path


def make_app(url: str, **config):
    settings = {"DATABASE_URL": url, "WTF_CSRF_ENABLED": False, "SESSION_COOKIE_SECURE": False,
                "ADMIN_PASSWORD_HASH": generate_password_hash("s3cret"), "TESTING": True,
                "SECRET_KEY": "test-key-" + "k" * 32}
    settings.update(config)
    return create_app(settings)


def refresh_figures(app) -> dict:
    """What the figures refresher of `lexgold serve` does in the background, done once now
    (the admin view only shows stored figures: lexgold.live.figures)."""
    from lexgold.live import refresher

    state = app.extensions["lexgold"]
    with state.reads() as reads, state.sessions() as writes:
        return refresher.refresh(reads, writes)


def page(client):
    """The current task page: (html, position or None, item ids, is checkpoint)."""
    html = client.get("/task").get_data(as_text=True)
    position = re.search(r'name="position" value="(\d+)"', html)
    ids = [int(i) for i in re.findall(r'name="r(\d+)"', html)]
    return html, int(position.group(1)) if position else None, list(dict.fromkeys(ids)), \
        'name="choice"' in html


def enter(client, query=""):
    client.get("/" + query)
    assert client.post("/consent", data=YES).status_code == 302
    while "/instructions" in client.get("/task").get_data(as_text=True):
        html = client.get("/task").get_data(as_text=True)
        number = re.search(r'name="page" value="(\d+)"', html).group(1)
        client.post("/instructions", data={"page": number})


def past_checkpoints(client, choice: int = 1) -> int:
    """Answer the checkpoints that open a tranche (``choice`` each); returns how many."""
    answered = 0
    while True:
        _, position, _, checkpoint = page(client)
        if not checkpoint:
            return answered
        response = client.post("/step", data={"position": position, "choice": choice})
        assert response.status_code == 302
        answered += 1


def rate_all(client, rating=lambda item_id: item_id % 7, choice=lambda html: 1):
    """Answer every page to the end; returns {item_id: rating} and checkpoint choices."""
    posted, choices = {}, []
    while True:
        html, position, ids, checkpoint = page(client)
        if position is None:
            return posted, choices, html
        if checkpoint:
            picked = choice(html)
            choices.append(picked)
            data = {"position": position, "choice": picked}
        else:
            data = {"position": position, **{f"r{i}": rating(i) for i in ids}}
            posted.update({i: rating(i) for i in ids})
        assert client.post("/step", data=data).status_code == 302


@pytest.fixture(scope="module")
def simlex_pairs(usf, tmp_path_factory):
    return usf_pair_file(usf, tmp_path_factory.mktemp("pairs") / "pairs.csv")


@pytest.fixture
def simlex_study(tmp_path, simlex_pairs):
    protocol = protocol_variant(tmp_path, "simlex", tranches=2, raters_per_tranche=2)
    url = database_url(tmp_path / "study.sqlite")
    create_study(protocol, simlex_pairs, url, seed=3, completion_code="DONE-1234",
                 screenout_code="OUT-99")
    return make_app(url)


def answers(app):
    with app.extensions["lexgold"].sessions() as session:
        return export_ratings(session)


# -- the flow ---------------------------------------------------------------------------------

def test_full_simlex_tranche_stored_equals_posted(simlex_study):
    client = simlex_study.test_client()
    enter(client, "?PROLIFIC_PID=p1&STUDY_ID=s&SESSION_ID=x")
    html = client.get("/task").get_data(as_text=True)
    assert "DONE-1234" not in html
    posted, choices, last = rate_all(client, choice=lambda html: 1)
    assert "DONE-1234" in last
    frame = answers(simlex_study)
    rated = frame[frame["kind"] != "checkpoint"]
    with simlex_study.extensions["lexgold"].sessions() as session:
        stored = dict(session.execute(select(m.Answer.item_id, m.Answer.rating)).all())
    assert stored == posted
    assert sorted(rated["rating"].tolist()) == sorted(posted.values())
    assert set(rated["kind"]) == {"unique", "consistency", "calibration"}
    assert (rated["kind"] == "consistency").sum() == 20
    checks = frame[frame["kind"] == "checkpoint"]
    # section 3.2: two checks right after the instructions (abstract, then concrete examples),
    # then one before the first group of each part of speech (section 3.4)
    assert checks["pos"].tolist() == ["start", "start", "N", "A", "V"]
    assert checks["rating"].tolist() == [1] * 5
    assert [set(r) for r in checks[["word1", "word2"]].to_numpy()][:3] == [
        {"problem", "difficulty"}, {"boat", "ship"}, {"bread", "toast"}]
    assert frame["answered_at"].str.match(r"\d{4}-\d\d-\d\dT").all()
    assert (rated["start_value"] == 3).all()


def test_resume_after_reload_and_from_another_device(simlex_study):
    client = simlex_study.test_client()
    enter(client, "?PROLIFIC_PID=resume1&STUDY_ID=s&SESSION_ID=x")
    for _ in range(3):
        _, position, ids, checkpoint = page(client)
        data = {"position": position, "choice": 1} if checkpoint else \
            {"position": position, **{f"r{i}": 2 for i in ids}}
        client.post("/step", data=data)
    _, position, ids, _ = page(client)
    assert position == 3
    assert page(client)[1:3] == (3, ids)                      # a reload shows the same page
    other = simlex_study.test_client()                        # new browser, same Prolific ID
    asked = other.get("/?PROLIFIC_PID=resume1&STUDY_ID=s&SESSION_ID=x").get_data(as_text=True)
    assert "another browser" in asked and page(other)[1] is None   # asked first
    assert other.post("/resume").status_code == 302
    assert page(other)[1:3] == (3, ids)
    assert client.get("/task").status_code == 302             # the first browser is let go


def test_double_submission_stores_one_answer(simlex_study):
    client = simlex_study.test_client()
    enter(client)
    past_checkpoints(client)               # the two after the instructions, the noun one
    _, position, ids, _ = page(client)
    first = {"position": position, **{f"r{i}": 5 for i in ids}}
    assert client.post("/step", data=first).status_code == 302
    again = {"position": position, **{f"r{i}": 1 for i in ids}}
    assert client.post("/step", data=again).status_code == 302
    frame = answers(simlex_study)
    rated = frame[frame["kind"] != "checkpoint"]
    assert len(rated) == len(ids) and set(rated["rating"]) == {5}
    assert page(client)[1] == position + 1


@pytest.mark.parametrize("change, message", [
    (lambda d, ids, other: d.update({f"r{ids[0]}": "7"}), "could not be accepted"),
    (lambda d, ids, other: d.update({f"r{ids[0]}": "-1"}), "could not be accepted"),
    (lambda d, ids, other: d.update({f"r{ids[0]}": "3.5"}), "could not be accepted"),
    (lambda d, ids, other: d.update({f"r{ids[0]}": "<b>"}), "could not be accepted"),
    (lambda d, ids, other: d.update({f"r{other}": "3"}), "could not be accepted"),
    (lambda d, ids, other: d.update({"position": "5"}), "could not be accepted"),
    (lambda d, ids, other: d.pop(f"r{ids[-1]}"), "Please answer every pair"),
])
def test_tampered_fields_are_refused_and_nothing_is_stored(simlex_study, change, message):
    client = simlex_study.test_client()
    enter(client)
    past_checkpoints(client)
    _, position, ids, _ = page(client)
    with simlex_study.extensions["lexgold"].sessions() as session:   # an item of tranche 2
        other = session.scalar(select(m.Item.id).join(m.Tranche).where(m.Tranche.number == 2))
    data = {"position": position, **{f"r{i}": 3 for i in ids}}
    change(data, ids, other)
    response = client.post("/step", data=data)
    assert response.status_code == 400 and message in response.get_data(as_text=True)
    assert (answers(simlex_study)["kind"] != "checkpoint").sum() == 0
    assert page(client)[1] == position


def test_bad_entry_parameters_are_refused(simlex_study):
    response = simlex_study.test_client().get("/?PROLIFIC_PID=%3Cscript%3E")
    assert response.status_code == 400
    html = response.get_data(as_text=True)
    assert "PROLIFIC_PID holds no valid ID" in html and "<script>" not in html


def test_balanced_assignment_and_full_study(simlex_study):
    tranches = []
    for k in range(4):
        client = simlex_study.test_client()
        enter(client, f"?PROLIFIC_PID=bal{k}")
        with simlex_study.extensions["lexgold"].sessions() as session:
            rater = session.scalars(select(m.Rater).where(m.Rater.external_id == f"bal{k}")).one()
            slot = session.get(m.Slot, rater.slot_id)
            tranches.append(session.get(m.Tranche, slot.tranche_id).number)
    assert tranches == [1, 2, 1, 2]
    client = simlex_study.test_client()
    enter(client)
    assert "all the participants it needs" in client.get("/task").get_data(as_text=True)


def test_expired_claim_is_given_away_and_old_answers_are_kept(tmp_path, simlex_pairs):
    protocol = protocol_variant(tmp_path, "simlex", tranches=1, raters_per_tranche=1)
    url = database_url(tmp_path / "s.sqlite")
    create_study(protocol, simlex_pairs, url)
    app = make_app(url)
    slow = app.test_client()
    enter(slow)
    past_checkpoints(slow)
    _, position, ids, _ = page(slow)
    slow.post("/step", data={"position": position, **{f"r{i}": 4 for i in ids}})
    late = app.test_client()
    enter(late)
    assert "all the participants" in late.get("/task").get_data(as_text=True)
    with app.extensions["lexgold"].sessions() as session:      # the claim times out
        session.execute(update(m.Slot).values(expires_at=m.utcnow().replace(year=2000)))
        session.commit()
    assert page(late)[1] == 0           # the rater turned away gets the expired place
    response = slow.post("/step", data={"position": position + 1, "r1": 3})
    assert response.status_code == 409 and "expired" in response.get_data(as_text=True)
    kept = answers(app)
    assert (kept["rating"] == 4).sum() == len(ids)              # accepted answers stay


def run_concurrent_claims(url: str, n_raters: int) -> list:
    """``n_raters`` threads enrol and claim at once; returns the slot ids they got."""
    engine = make_engine(url)
    from lexgold.study.db import session_factory
    factory = session_factory(engine)
    config = load_study_config("simlex")
    config.claim_timeout_s = 600
    got, barrier = [], threading.Barrier(n_raters)

    def worker():
        with factory() as session:
            rater, _ = flow.enrol(session, flow.RaterEntry("anonymous", None), True, key="k" * 32)
            barrier.wait()
            slot = flow._claim(session, rater.id, config, m.utcnow())
            session.commit()
            got.append(slot)

    threads = [threading.Thread(target=worker) for _ in range(n_raters)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    engine.dispose()
    return got


def test_concurrent_claims_never_exceed_the_target_sqlite(tmp_path, simlex_pairs):
    protocol = protocol_variant(tmp_path, "simlex", tranches=2, raters_per_tranche=3)
    url = database_url(tmp_path / "c.sqlite")
    create_study(protocol, simlex_pairs, url)
    got = run_concurrent_claims(url, 16)
    taken = [g for g in got if g is not None]
    assert len(got) == 16 and len(taken) == 6 and len(set(taken)) == 6


def test_hyperlex_qualification(tmp_path, usf):
    pairs = usf_pair_file(usf, tmp_path / "h.csv", (("N", "N", 60), ("V", "V", 20)))
    protocol = protocol_variant(tmp_path, "hyperlex", tranches=1, raters_per_tranche=2)
    url = database_url(tmp_path / "h.sqlite")
    create_study(protocol, pairs, url, screenout_code="SCREEN-7", completion_code="OK-1")
    app = make_app(url)
    wrong = app.test_client()
    enter(wrong)
    assert "Qualification question" in wrong.get("/task").get_data(as_text=True)
    assert "attempts left" not in wrong.get("/task").get_data(as_text=True)
    wrong.post("/qualification", data={"choice": 0})      # attempts = 2: asked again, once
    html = wrong.get("/task").get_data(as_text=True)
    assert "Qualification question" in html and "SCREEN-7" not in html
    assert "That answer was not correct. Please read the question again; attempts left: 1." \
        in html
    assert "attempts left" not in wrong.get("/task").get_data(as_text=True)   # said once
    wrong.post("/qualification", data={"choice": 3})      # the second wrong answer ends it
    html = wrong.get("/task").get_data(as_text=True)
    assert "SCREEN-7" in html and "OK-1" not in html
    assert wrong.post("/step", data={"position": 0, "r1": 3}).status_code == 302
    assert "SCREEN-7" in wrong.get("/task").get_data(as_text=True) and answers(app).empty
    right = app.test_client()
    enter(right)
    right.post("/qualification", data={"choice": 1})
    html, position, ids, _ = page(right)
    assert position == 0 and re.search(r"Is [A-Z]+ a type of [A-Z]+\?", html)
    posted, _, last = rate_all(right, rating=lambda i: 6)
    assert "OK-1" in last
    frame = answers(app)
    assert len(frame) == len(posted) + (frame["kind"] == "duplicate").sum() * 0
    assert frame["rater_id"].nunique() == 1 and (frame["kind"] == "duplicate").sum() == 9


def test_qualification_attempts_is_the_number_of_answers_a_rater_has(tmp_path, usf):
    pairs = usf_pair_file(usf, tmp_path / "h.csv", (("N", "N", 60), ("V", "V", 20)))
    protocol = protocol_variant(tmp_path, "hyperlex", tranches=1, raters_per_tranche=2,
                                attempts=1)
    url = database_url(tmp_path / "h.sqlite")
    create_study(protocol, pairs, url, screenout_code="SCREEN-7", completion_code="OK-1")
    app = make_app(url)
    wrong = app.test_client()
    enter(wrong)
    wrong.post("/qualification", data={"choice": 0})
    assert "SCREEN-7" in wrong.get("/task").get_data(as_text=True)
    protocol3 = protocol_variant(tmp_path, "hyperlex", tranches=1, raters_per_tranche=2,
                                 attempts=3)
    url3 = database_url(tmp_path / "h3.sqlite")
    create_study(protocol3, pairs, url3)
    app3 = make_app(url3)
    third = app3.test_client()
    enter(third)
    for left in (2, 1):
        third.post("/qualification", data={"choice": 0})
        assert f"attempts left: {left}." in third.get("/task").get_data(as_text=True)
    third.post("/qualification", data={"choice": 1})
    _html, position, _ids, _ = page(third)
    assert position == 0                      # right on the third attempt: rating


def test_tr9856_binary_answers(tmp_path, usf):
    pairs = tr9856_pair_file(usf, tmp_path / "t.csv")
    url = database_url(tmp_path / "t.sqlite")
    create_study("tr9856", pairs, url)
    app = make_app(url)
    client = app.test_client()
    enter(client)
    html, position, ids, _ = page(client)
    assert "Topic: " in html
    bad = client.post("/step", data={"position": position, **{f"r{i}": 2 for i in ids}})
    assert bad.status_code == 400
    posted, _, _ = rate_all(client, rating=lambda i: i % 2)
    frame = answers(app)
    assert len(frame) == 24 and set(frame["rating"]) == {0, 1}
    assert set(frame["topic"]) == {"Sport should be subsidised", "Nuclear power should be banned"}


# -- admin, export, security --------------------------------------------------------------------

def test_admin_login_and_export_round_trip(tmp_path, simlex_pairs):
    from lexgold.process.agreement import iaa_pairwise
    from lexgold.ratings.long import read_ratings

    protocol = protocol_variant(tmp_path, "simlex", tranches=1, raters_per_tranche=3)
    url = database_url(tmp_path / "admin.sqlite")
    create_study(protocol, simlex_pairs, url)
    app = make_app(url)
    raters = []
    for k in range(3):
        client = app.test_client()
        enter(client)
        raters.append(rate_all(client, rating=lambda i, k=k: (i * (k + 1)) % 7,
                               choice=lambda html, k=k: 0 if k == 0 else 1)[0])
    admin = app.test_client()
    assert admin.get("/admin/ratings.csv").status_code == 302
    assert admin.post("/admin/login", data={"password": "wrong"}).status_code == 401
    assert admin.post("/admin/login", data={"password": "s3cret"}).status_code == 302
    assert "no figures computed yet" in admin.get("/admin/").get_data(as_text=True)
    refresh_figures(app)
    overview = admin.get("/admin/").get_data(as_text=True)
    assert "IAA-1" in overview and "Exclusions preview" in overview
    assert overview.count("<td>done</td>") == 3
    with app.extensions["lexgold"].sessions() as session:        # rater 0 failed checkpoints
        first = session.scalar(select(m.Rater.public_id).order_by(m.Rater.id))
    assert f"<td>{first}</td><td>checkpoint</td>" in overview
    csv = admin.get("/admin/ratings.csv")
    assert csv.status_code == 200 and csv.mimetype == "text/csv"
    path = tmp_path / "ratings.csv"
    path.write_bytes(csv.data)
    frame = read_ratings(path)
    assert list(frame.columns[:8]) == ["rater_id", "tranche", "word1", "word2", "rating", "pos",
                                       "kind", "answered_at"]
    rated = frame[frame["kind"] != "checkpoint"]
    assert len(rated) == sum(len(r) for r in raters)
    assert sorted(rated["rating"].astype(int)) == sorted(v for r in raters for v in r.values())
    assert rated.groupby("rater_id")["tranche"].nunique().eq(1).all()
    iaa1 = iaa_pairwise(rated)
    assert -1 <= iaa1 <= 1
    assert f"<td>{iaa1:.3f}</td>" in overview                 # the admin view shows the same


def test_security_headers_and_csrf(tmp_path, simlex_pairs):
    url = database_url(tmp_path / "csrf.sqlite")
    create_study("simlex", simlex_pairs, url)
    app = make_app(url, WTF_CSRF_ENABLED=True, TESTING=False)
    client = app.test_client()
    response = client.get("/")
    assert "frame-ancestors 'none'" in response.headers["Content-Security-Policy"]
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["Cache-Control"] == "no-store"
    assert client.post("/consent", data=YES).status_code == 400      # no CSRF token
    token = re.search(r'name="csrf_token" value="([^"]+)"', response.get_data(as_text=True))
    assert client.post("/consent", data={**YES, "csrf_token": token.group(1)}).status_code == 302
    cookie = client.get_cookie("session")
    assert cookie.http_only and cookie.same_site == "Lax"


def test_admin_login_locks_after_repeated_failures(simlex_study):
    client = simlex_study.test_client()
    codes = [client.post("/admin/login", data={"password": f"guess{k}"}).status_code
             for k in range(11)]
    assert codes == [401] * 10 + [429]
    assert client.post("/admin/login", data={"password": "s3cret"}).status_code == 429
    # the lock-out is per client address: a stranger's guesses do not lock the admin out
    elsewhere = simlex_study.test_client()
    response = elsewhere.post("/admin/login", data={"password": "s3cret"},
                              environ_base={"REMOTE_ADDR": "192.0.2.7"})
    assert response.status_code == 302


def test_admin_is_disabled_without_a_password(tmp_path, simlex_pairs):
    url = database_url(tmp_path / "a.sqlite")
    create_study("simlex", simlex_pairs, url)
    app = make_app(url, ADMIN_PASSWORD_HASH=None)
    assert app.test_client().get("/admin/login").status_code == 403


def test_second_study_in_one_database_is_refused(tmp_path, simlex_pairs):
    url = database_url(tmp_path / "d.sqlite")
    create_study("simlex", simlex_pairs, url)
    with pytest.raises(ValueError, match="already holds the study"):
        create_study("simlex", simlex_pairs, url)


# -- schema through migrations --------------------------------------------------------------------

def test_migrations_match_models_and_downgrade(tmp_path):
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    engine = make_engine(database_url(tmp_path / "mig.sqlite"))
    upgrade(engine)
    with engine.connect() as connection:
        assert compare_metadata(MigrationContext.configure(connection), m.Base.metadata) == []
        mode = connection.exec_driver_sql("PRAGMA journal_mode").scalar()
    assert mode == "wal"
    downgrade(engine, "base")
    with engine.connect() as connection:
        names = connection.exec_driver_sql(
            "SELECT name FROM sqlite_master WHERE type='table'").scalars().all()
    assert set(names) <= {"alembic_version"}


def test_is_current_reads_the_head_without_alembic_as_alembic_does(tmp_path):
    """`study export` checks the schema without importing Alembic (issue 22 item 4): the head
    read from the migration files is Alembic's, and a database is current only at it."""
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    from lexgold.study.db import MIGRATIONS, head_revision, is_current

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    scripts = ScriptDirectory.from_config(config)
    assert head_revision() == scripts.get_current_head()
    engine = make_engine(database_url(tmp_path / "current.sqlite"))
    assert not is_current(engine)                    # empty: no alembic_version table
    upgrade(engine)
    assert is_current(engine)
    downgrade(engine, scripts.get_revision(head_revision()).down_revision)
    assert not is_current(engine)
    engine.dispose()


# -- PostgreSQL ---------------------------------------------------------------------------------

@pytest.fixture
def pg_url(postgres_url):
    """A private schema on the shared test server, dropped afterwards."""
    with postgres_schema(postgres_url, "annotate") as (_, url):
        yield url


@pytest.mark.postgres
def test_postgres_flow_and_concurrent_claims(pg_url, simlex_pairs, tmp_path):
    protocol = protocol_variant(tmp_path, "simlex", tranches=2, raters_per_tranche=3)
    create_study(protocol, simlex_pairs, pg_url, completion_code="PG-OK")
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext
    engine = make_engine(pg_url)
    with engine.connect() as connection:                         # migrations == models on PG
        assert compare_metadata(MigrationContext.configure(connection), m.Base.metadata) == []
    engine.dispose()
    got = run_concurrent_claims(pg_url, 12)
    taken = [g for g in got if g is not None]
    assert len(taken) == 6 and len(set(taken)) == 6
    engine = make_engine(pg_url)
    with engine.begin() as connection:                           # free the slots again
        connection.execute(update(m.Slot).values(status="free", rater_id=None))
    engine.dispose()
    app = make_app(pg_url)
    client = app.test_client()
    enter(client)
    _, position, ids, _ = page(client)
    client.post("/step", data={"position": position, "choice": 1})
    _, position, ids, _ = page(client)
    data = {"position": position, **{f"r{i}": 6 for i in ids}}
    client.post("/step", data=data)
    client.post("/step", data=data)                              # double submission
    with app.extensions["lexgold"].sessions() as session:
        assert session.scalar(select(func.count()).select_from(m.Answer)) == len(ids)
    posted, _, last = rate_all(client)
    assert "PG-OK" in last
    app.extensions["lexgold_engine"].dispose()


def test_right_to_left_protocol_and_mturk_preview(tmp_path, simlex_pairs):
    protocol = protocol_variant(tmp_path, "simlex", direction='"rtl"',
                                question='"עד כמה דומות המילים {word1} ו-{word2}?"')
    url = database_url(tmp_path / "rtl.sqlite")
    create_study(protocol, simlex_pairs, url)
    app = make_app(url)
    preview = app.test_client().get("/?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE&hitId=H")
    html = preview.get_data(as_text=True)
    assert '<html lang="en" dir="rtl">' in html
    assert re.search(r'<button type="submit"\s+disabled\b', html)      # preview: cannot start
    client = app.test_client()
    enter(client)
    past_checkpoints(client)
    assert "עד כמה דומות המילים" in page(client)[0]
    with app.extensions["lexgold"].sessions() as session:
        assert session.scalar(select(func.count()).select_from(m.Rater)) == 1


def test_completion_url_and_revision_0002_keep_the_study(tmp_path, simlex_pairs):
    protocol = protocol_variant(tmp_path, "simlex", tranches=1, raters_per_tranche=1)
    url = database_url(tmp_path / "url.sqlite")
    with pytest.raises(ValueError, match="completion-url"):
        create_study(protocol, simlex_pairs, url, completion_url="javascript:alert(1)")
    create_study(protocol, simlex_pairs, url, completion_code="CC7",
                 completion_url="https://app.prolific.com/submissions/complete?cc={code}")
    client = make_app(url).test_client()
    enter(client)
    last = rate_all(client)[2]
    assert 'href="https://app.prolific.com/submissions/complete?cc=CC7"' in last
    engine = make_engine(url)
    downgrade(engine, "0001")                      # back to the first schema: study kept
    with engine.connect() as connection:
        assert connection.exec_driver_sql("SELECT completion_code FROM study").scalar() == "CC7"
        assert connection.exec_driver_sql("SELECT count(*) FROM answer").scalar() > 100
    upgrade(engine)
    with engine.connect() as connection:
        assert connection.exec_driver_sql("SELECT completion_url FROM study").scalar() == ""
    engine.dispose()
