"""How many raters per pair? The reliability planner behind ``lexgold plan``.

The **reliability of gold scores** with ``k`` raters per pair is the expected Spearman
correlation between the pair means of two disjoint groups of ``k`` raters: what a second,
independent collection of the same size would agree with (the split-half figure of TR9856
section 4, for groups of any size; HyperLex section 5 reports IAA-2 beside it).

Spearman-Brown on a small pilot is noisy and overconfident: it treats the pilot's raters as the
crowd. Here the pilot is **modelled** and studies of ``k`` raters are **simulated** from it:

- a model per rater ``j``: ``y_ij = a_j + s_j t_i + e_ij``, rounded and clipped to the scale,
  with ``t_i`` the pair's true score, ``s_j`` the rater's scale (about 0 for a spammer),
  ``a_j`` its bias and ``e_ij ~ N(0, sigma_j)`` noise. Loadings come from a one-factor fit per
  tranche on the covariances of raters who share pairs (never a rater's own variance), divided
  by the tranche's median loading; ``t_i`` is the least-squares estimate weighted by the
  scales, shrunk by its estimation error; on an integer scale ``sigma_j`` loses the rounding
  variance 1/12 (Sheppard) because the simulation rounds and clips again;
- a simulated study draws, per tranche, ``2k`` distinct raters among the pilot's raters (their
  fitted parameters, with fresh noise), rates each pair in its tranche (a pair of several
  tranches, the consistency set, in each), and correlates the two groups' pair means;
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


def _simulate(model: RatingModel, max_raters: int, rng: np.random.Generator, *,
              extras: bool = False) -> np.ndarray:
    """One simulated study of two groups of ``max_raters`` raters per tranche, read for every
    k = 1..K as the first k raters of each group (common random numbers: a smooth curve).

    Returns a ``(K, 3)`` array: the Spearman of the two groups' pair means and, with
    ``extras``, group A's mean 95 % CI width of a pair mean and its IAA-2 (else NaN)."""
    from scipy import stats

    k_max = max_raters
    pool = len(model.loading)
    if pool >= 2 * k_max:      # distinct raters in a tranche: no rater's bias in both groups
        drawn = np.argsort(rng.random((model.n_tranches, pool)), axis=1)[:, :2 * k_max]
    else:
        drawn = rng.integers(0, pool, size=(model.n_tranches, 2 * k_max))
    drawn = drawn[model.tranche]
    scores = (model.offset[drawn] + model.loading[drawn] * model.z[model.pair][:, None]
              + model.noise[drawn] * rng.standard_normal(drawn.shape))
    if model.step:
        scores = np.round(scores / model.step) * model.step
    scores = np.clip(scores, model.low, model.high)
    ks = np.arange(1, k_max + 1)
    n = len(model.z)
    per_pair = np.bincount(model.pair, minlength=n)[:, None]
    sum_a = np.cumsum(scores[:, :k_max], axis=1)
    mean_a = _per_pair(model.pair, sum_a / ks, n) / per_pair
    mean_b = _per_pair(model.pair, np.cumsum(scores[:, k_max:], axis=1) / ks, n) / per_pair
    out = np.full((k_max, 3), np.nan)
    out[:, 0] = _spearman_columns(mean_a, mean_b)
    if not extras:
        return out
    squares = np.cumsum(scores[:, :k_max] ** 2, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        variance = (squares - sum_a ** 2 / ks) / (ks - 1)
        sd = np.sqrt(np.maximum(variance, 0.0))
        half = stats.t.ppf(0.975, np.maximum(ks - 1, 1)) * sd / np.sqrt(ks)
    out[1:, 1] = 2 * half.mean(axis=0)[1:]
    for k in ks[1:]:
        group = scores[:, :k]
        others = (sum_a[:, k - 1:k] - group) / (k - 1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            out[k - 1, 2] = np.nanmean(_spearman_columns(group, others))
    return out


def _per_pair(pair: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    """Sum the rows of ``values`` (one per membership) per pair."""
    total = np.zeros((n, values.shape[1]))
    np.add.at(total, pair, values)
    return total


def _spearman_columns(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Spearman rho between matching columns of ``a`` and ``b`` (NaN for a constant column)."""
    from scipy import stats

    ra, rb = stats.rankdata(a, axis=0), stats.rankdata(b, axis=0)
    ra, rb = ra - ra.mean(axis=0), rb - rb.mean(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (ra * rb).sum(axis=0) / np.sqrt((ra ** 2).sum(axis=0) * (rb ** 2).sum(axis=0))


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
    if not isinstance(rng, np.random.Generator):
        raise InputError(f"expected a numpy.random.Generator, found {type(rng).__name__}",
                         field="rng")
    if max_raters < 1:
        raise InputError(f"max_raters must be at least 1, got {max_raters}", field="max_raters")
    if not 0 < level < 1:
        raise InputError(f"level must be between 0 and 1, got {level}", field="level")
    pilot = _pilot(ratings)
    model = _fit(pilot)
    ks = np.arange(1, max_raters + 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)     # k = 1: no width, no IAA-2
        point = np.nanmean([_simulate(model, max_raters, rng, extras=True)
                            for _ in range(max(simulations, 1))], axis=0)
    frame = pd.DataFrame({"raters": ks, "reliability": point[:, 0], "ci_width": point[:, 1],
                          "iaa2": point[:, 2]})
    boot = np.full((replicates, len(ks)), np.nan)
    for b in range(replicates):
        sample = _resampled(pilot, rng)
        if sample is not None:
            boot[b] = _simulate(sample, max_raters, rng)[:, 0]
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


def seconds_per_pair(ratings: pd.DataFrame) -> float:
    """Median over raters of each rater's median seconds per pair
    (:func:`lexgold.process.quality.median_seconds_per_pair`: the server's times, else the
    gaps between ``answered_at`` of successive pages); NaN when the ratings carry no times."""
    from lexgold.process.quality import median_seconds_per_pair

    rated = ratings[ratings["kind"] != "checkpoint"]
    per_rater = median_seconds_per_pair(rated).dropna()
    return float(per_rater.median()) if len(per_rater) else math.nan


def _figure(value):
    """JSON-safe: NaN is None, numpy numbers are Python numbers."""
    if value is None:
        return None
    value = float(value)
    return None if math.isnan(value) else value


def plan_study(ratings: pd.DataFrame, *, rng: np.random.Generator, max_raters: int = 20,
               target: float = 0.9, replicates: int = 200, level: float = 0.9,
               pairs: int | None = None, seconds: float | None = None,
               pay_per_hour: float | None = None) -> dict:
    """The figures of ``lexgold plan``: the curve, the raters needed for ``target`` and the cost.

    Parameters
    ----------
    ratings : pandas.DataFrame
        Pilot ratings, long format.
    pairs : int, optional
        Pairs of the full study (default: the pilot's pairs), for the cost.
    seconds : float, optional
        Seconds per pair; default measured from the pilot's times (:func:`seconds_per_pair`).
    pay_per_hour : float, optional
        Pay per hour of rating; without it no cost is given.

    Returns
    -------
    dict
        ``curve`` (``raters, reliability, low, high`` per k), ``raters_needed`` (fewest k with
        the expected reliability at ``target``; None beyond ``max_raters``),
        ``raters_needed_low`` (fewest k whose interval's lower end reaches it), ``target``,
        ``level``, ``details`` (``raters, ci_width, iaa2`` per k), ``pilot`` (raters, pairs,
        ratings per pair) and ``cost`` (``pairs, seconds_per_pair, seconds_measured,
        pay_per_hour, hours, amount`` for ``raters_needed`` raters; None figures when unknown).
    """
    checked = check_ratings(ratings)
    curve = reliability_curve(checked, max_raters, rng=rng, replicates=replicates, level=level)
    needed = raters_needed(curve, target)
    rated = checked[checked["kind"] != "checkpoint"]
    n_pairs = len(rated[ITEM].drop_duplicates())
    measured = seconds is None
    seconds = seconds_per_pair(checked) if measured else float(seconds)
    study_pairs = n_pairs if pairs is None else int(pairs)
    hours = (study_pairs * needed * seconds / 3600
             if needed is not None and not math.isnan(seconds) else math.nan)
    amount = hours * pay_per_hour if pay_per_hour is not None else math.nan
    return {
        "curve": [{"raters": int(row.raters), "reliability": _figure(row.reliability),
                   "low": _figure(row.low), "high": _figure(row.high)}
                  for row in curve.itertuples()],
        "raters_needed": needed,
        "raters_needed_low": raters_needed(curve, target, column="low"),
        "target": target,
        "level": level,
        "details": [{"raters": int(row.raters), "ci_width": _figure(row.ci_width),
                     "iaa2": _figure(row.iaa2)} for row in curve.itertuples()],
        "pilot": {"raters": None if is_anonymous(rated) else int(rated["rater_id"].nunique()),
                  "pairs": n_pairs,
                  "ratings_per_pair": _figure(len(answers(checked)) / n_pairs)},
        "cost": {"pairs": study_pairs, "raters": needed, "seconds_per_pair": _figure(seconds),
                 "seconds_measured": measured and not math.isnan(seconds),
                 "pay_per_hour": pay_per_hour, "hours": _figure(hours),
                 "amount": _figure(amount)},
    }


def plot_curve(result: dict, path) -> None:
    """Draw :func:`plan_study`'s curve with its interval and the target to a PNG at ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    curve = pd.DataFrame(result["curve"])
    figure, axes = plt.subplots(figsize=(6, 4))
    axes.fill_between(curve["raters"], curve["low"].astype(float), curve["high"].astype(float),
                      alpha=0.25, label=f"{result['level']:.0%} interval")
    axes.plot(curve["raters"], curve["reliability"], marker="o", label="expected reliability")
    axes.axhline(result["target"], color="grey", linestyle="--",
                 label=f"target {result['target']:g}")
    if result["raters_needed"] is not None:
        axes.axvline(result["raters_needed"], color="tab:red", linestyle=":",
                     label=f"{result['raters_needed']} raters per pair")
    axes.set_xlabel("raters per pair (k)")
    axes.set_ylabel("Spearman between two groups of k raters")
    axes.set_title(f"pilot: {result['pilot']['pairs']} pairs, "
                   f"{result['pilot']['ratings_per_pair']:.1f} ratings per pair")
    axes.legend(loc="lower right")
    axes.grid(alpha=0.3)
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


def summary_lines(result: dict) -> list[str]:
    """``lexgold plan``'s text output."""
    def show(value):
        return "n/a" if value is None else f"{value:.3f}"

    lines = [f"raters  reliability  [{result['level']:.0%} interval]  pair-mean CI width  IAA-2"]
    for row, extra in zip(result["curve"], result["details"]):
        lines.append(f"{row['raters']:>6}  {show(row['reliability']):>11}  [{show(row['low'])}, "
                     f"{show(row['high'])}]  {show(extra['ci_width']):>18}  "
                     f"{show(extra['iaa2'])}")
    needed, low = result["raters_needed"], result["raters_needed_low"]
    k_max = len(result["curve"])
    lines.append(f"raters per pair for reliability {result['target']:g}: "
                 + (str(needed) if needed is not None else f"more than {k_max}")
                 + " (expected); "
                 + (str(low) if low is not None else f"more than {k_max}")
                 + " (lower end of the interval)")
    cost = result["cost"]
    if needed is not None and cost["seconds_per_pair"] is not None:
        source = "measured" if cost["seconds_measured"] else "given"
        text = (f"time: {cost['pairs']} pairs x {needed} raters x "
                f"{cost['seconds_per_pair']:.1f} s ({source}) = {cost['hours']:.1f} hours")
        if cost["amount"] is not None:
            text += f"; cost at {cost['pay_per_hour']:g} per hour: {cost['amount']:.2f}"
        lines.append(text)
    elif needed is not None:
        lines.append("time and cost: no times in the ratings; give --seconds-per-pair")
    return lines
