"""Study figures computed off the raters' requests (issue 22, item 1; lexgold.live.figures):
the same figures as the admin view computed in its request before, stored with a version key,
shown by the admin view without recomputing, refreshed by a background process."""

import json
import os
import re
import time
import warnings

import pandas as pd
import pytest
from click.testing import CliRunner
from sqlalchemy import func, select
from test_annotate_app import enter, make_app, protocol_variant, rate_all, usf_pair_file

from lexgold.live import figures, refresher
from lexgold.study import models as m
from lexgold.study.db import (
    database_url,
    downgrade,
    make_engine,
    postgres_schema,
    upgrade,
)
from lexgold.live.tally import exclusion_forecast, protocol_from_text, recruitment
from lexgold.study.store import create_study
from lexgold.study.export import export_ratings
from lexgold.cli import cli
from lexgold.process.agreement import iaa_against_mean, iaa_pairwise
from lexgold.process.exclusions import excluded_raters, exclusion_table
from lexgold.process.quality import quality_flags


@pytest.fixture
def study(tmp_path, usf):
    """One HyperLex tranche of 4 slots, at least 3 accepted raters wanted, no time limit; two
    honest raters and one on one value throughout (excluded) completed it."""
    return _study(tmp_path, usf, database_url(tmp_path / "h.sqlite"))


def _study(tmp_path, usf, url):
    pairs = usf_pair_file(usf, tmp_path / "h.csv", (("N", "N", 60), ("V", "V", 20)))
    protocol = protocol_variant(tmp_path, "hyperlex", tranches=1, raters_per_tranche=4,
                                min_accepted_raters=3)
    protocol.write_text(protocol.read_text(encoding="utf-8").replace(
        "[study]\n", "[study]\nmin_seconds_per_pair = 0\n", 1), encoding="utf-8")
    create_study(protocol, pairs, url, completion_code="OK-1")
    app = make_app(url)
    with app.extensions["lexgold"].reads() as session:
        pair_of = dict(session.execute(select(m.Item.id, m.Item.pair_id)).all())
    for k, rating in enumerate((lambda i: pair_of[i] * 3 % 7, lambda i: 6,
                                lambda i: pair_of[i] * 3 % 7)):
        _complete(app, k, rating)
    return app, url, pair_of


def _complete(app, k, rating):
    client = app.test_client()
    enter(client, f"?PROLIFIC_PID=pid{k}&STUDY_ID=s&SESSION_ID=x{k}")
    client.post("/qualification", data={"choice": 1})
    rate_all(client, rating=rating)


def _sessions(app):
    state = app.extensions["lexgold"]
    return state.reads(), state.sessions()


def _refresh(app, **options):
    reads, writes = _sessions(app)
    with reads, writes:
        return refresher.refresh(reads, writes, **options)


def _stored(app) -> figures.Stored:
    with app.extensions["lexgold"].reads() as session:
        return figures.load(session)


def _partial_rater(app, pages: int):
    """A rater who answers ``pages`` pages and stops."""
    client = app.test_client()
    enter(client, "?PROLIFIC_PID=half&STUDY_ID=s&SESSION_ID=h")
    client.post("/qualification", data={"choice": 1})
    for _ in range(pages):
        html = client.get("/task").get_data(as_text=True)
        position = re.search(r'name="position" value="(\d+)"', html).group(1)
        ids = re.findall(r'name="r(\d+)"', html)
        client.post("/step", data={"position": position, "choice": 1,
                                   **{f"r{i}": 3 for i in ids}})


def test_figures_equal_what_the_admin_view_and_recruitment_computed(study):
    """Reference: the code of the admin view and recruitment before the figures engine (two
    exports, per-rater Series.mode), on completed and half-done raters."""
    app, _, _ = study
    _partial_rater(app, 3)
    assert _refresh(app)["computed"]
    got = _stored(app).figures
    with app.extensions["lexgold"].reads() as session:
        got.update(figures.load(session, details=True).figures)     # the full lists
    state = app.extensions["lexgold"]
    with state.reads() as session:
        ratings = export_ratings(session)
        complete = export_ratings(session, complete_only=True)
        old = recruitment(session, state.config)
        ids = {r[0]: {"platform": r[1], "platform_id": r[2] or ""} for r in session.execute(
            select(m.Rater.public_id, m.Rater.platform, m.Rater.external_id)).all()}
    assert got["n_answers"] == len(ratings) and len(complete) < len(ratings)
    # recruitment: accepted per tranche and the pairs below the minimum
    tranches = pd.DataFrame(got["tranches"])
    pd.testing.assert_frame_equal(tranches[old["tranches"].columns], old["tranches"],
                                  check_dtype=False)
    assert tranches.loc[0, ["completed", "excluded", "accepted", "missing"]].tolist() == \
        [3, 1, 2, 1]
    assert got["pairs_below"] == old["pairs_below"].to_dict("records") and got["note"] == ""
    assert got["full"] == [] and len(got["pairs_below"]) == 80
    # agreement per tranche, every answer (the old _agreement)
    rated = ratings[ratings["kind"] != "checkpoint"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for row in got["tranches"]:
            frame = rated[rated["tranche"] == row["tranche"]]
            for name, statistic in (("iaa1", iaa_pairwise), ("iaa2", iaa_against_mean)):
                value = statistic(frame)
                assert (row[name] is None and pd.isna(value)) or \
                    row[name] == pytest.approx(value, abs=1e-12)
    # quality flags of every rater with its tranche (old: groupby.agg(lambda t: t.mode()))
    flags = quality_flags(ratings)
    flags["tranche"] = flags["rater_id"].map(
        ratings.groupby("rater_id")["tranche"].agg(lambda t: t.mode().iloc[0]))
    old_quality = [{**row, **ids[row["rater_id"]]} for row in flags.sort_values(
        ["tranche", "rater_id"], kind="stable").to_dict("records")]
    assert len(got["quality"]) == 4 and len(ids) == 4
    for new, before in zip(got["quality"], old_quality, strict=True):
        assert new.keys() == before.keys()
        for key, value in before.items():
            assert new[key] == value or (new[key] is None and pd.isna(value)), key
    # the exclusions preview: one table, over the raters who completed their tranche
    protocol = protocol_from_text(state.protocol_text)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = exclusion_table(complete, protocol)
    assert [(r["rater_id"], r["rule"]) for r in got["exclusions"]] == \
        list(zip(table["rater_id"], table["rule"]))
    assert {r["platform"] for r in got["exclusions"]} == {"prolific"}
    assert set(table["rater_id"][table["excluded"]]) == \
        set(excluded_raters(exclusion_forecast(complete, protocol)[0]))


def test_stored_figures_are_what_the_admin_page_shows(study):
    app, _, _ = study
    admin = app.test_client()
    admin.post("/admin/login", data={"password": "s3cret"})
    html = admin.get("/admin/").get_data(as_text=True)
    assert "no figures computed yet" in html and "No figures yet." in html
    _refresh(app)
    with app.extensions["lexgold"].sessions() as session, session.begin():   # mark them
        row = session.get(m.StudyFigures, figures.ROW_ID)
        stored = json.loads(row.figures)
        stored["tranches"][0]["iaa1"] = 0.123456
        row.figures = json.dumps(stored)
    _partial_rater(app, 2)
    html = admin.get("/admin/").get_data(as_text=True)
    assert "<td>0.123</td>" in html                    # shown as stored: not recomputed
    with app.extensions["lexgold"].reads() as session:
        n_new = session.scalar(select(func.count()).select_from(m.Answer)) + \
            session.scalar(select(func.count()).select_from(m.CheckpointAnswer)) - \
            stored["n_answers"]
    assert n_new > 0
    assert re.search(rf"figures as of \S+\+00:00, {n_new} answers since", html)
    assert _refresh(app)["computed"]                   # the new answers changed the key
    assert "<td>0.123</td>" not in admin.get("/admin/").get_data(as_text=True)


def test_long_tables_are_capped_flagged_raters_first(study, monkeypatch):
    app, _, _ = study
    from lexgold.annotate import views_admin
    monkeypatch.setattr(figures, "SHOWN", 1)
    monkeypatch.setattr(views_admin, "RATERS_PER_PAGE", 2)
    _refresh(app)
    with app.extensions["lexgold"].reads() as session:      # the page's row stays small
        shown = figures.load(session).figures
    assert len(shown["quality"]) == 1 and shown["n_quality"] == 3
    admin = app.test_client()
    admin.post("/admin/login", data={"password": "s3cret"})
    html = admin.get("/admin/").get_data(as_text=True)
    quality = html.split('<table id="quality">', 1)[1].split("</table>", 1)[0]
    assert quality.count("<tr><td>") == 1 and 'class="flag">1.00</td>' in quality  # one value
    assert "1 of 3 shown" in html and 'href="/admin/quality.csv"' in html
    exclusions = html.split('<table id="exclusions">', 1)[1].split("</table>", 1)[0]
    assert exclusions.count("<tr><td>") == 1
    raters = html.split('<table id="raters">', 1)[1].split("</table>", 1)[0]
    assert raters.count("<tr><td>") == 2 and 'href="/admin/?raters=1">older raters' in html
    older = admin.get("/admin/?raters=1").get_data(as_text=True)
    assert older.split('<table id="raters">', 1)[1].split("</table>")[0].count("<tr><td>") == 1
    csv = admin.get("/admin/quality.csv")
    frame = pd.read_csv(pd.io.common.StringIO(csv.get_data(as_text=True)))
    assert csv.mimetype == "text/csv" and len(frame) == 3
    assert list(frame.columns) == views_admin.QUALITY_COLUMNS
    assert app.test_client().get("/admin/quality.csv").status_code == 302   # admin only


def test_refresher_loop_and_command_top_up_and_store(study, tmp_path):
    app, url, _ = study
    refresher.watch(url, every_s=0, rounds=1)            # one round of `lexgold serve`'s loop
    assert _stored(app).figures["tranches"][0]["slots"] == 4    # a slot open: no top-up
    _complete(app, 3, lambda i: 5)                     # the last slot, on one value: excluded
    refresher.watch(url, every_s=0, rounds=1)
    stored = _stored(app)
    assert stored.figures["tranches"][0]["slots"] == 5       # 2 accepted: one slot more
    out = CliRunner().invoke(cli, ["study", "figures", str(tmp_path / "h.sqlite")])
    assert out.exit_code == 0 and json.loads(out.output) == \
        {"computed": False, "seconds": 0.0, "added": {}}
    out = CliRunner().invoke(cli, ["study", "figures", str(tmp_path / "h.sqlite"), "--force"])
    assert json.loads(out.output)["computed"] is True and json.loads(out.output)["added"] == {}
    with app.extensions["lexgold"].reads() as session:
        assert session.scalar(select(func.count()).select_from(m.Slot)) == 5


def test_serve_starts_a_refresher_process_that_stops_with_it(study):
    app, url, _ = study
    _complete(app, 3, lambda i: 5)
    process = refresher.start_refresher(url, every_s=0.2)
    try:
        deadline = time.monotonic() + 60
        while _stored(app) is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _stored(app).figures["tranches"][0]["slots"] == 5
    finally:
        process.terminate()
        process.wait(10)


def test_revision_0011_up_and_down_keeps_the_study(study):
    app, url, _ = study
    _refresh(app)
    app.extensions["lexgold_engine"].dispose()
    engine = make_engine(url)
    downgrade(engine, "0010")
    with engine.connect() as connection:
        names = connection.exec_driver_sql(
            "SELECT name FROM sqlite_master WHERE type='table'").scalars().all()
        assert "study_figures" not in names
        assert connection.exec_driver_sql("SELECT count(*) FROM answer").scalar() > 100
    upgrade(engine)
    with engine.connect() as connection:
        assert connection.exec_driver_sql("SELECT count(*) FROM study_figures").scalar() == 0
    engine.dispose()


@pytest.mark.postgres
def test_refresh_top_up_and_page_on_postgres(tmp_path, usf, postgres_url):
    with postgres_schema(postgres_url, "figures") as (_, url):
        app, _, _ = _study(tmp_path, usf, url)
        _complete(app, 3, lambda i: 5)                 # the last slot: excluded
        assert _refresh(app)["added"] == {1: 1}
        assert _refresh(app)["computed"] is False
        stored = _stored(app)
        assert stored.figures["tranches"][0]["accepted"] == 2
        assert stored.figures["tranches"][0]["slots"] == 5
        admin = app.test_client()
        admin.post("/admin/login", data={"password": "s3cret"})
        html = admin.get("/admin/").get_data(as_text=True)
        assert re.search(r"figures as of \S+\+00:00, 0 answers since", html)
        assert admin.get("/admin/quality.csv").get_data(as_text=True).count("\n") == 5
        app.extensions["lexgold_engine"].dispose()


def test_refresher_computes_at_low_priority_and_writes_at_its_own(study, monkeypatch):
    """The write lock is never held at the lowered priority (issue 22: raters' writes waited
    over 5 s while a niced refresher stored its figures on a busy machine)."""
    app, url, _ = study
    seen, compute, save = {}, figures.compute, figures.save

    def computing(*args, **kwargs):
        seen["compute"] = os.getpriority(os.PRIO_PROCESS, 0)     # this thread's
        return compute(*args, **kwargs)

    def saving(*args, **kwargs):
        seen["save"] = os.getpriority(os.PRIO_PROCESS, 0)
        return save(*args, **kwargs)

    monkeypatch.setattr(refresher, "compute", computing)
    monkeypatch.setattr(refresher, "save", saving)
    own = os.getpriority(os.PRIO_PROCESS, 0)
    refresher.watch(url, every_s=0, rounds=1, nice=3)
    assert seen == {"compute": min(own + 3, 19), "save": own}
    assert os.getpriority(os.PRIO_PROCESS, 0) == own
    assert _stored(app) is not None
