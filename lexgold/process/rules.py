"""The rater exclusion rules, each defined once: its function, its paper section, its keys.

A rule is a function ``(frame, config, agreement) -> rows`` registered with :func:`rule`
right below it (``rule(name, ...)(function)``, not as a decorator: mutmut, README "Mutation
testing", leaves decorated functions unmutated); the
registry :data:`REGISTRY` is the one place everything else is derived from: the rule names and
the keys ``[process.exclusions]`` accepts (:class:`lexgold.process.config.ExclusionConfig`),
the rules :func:`lexgold.process.exclusions.exclusion_table` runs (for the pipeline, live
recruitment and the admin figures), which rules need the per-rater agreement table, and the
rows of ``exclusions.csv``: each rule returns its own threshold and, per rater, its reason
(``detail``). What the rules decide is documented in :mod:`lexgold.process.exclusions`.

A rule whose statistic is undefined on the ratings so far (too few raters or pairs) raises
:class:`lexgold.errors.UndefinedStatistic`: it excludes nobody, and the reason is kept
(``table.attrs["undefined"]``), so live recruitment can say it is not yet computable while any
other error still surfaces.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

import numpy as np
import pandas as pd

from lexgold.errors import UndefinedStatistic
from lexgold.process.agreement import rater_against_mean
from lexgold.process.quality import median_seconds_per_pair
from lexgold.ratings import ITEM
from lexgold.ratings.long import consistency_items
from lexgold.protocols import between

#: the columns a rule returns (exclusion_table adds tranche, excluded and the quality flags)
ROW_COLUMNS = ["rater_id", "rule", "detail", "value", "threshold"]


@dataclass(frozen=True)
class Key:
    """A key of ``[process.exclusions]``: its type with bounds, its default, what it means."""
    hint: Any
    default: Any
    doc: str


@dataclass(frozen=True)
class Rule:
    """A registered rule: ``name`` as in ``exclusions.csv``, the paper ``section`` it follows,
    the ``keys`` it reads, and whether it reads the per-rater agreement table."""
    name: str
    section: str
    function: Callable[..., pd.DataFrame]
    keys: tuple[str, ...] = ()
    needs_agreement: bool = False


#: every rule by name, in the order of ``exclusions.rules``'s allowed names
REGISTRY: dict[str, Rule] = {}
#: every key of ``[process.exclusions]`` but ``rules``, in declaration order
KEYS: dict[str, Key] = {}


def setting(name: str, hint, default, doc: str) -> str:
    """Declare a key of ``[process.exclusions]`` (its name is returned)."""
    if name in KEYS or name == "rules":
        raise RuntimeError(f"[process.exclusions] key {name!r} declared twice")
    KEYS[name] = Key(hint, default, doc)
    return name


def rule(name: str, *, section: str, keys: dict[str, tuple] | None = None,
         needs_agreement: bool = False):
    """Register a function as the exclusion rule ``name``: ``rule(name, ...)(function)``.

    ``keys`` maps each ``[process.exclusions]`` key the rule reads to ``(hint, default,
    doc)``; ``needs_agreement``: the rule reads the per-rater table of
    :func:`lexgold.process.agreement.rater_agreement` (its third argument, None otherwise).
    """
    def register(function):
        if name in REGISTRY:
            raise RuntimeError(f"exclusion rule {name!r} registered twice")
        names = tuple(setting(key, *spec) for key, spec in (keys or {}).items())
        REGISTRY[name] = Rule(name, section, function, names, needs_agreement)
        return function
    return register


def run_rule(name: str, frame: pd.DataFrame, config, agreement) -> tuple[pd.DataFrame, str]:
    """The rows of rule ``name`` and, when its statistic is undefined on ``frame``, why
    (no rows then)."""
    try:
        return REGISTRY[name].function(frame, config, agreement), ""
    except UndefinedStatistic as err:
        return empty(), str(err)


Share = Annotated[float, between(0, 1)]
NonNegative = Annotated[float, between(0)]


# -- every protocol ----------------------------------------------------------------------------

def min_answers(frame, config, agreement) -> pd.DataFrame:
    """Raters who answered less than ``min_answers_share`` of their tranche's pairs.

    A rater with checkpoint rows only (one who quit on the checkpoints that open a SimLex
    tranche, section 3.2) answered 0 pairs and is listed too."""
    rated = frame[frame["kind"] != "checkpoint"]
    tranche = rater_tranche(rated)
    unrated = frame[~frame["rater_id"].isin(tranche.index)]
    if len(unrated):
        tranche = pd.concat([tranche, rater_tranche(unrated)])
    shown = rated[["tranche", *ITEM]].drop_duplicates().groupby("tranche").size()
    answered = rated[["rater_id", *ITEM]].drop_duplicates().groupby("rater_id").size().reindex(
        tranche.index, fill_value=0)
    table = pd.DataFrame({"answered": answered, "shown": tranche.reindex(answered.index)
                          .astype(object).map(shown)})  # object: a categorical maps to one
    table["share"] = table["answered"] / table["shown"]
    share = config.exclusions.min_answers_share
    hit = table[table["share"] < share - 1e-9]
    return _rows(hit.index, "min_answers", hit["share"], share,
                 [f"answered {a} of the {n} pairs of its tranche" for a, n in
                  zip(hit["answered"], hit["shown"])])


rule("min_answers", section="lexgold's, for every protocol (a rater who quit early)", keys={
    "min_answers_share": (Share, 1.0, ("excluded when the rater answered less than this share "
                          "of the pairs shown in its tranche (1.0: only raters who finished)"))})(min_answers)


# -- SimLex-999 section 3.6 --------------------------------------------------------------------

def checkpoint(frame, config, agreement) -> pd.DataFrame:
    """Rule (c): any checkpoint question answered wrong (rating 0 on a checkpoint row)."""
    rows = frame[frame["kind"] == "checkpoint"]
    wrong = (rows["rating"] == 0).groupby(rows["rater_id"]).agg(["sum", "count"])
    hit = wrong[wrong["sum"] > 0]
    return _rows(hit.index, "checkpoint", hit["sum"], 0,
                 [f"{w} of {n} checkpoint questions wrong" for w, n in
                  zip(hit["sum"], hit["count"])])


rule("checkpoint", section="SimLex-999 section 3.6, rule (c)")(checkpoint)


def low_agreement_threshold(agreement: pd.DataFrame, sd_below: float) -> float:
    """Rule (a)'s threshold: the mean of the raters' mean pairwise Spearman minus ``sd_below``
    sample SDs (SimLex-999 section 3.6); raises :class:`UndefinedStatistic` for fewer than two
    raters with a mean pairwise Spearman (no SD).

    Examples
    --------
    >>> table = pd.DataFrame({"mean_rho": [0.2, 0.4, 0.6, None]})
    >>> round(low_agreement_threshold(table, 1.0), 3)     # 0.4 - 1 x 0.2
    0.2
    """
    means = agreement["mean_rho"].dropna()
    if len(means) < 2:
        raise UndefinedStatistic(f"{len(means)} raters with a mean pairwise Spearman; rule "
                                 f"(a) needs 2")
    return float(means.mean() - sd_below * means.std())


def low_agreement(frame, config, agreement) -> pd.DataFrame:
    """Rule (a): mean pairwise rho more than ``sd_below`` SD below the mean of the means."""
    means = agreement.dropna(subset=["mean_rho"])
    threshold = low_agreement_threshold(means, config.exclusions.sd_below)
    hit = means[means["mean_rho"] < threshold]
    return _rows(hit["rater_id"], "low_agreement", hit["mean_rho"], threshold,
                 [f"mean pairwise Spearman {v:.3f} < {threshold:.3f} (mean - "
                  f"{config.exclusions.sd_below:g} SD)" for v in hit["mean_rho"]])


rule("low_agreement", section="SimLex-999 section 3.6, rule (a)", needs_agreement=True, keys={
    "sd_below": (NonNegative, 1.0, ("rule a: excluded when mean pairwise rho < mean of means - "
                 "sd_below * SD"))})(low_agreement)


def agreement_gain(frame, config, agreement) -> pd.DataFrame:
    """Rule (b): the ``gain_fraction`` of raters whose removal raises IAA-1 most."""
    gains = agreement.dropna(subset=["gain"]).sort_values(["gain", "rater_id"],
                                                         ascending=[False, True])
    count = int(np.floor(config.exclusions.gain_fraction * len(gains) + 1e-9))
    if count == 0:
        return empty()
    hit = gains.head(count)
    threshold = float(hit["gain"].iloc[-1])
    return _rows(hit["rater_id"], "agreement_gain", hit["gain"], threshold,
                 [f"IAA-1 rises by {v:+.4f} without this rater (top {count} of {len(gains)})"
                  for v in hit["gain"]])


rule("agreement_gain", section="SimLex-999 section 3.6, rule (b)", needs_agreement=True, keys={
    "gain_fraction": (Annotated[float, between(0, 1, high_open=True)], 0.10,
                      ("rule b: the share of raters whose removal raises IAA-1 most (at most "
                      "every rater but one: 0 <= x < 1)"))})(agreement_gain)


MAX_PER_TRANCHE = setting("max_per_tranche", Annotated[int, between(0)], 16,
                          "at most this many raters excluded per tranche (SimLex: 16); 0 = no "
                          "cap")


# -- HyperLex section 4.5 ----------------------------------------------------------------------

def duplicate_inconsistency(frame, config, agreement) -> pd.DataFrame:
    """Answers to pairs shown twice no closer than answers to different pairs.

    D = the rater's mean absolute difference between the two answers to a duplicate pair;
    R = its mean absolute difference between the answers to two different pairs (Gini's mean
    difference over the pairs it answered, a repeated pair counting once, as its mean).
    Excluded when D > 0 and D >= ``duplicate_max_ratio`` x R: at 1.0 the second answer tells
    no more about the first than an answer to another pair would (test-retest agreement no
    better than chance); at 0 any unequal answer excludes (the strict reading).
    """
    rated = frame[frame["kind"] != "checkpoint"]
    repeated = rated
    if (rated["kind"] == "duplicate").any():
        marked = rated.loc[rated["kind"] == "duplicate", ["rater_id", *ITEM]].drop_duplicates()
        repeated = rated.merge(marked, on=["rater_id", *ITEM])
    spread = repeated.groupby(["rater_id", *ITEM])["rating"].agg(["min", "max", "count"])
    spread = spread[spread["count"] > 1]
    spread["diff"] = spread["max"] - spread["min"]
    per_rater = spread.groupby("rater_id")["diff"].agg(D="mean", pairs="count",
                                                       unequal=lambda d: int((d > 1e-9).sum()))
    answers = rated.groupby(["rater_id", *ITEM])["rating"].mean()
    per_rater["R"] = answers.groupby("rater_id").agg(gini_mean_difference).reindex(
        per_rater.index)
    ratio = config.exclusions.duplicate_max_ratio
    hit = per_rater[(per_rater["D"] > 1e-9) & (per_rater["D"] >= ratio * per_rater["R"] - 1e-9)]
    with np.errstate(divide="ignore", invalid="ignore"):
        values = hit["D"] / hit["R"]
    return _rows(hit.index, "duplicate_inconsistency", values, ratio,
                 [f"{u} of {p} duplicate pairs answered unequally; mean difference {d:.2f} vs "
                  f"{r:.2f} between different pairs" for u, p, d, r in
                  zip(hit["unequal"], hit["pairs"], hit["D"], hit["R"])])


rule("duplicate_inconsistency", section="HyperLex section 4.5 (the criterion is lexgold's)",
      keys={"duplicate_max_ratio": (
          NonNegative, 1.0, ("excluded when the mean difference between the two answers to a "
          "duplicate pair is at least this times the mean difference between answers to "
          "different pairs (1: no better than chance; 0: any unequal answer)"))})(duplicate_inconsistency)


def gini_mean_difference(values) -> float:
    """Mean absolute difference over all pairs of distinct elements (NaN for fewer than 2).

    Examples
    --------
    >>> gini_mean_difference([0, 2, 6])     # (2 + 6 + 4) / 3
    4.0
    """
    x = np.sort(np.asarray(values, dtype=float))
    n = len(x)
    if n < 2:
        return float("nan")
    weights = 2 * np.arange(1, n + 1) - n - 1
    return float(2 * np.sum(weights * x) / (n * (n - 1)))


def single_value(frame, config, agreement) -> pd.DataFrame:
    """One rating value makes up at least ``single_value_share`` of the answers."""
    shares = _value_shares(frame)
    hit = shares[shares["top1"] >= config.exclusions.single_value_share - 1e-9]
    return _rows(hit.index, "single_value", hit["top1"], config.exclusions.single_value_share,
                 [f"{s:.0%} of {n} answers are {v:g}" for s, n, v in
                  zip(hit["top1"], hit["answers"], hit["value"])])


rule("single_value", section="HyperLex section 4.5 (the criterion is lexgold's)", keys={
    "single_value_share": (Annotated[float, between(0, 1, low_open=True)], 1.0,
                           ("excluded when one value makes up at least this share of the "
                           "answers"))})(single_value)


def two_value_alternation(frame, config, agreement) -> pd.DataFrame:
    """Two values cover ``two_value_share`` of the answers and rho vs the others is low."""
    shares = _value_shares(frame)
    rho = agreement.groupby("rater_id")["rho_vs_mean"].mean()
    shares = shares.join(rho)
    low = shares["rho_vs_mean"] < config.exclusions.two_value_max_rho   # NaN: not computable
    hit = shares[(shares["distinct"] >= 2) & low &
                 (shares["top2"] >= config.exclusions.two_value_share - 1e-9)]
    return _rows(hit.index, "two_value_alternation", hit["rho_vs_mean"],
                 config.exclusions.two_value_max_rho,
                 [f"{s:.0%} of answers on two values; Spearman vs others' mean {r:.3f}"
                  for s, r in zip(hit["top2"], hit["rho_vs_mean"])])


rule("two_value_alternation", section="HyperLex section 4.5 (the criterion is lexgold's)",
      needs_agreement=True, keys={
          "two_value_share": (Annotated[float, between(0, 1, low_open=True)], 1.0,
                              "two values make up at least this share of the answers ..."),
          "two_value_max_rho": (Annotated[float, between(-1, 1)], 0.3,
                                ("... and the rater's rho against the mean of the others is "
                                "below this"))})(two_value_alternation)


def random_consistency(frame, config, agreement) -> pd.DataFrame:
    """Consistency-set ratings no better than random: one-sided Spearman p > alpha."""
    items = consistency_items(frame)
    if len(items) < 3:
        raise UndefinedStatistic(f"the consistency set has {len(items)} pairs rated by every "
                                 f"rater so far; a Spearman p-value needs 3")
    on_set = frame[frame["kind"] != "checkpoint"].merge(items, on=ITEM)
    table = rater_against_mean(on_set, pool="all",
                               min_overlap=min(config.agreement.min_overlap, len(items)))
    table = table.dropna(subset=["rho"])
    p = _spearman_p_greater(table["rho"].to_numpy(), table["n"].to_numpy())
    alpha = config.exclusions.random_consistency_alpha
    hit = table[p > alpha]
    return _rows(hit["rater_id"], "random_consistency", p[p > alpha], alpha,
                 [f"consistency set: Spearman vs others' mean {r:.3f} on {n} pairs, "
                  f"one-sided p = {q:.3f}" for r, n, q in zip(hit["rho"], hit["n"], p[p > alpha])])


rule("random_consistency", section="HyperLex section 4.5 (the criterion is lexgold's)", keys={
    "random_consistency_alpha": (Annotated[float, between(0, 1, low_open=True, high_open=True)],
                                 0.05, ("random on the consistency set: one-sided p of rho("
                                 "rater, others' mean) above this"))})(random_consistency)


# -- lexgold's own -----------------------------------------------------------------------------

def too_fast(frame, config, agreement) -> pd.DataFrame:
    """Median seconds per pair below ``too_fast_s_per_pair`` (0: off); no times, no row."""
    limit = config.exclusions.too_fast_s_per_pair
    rated = frame[frame["kind"] != "checkpoint"]
    if limit <= 0 or rated.empty:
        return empty()
    median = median_seconds_per_pair(rated).dropna()
    hit = median[median < limit]
    return _rows(hit.index, "too_fast", hit, limit,
                 [f"median {v:.1f} s per pair < {limit:g} s" for v in hit])


rule("too_fast", section="lexgold's (no paper's; SimLex-999 section 3.5 gives the times)", keys={
    "too_fast_s_per_pair": (NonNegative, 0.0, ("too_fast: excluded when the rater's median "
                            "seconds per pair is below this; 0 = off"))})(too_fast)


#: the rule names, in the order ``[process.exclusions] rules`` lists them as allowed
RULES = tuple(REGISTRY)



# -- a Best-Worst Scaling study ([process.bws] rules) ------------------------------------------
#
# The same registry idea for the other study type: a BWS rule reads one rater's figures of
# :func:`lexgold.process.bws.bws_exclusions` (one row per rater) and the study's
# :class:`lexgold.process.config.BwsConfig`, and says who it excludes. Its keys are fields of
# ``[process.bws]``. A name shared with a rating rule names the same idea (a failed check, a
# rater faster than reading allows) on a BWS answer.

#: every BWS rule by name, in the order ``[process.bws] rules`` lists them as allowed and
#: ``exclusions.csv`` gives a rater's reasons
BWS_REGISTRY: dict[str, Rule] = {}


def bws_rule(name: str, *, section: str, keys: tuple[str, ...]):
    """Register ``function(figures, config) -> bool Series`` (one per rater of ``figures``)
    as the BWS exclusion rule ``name``; ``keys``: the ``[process.bws]`` fields it reads."""
    def register(function):
        if name in BWS_REGISTRY:
            raise RuntimeError(f"BWS exclusion rule {name!r} registered twice")
        BWS_REGISTRY[name] = Rule(name, section, function, keys)
        return function
    return register


def bws_checkpoint(figures, config) -> pd.Series:
    """More than ``max_checkpoint_failures`` check tuples answered wrong (best or worst)."""
    return figures["checkpoint_failures"] > config.max_checkpoint_failures


bws_rule("checkpoint", section="lexgold's (no paper gives the threshold)",
         keys=("max_checkpoint_failures",))(bws_checkpoint)


def bws_too_fast(figures, config) -> pd.Series:
    """A median below ``min_seconds_per_tuple`` seconds per tuple (none without times)."""
    return figures["median_s_per_tuple"] < config.min_seconds_per_tuple


bws_rule("too_fast", section="lexgold's (no paper gives the threshold)",
         keys=("min_seconds_per_tuple",))(bws_too_fast)


def bws_same_position(figures, config) -> pd.Series:
    """The best (or the worst) answer at one position of the tuple in at least
    ``same_position_share`` of the rater's tuples, counted from ``same_position_min_tuples``
    tuples on (chance: 1 / tuple size)."""
    share = figures[["best_position_share", "worst_position_share"]].max(axis=1)
    return (figures["tuples"] >= config.same_position_min_tuples) & \
        (share >= config.same_position_share)


bws_rule("same_position", section="lexgold's (no paper gives the threshold)",
         keys=("same_position_share", "same_position_min_tuples"))(bws_same_position)

#: the BWS rule names, in the order ``[process.bws] rules`` lists them as allowed
BWS_RULES = tuple(BWS_REGISTRY)


# -- helpers -----------------------------------------------------------------------------------

def rater_tranche(frame) -> pd.Series:
    """A rater's tranche: the one most of its answers belong to (on a tie, the first in sort
    order, as ``Series.mode`` gives it); counted for every rater at once."""
    counts = frame.groupby(["rater_id", "tranche"]).size().reset_index(name="answers")
    counts = counts.sort_values(["rater_id", "answers", "tranche"],
                                ascending=[True, False, True], kind="stable")
    return counts.drop_duplicates("rater_id").set_index("rater_id")["tranche"]


def empty() -> pd.DataFrame:
    """No rows, with :data:`ROW_COLUMNS`."""
    return pd.DataFrame({c: pd.Series(dtype=object if c in ("rater_id", "rule", "detail")
                                      else float) for c in ROW_COLUMNS})


def _spearman_p_greater(rho: np.ndarray, n: np.ndarray) -> np.ndarray:
    """One-sided p-value of rho > 0 (t approximation, as ``scipy.stats.spearmanr``): the t
    distribution's survival function from ``scipy.special.stdtr``, the function
    ``scipy.stats.t.sf`` calls (importing ``scipy.stats`` costs ``lexgold process`` its start)."""
    from scipy.special import stdtr

    dof = n - 2
    with np.errstate(divide="ignore", invalid="ignore"):
        t = rho * np.sqrt(dof / ((1.0 - rho) * (1.0 + rho)))
    t = np.where(rho >= 1.0, np.inf, np.where(rho <= -1.0, -np.inf, t))
    return stdtr(dof, -t)


def _value_shares(frame) -> pd.DataFrame:
    rated = frame[frame["kind"] != "checkpoint"]
    counts = rated.groupby(["rater_id", "rating"]).size().rename("count").reset_index()
    counts = counts.sort_values(["rater_id", "count"], ascending=[True, False])
    totals = counts.groupby("rater_id")["count"]
    first = counts.groupby("rater_id").head(1).set_index("rater_id")
    top2 = counts.groupby("rater_id").head(2).groupby("rater_id")["count"].sum()
    out = pd.DataFrame({"answers": totals.sum(), "distinct": totals.size()})
    out["top1"] = first["count"] / out["answers"]
    out["top2"] = top2 / out["answers"]
    out["value"] = first["rating"]
    return out


def _rows(raters, rule, values, threshold, details) -> pd.DataFrame:
    return pd.DataFrame({"rater_id": list(raters), "rule": rule, "detail": list(details),
                         "value": np.asarray(values, dtype=float), "threshold": float(threshold)})


