"""Security round 3, item 3: pages are timed by the server (docs/hardening.md, "Round 3").

The "too fast" flag of the admin view and the ``too_fast`` exclusion rule believed the ``t<id>``
fields a browser sends: a script waiting a second per page and sending ``t<id>=60000`` looked
slow. The site now stores ``server_ms`` (page given -> answers arrived, per item, on the site's
clock) and both use it; ``response_ms`` stays in the export as the browser's second opinion.
Each test failed before the fix.
"""

import io
import re
from datetime import datetime, timedelta

import pandas as pd
import pytest
from click.testing import CliRunner
from sqlalchemy import select

from lexgold.study import models as m
from lexgold.cli import cli
from lexgold.process.exclusions import exclusion_table
from lexgold.process.quality import quality_flags
from test_annotate_app import enter, make_app, page
from test_hardening_security import (answer_page, login, pairs, rater_client,  # noqa: F401
                                     serve, small_study, study_with_keys)
from test_process_exclusions import protocol_with, simlex_study, timed

pytestmark = pytest.mark.slow            # hardening: servers, faults and fuzzing of the site


def test_server_ms_is_the_sites_time_per_item_whatever_the_browser_sends(tmp_path, pairs):
    """On a simulated clock (as ``lexgold study rehearse`` runs the site): a page given at T0
    and answered at T1 stores (T1 - T0) / items for each item, next to the browser's 60 s."""
    clock = [datetime(2026, 3, 1, 12, 0, 0)]
    app = make_app(small_study(tmp_path, pairs), CLOCK=lambda: clock[0])
    client = app.test_client()
    enter(client, "?PROLIFIC_PID=timed01&STUDY_ID=s&SESSION_ID=x")   # the claim: T0
    seen = []
    for wait_s in (3, 7, 2, 5):          # three checkpoints, then a page of pairs
        html, position, ids, checkpoint = page(client)
        clock[0] += timedelta(seconds=wait_s)
        data = ({"position": position, "choice": 0, "t": 60000} if checkpoint else
                {"position": position, **{f"r{i}": 3 for i in ids},
                 **{f"t{i}": 60000 for i in ids}})
        assert client.post("/step", data=data).status_code == 302
        seen.append((wait_s, 1 if checkpoint else len(ids), checkpoint))
    with app.extensions["lexgold"].sessions() as session:
        stored = session.execute(select(m.Answer.server_ms, m.Answer.response_ms)).all() + \
            session.execute(select(m.CheckpointAnswer.server_ms,
                                   m.CheckpointAnswer.response_ms)).all()
    expected = sorted(round(wait * 1000 / n) for wait, n, _ in seen for _ in range(n))
    assert sorted(server for server, _ in stored) == expected
    assert {client_ms for _, client_ms in stored} == {60000}
    assert any(checkpoint for *_, checkpoint in seen) and not all(c for *_, c in seen)


def test_a_script_claiming_slow_answers_is_flagged_by_the_servers_time(tmp_path, pairs, serve):
    """Before: a script answering at once with ``t<id>=60000`` showed 60 s per pair in the
    admin view, unflagged, and passed the ``too_fast`` rule."""
    url = study_with_keys(tmp_path, pairs, "min_seconds_per_pair = 2")
    _, base = serve(url)
    bot = rater_client(base, "?PROLIFIC_PID=fastbot01")
    for _ in range(6):                    # three checkpoints, then three pages of pairs
        html = bot.get("/task").text
        token = re.search(r'name="csrf_token" value="([^"]+)"', html).group(1)
        ids = set(re.findall(r'name="r(\d+)"', html))
        position = re.search(r'name="position" value="(\d+)"', html).group(1)
        assert bot.post("/step", data={"csrf_token": token, "position": position,
                                       "choice": "0", "t": "60000",
                                       **{f"r{i}": "3" for i in ids},
                                       **{f"t{i}": "60000" for i in ids}}).status_code == 302
    admin = login(base)
    frame = pd.read_csv(io.StringIO(admin.get("/admin/ratings.csv").text))
    assert (frame["response_ms"] == 60000).all()                  # the browser's claim, kept
    assert frame["server_ms"].notna().all() and (frame["server_ms"] < 2000).all()
    figures = CliRunner().invoke(cli, ["study", "figures", url, "--force"])   # no waiting for
    assert figures.exit_code == 0, figures.output          # the server's background refresher
    html = admin.get("/admin/").text
    table = html.split('<table id="quality">', 1)[1].split("</table>", 1)[0]
    row = re.search(r"<td>fastbot01</td>(.*?)</tr>", table, re.S).group(1)
    median = quality_flags(frame).set_index("rater_id")["median_s_per_pair"].iloc[0]
    assert median < 2 and f'<td class="flag">{median:.1f}</td>' in row
    flagged = exclusion_table(frame, protocol_with("simlex", rules=["too_fast"],
                                                   too_fast_s_per_pair=2.0))
    assert flagged["rule"].tolist() == ["too_fast"]


def test_the_too_fast_rule_and_the_flags_take_server_times_before_the_browsers():
    """The browser says 5 s a pair for everyone; the server measured 0.4 s for r3."""
    ratings = timed(simlex_study(contrarian=False), {f"r{k}": 5.0 for k in range(9)})
    ratings["server_ms"] = ratings["rater_id"].map(lambda r: 400 if r == "r3" else 5000)
    table = exclusion_table(ratings, protocol_with("simlex", rules=["too_fast"],
                                                   too_fast_s_per_pair=2.0))
    assert table["rater_id"].tolist() == ["r3"] and table["value"].tolist() == [0.4]
    flags = quality_flags(ratings).set_index("rater_id")["median_s_per_pair"]
    assert flags["r3"] == 0.4 and flags["r0"] == 5.0
    # answers without a server time (ratings from elsewhere) keep the browser's figure
    ratings["server_ms"] = pd.NA
    assert quality_flags(ratings).set_index("rater_id")["median_s_per_pair"]["r3"] == 5.0
