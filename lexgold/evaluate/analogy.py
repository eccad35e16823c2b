"""Word analogies a : a* :: b : b*, solved with the functions and baselines of Linzen (2016).

Linzen (2016), section 2. Every word of the vocabulary may be the answer, except that a, a*
and b are excluded in every method but VANILLA (REVERSE methods exclude the words of the
reversed problem, a*, a and b*). Cosines are over unit-length vectors, so the offset methods
are argmax of sums of cosines (Levy & Goldberg 2014), as in word2vec's ``compute-accuracy`` and
gensim's ``evaluate_word_analogies``.

========================  ===================================================  ==========
method                    x* = argmax over candidates of                       answer
========================  ===================================================  ==========
``VANILLA``               cos(x, a* - a + b), nothing excluded                 b*
``ADD``                   cos(x, a* - a + b)                                   b*
``ONLY-B``                cos(x, b)                                            b*
``IGNORE-A``              cos(x, a* + b)                                       b*
``ADD-OPPOSITE``          cos(x, -(a* - a) + b)                                b*
``MULTIPLY``              cos'(x, a*) cos'(x, b) / (cos'(x, a) + eps),         b*
                          cos' = (cos + 1) / 2, eps = 0.001 (3CosMul; below)
``REVERSE(ADD)``          ADD on a* : a :: b* : _, i.e. cos(x, a - a* + b*)    b
``REVERSE(ONLY-B)``       ONLY-B on the reverse problem, i.e. cos(x, b*)       b
========================  ===================================================  ==========

MULTIPLY is not Linzen's Eq. 8 as printed, cos(x, a*) cos(x, b) / cos(x, a), but the form
Levy & Goldberg (2014, section 3) define and use, 3CosMul: cosines shifted to [0, 1] by
(cos + 1) / 2, so that a negative cosine cannot flip the sign of the product, and eps = 0.001
against division by zero. Linzen cites that paper for the method and reports "a slight
advantage for MULTIPLY over ADD" as Levy & Goldberg found with 3CosMul. ``multiply="literal"``
computes Eq. 8 as printed, on raw cosines (a candidate whose cosine with a is exactly 0 has no
score). The result says which form was used (key ``multiply``).

Questions with a word outside the vocabulary are skipped and counted. Under the 'lower' case
policy the vocabulary is folded to lower case: a question word is looked up as its first
(most frequent) case variant, a candidate is excluded when its folded form is one of the
excluded words, and a guess is right when its folded form is the answer's (gensim's
``case_insensitive=True``). 'exact-then-lower' (the default) folds candidates the same way but
looks a question word up by its exact spelling first, then as under 'lower'; 'exact' folds
nothing. Scores are batched matrix products over chunks of questions.

References
----------
Linzen, T. (2016). Issues in evaluating semantic spaces using word analogies. RepEval.
Levy, O. & Goldberg, Y. (2014). Linguistic regularities in sparse and explicit word
representations. CoNLL, section 3 (3CosMul, eps = 0.001).
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pandas as pd

from lexgold.compression import open_input
from lexgold.errors import InputError
from lexgold.evaluate.vectors import CASE_POLICIES, DEFAULT_CASE, Vectors, check_choice, fold

METHODS = ("VANILLA", "ADD", "ONLY-B", "IGNORE-A", "ADD-OPPOSITE", "MULTIPLY", "REVERSE(ADD)",
           "REVERSE(ONLY-B)")
#: coefficients on (a, a*, b, b*) of the query, the excluded words, and the answer
_LINEAR = {
    "VANILLA": ((-1, 1, 1, 0), (), "b_star"),
    "ADD": ((-1, 1, 1, 0), ("a", "a_star", "b"), "b_star"),
    "ONLY-B": ((0, 0, 1, 0), ("a", "a_star", "b"), "b_star"),
    "IGNORE-A": ((0, 1, 1, 0), ("a", "a_star", "b"), "b_star"),
    "ADD-OPPOSITE": ((1, -1, 1, 0), ("a", "a_star", "b"), "b_star"),
    "REVERSE(ADD)": ((1, -1, 0, 1), ("a", "a_star", "b_star"), "b"),
    "REVERSE(ONLY-B)": ((0, 0, 0, 1), ("a", "a_star", "b_star"), "b"),
}
MULTIPLY_EPS = 0.001
#: forms of MULTIPLY: Levy & Goldberg's 3CosMul (default), or Linzen's Eq. 8 as printed
MULTIPLY_FORMS = {
    "shifted": "3CosMul (Levy & Goldberg 2014, section 3): cos'(x,a*) cos'(x,b) / (cos'(x,a) "
               "+ 0.001), cos' = (cos + 1) / 2, on unit vectors; not Linzen's Eq. 8 as printed",
    "literal": "Linzen (2016) Eq. 8 as printed: cos(x,a*) cos(x,b) / cos(x,a) on raw cosines; "
               "a candidate with cos(x,a) = 0 has no score",
}
ROLES = ("a", "a_star", "b", "b_star")


def read_questions(path) -> pd.DataFrame:
    """Read a questions-words file: ``: category`` lines, then ``a a* b b*`` per line.

    Returns
    -------
    pandas.DataFrame
        Columns ``category, a, a_star, b, b_star`` in file order.
    """
    path = Path(path)
    rows, category = [], None
    with open_input(path) as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            if line.startswith(":"):
                category = line[1:].strip()
                continue
            words = line.split()
            if category is None:
                raise InputError("question before the first ': category' line", path=path,
                                 line=number)
            if len(words) != 4:
                raise InputError(f"expected 4 words (a a* b b*), found {len(words)}", path=path,
                                 line=number)
            rows.append((category, *words))
    if not rows:
        raise InputError("no analogy questions found", path=path)
    return pd.DataFrame(rows, columns=["category", *ROLES])


def _vocabulary(vectors: Vectors, case: str, restrict_vocab: int | None):
    """Rows kept, a lookup of question words, and each row's first row with the same key.

    Keys are lower-cased under 'lower' and 'exact-then-lower' (which differ only in the row
    a question word finds: :mod:`lexgold.evaluate.vectors`), exact spellings under 'exact'.
    """
    n = len(vectors) if restrict_vocab is None else min(restrict_vocab, len(vectors))
    folding = "exact" if case == "exact" else "lower"
    index: dict[str, int] = {}
    exact: dict[str, int] = {}
    group = np.empty(n, dtype=np.int64)
    for row, word in enumerate(vectors.words[:n]):
        group[row] = index.setdefault(fold(word, folding), row)
        if case == "exact-then-lower":
            exact.setdefault(word, row)

    def lookup(word: str) -> int:
        row = exact.get(word)
        return index.get(fold(word, folding), -1) if row is None else row
    return n, lookup, group


def _variant_rows(group: np.ndarray):
    """For each first row r, all rows of its key: ``rows[start[r]:start[r] + count[r]]``."""
    order = np.argsort(group, kind="stable")
    count = np.bincount(group, minlength=len(group))
    start = np.concatenate([[0], np.cumsum(count)[:-1]])
    return order, start, count


def _exclusion_pairs(ids: np.ndarray, variants) -> tuple[np.ndarray, np.ndarray]:
    """(question, row) pairs to exclude: every case variant of each excluded word."""
    order, start, count = variants
    q = np.repeat(np.arange(ids.shape[0]), ids.shape[1])
    words = ids.ravel()
    lengths = count[words]
    q = np.repeat(q, lengths)
    offsets = np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    return q, order[np.repeat(start[words], lengths) + offsets]


def _needed_roles(method: str) -> tuple[str, ...]:
    if method == "MULTIPLY":
        return ("a", "a_star", "b")
    return tuple(r for r, c in zip(ROLES, _LINEAR[method][0]) if c)


def _block_scores(method: str, cosines: np.ndarray, pos: dict,
                  multiply: str = "shifted") -> np.ndarray:
    """Scores of a block of vocabulary columns for every question (questions x block).

    ``cosines`` holds cos(question word, vocabulary word) for the distinct question words
    (for the shifted MULTIPLY, already shifted to (cos + 1) / 2);
    with unit vectors, cos(x, sum_i c_i w_i) ranks x as sum_i c_i cos(x, w_i) does, since
    the norm of the query is constant per question (Levy & Goldberg 2014, eq. 3-4).
    """
    if method == "MULTIPLY":
        scores = np.take(cosines, pos["a_star"], axis=0)
        scores *= np.take(cosines, pos["b"], axis=0)
        if multiply == "shifted":                 # cosines already shifted to [0, 1]
            scores /= np.take(cosines, pos["a"], axis=0) + MULTIPLY_EPS
            return scores
        with np.errstate(divide="ignore", invalid="ignore"):
            scores /= np.take(cosines, pos["a"], axis=0)
        scores[~np.isfinite(scores)] = -np.inf
        return scores
    scores = None
    for role, c in zip(ROLES, _LINEAR[method][0]):
        if not c:
            continue
        part = np.take(cosines, pos[role], axis=0)
        if scores is None:
            scores = part if c == 1 else c * part
        elif c == 1:
            scores += part
        else:
            scores -= part
    return scores


def _excluded_and_answer(method: str) -> tuple[tuple, str]:
    if method == "MULTIPLY":
        return ("a", "a_star", "b"), "b_star"
    return _LINEAR[method][1], _LINEAR[method][2]


def _guesses(method: str, unit: np.ndarray, ids: dict, group: np.ndarray, variants,
             chunk_bytes: int, tile: int = 1 << 18, multiply: str = "shifted") -> np.ndarray:
    """Row of the best candidate for every question, over blocks of vocabulary columns.

    Each column block costs one matrix product (distinct question words x block), bounded by
    ``chunk_bytes``; the scores are then formed and reduced in tiles of about ``tile`` floats
    (questions x columns) that stay in cache, keeping a running maximum per question.
    """
    n_questions, n = len(ids["a"]), unit.shape[0]
    words = np.unique(np.concatenate([ids[r] for r in _needed_roles(method)]))
    pos = {r: np.searchsorted(words, ids[r]) for r in _needed_roles(method)}
    excluded, _ = _excluded_and_answer(method)
    q_excl, col_excl = np.empty(0, np.int64), np.empty(0, np.int64)
    if excluded:
        q_excl, col_excl = _exclusion_pairs(np.stack([group[ids[r]] for r in excluded], axis=1),
                                            variants)
    order = np.lexsort((col_excl, q_excl))           # by question, then column
    q_excl, col_excl = q_excl[order], col_excl[order]
    block = int(max(1, min(n, chunk_bytes // (4 * len(words)))))
    best = np.full(n_questions, -np.inf, dtype=np.float32)
    guess = np.zeros(n_questions, dtype=np.int64)
    word_vectors = unit[words]
    for first in range(0, n, block):
        last = min(first + block, n)
        cosines = word_vectors @ unit[first:last].T
        if method == "MULTIPLY" and multiply == "shifted":
            cosines += 1
            cosines /= 2
        in_block = (col_excl >= first) & (col_excl < last)
        qb, cb = q_excl[in_block], col_excl[in_block] - first
        step = max(1, tile // (last - first))
        for q0 in range(0, n_questions, step):
            q1 = min(q0 + step, n_questions)
            scores = _block_scores(method, cosines, {r: p[q0:q1] for r, p in pos.items()},
                                   multiply)
            lo, hi = np.searchsorted(qb, [q0, q1])
            scores[qb[lo:hi] - q0, cb[lo:hi]] = -np.inf
            top = scores.argmax(axis=1)
            value = scores[np.arange(q1 - q0), top]
            better = value > best[q0:q1]
            best[q0:q1][better] = value[better]
            guess[q0:q1][better] = top[better] + first
    return guess


def solve(questions: pd.DataFrame, vectors: Vectors, methods=METHODS, *,
          case: str = DEFAULT_CASE, restrict_vocab: int | None = None,
          chunk_bytes: int = 32 << 20, multiply: str = "shifted",
          in_place: bool = False) -> dict:
    """Accuracy of each analogy method, per category and overall, with solve times.

    Parameters
    ----------
    questions : pandas.DataFrame
        From :func:`read_questions`.
    vectors : Vectors
    methods : sequence of str
        Names from ``METHODS``.
    case : {'exact-then-lower', 'lower', 'exact'}
        Case policy (module docstring).
    restrict_vocab : int, optional
        Use only the first ``restrict_vocab`` words, as candidates and for lookup (gensim's
        ``restrict_vocab``; ``lexgold analogy`` reads only those rows of the file).
    chunk_bytes : int
        Memory bound of one block of scores.
    multiply : {'shifted', 'literal'}
        Form of MULTIPLY: Levy & Goldberg's 3CosMul (default) or Linzen's Eq. 8 as printed
        (module docstring).
    in_place : bool
        Scale the rows of ``vectors.matrix`` to unit length in place instead of in a copy
        (``lexgold analogy`` does: it reads the vectors only for this; the matrix is then
        changed for the caller).

    Returns
    -------
    dict
        ``{method: {category: accuracy, "all": accuracy}}`` (accuracy in [0, 1], higher is
        better; NaN for a category with no covered question), ``seconds: {method: solve time}``
        (loading and vocabulary lookup excluded), ``counts: {category: {questions, covered}}``,
        and, when MULTIPLY is run, ``multiply: {"form": ..., "formula": ...}``.
    """
    for method in methods:
        check_choice("method", method, METHODS)
    check_choice("case", case, CASE_POLICIES)
    check_choice("multiply", multiply, tuple(MULTIPLY_FORMS))
    n, lookup, group = _vocabulary(vectors, case, restrict_vocab)
    codes, distinct = pd.factorize(questions[list(ROLES)].to_numpy().ravel())
    rows = np.array([lookup(str(word)) for word in distinct], dtype=np.int64)
    table = rows[codes].reshape(-1, len(ROLES))
    looked_up = {role: table[:, i] for i, role in enumerate(ROLES)}
    covered = np.all([looked_up[r] >= 0 for r in ROLES], axis=0)
    kept = questions[covered].reset_index(drop=True)
    ids = {role: looked_up[role][covered] for role in ROLES}
    unit = vectors.unit(n, in_place=in_place)
    variants = _variant_rows(group)
    result: dict = {"seconds": {}}
    for method in methods:
        start = time.perf_counter()
        _, answer = _excluded_and_answer(method)
        if len(kept):
            guess = _guesses(method, unit, ids, group, variants, chunk_bytes,
                             multiply=multiply)
            correct = group[guess] == group[ids[answer]]
        else:
            correct = np.zeros(0, dtype=bool)
        result["seconds"][method] = time.perf_counter() - start
        result[method] = _accuracy(kept["category"], correct, questions["category"])
    totals = questions.groupby("category", sort=False).size()
    hits = pd.Series(covered, index=questions.index).groupby(questions["category"],
                                                             sort=False).sum()
    result["counts"] = {c: {"questions": int(totals[c]), "covered": int(hits[c])}
                        for c in totals.index}
    result["counts"]["all"] = {"questions": int(len(questions)), "covered": int(covered.sum())}
    if "MULTIPLY" in methods:
        result["multiply"] = {"form": multiply, "formula": MULTIPLY_FORMS[multiply]}
    return result


def _accuracy(categories: pd.Series, correct: np.ndarray, all_categories: pd.Series) -> dict:
    means = pd.Series(correct, dtype=float).groupby(categories.to_numpy(), sort=False).mean()
    out = {c: float(means.get(c, np.nan)) for c in all_categories.unique()}
    out["all"] = float(correct.mean()) if len(correct) else float("nan")
    return out
