"""TR9856 section 4 reliability: split-half agreement and the transitivity analysis."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pandas as pd

from lexgold.process.agreement import AgreementWarning
from lexgold.ratings import ITEM
from lexgold.ratings.long import answers, check_ratings
from lexgold.stats import average_ranks, rowwise_pearson, spearman


def split_half_all_splits(ratings: pd.DataFrame, *, annotators: int = 10) -> dict:
    """Mean Pearson r between the group means of all splits of ``annotators`` raters in halves.

    Parameters
    ----------
    ratings : pandas.DataFrame
        Long format (docs/contract.md); TR9856 labels are 0/1.
    annotators : int
        Size of the rater set (TR9856: 10, split 5/5).

    Returns
    -------
    dict
        ``r`` (mean Pearson over splits; best 1), ``spearman_brown`` (2r / (1 + r), the
        reliability of the mean of all ``annotators``), ``splits`` (number of distinct splits,
        126 for 10 raters), ``pairs`` and ``raters`` (the rater set used). NaN figures with an
        :class:`AgreementWarning` when no pair was rated by exactly ``annotators`` raters or the
        group means are constant.

    Notes
    -----
    As in TR9856 section 4, the pairs used are the largest subset "for which the same 10
    annotators labeled all pairs": pairs are grouped by the exact set of raters who rated them
    and the largest group with ``annotators`` raters is taken. A split and its mirror image are
    the same split, so 10 raters give C(10, 5) / 2 = 126 splits; all are computed at once as
    matrix products.

    References
    ----------
    Levy et al. (2015), TR9856, section 4 (published mean r = 0.80).
    """
    if annotators < 2 or annotators % 2:
        raise ValueError(f"annotators must be even and >= 2, found {annotators}")
    frame = answers(check_ratings(ratings))
    raters_of = frame.groupby(ITEM)["rater_id"].agg(lambda r: tuple(sorted(r)))
    raters_of = raters_of[raters_of.map(len) == annotators]
    empty = {"r": np.nan, "spearman_brown": np.nan, "splits": 0, "pairs": 0, "raters": []}
    if raters_of.empty:
        warnings.warn(f"split-half undefined: no pair rated by exactly {annotators} raters",
                      AgreementWarning, stacklevel=2)
        return empty
    chosen = raters_of.value_counts().index[0]
    items = raters_of[raters_of == chosen].index
    matrix = frame.set_index(ITEM).loc[items].pivot_table(
        index=ITEM, columns="rater_id", values="rating")[list(chosen)].to_numpy()
    half = annotators // 2
    groups = [g for g in itertools.combinations(range(annotators), half) if 0 in g]
    member = np.zeros((len(groups), annotators))
    for row, group in enumerate(groups):
        member[row, list(group)] = 1.0
    first = matrix @ member.T / half
    second = matrix @ (1.0 - member).T / half
    r = rowwise_pearson(first, second, axis=0)
    if np.isnan(r).all():
        warnings.warn("split-half undefined: group means are constant", AgreementWarning,
                      stacklevel=2)
        return {**empty, "pairs": len(items), "raters": list(chosen)}
    mean_r = float(np.nanmean(r))
    return {"r": mean_r, "spearman_brown": 2 * mean_r / (1 + mean_r), "splits": len(groups),
            "pairs": int(len(items)), "raters": list(chosen)}


def split_half_random(ratings: pd.DataFrame, *, rng: np.random.Generator,
                      splits: int = 100) -> dict:
    """Split-half reliability on random halves of each pair's ratings (no rater identity needed).

    lexgold's one split-half figure: ``lexgold agree --split-half``, ``lexgold process`` for
    ratings without rater identity, and the reliability of the site's adaptive allocation
    (:func:`lexgold.live.allocator.pair_mean_reliability`, the admin view) all call this function.
    For every pair with at least two ratings, its ratings are shuffled and cut into two halves
    (the odd one goes to the second half); the Pearson r and Spearman rho between the pairs'
    half means is computed, and averaged over ``splits`` random splits; the Spearman-Brown
    prophecy formula steps the mean r up to the reliability of the full mean. This is defined
    for ratings without rater identity (SimVerb-3500's rating columns), where IAA-1 and IAA-2
    are not.

    Parameters
    ----------
    ratings : pandas.DataFrame
        Long format (docs/contract.md); a rater's repeated answers to a pair count once.
    rng : numpy.random.Generator
        The only source of randomness.
    splits : int
        Number of random splits (at least 1).

    Returns
    -------
    dict
        ``r`` and ``rho`` (mean over splits, in [-1, 1], 1 best), ``spearman_brown``
        (2r / (1 + r): the reliability of the full mean), ``splits`` and ``pairs`` (pairs with
        two or more ratings). NaN figures with an :class:`AgreementWarning` when fewer than
        three pairs have two ratings or the half means are constant; ``spearman_brown`` is NaN
        for r = -1.

    References
    ----------
    Kiritchenko & Mohammad (2017), Best-Worst Scaling More Reliable than Rating Scales,
    section 4 (split-half on random halves of each item's annotations, averaged over random
    splits); Spearman (1910) and Brown (1910), the prophecy formula 2r / (1 + r).

    Examples
    --------
    Three pairs, each rated alike by its two raters: every split gives r = 1.

    >>> ratings = pd.DataFrame({"rater_id": list("ababab"), "tranche": 1,
    ...     "word1": list("xxyyzz"), "word2": "w", "rating": [0, 0, 2, 2, 5, 5]})
    >>> found = split_half_random(ratings, rng=np.random.default_rng(0), splits=5)
    >>> round(found["r"], 6), round(found["spearman_brown"], 6), found["pairs"]
    (1.0, 1.0, 3)
    """
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng: expected a numpy.random.Generator, found {type(rng).__name__}")
    if splits < 1:
        raise ValueError(f"splits must be >= 1, found {splits}")
    frame = answers(check_ratings(ratings))
    frame = frame.assign(slot=frame.groupby(ITEM, sort=False).cumcount())
    matrix = frame.pivot_table(index=ITEM, columns="slot", values="rating", sort=False)
    matrix = matrix.to_numpy()
    counts = (~np.isnan(matrix)).sum(axis=1)
    matrix, counts = matrix[counts >= 2], counts[counts >= 2]
    empty = {"r": np.nan, "rho": np.nan, "spearman_brown": np.nan, "splits": splits,
             "pairs": int(len(matrix))}
    if len(matrix) < 3:
        warnings.warn("split-half undefined: fewer than 3 pairs with two ratings",
                      AgreementWarning, stacklevel=2)
        return empty
    filled = np.where(np.isnan(matrix), 0.0, matrix)
    half = (counts // 2)[:, None]
    r_values, rho_values = [], []
    for _ in range(splits):
        keys = np.where(np.isnan(matrix), np.inf, rng.random(matrix.shape))
        rank = np.argsort(np.argsort(keys, axis=1), axis=1)
        first = rank < half
        second = (rank >= half) & (rank < counts[:, None])
        a = (filled * first).sum(axis=1) / first.sum(axis=1)
        b = (filled * second).sum(axis=1) / second.sum(axis=1)
        r_values.append(rowwise_pearson(a, b))
        rho_values.append(rowwise_pearson(average_ranks(a), average_ranks(b)))
    if np.isnan(r_values).all():
        warnings.warn("split-half undefined: half means are constant", AgreementWarning,
                      stacklevel=2)
        return empty
    r, rho = float(np.nanmean(r_values)), float(np.nanmean(rho_values))
    return {**empty, "r": r, "rho": rho,
            "spearman_brown": 2 * r / (1 + r) if r > -1 else np.nan}


def transitivity_points(gold: pd.DataFrame, *, score: str = "score") -> pd.DataFrame:
    """All (R2, |R3 - R1|) points of triplets (a, b), (b, c), (a, c) present in ``gold``.

    Pairs are unordered (relatedness is symmetric). For a triangle of three terms each of its
    three pairs plays R2 once, the other two being R1 and R3, so a triangle gives three points.

    Returns
    -------
    pandas.DataFrame
        ``a, b, c, r1, r2, r3, diff`` with ``diff = |r3 - r1|``.

    References
    ----------
    Levy et al. (2015), TR9856, section 4.1 and Figure 1.
    """
    edges = gold[["word1", "word2", score]].rename(columns={score: "s"})
    swapped = edges.rename(columns={"word1": "word2", "word2": "word1"})
    both = pd.concat([edges, swapped], ignore_index=True)
    both = both[both["word1"] != both["word2"]]
    both = both.groupby(["word1", "word2"], as_index=False)["s"].mean()
    # (b, a) with score r1 joined to (b, c) with score r2; b < c so each pair is R2 once
    paths = both.rename(columns={"word1": "b", "word2": "a", "s": "r1"}).merge(
        both[both["word1"] < both["word2"]].rename(
            columns={"word1": "b", "word2": "c", "s": "r2"}), on="b")
    paths = paths[paths["a"] != paths["c"]]
    closed = paths.merge(both.rename(columns={"word1": "a", "word2": "c", "s": "r3"}),
                         on=["a", "c"])
    closed = closed.assign(diff=(closed["r3"] - closed["r1"]).abs())
    return closed[["a", "b", "c", "r1", "r2", "r3", "diff"]].reset_index(drop=True)


def transitivity(gold: pd.DataFrame, *, score: str = "score", bins: int = 10,
                 score_range: tuple[float, float] = (0.0, 1.0)) -> dict:
    """Mean |R3 - R1| per bin of R2, and its Spearman rho with R2 (should be negative).

    Returns
    -------
    dict
        ``bins``: list of ``{"r2_low", "r2_high", "mean_abs_diff", "points"}``, bin i being
        [low, high) (the last one closed); ``spearman``: rho between R2 and |R3 - R1| over all
        points, and ``spearman_p``, its two-sided p-value (scipy; NaN when undefined);
        ``points``.

    Notes
    -----
    Levy et al. (2015), TR9856 section 4.1 and Figure 1. A score is a share of labels (k of n
    annotators), so a score on an edge belongs to the bin that starts there: 0.3 is in
    [0.3, 0.4). Edges computed in floating point (``linspace`` gives 0.30000000000000004) put
    it in the bin below; here the bin is found in integers: scores and the range are counted
    in units of 1e-9 (far finer than any share of raters) and bin = units x bins // width.
    The p-value treats the points as independent, which they are not (each triangle gives
    three points and pairs recur across triangles): read it as a rough guide.
    """
    points = transitivity_points(gold, score=score)
    index = score_bins(points["r2"], bins, score_range)
    table = points.groupby(index)["diff"].agg(["mean", "count"])
    low, high = score_range
    rows = [{"r2_low": (low * bins + i * (high - low)) / bins,
             "r2_high": (low * bins + (i + 1) * (high - low)) / bins,
             "mean_abs_diff": float(table["mean"].get(i, np.nan)),
             "points": int(table["count"].get(i, 0))} for i in range(bins)]
    rho = p_value = np.nan
    if len(points) > 2 and points["r2"].nunique() > 1 and points["diff"].nunique() > 1:
        rho = spearman(points["r2"], points["diff"])
        p_value = _spearman_p(rho, len(points))
    return {"bins": rows, "spearman": rho, "spearman_p": p_value, "points": int(len(points))}


def _spearman_p(rho: float, n: int) -> float:
    """Two-sided p-value of Spearman's ``rho`` over ``n`` points: Student's t with n - 2
    degrees of freedom, t = rho sqrt((n - 2) / ((1 + rho)(1 - rho))), as
    :func:`scipy.stats.spearmanr` computes it."""
    from scipy.special import stdtr   # here: `lexgold process` starts without scipy.stats

    dof = n - 2
    with np.errstate(divide="ignore"):
        t = rho * np.sqrt(np.clip(dof / ((rho + 1.0) * (1.0 - rho)), 0, None))
    return float(2 * stdtr(dof, -abs(t)))


_UNIT = 10 ** 9   # score units per 1.0 for binning (see transitivity)


def score_bins(values, bins: int, score_range: tuple[float, float]) -> np.ndarray:
    """Bin index of each value among ``bins`` equal bins of ``score_range``, in integers.

    Values and range are rounded to 1e-9 units; a value on an edge goes to the bin above (the
    top edge to the last bin); values outside the range go to the first / last bin.

    Examples
    --------
    >>> score_bins([0.0, 0.2, 0.3, 0.30000000000000004, 0.7, 0.7000000000000001, 0.69, 1.0],
    ...            10, (0.0, 1.0)).tolist()
    [0, 2, 3, 3, 7, 7, 6, 9]
    """
    low = round(score_range[0] * _UNIT)
    width = round(score_range[1] * _UNIT) - low
    units = np.rint(np.asarray(values, dtype=float) * _UNIT).astype(np.int64) - low
    return np.clip(units * bins // width, 0, bins - 1)
