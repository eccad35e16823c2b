"""The figures of ``lexgold agree``: IAA-1 and IAA-2 of a raw ratings file, as they stand.

No calibration and no exclusion is applied (that is ``lexgold process``). IAA-1 is the mean
pairwise Spearman rho between raters, IAA-2 the mean Spearman rho of each rater against the
mean of the other raters (HyperLex section 5; SimLex-999 section 3.3). Next to these pooled
figures: the per-tranche figures weighted by each tranche's listed pairs (how WordSim-353's
0.611 / 0.756 were aggregated), the pairs rated by more than one rater, and optionally
split-half reliability on random halves of each pair's ratings, the only figure for ratings
without rater identity (SimVerb-3500). Beyond IAA: Krippendorff's alpha (interval, ordinal; also
without rater identity) and ICC(2,1) / ICC(2,k) with 95 % intervals
(:mod:`lexgold.process.reliability`, which says how each handles missing ratings).
"""

from __future__ import annotations

import json
import math
import warnings

import numpy as np

from lexgold.process.agreement import (
    AgreementWarning,
    iaa_weighted_by_pairs,
    stage_agreement,
)
from lexgold.ratings import ITEM
from lexgold.ratings.long import (
    answers,
    check_ratings,
    is_anonymous,
    read_ratings,
    require_raters,
)
from lexgold.process.aggregate import model_saving, saving_line
from lexgold.process.reliability import ICC_FORM, icc, krippendorff_alpha
from lexgold.process.splithalf import split_half_random
from lexgold.process.simulated_label import simulated_ratings
from lexgold.ratings.overlap import overlap_warnings


def _number(value):
    """JSON-safe figure: an undefined one (NaN) is None."""
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


def agreement_figures(frame, *, pool: str = "tranche", min_overlap: int = 10, splits: int = 0,
                      seed: int = 0, anonymous: bool | None = None) -> dict:
    """The figures of ``lexgold agree`` for a long-format ratings frame.

    Returns
    -------
    dict
        ``iaa1``, ``iaa2`` (None when undefined or without rater identity), ``raters``,
        ``pairs``, ``alpha_interval``, ``alpha_ordinal`` (Krippendorff), ``icc1``, ``icck``
        (ICC(2,1), ICC(2,k); None without rater identity) and ``icc`` (the form, the 95 %
        intervals and the k of ``icck``); with rater identity also ``shared_pairs``,
        ``by_tranche`` and ``aggregate_model`` (what ``aggregate = "model"`` would save here,
        :func:`lexgold.process.aggregate.model_saving`, seeded by ``seed``; None below 4
        raters per pair); with ``splits > 0`` ``split_half`` (random halves, seeded by ``seed``).
    """
    rated = frame[frame["kind"] != "checkpoint"]
    answered = answers(check_ratings(frame))       # once for alpha and the ICC
    result = {"iaa1": None, "iaa2": None, "raters": None,
              "pairs": len(rated[ITEM].drop_duplicates()),
              "alpha_interval": _number(krippendorff_alpha(frame, "interval",
                                                           answered=answered)),
              "alpha_ordinal": _number(krippendorff_alpha(frame, "ordinal",
                                                          answered=answered)),
              "icc1": None, "icck": None}
    if not (is_anonymous(frame) if anonymous is None else anonymous):
        weighted = iaa_weighted_by_pairs(frame, min_overlap=min_overlap)
        pooled = stage_agreement(frame, pool=pool, min_overlap=min_overlap)   # one matrix
        result.update(
            iaa1=_number(pooled["iaa1"]),
            iaa2=_number(pooled["iaa2"]),
            raters=int(rated["rater_id"].nunique()),
            **_icc_figures(icc(frame, answered=answered)),
            shared_pairs=int((rated.groupby(ITEM)["rater_id"].nunique() > 1).sum()),
            by_tranche={"iaa1": _number(weighted["iaa1"]), "iaa2": _number(weighted["iaa2"]),
                        "tranches": [{k: _number(v) for k, v in row.items()}
                                     for row in weighted["tranches"]]},
            aggregate_model=model_saving(answered, rng=np.random.default_rng([seed, 46])))
    if splits:
        half = split_half_random(frame, rng=np.random.default_rng(seed), splits=splits)
        result["split_half"] = {k: _number(v) for k, v in half.items()}
    return result


def _icc_figures(found: dict) -> dict:
    """``icc1``, ``icck`` and the ``icc`` entry (form, intervals, k, pairs) of the JSON."""
    return {"icc1": _number(found["icc1"]), "icck": _number(found["icck"]),
            "icc": {"form": ICC_FORM,
                    "icc1_ci95": [_number(found["icc1_low"]), _number(found["icc1_high"])],
                    "icck_ci95": [_number(found["icck_low"]), _number(found["icck_high"])],
                    "raters": _number(found["raters"]), "pairs": found["pairs"]}}


def agree_file(path, *, pool: str = "tranche", min_overlap: int = 10, splits: int = 0,
               seed: int = 0) -> tuple[dict, bool, list[str]]:
    """Read a ratings file and measure it: ``(figures, anonymous, warnings)``.

    ``anonymous``: the ratings have no rater identity (then IAA is refused unless
    ``splits > 0``); ``warnings``: the agreement warnings (undefined correlations) and the
    overlap warnings (raters of one tranche sharing few pairs), as lines to show. Simulated
    ratings (:mod:`lexgold.simulated`) add ``simulated`` to the figures
    (:func:`lexgold.process.simulated_label.simulated_ratings`).
    """
    frame = read_ratings(path)         # checked once, here
    anonymous = is_anonymous(frame)
    if anonymous and not splits:
        require_raters(frame, "IAA-1 and IAA-2", source=path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", AgreementWarning)
        result = agreement_figures(frame, pool=pool, min_overlap=min_overlap, splits=splits,
                                   seed=seed, anonymous=anonymous)
    messages = [str(w.message) for w in caught if issubclass(w.category, AgreementWarning)]
    if not anonymous:
        messages += overlap_warnings(frame)
    simulated = simulated_ratings(frame)          # lexgold.simulated: said, and in the JSON
    if simulated:
        result["simulated"] = simulated
    return result, anonymous, messages


def summary_json(result: dict, detail: bool = False) -> str:
    """``lexgold agree --json``'s output: one JSON line; the per-tranche and shared-pair
    tables only with ``detail`` (``--detail``)."""
    extra = () if detail else ("shared_pairs", "by_tranche")
    return json.dumps({k: v for k, v in result.items() if k not in extra})


def agree_summary_lines(result: dict, anonymous: bool) -> list[str]:
    """``lexgold agree``'s text output: undefined figures as n/a."""
    def show(value):
        return "n/a" if value is None else f"{value:.3f}"

    lines = []
    if anonymous:
        lines.append("IAA-1, IAA-2: not defined (ratings without rater identity)")
    else:
        lines.append(f"IAA-1 (mean pairwise Spearman):     {show(result['iaa1'])}")
        lines.append(f"IAA-2 (rater vs mean of the others): {show(result['iaa2'])}")
        weighted = result["by_tranche"]
        parts = ", ".join(f"{row['tranche']}: {row['pairs']} pairs {show(row['iaa1'])} / "
                          f"{show(row['iaa2'])}" for row in weighted["tranches"])
        if len(weighted["tranches"]) > 4:
            parts = f"{len(weighted['tranches'])} tranches"
        lines.append(f"per tranche, weighted by pairs (pairs listed twice kept): IAA-1 "
                     f"{show(weighted['iaa1'])}  IAA-2 {show(weighted['iaa2'])}  ({parts})")
        lines.append(f"raters: {result['raters']}  pairs: {result['pairs']}  "
                     f"rated by more than one rater: {result['shared_pairs']}")
        ci = result["icc"]
        k = "n/a" if ci["raters"] is None else f"{ci['raters']:.3g}"
        lines.append(f"ICC(2,1) {show(result['icc1'])} [{show(ci['icc1_ci95'][0])}, "
                     f"{show(ci['icc1_ci95'][1])}]  ICC(2,k) {show(result['icck'])} "
                     f"[{show(ci['icck_ci95'][0])}, {show(ci['icck_ci95'][1])}]  (k = {k}, "
                     f"{ci['pairs']} pairs in complete blocks per tranche)")
        lines.append(saving_line(result.get("aggregate_model")))
    lines.append(f"Krippendorff's alpha: interval {show(result['alpha_interval'])}  "
                 f"ordinal {show(result['alpha_ordinal'])}")
    if "split_half" in result:
        half = result["split_half"]
        lines.append(f"split-half on random halves ({half['splits']} splits, {half['pairs']} "
                     f"pairs): r {show(half['r'])}  rho {show(half['rho'])}  "
                     f"Spearman-Brown {show(half['spearman_brown'])}")
    if anonymous:
        lines.append(f"pairs: {result['pairs']}")
    return lines
