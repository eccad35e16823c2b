"""Best-Worst Scaling scores (lexgold.process.bws): hand cases, choix, split-half, exclusions."""

import choix
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from lexgold.study.config import BwsCheckpoint
from lexgold.errors import InputError
from lexgold.process import bws
from lexgold.process.config import BwsConfig

WORDS = {c: (c, c.upper()) for c in "abcdefgh"}


def answers(spec, at=None):
    """spec: [(rater, tuple_id, "abcd", best, worst), ...] -> long BWS answers."""
    rows = []
    for k, (rater, tuple_id, letters, best, worst) in enumerate(spec):
        for p, c in enumerate(letters):
            rows.append({"rater_id": rater, "tranche": "1", "tuple_id": tuple_id, "position": p,
                         "word1": WORDS[c][0], "word2": WORDS[c][1],
                         "rating": int(c == best) - int(c == worst),
                         "kind": "checkpoint" if tuple_id.startswith("check") else "unique",
                         "answered_at": at[k] if at else "2026-01-01T00:00:00Z"})
    return bws.check_bws(pd.DataFrame(rows))


def test_counting_by_hand():
    frame = answers([("r1", "1", "abcd", "a", "d"), ("r2", "1", "abcd", "b", "d"),
                     ("r1", "2", "aefg", "e", "a")])
    scores = bws.counting_scores(frame).set_index("word1")
    # a: shown 3 times, best once, worst once -> 0; b: 2 shown, 1 best -> 0.5; d: -1
    assert scores.loc["a", ["n", "best", "worst", "score"]].tolist() == [3, 1, 1, 0.0]
    assert scores.loc["b", "score"] == 0.5
    assert scores.loc["d", "score"] == -1.0
    assert scores.loc["e", "score"] == 1.0
    assert scores.loc["f", "score"] == 0.0


def test_checkpoint_tuples_are_not_scored():
    frame = answers([("r1", "1", "abcd", "a", "d"), ("r1", "check-1", "efgh", "e", "h")])
    assert set(bws.counting_scores(frame)["word1"]) == set("abcd")


def test_an_answer_needs_one_best_and_one_worst():
    rows = answers([("r1", "1", "abcd", "a", "d")])
    rows.loc[rows["word1"] == "d", "rating"] = 0          # no worst
    with pytest.raises(InputError, match="rater r1, tuple 1: 1 pairs marked most and 0 least"):
        bws.check_bws(rows)
    rows.loc[rows["word1"] == "d", "rating"] = 1          # two best
    with pytest.raises(InputError, match="2 pairs marked most and 0 least"):
        bws.check_bws(rows)


def test_bad_rating_names_the_line():
    rows = answers([("r1", "1", "abcd", "a", "d")]).astype({"rating": object})
    rows.loc[2, "rating"] = 3
    with pytest.raises(InputError, match=r"answers.csv:4, field .rating.: rating 3"):
        bws.check_bws(rows, source="answers.csv")


def test_comparisons_best_beats_all_others_beat_worst():
    items, pairs = bws.comparisons(answers([("r1", "1", "abcd", "b", "c")]))
    names = items["word1"].tolist()
    got = sorted((names[w], names[l]) for w, l in pairs)
    assert got == [("a", "c"), ("b", "a"), ("b", "c"), ("b", "d"), ("d", "c")]


def test_bradley_terry_equals_choix_on_the_same_comparisons():
    rng = np.random.default_rng(4)
    spec = []
    for t in range(30):
        letters = "".join(rng.choice(list("abcdefgh"), 4, replace=False))
        for r in range(3):
            best, worst = rng.choice(list(letters), 2, replace=False)
            spec.append((f"r{r}", str(t), letters, best, worst))
    frame = answers(spec)
    items, pairs = bws.comparisons(frame)
    expected = choix.ilsr_pairwise(len(items), pairs.tolist(), alpha=0.01, tol=1e-12,
                                   max_iter=1000)
    got = bws.bt_scores(frame, alpha=0.01)
    assert got[["word1", "word2"]].equals(items)
    np.testing.assert_allclose(got["score"], expected - expected.mean(), atol=1e-6)


def test_bradley_terry_orders_a_clear_case():
    truth = dict(zip("abcdefgh", range(8)))
    spec = []
    rng = np.random.default_rng(0)
    for t in range(40):
        letters = "".join(rng.choice(list("abcdefgh"), 4, replace=False))
        spec.append(("r1", str(t), letters, max(letters, key=truth.get),
                     min(letters, key=truth.get)))
    scores = bws.bt_scores(answers(spec)).set_index("word1")["score"]
    assert list(scores.sort_values().index) == list("abcdefgh")
    counting = bws.counting_scores(answers(spec)).set_index("word1")["score"]
    assert stats.spearmanr(counting, scores.loc[counting.index]).statistic > 0.95


def test_release_scale():
    f = bws.bws_release_scale(pd.Series([-0.2, 0.4]), "counting", 0, 10)
    assert f(np.array([-1, 1, 0.5])).tolist() == [0.0, 10.0, 7.5]
    g = bws.bws_release_scale(pd.Series([-2.0, 0.0, 2.0]), "bradley-terry", 0, 10)
    assert g(np.array([-2.0, 0.0, 2.0])).tolist() == [0.0, 5.0, 10.0]


def test_split_half_once_by_hand():
    frame = answers([("r1", "1", "abcd", "a", "d"), ("r2", "1", "abcd", "b", "d"),
                     ("r1", "2", "aefg", "e", "a"), ("r2", "2", "aefg", "e", "g")])
    first = frame["rater_id"] == "r1"
    # half 1 (r1): a 0, b 0, c 0, d -1, e 1, f 0, g 0 ; half 2 (r2): a 0, b 1, c 0, d -1, e 1, f 0, g -1
    one = [0, 0, 0, -1, 1, 0, 0]
    two = [0, 1, 0, -1, 1, 0, -1]
    assert bws.bws_split_half_once(frame, first) == pytest.approx(
        stats.spearmanr(one, two).statistic)


def test_split_half_of_identical_halves_is_one_without_spearman_brown():
    spec = [(r, str(t), letters, letters[t % 4], letters[(t + 1) % 4])
            for t, letters in enumerate(["abcd", "efgh", "aceg", "bdfh", "abef"])
            for r in ("r1", "r2")]
    result = bws.bws_split_half(answers(spec), splits=10, rng=np.random.default_rng(0))
    assert result["r"] == pytest.approx(1.0)
    assert result["spearman_brown_applied"] is False
    assert result["splits"] == 10


def test_split_half_splits_each_tuple_in_halves():
    # 3 raters on each tuple: 1 + 2 or 2 + 1, never 3 + 0; the average is of 100 splits
    rng = np.random.default_rng(7)
    spec = []
    for t in range(20):
        letters = "".join(rng.choice(list("abcdefgh"), 4, replace=False))
        for r in range(3):
            best, worst = rng.choice(list(letters), 2, replace=False)
            spec.append((f"r{r}", str(t), letters, best, worst))
    result = bws.bws_split_half(answers(spec), rng=np.random.default_rng(1))
    assert result["splits"] == 100 and -1 <= result["r"] <= 1


def test_bootstrap_intervals():
    spec = [(r, str(t), letters, letters[0], letters[3])
            for t, letters in enumerate(["abcd", "efgh", "aceg", "bdfh"]) for r in "xyz"]
    frame = answers(spec)
    ci = bws.bootstrap_intervals(frame, "counting", replicates=50, level=0.9,
                                 rng=np.random.default_rng(0))
    point = bws.counting_scores(frame)
    assert (ci["low"] <= point["score"] + 1e-12).all() and (point["score"] <= ci["high"] + 1e-12).all()
    assert ci.set_index("word1").loc["a", ["low", "high"]].tolist() == [1.0, 1.0]
    none = bws.bootstrap_intervals(frame, "counting", replicates=0, level=0.9,
                                   rng=np.random.default_rng(0))
    assert none["low"].isna().all()


def test_exclusions():
    check = BwsCheckpoint(pairs=[["e", "E"], ["f", "F"], ["g", "G"], ["h", "H"]], best=0, worst=3)
    times = [f"2026-01-01T00:{m:02d}:00Z" for m in range(12)]
    spec = ([("good", "check-1", "efgh", "e", "h")]
            + [("good", str(t), "abcd", "abcd"[t % 4], "abcd"[(t + 1) % 4]) for t in range(10)]
            + [("fails", "check-1", "efgh", "f", "h")]
            + [("fails", str(t), "abcd", "abcd"[t % 4], "abcd"[(t + 2) % 4]) for t in range(10)]
            + [("same", "check-1", "efgh", "e", "h")]
            + [("same", str(t), "abcd", "a", "d") for t in range(10)])
    at = (times[:11] * 3)
    frame = answers(spec, at=at)
    config = BwsConfig(min_seconds_per_tuple=30.0)
    table = bws.bws_exclusions(frame, config, [check]).set_index("rater_id")
    assert table.loc["good", "reasons"] == ""
    assert table.loc["fails", "reasons"] == "checkpoint"
    assert table.loc["same", "reasons"] == "same_position"
    assert table.loc["same", "best_position_share"] == 1.0
    assert table.loc["good", "median_s_per_tuple"] == 60.0
    fast = bws.bws_exclusions(frame, BwsConfig(min_seconds_per_tuple=61), [check])
    assert fast["reasons"].str.contains("too_fast").all()
