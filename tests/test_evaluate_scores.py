"""Issue 45: ``lexgold evaluate --scores FILE``, a pair-score file (a machine's ratings) as a
model beside word vectors: its correlations and coverage, Steiger's test across a score file and
a vector file, ``--gold-column``, and the warning when the gold was built with the model."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from scipy import stats

from lexgold.cli import cli
from lexgold.compression import sha256_file
from lexgold.errors import InputError
from lexgold.evaluate.circularity import built_with, release_machine
from lexgold.evaluate.gold import read_gold
from lexgold.evaluate.scores import read_scores, score_pairs
from lexgold.evaluate.wordpairs import steiger_test
from lexgold.machine.ratings import read_machine

#: gold pairs (a..p), scores 1..8
GOLD = [("a", "b", 1.0), ("c", "d", 2.0), ("e", "f", 3.0), ("g", "h", 4.0), ("i", "j", 5.0),
        ("k", "l", 6.0), ("m", "n", 7.0), ("o", "p", 8.0)]
#: angles of 2-d word vectors: the cosine of a pair is cos(angle1 - angle2)
ANGLES = {"a": 0, "b": 80, "c": 0, "d": 75, "e": 0, "f": 50, "g": 0, "h": 60, "i": 0, "j": 30,
          "k": 0, "l": 35, "m": 0, "n": 10, "o": 0, "p": 20}


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def files(tmp_path):
    gold = write(tmp_path / "gold.txt", "".join(f"{a}\t{b}\t{s}\n" for a, b, s in GOLD))
    vectors = write(tmp_path / "v.txt", f"{len(ANGLES)} 2\n" + "".join(
        f"{w} {math.cos(math.radians(t)):.6f} {math.sin(math.radians(t)):.6f}\n"
        for w, t in ANGLES.items()))
    # the machine scores 6 of the 8 pairs: (c, d) written the other way round, (E, F) in
    # capitals; it leaves out (g, h) and (o, p)
    scores = write(tmp_path / "m.csv", "word1,word2,answer,rating\na,b,low,10\nd,c,mid,30\n"
                   "E,F,x,20\ni,j,y,40\nk,l,z,80\nm,n,w,60\n")
    return gold, vectors, scores


def test_a_score_file_against_a_gold_by_hand(files):
    """Gold ranks 1, 2, 3, 5, 6, 7 of the 6 pairs scored; the file's 10, 30, 20, 40, 80, 60
    rank 1, 3, 2, 4, 6, 5: sum d^2 = 0 + 1 + 1 + 0 + 1 + 1 = 4, rho = 1 - 6 * 4 / (6 * 35)
    = 1 - 24/210 = 0.885714...; Pearson from scipy on the same six pairs."""
    gold, _, scores = files
    out = run("evaluate", "--gold", gold, "--scores", scores, "--json", "--bootstrap", "200")
    assert out.exit_code == 0, out.output + out.stderr
    result = json.loads(out.stdout)
    assert (result["kind"], result["scores"]) == ("scores", str(scores))
    assert "vectors" not in result and "oov" not in result
    assert result["scores_column"] == "rating"
    assert (result["pairs"], result["covered"], result["used"]) == (8, 6, 6)
    assert result["spearman"] == pytest.approx(1 - 24 / 210)
    assert result["pearson"] == pytest.approx(
        stats.pearsonr([1, 2, 3, 5, 6, 7], [10, 30, 20, 40, 80, 60]).statistic)
    low, high = result["ci"]["spearman"]
    assert -1 <= low < result["spearman"] <= high <= 1
    assert result["provenance"]["model"] is None
    assert result["provenance"]["file_sha256"] == sha256_file(scores)
    # the text output says what was read
    text = run("evaluate", "--gold", gold, "--scores", scores, "--bootstrap", "0")
    assert text.exit_code == 0
    assert f"vs {scores} (scores: column rating)" in text.stdout
    assert "pairs 8, covered 6, used 6" in text.stdout


def test_steiger_across_a_score_file_and_a_vector_file(files, tmp_path):
    gold, vectors, scores = files
    out = run("evaluate", "--gold", gold, "--vectors", vectors, "--scores", scores, "--json",
              "--bootstrap", "0", "--per-pair", tmp_path / "pairs.csv")
    assert out.exit_code == 0, out.output + out.stderr
    result = json.loads(out.stdout)
    first, second = result["models"]
    assert (first["kind"], second["kind"]) == ("vectors", "scores")
    assert (first["covered"], second["covered"], result["covered_by_all"]) == (8, 6, 6)
    # by hand: the cosines, the file's scores, both against gold on the six pairs both use
    both = [0, 1, 2, 4, 5, 6]
    golds = np.array([s for _, _, s in GOLD])
    cosines = np.array([math.cos(math.radians(ANGLES[a] - ANGLES[b])) for a, b, _ in GOLD])
    machine = np.array([10, 30, 20, 40, 80, 60], dtype=float)
    assert first["spearman"] == pytest.approx(stats.spearmanr(golds, cosines).statistic)
    (test,) = result["steiger"]
    assert (test["first"], test["second"], test["used"]) == (str(vectors), str(scores), 6)
    ranks = [stats.rankdata(x) for x in (golds[both], cosines[both], machine)]
    r_jk = stats.pearsonr(ranks[0], ranks[1]).statistic
    r_jh = stats.pearsonr(ranks[0], ranks[2]).statistic
    r_kh = stats.pearsonr(ranks[1], ranks[2]).statistic
    expected = steiger_test(r_jk, r_jh, r_kh, 6)
    assert test["spearman"]["first"] == pytest.approx(r_jk)
    assert test["spearman"]["second"] == pytest.approx(1 - 24 / 210)
    assert test["spearman"]["z"] == pytest.approx(expected["z"])
    assert test["spearman"]["p"] == pytest.approx(expected["p"])
    # the per-pair CSV names each row's model
    table = pd.read_csv(tmp_path / "pairs.csv")
    assert list(table.columns[:2]) == ["gold_file", "model"]
    assert set(table["model"]) == {str(vectors), str(scores)}
    # --common-vocabulary scores the vectors on the six pairs the file covers
    common = json.loads(run("evaluate", "--gold", gold, "--vectors", vectors, "--scores",
                            scores, "--json", "--bootstrap", "0", "--common-vocabulary").stdout)
    assert common["models"][0]["spearman"] == pytest.approx(
        stats.spearmanr(golds[both], cosines[both]).statistic)


def test_score_pairs_match_either_order_unless_the_gold_owns_it():
    """SimVerb-3500 lists both (pass, misspend) and (misspend, pass): a file scoring the first
    gives the second no score."""
    gold = pd.DataFrame({"word1": ["pass", "misspend", "cat", "Sun"],
                         "word2": ["misspend", "pass", "dog", "moon"], "score": [1, 2, 3, 4.0]})
    file = pd.DataFrame({"word1": ["pass", "dog", "sun"], "word2": ["misspend", "cat", "moon"],
                         "score": [5.0, 6.0, 7.0]})
    got = score_pairs(gold, file)
    np.testing.assert_array_equal(got["model"], [5.0, np.nan, 6.0, 7.0])
    assert got["found"].tolist() == [True, False, True, True]
    assert np.isnan(score_pairs(gold, file, "exact")["model"].iloc[3])


def test_one_reader_for_machine_ratings_and_score_files(files):
    _, _, scores = files
    read = read_scores(scores)
    machine = read_machine(scores)
    assert machine["machine"].tolist() == read["score"].tolist()
    assert machine.attrs == read.attrs


@pytest.mark.parametrize("text, args, message", [
    ("word1,word2,a,b\ncat,dog,1,2\n", [],
     r"m\.csv: 2 columns \(a, b\) of numbers besides the words: name the column to read with "
     r"--scores-column"),
    ("word1,word2,rating\na,b,3\nc,d,about 4\n", [],
     r"m\.csv: no column of numbers"),
    ("word1,word2,rating\na,b,3\nc,d,about 4\n", ["--scores-column", "rating"],
     r"m\.csv:3, field 'rating': not a number: 'about 4'"),
    ("word1,word2,rating\na,b,3\nb,a,4\n", [], r"m\.csv:3: pair \(b, a\) given twice"),
    ("w,v,rating\na,b,3\n", [], r"m\.csv: no word1 column"),
    ("word1,word2,rating\na,b,3\n", ["--scores-column", "score"], r"no column 'score'"),
])
def test_bad_score_files_are_named(files, tmp_path, text, args, message):
    gold = files[0]
    path = write(tmp_path / "m.csv", text)
    out = run("evaluate", "--gold", gold, "--scores", path, *args)
    assert out.exit_code == 1 and "Traceback" not in out.output
    assert re.search(message, out.output), out.output


def test_option_errors(files):
    gold, vectors, scores = files
    out = run("evaluate", "--gold", gold)
    assert out.exit_code == 1 and "give a model: --vectors FILE or --scores FILE" in out.output
    out = run("evaluate", "--gold", gold, "--vectors", vectors, "--scores-column", "x")
    assert out.exit_code == 1 and re.search("--scores-column'?: applies to --scores", out.output)
    out = run("evaluate", "--gold", gold, "--scores", scores, "--vectors", vectors,
              "--compare", vectors)
    assert out.exit_code == 1 and "every two are compared already" in out.output


# -- the gold column and a gold built with the model ---------------------------------------------

def release(tmp_path, machine):
    """A release folder: gold.csv with the prior-mode score and the human-only column beside
    it, and a report.json with ``machine``."""
    folder = tmp_path / "release"
    folder.mkdir()
    human = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    prior = [1.5, 3.5, 2.5, 4.5, 5.5, 6.0]     # leaning toward the machine
    rows = ["word1,word2,score,human_score"] + [
        f"{a},{b},{p},{h}" for (a, b, _), p, h in zip(GOLD[:6], prior, human)]
    write(folder / "gold.csv", "\n".join(rows) + "\n")
    write(folder / "report.json", json.dumps({"protocol": "plain", "machine": machine}))
    return folder / "gold.csv", human, prior


def test_gold_column_reads_the_human_only_score(tmp_path):
    gold, human, prior = release(tmp_path, None)
    assert read_gold(gold)["score"].tolist() == prior
    assert read_gold(gold, score_column="human_score")["score"].tolist() == human
    assert read_gold(gold, score_column="Human Score")["score"].tolist() == human
    with pytest.raises(InputError, match=r"gold\.csv:1, field '--gold-column': no column "
                                         r"'machine' \(columns: word1, word2, score, "
                                         r"human_score\)"):
        read_gold(gold, score_column="machine")
    plain = write(tmp_path / "plain.txt", "a b 1\nc d 2\n")
    with pytest.raises(InputError, match="no header to name the column 'human_score' in"):
        read_gold(plain, score_column="human_score")


def sidecar(path, model):
    write(path.parent / (path.name + ".json"), json.dumps({"model": model,
                                                            "prompt_sha256": "ab" * 32}))


def test_a_prior_mode_gold_built_with_the_model_warns(files, tmp_path):
    _, _, scores = files
    sidecar(scores, "gpt-4")
    machine = {"mode": "prior", "model": "gpt-4", "prompt_sha256": "ab" * 32,
               "file_sha256": "0" * 64, "circularity": 0.088}
    gold, human, _ = release(tmp_path, machine)
    out = run("evaluate", "--gold", gold, "--scores", scores, "--json", "--bootstrap", "0")
    assert out.exit_code == 0, out.output + out.stderr
    (warning,) = json.loads(out.stdout)["warnings"]
    flattered = json.loads(out.stdout)["spearman"]
    assert warning.startswith(f"{gold} was built with {scores} (model 'gpt-4') in "
                              "machine-prior mode (report.json, circularity +0.088)")
    assert warning.endswith("--gold-column human_score")
    assert f"Warning: {warning}" in out.stderr.splitlines()
    # on the human-only column: no warning, and the figure is against the human means
    out = run("evaluate", "--gold", gold, "--scores", scores, "--json", "--bootstrap", "0",
              "--gold-column", "human_score")
    assert out.exit_code == 0, out.output + out.stderr
    result = json.loads(out.stdout)
    assert result["warnings"] == [] and "Warning" not in out.stderr
    # the file scores a-b, c-d, e-f, i-j, k-l of the gold's six (10, 30, 20, 40, 80; g-h not):
    # human 1, 2, 3, 5, 6 against ranks 1, 3, 2, 4, 5, sum d^2 = 2, rho = 1 - 12/120 = 0.9;
    # the prior-mode score 1.5, 3.5, 2.5, 5.5, 6.0 has the machine's ranks: 1 (flattered)
    assert (result["pairs"], result["used"]) == (6, 5)
    assert result["spearman"] == pytest.approx(0.9)
    assert flattered == pytest.approx(1.0)
    # another model: no warning
    sidecar(scores, "llama-3-70b")
    out = run("evaluate", "--gold", gold, "--scores", scores, "--json", "--bootstrap", "0")
    assert json.loads(out.stdout)["warnings"] == [] and "Warning" not in out.stderr


def test_the_checksum_ties_a_file_or_vectors_to_the_release(files, tmp_path):
    gold_txt, vectors, scores = files
    machine = {"mode": "allocate", "model": None, "file_sha256": sha256_file(vectors),
               "circularity": 0.036}
    gold, _, _ = release(tmp_path, machine)
    out = run("evaluate", "--gold", gold, "--vectors", vectors, "--scores", scores, "--json",
              "--bootstrap", "0", "--gold-column", "human_score")
    assert out.exit_code == 0, out.output + out.stderr
    (warning,) = json.loads(out.stdout)["warnings"]       # the vectors, not the score file
    assert warning.startswith(f"{gold} was built with {vectors} (the file with sha256 "
                              f"{sha256_file(vectors)[:12]}) in machine-allocate mode "
                              "(report.json, circularity +0.036): the model chose")
    # a score file without a sidecar, matched by its checksum, in the single-model output
    machine["file_sha256"] = sha256_file(scores)
    write(gold.parent / "report.json", json.dumps({"machine": machine}))
    out = run("evaluate", "--gold", gold, "--scores", scores, "--bootstrap", "0")
    assert out.exit_code == 0 and "machine-allocate mode" in out.stderr
    # a gold without report.json, or a folder's unrelated report.json: no warning
    out = run("evaluate", "--gold", gold_txt, "--scores", scores, "--json", "--bootstrap", "0")
    assert "warnings" not in json.loads(out.stdout)


def test_a_report_machine_that_is_not_one_is_named(tmp_path, files):
    gold, _, _ = release(tmp_path, {"mode": "sometimes", "model": "gpt-4"})
    with pytest.raises(InputError, match=r"report\.json, field 'machine\.mode': mode "
                                         r"'sometimes' is none of prior, allocate"):
        release_machine(gold)
    out = run("evaluate", "--gold", gold, "--scores", files[2])
    assert out.exit_code == 1 and "machine.mode" in out.output
    write(gold.parent / "report.json", json.dumps({"machine": {"mode": "none"}}))
    assert release_machine(gold) is None
    write(gold.parent / "report.json", "not json")
    assert release_machine(gold) is None
    write(gold.parent / "report.json", json.dumps({"machine": {"mode": "machine-prior"}}))
    assert release_machine(gold)["mode"] == "prior"


def test_built_with_names_what_ties_them():
    assert built_with({"model": "GPT-4 "}, {"model": "gpt-4"}) == "model"
    assert built_with({"model": "gpt-4", "file_sha256": "AB"}, {"model": "x",
                                                                "file_sha256": "ab"}) \
        == "file_sha256"
    assert built_with({"model": "", "file_sha256": ""}, {"model": "", "file_sha256": ""}) is None
    assert built_with({"model": None}, {"model": None}) is None
