"""Security round 3, item 1: a platform ID is not a credential (docs/hardening.md, "Round 3").

Moving a rater to a new browser needs what only the participant's own platform link has
(Prolific STUDY_ID and SESSION_ID, MTurk hitId and assignmentId, as stored at enrolment) or a
one-time link from the admin view. Over HTTP against ``lexgold serve``, and with Flask's test
client for the consent race. Each test failed before the fix.
"""

import re

import httpx
import pytest
from werkzeug.security import generate_password_hash

from lexgold.annotate.app import create_app
from test_hardening_security import (CSRF, login, pairs, rater_client, serve,  # noqa: F401
                                     small_study)

pytestmark = pytest.mark.slow            # hardening: servers, faults and fuzzing of the site

VICTIM = "?PROLIFIC_PID=victim01&STUDY_ID=study01&SESSION_ID=session01"
REFUSED = "contact the researcher"


def position(client) -> str | None:
    found = re.search(r'name="position" value="(\d+)"', client.get("/task").text)
    return found.group(1) if found else None


def stranger_token(base) -> tuple[httpx.Client, str]:
    """A fresh browser and a valid CSRF token of its own session."""
    client = httpx.Client(base_url=base, timeout=30)
    return client, CSRF.search(client.get("/?PROLIFIC_PID=someoneelse").text).group(1)


def test_a_prolific_id_alone_does_not_take_over_a_rater(tmp_path, pairs, serve):
    """Before: ``?PROLIFIC_PID=<victim>`` alone -> "Continue in this browser?", and POST
    /resume took the victim's place (its page, its answers) and logged the victim out. The
    participant's own link still moves to a new browser."""
    _, base = serve(small_study(tmp_path, pairs))
    owner = rater_client(base, VICTIM)
    start = position(owner)
    assert start is not None
    stranger, token = stranger_token(base)
    for query in ("?PROLIFIC_PID=victim01",
                  "?PROLIFIC_PID=victim01&STUDY_ID=study01",
                  "?PROLIFIC_PID=victim01&STUDY_ID=study01&SESSION_ID=guessed1",
                  "?PROLIFIC_PID=victim01&STUDY_ID=other01&SESSION_ID=session01"):
        shown = stranger.get("/" + query)
        assert shown.status_code == 403 and REFUSED in shown.text, query
        assert 'action="/resume"' not in shown.text
        resumed = stranger.post("/resume", data={"csrf_token": token})
        assert resumed.status_code == 302 and resumed.headers["location"] == "/"
        assert stranger.get("/task").status_code == 302                 # no rater here
        assert stranger.post("/step", data={"csrf_token": token, "position": start,
                                             "choice": "0"}).status_code == 302
    assert position(owner) == start                                      # untouched, still in
    # the participant's own link (from the platform) still moves the rater, after asking
    laptop = httpx.Client(base_url=base, timeout=30)
    asked = laptop.get("/" + VICTIM)
    assert asked.status_code == 200 and "another browser" in asked.text
    token = CSRF.search(asked.text).group(1)
    assert laptop.post("/resume", data={"csrf_token": token}).status_code == 302
    assert position(laptop) == start
    assert owner.get("/task").status_code == 302                         # the old one let go


def test_an_mturk_worker_id_needs_its_hit_and_assignment(tmp_path, pairs, serve):
    _, base = serve(small_study(tmp_path, pairs))
    own = "?workerId=AWORKER0001&hitId=HIT0000001&assignmentId=ASSIGN0001"
    owner = rater_client(base, own)
    start = position(owner)
    stranger, _ = stranger_token(base)
    for query in ("?workerId=AWORKER0001",
                  "?workerId=AWORKER0001&hitId=HIT0000001",
                  "?workerId=AWORKER0001&hitId=HIT0000001&assignmentId=ASSIGN0002",
                  "?workerId=AWORKER0001&hitId=HIT0000001"
                  "&assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE"):
        shown = stranger.get("/" + query)
        assert shown.status_code == 403 and REFUSED in shown.text, query
    asked = stranger.get("/" + own)
    assert "another browser" in asked.text
    stranger.post("/resume", data={"csrf_token": CSRF.search(asked.text).group(1)})
    assert position(stranger) == start and owner.get("/task").status_code == 302


def admin_move(admin: httpx.Client, rater: str) -> httpx.Response:
    token = CSRF.search(admin.get("/admin/").text).group(1)
    return admin.post("/admin/move", data={"csrf_token": token, "rater": rater})


def test_the_admin_view_moves_a_rater_with_a_one_time_link(tmp_path, pairs, serve):
    """A participant who entered with the platform ID only (or lost the link) writes to the
    researcher, who makes a one-time link in the admin view."""
    _, base = serve(small_study(tmp_path, pairs))
    owner = rater_client(base, "?PROLIFIC_PID=lostlink01")     # no study or session IDs
    start = position(owner)
    anonymous = rater_client(base, "")
    outsider, token = stranger_token(base)
    refused = outsider.post("/admin/move", data={"csrf_token": token, "rater": "lostlink01"})
    assert refused.status_code == 302 and refused.headers["location"] == "/admin/login"
    admin = login(base)
    assert admin.post("/admin/move", data={"rater": "lostlink01"}).status_code == 400  # CSRF
    assert admin_move(admin, "nobody01").status_code == 404
    made = admin_move(admin, "lostlink01")
    assert made.status_code == 200
    link = re.search(r'<code id="link">([^<]+)</code>', made.text).group(1)
    path = link[link.index("/move/"):]
    laptop = httpx.Client(base_url=base, timeout=30)
    assert laptop.head(path).status_code == 200                  # HEAD and GET: asked only
    asked = laptop.get(path)
    assert "another browser" in asked.text and position(owner) == start
    token = CSRF.search(asked.text).group(1)
    assert laptop.post(path, data={"csrf_token": token}).status_code == 302
    assert position(laptop) == start
    assert owner.get("/task").status_code == 302                   # the old browser let go
    again = httpx.Client(base_url=base, timeout=30)
    token = CSRF.search(again.get(path).text).group(1)
    spent = again.post(path, data={"csrf_token": token})
    assert spent.status_code == 410 and "already been used" in spent.text
    assert position(laptop) == start
    # an anonymous rater is not moved (nothing tells the researcher who asks)
    public_id = re.findall(r"<tr><td>([^<]+)</td><td>anonymous</td>", admin.get("/admin/").text)
    assert len(public_id) == 1 and admin_move(admin, public_id[0]).status_code == 404
    assert position(anonymous) is not None


def test_consenting_in_two_browsers_at_once_asks_only_with_the_own_link(tmp_path, pairs):
    """Two browsers at the consent page with the same platform ID: the second to consent was
    asked to resume the first's rater with the platform ID alone."""
    url = small_study(tmp_path, pairs)
    app = create_app({"DATABASE_URL": url, "SESSION_COOKIE_SECURE": False,
                      "SECRET_KEY": "k" * 64,
                      "ADMIN_PASSWORD_HASH": generate_password_hash("admin-pw")})
    yes = {"consent": "yes", "native": "yes"}
    first, second, third = (app.test_client() for _ in range(3))
    tokens = [CSRF.search(client.get("/" + query).get_data(as_text=True)).group(1)
              for client, query in ((first, VICTIM), (second, "?PROLIFIC_PID=victim01"),
                                    (third, VICTIM))]
    assert first.post("/consent", data={**yes, "csrf_token": tokens[0]}).status_code == 302
    refused = second.post("/consent", data={**yes, "csrf_token": tokens[1]})
    assert refused.status_code == 403 and REFUSED in refused.get_data(as_text=True)
    assert second.post("/resume", data={"csrf_token": tokens[1]}).status_code == 302
    assert second.get("/task").status_code == 302
    asked = third.post("/consent", data={**yes, "csrf_token": tokens[2]})
    assert "another browser" in asked.get_data(as_text=True)
    assert third.post("/resume", data={"csrf_token": tokens[2]}).status_code == 302
    assert third.get("/task").status_code == 200 and first.get("/task").status_code == 302
