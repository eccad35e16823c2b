"""``lexgold machine worth`` (lexgold.machine.worth_cli) on shipped data: GPT-4's ratings with an
excerpt of SimVerb-3500's log, WordSim-353 set 1 with word vectors (identified raters: the
alternative annotator test runs), and its errors."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from lexgold.cliutil import LexgoldGroup
from lexgold.crowd.logs import shipped_log
from lexgold.machine.worth_cli import worth
from lexgold.resources._files import resource_files

#: the command as `lexgold machine worth` runs it (the group reports bad input in one line)
machine = LexgoldGroup("machine")
machine.add_command(worth)


def run(*args):
    return CliRunner().invoke(machine, ["worth", *map(str, args)])


@pytest.fixture(scope="module")
def simverb_excerpt(tmp_path_factory):
    """SimVerb-3500's published log, its header and first 800 pairs, as a file of its layout."""
    lines = resource_files("simverb3500_ratings")[0].read_bytes().decode().splitlines()
    path = tmp_path_factory.mktemp("simverb") / "SimVerb-3500-ratings.txt"
    path.write_text("\n".join(lines[:801]) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def gpt4():
    return resource_files("simverb3500_gpt4")[0].location


@pytest.fixture(scope="module")
def ws353(tmp_path_factory):
    """WordSim-353 set 1 as distributed, and seeded random vectors of its words (a machine
    that knows nothing)."""
    folder = tmp_path_factory.mktemp("ws353")
    (folder / "set1.csv").write_bytes(resource_files("wordsim353_set1")[0].read_bytes())
    frame, _ = shipped_log("wordsim353")
    words = sorted(set(frame["word1"].str.lower()) | set(frame["word2"].str.lower()))
    vectors = np.random.default_rng(0).normal(size=(len(words), 8))
    (folder / "random.txt").write_text(
        f"{len(words)} 8\n" + "".join(f"{w} {' '.join(f'{x:.5f}' for x in v)}\n"
                                      for w, v in zip(words, vectors)), encoding="utf-8")
    return folder


def test_gpt4_on_simverbs_log_is_worth_about_two_ratings(simverb_excerpt, gpt4):
    """Trott (2024): one GPT-4 rating is worth about two crowd ratings on SimVerb-3500."""
    result = run(simverb_excerpt, "--machine", gpt4, "--splits", "20", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["raters"] == "anonymous" and report["alternative_annotator_test"] is None
    assert report["pairs"] == 800 and 300 < report["covered"] < 500
    assert report["machine_column"] == "gpt4_rating"
    worth_ = report["worth"]
    assert 1.0 < worth_["ratings_spearman"]["median"] < 4.0
    assert worth_["ratings_spearman"]["low"] <= worth_["ratings_spearman"]["median"] \
        <= worth_["ratings_spearman"]["high"]
    assert [row["k"] for row in worth_["human"]] == [1, 2, 3, 4, 5]
    assert report["calibration"]["machine_scale"][1] > 6 >= report["calibration"]["human_scale"][1]
    assert len(report["misjudged"]) == 10
    assert report["published"][0]["dataset"].startswith("SimVerb-3500")
    assert report["published"][0]["share"] == 1.0


def test_the_summary_lines_and_the_seed(simverb_excerpt, gpt4):
    args = (simverb_excerpt, "--machine", gpt4, "--splits", "5", "--top", "3", "--bands", "5")
    first, again, other = run(*args), run(*args), run(*args, "--seed", "1")
    assert first.exit_code == 0, first.output
    assert first.output == again.output and first.output != other.output
    text = first.output
    assert "anonymous raters" in text and "column gpt4_rating" in text
    assert "equal Spearman:" in text and "equal MAE:" in text
    assert "calibration: human = " in text and "errors by score band" in text
    assert "5/5 [" in text and text.count("\n  ") >= 3
    assert "alternative annotator test: not run (the raters are anonymous)" in text
    assert "are published in SimVerb-3500 (Gerz et al. 2016)" in text


def test_wordsim353_with_vectors_runs_the_alternative_annotator_test(ws353):
    result = run(ws353 / "set1.csv", "--vectors", ws353 / "random.txt", "--splits", "10",
                 "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["raters"] == 13 and report["covered"] == report["pairs"] == 152
    test = report["alternative_annotator_test"]
    assert len(test["raters"]) == 13 and test["epsilon"] == 0.2
    assert test["alignment"] == "rmse" and not test["passed"]
    assert report["worth"]["ratings_spearman"]["median"] < 0.5      # random vectors
    assert report["machine"]["kind"] == "vectors"
    text = run(ws353 / "set1.csv", "--vectors", ws353 / "random.txt", "--splits", "3",
               "--epsilon", "0.1", "--alignment", "ae").output
    assert "alternative annotator test (Calderon, Reichart & Dror 2025; epsilon 0.1, " \
           "alignment -AE" in text
    assert "set1:13" in text and "WordSim-353 (Finkelstein et al. 2002)" in text


def test_the_pairs_file_groups_errors_by_relation(simverb_excerpt, gpt4, tmp_path):
    lines = simverb_excerpt.read_text().splitlines()[1:]
    pairs = tmp_path / "pairs.csv"
    pairs.write_text("word1,word2,POS,relation\n" + "".join(
        f"{line.split()[0]},{line.split()[1]},V,{'SYN' if i % 2 else 'NONE'}\n"
        for i, line in enumerate(lines)), encoding="utf-8")
    result = run(simverb_excerpt, "--machine", gpt4, "--splits", "3", "--pairs", pairs,
                 "--json")
    assert result.exit_code == 0, result.output
    errors = json.loads(result.output)["errors"]
    assert sorted(row["group"] for row in errors["relation"]) == ["NONE", "SYN"]
    assert [row["group"] for row in errors["pos"]] == ["V"]


def test_bad_input_is_one_line(simverb_excerpt, gpt4, tmp_path):
    cases = [((simverb_excerpt,), "give one machine: --machine FILE or --vectors FILE"),
             ((simverb_excerpt, "--machine", gpt4, "--vectors", gpt4), "give one machine"),
             ((simverb_excerpt, "--vectors", gpt4, "--column", "x"),
              "--column names a column of --machine"),
             ((simverb_excerpt, "--machine", gpt4, "--pool", "30"),
              "0 pairs have a machine score and more than --pool 30 ratings")]
    bad = tmp_path / "bad.csv"
    bad.write_text("word1,word2,rating\nchoose,pick,5\nseize,control,high\n", encoding="utf-8")
    cases.append(((simverb_excerpt, "--machine", bad, "--column", "rating"),
                  "bad.csv:3, field 'rating': not a number: 'high'"))
    none = tmp_path / "none.csv"
    none.write_text("word1,word2,rating\ncat,dog,5\n", encoding="utf-8")
    cases.append(((simverb_excerpt, "--machine", none), "the machine scores 0 of the pilot's "
                                                        "800 pairs"))
    for args, message in cases:
        result = run(*args)
        assert result.exit_code == 1, result.output
        assert message in result.output and "Traceback" not in result.output
        assert len(result.output.strip().splitlines()) == 1


def test_the_long_format_reads_as_the_published_layout(simverb_excerpt, gpt4, tmp_path):
    """The shipped log through lexgold.crowd.logs, its first 800 pairs written in lexgold's
    long format, gives the figures its published layout gives."""
    frame, _ = shipped_log("simverb")
    keys = frame[["word1", "word2"]].drop_duplicates().head(800)
    long = frame.merge(keys, on=["word1", "word2"])[["rater_id", "tranche", "word1", "word2",
                                                     "rating"]]
    long.to_csv(tmp_path / "simverb.csv", index=False)
    args = ("--machine", gpt4, "--splits", "5", "--json")
    published, own = run(simverb_excerpt, *args), run(tmp_path / "simverb.csv", *args)
    assert own.exit_code == 0, own.output
    a, b = json.loads(published.output), json.loads(own.output)
    assert a["pilot"] != b["pilot"]
    for name in ("pairs", "covered", "worth", "calibration", "errors", "misjudged"):
        assert a[name] == b[name], name
