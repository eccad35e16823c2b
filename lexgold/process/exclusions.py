"""Rater exclusions: SimLex-999 section 3.6 rules (a)-(c) and HyperLex section 4.5 rules.

Every rule is computed on the same (calibrated) ratings, independently of the others, and a rater
may meet several. Each rule is defined once, in :mod:`lexgold.process.rules` (its function, its
section and its ``[process.exclusions]`` keys); this module runs the ones a protocol names and
applies the per-tranche cap. Rules, by the name used in ``exclusions.csv``:

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

from lexgold.process.agreement import rater_agreement
from lexgold.process.calibration import calibrate as apply_calibration
from lexgold.process.config import ProcessConfig, process_config
from lexgold.process.quality import FLAG_COLUMNS, quality_flags
from lexgold.ratings.long import check_ratings
from lexgold.process.rules import (  # noqa: F401
    REGISTRY,
    agreement_gain,
    checkpoint,
    duplicate_inconsistency,
    empty,
    gini_mean_difference,
    low_agreement,
    min_answers,
    random_consistency,
    rater_tranche,
    run_rule,
    single_value,
    too_fast,
    two_value_alternation,
)

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
    if any(REGISTRY[rule].needs_agreement for rule in rules.rules):
        agreement = (given if given is not None and not
                     (calibrate and config.calibration.enabled)
                     else rater_agreement(frame, pool=config.agreement.pool,
                                          min_overlap=config.agreement.min_overlap))
    found, undefined = [], {}
    for rule in rules.rules:
        rows, why = run_rule(rule, frame, config, agreement)
        found.append(rows)
        if why:
            undefined[rule] = why
    table = pd.concat([f for f in found if len(f)] or [empty()], ignore_index=True)
    table["tranche"] = table["rater_id"].map(rater_tranche(frame))
    table["excluded"] = True
    table = _cap(table, agreement, rules.max_per_tranche)
    raw = frame.assign(rating=frame["rating_raw"]) if "rating_raw" in frame else frame
    flags = quality_flags(raw)                        # figures on the answers as given
    table = table.drop(columns=FLAG_COLUMNS, errors="ignore").merge(
        flags, on="rater_id", how="left")[COLUMNS]
    table.attrs["undefined"] = undefined
    return table


def excluded_raters(table: pd.DataFrame) -> list[str]:
    """The raters an :func:`exclusion_table` excludes, sorted."""
    return sorted(table.loc[table["excluded"].astype(bool), "rater_id"].unique())


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
