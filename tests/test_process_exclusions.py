"""Calibration (SimLex 3.6 worked example) and every exclusion rule on hand-built raters."""

import copy

import numpy as np
import pandas as pd
import pytest

from lexgold.errors import InputError
from lexgold.process.calibration import calibrate, calibration_shifts
from lexgold.process.exclusions import exclusion_table, excluded_raters
from lexgold.protocols import load_protocol

TRUTH = [0, 1, 1, 2, 3, 3, 4, 5, 5, 6, 2, 4]


def long(table: dict, tranche=1, kind="unique") -> pd.DataFrame:
    rows = [(r, tranche, f"x{i}", "w", float(v), kind) for r, values in table.items()
            for i, v in enumerate(values)]
    return pd.DataFrame(rows, columns=["rater_id", "tranche", "word1", "word2", "rating", "kind"])


def protocol_with(name, **exclusions):
    protocol = copy.deepcopy(load_protocol(name))
    protocol["process"]["exclusions"].update(exclusions)
    return protocol


# -- calibration -----------------------------------------------------------------------------

def test_calibration_worked_example():
    """Consistency means a 1, b 4, c 5 -> population 10/3; a up by one, c down, b stays."""
    ratings = pd.DataFrame({
        "rater_id": list("aaaabbbccc"), "tranche": 1,
        "word1": list("xyzu") + list("xyz") * 2, "word2": "w",
        "kind": ["consistency"] * 3 + ["unique"] + ["consistency"] * 6,
        "rating": [0, 1, 2, 6, 3, 4, 5, 4, 5, 6]})
    shifts = calibration_shifts(ratings).set_index("rater_id")
    assert shifts["population_mean"].iloc[0] == pytest.approx(10 / 3)
    assert shifts["shift"].to_dict() == {"a": 1.0, "b": 0.0, "c": -1.0}
    out = calibrate(ratings)
    assert out["rating"].tolist() == [1, 2, 3, 6, 3, 4, 5, 3, 4, 5]   # a's 6 stays at 6
    assert out["rating_raw"].tolist() == ratings["rating"].tolist()


def test_calibration_of_categorical_raters_whose_shifts_all_differ():
    """What a study's export is read as (categorical keys): three raters shifted +1, 0, -1
    map one-to-one, which pandas returns as a categorical; the worked example's ratings."""
    ratings = pd.DataFrame({
        "rater_id": pd.Categorical(list("aaaabbbccc")), "tranche": 1,
        "word1": list("xyzu") + list("xyz") * 2, "word2": "w",
        "kind": ["consistency"] * 3 + ["unique"] + ["consistency"] * 6,
        "rating": [0, 1, 2, 6, 3, 4, 5, 4, 5, 6]})
    assert calibrate(ratings)["rating"].tolist() == [1, 2, 3, 6, 3, 4, 5, 3, 4, 5]


def test_calibration_keeps_zero_when_shifting_down_and_ignores_checkpoints():
    ratings = pd.DataFrame({
        "rater_id": list("aaabbbb"), "tranche": 1, "word1": list("xyzxyzq"), "word2": "w",
        "kind": ["consistency"] * 6 + ["checkpoint"], "rating": [6, 6, 0, 1, 1, 1, 1]})
    # means: a 4, b 1, population 2.5 -> a down (its 0 stays), b up; checkpoint untouched
    assert calibrate(ratings)["rating"].tolist() == [5, 5, 0, 2, 2, 2, 1]


def test_calibration_threshold_and_shift_are_the_given_ones():
    """The worked example with threshold 2 and shift 0.5: only a (2.33 below) moves, by 0.5."""
    ratings = pd.DataFrame({
        "rater_id": list("aaaabbbccc"), "tranche": 1,
        "word1": list("xyzu") + list("xyz") * 2, "word2": "w",
        "kind": ["consistency"] * 3 + ["unique"] + ["consistency"] * 6,
        "rating": [0, 1, 2, 6, 3, 4, 5, 4, 5, 6]})
    assert calibrate(ratings, threshold=2.0, shift=0.5)["rating"].tolist() == \
        [0.5, 1.5, 2.5, 6, 3, 4, 5, 4, 5, 6]


def test_calibration_shifts_only_raters_more_than_the_threshold_away():
    """Section 3.6: "more than 1 away". Means a 2, b 4 (population 3): exactly 1 away, no shift;
    c answered no consistency pair: NaN mean, no shift."""
    ratings = pd.concat([long({"a": [2, 2], "b": [4, 4]}, kind="consistency"),
                         long({"c": [6]}, kind="unique").replace({"x0": "u"})],
                        ignore_index=True)
    shifts = calibration_shifts(ratings).set_index("rater_id")
    assert shifts["shift"].to_dict() == {"a": 0.0, "b": 0.0, "c": 0.0}
    assert np.isnan(shifts.loc["c", "consistency_mean"])
    assert calibrate(ratings)["rating"].tolist() == [2, 2, 4, 4, 6]


def test_calibration_clips_fractional_ratings_to_the_scale():
    # means: a 11/6, b 25/6, population 3 -> a up, b down; 5.5 + 1 and 0.5 - 1 stay on 0-6
    ratings = long({"a": [0, 0, 5.5], "b": [6, 6, 0.5]}, kind="consistency")
    assert calibrate(ratings)["rating"].tolist() == [1, 1, 6, 5, 5, 0]


def test_calibration_needs_a_scale_of_some_width():
    ratings = long({"a": [1, 2]}, kind="consistency")
    with pytest.raises(InputError, match="rating_min < rating_max") as error:
        calibrate(ratings, rating_min=6, rating_max=6)
    assert error.value.field == "rating_max"


def test_consistency_set_leaves_out_checkpoints_rated_in_every_tranche():
    one = long({"a": [0, 0], "b": [4, 4]}, tranche=1)
    two = long({"c": [6, 6]}, tranche=2)
    checkpoints = pd.concat([long({r: [0]}, tranche=t, kind="checkpoint")
                             for r, t in (("a", 1), ("b", 1), ("c", 2))]).replace({"x0": "cp"})
    ratings = pd.concat([one, two, checkpoints], ignore_index=True)
    shifts = calibration_shifts(ratings).set_index("rater_id")
    # x0, x1 are in both tranches; the checkpoint cp too, but it is no consistency pair
    assert shifts["consistency_mean"].to_dict() == {"a": 0.0, "b": 4.0, "c": 6.0}


def test_consistency_set_defaults_to_items_in_every_tranche():
    one = long({"a": [0, 1, 2], "b": [3, 4, 5]}, tranche=1)
    two = long({"c": [6, 6, 6]}, tranche=2).replace({"x0": "x0", "x1": "y1", "x2": "y2"})
    ratings = pd.concat([one, two], ignore_index=True)
    shifts = calibration_shifts(ratings).set_index("rater_id")
    # only x0 is in both tranches: means a 0, b 3, c 6 -> population 3
    assert shifts["consistency_mean"].to_dict() == {"a": 0.0, "b": 3.0, "c": 6.0}
    assert shifts["shift"].to_dict() == {"a": 1.0, "b": 0.0, "c": -1.0}


# -- SimLex rules ----------------------------------------------------------------------------

def simlex_study(contrarian=True, raters=9):
    rng = np.random.default_rng(0)
    table = {f"r{i}": np.clip(np.array(TRUTH) + rng.integers(-1, 2, len(TRUTH)), 0, 6)
             for i in range(raters)}
    if contrarian:
        table["bad"] = 6 - np.array(TRUTH)
    return long(table)


def test_low_agreement_and_gain_single_out_the_contrarian():
    ratings = simlex_study()
    protocol = protocol_with("simlex", max_per_tranche=0)
    table = exclusion_table(ratings, protocol)
    low = table[table["rule"] == "low_agreement"]
    assert low["rater_id"].tolist() == ["bad"]
    gain = table[table["rule"] == "agreement_gain"]
    assert gain["rater_id"].tolist() == ["bad"]       # floor(0.1 * 10) = 1 rater
    assert gain["value"].iloc[0] > 0
    assert excluded_raters(table) == ["bad"]


@pytest.mark.parametrize("raters, excluded", [(9, 0), (15, 1), (19, 1), (20, 2)])
def test_rule_b_rounds_ten_percent_down(raters, excluded):
    """SimLex-999 section 3.6 (b): floor(0.1 * raters) raters, so 9 raters exclude none and
    15 or 19 exclude one (not two, as rounding up or to the nearest would)."""
    ratings = simlex_study(contrarian=False, raters=raters)
    table = exclusion_table(ratings, protocol_with("simlex", max_per_tranche=0,
                                                   rules=["agreement_gain"]))
    assert len(table) == excluded
    assert table["excluded"].astype(bool).all()


def test_rule_a_threshold_is_mean_minus_one_sample_sd():
    ratings = simlex_study()
    from lexgold.process.agreement import rater_agreement
    means = rater_agreement(ratings, min_overlap=10)["mean_rho"]
    table = exclusion_table(ratings, "simlex")
    threshold = table.loc[table["rule"] == "low_agreement", "threshold"].iloc[0]
    assert threshold == pytest.approx(means.mean() - means.std(ddof=1))


def test_checkpoint_rule():
    ratings = simlex_study(contrarian=False)
    checks = pd.DataFrame({"rater_id": ["r0", "r0", "r1"], "tranche": 1,
                           "word1": ["check1", "check2", "check1"], "word2": "",
                           "rating": [1.0, 0.0, 1.0], "kind": "checkpoint"})
    table = exclusion_table(pd.concat([ratings, checks]), protocol_with(
        "simlex", rules=["checkpoint"]))
    assert table["rater_id"].tolist() == ["r0"]
    assert table["detail"].iloc[0] == "1 of 2 checkpoint questions wrong"


def test_per_tranche_cap_keeps_checkpoint_failures_first():
    ratings = simlex_study()
    checks = pd.DataFrame({"rater_id": ["r3"], "tranche": 1, "word1": ["check1"], "word2": "",
                           "rating": [0.0], "kind": "checkpoint"})
    table = exclusion_table(pd.concat([ratings, checks]), protocol_with("simlex",
                                                                        max_per_tranche=1))
    assert excluded_raters(table) == ["r3"]
    kept = table[~table["excluded"]]
    assert set(kept["rater_id"]) == {"bad"}
    assert kept["detail"].str.contains("at most 1 excluded per tranche").all()


def test_cap_counts_per_tranche():
    first = simlex_study()
    second = simlex_study().assign(tranche=2, rater_id=lambda f: "s" + f["rater_id"])
    table = exclusion_table(pd.concat([first, second]),
                            protocol_with("simlex", max_per_tranche=1, rules=["low_agreement"]))
    assert sorted(excluded_raters(table)) == ["bad", "sbad"]


# -- HyperLex rules --------------------------------------------------------------------------

def hyperlex_study():
    rng = np.random.default_rng(1)
    table = {f"r{i}": np.clip(np.array(TRUTH) + rng.integers(-1, 2, len(TRUTH)), 0, 6)
             for i in range(8)}
    table["single"] = [4] * len(TRUTH)
    table["alternate"] = [0, 6] * (len(TRUTH) // 2)
    table["honest_two"] = [0 if v < 3 else 6 for v in TRUTH]    # two values, but follows the pairs
    return long(table, kind="consistency")


def test_single_value_and_two_value_alternation():
    table = exclusion_table(hyperlex_study(), protocol_with(
        "hyperlex", rules=["single_value", "two_value_alternation"]))
    assert table.loc[table["rule"] == "single_value", "rater_id"].tolist() == ["single"]
    assert table.loc[table["rule"] == "two_value_alternation", "rater_id"].tolist() == \
        ["alternate"]


def test_random_consistency_flags_ratings_unrelated_to_the_others():
    ratings = hyperlex_study()
    shuffled = np.random.default_rng(5).permutation(TRUTH)
    noise = long({"noise": shuffled}, kind="consistency")
    table = exclusion_table(pd.concat([ratings, noise]), protocol_with(
        "hyperlex", rules=["random_consistency"]))
    flagged = set(table["rater_id"])
    assert "noise" in flagged and "alternate" in flagged
    assert not flagged & {f"r{i}" for i in range(8)} and "honest_two" not in flagged
    assert (table["value"] > 0.05).all()


def duplicates_study() -> pd.DataFrame:
    """Three raters answer p1..p4 with 0, 2, 4, 6, then see two pairs again."""
    rows = [(r, f"p{i + 1}", v, "unique") for r in "abc" for i, v in enumerate([0, 2, 4, 6])]
    rows += [("a", "p1", 1, "duplicate"), ("a", "p2", 2, "duplicate"),   # differences 1, 0
             ("b", "p1", 6, "duplicate"), ("b", "p4", 0, "duplicate"),   # differences 6, 6
             ("c", "p1", 0, "duplicate"), ("c", "p3", 4, "duplicate")]   # equal
    frame = pd.DataFrame(rows, columns=["rater_id", "word1", "rating", "kind"])
    return frame.assign(tranche=1, word2="w", rating=frame["rating"].astype(float))


def test_duplicate_rule_compares_repeats_with_different_pairs():
    table = exclusion_table(duplicates_study(),
                            protocol_with("hyperlex", rules=["duplicate_inconsistency"]))
    assert table["rater_id"].tolist() == ["b"]
    # b: D = 6; its answers per pair (means) 3, 2, 4, 3 differ by (1+1+0+2+1+1)/6 = 1 on average
    assert table["value"].iloc[0] == pytest.approx(6.0)
    assert "mean difference 6.00 vs 1.00" in table["detail"].iloc[0]
    strict = exclusion_table(duplicates_study(), protocol_with(
        "hyperlex", rules=["duplicate_inconsistency"], duplicate_max_ratio=0.0))
    assert sorted(strict["rater_id"]) == ["a", "b"]      # any unequal answer
    # a: D = 0.5; answers 0.5, 2, 4, 6 differ by 18.5 / 6 on average
    value = strict.set_index("rater_id").loc["a", "value"]
    assert value == pytest.approx(0.5 / (18.5 / 6))
    loose = exclusion_table(duplicates_study(), protocol_with(
        "hyperlex", rules=["duplicate_inconsistency"], duplicate_max_ratio=0.15))
    assert sorted(loose["rater_id"]) == ["a", "b"]
    assert sorted(exclusion_table(duplicates_study(), protocol_with(
        "hyperlex", rules=["duplicate_inconsistency"], duplicate_max_ratio=0.17))["rater_id"]) \
        == ["b"]


def test_min_answers_excludes_raters_who_quit():
    ratings = hyperlex_study()
    quitter = ratings[ratings["rater_id"] == "r3"].iloc[:5]
    partial = pd.concat([ratings[ratings["rater_id"] != "r3"], quitter], ignore_index=True)
    shown = len(ratings[["word1", "word2"]].drop_duplicates())
    table = exclusion_table(partial, protocol_with("hyperlex", rules=["min_answers"]))
    assert table["rater_id"].tolist() == ["r3"]
    assert table["value"].iloc[0] == pytest.approx(5 / shown)
    assert f"answered 5 of the {shown} pairs" in table["detail"].iloc[0]
    half = exclusion_table(partial, protocol_with("hyperlex", rules=["min_answers"],
                                                  min_answers_share=5 / shown))
    assert half.empty


def test_min_answers_lists_a_rater_who_quit_on_the_opening_checkpoints():
    """A rater who answered the two checkpoints after the instructions (SimLex section 3.2) and
    closed the page has no rating at all: 0 answered pairs, excluded as incomplete."""
    ratings = simlex_study(contrarian=False)
    shown = len(ratings[["word1", "word2"]].drop_duplicates())
    checks = pd.DataFrame({"rater_id": "gone", "tranche": 1, "word1": ["problem", "boat"],
                           "word2": ["difficulty", "ship"], "rating": 1.0, "kind": "checkpoint"})
    table = exclusion_table(pd.concat([ratings, checks], ignore_index=True),
                            protocol_with("simlex", rules=["min_answers"]))
    assert table["rater_id"].tolist() == ["gone"] and table["value"].iloc[0] == 0
    assert table["detail"].iloc[0] == f"answered 0 of the {shown} pairs of its tranche"
    assert excluded_raters(table) == ["gone"]


def test_hyperlex_protocol_by_name_runs_every_rule():
    table = exclusion_table(hyperlex_study(), "hyperlex")
    assert {"single", "alternate"} <= set(excluded_raters(table))
    assert list(table.columns[:3]) == ["rater_id", "rule", "detail"]


def test_no_rules_gives_an_empty_table_with_columns():
    table = exclusion_table(hyperlex_study(), "tr9856")
    assert table.empty and list(table.columns[:3]) == ["rater_id", "rule", "detail"]


def test_unknown_rule_is_an_input_error():
    with pytest.raises(InputError, match=r"\[process\.exclusions\] rules\[0\]: allowed "
                                         r"'min_answers' \| .*, given 'bogus'$"):
        exclusion_table(hyperlex_study(), protocol_with("hyperlex", rules=["bogus"]))
    protocol = copy.deepcopy(load_protocol("simlex"))
    protocol["process"]["exclusions"]["sd_bellow"] = 1
    with pytest.raises(InputError, match="sd_bellow"):
        exclusion_table(hyperlex_study(), protocol)


def test_two_value_rule_needs_a_computable_correlation():
    few = long({"a": [1, 2, 1], "b": [2, 1, 2]})
    table = exclusion_table(few, protocol_with("hyperlex", rules=["two_value_alternation"]))
    assert table.empty


# -- too_fast (lexgold's rule, off in the published protocols) and the quality columns ---------

def timed(ratings: pd.DataFrame, seconds_per_pair: dict) -> pd.DataFrame:
    """Each rater's answers on pages of 4 pairs, each taking ``seconds_per_pair[rater]`` a pair."""
    out = ratings.copy()
    page = out.groupby("rater_id").cumcount() // 4
    out["answered_at"] = (pd.Timestamp("2026-03-01T12:00:00Z") + pd.to_timedelta(
        page * 600, unit="s")).dt.strftime("%Y-%m-%dT%H:%M:%SZ")
    out["response_ms"] = (out["rater_id"].map(seconds_per_pair) * 4000).astype(int)
    return out


def test_too_fast_rule_uses_the_median_seconds_per_pair():
    ratings = timed(simlex_study(contrarian=False), {f"r{k}": 5.0 for k in range(9)} |
                    {"r3": 0.5, "r7": 1.9})
    table = exclusion_table(ratings, protocol_with("simlex", rules=["too_fast"],
                                                   too_fast_s_per_pair=2.0))
    assert table["rater_id"].tolist() == ["r3", "r7"]
    assert table["value"].tolist() == [0.5, 1.9] and (table["threshold"] == 2.0).all()
    assert table["detail"].iloc[0] == "median 0.5 s per pair < 2 s"


def test_too_fast_is_off_at_zero_and_in_the_published_protocols():
    ratings = timed(simlex_study(contrarian=False), {f"r{k}": 0.1 for k in range(9)})
    assert exclusion_table(ratings, protocol_with("simlex", rules=["too_fast"])).empty
    for name in ("simlex", "hyperlex", "tr9856"):
        config = load_protocol(name)["process"]["exclusions"]
        assert "too_fast" not in config["rules"] and config["too_fast_s_per_pair"] == 0


def test_negative_too_fast_threshold_is_an_input_error():
    with pytest.raises(InputError, match="too_fast_s_per_pair"):
        exclusion_table(simlex_study(), protocol_with("simlex", too_fast_s_per_pair=-1))


def test_exclusion_rows_carry_the_raters_quality_flags():
    ratings = simlex_study(contrarian=False)
    checks = pd.DataFrame({"rater_id": ["r0", "r0"], "tranche": 1, "word1": ["c1", "c2"],
                           "word2": "", "rating": [1.0, 0.0], "kind": "checkpoint"})
    table = exclusion_table(timed(pd.concat([ratings, checks], ignore_index=True),
                                  {f"r{k}": 3.0 for k in range(9)}),
                            protocol_with("simlex", rules=["checkpoint"]))
    row = table.iloc[0]
    assert row["rater_id"] == "r0"
    assert (row["checkpoints_failed"], row["checkpoints"]) == (1, 2)
    mine = ratings[ratings["rater_id"] == "r0"]["rating"]
    assert row["top_value_share"] == mine.value_counts().max() / len(mine)
    assert row["median_s_per_pair"] == 3.0


def test_checkpoints_after_the_instructions_are_simulated_and_excluded_for():
    """SimLex section 3.2: the abstract and the concrete check after the instructions are rows
    of every simulated rater (pos ``start``), scored 1/0 like the per-POS checks, and a rater
    who gets only one of them wrong is excluded by rule (c) (section 3.6)."""
    from lexgold.crowd.simulate import Crowd, simulate_ratings
    pairs = pd.DataFrame([(f"{p.lower()}{i}a", f"{p.lower()}{i}b", p)
                          for p, n in (("N", 30), ("V", 10), ("A", 6)) for i in range(n)],
                         columns=["word1", "word2", "pos"])
    ratings, _ = simulate_ratings(pairs, "simlex", rng=np.random.default_rng(4),
                                  crowd=Crowd(spammers=0.0, honest_checkpoint=0.8),
                                  tranches=1, raters_per_tranche=12)
    checks = ratings[ratings["kind"] == "checkpoint"]
    assert checks.groupby("rater_id")["pos"].agg(list).map(
        lambda p: p == ["start", "start", "N", "A", "V"]).all()
    start = checks[checks["pos"] == "start"]
    right = start[start["rating"] == 1]
    assert set(map(frozenset, right[["word1", "word2"]].to_numpy())) <= {
        frozenset({"problem", "difficulty"}), frozenset({"boat", "ship"})}
    wrong = checks.groupby("rater_id")["rating"].agg(lambda r: list(r == 0))
    only_start = wrong[wrong.map(lambda w: any(w[:2]) and not any(w[2:]))].index
    assert len(only_start) > 0
    table = exclusion_table(ratings, protocol_with("simlex", rules=["checkpoint"]))
    assert set(only_start) <= set(excluded_raters(table))
    assert set(excluded_raters(table)) == set(wrong[wrong.map(any)].index)
