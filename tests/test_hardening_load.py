"""The load benchmark's bounded CI mode, and its database check against known damage.

``bench/load_test.py --short`` drives 12 raters (2 tranches of 5 places, so two find the study
full) through the production server over HTTP and exits non-zero on any error or failed check.
The full benchmark (200 raters) is run by hand; its figures are in docs/hardening.md.
"""

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import delete, insert, select, update

from lexgold.study import models as m
from lexgold.study.db import database_url
from lexgold.study.store import create_study
from test_annotate_app import enter, make_app, page, protocol_variant, usf_pair_file

pytestmark = pytest.mark.slow            # hardening: servers, faults and fuzzing of the site

BENCH = Path(__file__).resolve().parents[1] / "bench" / "load_test.py"
_spec = importlib.util.spec_from_file_location("lexgold_load_test", BENCH)
load_test = sys.modules.setdefault("lexgold_load_test", importlib.util.module_from_spec(_spec))
_spec.loader.exec_module(load_test)


def run_short(tmp_path, *extra):
    out = tmp_path / "figures.json"
    result = subprocess.run([sys.executable, str(BENCH), "--short", "--json", str(out), *extra],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    figures = json.loads(out.read_text())
    assert figures["errors"] == 0 and figures["problems"] == []
    assert figures["outcomes"] == {"done": 10, "full": 2}
    assert {"GET /", "POST /consent", "GET /task", "POST /instructions", "POST /step"} \
        <= set(figures["endpoints"])
    steps = figures["endpoints"]["POST /step"]
    assert steps["n"] >= 10 * 10                     # 10 finished raters, >= 10 pages each
    assert 0 < steps["p50_ms"] <= steps["p95_ms"] <= steps["p99_ms"] <= steps["max_ms"]
    assert "database check: OK" in result.stdout
    return figures


def test_short_load_run_sqlite(tmp_path):
    figures = run_short(tmp_path)
    assert figures["settings"]["backend"] == "SQLite (WAL)"


@pytest.mark.postgres
def test_short_load_run_postgres(tmp_path, postgres_url):
    figures = run_short(tmp_path, "--db", postgres_url)
    assert figures["settings"]["backend"] == "PostgreSQL"


# -- the check itself finds damage -----------------------------------------------------------------

@pytest.fixture
def rated(usf, tmp_path):
    """Two raters who finished a tranche each through the app, and what they were told."""
    pairs = usf_pair_file(usf, tmp_path / "pairs.csv")
    protocol = protocol_variant(tmp_path, "simlex", tranches=2, raters_per_tranche=1)
    url = database_url(tmp_path / "check.sqlite")
    create_study(protocol, pairs, url, completion_code="CHECK-OK")
    app = make_app(url)
    runs = []
    for k in range(2):
        client = app.test_client()
        enter(client, f"?PROLIFIC_PID=chk{k}")
        run, rng = load_test.RaterRun(f"chk{k}"), np.random.default_rng(k)
        while True:
            html = page(client)[0]
            found = load_test.answer_form(html, rng)
            if found is None:
                run.outcome, run.code = "done", "CHECK-OK"
                break
            path, data, answered = found
            assert client.post(path, data=data).status_code == 302
            if answered[0] == "group":
                run.items.update(answered[1])
            else:
                run.checkpoints[answered[1]] = answered[2]
        runs.append(run)
    app.extensions["lexgold_engine"].dispose()
    return url, runs


def damage(url, statement):
    from lexgold.study.db import make_engine
    engine = make_engine(url)
    with engine.begin() as connection:
        connection.execute(statement)
    engine.dispose()


def test_database_check_passes_on_intact_data(rated):
    url, runs = rated
    assert load_test.check_database(url, runs) == []


def test_database_check_finds_a_lost_answer_and_a_half_written_group(rated):
    url, runs = rated
    victim = min(runs[0].items)
    damage(url, delete(m.Answer).where(m.Answer.item_id == victim,
                                       m.Answer.rating == runs[0].items[victim]))
    problems = load_test.check_database(url, runs)
    assert any("chk0: stored answers differ from accepted ones (1 lost)" in p for p in problems)
    assert any("half-written groups" in p for p in problems)
    assert any("chk0: finished with items missing" in p for p in problems)


def test_database_check_finds_a_changed_rating_and_a_lost_completion(rated):
    url, runs = rated
    item = max(runs[1].items)
    damage(url, update(m.Answer).where(m.Answer.item_id == item)
           .values(rating=(runs[1].items[item] + 1) % 7))
    damage(url, update(m.Rater).where(m.Rater.external_id == "chk0").values(stage="rating"))
    problems = load_test.check_database(url, runs)
    assert any(p.startswith("chk1: stored answers differ") and "(0 lost)" in p for p in problems)
    assert "chk0: finished but not recorded as finished" in problems


def test_database_check_finds_an_over_assigned_tranche(rated):
    url, runs = rated
    from lexgold.study.db import make_engine, session_factory
    engine = make_engine(url)
    with session_factory(engine)() as session:
        raters = {r.external_id: r for r in session.scalars(select(m.Rater))}
        slot = session.get(m.Slot, raters["chk0"].slot_id)
        item = session.scalar(select(m.Item.id).where(m.Item.tranche_id == slot.tranche_id,
                                                      m.Item.kind == "unique"))
    engine.dispose()
    intruder = raters["chk1"]                         # a second rater in a tranche of one
    damage(url, insert(m.Answer).values(rater_id=intruder.id, item_id=item,
                                        slot_id=intruder.slot_id, rating=3,
                                        answered_at=m.utcnow()))
    problems = load_test.check_database(url, runs)
    assert f"tranche {slot.tranche_id}: answers of 2 raters, target 1" in problems
    assert f"rater {intruder.id}: answers in 2 tranches" in problems


# -- the peak throughput the stress mode reports --------------------------------------------------

def test_peak_rate_is_the_busiest_window():
    # 5 answers in the first second, 20 evenly in [10, 12] s, then 3 stragglers. A 10 s window
    # from 10.0 holds the 20 (25.0 is outside); any window that starts earlier holds at most the
    # 5 early ones and the first 5 of the 20 (10.0 ... 10.42 s).
    times = [0.1, 0.2, 0.3, 0.4, 0.5] + list(np.linspace(10.0, 12.0, 20)) + [25.0, 30.0, 40.0]
    assert load_test.peak_rate(times, 10.0) == pytest.approx(20 / 10)
    assert load_test.peak_rate(times[::-1], 10.0) == pytest.approx(20 / 10)  # order is free


def test_peak_rate_of_a_run_shorter_than_the_window():
    assert load_test.peak_rate([1.0, 1.5, 3.0], 10.0) == pytest.approx(3 / 2.0)
    assert load_test.peak_rate([], 10.0) == 0.0
