"""The streaming paths of ``lexgold plan`` and ``lexgold machine worth`` at research scale
(issue 49) give what the direct computations give on the shipped real logs: Spearman-Brown's
mean inter-rater Pearson (pandas' ``corr`` of the pairs x raters table), the cross-validation
folds' model reliability (:func:`lexgold.process.plan.reliability_curve` itself, same random
numbers) and the alternative annotator test (the paper's leave-one-rater-out computation, one
rater at a time with ``scipy.stats.ttest_1samp``)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from lexgold.crowd.logs import shipped_log
from lexgold.machine import worth
from lexgold.machine.alttest import alternative_annotator_test
from lexgold.process import plan
from lexgold.ratings import ITEM
from lexgold.ratings.long import answers, check_ratings


@pytest.fixture(scope="module", params=["wordsim353", "danish", "card660"])
def identified(request):
    """A shipped log with identified raters, as plan reads it (one rating per rater and pair)."""
    frame, _ = shipped_log(request.param)
    return answers(check_ratings(frame.drop(columns=["_line", "_field"], errors="ignore")))


def pandas_mean_pearson(answered: pd.DataFrame, column) -> float:
    wide = answered.assign(column=np.asarray(column)).pivot_table(
        index=list(ITEM), columns="column", values="rating", aggfunc="mean")
    r = wide.corr(min_periods=3).to_numpy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return float(np.nanmean(r[~np.eye(len(r), dtype=bool)]))


def test_mean_pairwise_pearson_is_pandas_corr_on_real_logs(identified, monkeypatch):
    expected = pandas_mean_pearson(identified, identified["rater_id"])
    assert plan.mean_pairwise_pearson(identified, identified["rater_id"]) == pytest.approx(
        expected, abs=1e-12)
    monkeypatch.setattr(plan, "PEARSON_BLOCK_FLOATS", 7)     # one rater a block: the same
    assert plan.mean_pairwise_pearson(identified, identified["rater_id"]) == pytest.approx(
        expected, abs=1e-12)


def test_mean_pairwise_pearson_leaves_out_constant_raters_and_few_shared_pairs():
    rows = [("A", "p1", 1), ("A", "p2", 2), ("A", "p3", 3), ("A", "p4", 5),
            ("B", "p1", 2), ("B", "p2", 2), ("B", "p3", 4), ("B", "p4", 4),
            ("C", "p1", 3), ("C", "p2", 3), ("C", "p3", 3),          # constant: no r
            ("D", "p1", 1), ("D", "p2", 6)]                          # 2 shared pairs: no r
    frame = pd.DataFrame(rows, columns=["rater_id", "word1", "rating"]).assign(word2="x")
    a, b = np.array([1, 2, 3, 5.0]), np.array([2, 2, 4, 4.0])
    assert plan.mean_pairwise_pearson(frame, frame["rater_id"]) == pytest.approx(
        np.corrcoef(a, b)[0, 1], abs=1e-12)
    assert plan.mean_pairwise_pearson(frame, frame["rater_id"]) == pytest.approx(
        pandas_mean_pearson(frame, frame["rater_id"]), abs=1e-12)


def test_the_folds_model_reliability_is_reliability_curves_own(identified, monkeypatch):
    ks = [*range(1, 6), 9]
    direct, streamed = np.random.default_rng(3), np.random.default_rng(3)
    expected = plan.reliability_curve(identified, 9, rng=direct, replicates=0,
                                      simulations=5)["reliability"].to_numpy()
    monkeypatch.setattr(plan, "SIMULATION_FLOATS", 1)            # one rater slot a block
    found = plan._model_reliability(identified, 9, rng=streamed, simulations=5, ks=ks)
    assert np.array_equal(found[np.array(ks) - 1], expected[np.array(ks) - 1])
    assert np.isnan(found[5:8]).all()
    assert direct.random() == streamed.random()                  # as many draws


def direct_alternative_annotator_test(long: pd.DataFrame, machine: pd.Series,
                                      epsilon: float) -> list[dict]:
    """The test one rater at a time (module docstring of lexgold.machine.alttest, RMSE)."""
    wide = long.pivot(index="key", columns="rater_id", values="rating")
    wide = wide[pd.unique(long["rater_id"])]
    scores = machine.reindex(wide.index).to_numpy(float)
    values = wide.to_numpy(float)
    found = []
    for j, rater in enumerate(wide.columns):
        others = np.delete(values, j, axis=1)
        use = ~np.isnan(values[:, j]) & (np.sum(~np.isnan(others), axis=1) > 0)
        if use.sum() < 2:
            continue
        others, own, raw = others[use], values[use, j], scores[use]
        slope, intercept = np.polyfit(raw, np.nanmean(others, axis=1), 1)
        calibrated = slope * raw + intercept
        s_machine = -np.sqrt(np.nanmean((others - calibrated[:, None]) ** 2, axis=1))
        s_human = -np.sqrt(np.nanmean((others - own[:, None]) ** 2, axis=1))
        tie = np.isclose(s_machine, s_human, rtol=1e-9, atol=1e-12)
        w_machine = ((s_machine > s_human) | tie).astype(float)
        w_human = ((s_human > s_machine) | tie).astype(float)
        d = w_human - w_machine
        p = (stats.ttest_1samp(d, epsilon, alternative="less").pvalue
             if np.ptp(d) else float(d[0] >= epsilon))
        found.append({"rater": str(rater), "pairs": int(use.sum()),
                      "rho_machine": w_machine.mean(), "rho_human": w_human.mean(), "p": p})
    return found


def test_the_alternative_annotator_test_is_the_direct_one_on_real_logs(identified):
    answered, keys = worth._rater_answers(identified)
    long = pd.DataFrame({"rater_id": answered["rater_id"].astype(str),
                         "key": keys[answered["code"].to_numpy()],
                         "rating": answered["rating"]})
    # a machine that knows something: the pair's mean rating plus seeded noise, on 0-1
    mean = long.groupby("key")["rating"].mean()
    machine = (mean + np.random.default_rng(0).normal(0, 1.5, len(mean))) / 10
    found = alternative_annotator_test(long, machine, epsilon=0.2)["raters"]
    expected = direct_alternative_annotator_test(long, machine, 0.2)
    assert [(r["rater"], r["pairs"]) for r in found] == \
        [(r["rater"], r["pairs"]) for r in expected]
    for name in ("rho_machine", "rho_human", "p"):
        assert [r[name] for r in found] == pytest.approx([r[name] for r in expected],
                                                         rel=1e-9, abs=1e-12)


def test_rating_matrix_keeps_the_first_seen_layout():
    frame = pd.DataFrame({"rater_id": ["r1", "r2", "r1", "r2", "r3", "r1"],
                          "word1": ["Cat", "cat", "dog", "dog", "cat", "cat"],
                          "word2": ["dog", "dog", "bone", "bone", "dog", "dog"],
                          "rating": [1.0, 2.0, 3.0, 4.0, 5.0, 2.0],
                          "kind": ["unique"] * 5 + ["calibration"]})
    pairs, matrix = worth.rating_matrix(frame)
    assert pairs[["word1", "word2", "key", "n"]].values.tolist() == [
        ["Cat", "dog", "cat\tdog", 3], ["dog", "bone", "dog\tbone", 2]]
    assert np.array_equal(matrix, [[1.5, 2.0, 5.0], [3.0, 4.0, np.nan]], equal_nan=True)


def test_pair_ratings_are_the_matrix_rows_and_give_the_same_worth(identified):
    answered, keys = worth._rater_answers(identified)
    code = answered["code"].to_numpy()        # the padded matrix, a pair's raters in order
    column = answered.groupby(code, sort=False).cumcount().to_numpy()
    matrix = np.full((len(keys), column.max() + 1), np.nan)
    matrix[code, column] = answered["rating"].to_numpy()
    _, ragged = worth._ragged(answered, keys)
    assert ragged.width == matrix.shape[1]
    assert ragged.counts.tolist() == np.sum(~np.isnan(matrix), axis=1).tolist()
    order = np.random.default_rng(0).permutation(len(keys))[:7]
    assert np.array_equal(ragged.rows(order), matrix[order], equal_nan=True)
    # each pair's mean as np.nanmean of its padded row, to the last bit
    assert np.array_equal(ragged.means(), np.nanmean(matrix, axis=1))
    assert np.array_equal(worth.rating_matrix(identified)[1], matrix, equal_nan=True)
    machine = np.random.default_rng(1).normal(size=len(keys))
    machine[::5] = np.nan
    pool = 3
    found, expected = (worth.worth_curves(m, machine, pool=pool, splits=4,
                                          rng=np.random.default_rng(2))
                       for m in (ragged, matrix))
    assert found["pairs"] == expected["pairs"] == int(
        ((ragged.counts > pool) & ~np.isnan(machine)).sum())
    for name, value in expected.items():
        assert np.array_equal(found[name], value, equal_nan=True), name
