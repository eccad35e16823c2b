"""Two tabs of one rater, stale tabs, the back button and late returns.

A rater's tabs share one session cookie; each tab holds the page it was given. Whatever order
the tabs are sent in, the answers stored are those accepted first, nothing is stored twice, and
the rater is told what happened (a notice, or a 4xx page with a clear message).
"""


import pytest
from sqlalchemy import select, update

from lexgold.study import models as m
from lexgold.study.db import database_url
from lexgold.study.store import create_study
from test_annotate_app import enter, make_app, page, protocol_variant, usf_pair_file

pytestmark = pytest.mark.slow            # hardening: servers, faults and fuzzing of the site

NOTICE = "That page had already been sent"


@pytest.fixture(scope="module")
def pairs(usf, tmp_path_factory):
    return usf_pair_file(usf, tmp_path_factory.mktemp("tab-pairs") / "pairs.csv")


@pytest.fixture
def app(tmp_path, pairs):
    protocol = protocol_variant(tmp_path, "simlex", tranches=1, raters_per_tranche=1)
    url = database_url(tmp_path / "tabs.sqlite")
    create_study(protocol, pairs, url, seed=9, completion_code="TABS-DONE")
    return make_app(url)


def stored(app):
    with app.extensions["lexgold"].sessions() as session:
        answers = session.execute(select(m.Answer.rater_id, m.Answer.item_id, m.Answer.rating)
                                  .order_by(m.Answer.id)).all()
        checks = session.execute(select(m.CheckpointAnswer.rater_id, m.CheckpointAnswer.step_id,
                                        m.CheckpointAnswer.choice)).all()
    return answers, checks


def form(position, ids, checkpoint, value):
    if checkpoint:
        return {"position": position, "choice": value % 3}
    return {"position": position, **{f"r{i}": value for i in ids}}


def past_first_checkpoint(client):
    """Answer the checkpoints that open the tranche (two after the instructions, the noun one);
    returns the first page of pairs."""
    _, position, ids, checkpoint = page(client)
    assert checkpoint and position == 0
    while checkpoint:
        assert client.post("/step", data=form(position, ids, True, 1)).status_code == 302
        _, position, ids, checkpoint = page(client)
    assert position == 3
    return page(client)


def test_two_tabs_first_sent_wins_and_the_second_is_told(app):
    client = app.test_client()
    enter(client)
    tab_a = past_first_checkpoint(client)          # both tabs show page 3
    tab_b = page(client)
    assert tab_a[1:] == tab_b[1:]
    _, position, ids, _ = tab_a
    assert client.post("/step", data=form(position, ids, False, 5)).status_code == 302
    response = client.post("/step", data=form(position, ids, False, 1), follow_redirects=True)
    html = response.get_data(as_text=True)
    assert response.status_code == 200 and NOTICE in html
    assert f'name="position" value="{position + 1}"' in html
    answers, _ = stored(app)
    assert sorted(i for _, i, _ in answers) == sorted(ids) and {r for *_, r in answers} == {5}
    assert NOTICE not in page(client)[0]            # shown once, not on every page after


def test_stale_tab_of_an_older_page_and_the_back_button(app):
    client = app.test_client()
    enter(client)
    old = past_first_checkpoint(client)
    _, position, ids, _ = old
    client.post("/step", data=form(position, ids, False, 4))
    newer = page(client)
    client.post("/step", data=form(newer[1], newer[2], newer[3], 2))
    before = stored(app)
    # back button twice: the browser re-sends the page-1 form
    response = client.post("/step", data=form(position, ids, False, 0))
    assert response.status_code == 302
    assert NOTICE in client.get("/task").get_data(as_text=True)
    assert stored(app) == before
    assert page(client)[1] == position + 2
    # a page the rater has not reached yet (a tampered or confused tab): refused, clear message
    ahead = client.post("/step", data=form(position + 5, ids, False, 3))
    assert ahead.status_code == 400
    assert "could not be accepted" in ahead.get_data(as_text=True)
    assert stored(app) == before


def test_expired_claim_not_yet_reassigned_lets_the_holder_finish(app):
    slow = app.test_client()
    enter(slow)
    _, position, ids, _ = past_first_checkpoint(slow)
    with app.extensions["lexgold"].sessions() as session:       # the claim runs out
        session.execute(update(m.Slot).values(expires_at=m.utcnow().replace(year=2000)))
        session.commit()
    assert slow.post("/step", data=form(position, ids, False, 6)).status_code == 302
    with app.extensions["lexgold"].sessions() as session:       # answering renewed the claim
        slot = session.scalars(select(m.Slot)).one()
        assert slot.expires_at > m.utcnow() and slot.step == position + 1


def test_reassigned_claim_keeps_both_raters_answers_apart(app):
    first = app.test_client()
    enter(first, "?PROLIFIC_PID=first&STUDY_ID=s&SESSION_ID=x")
    _, position, ids, _ = past_first_checkpoint(first)
    first.post("/step", data=form(position, ids, False, 2))
    stale = page(first)                                          # first's tab on page 2
    with app.extensions["lexgold"].sessions() as session:
        session.execute(update(m.Slot).values(expires_at=m.utcnow().replace(year=2000)))
        session.commit()
    second = app.test_client()
    enter(second, "?PROLIFIC_PID=second")
    assert page(second)[1] == 0                                  # starts afresh
    # the first holder returns: told clearly, nothing written into the new holder's place
    for response in (first.get("/task"),
                     first.post("/step", data=form(stale[1], stale[2], stale[3], 6))):
        assert response.status_code == 409
        assert "your place was given to another" in response.get_data(as_text=True)
    again = app.test_client()                                    # a fresh tab via the link
    again.get("/?PROLIFIC_PID=first&STUDY_ID=s&SESSION_ID=x")
    again.post("/resume")                                        # "continue in this browser"
    assert again.get("/task").status_code == 409
    posted, _, last = _finish(second)
    assert "TABS-DONE" in last
    with app.extensions["lexgold"].sessions() as session:
        raters = {r.external_id: r.id for r in session.scalars(select(m.Rater))}
        mine = dict(session.execute(select(m.Answer.item_id, m.Answer.rating)
                                    .where(m.Answer.rater_id == raters["first"])).all())
        theirs = dict(session.execute(select(m.Answer.item_id, m.Answer.rating)
                                      .where(m.Answer.rater_id == raters["second"])).all())
        slot = session.scalars(select(m.Slot)).one()
    assert mine == {i: 2 for i in ids}                           # the first's page kept
    assert theirs == posted                                      # the second's, complete
    assert slot.rater_id == raters["second"] and slot.status == "completed"


def _finish(client):
    posted = {}
    for _ in range(60):
        html, position, ids, checkpoint = page(client)
        if position is None:
            return posted, None, html
        client.post("/step", data=form(position, ids, checkpoint, 3))
        if not checkpoint:
            posted.update({i: 3 for i in ids})
    raise AssertionError("did not finish")
