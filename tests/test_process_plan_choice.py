"""The planner's choice between its model and Spearman-Brown, cross-validated inside the pilot,
its jackknife interval, and what ``aggregate = "model"`` would save on a study (issue 46)."""

import itertools

import numpy as np
import pandas as pd
import pytest

from lexgold.process.aggregate import model_saving, saving_line
from lexgold.process.plan import (
    METHODS,
    choose_method,
    cross_validation_design,
    plan_study,
    spearman_brown_curve,
)
from lexgold.ratings.long import answers as _answers, check_ratings


def answers(frame):
    return _answers(check_ratings(frame))


def crowd(n_pairs, noise, *, seed, bias=0.0):
    """Every rater rates every pair: true score + the rater's bias + noise of the rater's SD."""
    rng = np.random.default_rng(seed)
    truth = rng.normal(0, 1.5, n_pairs)
    rows = [(f"r{j}", 1, f"w{i}", "x", float(truth[i] + b + rng.normal(0, sd)))
            for j, (sd, b) in enumerate(zip(noise, rng.normal(0, bias, len(noise))))
            for i in range(n_pairs)]
    return pd.DataFrame(rows, columns=["rater_id", "tranche", "word1", "word2", "rating"])


def test_spearman_brown_steps_up_the_mean_pearson_between_raters():
    frame = crowd(40, [1.0, 1.5, 2.0], seed=1)
    wide = frame.pivot(index="word1", columns="rater_id", values="rating")
    r1 = np.mean([np.corrcoef(wide[a], wide[b])[0, 1]
                  for a, b in itertools.combinations(wide.columns, 2)])
    curve = spearman_brown_curve(answers(frame), 4, False, np.random.default_rng(0))
    assert curve == pytest.approx([k * r1 / (1 + (k - 1) * r1) for k in range(1, 5)])


@pytest.mark.parametrize("raters,anonymous,design", [
    (4, False, {"raters": 4, "raters_fitted": 3, "k": 2}),
    (13, False, {"raters": 13, "raters_fitted": 6, "k": 6}),
    (4, True, {"raters": 4, "raters_fitted": 2, "k": 2}),
    (3, False, None),                 # 3 raters: subsets of 2 cannot fit a rater's noise
])
def test_the_cross_validation_design(raters, anonymous, design):
    frame = crowd(40, [1.0] * raters, seed=2)
    if anonymous:
        frame["rater_id"] = [f"?{i}" for i in range(len(frame))]
    assert cross_validation_design(answers(frame), anonymous) == design


def test_the_choice_is_the_smaller_cross_validated_error_and_the_interval_its_spread():
    frame = crowd(80, [0.8, 1.0, 1.3, 1.6, 2.0], seed=3, bias=0.5)
    found = choose_method(frame, 6, rng=np.random.default_rng(0), folds=8, simulations=5)
    assert set(found["error"]) == set(METHODS)
    assert found["error"][found["chosen"]] == min(found["error"].values())
    point = found["curves"][found["chosen"]]
    assert np.allclose((found["low"] + found["high"]) / 2, point, atol=1e-9)
    assert (found["high"] - found["low"] > 0).all()
    # more raters per pair in the pilot: its predictions for k = 6 spread less
    larger = crowd(80, [0.8, 1.0, 1.3, 1.6, 2.0] * 3, seed=3, bias=0.5)
    wider = choose_method(larger, 6, rng=np.random.default_rng(0), folds=8, simulations=5)
    assert (wider["high"] - wider["low"])[5] < (found["high"] - found["low"])[5]


def test_plan_says_which_method_it_chose_and_prints_both():
    from lexgold.process.plan import plan_summary_lines

    frame = crowd(60, [0.8, 1.0, 1.3, 1.6], seed=4)
    result = plan_study(frame, rng=np.random.default_rng(0), max_raters=4, replicates=0)
    method = result["method"]
    assert method["chosen"] in METHODS and method["interval"] == "jackknife"
    assert [row["raters"] for row in method["predictions"]] == [1, 2, 3, 4]
    chosen = [row[method["chosen"]] for row in method["predictions"]]
    assert [row["reliability"] for row in result["curve"]] == pytest.approx(chosen)
    text = "\n".join(plan_summary_lines(result))
    assert f"reliability from {method['chosen']} (jackknife interval)" in text


def test_a_pilot_too_thin_to_cross_validate_keeps_the_model_and_its_bootstrap():
    frame = crowd(60, [0.8, 1.0, 1.3], seed=5)
    result = plan_study(frame, rng=np.random.default_rng(0), max_raters=3, replicates=20)
    assert result["method"]["chosen"] == "model"
    assert result["method"]["interval"] == "bootstrap"
    assert result["method"]["cross_validation"] is None
    assert all(row["low"] <= row["high"] for row in result["curve"][1:])


def test_the_model_saves_raters_where_raters_differ_much_in_noise():
    """Half the raters 10 times noisier than the others: weighting them down beats the mean."""
    frame = crowd(150, [0.3, 3.0] * 5, seed=6)
    saving = model_saving(answers(frame), rng=np.random.default_rng(0), splits=10)
    assert saving["k"] == 5 and saving["pairs"] == 150
    assert saving["spearman_difference"][0] > 0 and saving["mae_difference"][0] < 0
    assert saving["saving"] > 0.1
    assert "saves" in saving_line(saving)


def test_the_model_costs_where_raters_are_alike():
    frame = crowd(150, [1.0] * 8, seed=7)
    saving = model_saving(answers(frame), rng=np.random.default_rng(0), splits=10)
    assert abs(saving["spearman_difference"][0]) < 0.005


def test_no_saving_without_rater_identity_or_with_few_raters():
    frame = crowd(40, [1.0] * 6, seed=8)
    anonymous = frame.assign(rater_id=[f"?{i}" for i in range(len(frame))])
    assert model_saving(answers(anonymous), rng=np.random.default_rng(0)) is None
    assert model_saving(answers(crowd(40, [1.0] * 3, seed=8)),
                        rng=np.random.default_rng(0)) is None
    assert "not measurable" in saving_line(None)
