"""A machine spent (lexgold.machine.prior, lexgold.machine.allocate, the machine-* policies of
lexgold.crowd.replay, ``lexgold replay --machine``): the empirical-Bayes posterior by hand, an
oracle machine saves and a random one costs nothing, circularity, the command's errors."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from lexgold.cli import cli
from lexgold.crowd import replay as rp
from lexgold.errors import InputError
from lexgold.machine.allocate import disagreement, machine_gain
from lexgold.machine.prior import (calibrate_machine, machine_for, pooled_variance, posterior,
                                   prior_scores, prior_table)


# -- the posterior by hand ---------------------------------------------------------------------

def test_the_posterior_of_a_hand_computed_case():
    """x = 0..3, means 0, 3, 2, 5: the line is m = 0.4 + 1.4 x; residuals -0.4, 1.2, -1.2,
    0.4 (sum of squares 3.2, over N - 2: 1.6); noise 0.6, so tau^2 = 1.0 and the human
    weight 1 / 1.6 = 0.625. The means' own variance is 13 / 3, 3.7333 beyond noise, of which the
    machine explains lambda = 1 - 1 / 3.7333 = 0.73214: its weight is 0.73214 * 0.375 =
    0.27455, and pair 2's posterior 3 + 0.27455 * (1.8 - 3) = 2.67054 with SD
    sqrt(0.72545 * 0.6)."""
    fit = posterior([0.0, 3.0, 2.0, 5.0], [0.6] * 4, [0.0, 1.0, 2.0, 3.0])
    assert fit.attrs["a"] == pytest.approx(0.4) and fit.attrs["b"] == pytest.approx(1.4)
    assert fit.attrs["tau2"] == pytest.approx(1.0)
    explained = 1 - 1.0 / (13 / 3 - 0.6)
    assert fit.attrs["explained"] == pytest.approx(explained)
    assert fit["weight"].tolist() == pytest.approx([explained * 0.375] * 4)
    assert fit["calibrated"].tolist() == pytest.approx([0.4, 1.8, 3.2, 4.6])
    assert fit.loc[1, "posterior"] == pytest.approx(3 + explained * 0.375 * (1.8 - 3))
    human = 1 - explained * 0.375
    assert fit.loc[1, "posterior_sd"] == pytest.approx(np.sqrt(human * 0.6))
    assert fit.loc[1, "high"] - fit.loc[1, "low"] == pytest.approx(
        2 * 1.959963984540054 * np.sqrt(human * 0.6))


def test_a_machine_on_another_scale_calibrates_to_the_same_posterior():
    means, noise = [0.0, 3.0, 2.0, 5.0, 4.0], [0.6] * 5
    x = np.array([0.0, 1.0, 2.0, 3.0, 2.5])
    once = posterior(means, noise, x)["posterior"]
    rescaled = posterior(means, noise, 0.2 * x - 1)["posterior"]   # as a cosine would be
    assert rescaled.tolist() == pytest.approx(once.tolist())


def test_uncovered_pairs_are_shrunk_toward_their_grand_mean():
    """The uncovered pairs' means 4.5 and 2.5 (noise 0.6): grand mean 3.5, variance 2, so
    tau_0^2 = 1.4 and the human weight 0.7, the pull 0.3 scaled by the machine's lambda (as
    in the hand case above): 4.5 - lambda * 0.3 * 1.0. With no machine at all no pair moves:
    the released scores are the human means."""
    fit = posterior([0.0, 3.0, 2.0, 5.0, 4.5, 2.5], [0.6] * 6,
                    [0.0, 1.0, 2.0, 3.0, np.nan, np.nan])
    explained = 1 - 1.0 / (13 / 3 - 0.6)
    assert fit.attrs["covered"] == 4 and fit.attrs["tau2_0"] == pytest.approx(1.4)
    assert fit.loc[4, "posterior"] == pytest.approx(4.5 - explained * 0.3)
    assert fit.loc[4, "posterior_sd"] == pytest.approx(np.sqrt((1 - explained * 0.3) * 0.6))
    assert fit.loc[1, "posterior"] == pytest.approx(3 + explained * 0.375 * (1.8 - 3))
    alone = posterior([4.5, 2.5], [0.6] * 2, [np.nan, np.nan])
    assert alone["posterior"].tolist() == [4.5, 2.5]
    assert np.isnan(alone.attrs["b"])


def test_the_machine_that_cannot_be_calibrated_is_named():
    with pytest.raises(InputError, match="field 'machine': the machine gives every rated pair "
                                         "the same number"):
        calibrate_machine([1.0, 1.0, 1.0], [0.0, 2.0, 4.0])
    with pytest.raises(InputError, match="2 pairs have both"):
        calibrate_machine([1.0, 2.0, np.nan], [0.0, 2.0, 4.0])
    with pytest.raises(InputError, match="no pair has two human ratings"):
        prior_scores(np.array([[1.0], [2.0], [3.0]]), [1.0, 2.0, 3.0])


def test_prior_scores_use_the_pooled_variance():
    values = np.array([[1.0, 3.0], [2.0, np.nan], [4.0, 4.0], [5.0, 6.0]])
    assert pooled_variance(values) == pytest.approx((2 + 0 + 0.5) / 3)
    fit = prior_scores(values, [0.0, 1.0, 2.0, 3.0])
    assert fit["n"].tolist() == [2, 1, 2, 2]
    assert fit["mean"].tolist() == [2.0, 2.0, 4.0, 5.5]
    same = posterior([2.0, 2.0, 4.0, 5.5], np.array([2.5 / 3] * 4) / [2, 1, 2, 2],
                     [0.0, 1.0, 2.0, 3.0])
    assert fit["posterior"].tolist() == pytest.approx(same["posterior"].tolist())


def test_prior_table_from_long_ratings_matches_pairs_in_either_order():
    ratings = pd.DataFrame({"word1": ["a", "a", "c", "c", "e", "e", "g"],
                            "word2": ["b", "b", "d", "d", "f", "f", "h"],
                            "rating": [1.0, 3.0, 2.0, 2.0, 5.0, 6.0, 4.0]})
    scores = pd.DataFrame({"word1": ["b", "c", "e"], "word2": ["a", "d", "f"],
                           "machine": [0.0, 1.0, 3.0]})
    table = prior_table(ratings, scores)
    assert table[["word1", "n", "mean"]].values.tolist() == [["a", 2, 2.0], ["c", 2, 2.0],
                                                             ["e", 2, 5.5], ["g", 1, 4.0]]
    assert np.isnan(table.loc[3, "calibrated"]) and table.loc[3, "posterior"] == 4.0
    assert machine_for(table, scores).tolist()[:3] == [0.0, 1.0, 3.0]


def test_the_gain_follows_disagreement_and_a_machine_that_knows_nothing_is_uniform():
    """Means on the machine's line 1 + 2x except pair 4: the farther pair 4 lies from the line,
    the more it gains, and pairs on the line stop (gain below 0). A machine of noise gives
    every pair with as many ratings the same gain, ``sigma^2 e / (n (n + e))``."""
    x = [0.0, 1.0, 2.0, 1.0, 0.5, 1.5]
    near = machine_gain([1.0, 3.0, 5.0, 3.5, 2.0, 4.0], [2] * 6, 1.0, x)
    far = machine_gain([1.0, 3.0, 5.0, 6.0, 2.0, 4.0], [2] * 6, 1.0, x)
    assert far[3] > near[3] and far.argmax() == 3 and (near[[0, 1, 2, 4, 5]] < 0).all()
    z = disagreement([1.0, 3.0, 5.0, 6.0, 2.0, 4.0], [2] * 6, [1.0] * 6, x)
    assert z.argmax() == 3
    rng = np.random.default_rng(0)
    means = rng.uniform(0, 6, 200)
    flat = machine_gain(means, [2] * 100 + [4] * 100, 1.5, rng.normal(size=200) * 0 +
                        means.round() % 2)                 # parity of the mean: no slope
    assert flat[:100] == pytest.approx(np.full(100, 1.5 * 2 / (2 * 4)), abs=0.02)


# -- the policies on small hand-made logs ------------------------------------------------------

def synthetic(pairs: int = 300, ratings: int = 8, noise: float = 1.5, seed: int = 1):
    """Pairs with true scores spread over 0..6, each rated ``ratings`` times with normal noise
    (simulated ratings); returns the log and the true scores."""
    rng = np.random.default_rng(seed)
    true = rng.uniform(0, 6, pairs)
    values = true[:, None] + rng.normal(0, noise, (pairs, ratings))
    frame = pd.DataFrame([{"rater_id": f"?{i}:{j}", "tranche": "1", "word1": f"p{i}",
                           "word2": "x", "rating": float(v)}
                          for i, row in enumerate(values) for j, v in enumerate(row)])
    return rp.log_matrix(frame, pool=5), true


def run(log, machine, policies, ks=(3.0, 4.0), splits=4, step=1):
    records = rp.replay(log, pool=5, ks=list(ks), splits=splits, seed=0, policies=policies,
                        machine=machine, first_round=2, step=step)
    return rp.summarise(records).set_index(["policy", "k"])


def test_an_oracle_machine_saves_in_both_modes():
    """A machine equal to the true scores (on a 0-10 scale): the prior reaches uniform's
    figures with far fewer ratings, and allocation by disagreement saves at equal MAE."""
    log, true = synthetic()
    table = run(log, true * 10 / 6, ("machine-prior", "machine-allocate"))
    prior = table.loc[("machine-prior", 4.0)]
    assert prior["saving_spearman"] > 0.4 and prior["saving_mae"] > 0.4
    assert prior["weight"] > 0.5
    assert prior["circularity"] > 0                       # the gold leans toward the machine
    allocate = table.loc[("machine-allocate", 4.0)]
    assert allocate["saving_mae"] > 0.05


def test_a_random_machine_gets_little_weight_and_costs_nothing():
    """A machine of noise explains none of the between-pair variance (slope near 0, lambda
    near 0): it gets almost no weight, the released scores stay (nearly) the human means and
    order the pairs as they do."""
    log, _ = synthetic()
    noise = np.random.default_rng(7).normal(size=len(log.pairs))
    table = run(log, noise, ("machine-prior", "machine-allocate"))
    fit = prior_scores(log.ratings[:, :3], noise)
    assert abs(fit.attrs["b"]) < 0.15
    assert np.corrcoef(fit["posterior"], fit["mean"])[0, 1] > 0.99
    for k in (3.0, 4.0):
        prior = table.loc[("machine-prior", k)]
        assert prior["weight"] < 0.02
        assert prior["saving_spearman"] > -0.02
        allocate = table.loc[("machine-allocate", k)]
        assert allocate["saving_spearman"] > -0.05 and allocate["saving_mae"] > -0.05
        assert abs(allocate["circularity"]) < 0.05


def test_pairs_the_machine_does_not_cover_get_k_ratings():
    log, true = synthetic(pairs=60)
    machine = np.where(np.arange(60) < 40, true, np.nan)
    pool_ratings = log.ratings[:, :5]
    counts = rp.allocate_counts(pool_ratings, [3.0, 4.0], machine, first_round=2)
    for k in (3, 4):
        assert (counts[k][40:] == k).all()
        assert counts[k][:40].sum() <= 40 * k


def test_machine_spearman_and_circularity_of_a_policy_that_cannot_move():
    """Spearman over the covered pairs only; an allocation whose first round is the whole
    budget builds uniform's gold, so its circularity is 0 at every k."""
    assert rp.machine_spearman(np.array([1.0, 2.0, np.nan, 3.0]),
                               np.array([3.0, 1.0, 9.0, 2.0])) == pytest.approx(-0.5)
    log, true = synthetic(pairs=80)
    rng = np.random.default_rng(3)
    records = rp.replay_split(log, 5, [3.0], rng, policies=("machine-allocate",),
                              machine=true, first_round=3)
    row = next(r for r in records if r["policy"] == "machine-allocate")
    assert row["spent"] == 3 and row["saving_spearman"] == pytest.approx(0, abs=1e-12)
    assert row["circularity"] == pytest.approx(0, abs=1e-12)


def test_a_machine_policy_without_a_machine_is_refused():
    log, _ = synthetic(pairs=20)
    with pytest.raises(InputError, match="field '--machine': policy machine-prior needs"):
        rp.replay(log, pool=5, ks=[3.0], splits=1, policies=("machine-prior",))


# -- the command -------------------------------------------------------------------------------

@pytest.fixture
def files(tmp_path):
    log, true = synthetic(pairs=40)
    rows = [{"rater_id": f"r{j}", "tranche": "1", "word1": f"p{i}", "word2": "x",
             "rating": round(float(v), 3)}
            for i, row in enumerate(log.ratings) for j, v in enumerate(row)]
    pd.DataFrame(rows).to_csv(tmp_path / "log.csv", index=False)
    machine = pd.DataFrame({"word1": [f"p{i}" for i in range(30)], "word2": "x",
                            "gpt": (true[:30] * 10 / 6).round(2)})
    machine.to_csv(tmp_path / "machine.csv", index=False)
    return tmp_path


def test_replay_with_a_machine_prints_json_with_circularity(files):
    result = CliRunner().invoke(cli, [
        "replay", str(files / "log.csv"), "--pool", "5", "--k", "3,4", "--splits", "2",
        "--machine", str(files / "machine.csv"), "--policy", "machine-prior",
        "--policy", "machine-allocate", "--first-round", "2", "--json"])
    assert result.exit_code == 0, result.output
    found = json.loads(result.stdout)
    assert found["machine"]["file"] == "machine.csv" and found["machine"]["covered"] == 30
    assert found["machine"]["column"] == "gpt"
    rows = [r for r in found["policies"] if r["policy"] != "uniform"]
    assert [(r["policy"], r["k"]) for r in rows] == [
        ("machine-prior", 3), ("machine-prior", 4), ("machine-allocate", 3),
        ("machine-allocate", 4)]
    for row in rows:
        assert row["circularity_low"] <= row["circularity"] <= row["circularity_high"]


def test_replay_with_a_machine_prints_a_table(files):
    result = CliRunner().invoke(cli, [
        "replay", str(files / "log.csv"), "--pool", "5", "--k", "4", "--splits", "2",
        "--machine", str(files / "machine.csv"), "--policy", "machine-prior"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[1] == "machine: machine.csv (model unknown), 30 of 40 pairs covered"
    assert lines[-1].split()[:2] == ["machine-prior", "4"] and lines[-1].count("%") == 3


@pytest.mark.parametrize("extra,message", [
    (["--policy", "machine-prior"], "field '--machine': policy machine-prior needs"),
    (["--machine", "M", "--machine-vectors", "M"], "give --machine or --machine-vectors"),
    (["--machine-column", "gpt"], "field '--machine-column': --machine-column names"),
    (["--machine", "M", "--machine-column", "nope"], "machine.csv: no column 'nope'"),
    (["--machine", "BAD"], "bad.csv: no column of numbers besides the words: name the "
                           "column to read with --machine-column"),
    (["--machine", "BAD", "--machine-column", "gpt"],
     "bad.csv:3, field 'gpt': not a number: 'high'"),
    (["--machine", "FEW"], "few.csv: the machine covers 2 of the log's 40 pairs"),
])
def test_bad_machine_input_is_a_one_line_error(files, extra, message):
    (files / "bad.csv").write_text("word1,word2,gpt\np0,x,1\np1,x,high\n")
    (files / "few.csv").write_text("word1,word2,gpt\np0,x,1\np1,x,2\nzz,yy,3\n")
    names = {"M": "machine.csv", "BAD": "bad.csv", "FEW": "few.csv"}
    extra = [str(files / names[a]) if a in names else a for a in extra]
    result = CliRunner().invoke(cli, ["replay", str(files / "log.csv"), "--pool", "5",
                                      "--k", "3", "--splits", "1", *extra])
    assert result.exit_code != 0
    assert message in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1
