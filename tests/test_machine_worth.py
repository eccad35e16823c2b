"""What a machine is worth (lexgold.machine.worth, lexgold.machine.alttest): the human ratings it
equals on hand cases and on simulated pilots (labelled simulated), its calibration against SciPy,
its errors, the published-pairs note, Benjamini-Yekutieli and the alternative annotator test
against hand-computed cases."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from lexgold.errors import InputError
from lexgold.machine.alttest import alternative_annotator_test, benjamini_yekutieli
from lexgold.machine.prior import machine_for
from lexgold.machine.worth import (calibration, crossing, errors_by, machine_worth,
                                   misjudged, pair_key, published_overlap, rating_matrix,
                                   residuals, score_bands, worth_curves)


def long_frame(matrix, words=None):
    """A long-format pilot: pair ``i`` rated ``matrix[i]`` by raters ``r0, r1, ...``."""
    rows = []
    for i, ratings in enumerate(matrix):
        w1, w2 = words[i] if words else (f"a{i}", f"b{i}")
        for j, rating in enumerate(ratings):
            if not math.isnan(rating):
                rows.append({"rater_id": f"r{j}", "word1": w1, "word2": w2,
                             "rating": float(rating)})
    return pd.DataFrame(rows)


def test_crossing_interpolates_from_no_rating():
    assert crossing([0.5, 0.7], 0.25, start=0.0) == pytest.approx(0.5)   # halfway to k = 1
    assert crossing([0.5, 0.7], 0.6, start=0.0) == pytest.approx(1.5)
    assert crossing([0.5, 0.7], 0.7, start=0.0) == 2.0
    assert crossing([0.5, 0.7], -0.1, start=0.0) == 0.0
    assert crossing([0.5, 0.7], 0.71, start=0.0) == math.inf
    assert crossing([0.6, 0.5, 0.8], 0.55, start=0.0) == pytest.approx(0.55 / 0.6)  # first
    assert crossing([1.0, 0.5], 0.75, start=2.0, higher_is_better=False) == pytest.approx(1.5)
    assert math.isnan(crossing([0.5], math.nan, start=0.0))


def test_worth_curves_on_a_hand_case():
    """Pairs rated (0, 0), (1, 3), (4, 4), pool 1: whichever rating of (1, 3) is drawn, the
    pool ratings rank the pairs as the references do (Spearman 1), their MAE is 2/3 (0, 2, 0),
    and the best constant (the median reference, 1 or 3) is off by 4/3. A machine ranking them
    the same equals one rating."""
    matrix = np.array([[0.0, 0.0], [1.0, 3.0], [4.0, 4.0]])
    curves = worth_curves(matrix, np.array([0.0, 2.0, 4.0]), pool=1, splits=8,
                          rng=np.random.default_rng(1))
    np.testing.assert_allclose(curves["human_spearman"], 1.0)
    np.testing.assert_allclose(curves["human_mae"], 2 / 3)
    np.testing.assert_allclose(curves["constant_mae"], 4 / 3)
    np.testing.assert_allclose(curves["machine_spearman"], 1.0)
    np.testing.assert_allclose(curves["k_spearman"], 1.0)
    assert curves["pairs"] == 3


def test_pairs_with_too_few_ratings_or_no_machine_score_are_left_out():
    matrix = np.array([[0.0, 1.0, np.nan], [1.0, 3.0, 2.0], [4.0, 4.0, 5.0], [2.0, 2.0, 2.0]])
    with pytest.raises(InputError, match="2 pairs have a machine score and more than --pool 2"):
        worth_curves(matrix, np.array([0.0, 1.0, np.nan, 3.0]), pool=2, splits=1,
                     rng=np.random.default_rng(0))


def simulated_pilot(rng, pairs=300, raters=12, noise=1.5):
    """Simulated: true scores on 0-6, every rating the true score plus normal noise."""
    truth = rng.uniform(0, 6, pairs)
    return truth, truth[:, None] + rng.normal(0, noise, (pairs, raters))


def test_a_machine_equal_to_the_true_scores_is_worth_more_than_the_pool():
    """Simulated pilot: a machine that knows each pair's true score beats the mean of 5
    ratings against the held-out means, on both figures and in every split."""
    rng = np.random.default_rng(3)
    truth, matrix = simulated_pilot(rng)
    curves = worth_curves(matrix, truth, pool=5, splits=20, rng=rng)
    assert np.all(curves["k_spearman"] == math.inf)
    assert np.all(curves["k_mae"] == math.inf)


def test_a_random_machine_is_worth_about_no_rating():
    """Simulated pilot: a machine of random numbers equals about no human rating."""
    rng = np.random.default_rng(4)
    _, matrix = simulated_pilot(rng)
    curves = worth_curves(matrix, rng.normal(size=len(matrix)), pool=5, splits=20, rng=rng)
    assert np.median(curves["k_spearman"]) < 0.25
    assert np.median(curves["k_mae"]) < 0.25
    assert np.all(curves["human_spearman"][:, 1:] > curves["human_spearman"][:, :1])


def test_a_noisy_machine_lands_between_whole_ratings():
    """Simulated pilot: a machine whose error is that of about two ratings' mean (noise SD
    1.5 / sqrt(2)) is worth between 1 and 4 ratings, and more than one with half its noise."""
    rng = np.random.default_rng(5)
    truth, matrix = simulated_pilot(rng, pairs=600)
    noisy = truth + rng.normal(0, 1.5 / np.sqrt(2), len(truth))
    worth = np.median(worth_curves(matrix, noisy, pool=5, splits=20, rng=rng)["k_spearman"])
    assert 1 < worth < 4
    better = truth + rng.normal(0, 1.5 / np.sqrt(8), len(truth))
    assert np.median(worth_curves(matrix, better, pool=5, splits=20,
                                  rng=rng)["k_spearman"]) > worth


def test_calibration_is_scipys_least_squares_line():
    rng = np.random.default_rng(6)
    machine = rng.uniform(0, 10, 50)
    human = 0.6 * machine - 0.4 + rng.normal(0, 1, 50)
    fit = calibration(machine, human)
    reference = stats.linregress(machine, human)
    assert fit["slope"] == pytest.approx(reference.slope)
    assert fit["intercept"] == pytest.approx(reference.intercept)
    assert fit["r2"] == pytest.approx(reference.rvalue ** 2)
    assert fit["machine_scale"] == [machine.min(), machine.max()]
    assert math.isnan(calibration([1, 1, 1], [0, 1, 2])["r2"])
    with pytest.raises(InputError, match="2 pairs"):
        calibration([1, 2], [1, 2])


def test_errors_by_group_and_band_and_the_pairs_misjudged_most():
    frame = pd.DataFrame({"word1": list("abcdef"), "word2": list("uvwxyz"),
                          "machine": [0.0, 1.0, 2.0, 3.0, 4.0, 5.0],
                          "human": [0.0, 1.0, 2.0, 3.0, 6.0, 4.0],
                          "pos": ["N", "N", "N", "V", "V", "V"]})
    fit = {"slope": 1.0, "intercept": 0.0}
    frame = residuals(frame, fit)
    assert frame["residual"].tolist() == [0, 0, 0, 0, 2, -1]
    table = errors_by(frame, "pos").set_index("group")
    assert table.loc["N", "pairs"] == 3 and table.loc["N", "spearman"] == pytest.approx(1.0)
    assert table.loc["N", "mae"] == 0.0
    assert table.loc["V", "mae"] == pytest.approx(1.0)               # (0 + 2 + 1) / 3
    assert table.loc["V", "bias"] == pytest.approx(1 / 3)            # (0 + 2 - 1) / 3
    assert table.loc["V", "spearman"] == pytest.approx(0.5)          # ranks 1,3,2 vs 1,2,3
    bands = score_bands(frame["human"], 3)
    assert bands.tolist() == ["1/3 [0.00, 1.00]"] * 2 + ["2/3 [2.00, 3.00]"] * 2 \
        + ["3/3 [4.00, 6.00]"] * 2
    many = pd.Series(np.arange(24.0)[::-1])
    table = errors_by(pd.DataFrame({"machine": many, "human": many, "residual": 0.0,
                                    "band": score_bands(many, 12)}), "band")
    assert table["group"].str.split("/").str[0].astype(int).tolist() == list(range(1, 13))
    worst = misjudged(frame, 2)
    assert worst[["word1", "residual"]].values.tolist() == [["e", 2.0], ["f", -1.0]]
    with pytest.raises(InputError, match="--bands"):
        score_bands(frame["human"], 1)


def test_pairs_match_in_either_order_unless_both_orders_are_pilot_pairs():
    pilot = long_frame([[1, 2], [3, 4], [5, 6]], words=[("Cat", "dog"), ("sun", "moon"),
                                                         ("moon", "sun")])
    pairs, matrix = rating_matrix(pilot)
    assert pairs["key"].tolist() == ["cat\tdog", "sun\tmoon", "moon\tsun"]
    machine = pd.DataFrame({"word1": ["dog", "moon"], "word2": ["cat", "sun"],
                            "machine": [7.0, 8.0]})
    found = machine_for(pairs, machine)
    assert found[0] == 7.0                   # reversed, and dog-cat is no pilot pair
    assert math.isnan(found[1])              # sun-moon: its reverse is a pilot pair of its own
    assert found[2] == 8.0
    overlap = published_overlap(pairs["key"], {"Set": pd.DataFrame({"word1": ["dog"],
                                                                   "word2": ["cat"]})},
                                at_least=0.3)
    assert overlap == [{"dataset": "Set", "pairs": 1, "share": pytest.approx(1 / 3)}]
    assert published_overlap(pairs["key"], {"Set": machine.iloc[:1]}, at_least=0.5) == []


def test_a_raters_repeated_ratings_are_averaged_and_checkpoints_dropped():
    pilot = pd.DataFrame({"rater_id": ["r1", "r1", "r2", "r3"], "word1": ["a"] * 4,
                          "word2": ["b"] * 4, "rating": [1.0, 3.0, 4.0, 0.0],
                          "kind": ["unique", "duplicate", "unique", "checkpoint"]})
    pairs, matrix = rating_matrix(pilot)
    assert pairs["n"].tolist() == [2]
    assert sorted(matrix[0].tolist()) == [2.0, 4.0]


def test_benjamini_yekutieli_on_hand_computed_cases():
    """m = 3, c(3) = 1 + 1/2 + 1/3 = 11/6, m c(m) = 5.5; thresholds k q / 5.5 at q = 0.05:
    0.00909, 0.01818, 0.02727."""
    rejected, adjusted = benjamini_yekutieli([0.001, 0.01, 0.04])
    assert rejected.tolist() == [True, True, False]         # 0.04 > 0.02727
    np.testing.assert_allclose(adjusted, [0.0055, 0.0275, 5.5 * 0.04 / 3])
    # step-up: 0.02 misses its threshold 0.01818, but 0.025 <= 0.02727 rejects both below it
    rejected, adjusted = benjamini_yekutieli([0.025, 0.001, 0.02])
    assert rejected.tolist() == [True, True, True]
    np.testing.assert_allclose(adjusted, [5.5 * 0.025 / 3, 0.0055, 5.5 * 0.025 / 3])
    rejected, _ = benjamini_yekutieli([0.5, 0.9])
    assert not rejected.any()
    with pytest.raises(InputError, match="0 < q < 1"):
        benjamini_yekutieli([0.1], q=1.5)


def test_benjamini_yekutieli_equals_statsmodels():
    multitest = pytest.importorskip("statsmodels.stats.multitest")
    p = np.random.default_rng(7).uniform(0, 0.08, 25) ** 1.5
    rejected, adjusted = benjamini_yekutieli(p, q=0.1)
    expected_rejected, expected_adjusted, _, _ = multitest.multipletests(p, alpha=0.1,
                                                                         method="fdr_by")
    assert rejected.tolist() == expected_rejected.tolist() and rejected.any()
    np.testing.assert_allclose(adjusted, expected_adjusted)


#: three raters of five pairs, and a machine on their scale
HAND = {"A": [0, 2, 4, 6, 3], "B": [1, 2, 5, 6, 2], "C": [0, 3, 4, 4, 3]}
HAND_MACHINE = pd.Series([1.0, 3.0, 4.0, 5.0, 3.0], index=[f"p{i}" for i in range(5)])


def hand_long():
    return pd.DataFrame([{"rater_id": rater, "key": f"p{i}", "rating": float(value)}
                         for rater, values in HAND.items() for i, value in enumerate(values)])


def test_the_alternative_annotator_test_on_a_hand_computed_case():
    """Absolute error against the others' mean. A out: the others' means are 0.5, 2.5, 4.5, 5,
    2.5; A is off by 0.5, 0.5, 0.5, 1, 0.5, the machine by 0.5, 0.5, 0.5, 0, 0.5: W^f = 1 1 1 1
    1, W^h = 1 1 1 0 1, d = W^h - W^f = 0 0 0 -1 0 (mean -0.2, SD sqrt(0.2), SE 0.2), t =
    (-0.2 - epsilon) / 0.2. B out: means 0, 2.5, 4, 5, 3; B off by 1, .5, 1, 1, 1, the machine
    by 1, .5, 0, 0, 0: d = 0 0 -1 -1 -1 (mean -0.6, SE sqrt(0.3 / 5)). C out: means 0.5, 2,
    4.5, 6, 2.5; C off by .5, 1, .5, 2, .5, the machine by .5, 1, .5, 1, .5: d as A's."""
    se_b = math.sqrt(0.3 / 5)
    for epsilon, t_a, t_b in ((0.2, -2.0, -0.8 / se_b), (0.5, -3.5, -1.1 / se_b)):
        test = alternative_annotator_test(hand_long(), HAND_MACHINE, epsilon=epsilon,
                                          alignment="ae", calibrate=False)
        rows = {row["rater"]: row for row in test["raters"]}
        assert [rows[r]["rho_machine"] for r in "ABC"] == [1.0, 1.0, 1.0]
        assert [rows[r]["rho_human"] for r in "ABC"] == [0.8, 0.4, 0.8]
        assert rows["A"]["t"] == pytest.approx(t_a) and rows["C"]["t"] == pytest.approx(t_a)
        assert rows["B"]["t"] == pytest.approx(t_b)
        p = [stats.t.cdf(t, df=4) for t in (t_a, t_b, t_a)]
        assert [rows[r]["p"] for r in "ABC"] == pytest.approx(p)
        assert [rows[r]["won"] for r in "ABC"] == benjamini_yekutieli(p)[0].tolist()
    # epsilon 0.2: p = 0.058, 0.0155, 0.058 against thresholds 0.009, 0.018, 0.027: no win
    low = alternative_annotator_test(hand_long(), HAND_MACHINE, epsilon=0.2, alignment="ae",
                                     calibrate=False)
    assert low["omega"] == 0.0 and not low["passed"] and low["rho"] == 1.0
    # epsilon 0.5: p = 0.0124, 0.0054, 0.0124, all below theirs: the machine beats all three
    assert test["omega"] == 1.0 and test["passed"]


def test_the_papers_rmse_alignment_on_the_hand_case():
    """A out, -RMSE against B and C: A and the machine tie on every pair (0.707) but the 4th,
    where A (6 against 6, 4) is off by sqrt(2) and the machine (5) by 1."""
    test = alternative_annotator_test(hand_long(), HAND_MACHINE, alignment="rmse",
                                      calibrate=False)
    row = next(r for r in test["raters"] if r["rater"] == "A")
    assert (row["rho_machine"], row["rho_human"]) == (1.0, 0.8)


def test_the_test_calibrates_the_machine_without_the_left_out_rater():
    """A machine on another scale (10 x the human one, shifted) is tested as the same machine
    on the human scale, since its line is fitted to the other raters' means."""
    shifted = HAND_MACHINE * 10 + 3
    a = alternative_annotator_test(hand_long(), shifted)
    b = alternative_annotator_test(hand_long(), HAND_MACHINE)
    assert [r["p"] for r in a["raters"]] == pytest.approx([r["p"] for r in b["raters"]])


def test_a_constant_difference_and_bad_arguments():
    long = hand_long()
    same = alternative_annotator_test(long, HAND_MACHINE.iloc[:2], alignment="ae",
                                      calibrate=False)
    # p0, p1 only: every d is 0, below epsilon with no variance: p = 0, every rater beaten
    assert [row["p"] for row in same["raters"]] == [0.0, 0.0, 0.0] and same["omega"] == 1.0
    with pytest.raises(InputError, match="unknown alignment 'r'; allowed: rmse, ae"):
        alternative_annotator_test(long, HAND_MACHINE, alignment="r")
    with pytest.raises(InputError, match="epsilon"):
        alternative_annotator_test(long, HAND_MACHINE, epsilon=2)
    with pytest.raises(InputError, match="0 raters share 2 or more pairs"):
        alternative_annotator_test(long[long["rater_id"] != "A"].assign(
            rating=lambda f: np.where(f["rater_id"] == "B", f["rating"], np.nan)),
            HAND_MACHINE)


def test_a_good_machine_passes_and_a_random_one_fails():
    """Simulated raters (true score plus noise SD 1.5, 8 raters, 80 pairs): the true scores
    as a machine replace a rater; random numbers do not (calibrated, they are about the grand
    mean, which still beats a rater now and then)."""
    rng = np.random.default_rng(8)
    truth, matrix = simulated_pilot(rng, pairs=80, raters=8)
    long = pd.DataFrame([{"rater_id": f"r{j}", "key": f"p{i}", "rating": matrix[i, j]}
                         for i in range(80) for j in range(8)])
    index = [f"p{i}" for i in range(80)]
    good = alternative_annotator_test(long, pd.Series(truth, index=index))
    assert good["passed"] and good["rho"] > 0.7
    bad = alternative_annotator_test(long, pd.Series(rng.normal(size=80), index=index))
    assert not bad["passed"] and bad["rho"] < good["rho"] - 0.2


def test_machine_worth_groups_errors_by_the_pairs_files_relation():
    rng = np.random.default_rng(9)
    truth, matrix = simulated_pilot(rng, pairs=30, raters=8)
    pilot = long_frame(matrix)
    machine = pd.DataFrame({"word1": [f"a{i}" for i in range(30)],
                            "word2": [f"b{i}" for i in range(30)], "machine": truth * 2})
    labels = pd.DataFrame({"word1": [f"A{i}" for i in range(30)],
                           "word2": [f"b{i}" for i in range(30)],
                           "kind": ["syn", "ant", "none"] * 10})
    result = machine_worth(pilot, machine, pool=3, splits=5, rng=rng, labels=labels, bands=5,
                           identified=True, known={"Sim": machine.iloc[:3]})
    assert [row["group"] for row in result["errors"]["relation"]] == ["syn", "ant", "none"]
    assert len(result["errors"]["band"]) == 5 and "pos" not in result["errors"]
    assert result["calibration"]["slope"] == pytest.approx(0.5, abs=0.1)
    assert result["published"] == [{"dataset": "Sim", "pairs": 3, "share": 0.1}]
    assert len(result["alternative_annotator_test"]["raters"]) == 8
    assert pair_key(pd.Series(["A "]), pd.Series(["b"])).tolist() == ["a\tb"]
