"""Word-pair evaluation: correlations against scipy and gensim, OOV/case policies, subsets,
bootstrap, Steiger's test, and the TR9856 binary task."""

import warnings
from pathlib import Path

import gensim
import numpy as np
import pandas as pd
import pytest
from gensim.models import Word2Vec
from scipy import stats

from lexgold.evaluate.gold import DuplicatePairWarning, read_gold
from lexgold.evaluate.tr9856_binary import best_threshold, binary_task
from lexgold.evaluate.vectors import Vectors
from lexgold.evaluate.wordpairs import (compare_models, correlation_ci, correlations,
                                        evaluate_pairs, pair_scores, steiger_test, subsets,
                                        worst_pairs)

DATA = Path(gensim.__file__).parent / "test" / "test_data"


@pytest.fixture(scope="module")
def lee_models():
    sentences = [line.lower().split() for line in (DATA / "lee_background.cor").open()]
    models = [Word2Vec(sentences, vector_size=30, min_count=3, seed=seed, workers=1, epochs=3,
                       window=w).wv for seed, w in ((1, 5), (2, 2))]
    return [(kv, Vectors(list(kv.index_to_key), kv.vectors.copy())) for kv in models]


@pytest.mark.parametrize("gold_file", ["wordsim353.tsv", "simlex999.txt"])
def test_spearman_equals_independent_scipy_and_gensim(lee_models, gold_file, tmp_path):
    """gensim scores every row; lexgold a pair listed twice once (the first row: issue 36),
    so gensim reads a copy without the repeated rows (wordsim353.tsv: money / cash, line 100)."""
    kv, vectors = lee_models[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DuplicatePairWarning)
        gold = read_gold(DATA / gold_file)
    seen, kept_lines = set(), []
    for line in (DATA / gold_file).read_text(encoding="utf-8").splitlines(keepends=True):
        key = tuple(line.split("\t")[:2])
        if line.startswith("#") or key not in seen:
            kept_lines.append(line)
        seen.add(key)
    once = tmp_path / gold_file
    once.write_text("".join(kept_lines), encoding="utf-8")
    result, scores = evaluate_pairs(gold, vectors)
    # independent: look words up in gensim, cosine with numpy, correlate with scipy
    covered = [(w1, w2, s) for w1, w2, s in gold[["word1", "word2", "score"]].itertuples(index=False)
               if w1.lower() in kv.key_to_index and w2.lower() in kv.key_to_index]
    vec = {w: kv[w].astype(np.float64) for w in kv.index_to_key}
    cos = [float(np.dot(vec[a.lower()], vec[b.lower()])
                 / np.linalg.norm(vec[a.lower()]) / np.linalg.norm(vec[b.lower()]))
           for a, b, _ in covered]
    assert result["covered"] == len(covered) and result["pairs"] == len(gold)
    assert result["spearman"] == pytest.approx(stats.spearmanr([s for *_, s in covered], cos)[0],
                                               abs=1e-9)
    assert result["pearson"] == pytest.approx(stats.pearsonr([s for *_, s in covered], cos)[0],
                                              abs=1e-6)
    pearson, spearman, oov_percent = kv.evaluate_word_pairs(str(once),
                                                            restrict_vocab=len(kv))
    assert result["spearman"] == pytest.approx(spearman.statistic, abs=1e-6)
    assert 100 * (1 - result["covered"] / result["pairs"]) == pytest.approx(oov_percent)


def _toy():
    vectors = Vectors(["cat", "dog", "new", "york", "car"],
                      np.array([[1, 0], [1, 1], [0, 1], [1, -1], [-1, 0]], dtype=np.float32))
    gold = pd.DataFrame({"word1": ["cat", "cat", "New York", "cat", "zebra"],
                         "word2": ["dog", "car", "dog", "new", "cat"],
                         "score": [8.0, 1.0, 3.0, 5.0, 6.0]})
    return vectors, gold


def test_multiword_sum_and_oov_policies():
    vectors, gold = _toy()
    drop = pair_scores(gold, vectors, oov="drop")
    # cos(cat, dog) = 1/sqrt(2); "New York" = new + york = (1, 0) -> cos with dog = 1/sqrt(2)
    assert drop["model"].tolist()[:4] == pytest.approx([2 ** -0.5, -1.0, 2 ** -0.5, 0.0])
    assert drop["found"].tolist() == [True, True, True, True, False]
    assert np.isnan(drop["model"].iloc[4])
    zero = pair_scores(gold, vectors, oov="zero")
    assert zero["model"].iloc[4] == 0.0 and zero["used"].all()
    mean = pair_scores(gold, vectors, oov="mean")
    m = vectors.matrix.mean(axis=0)                    # (0.4, 0.2); cos with cat (1, 0)
    assert m == pytest.approx([0.4, 0.2])
    assert mean["model"].iloc[4] == pytest.approx(0.4 / np.hypot(0.4, 0.2))
    result = correlations(zero)
    assert (result["pairs"], result["covered"], result["used"]) == (5, 4, 5)


def test_case_policy():
    vectors = Vectors(["Paris", "paris", "france"],
                      np.array([[1, 0], [0, 1], [1, 0.1]], dtype=np.float32))
    gold = pd.DataFrame({"word1": ["paris"], "word2": ["france"], "score": [9.0]})
    lower = pair_scores(gold, vectors, case="lower")   # first variant, "Paris", is used
    exact = pair_scores(gold, vectors, case="exact")
    assert lower["model"].iloc[0] == pytest.approx(1 / np.hypot(1, 0.1))
    assert exact["model"].iloc[0] == pytest.approx(0.1 / np.hypot(1, 0.1))


def test_constant_scores_warn_and_give_nan():
    scores = pd.DataFrame({"gold": [1.0, 2.0, 3.0], "model": [0.5, 0.5, 0.5],
                           "found": True, "used": True})
    with pytest.warns(RuntimeWarning, match="undefined"):
        result = correlations(scores)
    assert np.isnan(result["spearman"]) and np.isnan(result["pearson"])


def test_subsets_concreteness_quartiles_assoc_pos_relation_multiword():
    gold = pd.DataFrame({"word1": list("abcdefgh"), "word2": ["x y", *"ijklmno"],
                         "score": range(8), "pos": list("NNNNVVAA"),
                         "conc1": [1, 5, 2, 4, 3, 1, 5, 2], "conc2": [1, 5, 3, 4, 1, 2, 4, 2],
                         "assoc": [0.1, 0.9, 0.5, 0.3, 0.8, 0.2, 0.7, 0.4],
                         "relation": ["syn", "ant", "syn", "cohyp", "syn", "ant", "mero", "syn"]})
    masks = subsets(gold)
    # sums: 2 10 5 8 4 3 9 4 -> bottom two: a (2), f (3); top two: b (10), g (9)
    assert gold["word1"][masks["conc_q1"]].tolist() == ["a", "f"]
    assert gold["word1"][masks["conc_q4"]].tolist() == ["b", "g"]
    assert masks["assoc333"].all()                    # fewer than 333 pairs: all of them
    assert masks["pos=V"].tolist() == [False] * 4 + [True, True, False, False]
    assert masks["relation=syn"].sum() == 4
    assert masks["multi-word"].tolist() == [True] + [False] * 7
    top = subsets(pd.DataFrame({"word1": ["a"] * 400, "word2": ["b"] * 400, "score": 1.0,
                                "assoc": np.arange(400.0)}))["assoc333"]
    assert top.sum() == 333 and not top[:67].any() and top[67:].all()


HYPERLEX_EXCERPT = """WORD1 WORD2 POS TYPE AVG_SCORE AVG_SCORE_0_10 STD SCORES..
dog animal N hyp-2 5.70 9.50 0.48 6 6 5 6
animal dog N r-hyp-2 0.90 1.50 0.82 1 0 2 1
car vehicle N hyp-4 5.40 9.00 0.55 5 6 5 6
vehicle car V r-hyp-4 1.00 1.67 0.71 1 1 2 0
conflict disagreement N hyp-1 3.72 6.20 1.00 4 3 5 3
disagreement conflict N r-hyp-1 3.00 5.00 1.20 3 2 4 3
run move V hyp-1 4.20 7.00 0.84 4 5 3 5
move run V r-hyp-1 1.20 2.00 0.84 1 2 0 2
finger hand N mero 0.60 1.00 0.55 1 0 1 0
"""


def test_hyperlex_directionality_subset(tmp_path, lee_models):
    """Section 7.2, Table 14: hyp-N pairs scoring >= 7 on 0-10 (AVG_SCORE_0_10, not the 0-6
    AVG_SCORE), and the file's r-hyp-N pairs that reverse them (same POS)."""
    path = tmp_path / "hyperlex-all.txt"
    path.write_text(HYPERLEX_EXCERPT, encoding="utf-8")
    gold = read_gold(path)
    assert gold["score_0_10"].tolist()[:2] == [9.5, 1.5]
    masks = subsets(gold)

    def pick(mask):
        return [f"{a}/{b}" for a, b in zip(gold["word1"][mask], gold["word2"][mask])]

    # conflict / disagreement scores 6.2 < 7; run / move is exactly 7; vehicle / car is V
    assert pick(masks["directionality"]) == ["dog/animal", "car/vehicle", "run/move"]
    assert pick(masks["directionality+reversed"]) == ["dog/animal", "animal/dog", "car/vehicle",
                                                      "run/move", "move/run"]
    assert "directionality" not in subsets(gold.drop(columns="score_0_10"))
    _, vectors = lee_models[0]
    result, scores = evaluate_pairs(gold, vectors, oov="zero")
    both = scores[masks["directionality+reversed"]]
    assert result["subsets"]["directionality+reversed"]["pairs"] == 5
    assert result["subsets"]["directionality+reversed"]["spearman"] == pytest.approx(
        stats.spearmanr(both["gold"], both["model"])[0], nan_ok=True)


def test_correlation_ci_is_the_central_95_percent_of_scipy_replicates():
    """The percentile interval at the default level: the 2.5 % and 97.5 % quantiles of rho and
    r recomputed by scipy on the same resamples of the pairs (same generator, same draws)."""
    rng = np.random.default_rng(0)
    gold, model = rng.permutation(12).astype(float), rng.normal(size=12)
    scores = pd.DataFrame({"gold": gold, "model": model + gold / 4, "used": True})
    draws = np.random.default_rng(5).integers(0, 12, size=(300, 12))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rho = [stats.spearmanr(scores["gold"][d], scores["model"][d]).statistic for d in draws]
        r = [stats.pearsonr(scores["gold"][d], scores["model"][d]).statistic for d in draws]
    ci = correlation_ci(scores, rng=np.random.default_rng(5), n_boot=300)
    assert ci["spearman"] == pytest.approx(list(np.nanpercentile(rho, [2.5, 97.5])), abs=1e-12)
    assert ci["pearson"] == pytest.approx(list(np.nanpercentile(r, [2.5, 97.5])), abs=1e-12)
    at_80 = correlation_ci(scores, rng=np.random.default_rng(5), n_boot=300, level=0.8)
    assert at_80["spearman"] == pytest.approx(list(np.nanpercentile(rho, [10, 90])), abs=1e-12)


def test_correlation_ci_needs_three_pairs():
    scores = pd.DataFrame({"gold": [1.0, 2.0, 3.0, 4.0], "model": [1.0, 3.0, 2.0, 4.0],
                           "used": [True, True, True, False]})
    two = correlation_ci(scores.iloc[1:], rng=np.random.default_rng(0), n_boot=50)
    assert list(two) == ["spearman", "pearson"]
    assert all(len(v) == 2 and np.isnan(v).all() for v in two.values())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        three = correlation_ci(scores, rng=np.random.default_rng(0), n_boot=50)
    assert all(len(v) == 2 and np.isfinite(v).all() for v in three.values())


def test_correlation_ci_reproducible_and_contains_estimate(lee_models):
    _, vectors = lee_models[0]
    scores = pair_scores(read_gold(DATA / "wordsim353.tsv"), vectors)
    rho = correlations(scores)["spearman"]
    ci = correlation_ci(scores, rng=np.random.default_rng(3), n_boot=500)
    assert ci == correlation_ci(scores, rng=np.random.default_rng(3), n_boot=500)
    assert ci != correlation_ci(scores, rng=np.random.default_rng(4), n_boot=500)
    assert ci["spearman"][0] < rho < ci["spearman"][1]
    assert ci["spearman"][1] - ci["spearman"][0] < 0.6


def test_steiger_against_hand_computed_value():
    # Steiger (1980) eq. 14 by hand: r_jk = .5, r_jh = .3, r_kh = .6, n = 100
    # r_bar = .4, psi = .6 (1 - .32) - .5 * .16 (1 - .32 - .36) = .408 - .0256 = .3824
    # s = .3824 / .84^2 = .541950, sqrt(2 - 2 s) = .957131
    # z_jk - z_jh = .549306 - .309520 = .239786; Z = .239786 * sqrt(97) / .957131 = 2.46740
    result = steiger_test(0.5, 0.3, 0.6, 100)
    assert result["z"] == pytest.approx(2.46740, abs=1e-4)
    assert result["p"] == pytest.approx(2 * (1 - stats.norm.cdf(2.46740)), abs=1e-4)
    assert steiger_test(0.3, 0.5, 0.6, 100)["z"] == pytest.approx(-result["z"])


def test_compare_models_on_the_same_pairs(lee_models):
    gold = read_gold(DATA / "wordsim353.tsv")
    first, second = lee_models[0][1], lee_models[1][1]
    out = compare_models(gold, first, second)
    a, b = pair_scores(gold, first), pair_scores(gold, second)
    both = a["used"] & b["used"]
    assert out["used"] == both.sum()
    assert out["spearman"]["first"] == pytest.approx(stats.spearmanr(a["gold"][both],
                                                                     a["model"][both])[0])
    assert out["spearman"]["between"] == pytest.approx(stats.spearmanr(a["model"][both],
                                                                       b["model"][both])[0])
    assert 0 <= out["spearman"]["p"] <= 1


def test_worst_pairs_sorted_by_rank_disagreement():
    scores = pd.DataFrame({"word1": list("abcd"), "word2": list("efgh"),
                           "gold": [1.0, 2.0, 3.0, 4.0], "model": [0.1, 0.2, 0.9, np.nan],
                           "found": [True, True, True, False], "used": [True, True, True, False]})
    worst = worst_pairs(scores)
    assert worst["word1"].tolist()[-1] == "d"
    assert worst["rank_diff"].abs().iloc[0] >= worst["rank_diff"].abs().iloc[1]


def test_best_threshold_hand_case():
    threshold, errors = best_threshold(np.array([0.3, 0.1, 0.9, 0.2]),
                                       np.array([True, False, True, False]))
    assert (threshold, errors) == (pytest.approx(0.25), 0)
    # one unavoidable error: positive at 0.1 below a negative at 0.2
    threshold, errors = best_threshold(np.array([0.1, 0.2, 0.8, 0.9]),
                                       np.array([True, False, True, True]))
    assert errors == 1


def test_binary_task_tr9856_bands_and_errors():
    rng = np.random.default_rng(0)
    gold = rng.uniform(0, 1, 2000)
    labels = gold >= 0.8
    separable = binary_task(gold, gold, np.random.default_rng(1))
    assert separable["error"] == 0
    assert separable["positives"] == labels.sum()
    assert separable["negatives"] == (gold <= 0.2).sum()
    noise = binary_task(gold, rng.uniform(0, 1, 2000), np.random.default_rng(1))
    assert 0.35 < noise["error"] <= 0.6
    assert len(noise["fold_errors"]) == 10


def test_bootstrap_ranks_counted_from_codes_equal_sorted_average_ranks():
    from lexgold.evaluate import wordpairs
    from lexgold.stats import average_ranks, bootstrap_ci

    codes = np.array([[0, 2, 2, 1, 0], [3, 3, 3, 3, 0]], dtype=float)
    np.testing.assert_array_equal(wordpairs._replicate_ranks(codes), average_ranks(codes))
    rng = np.random.default_rng(0)
    for n in (3, 7, 120):                     # ties in both scores, as in SimLex's gold
        frame = pd.DataFrame({"gold": np.round(rng.uniform(0, 10, n), 1),
                              "model": np.round(rng.normal(size=n), 2), "used": True})
        got = wordpairs.correlation_ci(frame, rng=np.random.default_rng(3), n_boot=300)
        want = bootstrap_ci([frame["gold"], frame["model"]], wordpairs._rho_and_r,
                            rng=np.random.default_rng(3), n_boot=300)
        assert got == {"spearman": want[0].tolist(), "pearson": want[1].tolist()}
