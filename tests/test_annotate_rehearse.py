"""`lexgold study rehearse`: simulated raters through the study's own site, and `lexgold process`
reading the study (or its export with the study's description) as the single source of truth."""

import json
import shutil

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from sqlalchemy import func, select

from lexgold.study import models as m
from lexgold.study.db import database_url, make_engine, session_factory
from lexgold.annotate.rehearse import read_page, rehearse
from lexgold.study.store import create_study
from lexgold.study.export import export_ratings
from lexgold.cli import cli
from lexgold.errors import InputError
from lexgold.crowd.simulate import Crowd
from test_annotate_app import protocol_variant, tr9856_pair_file, usf_pair_file

pytestmark = pytest.mark.slow            # rehearsals: simulated raters through the site


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def stored(url):
    engine = make_engine(url)
    with session_factory(engine, write=False)() as session:
        frame = export_ratings(session, complete_only=True)
        slots = session.execute(select(m.Slot.status, func.count())
                                .group_by(m.Slot.status)).all()
    engine.dispose()
    return frame, dict(slots)


@pytest.fixture(scope="module")
def pairs(usf, tmp_path_factory):
    return usf_pair_file(usf, tmp_path_factory.mktemp("pairs") / "pairs.csv",
                         counts=(("N", "N", 60), ("V", "V", 20), ("A", "AJ", 12)))


# -- the page reader ---------------------------------------------------------------------------

def test_read_page_reads_the_site_forms():
    html = ('<form method="post" action="/step" class="once"><input type="hidden" '
            'name="csrf_token" value="a&amp;b"><input type="hidden" name="position" value="3">'
            '<progress class="bar" value="3" max="17"></progress>'
            '<input type="hidden" name="t12" value="" class="rt">'
            '<input type="hidden" name="r12" value="" class="rating-value">'
            '<input type="radio" name="r13" value="1"><input type="radio" name="r13" value="0">'
            '</form>')
    page = read_page(html)
    assert page.action == "/step" and page.total == 17 and page.items == [12, 13]
    assert page.fields == {"csrf_token": "a&b", "position": "3"}
    check = read_page('<form action="/step"><input type="hidden" name="t" value="">'
                      '<input type="radio" name="choice" value="2"> <span class="pairtext">'
                      'bread &ndash; toast</span></form>')
    assert check.choices == [2] and check.options == ["bread \u2013 toast"]


# -- rehearsals --------------------------------------------------------------------------------

def test_rehearsal_fills_every_place_through_the_site(tmp_path, pairs):
    """Every place is completed through the site's pages: the answers stored are the study's
    designed showings, per rater, with checkpoints; the clock is simulated (minutes apart)."""
    protocol = protocol_variant(tmp_path, "simlex", tranches=2, raters_per_tranche=6)
    url = database_url(tmp_path / "study.sqlite")
    design = create_study(protocol, pairs, url, seed=1)
    result = rehearse(url, rng=np.random.default_rng(1), crowd=Crowd(spammers=0.0))
    assert result["finished"] and result["places"] == 12 and result["top_up_places"] == 0
    assert result["completed"] == 12 and result["raters"] >= 12
    ratings, slots = stored(url)
    assert slots == {"completed": 12}
    per_rater = ratings[ratings["kind"] != "checkpoint"].groupby("rater_id").size()
    showings = {row["tranche"]: row["showings"] for row in design["per_tranche"]}
    tranche = ratings.groupby("rater_id")["tranche"].first()
    assert (per_rater == tranche.map(showings)).all()
    checks = ratings[ratings["kind"] == "checkpoint"]
    assert len(checks) == 12 * 5 and checks["rating"].mean() > 0.9   # honest raters
    # two checks after the instructions (section 3.2), then one per part of speech
    assert checks.groupby("rater_id")["pos"].agg(list).map(
        lambda p: p == ["start", "start", "N", "A", "V"]).all()
    times = pd.to_datetime(ratings["answered_at"])
    assert (times.max() - times.min()).total_seconds() > 600         # simulated time
    assert result["pages"] == sum(r["groups"] + r["checkpoints"]
                                  for r in design["per_tranche"]) * 6
    with pytest.raises(InputError, match="raters have already entered this study"):
        rehearse(url, rng=np.random.default_rng(1))


def test_rehearsal_is_reproducible(tmp_path, pairs):
    protocol = protocol_variant(tmp_path, "simlex", tranches=2, raters_per_tranche=3)
    runs = []
    for name in ("a", "b"):
        url = database_url(tmp_path / f"{name}.sqlite")
        create_study(protocol, pairs, url, seed=4)
        rehearse(url, rng=np.random.default_rng(7))
        ratings, _ = stored(url)
        runs.append(ratings.sort_values(["tranche", "answered_at", "word1", "word2"],
                                        kind="stable")[["tranche", "word1", "word2", "rating",
                                                        "kind"]].reset_index(drop=True))
    pd.testing.assert_frame_equal(runs[0], runs[1])


def test_quitters_places_go_to_later_raters(tmp_path, pairs):
    """A rater who closes the page keeps its place until the claim expires; a later rater
    then gets it, and the study still completes every place."""
    protocol = protocol_variant(tmp_path, "simlex", tranches=2, raters_per_tranche=4)
    url = database_url(tmp_path / "study.sqlite")
    create_study(protocol, pairs, url, seed=1)
    result = rehearse(url, rng=np.random.default_rng(3),
                      crowd=Crowd(spammers=0.0, quitters=0.5))
    assert result["quit"] > 0 and result["finished"]
    assert result["completed"] == 8 and result["raters"] >= 8 + result["quit"]
    who = result["who"]
    assert (who.loc[who["quit"], "outcome"] == "quit").all()
    _, slots = stored(url)
    assert slots == {"completed": 8}
    assert result["simulated_hours"] > 1     # a quitter's claim lasts claim_timeout_s (1 h)


def test_hyperlex_rehearsal_tops_up_until_every_pair_has_ten_accepted(tmp_path, usf):
    """HyperLex section 4.4: places are added until every pair has 10 accepted raters;
    `lexgold process STUDY` then releases every pair with default settings."""
    pairs = usf_pair_file(usf, tmp_path / "pairs.csv", counts=(("N", "N", 90), ("V", "V", 30)))
    protocol = protocol_variant(tmp_path, "hyperlex", tranches=2)
    url = database_url(tmp_path / "study.sqlite")
    create_study(protocol, pairs, url, seed=2)
    # most spammers fail the qualification question (two guesses of four options: 7 chances in
    # 16 to pass it, [study.qualification] attempts = 2); those who pass
    # take places and are excluded afterwards, so the site tops their tranches up
    result = rehearse(url, rng=np.random.default_rng(5), crowd=Crowd(spammers=0.6))
    assert result["finished"] and result["top_up_places"] > 0
    assert result["screened_out"] > 0          # spammers fail the qualification question
    out = tmp_path / "gold"
    done = invoke("process", tmp_path / "study.sqlite", "--out", out, "--no-plots",
                  "--bootstrap", "0")
    assert done.exit_code == 0, done.output
    report = json.loads((out / "report.json").read_text())
    assert report["ratings_source"] == "study" and report["study"]["pairs"] == 120
    assert report["counts"]["released_pairs"] == 120
    assert report["counts"]["min_raters_per_pair"] >= 10
    gold = pd.read_csv(out / "gold.csv")
    assert len(gold) == 120 and gold["AVG_SCORE_0_10"].between(0, 10).all()


def test_tr9856_rehearsal_answers_binary_questions(tmp_path, usf):
    pairs = tr9856_pair_file(usf, tmp_path / "pairs.csv")
    url = database_url(tmp_path / "study.sqlite")
    create_study("tr9856", pairs, url, seed=1)
    truth = pd.read_csv(pairs).rename(columns={"term1": "word1", "term2": "word2"})
    truth["truth"] = np.where(np.arange(len(truth)) % 2, 1.0, 0.0)
    result = rehearse(url, rng=np.random.default_rng(2), crowd=Crowd(spammers=0.0),
                      truth=truth)
    assert result["finished"]
    ratings, _ = stored(url)
    means = ratings.groupby(["word1", "word2"])["rating"].mean()
    expected = truth.set_index(["word1", "word2"])["truth"]
    assert (means == expected[means.index]).all()        # honest raters, certain truths
    done = invoke("process", tmp_path / "study.sqlite", "--out", tmp_path / "gold",
                  "--no-plots", "--bootstrap", "0")        # the packaged protocol as it is
    assert done.exit_code == 0, done.output
    gold = pd.read_csv(tmp_path / "gold" / "gold.csv")
    assert len(gold) == len(truth) and set(gold["topic"]) == set(truth["topic"])
    scores = gold.set_index(["term1", "term2"])["score"]
    assert (scores == expected.rename_axis(["term1", "term2"])[scores.index]).all()


# -- process reads the study -------------------------------------------------------------------

@pytest.fixture(scope="module")
def rehearsed(usf, tmp_path_factory, pairs):
    folder = tmp_path_factory.mktemp("rehearsed")
    protocol = protocol_variant(folder, "simlex", tranches=3, raters_per_tranche=8)
    text = protocol.read_text().replace("min_raters_per_pair = 36", "min_raters_per_pair = 4")
    protocol.write_text(text)
    db = folder / "study.sqlite"
    create_study(protocol, pairs, database_url(db), seed=1)
    rehearse(database_url(db), rng=np.random.default_rng(1), crowd=Crowd(spammers=0.0))
    return folder, db


def test_process_reads_the_study_and_its_export_alike(rehearsed, tmp_path):
    folder, db = rehearsed
    direct = invoke("process", db, "--out", tmp_path / "a", "--no-plots", "--bootstrap", "0")
    assert direct.exit_code == 0, direct.output
    export = invoke("study", "export", db, "--out", tmp_path / "ratings.csv")
    assert export.exit_code == 0, export.output
    description = json.loads((tmp_path / "ratings.study.json").read_text())
    assert len(description["pairs"]) == 92 and description["language"] == "en"
    assert description["protocol"]["sha256"] and description["ratings"]["complete_only"]
    exported = invoke("process", tmp_path / "ratings.csv", "--out", tmp_path / "b",
                      "--no-plots", "--bootstrap", "0")
    assert exported.exit_code == 0, exported.output
    a = pd.read_csv(tmp_path / "a" / "gold.csv")
    b = pd.read_csv(tmp_path / "b" / "gold.csv")
    pd.testing.assert_frame_equal(a, b)
    assert len(a) == 92
    report = json.loads((tmp_path / "b" / "report.json").read_text())
    assert report["ratings_source"] == "export" and report["norms"]["language"] == "en"


def test_export_missing_a_tranche_is_not_released(rehearsed, tmp_path):
    """docs/annotate.md step 5 without --pairs: an export that lost one tranche's rows stops
    with the number of the study's pairs that have no rating."""
    _, db = rehearsed
    assert invoke("study", "export", db, "--out", tmp_path / "ratings.csv").exit_code == 0
    ratings = pd.read_csv(tmp_path / "ratings.csv", keep_default_na=False)
    kept = ratings[ratings["tranche"] != 2]
    kept.to_csv(tmp_path / "ratings.csv", index=False)
    lost = (set(zip(ratings["word1"], ratings["word2"]))
            - set(zip(kept["word1"], kept["word2"])))
    lost = {pair for pair in lost if pair in set(zip(ratings.loc[ratings["kind"] != "checkpoint",
                                                                 "word1"],
                                                     ratings.loc[ratings["kind"] != "checkpoint",
                                                                 "word2"]))}
    result = invoke("process", tmp_path / "ratings.csv", "--protocol", "simlex", "--out",
                    tmp_path / "gold", "--no-plots")
    assert result.exit_code == 1 and not (tmp_path / "gold").exists()
    assert f"{len(lost)} of the 92 pairs of the study have no accepted rating" in result.output
    # without its description the CSV is ratings from elsewhere: --protocol is needed
    (tmp_path / "ratings.study.json").unlink()
    result = invoke("process", tmp_path / "ratings.csv", "--out", tmp_path / "gold")
    assert result.exit_code == 1 and "no --protocol given" in result.output


def test_every_release_problem_is_named_biggest_first(rehearsed, tmp_path):
    _, db = rehearsed
    invoke("study", "export", db, "--out", tmp_path / "ratings.csv")
    ratings = pd.read_csv(tmp_path / "ratings.csv", keep_default_na=False)
    first = ratings[ratings["tranche"] == 1]
    # tranche 1 only, and 3 of its raters: unique pairs of 2 and 3 missing, the rest thin
    raters = sorted(first["rater_id"].unique())[:3]
    first[first["rater_id"].isin(raters)].to_csv(tmp_path / "ratings.csv", index=False)
    result = invoke("process", tmp_path / "ratings.csv", "--out", tmp_path / "gold",
                    "--no-plots")
    assert result.exit_code == 1, result.output
    message = result.output.strip().splitlines()[-1]
    missing = message.index("of the 92 pairs of the study have no accepted rating")
    thin = message.index("pairs have fewer than 4 accepted raters")
    assert missing < thin and "(and 1 more)" not in message


def test_a_foreign_study_never_gets_english_norms(tmp_path, pairs):
    """A study in a pack's language gets the pack's norms or none, even processed with the
    English protocol; the dataset card says why the columns are empty."""
    pack = tmp_path / "mypack"
    shutil.copytree(_shipped_pack("he"), pack)
    protocol = pack / "simlex999.toml"
    text = protocol.read_text(encoding="utf-8")
    for key, value in (("tranches", 2), ("raters_per_tranche", 6)):
        text = text.replace(f"\n{key} = ", f"\n{key} = {value} #", 1)
    text = text.replace("min_raters_per_pair = 36", "min_raters_per_pair = 4")
    protocol.write_text(text, encoding="utf-8")
    db = tmp_path / "he.sqlite"
    create_study(protocol, pairs, database_url(db), seed=1)   # English strings: the trap
    rehearse(database_url(db), rng=np.random.default_rng(1), crowd=Crowd(spammers=0.0))
    for args in ([], ["--protocol", "simlex"]):
        out = tmp_path / f"gold{len(args)}"
        result = invoke("process", db, "--out", out, "--no-plots", "--bootstrap", "0",
                        "--allow-incomplete", *args)
        assert result.exit_code == 0, result.output
        gold = pd.read_csv(out / "gold.csv")
        assert gold["Assoc(USF)"].isna().all() and gold["conc(w1)"].isna().all()
        assert gold["SimAssoc333"].fillna(0).eq(0).all()
        report = json.loads((out / "report.json").read_text())
        assert report["language"] == "he" and report["norms"]["association"] is None
        card = (out / "README.md").read_text()
        assert "empty: the 'he' language pack names no association and concreteness norms" in card
    assert "not the study's own protocol" in result.output


def _shipped_pack(name):
    from lexgold.languages.packs import pack_dir
    return pack_dir(name)


@pytest.mark.postgres
def test_rehearse_and_process_a_postgresql_study(postgres_url, tmp_path, pairs):
    """The same on PostgreSQL: `study rehearse URL`, then `process URL` from the study."""
    from lexgold.study.db import postgres_schema

    protocol = protocol_variant(tmp_path, "simlex", tranches=2, raters_per_tranche=6)
    text = protocol.read_text().replace("min_raters_per_pair = 36", "min_raters_per_pair = 3")
    protocol.write_text(text)
    with postgres_schema(postgres_url, "rehearse") as (_, url):
        create_study(protocol, pairs, url, seed=1)
        result = invoke("study", "rehearse", url, "--seed", "2", "--spammers", "0", "--json")
        assert result.exit_code == 0, result.output
        figures = json.loads(result.output)
        assert figures["finished"] and figures["completed"] == 12
        done = invoke("process", url, "--out", tmp_path / "gold", "--no-plots",
                      "--bootstrap", "0")
        assert done.exit_code == 0, done.output
        password = url.split("://", 1)[1].split("@", 1)[0].partition(":")[2]
        assert password and f":{password}@" not in done.output    # never printed
    report = json.loads((tmp_path / "gold" / "report.json").read_text())
    assert report["ratings_source"] == "study" and report["counts"]["released_pairs"] == 92
    assert f":{password}@" not in json.dumps(report) and "127.0.0.1" not in json.dumps(report)
    assert report["ratings_file"] == {"name": url.rsplit("/", 1)[1].split("?")[0],
                                      "database": "postgresql"}
