"""The admin view while a study runs: quality flags per rater with platform IDs, times with
their UTC offset, median completion time per tranche, tables that fit, self-refresh."""

import re
from datetime import timedelta
from statistics import median

import pytest
from sqlalchemy import select, update

from lexgold.study import models as m
from lexgold.study.db import database_url
from lexgold.study.store import create_study
from lexgold.process.quality import quality_flags
from test_annotate_app import answers, enter, make_app, protocol_variant, rate_all, refresh_figures
from test_annotate_app import simlex_pairs  # noqa: F401  (fixture)


@pytest.fixture(scope="module")
def study_app(tmp_path_factory, simlex_pairs):
    """Three Prolific raters finished one tranche; rater pid0 failed its checkpoints; answers
    timed 3 s (pid0), 0.2 s (pid1), 5 s (pid2) a pair; raters took 10 + 2 x id minutes."""
    tmp_path = tmp_path_factory.mktemp("quality")
    protocol = protocol_variant(tmp_path, "simlex", tranches=1, raters_per_tranche=3)
    url = database_url(tmp_path / "quality.sqlite")
    create_study(protocol, simlex_pairs, url)
    app = make_app(url)
    for k in range(3):
        client = app.test_client()
        enter(client, f"?PROLIFIC_PID=pid{k}&STUDY_ID=s&SESSION_ID=x{k}")
        rate_all(client, rating=lambda i, k=k: (i * (k + 1)) % 7,
                 choice=lambda html, k=k: 0 if k == 0 else 1)
    with app.extensions["lexgold"].sessions() as session, session.begin():
        raters = session.execute(select(m.Rater.id, m.Rater.external_id)).all()
        base = session.scalar(select(m.Answer.answered_at).order_by(m.Answer.id))
        for rater_id, external in raters:   # each answer its own page, so its time is its own
            ms = {"pid1": 200, "pid2": 5000}.get(external, 3000)
            for (answer_id,) in session.execute(select(m.Answer.id).where(
                    m.Answer.rater_id == rater_id)).all():
                session.execute(update(m.Answer).where(m.Answer.id == answer_id).values(
                    response_ms=ms, server_ms=ms,
                    answered_at=base + timedelta(seconds=answer_id)))
            session.execute(update(m.Rater).where(m.Rater.id == rater_id).values(
                created_at=base, completed_at=base + timedelta(minutes=10 + 2 * rater_id)))
    refresh_figures(app)
    return app


def overview(app):
    admin = app.test_client()
    assert admin.post("/admin/login", data={"password": "s3cret"}).status_code == 302
    return admin.get("/admin/").get_data(as_text=True)


def test_quality_flags_per_rater_with_platform_ids(study_app):
    app = study_app
    html = overview(app)
    table = html.split('<table id="quality">', 1)[1].split("</table>", 1)[0]
    flags = quality_flags(answers(app)).set_index("rater_id")
    with app.extensions["lexgold"].sessions() as session:
        ids = dict(session.execute(select(m.Rater.external_id, m.Rater.public_id)).all())
    rows = {pid: re.search(rf"<tr><td>{ids[pid]}</td><td>prolific</td><td>{pid}</td>(.*?)</tr>",
                           table, re.S).group(1) for pid in ids}
    assert flags.loc[ids["pid1"], "median_s_per_pair"] == 0.2
    assert '<td class="flag">0.2</td>' in rows["pid1"]          # below min_seconds_per_pair 1 s
    assert "<td>5.0</td>" in rows["pid2"] and "<td>3.0</td>" in rows["pid0"]
    failed = int(flags.loc[ids["pid0"], "checkpoints_failed"])
    assert failed > 0
    assert f'<td class="flag">{failed} of {int(flags.loc[ids["pid0"], "checkpoints"])}</td>' \
        in rows["pid0"]
    assert "<td>0 of" in rows["pid1"]
    share = flags.loc[ids["pid2"], "top_value_share"]
    assert f"<td>{share:.2f}</td>" in rows["pid2"]
    # the exclusions preview names the platform ID (to reject the submission on Prolific)
    assert re.search(rf"<tr><td>{ids['pid0']}</td><td>checkpoint</td><td>[^<]*</td><td>yes</td>"
                     rf"<td>prolific</td><td>pid0</td></tr>", html)


def test_times_carry_their_offset_and_completion_median_per_tranche(study_app):
    app = study_app
    html = overview(app)
    with app.extensions["lexgold"].sessions() as session:
        rows = session.execute(select(m.Rater.created_at, m.Rater.completed_at)).all()
    started = rows[0][0].strftime("%Y-%m-%dT%H:%M:%S") + "+00:00"
    assert f"<td>{started}</td>" in html
    assert all(f"<td>{done.strftime('%Y-%m-%dT%H:%M:%S')}+00:00</td>" in html
               for _, done in rows)
    minutes = median((done - start).total_seconds() / 60 for start, done in rows)
    progress = html.split('<table id="progress">', 1)[1].split("</table>", 1)[0]
    assert "median completion (min)" in progress and re.search(
        rf"<td>{minutes:.1f}</td>\s*<td><a href=\"/admin/preview/1/0\">as rater</a></td></tr>",
        progress)


def test_view_refreshes_itself_and_every_table_scrolls_in_its_box(study_app):
    app = study_app
    html = overview(app)
    assert "http-equiv" not in html                   # unasked, no reload (WCAG 2.2.1)
    assert '<a href="/admin/?reload=1">' in html
    client = app.test_client()
    client.post("/admin/login", data={"password": "s3cret"})
    reloading = client.get("/admin/?reload=1").get_data(as_text=True)
    assert re.search(r'<meta http-equiv="refresh" content="\d+">', reloading)
    assert "<script>" not in html                     # the CSP allows no inline script
    tables = re.findall(r"(.{0,30})<table", html)
    assert tables and all(before.endswith('<div class="table-wrap">') for before in tables)
    css = app.test_client().get("/static/lexgold.css").get_data(as_text=True)
    assert re.search(r"\.table-wrap \{[^}]*overflow-x: auto", css)
