"""The rater's lean path (issue 49): the rater and its slot read as plain rows, and a group
page's pairs filled into a pattern of ``group_item.html`` rendered once per study and kind."""

import re

import pytest
from flask import render_template
from markupsafe import escape

from lexgold.annotate import flow
from lexgold.annotate.views_rater import ITEM_FIELDS, _item_html
from lexgold.study.db import database_url
from lexgold.study.store import create_study
from test_annotate_app import YES, enter, make_app, page, protocol_variant, usf_pair_file

HOSTILE = "<script>alert('x')</script> & {word1}"


@pytest.fixture(scope="module")
def pairs(usf, tmp_path_factory):
    return usf_pair_file(usf, tmp_path_factory.mktemp("pairs") / "pairs.csv",
                         counts=(("N", "N", 12), ("V", "V", 4), ("A", "AJ", 4)))


@pytest.mark.parametrize("task", ["slider", "binary"])
def test_a_filled_pattern_is_the_template_rendered_for_the_item(tmp_path, pairs, task):
    """Each kind of item, with a hostile question: the pattern filled with escaped values is
    byte for byte what rendering ``group_item.html`` for that item gives."""
    protocol = protocol_variant(tmp_path, "simlex", tranches=1, raters_per_tranche=1,
                                task=f'"{task}"')
    url = database_url(tmp_path / "study.sqlite")
    create_study(protocol, pairs, url, seed=1)
    app = make_app(url)
    with app.test_request_context("/task"):
        for kind in ("pair", "calibration", "consistency"):
            for item_id, start in ((7, 3), (12345, 0)):
                item = {"kind": kind, "id": item_id, "question": HOSTILE, "start": start}
                direct = render_template("group_item.html", item=item)
                filled = _item_html(kind, {"id": str(item_id),
                                           "question": str(escape(HOSTILE)),
                                           "start": str(start)})
                assert filled == direct
                assert "<script>" not in filled and "&lt;script&gt;" in filled
        assert set(ITEM_FIELDS) == {"id", "question", "start"}


def test_the_current_rater_needs_its_browser_and_comes_with_its_slot(tmp_path, pairs):
    protocol = protocol_variant(tmp_path, "simlex", tranches=1, raters_per_tranche=2)
    url = database_url(tmp_path / "study.sqlite")
    create_study(protocol, pairs, url, seed=1)
    app = make_app(url)
    client = app.test_client()
    enter(client)
    _, position, _, _ = page(client)
    with client.session_transaction() as cookie:
        public_id, secret = cookie["rater"], cookie["browser"]
    state = app.extensions["lexgold"]
    with state.reads() as session:
        found = flow.current_rater(session, public_id, flow.browser_hash(secret))
        assert found.stage == "rating" and found.slot is not None
        assert found.slot.id == found.slot_id and found.slot.rater_id == found.id
        assert found.slot.step == position == 0 and found.slot.status == "active"
        assert flow.current_rater(session, public_id, flow.browser_hash(secret + "x")) is None
        assert flow.current_rater(session, public_id + "x", flow.browser_hash(secret)) is None
    other = app.test_client()                     # another browser: consent gives a new rater
    other.get("/")
    assert other.post("/consent", data=YES).status_code == 302
    with other.session_transaction() as cookie:
        assert cookie["rater"] != public_id
    assert re.search(r'name="position" value="0"', client.get("/task").get_data(as_text=True))
