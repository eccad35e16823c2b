"""``lexgold machine rate`` (issue 45, item 2) against a fake chat-completions server on loopback
(bench/chat_fake.py): the prompt is the protocol's own, answers are parsed per line, wrong
answers are retried once then reported missing, 429/5xx/time-outs are retried with backoff, a
run stopped by a dead server resumes from its cache, the key is never written anywhere, and a
dry run sends nothing. No test sleeps: the client's sleep is injected, or retries are 0."""

from __future__ import annotations

import json
import logging
import re
import sqlite3
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from chat_fake import FakeChat  # noqa: E402

from lexgold.cli import cli
from lexgold.machine import prompt as prompts
from lexgold.machine.cache import cache_path
from lexgold.machine.client import ChatClient, EndpointError, RateLimiter, chat_url
from lexgold.machine.ratings import PROVENANCE_KEYS, read_machine, sidecar_path
from lexgold.protocols import load_protocol

KEY = "sk-test-Zq81secretKEY"
#: the machine's opinion of the test's pairs on SimLex's 0-6
TRUTH = {("cup", "mug"): 6, ("car", "petrol"): 1, ("cat", "dog"): 4, ("gem", "jewel"): 6,
         ("drizzle", "rain"): 5, ("envy", "jealousy"): 5, ("bread", "butter"): 2,
         ("sun", "chair"): 0, ("old", "new"): 1, ("buy", "purchase"): 6, ("run", "move"): 3,
         ("happy", "glad"): 5}
_SIMLEX_Q = re.compile(r"^(\d+)\. How similar are (\S+) and (\S+)\?$")


def simlex_answer(user: str, overrides: dict | None = None) -> str:
    """``N: rating`` per question, from TRUTH (or ``overrides``: pair -> the line's text)."""
    lines = []
    for line in user.splitlines():
        n, w1, w2 = _SIMLEX_Q.match(line).groups()
        text = (overrides or {}).get((w1, w2))
        lines.append(f"{n}: {TRUTH[w1, w2]}" if text is None else f"{n}: {text}")
    return "\n".join(lines)


@pytest.fixture
def fake():
    server = FakeChat(answer=simlex_answer)
    yield server
    server.close()


@pytest.fixture
def pairs(tmp_path):
    path = tmp_path / "pairs.csv"
    path.write_text("word1,word2\n" + "".join(f"{a},{b}\n" for a, b in TRUTH), encoding="utf-8")
    return path


@pytest.fixture
def run(tmp_path, fake, monkeypatch):
    monkeypatch.delenv("LEXGOLD_MACHINE_API_KEY", raising=False)
    monkeypatch.setattr("lexgold.machine.rate.clock",
                        lambda: datetime(2026, 11, 29, 12, 0, tzinfo=timezone.utc))

    def invoke(*args, out="machine.csv"):
        return CliRunner().invoke(cli, ["machine", "rate", *map(str, args), "--protocol",
                                        "simlex", "--endpoint", fake.url, "--model", "fake-1",
                                        "--out", str(tmp_path / out), "--quiet"])
    return invoke


def requests_sent(fake) -> int:
    return sum(c["path"].endswith("/chat/completions") for c in fake.calls)


# -- the prompt -----------------------------------------------------------------------------

def test_the_prompt_is_what_the_protocols_raters_read():
    from lexgold.machine.cli import rater_texts

    for name in ("simlex", "hyperlex"):
        study = load_protocol(name)["study"]
        texts = rater_texts(name)
        system = prompts.system_message(texts)
        for page in study["texts"]["instructions"]:
            assert page.strip() in system              # the pages, examples included, verbatim
        assert f"from {study['scale_min']} ({study['texts']['scale_min_label']}) to " \
               f"{study['scale_max']} ({study['texts']['scale_max_label']})" in system
    hyperlex = rater_texts("hyperlex")                  # its case and its verb question
    user = prompts.user_message(hyperlex, [{"word1": "dog", "word2": "animal", "pos": "N"},
                                           {"word1": "run", "word2": "move", "pos": "V"}])
    assert user == "1. Is DOG a type of ANIMAL?\n2. Is TO RUN a type of TO MOVE?"
    tr = rater_texts("tr9856")                          # binary: 1 related, 0 unrelated
    assert tr.scale == (0, 1) and "1 (related) or 0 (unrelated)" in prompts.system_message(tr)
    assert prompts.user_message(tr, [{"word1": "tax", "word2": "money", "topic": "T1"}]) \
        == "1. tax / money (Topic: T1)"
    titled = prompts.RaterTexts(**{**tr.__dict__, "topic_titles": {"T1": "We should tax sugar"}})
    assert prompts.user_message(titled, [{"word1": "tax", "word2": "money", "topic": "T1"}]) \
        == "1. tax / money (Topic: We should tax sugar)"
    assert prompts.prompt_sha256(rater_texts("simlex")) != prompts.prompt_sha256(hyperlex)


@pytest.mark.parametrize("text, n, expected", [
    ("5", 1, [5.0]),
    ("1: 5", 1, [5.0]),                                  # the numbered form for one pair
    ("Rating: 4.5 - fairly similar", 1, [4.5]),
    ("7", 1, [None]),                                   # off the scale: not clipped to 6
    ("-1", 1, [None]),
    ("very similar", 1, [None]),                        # no number: not 0
    ("", 1, [None]),
    ("1: 3\n2: 6\n3: 0", 3, [3.0, 6.0, 0.0]),
    ("3) 0\n1) 3\n2) 6", 3, [3.0, 6.0, 0.0]),           # numbered lines, any order
    ("1. 2\n2. nope\n3. 9", 3, [2.0, None, None]),
    ("Here you go:\n1: 2\n3: 4", 3, [2.0, None, 4.0]),  # a line left out is missing
    ("2\n5", 2, [2.0, 5.0]),                            # unnumbered, one line per question
    ("2 5", 2, [None, None]),
])
def test_answers_are_parsed_per_line_and_only_on_the_scale(text, n, expected):
    assert prompts.parse_answers(text, n, (0, 6)) == expected


# -- right answers --------------------------------------------------------------------------

def test_rates_a_two_column_csv_and_writes_what_read_machine_reads(run, fake, pairs, tmp_path):
    result = run(pairs)
    assert result.exit_code == 0, result.output
    assert requests_sent(fake) == len(TRUTH)            # one pair per request by default
    scores = read_machine(tmp_path / "machine.csv")
    assert scores.attrs["column"] == "rating"
    assert {(a, b): s for a, b, s in scores[["word1", "word2", "machine"]].itertuples(
        index=False)} == {k: float(v) for k, v in TRUTH.items()}
    record = json.loads(sidecar_path(tmp_path / "machine.csv").read_text())
    assert set(PROVENANCE_KEYS) <= set(record)
    assert record["model"] == "fake-1" and record["endpoint_host"] == fake.url.split("/")[2]
    assert record["date"] == "2026-11-29T12:00:00+00:00"
    assert record["prompt_sha256"] == prompts.prompt_sha256(
        __import__("lexgold.machine.cli", fromlist=["x"]).rater_texts("simlex"))
    assert record["parameters"] == {"protocol": "simlex", "temperature": 0.0, "samples": 1,
                                    "pairs_per_request": 1}
    body = fake.calls[0]["body"]
    assert body["model"] == "fake-1" and body["temperature"] == 0.0
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert fake.calls[0]["authorization"] is None       # no key set: no header
    assert not list(tmp_path.glob(".machine.csv*"))     # no temporary file left


def test_several_pairs_per_request_and_the_mean_of_samples(run, fake, pairs, tmp_path):
    asked: dict = {}

    def drifting(user):                                 # a pair's 2nd sample is 2 lower
        lines = []
        for line in user.splitlines():
            n, w1, w2 = _SIMLEX_Q.match(line).groups()
            asked[w1, w2] = asked.get((w1, w2), 0) + 1
            lines.append(f"{n}: {max(TRUTH[w1, w2] - 2 * (asked[w1, w2] - 1), 0)}")
        return "\n".join(lines)

    fake.answer = drifting
    result = run(pairs, "--pairs-per-request", 5, "--samples", 2, "--concurrency", 3)
    assert result.exit_code == 0, result.output
    assert requests_sent(fake) == 2 * 3                 # 12 pairs: 5 + 5 + 2, twice
    got = read_machine(tmp_path / "machine.csv").set_index(["word1", "word2"])["machine"]
    assert got["cup", "mug"] == 5.0 and got["sun", "chair"] == 0.0 and got["cat", "dog"] == 3.0
    raw = (tmp_path / "machine.csv").read_text().splitlines()
    assert raw[0] == "word1,word2,rating,samples" and raw[1] == "cup,mug,5,2"


def test_the_endpoint_may_be_given_with_its_path():
    assert chat_url("http://h:1/v1") == "http://h:1/v1/chat/completions"
    assert chat_url("http://h:1/api/chat/completions/") == "http://h:1/api/chat/completions"


# -- wrong answers --------------------------------------------------------------------------

def test_a_wrong_answer_is_asked_once_more_then_missing_never_zero(run, fake, pairs, tmp_path):
    wrong = {("cup", "mug"): "very similar", ("sun", "chair"): "9"}
    fixed_later = {("cat", "dog"): "dunno"}
    calls = {}

    def answer(user):
        key = tuple(_SIMLEX_Q.match(user.splitlines()[0]).groups()[1:])
        calls[key] = calls.get(key, 0) + 1
        return simlex_answer(user, wrong | (fixed_later if calls[key] == 1 else {}))

    fake.answer = answer
    result = run(pairs)
    assert result.exit_code == 0, result.output
    assert calls[("cup", "mug")] == calls[("sun", "chair")] == calls[("cat", "dog")] == 2
    assert requests_sent(fake) == len(TRUTH) + 3
    scores = read_machine(tmp_path / "machine.csv")
    rated = set(zip(scores["word1"], scores["word2"]))
    assert ("cup", "mug") not in rated and ("sun", "chair") not in rated
    assert ("cat", "dog") in rated and len(rated) == len(TRUTH) - 2
    assert "2 pairs unparsable twice, left without a rating: cup/mug, sun/chair" in result.output
    record = json.loads(sidecar_path(tmp_path / "machine.csv").read_text())
    assert record["missing"] == 2 and record["missing_pairs"] == [["cup", "mug"],
                                                                  ["sun", "chair"]]
    before = requests_sent(fake)                        # a missing answer is not asked again
    assert run(pairs).exit_code == 0 and requests_sent(fake) == before


def test_in_a_request_of_several_only_the_unparsable_pairs_are_asked_again(run, fake, pairs):
    fake.answer = lambda user: simlex_answer(user, {("gem", "jewel"): "?"}) \
        if "cup" in user else simlex_answer(user)
    result = run(pairs, "--pairs-per-request", 6)
    assert result.exit_code == 0, result.output
    users = [c["body"]["messages"][1]["content"] for c in fake.calls]
    assert len(users) == 3 and "1. How similar are gem and jewel?" in users
    assert "(3 requests sent," in result.output and "unparsable" not in result.output


# -- 429, 5xx, time-outs ----------------------------------------------------------------------

def test_429_with_retry_after_and_5xx_are_retried_with_backoff(fake):
    waits = []
    fake.fail = [(429, {"Retry-After": "7"}), (503, {}), (502, {})]
    with ChatClient(fake.url, "m", sleep=waits.append, backoff_s=0.5) as client:
        assert client.complete([{"role": "user", "content": "1. How similar are cup and mug?"}]) \
            == "1: 6"
    assert waits == [7.0, 1.0, 2.0]                     # Retry-After, then 0.5 x 2^1, 2^2
    fake.fail = [(500, {})] * 3
    with ChatClient(fake.url, "m", sleep=waits.append, retries=2) as client, \
            pytest.raises(EndpointError, match=r"^127\.0\.0\.1:\d+: no answer after 3 attempts "
                                               r"\(last: HTTP 500\)$"):
        client.complete([{"role": "user", "content": "1. How similar are cup and mug?"}])


def test_a_refusal_fails_at_once_in_one_line(fake):
    fake.fail = [(400, {})]
    with ChatClient(fake.url, "m", sleep=pytest.fail) as client, \
            pytest.raises(EndpointError, match=r"HTTP 400 from the chat-completions endpoint"):
        client.complete([{"role": "user", "content": "x"}])


def test_time_outs_are_retried(fake):
    import threading

    # The first answer is held until the client has given up on it and is backing off (its
    # ``sleep``), so the retry alone answers: no race between two timings on a loaded machine.
    released, first = threading.Event(), threading.Event()

    def answer(user):
        if not first.is_set():
            first.set()
            released.wait(60)                           # the first answer comes too late
        return simlex_answer(user)

    def back_off(seconds):
        waits.append(seconds)
        released.set()

    fake.answer, waits = answer, []
    with ChatClient(fake.url, "m", timeout_s=3, sleep=back_off) as client:
        assert client.complete([{"role": "user",
                                 "content": "1. How similar are cat and dog?"}]) == "1: 4"
    assert waits == [1.0]
    never = threading.Event()
    fake.answer = lambda user: never.wait(5) or "1: 1"
    try:
        with ChatClient(fake.url, "m", timeout_s=0.05, retries=1, sleep=waits.append) as client, \
                pytest.raises(EndpointError, match=r"last: timed out"):
            client.complete([{"role": "user", "content": "x"}])
    finally:
        never.set()


def test_the_rate_limit_spaces_requests():
    clock, waits = [100.0], []
    limiter = RateLimiter(4, sleep=waits.append, monotonic=lambda: clock[0])
    for _ in range(3):
        limiter.wait()
    assert waits == [0.25, 0.5]
    clock[0] = 200.0
    limiter.wait()
    assert waits == [0.25, 0.5]                         # later: no wait


# -- a server that dies mid-run ---------------------------------------------------------------

def test_a_run_stopped_by_a_dead_server_resumes_from_its_cache(run, fake, pairs, tmp_path):
    fake.die_after = 5
    result = run(pairs, "--concurrency", 1, "--retries", 0)
    assert result.exit_code == 1
    message = result.output.strip().splitlines()[-1]
    assert message.startswith("Error: 127.0.0.1:") and "connection failed" in message
    assert "5 of 12 answers are cached in machine.csv.cache.sqlite: run the same command " \
           "again to resume" in message
    assert not (tmp_path / "machine.csv").exists()      # whole or not at all
    assert not sidecar_path(tmp_path / "machine.csv").exists()
    fake.die_after, fake.calls = None, []
    result = run(pairs, "--concurrency", 1, "--retries", 0)
    assert result.exit_code == 0, result.output
    assert requests_sent(fake) == 7                     # only what was missing
    assert "7 requests sent, 5 answers from the cache" in result.output
    assert len(read_machine(tmp_path / "machine.csv")) == len(TRUTH)
    fake.calls = []                                     # a third run sends nothing
    assert run(pairs).exit_code == 0 and fake.calls == []


def test_the_cache_is_keyed_by_model_and_prompt(run, fake, pairs, tmp_path):
    assert run(pairs).exit_code == 0
    fake.calls = []
    result = CliRunner().invoke(cli, ["machine", "rate", str(pairs), "--protocol", "simlex",
                                      "--endpoint", fake.url, "--model", "fake-2", "--out",
                                      str(tmp_path / "machine.csv"), "--quiet"])
    assert result.exit_code == 0 and requests_sent(fake) == len(TRUTH)   # another model
    rows = sqlite3.connect(cache_path(tmp_path / "machine.csv")).execute(
        "SELECT model, count(*) FROM answers GROUP BY model ORDER BY model").fetchall()
    assert rows == [("fake-1", 12), ("fake-2", 12)]


# -- the key ----------------------------------------------------------------------------------

def test_the_key_is_sent_but_never_printed_logged_or_stored(run, fake, pairs, tmp_path,
                                                            monkeypatch, caplog):
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("LEXGOLD_MACHINE_API_KEY", KEY)
    fake.key = KEY
    result = run(pairs, "--pairs-per-request", 4)
    assert result.exit_code == 0, result.output
    assert {c["authorization"] for c in fake.calls} == {f"Bearer {KEY}"}
    fake.key = "another-key"                            # a 401 that echoes the key sent
    failed = run(pairs, out="other.csv")
    assert failed.exit_code == 1 and "HTTP 401" in failed.output
    assert "Incorrect API key provided: ***" in failed.output
    files = [p for p in tmp_path.iterdir() if p.is_file()]
    assert cache_path(tmp_path / "machine.csv") in files
    for text in [result.output, failed.output, caplog.text,
                 *(p.read_bytes().decode("latin-1") for p in files)]:
        assert KEY not in text and KEY[-10:] not in text
    assert "--api-key" not in CliRunner().invoke(cli, ["machine", "rate", "--help"]).output


# -- dry run, refusals ------------------------------------------------------------------------

def test_a_dry_run_prints_the_prompt_and_the_requests_and_sends_nothing(run, fake, pairs,
                                                                        tmp_path):
    result = run(pairs, "--dry-run", "--pairs-per-request", 5, "--samples", 3)
    assert result.exit_code == 0, result.output
    assert fake.calls == [] and list(tmp_path.iterdir()) == [pairs]
    assert "Two words are synonyms if they have very similar meanings." in result.output
    assert "1. How similar are cup and mug?\n2. How similar are car and petrol?" in result.output
    assert f"9 requests to {fake.url.split('/')[2]} for 36 answers (12 pairs x 3 samples, " \
           "0 cached); dry run: nothing sent" in result.output


def test_a_protocol_without_a_rating_per_pair_is_refused(run, fake, pairs, tmp_path):
    result = CliRunner().invoke(cli, ["machine", "rate", str(pairs), "--protocol",
                                      str(Path(load_protocol("simlex999_bws")["_path"])),
                                      "--endpoint", fake.url, "--model", "m",
                                      "--out", str(tmp_path / "m.csv")])
    assert result.exit_code == 1 and fake.calls == []
    assert "task 'bws' asks no rating per pair" in result.output
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\ncup,mug\n")
    result = run(bad)
    assert result.exit_code == 1 and "no word1, word2 columns" in result.output


def test_a_published_layout_with_its_parts_of_speech(fake, tmp_path):
    fake.answer = __import__("chat_fake").default_answer
    hyperlex = tmp_path / "hyperlex-sample.txt"
    hyperlex.write_text("WORD1 WORD2 POS TYPE AVG_SCORE AVG_SCORE_0_10 STDEV SCORES..\n"
                        "dog animal N hyp-1 5.75 9.58 0.42 6 6 5\n"
                        "run move V hyp-1 5.0 8.33 0.5 5 5 5\n"
                        "animal dog N rhyp-1 1.0 1.67 0.5 1 1 1\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["machine", "rate", str(hyperlex), "--protocol",
                                      "hyperlex", "--endpoint", fake.url, "--model", "m",
                                      "--out", str(tmp_path / "new" / "h.csv"), "--quiet",
                                      "--pairs-per-request", 5])
    assert result.exit_code == 0, result.output
    assert fake.calls[0]["body"]["messages"][1]["content"] == \
        "1. Is DOG a type of ANIMAL?\n2. Is TO RUN a type of TO MOVE?"
    assert "1 pairs given again in PAIRS (either order) asked once" in result.output
    assert len(read_machine(tmp_path / "new" / "h.csv")) == 2


def test_bad_endpoints_and_caches_are_one_line_errors(run, fake, pairs, tmp_path):
    for endpoint in ("localhost:8080/v1", "ftp://h/v1", "http:///v1"):
        result = CliRunner().invoke(cli, ["machine", "rate", str(pairs), "--protocol", "simlex",
                                          "--endpoint", endpoint, "--model", "m", "--out",
                                          str(tmp_path / "m.csv")])
        assert result.exit_code == 2 and "expected an http:// or https:// URL" in result.output
    cache_path(tmp_path / "machine.csv").write_text("not a database " * 100)
    result = run(pairs)
    assert result.exit_code == 1 and fake.calls == []
    assert result.output.strip().endswith("remove it to start afresh")
    assert "Traceback" not in result.output


def test_the_ratings_and_their_sidecar_are_written_both_or_neither(tmp_path):
    import pandas as pd

    from lexgold.machine.rate import write_ratings

    out = tmp_path / "machine.csv"
    out.write_text("earlier\n")
    frame = pd.DataFrame({"word1": ["a"], "word2": ["b"], "rating": [3.0]})
    with pytest.raises(TypeError):      # the sidecar fails after the table was written
        write_ratings(out, frame, {"model": object()})
    assert out.read_text() == "earlier\n"                      # the earlier file kept
    assert not sidecar_path(out).exists()
    assert [p.name for p in tmp_path.iterdir()] == ["machine.csv"]     # no temporary left
    write_ratings(out, frame, {"model": "m"})
    assert pd.read_csv(out)["rating"].tolist() == [3.0]
    assert json.loads(sidecar_path(out).read_text()) == {"model": "m"}
