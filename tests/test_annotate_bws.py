"""Best-Worst Scaling studies on the site (issue 27): create, serve, validate, store, export,
process, rehearse; through Flask's test client on SQLite."""

import re

import numpy as np
import pandas as pd
import pytest
from sqlalchemy import func, select

from lexgold.study import models as m
from lexgold.study.db import database_url
from lexgold.study.store import create_study
from lexgold.study.export import export_ratings
from tests.test_annotate_app import enter, make_app, protocol_variant, usf_pair_file

BWS_COUNTS = (("N", "N", 16), ("V", "V", 8), ("A", "AJ", 8))


@pytest.fixture(scope="module")
def bws_pairs(usf, tmp_path_factory):
    return usf_pair_file(usf, tmp_path_factory.mktemp("bws") / "pairs.csv", counts=BWS_COUNTS)


def bws_protocol(directory, **values):
    # the test client answers at once: no rushing rule (its seconds are the site's clock's)
    values = {"raters_per_tranche": 2, "tuples_per_tranche": 40,
              "min_seconds_per_tuple": "0.0", **values}
    return protocol_variant(directory, "simlex999_bws", **values)


@pytest.fixture
def bws_study(tmp_path, bws_pairs):
    url = database_url(tmp_path / "bws.sqlite")
    report = create_study(bws_protocol(tmp_path), bws_pairs, url, seed=4,
                          completion_code="BWS-DONE", screenout_code="OUT-1")
    app = make_app(url)
    app.report = report
    return app


def bws_page(client):
    """(html, position or None, tuple keys, {key: number of pairs})."""
    html = client.get("/task").get_data(as_text=True)
    position = re.search(r'name="position" value="(\d+)"', html)
    keys = list(dict.fromkeys(re.findall(r'data-tuple="(\w+)"', html)))
    sizes = {k: len(re.findall(rf'name="b{k}" value="(\d+)"', html)) for k in keys}
    return html, int(position.group(1)) if position else None, keys, sizes


def answer_all(client, pick=lambda key, n: (0, n - 1)):
    """Answer every page; returns {tuple key: (best, worst)} of the tuple pages and the last
    page's HTML."""
    posted = []
    while True:
        html, position, keys, sizes = bws_page(client)
        if position is None:
            return posted, html
        data = {"position": position}
        for key in keys:
            values = re.findall(rf'name="b{key}" value="(\d+)"', html)
            if key == "c":                       # the protocol's check tuples, right
                best, worst = (0, 3) if "automobile" in html else (1, 2)
                best, worst = values.index(str(best)), values.index(str(worst))
            else:
                best, worst = pick(key, sizes[key])
            data[f"b{key}"], data[f"w{key}"] = values[best], values[worst]
            data[f"t{key}"] = "1500"
            posted.append((key, int(values[best]), int(values[worst])))
        assert client.post("/step", data=data).status_code == 302, html


def test_create_lays_out_tuples_tranches_and_checks(bws_study):
    report = bws_study.report
    assert report["balance"]["repeated_in_tuple"] == 0
    assert report["tranches"] == 2 and report["slots"] == 4
    with bws_study.extensions["lexgold"].sessions() as session:
        steps = session.execute(select(m.Step.tranche_id, m.Step.kind)).all()
        items = session.execute(select(m.Item.tuple_id, m.Item.position, m.Item.step_id)).all()
    kinds = pd.DataFrame(steps, columns=["tranche", "kind"]).value_counts().to_dict()
    assert {k for _, k in kinds} == {"tuples", "checkpoint"}
    assert all(kinds[(t, "checkpoint")] == 2 for t, _ in kinds)     # both check tuples
    frame = pd.DataFrame(items, columns=["tuple_id", "position", "step"])
    assert frame["tuple_id"].notna().all()
    per = frame.groupby(["step", "tuple_id"]).size()
    assert set(per) == {4}                                 # four pairs per tuple
    consistency = set(report["consistency_tuples"])
    shown = frame.groupby("tuple_id")["step"].nunique()
    assert all(shown[t] == 2 for t in consistency)         # in both tranches
    # every tuple of the design is shown: 2N per part of speech
    assert frame["tuple_id"].nunique() == 2 * (16 + 8 + 8)


def test_page_shows_questions_radio_groups_and_rtl(bws_study, tmp_path, bws_pairs):
    client = bws_study.test_client()
    enter(client)
    html, position, keys, sizes = bws_page(client)
    assert position == 0 and keys
    assert html.count("Which pair is most similar?") == len(keys)
    assert html.count("Which pair is least similar?") == len(keys)
    assert set(sizes.values()) <= {4}
    assert 'dir="ltr"' in html
    url = database_url(tmp_path / "rtl.sqlite")
    create_study(bws_protocol(tmp_path, direction='"rtl"'), bws_pairs, url, seed=1)
    rtl = make_app(url).test_client()
    enter(rtl)
    assert 'dir="rtl"' in bws_page(rtl)[0]


def test_full_tranche_stored_exported_and_completed(bws_study):
    client = bws_study.test_client()
    enter(client, "?PROLIFIC_PID=b1&STUDY_ID=s&SESSION_ID=x")
    posted, last = answer_all(client)
    assert "BWS-DONE" in last
    with bws_study.extensions["lexgold"].sessions() as session:
        frame = export_ratings(session)
        stored = session.scalar(select(func.count()).select_from(m.Answer))
    tuples = [p for p in posted if p[0] != "c"]
    assert stored == 4 * len(tuples)                        # one row per pair of a tuple
    from lexgold.process.bws import check_bws
    checked = check_bws(frame)                              # process' reader accepts it
    notes = checked.groupby(["rater_id", "tuple_id"])
    assert notes.ngroups == len(posted)
    for key, best, worst in tuples:
        rows = frame[frame["tuple_id"] == key].set_index("position")["rating"]
        assert rows[best] == 1 and rows[worst] == -1 and (rows == 0).sum() == 2
    checks = frame[frame["kind"] == "checkpoint"]
    assert set(checks["tuple_id"]) == {"check-1", "check-2"}
    assert frame["response_ms"].dropna().eq(1500).all()


@pytest.mark.parametrize("case", ["same", "missing", "foreign", "other_rater"])
def test_bad_answers_refused_and_nothing_stored(bws_study, case):
    client = bws_study.test_client()
    enter(client)
    html, position, keys, _ = bws_page(client)
    while "checkpoint" in html and keys == ["c"]:          # get to a page of tuples
        data = {"position": position, "bc": 0, "wc": 1}
        client.post("/step", data=data)
        html, position, keys, _ = bws_page(client)
    data = {"position": position}
    for key in keys:
        data[f"b{key}"], data[f"w{key}"] = 0, 1
    if case == "same":
        data[f"w{keys[0]}"] = data[f"b{keys[0]}"]
    elif case == "missing":
        del data[f"w{keys[-1]}"]
    elif case == "foreign":
        data["b999999"], data["w999999"] = 0, 1
    else:                                       # a tuple only the other tranche's raters see
        with bws_study.extensions["lexgold"].sessions() as session:
            tranche = session.scalar(select(m.Slot.tranche_id).where(m.Slot.status == "active"))
            mine = select(m.Item.tuple_id).where(m.Item.tranche_id == tranche)
            other = session.scalars(select(m.Item.tuple_id).where(
                m.Item.tuple_id.not_in(mine)).limit(1)).one()
        data[f"b{other}"], data[f"w{other}"] = 0, 1
    response = client.post("/step", data=data)
    assert response.status_code == 400
    text = response.get_data(as_text=True)
    if case == "same":
        assert "two different pairs" in text
    with bws_study.extensions["lexgold"].sessions() as session:
        assert session.scalar(select(func.count()).select_from(m.Answer)) == 0
    assert bws_page(client)[1] == position                   # the same page again


def test_resume_and_repeat_store_once(bws_study):
    client = bws_study.test_client()
    enter(client, "?PROLIFIC_PID=r1&STUDY_ID=s&SESSION_ID=x")
    _, position, keys, _ = bws_page(client)
    data = {"position": position, **{f"b{k}": 0 for k in keys}, **{f"w{k}": 1 for k in keys}}
    assert client.post("/step", data=data).status_code == 302
    client.post("/step", data=data)                           # double click: a repeat
    other = bws_study.test_client()
    other.get("/?PROLIFIC_PID=r1&STUDY_ID=s&SESSION_ID=x")
    assert other.post("/resume").status_code == 302
    assert bws_page(other)[1] == position + 1
    with bws_study.extensions["lexgold"].sessions() as session:
        counted = session.scalar(select(func.count()).select_from(m.Answer)) + session.scalar(
            select(func.count()).select_from(m.CheckpointAnswer))
    assert counted == (1 if keys == ["c"] else 4 * len(keys))


def test_admin_view_and_process_of_the_study(bws_study, tmp_path):
    from tests.test_annotate_app import refresh_figures

    for n in range(4):                                        # every place of both tranches
        client = bws_study.test_client()
        enter(client, f"?PROLIFIC_PID=a{n}&STUDY_ID=s&SESSION_ID=x")
        rng = np.random.default_rng(n)
        answer_all(client, pick=lambda key, size, rng=rng: tuple(rng.choice(size, 2,
                                                                             replace=False)))
    from lexgold.live import figures as figures_module
    assert refresh_figures(bws_study)["computed"]
    state = bws_study.extensions["lexgold"]
    with state.reads() as session:
        figures = figures_module.load(session).figures
    assert [t["completed"] for t in figures["tranches"]] == [2, 2]
    with state.reads() as session:               # answered tuples, check tuples included
        tuples = session.scalar(select(func.count()).select_from(m.Answer)) // 4 + \
            session.scalar(select(func.count()).select_from(m.CheckpointAnswer))
    assert figures["n_answers"] == tuples
    admin = bws_study.test_client()
    assert admin.post("/admin/login", data={"password": "s3cret"}).status_code == 302
    html = admin.get("/admin/").get_data(as_text=True)
    assert html.count("<td>done</td>") == 4
    csv = admin.get("/admin/ratings.csv")
    assert csv.status_code == 200
    assert csv.get_data(as_text=True).startswith("rater_id,tranche,tuple_id,position,")
    url = bws_study.config["DATABASE_URL"]
    path = url.removeprefix("sqlite:///")
    from lexgold.process.pipeline import run
    report = run(path, None, tmp_path / "release", allow_incomplete=True, bootstrap=5)
    gold = pd.read_csv(tmp_path / "release" / "gold.csv")
    assert len(gold) == 32 and report.task == "bws"     # every pair of the study scored
    assert report.counts.answers > 0


def test_rehearse_answers_tuples_and_process_releases(tmp_path, bws_pairs):
    """`study rehearse` answers the tuples with the BWS simulator; honest raters' counting
    scores follow the true scores; `process` of the study releases every pair."""
    from scipy import stats

    from lexgold.annotate.rehearse import rehearse
    from lexgold.process.pipeline import run
    from lexgold.crowd.simulate import Crowd

    url = database_url(tmp_path / "rehearse.sqlite")
    create_study(bws_protocol(tmp_path, raters_per_tranche=4), bws_pairs, url, seed=2)
    result = rehearse(url, rng=np.random.default_rng(7),
                      crowd=Crowd(model="invented", spammers=0.0, quitters=0.0, noise_sd=0.5))
    assert result["finished"] and result["completed"] == 8
    path = tmp_path / "rehearse.sqlite"
    report = run(path, None, tmp_path / "release", bootstrap=5, allow_incomplete=True)
    scores = pd.read_csv(tmp_path / "release" / "scores.csv")
    truth = result["truth"]
    merged = scores.merge(truth, on=["word1", "word2"])
    assert len(merged) == 32
    rho = stats.spearmanr(merged["counting"], merged["truth"]).statistic
    assert rho > 0.6
    assert report.counts.raters_accepted == 8 and not report.warnings
    # the rehearsal's raters are simulated, and the release says so (issue 33)
    assert report.simulated["share"] == 1.0 and report.simulated["raters"] == 8
    card = (tmp_path / "release" / "README.md").read_text()
    assert card.split("---\n", 2)[2].lstrip("\n").startswith(
        "> **Simulated Best-Worst answers, not people's.**")


def test_cli_create_prints_the_tuple_design_and_export_writes_the_long_format(tmp_path,
                                                                              bws_pairs):
    from click.testing import CliRunner

    from lexgold.cli import cli

    db = tmp_path / "cli.sqlite"
    result = CliRunner().invoke(cli, ["study", "create", "--protocol",
                                       str(bws_protocol(tmp_path)), "--pairs", str(bws_pairs),
                                       "--db", str(db), "--completion-code", "C-1"])
    assert result.exit_code == 0, result.output
    assert "32 pairs in 64 4-tuples (8-8 tuples a pair), 2 tranches" in result.output
    app = make_app(database_url(db))
    client = app.test_client()
    enter(client)
    answer_all(client)
    out = tmp_path / "answers.csv"
    result = CliRunner().invoke(cli, ["study", "export", str(db), "--out", str(out)])
    assert result.exit_code == 0, result.output
    frame = pd.read_csv(out)
    assert list(frame.columns[:10]) == ["rater_id", "tranche", "tuple_id", "position", "word1",
                                        "word2", "pos", "rating", "kind", "answered_at"]
    assert (frame.groupby(["rater_id", "tuple_id"])["rating"].sum() == 0).all()


def test_consent_counts_tuples_and_admin_preview_shows_tuple_pages(bws_study):
    with bws_study.extensions["lexgold"].sessions() as session:
        tuples = session.execute(select(m.Item.tranche_id, func.count(func.distinct(
            m.Item.tuple_id))).group_by(m.Item.tranche_id)).all()
        checks = session.scalar(select(func.count()).select_from(m.Step).where(
            m.Step.kind == "checkpoint", m.Step.tranche_id == tuples[0][0]))
    counts = [n + checks for _, n in tuples]           # seconds_per_item = [8, 15] a tuple
    low, high = min(counts) * 8 // 60, -(-max(counts) * 15 // 60)
    consent = bws_study.test_client().get("/").get_data(as_text=True)
    assert f"about {low}\u2013{high} minutes" in consent
    admin = bws_study.test_client()
    admin.post("/admin/login", data={"password": "s3cret"})
    for position in range(3):
        html = admin.get(f"/admin/preview/1/{position}").get_data(as_text=True)
        assert "Preview as rater" in html and 'class="tuple' in html
        assert "Which pair is least similar?" in html


@pytest.mark.postgres
def test_postgres_bws_tranche_stored_and_exported(postgres_url, tmp_path, bws_pairs):
    """The same on PostgreSQL: the 0013_bws columns match the models; a tranche is stored,
    a same-pair answer refused, the export is process' format."""
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    from lexgold.study.db import make_engine, postgres_schema
    from lexgold.process.bws import check_bws

    with postgres_schema(postgres_url, "bws") as (_, url):
        create_study(bws_protocol(tmp_path), bws_pairs, url, seed=4, completion_code="PG-BWS")
        engine = make_engine(url)
        with engine.connect() as connection:
            assert compare_metadata(MigrationContext.configure(connection),
                                    m.Base.metadata) == []
        engine.dispose()
        app = make_app(url)
        try:
            client = app.test_client()
            enter(client)
            _, position, keys, _ = bws_page(client)
            same = {"position": position, **{f"b{k}": 1 for k in keys},
                    **{f"w{k}": 1 for k in keys}}
            assert client.post("/step", data=same).status_code == 400
            posted, last = answer_all(client)
            assert "PG-BWS" in last
            with app.extensions["lexgold"].sessions() as session:
                frame = export_ratings(session)
            assert check_bws(frame).groupby(["rater_id", "tuple_id"]).ngroups == len(posted)
        finally:
            app.extensions["lexgold_engine"].dispose()
