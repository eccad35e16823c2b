"""Recruiting until every pair has enough accepted raters (HyperLex section 4.4): slots added
when raters are excluded (by the figures refresher, never in a rater's request), what `study
report` and the admin view say is missing, idempotence."""

import json
import re

import pandas as pd
import pytest
from click.testing import CliRunner
from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError

from lexgold.live import figures, refresher
from lexgold.live import recruit as recruit_module
from lexgold.study import models as m
from lexgold.study.db import database_url, postgres_schema
from lexgold.live.recruit import _new_slots as _add_slots, top_up
from lexgold.live.tally import recruitment
from lexgold.study.store import create_study
from lexgold.cli import cli
from lexgold.errors import InputError
from test_annotate_app import enter, make_app, protocol_variant, rate_all, usf_pair_file


def _study(tmp_path, usf, url):
    """One HyperLex tranche, 3 slots to start with, at least 3 accepted raters wanted."""
    pairs = usf_pair_file(usf, tmp_path / "h.csv", (("N", "N", 60), ("V", "V", 20)))
    protocol = protocol_variant(tmp_path, "hyperlex", tranches=1, raters_per_tranche=3,
                                min_accepted_raters=3)
    create_study(protocol, pairs, url, completion_code="OK-1")
    return make_app(url)


@pytest.fixture
def hyperlex_study(tmp_path, usf):
    return _study(tmp_path, usf, database_url(tmp_path / "h.sqlite")), tmp_path / "h.sqlite"


def _pair_of(app) -> dict:
    with app.extensions["lexgold"].sessions() as session:
        return dict(session.execute(select(m.Item.id, m.Item.pair_id)).all())


def _complete(app, rating) -> str:
    """A new rater who qualifies and rates the whole tranche; returns the last page."""
    client = app.test_client()
    enter(client)
    client.post("/qualification", data={"choice": 1})
    _, _, last = rate_all(client, rating=rating)
    return last


def _slots(app) -> int:
    with app.extensions["lexgold"].sessions() as session:
        return session.scalar(select(func.count()).select_from(m.Slot))


def refresh(app, **options) -> dict:
    """One round of the background refresher of `lexgold serve` (lexgold.live.figures)."""
    state = app.extensions["lexgold"]
    with state.reads() as reads, state.sessions() as writes:
        return refresher.refresh(reads, writes, **options)


def _recruitment(app) -> dict:
    state = app.extensions["lexgold"]
    with state.sessions() as session:
        return recruitment(session, state.config)


def test_an_excluded_rater_is_replaced_until_the_minimum_is_accepted(hyperlex_study):
    _replaced_until_accepted(hyperlex_study[0])


@pytest.mark.postgres
def test_replacement_on_postgres(tmp_path, usf, postgres_url):
    with postgres_schema(postgres_url, "recruit") as (_, url):
        app = _study(tmp_path, usf, url)
        _replaced_until_accepted(app)
        app.extensions["lexgold_engine"].dispose()


def _replaced_until_accepted(app):
    pair_of = _pair_of(app)
    honest = lambda item: pair_of[item] * 3 % 7  # noqa: E731  same pair, same answer
    assert "OK-1" in _complete(app, honest)
    assert "OK-1" in _complete(app, lambda item: 6)   # one value throughout: excluded
    assert refresh(app)["added"] == {}                # the tranche's last slot is still open
    assert _slots(app) == 3
    assert "OK-1" in _complete(app, honest)
    assert _slots(app) == 3                           # never in the rater's request ...
    # ... but by the refresher: all 3 slots completed, 2 accepted: one slot for the missing one
    assert refresh(app)["added"] == {1: 1}
    assert _slots(app) == 4
    assert refresh(app) == {"computed": False, "seconds": 0.0, "added": {}}   # nothing new
    found = _recruitment(app)
    row = found["tranches"].iloc[0].to_dict()
    assert row == {"tranche": 1, "slots": 4, "completed": 3, "open": 1, "excluded": 1,
                   "accepted": 2, "missing": 1}
    below = found["pairs_below"]
    assert len(below) == 80 and set(below["accepted"]) == {2} and found["note"] == ""
    # the fourth rater is offered the new slot, not the full text
    assert "OK-1" in _complete(app, honest)
    assert refresh(app)["added"] == {}
    assert _slots(app) == 4
    found = _recruitment(app)
    assert found["tranches"].iloc[0]["accepted"] == 3 and found["pairs_below"].empty
    late = app.test_client()
    enter(late)
    late.post("/qualification", data={"choice": 1})
    assert "all the participants it needs" in late.get("/task").get_data(as_text=True)


def test_top_up_is_idempotent_and_concurrent_additions_collide(hyperlex_study):
    app, _ = hyperlex_study
    pair_of = _pair_of(app)
    for rating in (lambda i: pair_of[i] % 7, lambda i: 0, lambda i: 1):   # two excluded
        _complete(app, rating)
    assert refresh(app)["added"] == {1: 2}
    assert _slots(app) == 5                           # 3 + the 2 missing accepted raters
    state = app.extensions["lexgold"]
    with state.sessions() as session:
        assert top_up(session, state.config) == {}    # 1 accepted + 2 open slots: enough
        stale = pd.DataFrame([{"tranche": 1, "slots": 3, "open": 0, "accepted": 1}])
        with pytest.raises(IntegrityError):           # a second top-up from the old counts
            _add_slots(session, stale, 3)
        session.rollback()
    assert _slots(app) == 5


def test_report_and_admin_list_what_is_missing(hyperlex_study):
    app, path = hyperlex_study
    _complete(app, lambda item: 4)                    # one value throughout: excluded
    refresh(app)                                      # slots left open: no top-up
    out = CliRunner().invoke(cli, ["study", "report", str(path), "--json"])
    assert out.exit_code == 0, out.output
    report = json.loads(out.output)
    assert report["progress"] == [{"tranche": 1, "target": 3, "completed": 1, "active": 0,
                                   "expired": 0, "excluded": 1, "accepted": 0, "missing": 3}]
    below = report["below_minimum"]
    assert below["min_accepted_raters"] == 3 and below["tranches"] == [1]
    assert len(below["pairs"]) == 80 and {p["accepted"] for p in below["pairs"]} == {0}
    assert set(below["pairs"][0]) == {"word1", "word2", "pos", "accepted"}
    client = app.test_client()
    client.post("/admin/login", data={"password": "s3cret"})
    html = client.get("/admin/").get_data(as_text=True)
    assert "80 pairs have fewer than 3 accepted raters" in html
    assert "<th>accepted</th><th>missing</th>" in html
    assert re.search(r"figures as of \S+\+00:00, 0 answers since", html)
    # by hand: 0 accepted + 2 open slots < 3, so one slot now; a second run adds nothing
    out = CliRunner().invoke(cli, ["study", "top-up", str(path)])
    assert out.exit_code == 0 and out.output.strip() == "tranche 1: 1 slot added"
    out = CliRunner().invoke(cli, ["study", "top-up", str(path)])
    assert "no tranche short of 3 accepted raters beyond its open slots" in out.output
    assert _slots(app) == 4


def test_fixed_slots_without_a_minimum_and_bad_minimum(tmp_path, usf):
    pairs = usf_pair_file(usf, tmp_path / "h.csv", (("N", "N", 60), ("V", "V", 20)))
    protocol = protocol_variant(tmp_path, "hyperlex", tranches=1, raters_per_tranche=1,
                                min_accepted_raters=0)
    url = database_url(tmp_path / "h.sqlite")
    create_study(protocol, pairs, url)
    app = make_app(url)
    _complete(app, lambda item: 6)                    # excluded, but no minimum: no new slot
    assert refresh(app)["added"] == {}
    assert _slots(app) == 1 and _recruitment(app)["pairs_below"].empty
    out = CliRunner().invoke(cli, ["study", "top-up", str(tmp_path / "h.sqlite")])
    assert "no [study] min_accepted_raters: the slots are fixed" in out.output
    bad = protocol_variant(tmp_path, "hyperlex", min_accepted_raters=-1)
    with pytest.raises(InputError,
                       match=r"\[study\] min_accepted_raters: allowed 0 <= x <= 10,000, given -1"):
        create_study(bad, pairs, database_url(tmp_path / "bad.sqlite"))


def test_completing_request_computes_nothing_and_study_top_up_computes_once(hyperlex_study,
                                                                            monkeypatch):
    """The rater's last page only records the completion: no export, no exclusion rules, no
    figures; `study top-up` (by hand) runs the rules once and tops up."""
    app, path = hyperlex_study
    calls = []
    real_compute = figures.compute
    for module in (figures, recruit_module, refresher):      # every caller's name for it
        monkeypatch.setattr(module, "compute",
                            lambda *a, **k: calls.append(1) or real_compute(*a, **k))
    from lexgold.process import exclusions
    real_table = exclusions.exclusion_table
    monkeypatch.setattr(exclusions, "exclusion_table",
                        lambda *a, **k: calls.append(2) or real_table(*a, **k))
    for rating in (lambda i: 0, lambda i: 1, lambda i: 2):   # all three excluded
        _complete(app, rating)
    assert calls == [] and _slots(app) == 3
    with app.extensions["lexgold"].reads() as session:
        assert figures.load(session) is None
    out = CliRunner().invoke(cli, ["study", "top-up", str(path)])
    assert out.output.strip() == "tranche 1: 3 slots added" and calls == [1, 2]
    assert _slots(app) == 6
    done = refresh(app)                               # the admin figures: by the refresher
    assert done["computed"] and done["added"] == {} and calls == [1, 2, 1, 2]
    with app.extensions["lexgold"].reads() as session:
        stored = figures.load(session)
    assert stored.figures["tranches"][0]["slots"] == 6 and stored.figures["full"] == []
