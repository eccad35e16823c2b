"""A pair's score from its ratings: the rules of ``[process] aggregate``.

- ``"mean"``: the mean of the pair's ratings (SimLex-999 section 3.6, HyperLex section 4.5,
  TR9856 section 4, WordSim-353): :func:`lexgold.process.scaling.gold_scores` computes it.
- ``"trimmed_1sd"``: the mean of the pair's ratings that lie within one standard deviation of
  their mean (:func:`lexgold.stats.trimmed_1sd`, with :func:`trimmed_1sd_scores` for every
  pair at once), the rule of the Stanford Rare Words set (Luong, Socher & Manning 2013,
  "Better word representations with recursive neural networks for morphology", CoNLL):
  ratings further than one SD from a pair's mean are discarded. rw.txt's third column follows it
  with the population SD and the bound included (all 41 rows of the excerpt in
  tests/data; 2,022 or 2,024 of the file's 2,034 rows by two counts outside the repository).
- ``"model"``: each pair's score from a rater model fitted to all ratings
  (:func:`fit_rater_model`), the subject model of ITU-T P.913 (2016, 2021), clause 12 ("subject
  bias and inconsistency"), fitted with the maximum-likelihood steps of Netflix's SUREAL (Li &
  Bampis 2017, "Recover subjective quality scores from noisy measurements", Data Compression
  Conference; ``sureal.MaximumLikelihoodEstimationModelContentOblivious``), the noise
  corrected so that a consistent rater cannot take all the weight: rater ``j``'s
  rating of pair ``i`` is ``u_ij = psi_i + Delta_j + upsilon_j * e``, ``e ~ N(0, 1)``, so a
  rater's constant offset (bias ``Delta_j``) is taken out and a noisy rater (large
  ``upsilon_j``) weighs less in the pair's score ``psi_i``. It needs rater identity.

Every function takes the answers of :func:`lexgold.ratings.long.answers` (one rating per
rater and pair: ``rater_id, word1, word2, rating``) and returns one value per pair.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from lexgold.ratings import ITEM
from lexgold.ratings.long import answers
from lexgold.stats import BOUND_SLACK
from lexgold.stats import trimmed_1sd  # noqa: F401  (the rule, in lexgold.process's API)

#: the values of ``[process] aggregate``
RULES = ("mean", "model", "trimmed_1sd")
#: what each rule does, in the words of the dataset card ("Scale transform") and report.json
DESCRIPTIONS = {
    "mean": "the mean of the accepted ratings of a pair",
    "trimmed_1sd": "the mean of a pair's accepted ratings within one population standard "
                   "deviation of their mean (the Rare Words rule, Luong et al. 2013)",
    "model": "each pair's score psi_i from a rater model fitted to all accepted ratings, "
             "u_ij = psi_i + Delta_j + upsilon_j * e (ITU-T P.913 clause 12; SUREAL's maximum "
             "likelihood steps, the noise corrected for each rater's share of a pair's "
             "score): rater bias removed, raters weighted by 1 / upsilon_j^2",
}


def trimmed_1sd_scores(answered: pd.DataFrame) -> pd.DataFrame:
    """:func:`lexgold.stats.trimmed_1sd` of every pair: ``word1, word2, estimate, kept`` (ratings kept), in
    order of first appearance."""
    group = answered.groupby(ITEM, sort=False)["rating"]
    mean = group.transform("mean")
    sd = group.transform("std", ddof=0).fillna(0.0)
    keep = (answered["rating"] - mean).abs() <= sd + BOUND_SLACK
    kept = answered[keep].groupby(ITEM, sort=False)["rating"].agg(estimate="mean", kept="count")
    order = answered[ITEM].drop_duplicates()
    return order.merge(kept.reset_index(), on=ITEM, how="left").reset_index(drop=True)


@dataclass
class RaterModel:
    """A fitted :func:`fit_rater_model`."""
    #: ``word1, word2, psi`` (the pair's score on the rating scale), ``se`` (its standard
    #: error, 1 / sqrt(sum_j 1 / upsilon_j^2)), ``n`` (raters), in order of first appearance
    pairs: pd.DataFrame
    #: ``rater_id, bias`` (Delta_j), ``noise`` (upsilon_j), ``n`` (pairs rated)
    raters: pd.DataFrame
    iterations: int
    converged: bool
    #: raters whose noise was held at ``min_noise`` (their ratings fit the model exactly)
    at_floor: int
    #: groups of raters linked by shared pairs; biases are centred within each
    components: int
    #: how the noise was estimated: "corrected" or "mle" (:func:`fit_rater_model`)
    noise: str = "corrected"

    def record(self) -> dict:
        """What a release reports of the fit (report.json ``aggregate.model``)."""
        def quantiles(values):
            return [float(q) for q in np.quantile(values, [0.1, 0.5, 0.9])]
        return {"noise_estimate": self.noise, "iterations": self.iterations, "converged": self.converged,
                "raters": int(len(self.raters)), "rater_groups": self.components,
                "noise_at_floor": self.at_floor,
                "bias_q10_q50_q90": quantiles(self.raters["bias"]),
                "noise_q10_q50_q90": quantiles(self.raters["noise"])}


def fit_rater_model(answered: pd.DataFrame, *, noise: str = "corrected",
                    min_noise: float = 1e-3, tol: float = 1e-10,
                    max_iter: int = 10_000) -> RaterModel:
    """Fit ``u_ij = psi_i + Delta_j + upsilon_j * e`` (ITU-T P.913 clause 12).

    Block coordinate steps, each the exact solution for one block given the others:

    - ``psi_i = sum_j w_j (u_ij - Delta_j) / sum_j w_j`` with ``w_j = 1 / upsilon_j^2``,
    - ``Delta_j = mean_i (u_ij - psi_i)``,
    - ``noise = "mle"``: ``upsilon_j^2 = mean_i r_ij^2``, ``r_ij = u_ij - psi_i - Delta_j``:
      maximum likelihood, the fixed point SUREAL's MLE iterates to (Li & Bampis 2017;
      ``sureal.MaximumLikelihoodEstimationModelContentOblivious``, to 1e-7 on WordSim-353);
    - ``noise = "corrected"`` (the default, what ``aggregate = "model"`` uses):
      ``upsilon_j^2 = sum_i r_ij^2 / sum_i (1 - h_ij)``, ``h_ij = w_j / sum_k w_k`` the rater's
      share of the pair's weight. Under the model ``E[r_ij^2] = upsilon_j^2 (1 - h_ij)`` (the
      pair's score is partly the rater's own rating), so this is the residual variance
      corrected for it, as a restricted-likelihood estimate corrects for the fitted mean.
      The plain MLE has no interior maximum for a rater more consistent than the others
      together (upsilon_j^2 < 3 / sum_{k != j} w_k): its noise goes to 0 and the pair scores
      become that rater's ratings (SUREAL does the same: 2 of 3 simulated crowds of 10 raters
      with noise 0.5-2 on 200 pairs). With the correction 0 is an unstable fixed point and
      the stable one is the true noise.

    The steps start from the pair means, zero biases and each rater's residual SD and stop
    when no ``psi`` moves by more than ``tol``. Only differences of ``psi`` and ``Delta`` are
    identified, so the biases are centred on zero (as SUREAL's ``force_subjbias_zeromean``)
    within each group of raters linked by shared pairs (tranches that share no pair are
    fitted apart). ``min_noise`` keeps any rater from taking all the weight (counted in
    :attr:`RaterModel.at_floor`); a rater who shares no pair with another gets the mean of the
    other raters' variances (their ratings alone make their pairs' scores either way).

    Examples
    --------
    Rater b rates one point above rater a, each 0.2 off the pair's score: the two raters differ
    by 0.4 with SD 0.4, so each has noise sqrt(0.4^2 / 2) = 0.28 (the MLE says 0.2):

    >>> answered = pd.DataFrame({"rater_id": list("aaaabbbb"), "word1": list("wxyz") * 2,
    ...     "word2": ["v"] * 8, "rating": [0.7, 1.3, 2.7, 3.3, 1.3, 2.7, 3.3, 4.7]})
    >>> fit = fit_rater_model(answered)
    >>> fit.pairs["psi"].round(6).tolist(), fit.raters["bias"].round(6).tolist()
    ([1.0, 2.0, 3.0, 4.0], [-0.5, 0.5])
    >>> fit.raters["noise"].round(4).tolist()
    [0.2828, 0.2828]
    >>> fit_rater_model(answered, noise="mle").raters["noise"].round(4).tolist()
    [0.2, 0.2]
    """
    if noise not in ("corrected", "mle"):
        raise ValueError(f"expected corrected or mle, found {noise!r}")
    items = answered.groupby(ITEM, sort=False).ngroup().to_numpy()
    raters, rater_ids = pd.factorize(answered["rater_id"], sort=False)
    x = answered["rating"].to_numpy(dtype=float)
    n_items, n_raters = int(items.max()) + 1 if len(items) else 0, len(rater_ids)
    per_item = np.bincount(items, minlength=n_items).astype(float)
    per_rater = np.bincount(raters, minlength=n_raters).astype(float)
    components, item_group, rater_group = _groups(items, raters, n_items, n_raters)

    def variances(w, total, residual):
        squares = np.bincount(raters, residual ** 2, n_raters)
        if noise == "mle":
            return np.maximum(squares / per_rater, floor)
        free = np.bincount(raters, 1.0 - w / total[items], n_raters)
        var = np.divide(squares, free, out=np.full(n_raters, np.nan), where=free > 1e-12)
        known = np.isfinite(var)
        var[~known] = var[known].mean() if known.any() else 1.0
        return np.maximum(var, floor)

    psi = np.bincount(items, x, n_items) / per_item
    delta = np.zeros(n_raters)
    floor = min_noise ** 2
    var = np.maximum(np.bincount(raters, (x - psi[items]) ** 2, n_raters) / per_rater, floor)
    converged, iterations = False, 0
    while iterations < max_iter:
        iterations += 1
        w = 1.0 / var[raters]
        total = np.bincount(items, w, n_items)
        new = np.bincount(items, w * (x - delta[raters]), n_items) / total
        delta = np.bincount(raters, x - new[items], n_raters) / per_rater
        shift = np.bincount(rater_group, delta, components) / np.bincount(rater_group,
                                                                          minlength=components)
        delta -= shift[rater_group]
        new += shift[item_group]
        var = variances(w, total, x - new[items] - delta[raters])
        moved = np.max(np.abs(new - psi)) if n_items else 0.0
        psi = new
        if moved < tol:
            converged = True
            break
    se = 1.0 / np.sqrt(np.bincount(items, 1.0 / var[raters], n_items))
    order = answered[ITEM].drop_duplicates().reset_index(drop=True)
    pairs = order.assign(psi=psi, se=se, n=per_item.astype(int))
    table = pd.DataFrame({"rater_id": rater_ids, "bias": delta, "noise": np.sqrt(var),
                          "n": per_rater.astype(int)})
    return RaterModel(pairs, table, iterations, converged, int((var <= floor).sum()),
                      components, noise)


def _groups(items, raters, n_items, n_raters):
    """Connected groups of the rater-pair graph: (count, group of each pair, of each rater)."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    size = n_items + n_raters
    graph = coo_matrix((np.ones(len(items)), (items, n_items + raters)), shape=(size, size))
    count, labels = connected_components(graph, directed=False)
    return count, labels[:n_items], labels[n_items:]


def pair_estimates(final: pd.DataFrame, rule: str, *, rating_range: tuple[float, float],
                   anonymous: bool = False) -> tuple[pd.DataFrame | None, dict]:
    """Each pair's score on the rating scale by ``rule``, and what a release records of it.

    ``final`` holds the accepted ratings (long format). Returns ``(estimates, record)``:
    ``estimates`` is None for ``"mean"`` (:func:`lexgold.process.scaling.gold_scores` takes
    the mean itself), else ``word1, word2, estimate``; ``record`` is report.json's
    ``aggregate``: ``rule`` (asked), ``applied``, ``description`` and, for the other rules,
    how far their scores lie from the plain means (``mean_abs_difference``,
    ``max_abs_difference``, ``pairs_differing`` by more than 0.005) with the fit
    (``model``) or the ratings dropped (``trimmed_1sd``). ``"model"`` needs rater identity:
    ratings without it (``anonymous``) fall back to the mean, with a ``note``. Model scores
    outside the rating scale are clipped to it (``clipped_to_scale`` counts them).
    """
    if rule not in RULES:
        raise ValueError(f"expected one of {', '.join(RULES)}, found {rule!r}")
    record = {"rule": rule, "applied": rule}
    if rule == "model" and anonymous:
        record.update(applied="mean", note="aggregate = \"model\" needs rater identity and "
                      "these ratings have none (rater ids starting with '?'): the pair means "
                      "are released instead")
    if record["applied"] == "mean":
        return None, {**record, "description": DESCRIPTIONS["mean"]}
    answered = answers(final)
    if rule == "trimmed_1sd":
        table = trimmed_1sd_scores(answered)
        record["ratings_dropped"] = int(len(answered) - table["kept"].sum())
    else:
        fit = fit_rater_model(answered)
        table = fit.pairs.rename(columns={"psi": "estimate"})
        low, high = rating_range
        record.update(fit.record(), clipped_to_scale=int(
            ((table["estimate"] < low) | (table["estimate"] > high)).sum()))
        table["estimate"] = table["estimate"].clip(low, high)
    means = answered.groupby(ITEM, sort=False)["rating"].mean().to_numpy()
    gap = np.abs(table["estimate"].to_numpy() - means)
    record.update(description=DESCRIPTIONS[rule],
                  mean_abs_difference=float(gap.mean()) if len(gap) else 0.0,
                  max_abs_difference=float(gap.max()) if len(gap) else 0.0,
                  pairs_differing=int((gap > 0.005).sum()))
    return table[[*ITEM, "estimate"]], record


#: random splits of a study's raters behind :func:`model_saving`, and the most raters per
#: pair it scores from (the raters a study is planned for; larger crowds are slow to refit)
SAVING_SPLITS, SAVING_MAX_K = 20, 8


def model_saving(answered: pd.DataFrame, *, rng: np.random.Generator,
                 splits: int = SAVING_SPLITS) -> dict | None:
    """What ``aggregate = "model"`` would save on this study against the mean, measured on its
    own raters (None without rater identity or with fewer than 4 raters per pair).

    Each split orders the raters at random; every pair with ``2k`` ratings or more (``k`` half
    its median raters per pair, at most :data:`SAVING_MAX_K`) is scored from its first ``k``
    raters in that order by the mean and by the rater model (:func:`fit_rater_model`) and
    compared with the mean of its other raters, the held-out reference: Spearman's rho and the mean absolute error. The mean's
    Spearman at 2..k raters (the same splits) gives the raters the mean needs to match the
    model's Spearman at k (interpolated), and the saving ``1 - k / that`` (negative: the model
    costs raters).

    Returns
    -------
    dict or None
        ``k``, ``pairs``, ``splits``, ``spearman`` and ``mae`` (``mean``, ``model``: averages
        over the splits), ``spearman_difference`` and ``mae_difference`` (model - mean: average
        and the middle 95 % of the splits), ``model_better`` (share of splits with the higher
        Spearman), ``mean_raters_matching`` and ``saving`` (None below 3 raters per group,
        where the mean has no curve, or when the model's Spearman is below the mean's at 2).
    """
    from scipy import stats

    if answered["rater_id"].astype(str).str.startswith("?").any():
        return None
    per_pair = answered.groupby(list(ITEM), sort=False).size()
    k = min(int(per_pair.median()) // 2, SAVING_MAX_K)
    if k < 2:
        return None
    codes, raters = pd.factorize(answered["rater_id"])
    rows = []
    for _ in range(splits):
        rank = pd.Series(rng.permutation(len(raters))[codes], index=answered.index)
        place = rank.groupby(
            [answered[c] for c in ITEM], sort=False).rank(method="first").to_numpy() - 1
        enough = answered.groupby(list(ITEM), sort=False)["rating"].transform("size") >= 2 * k
        scored = answered[enough.to_numpy() & (place < k)]
        truth = answered[enough.to_numpy() & (place >= k)].groupby(
            list(ITEM), sort=False)["rating"].mean()
        if len(truth) < 3:
            continue
        model = fit_rater_model(scored).pairs.set_index(list(ITEM))["psi"].reindex(truth.index)
        low, high = float(answered["rating"].min()), float(answered["rating"].max())
        model = model.clip(low, high)
        row = {"model_rho": stats.spearmanr(model, truth).statistic,
               "model_mae": float(np.abs(model - truth).mean())}
        for size in range(2, k + 1):
            mean = answered[enough.to_numpy() & (place < size)].groupby(
                list(ITEM), sort=False)["rating"].mean().reindex(truth.index)
            row[f"mean_rho_{size}"] = stats.spearmanr(mean, truth).statistic
        row["mean_mae"] = float(np.abs(mean - truth).mean())
        rows.append(row)
    if not rows:
        return None
    table = pd.DataFrame(rows)
    curve = table[[f"mean_rho_{size}" for size in range(2, k + 1)]].mean().to_numpy()
    rho_model = float(table["model_rho"].mean())
    sizes = np.arange(2, k + 1)
    if k < 3 or rho_model < curve[0]:   # no curve of the mean to read, or below its start
        matching = None
    elif rho_model > curve[-1]:         # beyond the mean's curve: extend its last step
        slope = curve[-1] - curve[-2]
        matching = float(k + (rho_model - curve[-1]) / slope) if slope > 0 else math.inf
    else:
        matching = float(np.interp(rho_model, np.maximum.accumulate(curve), sizes))

    def difference(model_column, mean_column):
        diff = table[model_column] - table[mean_column]
        return [float(diff.mean()), *(float(q) for q in np.percentile(diff, [2.5, 97.5]))]

    return {"k": k, "pairs": int((per_pair >= 2 * k).sum()), "splits": len(table),
            "spearman": {"mean": float(table[f"mean_rho_{k}"].mean()), "model": rho_model},
            "mae": {"mean": float(table["mean_mae"].mean()),
                    "model": float(table["model_mae"].mean())},
            "spearman_difference": difference("model_rho", f"mean_rho_{k}"),
            "mae_difference": difference("model_mae", "mean_mae"),
            "model_better": float((table["model_rho"] > table[f"mean_rho_{k}"]).mean()),
            "mean_raters_matching": matching,
            "saving": None if matching is None else 1 - k / matching}


def saving_line(saving: dict | None) -> str:
    """One line of what ``aggregate = "model"`` would save (:func:`model_saving`)."""
    if saving is None:
        return ('aggregate = "model": not measurable here (it needs rater identity and 4 or '
                'more raters per pair)')
    rho, mae = saving["spearman_difference"], saving["mae_difference"]
    line = (f'aggregate = "model" at {saving["k"]} raters per pair, against the mean of the '
            f'other raters ({saving["pairs"]} pairs, {saving["splits"]} splits): Spearman '
            f'{rho[0]:+.4f} [{rho[1]:+.4f}, {rho[2]:+.4f}], MAE {mae[0]:+.4f} '
            f'[{mae[1]:+.4f}, {mae[2]:+.4f}] (model - mean, middle 95 % of splits)')
    if saving["saving"] is None:
        return line + ("; fewer than 6 raters per pair: no curve of the mean to count raters on"
                       if saving["k"] < 3 else
                       "; the mean matches the model's Spearman with 2 raters: it costs raters")
    verb = "saves" if saving["saving"] > 0 else "costs"
    return (line + f'; the mean needs {saving["mean_raters_matching"]:.2f} raters for the '
            f'model\'s Spearman: it {verb} {abs(saving["saving"]):.1%} of the ratings')
