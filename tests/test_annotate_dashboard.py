"""The admin dashboard (issue 37): chart data checked against hand-computed cases and the
reference functions, the charts stored with the figures and printed by the admin page, and the
figures of every study type (SimLex, HyperLex, TR9856, Best-Worst) refreshed after new
answers (the BWS figures compared answered tuples with answer rows and never refreshed)."""

import re

import numpy as np
import pandas as pd
import pytest
from sqlalchemy import func, select, update

from lexgold.live import dashboard as d
from lexgold.live import dashboard_svg as svg
from lexgold.live import figures
from lexgold.process.agreement import iaa_pairwise, rater_against_mean
from lexgold.process.reliability import krippendorff_alpha
from lexgold.study import models as m
from lexgold.study.db import database_url
from lexgold.study.store import create_study
from test_annotate_app import (enter, make_app, page, protocol_variant, rate_all,
                               refresh_figures, tr9856_pair_file, usf_pair_file)
from test_annotate_bws import answer_all, bws_page, bws_protocol


# -- chart data ---------------------------------------------------------------------------------

def test_completions_are_cumulative_in_time_order_and_thinned_keeping_the_last():
    times = pd.Series(pd.to_datetime(["2026-01-02 10:00", "2026-01-01 09:00", None,
                                      "2026-01-01 12:00"]), index=["c", "a", "x", "b"])
    frame = d.completions(times)
    assert frame["completed"].tolist() == [1, 2, 3]
    assert [t.hour for t in frame["at"]] == [9, 12, 10]
    many = pd.Series(pd.date_range("2026-01-01", periods=1000, freq="min"))
    thin = d.completions(many, points=11)
    assert len(thin) == 11 and thin["completed"].iloc[-1] == 1000
    assert thin["completed"].iloc[0] == 1 and thin["completed"].is_monotonic_increasing
    days = d.per_day(times)
    assert days.to_dict("records") == [{"day": "2026-01-01", "completed": 2, "total": 2},
                                       {"day": "2026-01-02", "completed": 1, "total": 3}]


def test_rating_counts_per_tranche_and_bin_by_hand():
    ratings = pd.DataFrame({"tranche": [1, 1, 1, 2, 2, 1], "rating": [0, 6, 6, 3, 100, 1],
                            "kind": ["unique"] * 5 + ["checkpoint"]})
    counts = d.rating_counts(ratings, 0, 6)
    got = {(r.tranche, r.low): r.n for r in counts.itertuples()}
    assert len(counts) == 14 and sum(got.values()) == 5          # checkpoint left out
    assert got[(1, 0)] == 1 and got[(1, 6)] == 2 and got[(2, 3)] == 1
    assert got[(2, 6)] == 1                    # out of the scale: the last bin, never lost
    wide = d.rating_counts(pd.DataFrame({"tranche": 1, "rating": [0, 25, 26, 100],
                                         "kind": "unique"}), 0, 100, 4)
    # 101 values in 4 bins: edges at 0 + 101 * k // 4 = 0, 25, 50, 75, 101
    assert wide["high"].tolist() == [24, 49, 74, 100] and wide["n"].tolist() == [1, 2, 0, 1]


def _ratings(n_raters=6, n_pairs=12, seed=0):
    rng = np.random.default_rng(seed)
    truth = rng.uniform(0, 6, n_pairs)
    rows = []
    for r in range(n_raters):
        noise = 6 if r == 0 else 0.7                    # rater r0 is near random
        for p in range(n_pairs):
            rows.append({"rater_id": f"r{r}", "tranche": 1, "word1": f"a{p}", "word2": f"b{p}",
                         "pos": "N", "kind": "unique",
                         "rating": int(np.clip(round(truth[p] + rng.normal(0, noise)), 0, 6))})
    return pd.DataFrame(rows)


def test_rater_quality_is_rho_with_the_others_mean_and_marks_flags():
    ratings = _ratings()
    flags = pd.DataFrame({"rater_id": [f"r{r}" for r in range(6)],
                          "median_s_per_pair": [1.0, 5, 5, 5, 5, 5], "top_value_share": 0.3,
                          "checkpoints_failed": [0, 0, 0, 0, 0, 1], "checkpoints": 1})
    table = d.rater_quality(ratings, flags, 2.0, {"r3"})
    reference = rater_against_mean(ratings, min_overlap=3).set_index("rater_id")["rho"]
    assert np.allclose(table.set_index("rater_id")["agreement"], reference.loc[table["rater_id"]])
    assert table["marked"].tolist() == [True, False, False, False, False, True]
    assert table["excluded"].tolist() == [False, False, False, True, False, False]
    assert table.loc[0, "agreement"] < table.loc[1:, "agreement"].min()


def test_growth_recomputes_the_reference_statistics_on_the_first_raters():
    ratings = _ratings()
    done = pd.Series(pd.to_datetime([f"2026-01-01 1{k}:00" for k in (5, 4, 3, 2, 1, 0)]),
                     index=[f"r{r}" for r in range(6)])        # r5 completed first
    first = d.growth(ratings, done)
    # budget 2 x 6 raters: the last point (6), then 2 and 3; 4 would pass it: next round
    assert first["raters"].tolist() == [2, 3, 6]
    table = d.growth(ratings, done, first.to_dict("records"))
    assert table["raters"].tolist() == [2, 3, 4, 6] == d.schedule(6)
    assert table["ratings"].tolist() == [24, 36, 48, 72]
    first4 = ratings[ratings["rater_id"].isin(["r5", "r4", "r3", "r2"])]
    row = table.iloc[2]
    assert row["iaa1"] == pytest.approx(iaa_pairwise(first4))
    assert row["alpha_interval"] == pytest.approx(krippendorff_alpha(first4, "interval"))
    # points computed before are kept; a point whose raters changed is computed again
    known = table.to_dict("records")
    known[0] = {**known[0], "iaa1": 9.0}
    known[1] = {**known[1], "ratings": 35, "iaa1": 9.0}
    again = d.growth(ratings, done, known)
    assert again["iaa1"].iloc[0] == 9.0 and again["iaa1"].iloc[1] == pytest.approx(
        table["iaa1"].iloc[1])
    assert d.pilot(ratings, done, 2)["rater_id"].nunique() == 4
    assert d.pilot(ratings, done, 4) is None            # 8 wanted, 6 completed


def test_charts_are_accessible_svg_and_bounded_at_many_raters():
    raters = [{"rater_id": f"r{k}", "agreement": float(np.sin(k)), "median_s": 1 + k % 50,
               "marked": k % 97 == 0, "excluded": False} for k in range(10_000)]
    drawn = svg.quality_chart(raters, 2.0)
    assert drawn.startswith("<svg") and 'role="img"' in drawn and "<title" in drawn
    assert "10000 raters with both figures" in drawn and "104 flagged" in drawn
    assert drawn.count("<circle") + drawn.count("<path") < 10_000   # one mark per cell
    assert "style=" not in drawn and "<script" not in drawn
    growth = svg.growth_chart([{"ratings": 10, "raters": 1, "iaa1": None, "alpha_interval": None,
                                "split_half": None},
                               {"ratings": 20, "raters": 2, "iaa1": 0.5, "alpha_interval": 0.4,
                                "split_half": 0.6}], [{"raters": 1, "reliability": 0.3}], 10)
    assert "IAA-1 0.500" in growth and "planner" in growth
    assert "none yet" in svg.completions_chart([], 20)


# -- the figures of every study type refresh --------------------------------------------------

def _slider_study(tmp_path, usf, kind):
    url = database_url(tmp_path / f"{kind}.sqlite")
    if kind == "tr9856":
        create_study("tr9856", tr9856_pair_file(usf, tmp_path / "t.csv"), url)
    else:
        pairs = usf_pair_file(usf, tmp_path / "p.csv", (("N", "N", 60), ("V", "V", 20)))
        name = "hyperlex" if kind == "hyperlex" else "simlex"
        create_study(protocol_variant(tmp_path, name, tranches=1, raters_per_tranche=4),
                     pairs, url)
    return make_app(url)


def _answer_slider(app, k, pages=None):
    values = 2 if app.config["DATABASE_URL"].endswith("tr9856.sqlite") else 7
    client = app.test_client()
    enter(client, f"?PROLIFIC_PID=p{k}&STUDY_ID=s&SESSION_ID=x{k}")
    if "Qualification question" in client.get("/task").get_data(as_text=True):
        client.post("/qualification", data={"choice": 1})
    if pages is None:
        return rate_all(client, rating=lambda i: (i * (k + 3)) % values if k % 2 else i % values)
    for _ in range(pages):
        _, position, ids, checkpoint = page(client)
        data = {"choice": 1} if checkpoint else {f"r{i}": i % 2 for i in ids}
        client.post("/step", data={"position": position, **data})


def _answer_bws(app, k, pages=None):
    client = app.test_client()
    enter(client, f"?PROLIFIC_PID=b{k}&STUDY_ID=s&SESSION_ID=x{k}")
    if pages is None:
        return answer_all(client)
    for _ in range(pages):
        html, position, keys, sizes = bws_page(client)
        data = {"position": position}
        for key in keys:
            values = re.findall(rf'name="b{key}" value="(\d+)"', html)
            data[f"b{key}"], data[f"w{key}"] = values[0], values[-1]
        client.post("/step", data=data)


def _since(app) -> int:
    admin = app.test_client()
    admin.post("/admin/login", data={"password": "s3cret"})
    html = admin.get("/admin/").get_data(as_text=True)
    return int(re.search(r"(\d+) answers since", html).group(1))


def _rows(app) -> int:
    with app.extensions["lexgold"].reads() as session:
        return (session.scalar(select(func.count()).select_from(m.Answer)) +
                session.scalar(select(func.count()).select_from(m.CheckpointAnswer)))


@pytest.mark.parametrize("kind", ["simlex", "hyperlex", "tr9856", "bws"])
def test_figures_of_every_study_type_refresh_after_new_answers(kind, tmp_path, usf, bws_pairs):
    if kind == "bws":
        url = database_url(tmp_path / "bws.sqlite")
        create_study(bws_protocol(tmp_path), bws_pairs, url, seed=4)
        app, answer = make_app(url), _answer_bws
    else:
        app, answer = _slider_study(tmp_path, usf, kind), _answer_slider
    answer(app, 0)
    answer(app, 1)
    assert refresh_figures(app)["computed"]
    assert _since(app) == 0
    before = _rows(app)
    answer(app, 2, pages=2)                     # a rater in the middle of the tranche
    assert _rows(app) > before
    assert _since(app) == _rows(app) - before
    assert refresh_figures(app)["computed"]
    assert _since(app) == 0 and not refresh_figures(app)["computed"]
    with app.extensions["lexgold"].reads() as session:
        stored = figures.load(session).figures
    assert stored["n_rows"] == _rows(app)
    charts = stored["dashboard"]["svg"]
    assert charts["completions"].startswith("<svg")
    assert set(charts) == ({"completions"} if kind == "bws" else
                           {"completions", "ratings", "quality", "growth"})
    # figures stored by an older layout are recomputed although the study did not change
    with app.extensions["lexgold"].sessions() as session:
        version = session.scalar(select(m.StudyFigures.version))
        session.execute(update(m.StudyFigures).values(version=version.split(":", 1)[1]))
        session.commit()
    assert refresh_figures(app)["computed"]


@pytest.fixture(scope="module")
def bws_pairs(usf, tmp_path_factory):
    from test_annotate_bws import BWS_COUNTS
    return usf_pair_file(usf, tmp_path_factory.mktemp("bws") / "pairs.csv", counts=BWS_COUNTS)


def test_admin_page_prints_the_stored_charts_with_bars_and_tables(tmp_path, usf):
    app = _slider_study(tmp_path, usf, "simlex")
    admin = app.test_client()
    admin.post("/admin/login", data={"password": "s3cret"})
    html = admin.get("/admin/").get_data(as_text=True)
    assert 'id="bar-places"' in html and "0 of 4 places completed" in html
    assert "chart-completions" not in html                   # no figures yet
    for k in range(3):
        _answer_slider(app, k)
    refresh_figures(app)
    html = admin.get("/admin/").get_data(as_text=True)
    assert "3 of 4 places completed (75 %)" in html
    assert '<progress id="bar-places" max="4" value="3">' in html
    for chart in ("completions", "ratings", "quality", "growth"):
        assert f'id="chart-{chart}"' in html and f'id="chart-{chart}-title"' in html
    assert html.count('<tr><td>1</td><td>') >= 7             # tranche 1, every value 0..6
    assert re.search(r'<table id="growth">.*?<td>3</td>', html, re.S)


def test_admin_page_is_a_page_of_sections_without_traps(tmp_path, usf):
    """Section links whose targets exist; no screened-out bar without a qualification; no
    "undefined" note for a tranche of one rater; no "New raters: open" once every place is
    completed; long tables folded."""
    app = _slider_study(tmp_path, usf, "simlex")           # 1 tranche of 4 places
    admin = app.test_client()
    admin.post("/admin/login", data={"password": "s3cret"})
    _answer_slider(app, 0)
    refresh_figures(app)
    html = admin.get("/admin/").get_data(as_text=True)
    contents = re.search(r'<nav id="contents".*?</nav>', html, re.S).group(0)
    targets = re.findall(r'href="#([\w-]+)"', contents)
    assert len(targets) >= 9
    assert all(f'id="{target}"' in html for target in targets), targets
    assert 'id="bar-screened"' not in html and "screened out of the raters" not in html
    assert 'class="note">tranche 1:' not in html and "undefined" not in html
    assert html.count("tranche 1 has one rater so far") == 1
    assert "New raters: open" in html
    for k in range(1, 4):
        _answer_slider(app, k)
    refresh_figures(app)
    html = admin.get("/admin/").get_data(as_text=True)
    assert "4 of 4 places completed" in html
    assert "New raters: none, every place is completed" in html
    assert 'id="raters-rows"' not in html                  # 4 rows: shown as they are
    for k in range(4, 4 + 21):                             # 21 more raters, turned away
        enter(app.test_client(), f"?PROLIFIC_PID=p{k}&STUDY_ID=s&SESSION_ID=x{k}")
    html = admin.get("/admin/").get_data(as_text=True)
    assert re.search(r'<details class="long" id="raters-rows"><summary>Show the table '
                     r'\(25 rows\)</summary><div class="table-wrap"><table id="raters">', html)
    hyperlex = _slider_study(tmp_path, usf, "hyperlex")
    other = hyperlex.test_client()
    other.post("/admin/login", data={"password": "s3cret"})
    assert 'id="bar-screened"' in other.get("/admin/").get_data(as_text=True)
