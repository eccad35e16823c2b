"""Simulated Best-Worst answers (lexgold.crowd.bws_simulate): the sliders' rater model."""

import numpy as np
import pandas as pd
from scipy import stats

from lexgold.study.config import load_study_config
from lexgold.process import bws
from lexgold.crowd.bws_simulate import choose, simulate_bws
from lexgold.process.config import process_config
from lexgold.crowd.simulate import Crowd, SimulatedRater


def _pairs(n):
    return pd.DataFrame({"word1": [f"w{i}a" for i in range(n)],
                         "word2": [f"w{i}b" for i in range(n)], "pos": "N"})


def test_honest_raters_choose_max_and_min_of_perceived_values():
    rng = np.random.default_rng(0)
    rater = SimulatedRater(Crowd(model="invented", noise_sd=0.0, bias_sd=2.0, spammers=0.0), rng, low=0, high=6)
    assert choose(rater, np.array([1.0, 5.0, 0.5, 3.0]), 0) == (1, 2)   # bias cancels


def test_spammer_single_always_the_same_positions():
    rng = np.random.default_rng(0)
    rater = SimulatedRater(Crowd(spammers=1.0), rng, low=0, high=6)
    rater.style = "single"
    picks = {choose(rater, rng.uniform(0, 6, 4), t) for t in range(10)}
    assert len(picks) == 1 and len(next(iter(picks))) == 2


def test_simulated_study_scores_follow_the_truth():
    pairs = _pairs(40)
    truth = np.linspace(0, 6, 40)
    answers, raters = simulate_bws(pairs, "simlex_bws", rng=np.random.default_rng(2),
                                   truth=truth, crowd=Crowd(spammers=0.0),
                                   raters_per_tranche=6)
    frame = bws.check_bws(answers)                     # one best, one worst per answer
    assert set(frame["kind"]) == {"unique", "consistency", "checkpoint"}
    notes = bws.annotations(frame)
    assert (notes.groupby(["tuple_id"]).size()[lambda s: ~s.index.str.startswith("check")]
            >= 6).all()
    scores = bws.counting_scores(frame).merge(pairs.assign(truth=truth), on=["word1", "word2"])
    assert len(scores) == 40
    assert stats.spearmanr(scores["score"], scores["truth"]).statistic > 0.9
    assert raters.attrs["tuples"].shape[1] == 2 + 4
    assert raters.attrs["design"]["balance"]["occurrences_min"] == 8


def test_exclusions_catch_position_spammers():
    pairs = _pairs(60)
    answers, raters = simulate_bws(pairs, "simlex_bws", rng=np.random.default_rng(5),
                                   crowd=Crowd(spammers=0.5), raters_per_tranche=12)
    table = bws.bws_exclusions(bws.check_bws(answers), process_config("simlex_bws").bws,
                               load_study_config("simlex_bws").bws.checkpoints)
    merged = table.merge(raters.assign(tranche=raters["tranche"].astype(str)),
                         on=["rater_id", "tranche"])
    single = merged[merged["style"] == "single"]
    assert len(single) and single["excluded"].all()
    honest = merged[merged["style"] == "honest"]
    assert honest["excluded"].mean() < 0.2
