"""Simulated data is labelled as simulated wherever it goes (issue 33): a rehearsal's raters are
stored with platform ``simulated`` and their times never lie in the future, Prolific commands
never take them for participants, ``lexgold simulate`` marks its rows, and a release built from
any simulated rating says so in README.md, report.md, report.json, croissant.json and
datapackage.json, while a release of people's ratings carries no such word."""

import gzip
import json
import sqlite3
from datetime import datetime, timedelta
from importlib.resources import files

import mlcroissant as mlc
import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from prolific_fake import TOKEN, FakeProlific
from test_annotate_app import enter, make_app, protocol_variant, rate_all, usf_pair_file

from lexgold.study.db import database_url
from lexgold.annotate.rehearse import rehearse
from lexgold.study.store import create_study
from lexgold.cli import cli
from lexgold.crowd.simulate import Crowd

#: the real time the tests' rehearsals run at (injected: no test reads the wall clock)
RUN_AT = datetime(2030, 1, 1, 12, 0, 0)
RELEASE_FILES = ("README.md", "report.md", "report.json", "croissant.json", "datapackage.json")


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def body(card: str) -> str:
    """A dataset card below its YAML header."""
    return card.split("---\n", 2)[2].lstrip("\n")


@pytest.fixture(scope="module")
def rehearsed(usf, tmp_path_factory):
    folder = tmp_path_factory.mktemp("rehearsed")
    pairs = usf_pair_file(usf, folder / "pairs.csv", counts=(("N", "N", 40), ("V", "V", 12)))
    protocol = protocol_variant(folder, "simlex", tranches=2, raters_per_tranche=6)
    protocol.write_text(protocol.read_text().replace("min_raters_per_pair = 36",
                                                     "min_raters_per_pair = 3"))
    db = folder / "study.sqlite"
    create_study(protocol, pairs, database_url(db), seed=1,
                 entries={"platforms": ["prolific"], "strict_ids": True})
    result = rehearse(database_url(db), rng=np.random.default_rng(3), crowd=Crowd(spammers=0.0),
                      now=lambda: RUN_AT)
    assert result["finished"] and result["simulated_hours"] > 0.1
    return folder, db, result


def stored_times(db) -> list[datetime]:
    with sqlite3.connect(db) as connection:
        rows = connection.execute(
            "SELECT answered_at FROM answer UNION ALL SELECT answered_at FROM checkpoint_answer "
            "UNION ALL SELECT created_at FROM rater UNION ALL SELECT completed_at FROM rater "
            "UNION ALL SELECT completed_at FROM slot UNION ALL SELECT claimed_at FROM slot").fetchall()
    return [datetime.fromisoformat(value) for (value,) in rows if value is not None]


def test_rehearsal_raters_are_stored_as_simulated(rehearsed):
    _, db, result = rehearsed
    with sqlite3.connect(db) as connection:
        platforms = dict(connection.execute("SELECT platform, count(*) FROM rater GROUP BY 1"))
        ids = [i for (i,) in connection.execute("SELECT external_id FROM rater")]
    assert platforms == {"simulated": result["raters"]}
    assert all(len(i) == 24 for i in ids)        # entered by the study's own (Prolific) link


def test_rehearsal_times_end_at_the_real_time_of_the_run(rehearsed):
    """The clock starts at the run's real time; the stored times are then moved back so that
    the last lies at the real time the run ended: none in the future, spacing kept."""
    _, db, result = rehearsed
    times = stored_times(db)
    assert max(times) <= RUN_AT
    assert max(times) > RUN_AT - timedelta(minutes=10)   # moved back no further than needed
    # every time moved by the same amount: the span is the simulated one (from the first
    # rater's arrival, a few minutes after the clock started, to the last completion)
    span = (max(times) - min(times)).total_seconds() / 3600
    assert result["simulated_hours"] - 0.1 < span <= result["simulated_hours"] + 0.01


def test_a_rehearsal_on_the_database_clock_stores_nothing_after_its_end(usf, tmp_path):
    pairs = usf_pair_file(usf, tmp_path / "pairs.csv", counts=(("N", "N", 30),))
    protocol = protocol_variant(tmp_path, "simlex", tranches=1, raters_per_tranche=3)
    db = tmp_path / "study.sqlite"
    create_study(protocol, pairs, database_url(db), seed=1)
    result = rehearse(database_url(db), rng=np.random.default_rng(1), crowd=Crowd(spammers=0.0))
    with sqlite3.connect(db) as connection:     # the same clock the rehearsal read
        (after,) = connection.execute("SELECT strftime('%Y-%m-%d %H:%M:%f', 'now')").fetchone()
    assert result["simulated_hours"] > 0.1       # simulated time outran the run
    assert max(stored_times(db)) <= datetime.fromisoformat(after)


def test_a_release_of_a_rehearsal_says_simulated_everywhere(rehearsed, tmp_path):
    _, db, _ = rehearsed
    done = invoke("process", db, "--out", tmp_path / "out", "--no-plots", "--bootstrap", "0")
    assert done.exit_code == 0, done.output
    assert "ratings are simulated" in done.output
    out = tmp_path / "out"
    card = (out / "README.md").read_text()
    assert body(card).startswith("> **Simulated ratings, not people's.** All ")
    # the study's stored protocol is named in words, not as a file name (issue 47)
    report_md = (out / "report.md").read_text()
    assert ", as stored in the study (sha256 " in report_md and "Protocol file" not in report_md
    assert "study`" not in report_md
    assert "not given by people" in card and "- simulated" in card.split("---\n", 2)[1]
    assert (out / "report.md").read_text().startswith("> **Simulated ratings, not people's.**")
    report = json.loads((out / "report.json").read_text())
    ratings = report["counts"]["stages"]["raw"]["ratings"]
    assert report["simulated"] == {"ratings": ratings, "of": ratings, "share": 1.0,
                                   "raters": report["counts"]["stages"]["raw"]["raters"]}
    meta = json.loads((out / "croissant.json").read_text())
    assert meta["rai:dataCollectionType"] == ["Simulation"]
    assert meta["description"].startswith("Simulated data: all ")
    assert meta["rai:dataCollection"].startswith("Simulated data: all ")
    assert "simulated raters" in meta["rai:dataAnnotationPlatform"][0]
    mlc.Dataset(jsonld=out / "croissant.json")           # still valid Croissant
    package = json.loads((out / "datapackage.json").read_text())
    assert package["description"].startswith("Simulated data: all ")
    # collection times: those of the rehearsal, none after the run's real time
    first, last = (datetime.fromisoformat(d.rstrip("Z")) for d in meta["rai:dataCollectionTimeFrame"])
    assert first <= last <= RUN_AT
    assert [report["dates"]["first"], report["dates"]["last"]] == meta["rai:dataCollectionTimeFrame"]
    assert f"- Ratings simulated: {report['dates']['first']}" in card


def real_ratings(tmp_path):
    """WordSim-353 set 1 (13 real raters, shipped: lexgold/resources/data/SOURCES.toml) in the
    long format, by `lexgold ratings import`."""
    wide = tmp_path / "ws1.csv"
    source = files("lexgold.resources") / "data" / "wordsim353_set1_set1.csv.gz"
    wide.write_bytes(gzip.decompress(source.read_bytes()))
    done = invoke("ratings", "import", wide, "--out", tmp_path / "ws1_long.csv")
    assert done.exit_code == 0, done.output
    return tmp_path / "ws1_long.csv"


def test_a_release_of_real_ratings_has_no_label(tmp_path):
    done = invoke("process", real_ratings(tmp_path), "--protocol", "plain", "--scale", 0, 10,
                  "--out", tmp_path / "out", "--no-plots", "--bootstrap", "0")
    assert done.exit_code == 0, done.output
    assert "simulated" not in done.output
    for name in RELEASE_FILES:
        assert "imulat" not in (tmp_path / "out" / name).read_text(), name
    meta = json.loads((tmp_path / "out" / "croissant.json").read_text())
    # how they were collected is the authors' to state ([process.release] collection_type)
    assert meta["rai:dataCollectionType"] == ["not stated"] and "rai:hasSyntheticData" not in meta
    assert "simulated" not in pd.read_csv(tmp_path / "out" / "gold.csv").columns


def test_simulate_marks_its_rows_and_import_keeps_the_mark(tmp_path):
    done = invoke("simulate", "--protocol", "simlex", "--n-pairs", 20, "--raters-per-tranche",
                  2, "--out", tmp_path / "sim.csv", "--seed", 1)
    assert done.exit_code == 0, done.output
    sim = pd.read_csv(tmp_path / "sim.csv")
    assert set(sim["platform"]) == {"simulated"}
    again = invoke("ratings", "import", tmp_path / "sim.csv", "--out", tmp_path / "again.csv")
    assert again.exit_code == 0, again.output
    assert set(pd.read_csv(tmp_path / "again.csv")["platform"]) == {"simulated"}


def test_a_release_of_mixed_ratings_gives_the_simulated_share(tmp_path):
    """WordSim-353's real raters (0-10, put on 0-6) and simulated raters in one file."""
    real = pd.read_csv(real_ratings(tmp_path)).assign(rating=lambda f: f["rating"] * 0.6)
    done = invoke("simulate", "--protocol", "simlex", "--n-pairs", 20, "--raters-per-tranche",
                  2, "--out", tmp_path / "sim.csv", "--seed", 2)
    assert done.exit_code == 0, done.output
    sim = pd.read_csv(tmp_path / "sim.csv")
    sim = sim.loc[sim["kind"] == "unique", real.columns.tolist() + ["platform"]]
    mixed = pd.concat([real, sim], ignore_index=True)
    mixed.to_csv(tmp_path / "mixed.csv", index=False)
    done = invoke("process", tmp_path / "mixed.csv", "--protocol", "plain", "--scale", 0, 6,
                  "--out", tmp_path / "out", "--no-plots", "--bootstrap", "0",
                  "--allow-incomplete")
    assert done.exit_code == 0, done.output
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    n = len(sim)
    assert 0 < n < len(mixed)
    assert report["simulated"] == {"ratings": n, "of": len(mixed),
                                   "share": round(n / len(mixed), 4),
                                   "raters": sim["rater_id"].nunique()}
    assert body((tmp_path / "out" / "README.md").read_text()).startswith(
        f"> **Partly simulated ratings.** {n} of the {len(mixed)} ratings ")
    meta = json.loads((tmp_path / "out" / "croissant.json").read_text())
    assert meta["rai:dataCollectionType"] == ["not stated", "Simulation"]
    assert meta["rai:hasSyntheticData"] is True
    assert pd.read_csv(tmp_path / "out" / "gold.csv")["simulated"].all()


def test_simulated_share_counts_ratings_not_checkpoints():
    from lexgold.process.simulated_label import simulated_ratings

    frame = pd.DataFrame({"rater_id": list("aabbc"),
                          "kind": ["unique", "checkpoint", "unique", "unique", "unique"],
                          "platform": ["simulated", "simulated", "prolific", "", " Simulated "]})
    assert simulated_ratings(frame) == {"ratings": 2, "of": 4, "share": 0.5, "raters": 2}
    assert simulated_ratings(frame.drop(columns="platform")) is None


def test_a_bws_release_of_simulated_answers_says_so(tmp_path):
    pd.DataFrame({"word1": [f"w{i}a" for i in range(32)], "word2": [f"w{i}b" for i in range(32)],
                  "pos": "N"}).to_csv(tmp_path / "pairs.csv", index=False)
    done = invoke("simulate", "--protocol", "simlex_bws", "--pairs", tmp_path / "pairs.csv",
                  "--raters-per-tranche", 4, "--out", tmp_path / "bws.csv", "--seed", 1)
    assert done.exit_code == 0, done.output
    answers = pd.read_csv(tmp_path / "bws.csv")
    assert set(answers["platform"]) == {"simulated"}
    done = invoke("process", tmp_path / "bws.csv", "--protocol", "simlex_bws", "--out", tmp_path / "out",
                  "--bootstrap", "0", "--allow-incomplete")
    assert done.exit_code == 0, done.output
    out = tmp_path / "out"
    assert body((out / "README.md").read_text()).startswith(
        "> **Simulated Best-Worst answers, not people's.** All ")
    report = json.loads((out / "report.json").read_text())
    tuples = answers.loc[answers["kind"] != "checkpoint", ["rater_id", "tuple_id"]]
    assert report["simulated"]["ratings"] == len(tuples.drop_duplicates())
    assert report["simulated"]["share"] == 1.0
    assert json.loads((out / "datapackage.json").read_text())["description"].startswith(
        "Simulated data: all ")


# -- Prolific never takes a simulated rater for a participant -----------------------------------

STUDY_ID = "5f0c1d2e3a4b5c6d7e8f9a0b"


def pid(letter: str) -> str:
    return (format(ord(letter), "x") * 12)[:24]


def session_id(letter: str) -> str:
    return ("5e" + format(ord(letter), "x") * 11)[:24]


def test_prolific_commands_skip_simulated_raters(usf, tmp_path, monkeypatch):
    """A real participant A and a simulated rater that entered with the Prolific ID of
    participant E (who submitted on Prolific but never came to the site): sync confirms only A,
    review approves only A and asks E to return, a completion bonus goes to A only."""
    pairs = usf_pair_file(usf, tmp_path / "pairs.csv")
    protocol = protocol_variant(tmp_path, "simlex", tranches=1, raters_per_tranche=3)
    db = tmp_path / "study.sqlite"
    create_study(protocol, pairs, database_url(db), seed=1,
                 entries={"platforms": ["prolific"], "strict_ids": True})
    for letter, config in (("A", {}), ("E", {"SIMULATED_RATERS": True})):
        app = make_app(database_url(db), **config)
        client = app.test_client()
        enter(client, f"?PROLIFIC_PID={pid(letter)}&STUDY_ID={STUDY_ID}"
                      f"&SESSION_ID={session_id(letter)}")
        rate_all(client)
        app.extensions["lexgold_engine"].dispose()
    with sqlite3.connect(db) as connection:
        assert dict(connection.execute("SELECT external_id, platform FROM rater")) == {
            pid("A"): "prolific", pid("E"): "simulated"}
    server = FakeProlific([{"id": session_id(x), "participant_id": pid(x),
                            "status": "AWAITING REVIEW", "study_id": STUDY_ID,
                            "started_at": "2026-11-24T10:00:00Z"} for x in "AE"])
    monkeypatch.setenv("PROLIFIC_API_TOKEN", TOKEN)
    try:
        def run(*args):
            result = CliRunner().invoke(cli, ["prolific", *map(str, args), "--api-url",
                                              server.url, "--prolific-study", STUDY_ID])
            assert result.exit_code == 0, result.output
            return result.output
        synced = json.loads(run("sync", db, "--json"))
        assert synced["confirmed"] == 1
        assert synced["mismatches"]["submitted_never_entered"] == [pid("E")]
        proposals = json.loads(run("review", db, "--study-minutes", 10, "--json"))["proposals"]
        assert {p["participant_id"]: p["action"] for p in proposals} == {
            pid("A"): "approve", pid("E"): "return"}
        assert "1 bonuses, 0.50 in all" in run("bonus", db, "--rule", "completed=0.50")
    finally:
        server.close()
    # nor does the admin view's move link name it by that ID
    app = make_app(database_url(db))
    admin = app.test_client()
    assert admin.post("/admin/login", data={"password": "s3cret"}).status_code == 302
    assert admin.post("/admin/move", data={"rater": pid("E")}).status_code == 404
    assert admin.post("/admin/move", data={"rater": pid("A")}).status_code == 200
    app.extensions["lexgold_engine"].dispose()


def test_every_command_reading_simulated_data_says_so(rehearsed, tmp_path):
    """Issue 47: the label travels past `process`: `agree` on a rehearsal's export, `plan` on
    the rehearsed study (its cost line), `evaluate --gold` and `crosslingual` on its gold."""
    from lexgold.simulated import note

    _, db, _ = rehearsed
    said = note("these ratings are")
    assert invoke("study", "export", db, "--out", tmp_path / "ratings.csv").exit_code == 0
    agree = invoke("agree", tmp_path / "ratings.csv", "--json", "--min-overlap", 2)
    assert agree.exit_code == 0, agree.output
    assert said in agree.output
    figures = json.loads(agree.output.strip().splitlines()[-1])
    assert figures["simulated"]["share"] == 1.0
    plan = invoke("plan", db, "--pay-per-hour", 12, "--bootstrap", 0, "--max-raters", 6, "--target", 0.6,
                  "--quiet")
    assert plan.exit_code == 0, plan.output
    assert note("the pilot's ratings are") in plan.output
    cost = next(line for line in plan.output.splitlines() if "cost at 12 per hour" in line)
    assert "measured on simulated raters, not people" in cost
    done = invoke("process", db, "--out", tmp_path / "out", "--no-plots", "--bootstrap", "0")
    assert done.exit_code == 0, done.output
    gold = tmp_path / "out" / "gold.csv"
    assert pd.read_csv(gold)["simulated"].all()
    table = pd.read_csv(gold)
    table[["word1", "word2"]].assign(number=table["SimLex999"] * 0.5 + 1).to_csv(
        tmp_path / "scores.csv", index=False)
    evaluate = invoke("evaluate", "--gold", gold, "--scores", tmp_path / "scores.csv")
    assert evaluate.exit_code == 0, evaluate.output
    assert note(f"{gold}: this gold standard's ratings are") in evaluate.output
    # crosslingual: the same gold as two languages, pair ids from its rows
    for lang in ("it", "es"):
        table.assign(pair_id=range(len(table)))[["pair_id", "word1", "word2", "SimLex999",
                                                 "simulated"]].rename(
            columns={"SimLex999": "score"}).to_csv(tmp_path / f"{lang}.csv", index=False)
    cross = invoke("crosslingual", "--gold", f"it={tmp_path / 'it.csv'}", "--gold",
                   f"es={tmp_path / 'es.csv'}", "--out", tmp_path / "xling", "--scale", 0, 10,
                   "--quiet")
    assert cross.exit_code == 0, cross.output
    assert note(f"--gold it={tmp_path / 'it.csv'}: its ratings are") in cross.output
    # people's gold: no word of it (test_a_release_of_real_ratings_has_no_label for process)
    table.drop(columns="simulated").to_csv(tmp_path / "people.csv", index=False)
    people = invoke("evaluate", "--gold", tmp_path / "people.csv", "--scores",
                    tmp_path / "scores.csv")
    assert people.exit_code == 0 and "simulated" not in people.output


def test_a_rehearsed_studys_admin_page_shows_a_banner(rehearsed, usf, tmp_path):
    _, db, result = rehearsed
    admin = make_app(database_url(db)).test_client()
    admin.post("/admin/login", data={"password": "s3cret"})
    html = admin.get("/admin/").get_data(as_text=True)
    assert 'id="simulated-banner"' in html
    assert f"{result['raters']} of its raters are simulated" in html
    # a study of people has none
    pairs = usf_pair_file(usf, tmp_path / "pairs.csv", counts=(("N", "N", 30),))
    protocol = protocol_variant(tmp_path, "simlex", tranches=1, raters_per_tranche=3)
    create_study(protocol, pairs, database_url(tmp_path / "people.sqlite"), seed=1)
    people = make_app(database_url(tmp_path / "people.sqlite")).test_client()
    people.post("/admin/login", data={"password": "s3cret"})
    assert 'id="simulated-banner"' not in people.get("/admin/").get_data(as_text=True)
