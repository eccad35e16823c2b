"""The evaluate, analogy and sdt commands: JSON contract of docs/contract.md, errors in one line."""

import json
from pathlib import Path

import gensim
import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from gensim.models import Word2Vec
from scipy import stats

from lexgold.cli import cli

DATA = Path(gensim.__file__).parent / "test" / "test_data"


@pytest.fixture(scope="module")
def vector_files(tmp_path_factory):
    sentences = [line.lower().split() for line in (DATA / "lee_background.cor").open()]
    folder = tmp_path_factory.mktemp("vectors")
    paths = []
    for seed, binary in ((1, False), (2, True)):
        kv = Word2Vec(sentences, vector_size=30, min_count=3, seed=seed, workers=1, epochs=3).wv
        path = folder / f"lee{seed}.{'bin' if binary else 'txt'}"
        kv.save_word2vec_format(str(path), binary=binary)
        paths.append((path, kv))
    return paths


def _run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def test_evaluate_json_contract_and_scipy_equality(vector_files, tmp_path):
    path, kv = vector_files[0]
    out = _run("evaluate", "--gold", DATA / "wordsim353.tsv", "--vectors", path, "--json",
               "--per-pair", tmp_path / "pairs.csv", "--bootstrap", "200")
    assert out.exit_code == 0, out.output
    result = json.loads(out.stdout)
    assert {"spearman", "pearson", "pairs", "covered"} <= set(result)
    pairs = pd.read_csv(tmp_path / "pairs.csv")
    used = pairs[pairs["used"]]
    # 353 rows, money / cash listed twice: 352 pairs (issue 36)
    assert len(used) == result["covered"] and result["pairs"] == 352
    assert result["spearman"] == pytest.approx(stats.spearmanr(used["gold"], used["model"])[0])
    assert result["ci"]["spearman"][0] < result["spearman"] < result["ci"]["spearman"][1]
    assert used["rank_diff"].abs().is_monotonic_decreasing


def test_evaluate_text_output_and_compare(vector_files):
    (first, _), (second, _) = vector_files
    out = _run("evaluate", "--gold", DATA / "simlex999.txt", "--vectors", first,
               "--compare", second, "--bootstrap", "0")
    assert out.exit_code == 0, out.output
    assert "pairs 999, covered" in out.output
    assert "Steiger spearman:" in out.output


def test_evaluate_tr9856_binary_and_multiword(vector_files, tmp_path):
    """A TR9856-format file made from WS-353 (scores rescaled to 0-1), with a multi-word term."""
    path, _ = vector_files[0]
    ws = pd.read_csv(DATA / "wordsim353.tsv", sep="\t", comment="#", header=None,
                     names=["term1", "term2", "score"])
    ws["score"] = ws["score"] / 10
    ws["topic"] = "ws353"
    ws.loc[0, "term1"] = "new york"
    gold = tmp_path / "tr.csv"
    ws.to_csv(gold, index=False)
    out = _run("evaluate", "--gold", gold, "--vectors", path, "--json", "--bootstrap", "0",
               "--per-pair", tmp_path / "pairs.csv")
    assert out.exit_code == 0, out.output
    result = json.loads(out.stdout)
    assert result["format"] == "tr9856"
    used = pd.read_csv(tmp_path / "pairs.csv").query("used")
    assert result["binary"]["positives"] == (used["gold"] >= 0.8).sum() > 0
    assert result["binary"]["negatives"] == (used["gold"] <= 0.2).sum()
    assert 0 <= result["binary"]["error"] <= 1
    assert result["subsets"]["multi-word"]["pairs"] == 1


def test_evaluate_bad_gold_is_one_line_error(vector_files, tmp_path):
    gold = tmp_path / "gold.txt"
    gold.write_text("cat dog 3\ncat mouse high\n")
    out = _run("evaluate", "--gold", gold, "--vectors", vector_files[0][0])
    assert out.exit_code == 1
    assert out.output.strip().splitlines() == [
        f"Error: {gold}:2, field 'score': score 'high' is not a number"]


#: a small case: 2-d vectors of nine words and ten gold pairs (one out of vocabulary, one
#: written in capitals), two parts of speech
SMALL_VECTORS = {"cat": (1, 0), "dog": (0.9, 0.1), "car": (0, 1), "bus": (0.1, 0.9),
                 "tree": (0.7, 0.7), "sun": (-1, 0.2), "run": (0.3, -0.8), "walk": (0.4, -0.6),
                 "eat": (-0.5, -0.5)}
SMALL_GOLD = [("cat", "dog", "N", 9), ("car", "bus", "N", 8.5), ("cat", "car", "N", 1),
              ("dog", "tree", "N", 4), ("tree", "sun", "N", 2), ("sun", "moon", "N", 5),
              ("run", "walk", "V", 8), ("run", "eat", "V", 2), ("walk", "eat", "V", 3),
              ("Cat", "Run", "V", 0.5)]


def _small_case(folder):
    vectors = folder / "a.txt"
    vectors.write_text(f"{len(SMALL_VECTORS)} 2\n" + "".join(
        f"{word} {x} {y}\n" for word, (x, y) in SMALL_VECTORS.items()))
    gold = folder / "gold.csv"
    gold.write_text("word1,word2,POS,score\n" + "".join(
        f"{a},{b},{pos},{score}\n" for a, b, pos, score in SMALL_GOLD))
    return gold, vectors


def test_evaluate_one_model_prints_the_same_table(tmp_path):
    """`evaluate --vectors A` on a small case: the table as printed before one function served
    one model and several, its figures scipy's on the cosines of the covered pairs."""
    gold, vectors = _small_case(tmp_path)
    out = _run("evaluate", "--gold", gold, "--vectors", vectors, "--bootstrap", "0")
    assert out.exit_code == 0, out.output
    assert out.stdout == (
        f"{gold} (plain) vs {vectors}\n"
        "pairs 10, covered 9, used 9 (oov=drop, case=exact-then-lower)\n"
        "spearman  0.8151\n"
        "pearson   0.7854\n"
        "  pos=N                  rho 0.8721  r 0.8406  covered 5/6\n"
        "  pos=V                  rho 0.4000  r 0.8621  covered 4/4\n")
    rows = [(a.lower(), b.lower(), pos, score) for a, b, pos, score in SMALL_GOLD
            if a.lower() in SMALL_VECTORS and b.lower() in SMALL_VECTORS]
    u = np.array([SMALL_VECTORS[a] for a, *_ in rows], dtype=float)
    v = np.array([SMALL_VECTORS[b] for _, b, *_ in rows], dtype=float)
    cosine = (u * v).sum(axis=1) / np.linalg.norm(u, axis=1) / np.linalg.norm(v, axis=1)
    score = np.array([row[3] for row in rows], dtype=float)
    assert f"spearman  {stats.spearmanr(score, cosine)[0]:.4f}\n" in out.stdout
    assert f"pearson   {stats.pearsonr(score, cosine)[0]:.4f}\n" in out.stdout
    verbs = np.array([row[2] == "V" for row in rows])
    assert f"rho {stats.spearmanr(score[verbs], cosine[verbs])[0]:.4f}" in out.stdout


def test_evaluate_one_model_prints_the_files_it_read_and_fails_for_the_others(tmp_path):
    """Two gold files, one unreadable: the other's table on stdout, one error line on stderr,
    exit status 1; JSON lists the error; a single unreadable file is the error alone."""
    gold, vectors = _small_case(tmp_path)
    bad = tmp_path / "bad.csv"
    bad.write_text("nothing,here\n")
    error = f"Error: {bad}: no word pairs found after the header\n"
    out = _run("evaluate", "--gold", gold, "--gold", bad, "--vectors", vectors, "--bootstrap", "0")
    assert out.exit_code == 1
    assert out.stdout.startswith(f"{gold} (plain) vs {vectors}\n") and str(bad) not in out.stdout
    assert out.stderr == error
    out = _run("evaluate", "--gold", gold, "--gold", bad, "--vectors", vectors, "--bootstrap", "0",
               "--json")
    assert out.exit_code == 1 and out.stderr == error
    assert json.loads(out.stdout)[1] == {"gold": str(bad),
                                         "error": error[len("Error: "):].strip()}
    out = _run("evaluate", "--gold", bad, "--vectors", vectors, "--json")
    assert (out.exit_code, out.stdout, out.stderr) == (1, "", error)


def test_analogy_json_contract(vector_files):
    path, _ = vector_files[1]
    out = _run("analogy", "--questions", DATA / "questions-words.txt", "--vectors", path,
               "--json")
    assert out.exit_code == 0, out.output
    result = json.loads(out.output)
    methods = ["VANILLA", "ADD", "ONLY-B", "IGNORE-A", "ADD-OPPOSITE", "MULTIPLY",
               "REVERSE(ADD)", "REVERSE(ONLY-B)"]
    assert set(result["seconds"]) == set(methods)
    for method in methods:
        assert "all" in result[method] and "family" in result[method]
    assert result["counts"]["all"]["questions"] == 19544
    assert result["multiply"]["form"] == "shifted" and "3CosMul" in result["multiply"]["formula"]
    literal = json.loads(_run("analogy", "--questions", DATA / "questions-words.txt", "--vectors",
                              path, "--method", "MULTIPLY", "--multiply", "literal",
                              "--json").output)
    assert set(literal) == {"MULTIPLY", "seconds", "counts", "multiply"}
    assert literal["multiply"]["form"] == "literal"


def test_analogy_text_one_method(vector_files):
    out = _run("analogy", "--questions", DATA / "questions-words.txt", "--vectors",
               vector_files[0][0], "--method", "ADD", "--method", "ONLY-B")
    assert out.exit_code == 0, out.output
    assert "ADD" in out.output and "MULTIPLY" not in out.output
    assert out.output.splitlines()[-2].startswith("all")
    out = _run("analogy", "--questions", DATA / "questions-words.txt", "--vectors",
               vector_files[0][0], "--method", "MULTIPLY")
    assert out.output.splitlines()[-1].startswith("MULTIPLY: 3CosMul (Levy & Goldberg 2014")


def test_sdt_json(tmp_path):
    out = _run("sdt", "--corpus", DATA / "lee_background.cor", "--doc-size", "1", "--dim", "50",
               "--min-count", "3", "--words", "band", "--freq-min", "10", "--n-words", "100",
               "--json", "--per-word", tmp_path / "words.csv")
    assert out.exit_code == 0, out.output
    result = json.loads(out.output)
    assert result["sdt_rho"] > 0.7 and result["scored"] == 100
    assert result["mode"] == "band" and result["max_overlap"] == 0.1
    assert result["in_overlap"] <= 10 < result["overlap"]
    assert result["stopwords"] == {"list": "snowball", "words": 127}
    assert len(pd.read_csv(tmp_path / "words.csv")) == 100


def test_sdt_default_splits_the_overlap_set(tmp_path, usf):
    out = _run("sdt", "--corpus", DATA / "lee_background.cor", "--doc-size", "1", "--dim", "50",
               "--min-count", "3", "--json", "--per-word", tmp_path / "words.csv")
    assert out.exit_code == 0, out.output
    result = json.loads(out.output)
    assert result["mode"] == "overlap" and result["words"] == result["overlap"] > 500
    cues = {c.lower() for c in usf["cue"].dropna()}
    scored = set(pd.read_csv(tmp_path / "words.csv")["word"])
    assert len(scored) == result["scored"] and scored <= cues
    assert not scored & {"above", "after", "before"}  # USF cues on the stop list
    text = _run("sdt", "--corpus", DATA / "lee_background.cor", "--doc-size", "1", "--dim",
                "50", "--min-count", "3", "--stopwords", "none", "--json")
    assert json.loads(text.output)["overlap"] > result["overlap"]


def test_sdt_band_options_need_band_mode():
    out = _run("sdt", "--corpus", DATA / "lee_background.cor", "--freq-min", "10")
    assert out.exit_code == 1
    assert out.output.strip() == ("Error: field '--freq-min': applies only to --words band "
                                  "(--words overlap splits every overlap word)")
    out = _run("sdt", "--corpus", DATA / "lee_background.cor", "--stopwords", "nofile.txt")
    assert out.exit_code == 1
    assert out.output.strip() == ("Error: nofile.txt, field '--stopwords': stop list not found "
                                  "(a file, 'snowball' or 'none')")


def test_sdt_bad_trainer():
    out = _run("sdt", "--corpus", DATA / "lee_background.cor", "--trainer", "bert")
    assert out.exit_code == 1
    assert "trainer must be one of lsa, random or module:function; got 'bert'" in out.output
