"""Prolific, end to end (issue 28): the API client, sync, review, bonuses and the webhook,
against a local fake of Prolific's documented endpoints (tests/prolific_fake.py)."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime

import pandas as pd
import pytest
from click.testing import CliRunner
from prolific_fake import TOKEN, FakeProlific
from sqlalchemy import select
from test_annotate_app import (
    enter,
    make_app,
    page,
    past_checkpoints,
    protocol_variant,
    rate_all,
    usf_pair_file,
)

from lexgold.study import models as m
from lexgold.study.db import database_url
from lexgold.study.store import create_study
from lexgold.cli import cli
from lexgold.prolific import review
from lexgold.prolific.client import Client, ProlificError
from lexgold.prolific.webhook import signature

STUDY_ID = "5f0c1d2e3a4b5c6d7e8f9a0b"


def pid(letter: str) -> str:
    """A Prolific-shaped ID (24 hexadecimal digits) for the rater named ``letter``."""
    return (format(ord(letter), "x") * 12)[:24]


def session_id(letter: str) -> str:
    return ("5e" + format(ord(letter), "x") * 11)[:24]


def entry(letter: str, study: str = STUDY_ID) -> str:
    return f"?PROLIFIC_PID={pid(letter)}&STUDY_ID={study}&SESSION_ID={session_id(letter)}"


def checkpoint_choices(wrong: int):
    """Checkpoint answers: the first ``wrong`` wrong (0), the rest right (1: every SimLex
    checkpoint's answer)."""
    count = {"n": 0}

    def choose(_html):
        count["n"] += 1
        return 0 if count["n"] <= wrong else 1
    return choose


@pytest.fixture(scope="module")
def built(usf, tmp_path_factory):
    """A SimLex study (2 tranches x 3 places) that Prolific raters went through:
    A completed (checkpoints right), B completed with every checkpoint wrong, C completed with
    one wrong, D stopped after the checkpoints, F completed (but returned on Prolific), G
    completed with an ID Prolific does not know."""
    folder = tmp_path_factory.mktemp("prolific")
    pairs = usf_pair_file(usf, folder / "pairs.csv")
    protocol = protocol_variant(folder, "simlex", tranches=2, raters_per_tranche=3)
    path = folder / "study.sqlite"
    create_study(protocol, pairs, database_url(path), seed=1, entries={"platforms": ["prolific"], "strict_ids": True})
    app = make_app(database_url(path))
    for letter, wrong in (("A", 0), ("B", 99), ("C", 1), ("F", 0), ("G", 0)):
        client = app.test_client()
        enter(client, entry(letter))
        rate_all(client, choice=checkpoint_choices(wrong))
    client = app.test_client()
    enter(client, entry("D"))
    past_checkpoints(client)
    app.extensions["lexgold_engine"].dispose()
    return path


@pytest.fixture
def study(built, tmp_path):
    """A private copy of the built study (tests change it)."""
    copy = tmp_path / "study.sqlite"
    with sqlite3.connect(built) as source, sqlite3.connect(copy) as target:
        source.backup(target)
    return copy


def submission(letter: str, status: str) -> dict:
    return {"id": session_id(letter), "participant_id": pid(letter), "status": status,
            "study_id": STUDY_ID, "started_at": "2026-11-24T10:00:00Z"}


#: Prolific's side: E submitted without ever entering the site, F returned, G unknown to it
SUBMISSIONS = [submission("A", "AWAITING REVIEW"), submission("B", "AWAITING REVIEW"),
               submission("C", "AWAITING REVIEW"), submission("D", "AWAITING REVIEW"),
               submission("E", "AWAITING REVIEW"), submission("F", "RETURNED")]


@pytest.fixture
def fake():
    server = FakeProlific(SUBMISSIONS)
    yield server
    server.close()


@pytest.fixture
def run(fake, monkeypatch):
    monkeypatch.setenv("PROLIFIC_API_TOKEN", TOKEN)

    def invoke(*args):
        result = CliRunner().invoke(cli, ["prolific", *map(str, args), "--api-url", fake.url])
        return result
    return invoke


def stored_actions(path) -> pd.DataFrame:
    with sqlite3.connect(path) as connection:
        return pd.read_sql("SELECT key, action, state, bulk_id, amount_cents FROM "
                           "prolific_action ORDER BY key", connection)


# -- the client ---------------------------------------------------------------------------------

def test_client_pages_through_every_submission(fake):
    fake.submissions = [submission(chr(65 + i), "APPROVED") | {"id": f"s{i}"}
                        for i in range(7)]
    got = Client(TOKEN, fake.url, page_size=3).submissions(STUDY_ID)
    assert [s["id"] for s in got] == [f"s{i}" for i in range(7)]
    assert len(fake.calls_to("/api/v1/submissions/", "GET")) == 3       # pages of 3, 3, 1


def test_client_retries_429_and_5xx_with_backoff_and_retry_after(fake):
    waits = []
    fake.fail = [(429, {"Retry-After": "7"}), (503, {}), (502, {})]
    client = Client(TOKEN, fake.url, sleep=waits.append, backoff_s=0.5)
    assert len(client.submissions(STUDY_ID)) == len(SUBMISSIONS)
    assert waits == [7.0, 1.0, 2.0]         # Retry-After, then 0.5 * 2^1, 0.5 * 2^2
    fake.fail = [(500, {})] * 3
    with pytest.raises(ProlificError, match=r"^Prolific API: HTTP 500 on GET "
                                            r"/api/v1/submissions/ after 3 attempts"):
        Client(TOKEN, fake.url, sleep=waits.append, retries=2).submissions(STUDY_ID)


def test_client_errors_are_one_line_with_status_and_endpoint(fake, monkeypatch):
    with pytest.raises(ProlificError) as err:
        Client("wrong", fake.url, sleep=lambda s: None).submissions(STUDY_ID)
    assert str(err.value) == ("Prolific API: HTTP 401 on GET /api/v1/submissions/: "
                              "Invalid token.")
    with pytest.raises(ProlificError, match="HTTP 404 on POST /api/v1/submissions/nope/"):
        Client(TOKEN, fake.url).approve("nope")
    monkeypatch.delenv("PROLIFIC_API_TOKEN", raising=False)
    with pytest.raises(ProlificError, match="PROLIFIC_API_TOKEN"):
        Client(base_url=fake.url)
    with pytest.raises(ProlificError, match="unreachable"):
        Client(TOKEN, "http://127.0.0.1:9", retries=0).submissions(STUDY_ID)


# -- sync ---------------------------------------------------------------------------------------

def test_sync_confirms_raters_and_reports_every_mismatch(study, run):
    result = run("sync", study, "--prolific-study", STUDY_ID, "--json")
    assert result.exit_code == 0, result.output
    found = json.loads(result.output)
    # A, B, C, D and F entered and have a submission; G entered with an unknown ID
    assert found["confirmed"] == 5 and found["unknown_in_list"] == 1
    assert found["unconfirmed_raters"] == 1
    assert found["mismatches"] == {"submitted_unfinished": [pid("D")],
                                   "finished_unsubmitted": sorted([pid("F"), pid("G")]),
                                   "submitted_never_entered": [pid("E")],
                                   "entered_not_on_prolific": [pid("G")]}
    with sqlite3.connect(study) as connection:
        confirmed = dict(connection.execute("SELECT external_id, confirmed FROM rater"))
    assert confirmed == {pid(x): int(x != "G") for x in "ABCDFG"}
    text = run("sync", study)            # the Prolific study from the raters' STUDY_ID
    assert text.exit_code == 0 and "submitted never entered: 1" in text.output


def test_sync_without_a_token_is_one_line(study, monkeypatch):
    monkeypatch.delenv("PROLIFIC_API_TOKEN", raising=False)
    result = CliRunner().invoke(cli, ["prolific", "sync", str(study)])
    assert result.exit_code == 1
    assert result.output.startswith("Error: field 'PROLIFIC_API_TOKEN': no Prolific API token")
    assert len(result.output.strip().splitlines()) == 1


# -- review -------------------------------------------------------------------------------------

def test_policy_needs_two_failed_checks_in_a_study_of_five_minutes():
    assert review.required_failures(4.9) == 1
    assert review.required_failures(5.0) == 2
    assert review.required_failures(float("nan")) == 2
    subs = review.submissions_frame([submission(x, "AWAITING REVIEW") for x in "PQRS"]
                                    + [submission("T", "ACTIVE")])
    raters = pd.DataFrame(
        [(pid("P"), "", "", "done", True, 3, 1, 6.0), (pid("Q"), "", "", "done", True, 1, 1, 6.0),
         (pid("R"), "", "", "rating", False, 2, 2, float("nan")),
         (pid("S"), "", "", "screened_out", False, 0, 0, float("nan")),
         (pid("T"), "", "", "done", True, 3, 3, 6.0)], columns=review.RATER_COLUMNS)
    long = review.propose(subs, raters, 6.0).set_index("participant_id")["action"]
    assert long.to_dict() == {pid("P"): "approve", pid("Q"): "approve", pid("R"): "return",
                              pid("S"): "return", pid("T"): "none"}
    short = review.propose(subs, raters, 3.0).set_index("participant_id")["action"]
    assert short[pid("P")] == "reject" and short[pid("Q")] == "reject"


def test_review_is_a_dry_run_by_default(study, run, fake):
    result = run("review", study, "--study-minutes", 10, "--json")
    assert result.exit_code == 0, result.output
    found = json.loads(result.output)
    actions = {p["participant_id"]: p["action"] for p in found["proposals"]}
    # B failed every checkpoint: rejected; C failed one in a 10-minute study: approved
    assert actions == {pid("A"): "approve", pid("B"): "reject", pid("C"): "approve",
                       pid("D"): "return", pid("E"): "return", pid("F"): "none"}
    assert found["applied"] is None
    assert fake.calls_to("/api/v1/submissions/", "POST") == []
    assert stored_actions(study).empty
    short = json.loads(run("review", study, "--study-minutes", 3, "--json").output)
    assert {p["participant_id"]: p["action"] for p in short["proposals"]}[pid("C")] == "reject"


def test_review_apply_acts_once_and_records_it(study, run, fake):
    result = run("review", study, "--study-minutes", 10, "--apply")
    assert result.exit_code == 0, result.output
    assert "applied: 2 approved, 1 rejected, 2 returns asked" in result.output
    status = {s["participant_id"]: s["status"] for s in fake.submissions}
    assert status[pid("A")] == status[pid("C")] == "APPROVED"
    assert status[pid("B")] == "REJECTED"
    reject = fake.calls_to(session_id("B") + "/transition/")[0][2]
    assert reject["rejection_category"] == "FAILED_CHECK" and len(reject["message"]) >= 100
    returns = fake.calls_to("/request-return/")
    assert sorted(c[2]["request_return_reasons"][0] for c in returns) == sorted(
        [review.RETURN_UNFINISHED, review.RETURN_NO_DATA])
    stored = stored_actions(study)
    assert list(stored["key"]) == sorted(
        [f"approve:{session_id('A')}", f"approve:{session_id('C')}",
         f"reject:{session_id('B')}", f"return:{session_id('D')}", f"return:{session_id('E')}"])
    assert set(stored["state"]) == {"done"}
    calls = len(fake.calls)
    for s in fake.submissions:            # even if Prolific still listed them for review
        s["status"] = "AWAITING REVIEW" if s["participant_id"] != pid("F") else "RETURNED"
    again = run("review", study, "--study-minutes", 10, "--apply")
    assert again.exit_code == 0 and "applied: 0 approved, 0 rejected, 0 returns" in again.output
    assert [c for c in fake.calls[calls:] if c[0] == "POST"] == []


def test_review_apply_retries_only_what_failed(study, run, fake):
    fake.fail = [(400, {}, "POST")]       # the first action is refused: not retried at once
    result = run("review", study, "--study-minutes", 10, "--apply")
    assert result.exit_code == 1
    assert "1 actions failed on Prolific's API" in result.output
    stored = stored_actions(study)
    assert (stored["state"] == "pending").sum() == 1 and (stored["state"] == "done").sum() == 4
    posts = len(fake.calls_to("/api/v1/submissions/"))
    again = run("review", study, "--study-minutes", 10, "--apply")
    assert again.exit_code == 0, again.output
    assert len(fake.calls_to("/api/v1/submissions/")) == posts + 1
    assert set(stored_actions(study)["state"]) == {"done"}


# -- bonuses ------------------------------------------------------------------------------------

def test_bonus_rule_dry_run_then_pays_once(study, run, fake):
    result = run("bonus", study, "--rule", "completed=0.50")
    assert result.exit_code == 0, result.output
    # completed on the site and submitted: A, B, C (F returned, G has no submission)
    assert "3 bonuses, 1.50 in all" in result.output and "dry run" in result.output
    assert fake.bulk == {} and stored_actions(study).empty
    paid = run("bonus", study, "--rule", "completed=0.50", "--apply")
    assert paid.exit_code == 0, paid.output
    assert fake.paid == ["bulk1"]
    assert sorted(fake.bulk["bulk1"].splitlines()) == sorted(f"{pid(x)},0.50" for x in "ABC")
    stored = stored_actions(study)
    assert set(stored["state"]) == {"paid"} and set(stored["amount_cents"]) == {50}
    again = run("bonus", study, "--rule", "completed=0.50", "--apply")
    assert again.exit_code == 0 and "nothing to pay" in again.output
    assert "3 paid in this batch before" in again.output
    assert fake.paid == ["bulk1"] and len(fake.bulk) == 1


def test_bonus_csv_and_its_one_line_errors(study, run, fake, tmp_path):
    good = tmp_path / "bonus.csv"
    good.write_text(f"participant_id,amount\n{pid('A')},1.25\n{pid('C')},0.05\n")
    result = run("bonus", study, "--csv", good, "--apply", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["applied"]["cents"] == 130
    assert fake.bulk["bulk1"] == f"{pid('A')},1.25\n{pid('C')},0.05\n"
    for text, message in ((f"participant_id,amount\n{pid('A')},1.255\n", ":2: amount '1.255'"),
                          (f"participant_id,amount\n{pid('A')},20\n", "at most 10.00"),
                          (f"participant_id,amount\n{pid('A')},1\n{pid('A')},2\n",
                           ":3: participant " + pid("A") + " is listed twice"),
                          (f"participant_id,amount\n{pid('E')}!,1\n", "is not an ID"),
                          ("who,amount\nx,1\n", "expected a participant_id column"),
                          (f"participant_id,amount\n{'9' * 24},1\n",
                           "1 participants have no submission in the Prolific study")):
            bad = tmp_path / "bad.csv"
            bad.write_text(text)
            out = run("bonus", study, "--csv", bad, "--apply")
            assert out.exit_code == 1 and message in out.output, (text, out.output)
            assert len(out.output.strip().splitlines()) == 1
    assert len(fake.bulk) == 1
    assert run("bonus", study).exit_code == 2          # neither --csv nor --rule


def test_a_failed_payment_is_never_paid_again(study, run, fake):
    original = fake.handle

    def refuse_pay(request, method):      # the pay call fails once with a 503
        if "/pay/" in request.path and not fake.paid and not getattr(fake, "refused", False):
            fake.refused = True
            fake.calls.append((method, request.path, None))
            return fake.answer(request, 503, {"error": {"detail": "busy"}})
        return original(request, method)
    fake.handle = refuse_pay
    result = run("bonus", study, "--rule", "completed=0.50", "--apply")
    assert result.exit_code == 1
    assert "bulk bonus payment bulk1 was set up but paying it failed" in result.output
    assert len(fake.calls_to("/pay/")) == 1              # never retried: not idempotent
    assert set(stored_actions(study)["state"]) == {"set_up"}
    again = run("bonus", study, "--rule", "completed=0.50", "--apply")
    assert again.exit_code == 0 and "nothing to pay" in again.output
    assert len(fake.calls_to("/pay/")) == 1 and fake.paid == []


# -- the webhook --------------------------------------------------------------------------------

SECRET = "whsec-test-0123456789"
MOMENT = datetime(2026, 11, 24, 12, 0, 0)


@pytest.fixture
def site(usf, tmp_path):
    """A study with one place: X holds it, Y was turned away."""
    pairs = usf_pair_file(usf, tmp_path / "pairs.csv")
    protocol = protocol_variant(tmp_path, "simlex", tranches=1, raters_per_tranche=1)
    url = database_url(tmp_path / "hook.sqlite")
    create_study(protocol, pairs, url, entries={"platforms": ["prolific"], "strict_ids": True})
    app = make_app(url, PROLIFIC_WEBHOOK_SECRET=SECRET, CLOCK=lambda: MOMENT)
    holder, waiting = app.test_client(), app.test_client()
    enter(holder, entry("X"))
    past_checkpoints(holder)
    enter(waiting, entry("Y"))
    assert "all the participants" in waiting.get("/task").get_data(as_text=True)
    yield app, holder, waiting
    app.extensions["lexgold_engine"].dispose()


def post_hook(client, event: dict, *, at: float | None = None, secret: str = SECRET,
              body: bytes | None = None, content_type: str = "application/json"):
    body = json.dumps(event).encode() if body is None else body
    stamp = str(int(MOMENT.replace(tzinfo=UTC).timestamp() if at is None else at))
    return client.post("/hooks/prolific", data=body, content_type=content_type, headers={
        "X-Prolific-Request-Signature": signature(secret, stamp, body),
        "X-Prolific-Request-Timestamp": stamp})


def returned(letter: str, status: str = "RETURNED") -> dict:
    return {"resource_id": session_id(letter), "event_type": "submission.status.change",
            "participant_id": pid(letter), "status": status}


def slot_holder(app):
    with app.extensions["lexgold"].sessions() as session:
        return session.scalar(select(m.Rater.external_id).join(
            m.Slot, m.Slot.rater_id == m.Rater.id))


def test_webhook_frees_a_returned_participants_place_at_once(site):
    app, _, waiting = site
    hook = app.test_client()
    now = MOMENT.replace(tzinfo=UTC).timestamp()
    refused = [post_hook(hook, returned("X"), secret="another-secret"),
               post_hook(hook, returned("X"), at=now - 301),          # outside the window
               post_hook(hook, returned("X"), at=now + 301),
               hook.post("/hooks/prolific", json=returned("X"))]     # no signature at all
    assert [r.status_code for r in refused] == [401, 401, 401, 401]
    assert page(waiting)[1] is None and slot_holder(app) == pid("X")  # nothing freed
    ok = post_hook(hook, returned("X"), at=now - 299)
    assert ok.status_code == 200 and ok.get_json() == {"released": 1}
    assert post_hook(hook, returned("X")).get_json() == {"released": 0}   # a replay: no-op
    assert page(waiting)[1] == 0 and slot_holder(app) == pid("Y")         # Y got the place


def test_webhook_timed_out_frees_and_other_statuses_do_not(site):
    app, _, waiting = site
    hook = app.test_client()
    assert post_hook(hook, returned("X", "AWAITING REVIEW")).get_json() == {"released": 0}
    assert post_hook(hook, returned("Y", "TIMED-OUT")).get_json() == {"released": 0}
    assert slot_holder(app) == pid("X")
    assert post_hook(hook, returned("X", "TIMED-OUT")).get_json() == {"released": 1}
    assert page(waiting)[1] == 0


def test_webhook_validates_strictly_and_is_off_without_a_secret(site, tmp_path):
    app, _, _ = site
    hook = app.test_client()
    bad = [post_hook(hook, {}, body=b"not json"),
           post_hook(hook, returned("X") | {"participant_id": "x'; DROP"}),
           post_hook(hook, returned("X") | {"status": "GONE"}),
           post_hook(hook, returned("X"), content_type="text/plain"),
           post_hook(hook, {}, body=b"{" + b" " * 20000 + b"}")]
    assert [r.status_code for r in bad] == [400, 400, 400, 415, 413]
    other = post_hook(hook, {"resource_id": "s", "event_type": "study.status.change"})
    assert other.status_code == 200 and other.get_json() == {"released": 0}
    assert slot_holder(app) == pid("X")
    assert hook.get("/hooks/prolific").status_code == 405
    url = str(app.config["DATABASE_URL"])
    closed = make_app(url, CLOCK=lambda: MOMENT).test_client()     # no secret: no webhook
    assert post_hook(closed, returned("X")).status_code == 404
    guarded = make_app(url, CLOCK=lambda: MOMENT, WTF_CSRF_ENABLED=True,
                       PROLIFIC_WEBHOOK_SECRET=SECRET).test_client()
    assert post_hook(guarded, returned("X")).get_json() == {"released": 1}    # CSRF-exempt
    assert guarded.post("/consent", data={"consent": "yes"}).status_code == 400  # others not


# -- PostgreSQL -----------------------------------------------------------------------------------

@pytest.mark.postgres
def test_review_and_webhook_on_postgresql(postgres_url, usf, tmp_path, fake, run):
    from lexgold.study.db import postgres_schema

    pairs = usf_pair_file(usf, tmp_path / "pairs.csv")
    protocol = protocol_variant(tmp_path, "simlex", tranches=1, raters_per_tranche=3)
    with postgres_schema(postgres_url, "prolific") as (_, url):
        create_study(protocol, pairs, url, entries={"platforms": ["prolific"],
                                                    "strict_ids": True})
        app = make_app(url, PROLIFIC_WEBHOOK_SECRET=SECRET, CLOCK=lambda: MOMENT)
        for letter, wrong in (("A", 0), ("B", 99)):
            client = app.test_client()
            enter(client, entry(letter))
            rate_all(client, choice=checkpoint_choices(wrong))
        holder = app.test_client()
        enter(holder, entry("C"))             # a place for C, who then returns
        past_checkpoints(holder)
        fake.submissions = [submission("A", "AWAITING REVIEW"),
                            submission("B", "AWAITING REVIEW"), submission("C", "RETURNED")]
        result = run("review", url, "--study-minutes", 10, "--apply")
        assert result.exit_code == 0, result.output
        assert "applied: 1 approved, 1 rejected, 0 returns asked" in result.output
        again = run("review", url, "--study-minutes", 10, "--apply")
        assert "applied: 0 approved, 0 rejected" in again.output
        assert len(fake.calls_to("/transition/")) == 2
        assert post_hook(app.test_client(), returned("C")).get_json() == {"released": 1}
        with app.extensions["lexgold"].sessions() as session:
            slot = session.scalar(select(m.Slot).where(m.Slot.status == "active"))
            assert slot.expires_at == MOMENT
        app.extensions["lexgold_engine"].dispose()


def test_serve_reads_the_webhook_secret_from_a_file(study, tmp_path, monkeypatch):
    import lexgold.annotate.app as app_module

    made = []
    real = app_module.create_app

    def spy(settings):
        made.append(real(settings))
        return made[-1]
    monkeypatch.setattr(app_module, "create_app", spy)
    secret = tmp_path / "hook.secret"
    secret.write_text(SECRET + "\n")
    secret.chmod(0o600)                  # one others may read is refused (round 4)
    runner = CliRunner()
    served = runner.invoke(cli, ["serve", str(study), "--port", "0", "--check",
                                 "--prolific-webhook-secret-file", str(secret)],
                           env={"LEXGOLD_ADMIN_PASSWORD": "x"})
    # (the check's anonymous fetch of the entry page is refused by this Prolific-only study)
    assert "serving" in served.output and len(made) == 1
    assert made[-1].config["PROLIFIC_WEBHOOK_SECRET"] == SECRET
    secret.write_text("\n")
    empty = runner.invoke(cli, ["serve", str(study), "--port", "0", "--check",
                                "--prolific-webhook-secret-file", str(secret)],
                          env={"LEXGOLD_ADMIN_PASSWORD": "x"})
    assert empty.exit_code == 1 and empty.output == f"Error: {secret}: empty webhook secret\n"


def test_review_of_a_study_nobody_completed_uses_the_stricter_rule(study, run):
    with sqlite3.connect(study) as connection:
        connection.execute("UPDATE rater SET completed_at = NULL, stage = 'rating'")
    result = run("review", study, "--json")
    assert result.exit_code == 0, result.output
    found = json.loads(result.output)             # valid JSON: no NaN
    assert found["study_minutes"] is None
    assert {p["action"] for p in found["proposals"]} == {"return", "none"}
    assert "study length unknown" in run("review", study).output
