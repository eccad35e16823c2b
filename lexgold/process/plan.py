"""How many raters per pair? The reliability planner behind ``lexgold plan``.

The **reliability of gold scores** with ``k`` raters per pair is the expected Spearman
correlation between the pair means of two disjoint groups of ``k`` raters: what a second,
independent collection of the same size would agree with (the split-half figure of TR9856
section 4, for groups of any size; HyperLex section 5 reports IAA-2 beside it).

Spearman-Brown on a small pilot is noisy and overconfident: it treats the pilot's raters as the
crowd. Here the pilot is **modelled** and studies of ``k`` raters are **simulated** from it:

- a one-factor model per rater ``j`` (fitted per tranche, on the covariances of raters who share
  pairs, never on a rater's own variance): ``y_ij = a_j + lambda_j z_i + e_ij``, with ``z_i``
  the pair's standardised score, ``lambda_j`` the rater's loading (scale times the spread of the
  true scores; about 0 for a spammer), ``a_j`` the rater's bias and ``e_ij ~ N(0, sigma_j)``
  noise; on an integer scale ``sigma_j`` loses the rounding variance 1/12 (Sheppard) because the
  simulation rounds and clips to the scale again (ordinal rounding);
- a simulated study draws, per tranche, ``2k`` raters from the pilot's raters (their fitted
  parameters, with fresh noise), rates each pair in its tranche, and correlates the two groups'
  pair means;
- uncertainty: a bootstrap over pairs (the model refitted) and over raters (the pool the crowd is
  drawn from resampled), so a pilot of 4 raters, one of them careless, gets a wide interval.

Ratings without rater identity (``?`` rater ids, SimVerb-3500) have no per-rater parameters:
every simulated rater is the pooled one (no bias, the within-pair SD as noise), and only pairs
are bootstrapped.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from lexgold.errors import InputError
from lexgold.process.ratings import ITEM, answers, check_ratings, is_anonymous

#: columns of :func:`reliability_curve`'s frame
CURVE_COLUMNS = ("raters", "reliability", "low", "high", "ci_width", "iaa2")


@dataclass(frozen=True)
class RatingModel:
    """A pilot's fitted model (module docstring); arrays are per pair, per (pair, tranche)
    membership or per pilot rater."""

    z: np.ndarray            # true score, per pair, centred (on the rating scale)
    pair: np.ndarray         # per membership: the pair (a pair of the consistency set is
    tranche: np.ndarray      # rated in every tranche) and the tranche its raters come from
    n_tranches: int
    offset: np.ndarray       # a_j, per pilot rater
    loading: np.ndarray      # s_j, the rater's scale (mean 1 in a tranche; ~0: a spammer)
    noise: np.ndarray        # sigma_j (latent, before rounding)
    low: float               # the scale the simulation clips to
    high: float
    step: float              # rounding step (0: continuous ratings)


@dataclass(frozen=True)
class _Pilot:
    """The pilot's ratings as matrices: per tranche ``(pair ids, pairs x raters)`` (NaN: not
    rated; a rater's repeats averaged), or per pair ``sum, sum of squares, count`` for ratings
    without rater identity."""

    n_pairs: int
    blocks: list
    low: float
    high: float
    step: float
    anonymous: bool
    moments: np.ndarray | None = None


def _pilot(ratings: pd.DataFrame) -> _Pilot:
    rated = answers(check_ratings(ratings))
    if rated.empty:
        raise InputError("no ratings to plan from (only checkpoint rows)", field="rating")
    pairs = rated[ITEM].drop_duplicates().reset_index(drop=True)
    if len(pairs) < 3:
        raise InputError(f"a plan needs at least 3 rated pairs, got {len(pairs)}",
                         field="word1, word2")
    index = pd.MultiIndex.from_frame(pairs).get_indexer(pd.MultiIndex.from_frame(rated[ITEM]))
    values = rated["rating"].to_numpy(dtype=float)
    step = 1.0 if np.allclose(values, np.round(values)) else 0.0
    common = {"n_pairs": len(pairs), "low": float(values.min()),
              "high": float(values.max()), "step": step}
    if is_anonymous(rated):
        moments = np.stack([np.bincount(index, values ** p, minlength=len(pairs))
                            for p in (1, 2, 0)], axis=1)
        if not (moments[:, 2] > 1).any():
            raise InputError("no pair has two ratings: nothing measures agreement",
                             field="rating")
        return _Pilot(blocks=[], anonymous=True, moments=moments, **common)
    rated = rated.assign(_pair=index)
    blocks = []
    for _, part in rated.groupby("tranche", sort=True):
        table = part.pivot_table(index="_pair", columns="rater_id", values="rating",
                                 aggfunc="mean")
        blocks.append((table.index.to_numpy(), table.to_numpy(dtype=float)))
    return _Pilot(blocks=blocks, anonymous=False, **common)


def _one_factor(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Loadings, noise SDs and means of the raters (columns) of one tranche (pairs x raters).

    The loadings fit the off-diagonal covariances (pairwise complete) only, so a rater's own
    noise never counts as agreement; two raters get equal loadings ``sqrt(cov)``; a rater alone
    gets NaN (filled by :func:`fit_model` from the others)."""
    m = matrix.shape[1]
    present = ~np.isnan(matrix)
    means = np.nanmean(matrix, axis=0)
    centred = np.where(present, matrix - means, 0.0)
    shared = present.T.astype(float) @ present.astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        cov = (centred.T @ centred) / (shared - 1)
    variance = np.diag(cov).copy()
    cov[shared < 3] = np.nan
    np.fill_diagonal(cov, np.nan)
    if m < 2 or np.all(np.isnan(cov)):
        return np.full(m, np.nan), np.sqrt(np.maximum(variance, 0)), means
    if m == 2:
        loading = np.full(2, math.sqrt(max(cov[0, 1], 0.0)))
    else:
        loading = np.sqrt(np.maximum(np.nanmean(cov, axis=1), 1e-9))
        known = ~np.isnan(cov)
        filled = np.nan_to_num(cov)
        for _ in range(100):                      # minres: fit the off-diagonal elements
            numerator = filled @ loading
            denominator = known.astype(float) @ (loading ** 2)
            new = np.where(denominator > 0, numerator / np.maximum(denominator, 1e-12), 0.0)
            if np.allclose(new, loading, atol=1e-9):
                break
            loading = new
        if loading.sum() < 0:
            loading = -loading
    noise = np.sqrt(np.maximum(variance - loading ** 2, 0.0))
    return loading, noise, means


def fit_model(ratings: pd.DataFrame) -> RatingModel:
    """Fit the pilot's rating model (module docstring) to a long-format ratings frame.

    Raises
    ------
    InputError
        When no two raters share 3 pairs (nothing measures agreement) or fewer than 3 pairs.
    """
    return _fit(_pilot(ratings))


def _shrunk(means: np.ndarray, error: float) -> np.ndarray:
    """Centred pair means shrunk to the true scores' variance ``var(means) - error``."""
    centred = means - means.mean()
    total = float(centred.var())
    return centred * math.sqrt(max(total - error, 0.0) / total) if total > 0 else centred


def _fit(pilot: _Pilot) -> RatingModel:
    scale = {"low": pilot.low, "high": pilot.high, "step": pilot.step}
    if pilot.anonymous:
        return _pooled_model(pilot, scale)
    fits = [_one_factor(matrix) for _, matrix in pilot.blocks]
    loadings = np.concatenate([lam for lam, _, _ in fits])
    if np.all(np.isnan(loadings)) or not np.nanmedian(loadings) > 0:
        raise InputError("no two raters share 3 or more pairs with ratings that agree: a plan "
                         "needs raters who rated the same pairs", field="rater_id")
    typical = float(np.nanmedian(loadings))
    n = pilot.n_pairs
    weights, weighted, error = np.zeros(n), np.zeros(n), np.zeros(n)
    scales, noises, centres = [], [], []
    for (rows, matrix), (lam, sigma, rater_means) in zip(pilot.blocks, fits):
        spread = np.nanmedian(lam) if np.any(~np.isnan(lam)) else np.nan
        scale_j = lam / spread if spread > 0 else np.full_like(sigma, np.nan)
        lone = np.isnan(scale_j)               # alone in its tranche: a typical rater
        scale_j[lone] = 1.0
        sigma = np.where(lone, np.sqrt(np.maximum(sigma ** 2 - typical ** 2, 0.0)), sigma)
        present = ~np.isnan(matrix)
        centre = float(np.median(rater_means))
        deviation = np.where(present, matrix - rater_means, 0.0)
        np.add.at(weighted, rows, deviation @ scale_j + centre * (present @ scale_j ** 2))
        np.add.at(weights, rows, present @ scale_j ** 2)
        np.add.at(error, rows, present @ (scale_j ** 2 * sigma ** 2))
        scales.append(scale_j)
        noises.append(sigma)
        centres.append(rater_means - centre)
    weights = np.maximum(weights, 1e-12)
    estimate = weighted / weights                              # least squares t_i
    bias = float(np.mean([np.var(c, ddof=1) for c in centres if len(c) > 1] or [0.0]))
    counts = np.zeros(n)
    for rows, matrix in pilot.blocks:
        np.add.at(counts, rows, (~np.isnan(matrix)).sum(axis=1))
    z = _shrunk(estimate, float(np.mean(error / weights ** 2 + bias / np.maximum(counts, 1))))
    member_pair = np.concatenate([rows for rows, _ in pilot.blocks])
    member_tranche = np.concatenate([np.full(len(rows), t)
                                     for t, (rows, _) in enumerate(pilot.blocks)])
    noise = np.sqrt(np.maximum(np.concatenate(noises) ** 2 - pilot.step ** 2 / 12, 0.0))
    offset = np.concatenate(centres) + estimate.mean()        # a_j: the rater's bias
    return RatingModel(z, member_pair, member_tranche, len(pilot.blocks), offset,
                       np.concatenate(scales), noise, **scale)


def _pooled_model(pilot: _Pilot, scale: dict) -> RatingModel:
    """Ratings without rater identity: one pooled rater (the within-pair variance as noise)."""
    total, squares, count = pilot.moments.T
    mean = total / np.maximum(count, 1)
    several = count > 1
    within = float(np.mean((squares[several] - count[several] * mean[several] ** 2)
                           / (count[several] - 1)))
    z = _shrunk(mean, within * float(np.mean(1 / np.maximum(count, 1))))
    sigma = math.sqrt(max(within - pilot.step ** 2 / 12, 0.0))
    n = pilot.n_pairs
    return RatingModel(z, np.arange(n), np.zeros(n, dtype=int), 1, np.array([mean.mean()]),
                       np.array([1.0]), np.array([sigma]), **scale)


def _simulate(model: RatingModel, k: int, rng: np.random.Generator, *,
              extras: bool = False) -> tuple[float, float, float]:
    """One simulated study: two groups of ``k`` raters per tranche; returns the Spearman of
    the group means and (with ``extras``) the mean 95 % CI width of a pair mean of group A
    and its IAA-2 (else NaN)."""
    from scipy import stats

    drawn = rng.integers(0, len(model.loading), size=(model.n_tranches, 2 * k))[model.tranche]
    scores = (model.offset[drawn] + model.loading[drawn] * model.z[model.pair][:, None]
              + model.noise[drawn] * rng.standard_normal(drawn.shape))
    if model.step:
        scores = np.round(scores / model.step) * model.step
    scores = np.clip(scores, model.low, model.high)
    group_a, group_b = scores[:, :k], scores[:, k:]
    n = len(model.z)
    counts = np.bincount(model.pair, minlength=n)
    mean_a = np.bincount(model.pair, group_a.mean(axis=1), minlength=n) / counts
    mean_b = np.bincount(model.pair, group_b.mean(axis=1), minlength=n) / counts
    rho = _spearman(mean_a, mean_b)
    if not extras or k < 2:
        return rho, math.nan, math.nan
    sd = group_a.std(axis=1, ddof=1)
    width = float(np.mean(2 * stats.t.ppf(0.975, k - 1) * sd / math.sqrt(k)))
    total = group_a.sum(axis=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        iaa2 = np.nanmean([_spearman(group_a[:, j], (total - group_a[:, j]) / (k - 1))
                           for j in range(k)])
    return rho, width, float(iaa2)


def _spearman(a: np.ndarray, b: np.ndarray) -> float:
    from scipy import stats

    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return math.nan
    return float(np.corrcoef(stats.rankdata(a), stats.rankdata(b))[0, 1])


def _resampled(pilot: _Pilot, rng: np.random.Generator) -> RatingModel | None:
    """One bootstrap replicate: pairs resampled and the model refitted, then the pool of
    raters resampled (None when the replicate cannot be fitted)."""
    picked = rng.integers(0, pilot.n_pairs, size=pilot.n_pairs)
    if pilot.anonymous:
        sample = replace(pilot, moments=pilot.moments[picked])
    else:
        blocks = []
        for rows, matrix in pilot.blocks:
            position = np.full(pilot.n_pairs, -1)
            position[rows] = np.arange(len(rows))
            chosen = position[picked]
            keep = chosen >= 0
            if keep.any():
                blocks.append((np.nonzero(keep)[0], matrix[chosen[keep]]))
        sample = replace(pilot, blocks=blocks)
    try:
        fitted = _fit(sample)
    except InputError:
        return None
    pool = rng.integers(0, len(fitted.loading), size=len(fitted.loading))
    return replace(fitted, offset=fitted.offset[pool], loading=fitted.loading[pool],
                   noise=fitted.noise[pool])


def reliability_curve(ratings: pd.DataFrame, max_raters: int = 20, *,
                      rng: np.random.Generator, replicates: int = 200,
                      simulations: int = 20, level: float = 0.9) -> pd.DataFrame:
    """Expected reliability of gold scores for 1..``max_raters`` raters per pair.

    Parameters
    ----------
    ratings : pandas.DataFrame
        Pilot ratings, long format (docs/contract.md); rater identity optional.
    max_raters : int
        Largest number of raters per pair ``K``.
    rng : numpy.random.Generator
        The only source of randomness.
    replicates : int
        Bootstrap replicates for the interval (0: no interval, NaN bounds).
    simulations : int
        Simulated studies averaged for the point estimate, ``ci_width`` and ``iaa2``.
    level : float
        Coverage of the interval ``[low, high]``.

    Returns
    -------
    pandas.DataFrame
        One row per ``raters`` = k (1..K): ``reliability`` (expected Spearman between the pair
        means of two disjoint groups of k raters; best 1), ``low``, ``high`` (percentile
        bootstrap interval), ``ci_width`` (expected width of a pair mean's 95 % t interval,
        on the rating scale; NaN for k = 1), ``iaa2`` (expected IAA-2 of a k-rater study,
        HyperLex section 5; NaN for k = 1).

    Notes
    -----
    The model and its bootstrap are in the module docstring. Used by ``lexgold plan`` and by
    the study's adaptive allocation (the curve the admin view draws).

    References
    ----------
    TR9856 (Levy et al. 2015) section 4, split-half reliability; HyperLex (Vulic et al. 2017)
    section 5, IAA-2.
    """
    if max_raters < 1:
        raise InputError(f"max_raters must be at least 1, got {max_raters}", field="max_raters")
    if not 0 < level < 1:
        raise InputError(f"level must be between 0 and 1, got {level}", field="level")
    pilot = _pilot(ratings)
    model = _fit(pilot)
    ks = np.arange(1, max_raters + 1)
    rows = []
    for k in ks:
        sims = np.array([_simulate(model, int(k), rng, extras=True)
                         for _ in range(max(simulations, 1))])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)     # k = 1: no width, no IAA-2
            rows.append([int(k), *np.nanmean(sims, axis=0)])
    frame = pd.DataFrame(rows, columns=["raters", "reliability", "ci_width", "iaa2"])
    boot = np.full((replicates, len(ks)), np.nan)
    for b in range(replicates):
        sample = _resampled(pilot, rng)
        if sample is not None:
            boot[b] = [_simulate(sample, int(k), rng)[0] for k in ks]
    alpha = (1 - level) / 2
    with np.errstate(invalid="ignore"):
        low = np.nanquantile(boot, alpha, axis=0) if replicates else np.full(len(ks), np.nan)
        high = np.nanquantile(boot, 1 - alpha, axis=0) if replicates else np.full(len(ks), np.nan)
    frame["low"], frame["high"] = low, high
    return frame[list(CURVE_COLUMNS)]


def raters_needed(curve: pd.DataFrame, target: float, *, column: str = "reliability") -> int | None:
    """Fewest raters per pair whose ``column`` reaches ``target`` (None: not within the curve)."""
    reached = curve.loc[curve[column] >= target, "raters"]
    return int(reached.min()) if len(reached) else None
