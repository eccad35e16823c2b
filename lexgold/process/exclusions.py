"""Rater exclusions: SimLex-999 section 3.6 rules (a)-(c) and HyperLex section 4.5 rules.

Every rule is computed on the same (calibrated) ratings, independently of the others, and a rater
may meet several. Rules, by the name used in ``exclusions.csv``:

Every protocol
    ``min_answers``        the rater answered less than ``min_answers_share`` of the pairs shown
                           in its tranche (pairs any rater of the tranche answered). A rater who
                           quit early has too few answers for the correlations of rules (a),
                           (b) and the HyperLex patterns, so those rules cannot see it; 1.0 keeps
                           only raters who finished.

SimLex-999, section 3.6
    ``low_agreement`` (a)  the rater's mean pairwise Spearman with the other raters of its tranche
                           is more than ``sd_below`` SD (sample SD over all raters) below the mean
                           of those means;
    ``agreement_gain`` (b) the ``floor(gain_fraction * raters)`` raters whose removal raises IAA-1
                           (pooled over tranches) most, i.e. 10 %;
    ``checkpoint`` (c)     any checkpoint answered wrong (a checkpoint row with rating 0);
    and no more than ``max_per_tranche`` (16) raters are excluded per tranche: when more meet a
    rule, checkpoint failures go first, then the lowest mean pairwise Spearman; the others stay
    in, listed with ``excluded = False`` and the reason in ``detail``. Raters excluded by
    ``min_answers`` are outside the cap (always excluded, not counted).

HyperLex, section 4.5 (the paper names the patterns; the criteria are lexgold's, as keys)
    ``duplicate_inconsistency`` ("did not give equal ratings to duplicate pairs") the rater's two
                           answers to a duplicate pair (``kind == "duplicate"``; with no kind
                           column, any pair answered twice) differ on average at least
                           ``duplicate_max_ratio`` (1) times as much as its answers to two
                           different pairs. An honest rater who does not remember its first
                           answer re-rates the pair with its usual noise, so the strict
                           reading (any difference; ratio 0) excludes most honest raters
                           (docs/process.md gives the figures);
    ``single_value``       one value makes up at least ``single_value_share`` of the rater's
                           answers ("one single rating throughout");
    ``two_value_alternation`` at least two values, the two commonest make up at least
                           ``two_value_share`` of the answers, and the rater's Spearman against
                           the mean of the others is below ``two_value_max_rho`` (alternating
                           between two ratings without following the pairs); not applied when
                           that correlation cannot be computed (too few shared pairs);
    ``random_consistency`` on the consistency set, the one-sided p-value of the rater's Spearman
                           against the mean of all other raters exceeds
                           ``random_consistency_alpha`` (ratings indistinguishable from random).

lexgold's own (no paper's; off in the published protocols)
    ``too_fast``           the rater's median seconds per pair (:func:`lexgold.process.quality.
                           median_seconds_per_pair`) is below ``too_fast_s_per_pair``; 0 turns
                           it off.

Every row also carries the rater's quality figures (:data:`lexgold.process.quality.FLAG_COLUMNS`),
so that ``exclusions.csv`` shows why a rater is suspect beyond the rule it met.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from lexgold.process.agreement import rater_against_mean, rater_agreement
from lexgold.process.calibration import calibrate as apply_calibration
from lexgold.process.config import ProcessConfig, process_config
from lexgold.process.quality import FLAG_COLUMNS, median_seconds_per_pair, quality_flags
from lexgold.process.ratings import ITEM, check_ratings, consistency_items

COLUMNS = ["rater_id", "rule", "detail", "tranche", "value", "threshold", "excluded",
           *FLAG_COLUMNS]


def exclusion_table(ratings: pd.DataFrame, protocol: dict | str, *,
                    calibrate: bool = True, agreement: pd.DataFrame | None = None
                    ) -> pd.DataFrame:
    """Which raters the protocol excludes, by which rule, with the figures behind it.

    Parameters
    ----------
    ratings : pandas.DataFrame
        Long format (docs/contract.md).
    protocol : dict or str
        A loaded protocol (:func:`lexgold.protocols.load_protocol`), a short name (``simlex``,
        ``hyperlex``, ``tr9856``) or a path; its ``[process.exclusions]`` table picks the rules.
    calibrate : bool
        Apply the protocol's calibration first (SimLex section 3.6 calibrates, then excludes);
        pass False when the ratings are already calibrated.
    agreement : pandas.DataFrame, optional
        :func:`lexgold.process.agreement.rater_agreement` of ``ratings`` with the protocol's
        pool and min_overlap, when the caller has it already (used only with ``calibrate``
        False or no calibration; computed here otherwise).

    Returns
    -------
    pandas.DataFrame
        ``rater_id, rule, detail, tranche, value, threshold, excluded``: one row per rater and
        rule met; ``excluded`` is False only for raters kept by the per-tranche cap. Empty (with
        these columns) when nobody meets a rule.
    """
    config = protocol if isinstance(protocol, ProcessConfig) else process_config(protocol)
    frame = check_ratings(ratings)
    if calibrate and config.calibration.enabled:
        frame = apply_calibration(frame, threshold=config.calibration.threshold,
                                  shift=config.calibration.shift,
                                  rating_min=config.release.rating_min,
                                  rating_max=config.release.rating_max)
    rules = config.exclusions
    given, agreement = agreement, None
    if {"low_agreement", "agreement_gain", "two_value_alternation"} & set(rules.rules):
        agreement = (given if given is not None and not
                     (calibrate and config.calibration.enabled)
                     else rater_agreement(frame, pool=config.agreement.pool,
                                          min_overlap=config.agreement.min_overlap))
    found = []
    for rule in rules.rules:
        found.append(RULE_FUNCTIONS[rule](frame, config, agreement))
    table = pd.concat([f for f in found if len(f)] or [_empty()], ignore_index=True)
    table["tranche"] = table["rater_id"].map(_rater_tranche(frame))
    table["excluded"] = True
    table = _cap(table, agreement, rules.max_per_tranche)
    raw = frame.assign(rating=frame["rating_raw"]) if "rating_raw" in frame else frame
    flags = quality_flags(raw)                        # figures on the answers as given
    return table.drop(columns=FLAG_COLUMNS, errors="ignore").merge(
        flags, on="rater_id", how="left")[COLUMNS]


def excluded_raters(table: pd.DataFrame) -> list[str]:
    """The raters an :func:`exclusion_table` excludes, sorted."""
    return sorted(table.loc[table["excluded"].astype(bool), "rater_id"].unique())


# -- SimLex-999 section 3.6 --------------------------------------------------------------------

def low_agreement(frame, config, agreement) -> pd.DataFrame:
    """Rule (a): mean pairwise rho more than ``sd_below`` SD below the mean of the means."""
    means = agreement.dropna(subset=["mean_rho"])
    if len(means) < 2:
        return _empty()
    threshold = means["mean_rho"].mean() - config.exclusions.sd_below * means["mean_rho"].std()
    hit = means[means["mean_rho"] < threshold]
    return _rows(hit["rater_id"], "low_agreement", hit["mean_rho"], threshold,
                 [f"mean pairwise Spearman {v:.3f} < {threshold:.3f} (mean - "
                  f"{config.exclusions.sd_below:g} SD)" for v in hit["mean_rho"]])


def agreement_gain(frame, config, agreement) -> pd.DataFrame:
    """Rule (b): the ``gain_fraction`` of raters whose removal raises IAA-1 most."""
    gains = agreement.dropna(subset=["gain"]).sort_values(["gain", "rater_id"],
                                                         ascending=[False, True])
    count = int(np.floor(config.exclusions.gain_fraction * len(gains) + 1e-9))
    if count == 0:
        return _empty()
    hit = gains.head(count)
    threshold = float(hit["gain"].iloc[-1])
    return _rows(hit["rater_id"], "agreement_gain", hit["gain"], threshold,
                 [f"IAA-1 rises by {v:+.4f} without this rater (top {count} of {len(gains)})"
                  for v in hit["gain"]])


def min_answers(frame, config, agreement) -> pd.DataFrame:
    """Raters who answered less than ``min_answers_share`` of their tranche's pairs.

    A rater with checkpoint rows only (one who quit on the checkpoints that open a SimLex
    tranche, section 3.2) answered 0 pairs and is listed too."""
    rated = frame[frame["kind"] != "checkpoint"]
    tranche = _rater_tranche(rated)
    unrated = frame[~frame["rater_id"].isin(tranche.index)]
    if len(unrated):
        tranche = pd.concat([tranche, _rater_tranche(unrated)])
    shown = rated[["tranche", *ITEM]].drop_duplicates().groupby("tranche").size()
    answered = rated[["rater_id", *ITEM]].drop_duplicates().groupby("rater_id").size().reindex(
        tranche.index, fill_value=0)
    table = pd.DataFrame({"answered": answered, "shown": tranche.reindex(answered.index).map(
        shown)})
    table["share"] = table["answered"] / table["shown"]
    share = config.exclusions.min_answers_share
    hit = table[table["share"] < share - 1e-9]
    return _rows(hit.index, "min_answers", hit["share"], share,
                 [f"answered {a} of the {n} pairs of its tranche" for a, n in
                  zip(hit["answered"], hit["shown"])])


def checkpoint(frame, config, agreement) -> pd.DataFrame:
    """Rule (c): any checkpoint question answered wrong (rating 0 on a checkpoint row)."""
    rows = frame[frame["kind"] == "checkpoint"]
    wrong = (rows["rating"] == 0).groupby(rows["rater_id"]).agg(["sum", "count"])
    hit = wrong[wrong["sum"] > 0]
    return _rows(hit.index, "checkpoint", hit["sum"], 0,
                 [f"{w} of {n} checkpoint questions wrong" for w, n in
                  zip(hit["sum"], hit["count"])])


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


def random_consistency(frame, config, agreement) -> pd.DataFrame:
    """Consistency-set ratings no better than random: one-sided Spearman p > alpha."""
    items = consistency_items(frame)
    if len(items) < 3:
        return _empty()
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


def too_fast(frame, config, agreement) -> pd.DataFrame:
    """Median seconds per pair below ``too_fast_s_per_pair`` (0: off); no times, no row."""
    limit = config.exclusions.too_fast_s_per_pair
    rated = frame[frame["kind"] != "checkpoint"]
    if limit <= 0 or rated.empty:
        return _empty()
    median = median_seconds_per_pair(rated).dropna()
    hit = median[median < limit]
    return _rows(hit.index, "too_fast", hit, limit,
                 [f"median {v:.1f} s per pair < {limit:g} s" for v in hit])


RULE_FUNCTIONS = {"min_answers": min_answers, "checkpoint": checkpoint,
                  "low_agreement": low_agreement,
                  "agreement_gain": agreement_gain,
                  "duplicate_inconsistency": duplicate_inconsistency,
                  "single_value": single_value, "two_value_alternation": two_value_alternation,
                  "random_consistency": random_consistency, "too_fast": too_fast}


# -- helpers -----------------------------------------------------------------------------------

def _spearman_p_greater(rho: np.ndarray, n: np.ndarray) -> np.ndarray:
    """One-sided p-value of rho > 0 (t approximation, as ``scipy.stats.spearmanr``)."""
    dof = n - 2
    with np.errstate(divide="ignore", invalid="ignore"):
        t = rho * np.sqrt(dof / ((1.0 - rho) * (1.0 + rho)))
    t = np.where(rho >= 1.0, np.inf, np.where(rho <= -1.0, -np.inf, t))
    return stats.t.sf(t, dof)


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


def _rater_tranche(frame) -> pd.Series:
    """A rater's tranche: the one most of its answers belong to (on a tie, the first in sort
    order, as ``Series.mode`` gives it); counted for every rater at once."""
    counts = frame.groupby(["rater_id", "tranche"]).size().reset_index(name="answers")
    counts = counts.sort_values(["rater_id", "answers", "tranche"],
                                ascending=[True, False, True], kind="stable")
    return counts.drop_duplicates("rater_id").set_index("rater_id")["tranche"]


def _rows(raters, rule, values, threshold, details) -> pd.DataFrame:
    return pd.DataFrame({"rater_id": list(raters), "rule": rule, "detail": list(details),
                         "value": np.asarray(values, dtype=float), "threshold": float(threshold)})


def _empty() -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=object if c in ("rater_id", "rule", "detail",
                                                            "tranche") else float)
                         for c in COLUMNS if c not in ("tranche", "excluded", *FLAG_COLUMNS)})


def _cap(table: pd.DataFrame, agreement, cap: int) -> pd.DataFrame:
    """Keep at most ``cap`` excluded raters per tranche (SimLex: 16); 0 means no cap.

    Raters who did not finish (``min_answers``) are always excluded and do not count towards
    the cap: the cap limits the paper's rules, not incomplete questionnaires."""
    if cap <= 0 or table.empty:
        return table
    incomplete = set(table.loc[table["rule"] == "min_answers", "rater_id"])
    raters = table[~table["rater_id"].isin(incomplete)].groupby("rater_id").agg(
        tranche=("tranche", "first"), checkpoint=("rule", lambda r: "checkpoint" in set(r)))
    mean_rho = (agreement.groupby("rater_id")["mean_rho"].mean() if agreement is not None
                else pd.Series(dtype=float))
    raters["mean_rho"] = mean_rho.reindex(raters.index).fillna(-np.inf)
    raters = raters.reset_index().sort_values(["tranche", "checkpoint", "mean_rho", "rater_id"],
                                              ascending=[True, False, True, True])
    raters["rank"] = raters.groupby("tranche").cumcount()
    kept = set(raters.loc[raters["rank"] >= cap, "rater_id"])
    table = table.copy()
    capped = table["rater_id"].isin(kept)
    table.loc[capped, "excluded"] = False
    table.loc[capped, "detail"] = table.loc[capped, "detail"] + \
        f"; kept: at most {cap} excluded per tranche"
    return table
