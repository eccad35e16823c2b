"""Streamed vector reading: only the looked-up rows, the same rows and figures as a whole read,
first row wins under every case policy, the case-variant warning, several gold standards."""

import json
import warnings
from pathlib import Path

import gensim
import numpy as np
import pytest
from click.testing import CliRunner
from gensim.models import KeyedVectors, Word2Vec

from lexgold.cli import cli
from lexgold.errors import InputError
from lexgold.evaluate import vectors as vectors_module
from lexgold.evaluate.gold import read_gold
from lexgold.evaluate.report import evaluate_files, evaluate_golds
from lexgold.evaluate.vectors import (
    CASE_POLICIES,
    CaseVariantWarning,
    Vectors,
    ambiguous_words,
    read_vectors,
)
from lexgold.evaluate.wordpairs import evaluate_pairs, lookup_words

DATA = Path(gensim.__file__).parent / "test" / "test_data"
GOLDS = [DATA / "simlex999.txt", DATA / "wordsim353.tsv"]


@pytest.fixture(scope="module")
def cased_kv():
    """A real model that keeps case (``The`` and ``the``, ``New`` and ``new``), by frequency."""
    sentences = [line.split() for line in (DATA / "lee_background.cor").open()]
    return Word2Vec(sentences, vector_size=20, min_count=3, seed=1, workers=1, epochs=2).wv


@pytest.fixture(scope="module")
def files(cased_kv, tmp_path_factory):
    """The model as word2vec text, binary, GloVe text, a gensim file, and sorted by spelling."""
    folder = tmp_path_factory.mktemp("streamed")
    out = {"text": folder / "v.txt", "bin": folder / "v.bin", "glove": folder / "v.glove",
           "gensim": folder / "v.kv", "alphabetical": folder / "alpha.txt"}
    cased_kv.save_word2vec_format(str(out["text"]))
    cased_kv.save_word2vec_format(str(out["bin"]), binary=True)
    cased_kv.save_word2vec_format(str(out["glove"]), write_header=False)
    cased_kv.save(str(out["gensim"]))
    order = sorted(cased_kv.index_to_key)
    alpha = KeyedVectors(cased_kv.vector_size)
    alpha.add_vectors(order, cased_kv[order])
    alpha.save_word2vec_format(str(out["alphabetical"]))
    return out


def _gold_words():
    return lookup_words(term for path in GOLDS for frame in [read_gold(path)]
                        for term in [*frame["word1"], *frame["word2"]])


def _plain(value):
    """Comparable copy: NaN -> None, numpy scalars -> Python."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, float) and value != value:
        return None
    return value


@pytest.mark.parametrize("kind", ["text", "bin", "glove", "gensim", "alphabetical"])
@pytest.mark.parametrize("case", CASE_POLICIES)
def test_streamed_rows_are_the_whole_reads_rows(files, kind, case):
    words = _gold_words() + ["The", "THE", "new", "New", "NEW", "said"]
    whole = read_vectors(files[kind])
    streamed = read_vectors(files[kind], keep=words, case=case)
    assert streamed.file_rows == len(whole) and len(streamed) < len(whole) / 3
    found = 0
    for word in words:
        row, expected = streamed.find(word, case), whole.find(word, case)
        assert (row is None) == (expected is None), word
        if row is not None:
            found += 1
            assert whole.words[streamed.rows[row]] == whole.words[expected]
            np.testing.assert_array_equal(streamed.matrix[row], whole.matrix[expected])
    assert found > 300


@pytest.mark.parametrize("case", CASE_POLICIES)
@pytest.mark.parametrize("oov", ["drop", "mean", "zero"])
def test_streamed_evaluation_gives_the_figures_of_a_whole_read(files, case, oov):
    gold = read_gold(GOLDS[0])
    result, scores = evaluate_files(gold, GOLDS[0], files["text"], case=case, oov=oov,
                                    n_boot=200, seed=3)
    expected, expected_scores = evaluate_pairs(gold, read_vectors(files["text"]), case=case,
                                               oov=oov, rng=np.random.default_rng(3),
                                               n_boot=200)
    np.testing.assert_allclose(scores["model"], expected_scores["model"], rtol=1e-12)
    if oov != "mean":                           # the mean is summed in another order
        assert _plain(result) == _plain({**result, **expected})
    else:
        assert result["spearman"] == pytest.approx(expected["spearman"], abs=1e-12)
        assert result["covered"] == expected["covered"]


def test_streamed_mean_is_the_mean_of_every_row(files):
    whole = read_vectors(files["text"])
    for kind in ("text", "bin", "gensim"):
        streamed = read_vectors(files[kind], keep=["the"], mean=True)
        np.testing.assert_allclose(streamed.mean_vector(),
                                   whole.matrix.astype(np.float64).mean(axis=0), rtol=1e-9,
                                   atol=1e-12)


def test_lower_policy_equals_gensim_on_a_cased_file(files, cased_kv):
    result, _ = evaluate_files(read_gold(GOLDS[0]), GOLDS[0], files["text"], case="lower",
                               n_boot=0)
    pearson, spearman, oov = cased_kv.evaluate_word_pairs(str(GOLDS[0]),
                                                          restrict_vocab=len(cased_kv))
    assert result["spearman"] == pytest.approx(spearman.statistic, abs=1e-12)
    assert result["pearson"] == pytest.approx(pearson.statistic, abs=1e-6)
    assert 100 * (1 - result["covered"] / result["pairs"]) == pytest.approx(oov)


def _write(path, lines):
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def test_first_row_wins_under_every_policy(tmp_path):
    """Rows i have the vector (i, -i): the row each lookup finds, worked out by hand."""
    words = ["Apple", "apple", "APPLE", "pear", "pear", "Pear"]
    path = _write(tmp_path / "v.txt", [f"{len(words)} 2"]
                  + [f"{w} {i} {-i}" for i, w in enumerate(words)])
    expected = {
        "lower": {"apple": 0, "aPPle": 0, "APPLE": 0, "pear": 3, "Pear": 3},
        "exact-then-lower": {"apple": 1, "aPPle": 0, "APPLE": 2, "pear": 3, "Pear": 5,
                             "PEAR": 3},
        "exact": {"apple": 1, "aPPle": None, "APPLE": 2, "pear": 3, "Pear": 5, "PEAR": None},
    }
    for case, rows in expected.items():
        for keep in (None, list(rows)):
            vectors = read_vectors(path, keep=keep, case=case)
            for word, row in rows.items():
                found = vectors.find(word, case)
                assert (None if found is None else vectors.matrix[found][0]) == row, (case, word)


def test_only_the_kept_rows_are_parsed(tmp_path):
    path = _write(tmp_path / "bad.txt", ["3 2", "cat 1 2", "dog x y", "bird 3 4"])
    vectors = read_vectors(path, keep=["cat", "bird"])
    assert vectors.words == ["cat", "bird"] and vectors.file_rows == 3
    np.testing.assert_array_equal(vectors.matrix, [[1, 2], [3, 4]])
    with pytest.raises(InputError, match=r"bad.txt:3: non-numeric vector value"):
        read_vectors(path)
    with pytest.raises(InputError, match=r"bad.txt:3: non-numeric vector value"):
        read_vectors(path, keep=["Dog"])


def test_limit_stops_reading(tmp_path):
    path = _write(tmp_path / "v.txt", ["3 2", "cat 1 2", "dog 3 4", "broken 5", "\xff"])
    vectors = read_vectors(path, limit=2)
    assert vectors.words == ["cat", "dog"]


def test_glove_word_with_spaces_is_not_its_first_word(tmp_path):
    path = _write(tmp_path / "v.glove", ["new 3 4", "new york 1 2", "york 5 6", ". . . 7 8"])
    for keep in (None, ["new york", "new", "york", ". . ."]):
        vectors = read_vectors(path, keep=keep)
        assert vectors.matrix[vectors.find("new york")].tolist() == [1, 2]
        assert vectors.matrix[vectors.find("new")].tolist() == [3, 4]
        assert vectors.matrix[vectors.find(". . .")].tolist() == [7, 8]


def test_binary_rows_across_read_blocks(files, monkeypatch):
    whole = read_vectors(files["bin"])
    monkeypatch.setattr(vectors_module, "_READ_BLOCK", 7)
    small = read_vectors(files["bin"])
    assert small.words == whole.words
    np.testing.assert_array_equal(small.matrix, whole.matrix)
    streamed = read_vectors(files["bin"], keep=["the", "said"])
    np.testing.assert_array_equal(streamed.matrix, whole.matrix[[whole.find("the"),
                                                                 whole.find("said")]])


def test_frequency_order_check(cased_kv):
    words = list(cased_kv.index_to_key)
    shuffled = list(np.random.default_rng(0).permutation(words))
    for order, expected in ((words, True), (sorted(words), False), (shuffled, False)):
        vectors = Vectors(order, np.zeros((len(order), 1), dtype=np.float32))
        assert vectors.frequency_sorted is expected


def test_ambiguous_words_by_policy():
    vectors = Vectors(["Apple", "apple", "Pear", "PEAR", "plum"],
                      np.zeros((5, 1), dtype=np.float32))
    words = ["apple", "pear", "plum", "fig"]
    assert ambiguous_words(vectors, words, "lower") == [("apple", 2), ("pear", 2)]
    assert ambiguous_words(vectors, words, "exact-then-lower") == [("pear", 2)]
    assert ambiguous_words(vectors, words, "exact") == []


def _case_warnings(path, case):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        evaluate_golds([(read_gold(GOLDS[0]), GOLDS[0])], path, case=case, n_boot=0)
    return [str(w.message) for w in caught if w.category is CaseVariantWarning]


def test_case_variant_warning_only_when_order_is_not_frequency(files):
    found = _case_warnings(files["alphabetical"], "lower")
    assert len(found) == 1
    assert "does not look sorted by frequency" in found[0]
    assert "--case exact-then-lower prefers the exact spelling" in found[0]
    assert _case_warnings(files["text"], "lower") == []


def test_several_golds_one_pass_same_results_as_alone(files, tmp_path):
    runner = CliRunner()
    common = ["--vectors", str(files["text"]), "--json", "--bootstrap", "100", "--seed", "5"]
    alone = []
    for gold in GOLDS:
        out = runner.invoke(cli, ["evaluate", "--gold", str(gold), *common])
        assert out.exit_code == 0, out.output
        alone.append(json.loads(out.stdout))
        assert isinstance(alone[-1], dict) and alone[-1]["gold"] == str(gold)
    out = runner.invoke(cli, ["evaluate", "--gold", str(GOLDS[0]), "--gold", str(GOLDS[1]),
                              *common, "--per-pair", str(tmp_path / "pairs.csv")])
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout) == alone
    import pandas as pd
    pairs = pd.read_csv(tmp_path / "pairs.csv")
    # issue 23 item 1: the file column is gold_file; gold keeps the gold score of every row
    assert list(pairs.columns[:5]) == ["gold_file", "word1", "word2", "gold", "model"]
    assert pairs.columns.is_unique
    assert pairs["gold_file"].value_counts().to_dict() == {str(GOLDS[0]): 999,
                                                           str(GOLDS[1]): 352}
    for gold in GOLDS:
        mine = pairs[pairs["gold_file"] == str(gold)]
        expected = read_gold(gold)
        assert (sorted(zip(mine["word1"], mine["word2"], mine["gold"]))
                == sorted(zip(expected["word1"], expected["word2"], expected["score"])))


def test_cli_warns_on_stderr_for_an_alphabetical_file(files):
    out = CliRunner().invoke(cli, ["evaluate", "--gold", str(GOLDS[0]), "--vectors",
                                   str(files["alphabetical"]), "--case", "lower",
                                   "--bootstrap", "0"])
    assert out.exit_code == 0, out.output
    assert "Warning: " in out.stderr and "several case variants" in out.stderr
    assert "Warning" not in out.stdout


def test_analogy_restrict_vocab_reads_first_rows_and_equals_gensim(files, cased_kv, tmp_path):
    questions = DATA / "questions-words.txt"
    out = CliRunner().invoke(cli, ["analogy", "--questions", str(questions), "--vectors",
                                   str(files["text"]), "--case", "lower", "--method", "ADD",
                                   "--restrict-vocab", "1500", "--json"])
    assert out.exit_code == 0, out.output
    result = json.loads(out.output)
    score, _ = cased_kv.evaluate_word_analogies(str(questions), restrict_vocab=1500)
    assert result["counts"]["all"]["covered"] > 30
    assert result["ADD"]["all"] == pytest.approx(score, abs=1e-12)
    broken = tmp_path / "broken.txt"
    broken.write_bytes(files["text"].read_bytes() + b"broken 1 2\n")
    out = CliRunner().invoke(cli, ["analogy", "--questions", str(questions), "--vectors",
                                   str(broken), "--method", "ADD", "--restrict-vocab", "1500"])
    assert out.exit_code == 0, out.output
    out = CliRunner().invoke(cli, ["analogy", "--questions", str(questions), "--vectors",
                                   str(broken), "--method", "ADD"])
    assert out.exit_code == 1 and "broken.txt" in out.output and "expected a word" in out.output


def test_analogy_case_policies_pick_the_question_rows(tmp_path):
    """ONLY-B guesses the candidate nearest b: under 'lower' b = berlin is the first variant
    ``Berlin`` (1, 0), nearest x; under the other policies its own row (0, 1), nearest y."""
    from lexgold.evaluate.analogy import read_questions, solve
    words = ["Berlin", "berlin", "germany", "france", "x", "y"]
    matrix = np.array([[1, 0], [0, 1], [-1, -1], [-1, -0.5], [1, 0.1], [0.1, 1]], np.float32)
    path = _write(tmp_path / "q.txt", [": capitals", "germany france berlin x"])
    accuracy = {case: solve(read_questions(path), Vectors(words, matrix), ["ONLY-B"],
                            case=case)["ONLY-B"]["all"] for case in CASE_POLICIES}
    assert accuracy == {"lower": 1.0, "exact-then-lower": 0.0, "exact": 0.0}


def test_streamed_read_without_mean_refuses_to_guess_it(files):
    with pytest.raises(ValueError, match="mean=True"):
        read_vectors(files["text"], keep=["the"]).mean_vector()
