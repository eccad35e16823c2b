"""The exclusion-rule registry (issue 25): one place per rule, from which the protocol schema,
the pipeline and live recruitment are derived; an undefined statistic waits, a bug surfaces."""

import dataclasses
import typing

import pandas as pd
import pytest
from test_process_exclusions import long, protocol_with, simlex_study

from lexgold.live.tally import exclusion_forecast
from lexgold.errors import UndefinedStatistic
from lexgold.process import rules
from lexgold.process.config import ExclusionConfig, process_config
from lexgold.process.exclusions import exclusion_table
from lexgold.protocols import ProtocolError, load_protocol

PUBLISHED = ["min_answers", "checkpoint", "low_agreement", "agreement_gain",
             "duplicate_inconsistency", "single_value", "two_value_alternation",
             "random_consistency", "too_fast"]


def test_schema_allows_exactly_the_registered_rules_and_their_keys():
    assert list(rules.REGISTRY) == PUBLISHED == list(rules.RULES)
    hint = typing.get_type_hints(ExclusionConfig)["rules"]
    assert typing.get_args(typing.get_args(hint)[0]) == tuple(PUBLISHED)
    names = [f.name for f in dataclasses.fields(ExclusionConfig)]
    assert names == ["rules", *rules.KEYS]
    declared = [key for rule in rules.REGISTRY.values() for key in rule.keys]
    assert sorted([*declared, "max_per_tranche"]) == sorted(rules.KEYS)
    assert all(rule.section for rule in rules.REGISTRY.values())


def test_a_key_declared_with_a_rule_is_checked_by_the_schema():
    with pytest.raises(ProtocolError, match=r"\[process.exclusions\] sd_below: allowed x >= 0, given -3"):
        process_config(protocol_with("simlex", sd_below=-3))
    with pytest.raises(ProtocolError, match=r"rules"):
        process_config(protocol_with("simlex", rules=["low_agreement", "no_such_rule"]))


def test_registering_a_rule_or_key_twice_is_refused():
    with pytest.raises(RuntimeError, match="registered twice"):
        rules.rule("checkpoint", section="x")(lambda frame, config, agreement: None)
    with pytest.raises(RuntimeError, match="declared twice"):
        rules.setting("sd_below", float, 1.0, "again")


def test_rules_that_read_the_agreement_table_are_the_correlation_rules():
    assert {n for n, r in rules.REGISTRY.items() if r.needs_agreement} == {
        "low_agreement", "agreement_gain", "two_value_alternation"}


def test_low_agreement_threshold_is_mean_minus_sd_below_sample_sds():
    table = pd.DataFrame({"mean_rho": [0.1, 0.5, 0.6, float("nan")]})
    # mean 0.4, sample SD sqrt(((-.3)^2 + .1^2 + .2^2) / 2) = sqrt(0.07)
    assert rules.low_agreement_threshold(table, 2.0) == pytest.approx(0.4 - 2 * 0.07 ** 0.5)
    # two raters are enough: mean 0.3, sample SD sqrt(2 x 0.2^2 / 1)
    assert rules.low_agreement_threshold(table.iloc[:2], 1.0) == pytest.approx(0.3 - 0.08 ** 0.5)
    with pytest.raises(UndefinedStatistic, match="1 raters with a mean pairwise Spearman"):
        rules.low_agreement_threshold(table.iloc[:1], 1.0)


def test_each_rule_returns_its_own_threshold_and_reason():
    table = exclusion_table(simlex_study(), "simlex")
    low = table[table["rule"] == "low_agreement"].iloc[0]
    assert low["rater_id"] == "bad" and low["value"] < low["threshold"]
    assert f"< {low['threshold']:.3f} (mean - 1 SD)" in low["detail"]


def test_an_undefined_rule_excludes_nobody_and_says_why_the_others_apply():
    ratings = long({"a": [0, 1, 2, 3], "b": [3, 3, 3, 3]})
    ratings = pd.concat([ratings, ratings.iloc[:1].assign(kind="checkpoint", rating=0.0,
                                                          word1="check")], ignore_index=True)
    table = exclusion_table(ratings, protocol_with("simlex", rules=["checkpoint",
                                                                    "low_agreement"]))
    assert table[["rater_id", "rule"]].values.tolist() == [["a", "checkpoint"]]
    assert set(table.attrs["undefined"]) == {"low_agreement"}


def test_the_forecast_waits_on_an_undefined_statistic():
    ratings = long({"a": [0, 1, 2, 3], "b": [3, 3, 3, 3]})
    protocol = load_protocol("simlex")
    table, note = exclusion_forecast(ratings, protocol)
    assert table is not None and table.empty
    assert note.startswith("exclusions: low_agreement not yet computable: 0 raters")


@pytest.mark.parametrize("error", [ValueError("a bug"), KeyError("rating"),
                                   UndefinedStatistic("too few raters so far")])
def test_a_bug_in_a_rule_surfaces_in_the_forecast_only_undefined_waits(monkeypatch, error):
    def broken(frame, config, agreement):
        raise error

    monkeypatch.setitem(rules.REGISTRY, "checkpoint",
                        dataclasses.replace(rules.REGISTRY["checkpoint"], function=broken))
    ratings = simlex_study()
    if isinstance(error, UndefinedStatistic):
        table, note = exclusion_forecast(ratings, load_protocol("simlex"))
        assert note == "exclusions: checkpoint not yet computable: too few raters so far"
        assert "bad" in set(table["rater_id"])      # the other rules still apply
    else:
        with pytest.raises(type(error)):
            exclusion_forecast(ratings, load_protocol("simlex"))


def test_rule_a_counts_raters_whose_other_figures_are_undefined():
    """Rule (a) reads mean_rho only: a rater with an undefined gain stays in the mean and SD
    (mean 0.45, sample SD sqrt(0.17 / 3), threshold 0.212: only a is below)."""
    table = pd.DataFrame({"rater_id": list("abcd"), "mean_rho": [0.1, 0.5, 0.6, 0.6],
                          "gain": [float("nan"), 0.0, 0.0, 0.0]})
    rows = rules.low_agreement(None, process_config("simlex"), table)
    assert rows["rater_id"].tolist() == ["a"]
    assert rows["threshold"].iloc[0] == pytest.approx(0.45 - (0.17 / 3) ** 0.5)


# -- a Best-Worst Scaling study's rules: the same registry, its own table ------------------------

def test_the_bws_schema_allows_exactly_the_registered_bws_rules():
    from lexgold.process.config import BwsConfig

    assert list(rules.BWS_REGISTRY) == ["checkpoint", "too_fast", "same_position"] == \
        list(rules.BWS_RULES) == BwsConfig().rules
    hint = typing.get_type_hints(BwsConfig)["rules"]
    assert typing.get_args(typing.get_args(hint)[0]) == rules.BWS_RULES
    fields = {f.name for f in dataclasses.fields(BwsConfig)}
    assert all(set(rule.keys) <= fields and rule.section for rule in rules.BWS_REGISTRY.values())
    with pytest.raises(RuntimeError, match="registered twice"):
        rules.bws_rule("too_fast", section="x", keys=())(lambda figures, config: None)


def test_bws_exclusions_run_the_registered_rules_in_registry_order(monkeypatch):
    from lexgold.process import bws
    from lexgold.process.config import BwsConfig

    figures = pd.DataFrame({"rater_id": ["a", "b", "c"], "tranche": "1", "tuples": [12, 12, 3],
                            "checkpoint_failures": [1, 0, 0],
                            "best_position_share": [0.9, 0.25, 1.0],
                            "worst_position_share": [0.25, 0.8, 1.0],
                            "median_s_per_tuple": [1.0, float("nan"), 5.0]})
    config = BwsConfig(rules=["same_position", "checkpoint", "too_fast"])
    # a: all three (in the registry's order, whatever the protocol's); b: worst at one
    # position in 0.8 of 12 tuples; no time, so not too fast; c: 3 tuples < 10, not counted
    fired = {name: list(rule.function(figures, config))
             for name, rule in rules.BWS_REGISTRY.items()}
    assert fired == {"checkpoint": [True, False, False], "too_fast": [True, False, False],
                     "same_position": [True, True, False]}
    # bws_exclusions dispatches through the registry: a replaced rule is the one that runs
    monkeypatch.setitem(rules.BWS_REGISTRY, "too_fast", dataclasses.replace(
        rules.BWS_REGISTRY["too_fast"], function=lambda figures, config: figures["tuples"] > 0))
    frame = bws.check_bws(pd.DataFrame({
        "rater_id": "r", "tranche": "1", "tuple_id": "1", "position": [0, 1, 2, 3],
        "word1": list("abcd"), "word2": list("ABCD"), "rating": [1, 0, 0, -1],
        "kind": "unique"}))
    table = bws.bws_exclusions(frame, BwsConfig(rules=["too_fast"]))
    assert table["reasons"].tolist() == ["too_fast"] and table["excluded"].tolist() == [True]
