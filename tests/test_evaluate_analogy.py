"""Analogies (Linzen 2016): every method against a literal per-question implementation of the
paper's equations, ADD against gensim's evaluate_word_analogies, OOV counting, chunking."""

from pathlib import Path

import gensim
import numpy as np
import pandas as pd
import pytest
from gensim.models import Word2Vec

from lexgold.errors import InputError
from lexgold.evaluate.analogy import METHODS, read_questions, solve
from lexgold.evaluate.vectors import Vectors

DATA = Path(gensim.__file__).parent / "test" / "test_data"
QUESTIONS = DATA / "questions-words.txt"


@pytest.fixture(scope="module")
def lee_kv():
    sentences = [line.lower().split() for line in (DATA / "lee_background.cor").open()]
    return Word2Vec(sentences, vector_size=40, min_count=2, seed=7, workers=1, epochs=5).wv


def _cos(x, v):
    return x @ v / (np.linalg.norm(x, axis=-1) * np.linalg.norm(v))


def _reference(method, unit, a, a_star, b, b_star, multiply="shifted"):
    """Linzen (2016) section 2, equations (2)-(8), one question at a time; MULTIPLY as
    Levy & Goldberg's 3CosMul, or Eq. 8 as printed (``multiply="literal"``)."""
    excluded = {a, a_star, b}
    if method == "VANILLA":
        scores, excluded = _cos(unit, unit[a_star] - unit[a] + unit[b]), set()
    elif method == "ADD":
        scores = _cos(unit, unit[a_star] - unit[a] + unit[b])
    elif method == "ONLY-B":
        scores = _cos(unit, unit[b])
    elif method == "IGNORE-A":
        scores = _cos(unit, unit[a_star] + unit[b])
    elif method == "ADD-OPPOSITE":
        scores = _cos(unit, -(unit[a_star] - unit[a]) + unit[b])
    elif method == "MULTIPLY" and multiply == "literal":
        with np.errstate(divide="ignore", invalid="ignore"):
            scores = _cos(unit, unit[a_star]) * _cos(unit, unit[b]) / _cos(unit, unit[a])
        scores[~np.isfinite(scores)] = -np.inf
    elif method == "MULTIPLY":
        shift = [(_cos(unit, unit[w]) + 1) / 2 for w in (a_star, b, a)]
        scores = shift[0] * shift[1] / (shift[2] + 0.001)
    elif method == "REVERSE(ADD)":     # a* : a :: b* : _
        scores, excluded = _cos(unit, unit[a] - unit[a_star] + unit[b_star]), {a_star, a, b_star}
    elif method == "REVERSE(ONLY-B)":
        scores, excluded = _cos(unit, unit[b_star]), {a_star, a, b_star}
    scores = scores.copy()
    scores[list(excluded)] = -np.inf
    return int(np.argmax(scores))


@pytest.mark.parametrize("method, multiply", [(m, "shifted") for m in METHODS]
                         + [("MULTIPLY", "literal")])
def test_every_method_matches_the_papers_equations(method, multiply):
    rng = np.random.default_rng(11)
    words = [f"w{i}" for i in range(60)]
    matrix = rng.standard_normal((60, 8)).astype(np.float32)
    unit = matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
    quads = [rng.choice(60, size=4, replace=False) for _ in range(80)]
    answers = []
    for a, a_star, b, b_star in quads:
        guess = _reference(method, unit.astype(np.float64), a, a_star, b, b_star, multiply)
        # the question's expected answer is the reference guess half of the time
        target = guess if len(answers) % 2 == 0 else (b_star if method not in (
            "REVERSE(ADD)", "REVERSE(ONLY-B)") else b)
        answers.append((guess, target))
    rows = []
    for (a, a_star, b, b_star), (guess, target) in zip(quads, answers):
        if method.startswith("REVERSE"):
            rows.append(("cat", words[a], words[a_star], words[target], words[b_star]))
        else:
            rows.append(("cat", words[a], words[a_star], words[b], words[target]))
    questions = pd.DataFrame(rows, columns=["category", "a", "a_star", "b", "b_star"])
    expected = []
    for (_, a, a_star, b, b_star), (guess, target) in zip(rows, answers):
        ids = [words.index(w) for w in (a, a_star, b, b_star)]
        expected.append(_reference(method, unit.astype(np.float64), *ids, multiply)
                        == words.index(b_star if not method.startswith("REVERSE") else b))
    result = solve(questions, Vectors(words, matrix), [method], chunk_bytes=4 * 60 * 7,
                   multiply=multiply)
    assert (result.get("multiply", {}).get("form") == multiply) == (method == "MULTIPLY")
    assert result[method]["all"] == pytest.approx(np.mean(expected))
    assert 0.4 < np.mean(expected)     # the half built to be right are right


def test_multiply_forms_differ_where_a_negative_cosine_flips_the_product():
    # a*, b, a orthonormal; x1 has cosines (0.6, 0.6, 0.5) with them, x2 (-0.3, -0.3, 0.1).
    # 3CosMul: x1 0.8 * 0.8 / (0.75 + 0.001) = 0.852 > x2 0.35 * 0.35 / 0.551 = 0.222;
    # Eq. 8 as printed: x1 0.6 * 0.6 / 0.5 = 0.72 < x2 (-0.3) (-0.3) / 0.1 = 0.9.
    matrix = np.zeros((5, 5), dtype=np.float32)
    matrix[0, 2] = matrix[1, 0] = matrix[2, 1] = 1                      # a, a*, b
    matrix[3] = [0.6, 0.6, 0.5, np.sqrt(1 - 0.97), 0]                    # x1
    matrix[4] = [-0.3, -0.3, 0.1, 0, np.sqrt(1 - 0.19)]                  # x2
    vectors = Vectors(["a", "astar", "b", "x1", "x2"], matrix)
    questions = pd.DataFrame([("c", "a", "astar", "b", "x1"), ("c", "a", "astar", "b", "x2")],
                             columns=["category", "a", "a_star", "b", "b_star"])
    shifted = solve(questions.iloc[:1], vectors, ["MULTIPLY"])
    literal = solve(questions.iloc[1:], vectors, ["MULTIPLY"], multiply="literal")
    assert shifted["MULTIPLY"]["all"] == 1.0 and literal["MULTIPLY"]["all"] == 1.0
    assert solve(questions.iloc[1:], vectors, ["MULTIPLY"])["MULTIPLY"]["all"] == 0.0
    assert "3CosMul" in shifted["multiply"]["formula"] and shifted["multiply"]["form"] == "shifted"
    assert "Eq. 8" in literal["multiply"]["formula"]
    assert "multiply" not in solve(questions, vectors, ["ADD"])
    with pytest.raises(InputError, match="multiply must be one of shifted, literal; got 'eq8'"):
        solve(questions, vectors, ["MULTIPLY"], multiply="eq8")


def _covered_questions(kv):
    questions = read_questions(QUESTIONS)
    for role in ("a", "a_star", "b", "b_star"):
        questions[role] = questions[role].str.lower()
    inside = questions[["a", "a_star", "b", "b_star"]].isin(list(kv.key_to_index)).all(axis=1)
    return questions[inside].reset_index(drop=True)


def _write(questions, path):
    lines = []
    for category, group in questions.groupby("category", sort=False):
        lines.append(f": {category}")
        lines.extend(" ".join(row) for row in group[["a", "a_star", "b", "b_star"]].to_numpy())
    path.write_text("\n".join(lines) + "\n")
    return path


def test_vanilla_mostly_returns_b_which_add_excludes(lee_kv):
    """Linzen section 4: without exclusion the nearest word to a* - a + b is b or a*."""
    vectors = Vectors(list(lee_kv.index_to_key), lee_kv.vectors)
    covered = _covered_questions(lee_kv)
    is_b = solve(covered.assign(b_star=covered["b"]), vectors, ["VANILLA", "ADD", "ONLY-B"])
    is_a_star = solve(covered.assign(b_star=covered["a_star"]), vectors, ["VANILLA", "ADD"])
    assert len(covered) > 300
    # chance is 2 / vocabulary size (about 0.0003 here)
    assert is_b["VANILLA"]["all"] + is_a_star["VANILLA"]["all"] > 0.7
    assert is_b["ADD"]["all"] == is_b["ONLY-B"]["all"] == is_a_star["ADD"]["all"] == 0


@pytest.mark.parametrize("case", ["lower", "exact"])
def test_add_equals_gensim_evaluate_word_analogies(lee_kv, tmp_path, case):
    """Same vectors, same questions: the answer of every other question is gensim's own
    3CosAdd guess, so accuracy is far from 0 and any disagreement in the argmax shows."""
    questions = _covered_questions(lee_kv)
    for i in range(0, len(questions), 2):
        a, a_star, b = questions.loc[i, ["a", "a_star", "b"]]
        guesses = lee_kv.most_similar(positive=[a_star, b], negative=[a], topn=5)
        questions.loc[i, "b_star"] = next(w for w, _ in guesses if w not in {a, a_star, b})
    path = _write(questions, tmp_path / "questions.txt")
    result = solve(read_questions(path), Vectors(list(lee_kv.index_to_key), lee_kv.vectors),
                   ["ADD"], case=case)
    score, sections = lee_kv.evaluate_word_analogies(str(path), restrict_vocab=len(lee_kv),
                                                     case_insensitive=(case == "lower"))
    assert result["counts"]["all"]["covered"] == len(questions) > 300
    assert score > 0.45
    assert result["ADD"]["all"] == pytest.approx(score, abs=1e-12)
    for section in sections[:-1]:
        n = len(section["correct"]) + len(section["incorrect"])
        assert result["counts"][section["section"]]["covered"] == n
        assert result["ADD"][section["section"]] == pytest.approx(len(section["correct"]) / n)


def test_case_variants_excluded_and_counted_right():
    # "Paris" is a later variant of "paris": excluded as b under 'lower', a right answer
    # when it is b* (its folded form is the answer's)
    words = ["france", "paris", "italy", "rome", "Rome", "Paris"]
    matrix = np.array([[1, 0, 0], [1, 1, 0], [0, 0, 1], [0, 1, 1], [0, 1, 1.01], [1, 1.1, 0]],
                      dtype=np.float32)
    questions = pd.DataFrame([("c", "france", "paris", "italy", "rome")],
                             columns=["category", "a", "a_star", "b", "b_star"])
    lower = solve(questions, Vectors(words, matrix), ["ADD"], case="lower")
    assert lower["ADD"]["all"] == 1.0


def test_oov_questions_skipped_and_counted():
    words = ["a", "b", "c", "d", "e"]
    questions = pd.DataFrame([("x", "a", "b", "c", "d"), ("x", "a", "b", "c", "zzz"),
                              ("y", "qq", "b", "c", "d")],
                             columns=["category", "a", "a_star", "b", "b_star"])
    result = solve(questions, Vectors(words, np.eye(5, dtype=np.float32)), ["ADD"])
    assert result["counts"]["x"] == {"questions": 2, "covered": 1}
    assert result["counts"]["y"] == {"questions": 1, "covered": 0}
    assert result["counts"]["all"] == {"questions": 3, "covered": 1}
    assert np.isnan(result["ADD"]["y"])
    assert set(result["seconds"]) == {"ADD"}


def test_chunking_does_not_change_results(lee_kv):
    vectors = Vectors(list(lee_kv.index_to_key), lee_kv.vectors)
    questions = read_questions(QUESTIONS)
    big = solve(questions, vectors, ["ADD", "MULTIPLY"])
    small = solve(questions, vectors, ["ADD", "MULTIPLY"], chunk_bytes=1 << 16)
    assert big["ADD"] == small["ADD"] and big["MULTIPLY"] == small["MULTIPLY"]


def test_bad_questions_file(tmp_path):
    path = tmp_path / "q.txt"
    path.write_text(": capitals\nathens greece baghdad\n")
    with pytest.raises(InputError, match=r"q.txt:2: expected 4 words"):
        read_questions(path)
    path.write_text("athens greece baghdad iraq\n")
    with pytest.raises(InputError, match=r"q.txt:1: question before the first"):
        read_questions(path)


def test_in_place_unit_rows_give_the_same_answers_without_a_copy(lee_kv):
    """Issue 22 item 7: ``lexgold analogy`` scales the matrix in place instead of copying it."""
    questions = read_questions(QUESTIONS)
    copied = Vectors(list(lee_kv.index_to_key), lee_kv.vectors.copy())
    expected = solve(questions, copied, ["ADD", "MULTIPLY"])
    assert not np.allclose(np.linalg.norm(copied.matrix, axis=1), 1)    # left as it was
    scaled = Vectors(list(lee_kv.index_to_key), lee_kv.vectors.copy())
    buffer = scaled.matrix.ctypes.data
    found = solve(questions, scaled, ["ADD", "MULTIPLY"], in_place=True)
    assert found["ADD"] == expected["ADD"] and found["MULTIPLY"] == expected["MULTIPLY"]
    assert scaled.matrix.ctypes.data == buffer
    assert np.allclose(np.linalg.norm(scaled.matrix, axis=1), 1, atol=1e-6)
    np.testing.assert_array_equal(scaled.matrix, copied.unit())
