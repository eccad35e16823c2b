"""How many raters per pair? The reliability planner behind ``lexgold plan``.

The **reliability of gold scores** with ``k`` raters per pair is the expected Spearman
correlation between the pair means of two disjoint groups of ``k`` raters: what a second,
independent collection of the same size would agree with (the split-half figure of TR9856
section 4, for groups of any size; HyperLex section 5 reports IAA-2 beside it).

Spearman-Brown on a pilot predicts the *Pearson* reliability of pair means; on real logs the
Spearman of pair means is lower (WordSim-353 set 1, k = 6: Pearson 0.943, Spearman 0.913),
because raters disagree much more on some pairs than on others and the pairs are not spread
evenly over the scale. Here the pilot is **modelled** and studies of ``k`` raters are
**simulated** from it (the subject model of ITU-T P.913 and Netflix SUREAL, with a
rater scale and a per-pair spread):

- ``y_ij = a_j + s_j t_i + e_ij`` with ``e_ij ~ N(0, w_j v_i)``: ``t_i`` the pair's score,
  ``a_j`` the rater's bias, ``s_j`` its scale (mean 1), ``w_j`` its noise (mean 1), ``v_i`` the
  pair's own spread, all on the rating scale (rounding and clipping are inside the measured
  spread, so the simulation neither rounds nor clips). ``t``, ``a``, ``s`` are fitted by
  alternating least squares; ``v_i`` is the pair's residual variance shrunk towards a quadratic
  in the pair's score (empirical Bayes: the posterior mean under a scaled inverse chi-square
  prior of ``d0`` degrees of freedom, ``d0`` from how much the variances differ beyond
  sampling); ``t`` is shrunk by its estimation error so the scores' spread is the
  true scores' spread;
- a simulated study draws, per tranche, ``2k`` raters among the pilot's fitted raters (distinct
  when there are enough; fresh noise), rates each pair of the tranche (a pair of several
  tranches, the consistency set, in each), and correlates the two groups' pair means;
- uncertainty: a bootstrap over pairs (the model refitted) and over raters (the pool the crowd
  is drawn from resampled), so a pilot of 4 raters, one of them careless, gets a wide interval.

Ratings without rater identity (``?`` rater ids, SimVerb-3500) have one pooled rater (no bias
or scale of their own: a rater's bias is part of the pair's spread, as it is for a crowd whose
raters each rate a different subset) and only pairs are bootstrapped.
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
#: a pilot whose interval at the planned k is wider than this cannot tell the raters needed
TOO_WIDE = 0.10
#: fewest pairs with two or more ratings, and fewest identified raters, for a plan to tell
MIN_PAIRS, MIN_RATERS = 30, 3


@dataclass(frozen=True)
class RatingModel:
    """A pilot's fitted model (module docstring); arrays are per pair, per (pair, tranche)
    membership or per pilot rater."""

    score: np.ndarray        # t_i, per pair, centred, shrunk to the true scores' spread
    spread: np.ndarray       # v_i, the pair's noise variance for a typical rater
    pair: np.ndarray         # per membership: the pair (a pair of the consistency set is
    tranche: np.ndarray      # rated in every tranche) and the tranche its raters come from
    n_tranches: int
    offset: np.ndarray       # a_j, per pilot rater
    scale: np.ndarray        # s_j (mean 1; ~0: a rater who ignores the pairs)
    noise: np.ndarray        # w_j, the rater's noise variance relative to a typical rater


@dataclass(frozen=True)
class _Pilot:
    """The pilot's ratings, one per (rater, pair) (a rater's repeats averaged): ``pair``,
    ``rater`` (index; all 0 without rater identity) and ``value``, and the (pair, tranche)
    memberships."""

    n_pairs: int
    n_raters: int
    pair: np.ndarray
    rater: np.ndarray
    value: np.ndarray
    member_pair: np.ndarray
    member_tranche: np.ndarray
    n_tranches: int
    anonymous: bool


def _pilot(ratings: pd.DataFrame) -> _Pilot:
    rated = answers(check_ratings(ratings))
    if rated.empty:
        raise InputError("no ratings to plan from (only checkpoint rows)", field="rating")
    pairs = rated[ITEM].drop_duplicates().reset_index(drop=True)
    if len(pairs) < 3:
        raise InputError(f"a plan needs at least 3 rated pairs, got {len(pairs)}",
                         field="word1, word2")
    pair = pd.MultiIndex.from_frame(pairs).get_indexer(pd.MultiIndex.from_frame(rated[ITEM]))
    anonymous = is_anonymous(rated)
    twice = int((np.bincount(pair, minlength=len(pairs)) > 1).sum())
    if anonymous:
        if not twice:
            raise InputError("no pair has two ratings: nothing measures agreement",
                             field="rating")
        rater = np.zeros(len(rated), dtype=int)
        tranche_codes = np.zeros(len(rated), dtype=int)
    else:
        if twice < 3:
            raise InputError("no two raters share 3 or more pairs: a plan needs raters who "
                             "rated the same pairs", field="rater_id")
        rater = pd.factorize(rated["rater_id"])[0]
        tranche_codes = pd.factorize(rated["tranche"], sort=True)[0]
    members = pd.DataFrame({"pair": pair, "tranche": tranche_codes}).drop_duplicates()
    return _Pilot(len(pairs), int(rater.max()) + 1, pair, rater,
                  rated["rating"].to_numpy(dtype=float), members["pair"].to_numpy(),
                  members["tranche"].to_numpy(), int(tranche_codes.max()) + 1, anonymous)


def fit_model(ratings: pd.DataFrame) -> RatingModel:
    """Fit the pilot's rating model (module docstring) to a long-format ratings frame.

    Raises
    ------
    InputError
        When no two raters share 3 pairs (nothing measures agreement) or fewer than 3 pairs.
    """
    return _fit(_pilot(ratings))


def _least_squares(pilot: _Pilot, tolerance: float = 1e-8, iterations: int = 1000,
                   start: tuple[np.ndarray, np.ndarray] | None = None):
    """``t``, ``a``, ``s`` of ``y_ij = a_j + s_j t_i + e_ij`` by alternating least squares
    (each step solves its block exactly, so the residual sum of squares never rises; stops
    when a step lowers it by no more than ``tolerance`` of itself). ``start``: the raters'
    ``a, s`` to start from (a bootstrap replicate starts from the pilot's fit)."""
    n, m = pilot.n_pairs, pilot.n_raters
    pair, rater, y = pilot.pair, pilot.rater, pilot.value
    per_rater = np.bincount(rater, minlength=m)
    free = (per_rater >= 3) & (not pilot.anonymous)     # raters whose scale can be fitted
    if start is None:
        a, s = np.bincount(rater, y, minlength=m) / per_rater, np.ones(m)
    else:
        a, s = (np.array(v, dtype=float) for v in start)
    t = np.zeros(n)
    last = math.inf
    for _ in range(iterations):
        new_t = (np.bincount(pair, s[rater] * (y - a[rater]), minlength=n)
                 / np.bincount(pair, s[rater] ** 2, minlength=n))
        new_t -= new_t.mean()
        x = new_t[pair]
        mx = np.bincount(rater, x, minlength=m) / per_rater
        my = np.bincount(rater, y, minlength=m) / per_rater
        sxx = np.bincount(rater, (x - mx[rater]) ** 2, minlength=m)
        sxy = np.bincount(rater, (x - mx[rater]) * (y - my[rater]), minlength=m)
        new_s = np.where(free & (sxx > 0), sxy / np.where(sxx > 0, sxx, 1.0), 1.0)
        new_s = new_s / new_s[free].mean() if free.any() and new_s[free].mean() > 0 else new_s
        new_a = my - new_s * mx
        t, s, a = new_t, new_s, new_a
        rss = float(np.sum((y - a[rater] - s[rater] * t[pair]) ** 2))
        if last - rss <= tolerance * rss:
            break
        last = rss
    return t, a, s


def _fit(pilot: _Pilot, start: tuple[np.ndarray, np.ndarray] | None = None) -> RatingModel:
    n, m = pilot.n_pairs, pilot.n_raters
    pair, rater = pilot.pair, pilot.rater
    t, a, s = _least_squares(pilot, start=start)
    if not np.isfinite(t).all() or float(t.var()) <= 0:
        raise InputError("the pilot's ratings do not vary between pairs: nothing to plan from",
                         field="rating")
    residual = pilot.value - a[rater] - s[rater] * t[pair]
    count = np.bincount(pair, minlength=n)
    df = np.maximum(count - 1, 0).astype(float)            # t_i takes one rating's freedom
    spent = 0 if pilot.anonymous else 2 * (m - 1)          # and each rater's a_j, s_j
    inflate = df.sum() / max(df.sum() - spent, 1.0)
    share = np.where(count[pair] > 1, count[pair] / np.maximum(count[pair] - 1, 1), 0.0)
    raw = residual ** 2 * share                              # unbiased per rating
    w = np.bincount(rater, raw, minlength=m) / np.maximum(
        np.bincount(rater, (share > 0).astype(float), minlength=m), 1)
    w = w / w[w > 0].mean() if (w > 0).any() else np.ones(m)
    w = np.where(w > 0, w, 1.0)
    own = np.bincount(pair, residual ** 2 / w[rater], minlength=n) * inflate
    rated = df > 0
    own = np.where(rated, own / np.maximum(df, 1), np.nan)
    spread = _shrunk_spread(t, own, df)
    # the estimation error of t_i (weighted least squares) and the scores' true spread
    weights = np.bincount(pair, s[rater] ** 2, minlength=n)
    error = spread * np.bincount(pair, s[rater] ** 2 * w[rater], minlength=n) / weights ** 2
    total = float(t.var())
    score = t * math.sqrt(max(total - float(error.mean()), 0.0) / total)
    return RatingModel(score, spread, pilot.member_pair, pilot.member_tranche,
                       pilot.n_tranches, a, s, w)


def _shrunk_spread(score: np.ndarray, own: np.ndarray, df: np.ndarray) -> np.ndarray:
    """Each pair's noise variance, shrunk towards a quadratic in its score (empirical Bayes).

    ``own`` (NaN where ``df`` is 0) is the pair's residual variance on ``df`` degrees of
    freedom. The prior is the quadratic fitted to ``own`` (weights ``df``); its strength ``d0``
    is estimated by moments, taking the true variances' squared coefficient of variation
    around the prior as ``2/d0`` (as for a chi-square on ``d0`` degrees of freedom):
    ``E[(own/prior - 1)^2] = 2/df + (1 + 2/df) * 2/d0``. The posterior mean under the scaled
    inverse chi-square prior is ``(d0 prior + df own) / (d0 + df)`` (a pair rated once gets
    the prior)."""
    rated = df > 0
    design = np.vstack([np.ones_like(score), score, score ** 2]).T
    root = np.sqrt(df[rated])
    coef = np.linalg.lstsq(design[rated] * root[:, None], own[rated] * root, rcond=None)[0]
    typical = float(np.average(own[rated], weights=df[rated]))
    prior = np.maximum(design @ coef, 0.05 * typical)
    if typical <= 0:
        return np.zeros_like(score)
    ratio = own[rated] / prior[rated]
    sampling = 2 / df[rated]
    excess = float(np.mean((ratio - 1) ** 2 - sampling) / np.mean(1 + sampling))
    d0 = 2 / excess if excess > 1e-6 else 1e6
    return np.where(rated, (d0 * prior + df * np.nan_to_num(own)) / (d0 + df), prior)


def _simulate(model: RatingModel, max_raters: int, rng: np.random.Generator, *,
              extras: bool = False) -> np.ndarray:
    """One simulated study of two groups of ``max_raters`` raters per tranche, read for every
    k = 1..K as the first k raters of each group (common random numbers: a smooth curve).

    Returns a ``(K, 3)`` array: the Spearman of the two groups' pair means and, with
    ``extras``, group A's mean 95 % CI width of a pair mean and its IAA-2 (else NaN)."""
    from scipy import stats

    k_max = max_raters
    pool = len(model.scale)
    if pool >= 2 * k_max:      # distinct raters in a tranche: no rater in both groups
        drawn = np.argsort(rng.random((model.n_tranches, pool)), axis=1)[:, :2 * k_max]
    else:
        drawn = rng.integers(0, pool, size=(model.n_tranches, 2 * k_max))
    drawn = drawn[model.tranche]
    pair = model.pair
    scores = (model.offset[drawn] + model.scale[drawn] * model.score[pair][:, None]
              + np.sqrt(model.noise[drawn] * model.spread[pair][:, None])
              * rng.standard_normal(drawn.shape))
    ks = np.arange(1, k_max + 1)
    n = len(model.score)
    per_pair = np.bincount(pair, minlength=n)[:, None]
    sum_a = np.cumsum(scores[:, :k_max], axis=1)
    mean_a = _per_pair(pair, sum_a / ks, n) / per_pair
    mean_b = _per_pair(pair, np.cumsum(scores[:, k_max:], axis=1) / ks, n) / per_pair
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


def _resampled(pilot: _Pilot, rng: np.random.Generator,
               start: tuple[np.ndarray, np.ndarray] | None = None) -> RatingModel | None:
    """One bootstrap replicate: pairs resampled and the model refitted (from ``start``, the
    pilot's raters' ``a, s``), then the pool of raters resampled (None when the replicate
    cannot be fitted)."""
    picked = rng.integers(0, pilot.n_pairs, size=pilot.n_pairs)
    order = np.argsort(pilot.pair, kind="stable")
    starts = np.searchsorted(pilot.pair[order], np.arange(pilot.n_pairs + 1))
    rows = np.concatenate([order[starts[i]:starts[i + 1]] for i in picked])
    new_pair = np.repeat(np.arange(pilot.n_pairs), np.diff(starts)[picked])
    morder = np.argsort(pilot.member_pair, kind="stable")
    mstarts = np.searchsorted(pilot.member_pair[morder], np.arange(pilot.n_pairs + 1))
    members = np.concatenate([morder[mstarts[i]:mstarts[i + 1]] for i in picked])
    sample = replace(pilot, pair=new_pair, rater=pilot.rater[rows], value=pilot.value[rows],
                     member_pair=np.repeat(np.arange(pilot.n_pairs), np.diff(mstarts)[picked]),
                     member_tranche=pilot.member_tranche[members])
    try:
        with np.errstate(invalid="ignore", divide="ignore"):
            fitted = _fit(sample, start)
    except InputError:
        return None
    if not (np.isfinite(fitted.score).all() and np.isfinite(fitted.spread).all()):
        return None
    pool = rng.integers(0, len(fitted.scale), size=len(fitted.scale))
    return replace(fitted, offset=fitted.offset[pool], scale=fitted.scale[pool],
                   noise=fitted.noise[pool])


def reliability_curve(ratings: pd.DataFrame, max_raters: int = 20, *,
                      rng: np.random.Generator, replicates: int = 200,
                      simulations: int = 20, level: float = 0.9,
                      progress: bool | None = False) -> pd.DataFrame:
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
    progress : bool or None
        A tqdm bar on stderr over the bootstrap (None: only on a terminal; False: never).

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
    from tqdm import tqdm

    for b in tqdm(range(replicates), desc="plan: bootstrap", unit=" replicates",
                  disable=None if progress is None else not progress, leave=False):
        sample = _resampled(pilot, rng, (model.offset, model.scale))
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
               pay_per_hour: float | None = None, progress: bool | None = False) -> dict:
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
    progress : bool or None
        Progress on stderr (:func:`reliability_curve`).

    Returns
    -------
    dict
        ``curve`` (``raters, reliability, low, high`` per k), ``raters_needed`` (fewest k with
        the expected reliability at ``target``; None beyond ``max_raters``),
        ``raters_needed_low`` (fewest k whose interval's lower end reaches it), ``target``,
        ``level``, ``details`` (``raters, ci_width, iaa2`` per k; ``ci_width`` in points of the
        rating scale), ``pilot`` (raters, pairs, ratings per pair, pairs with two or more
        ratings, ``scale`` [low, high]), ``too_small`` (why the pilot cannot tell the raters
        needed, :func:`too_small`; None when it can) and ``cost`` (``pairs, seconds_per_pair, seconds_measured,
        pay_per_hour, hours, amount`` for ``raters_needed`` raters; None figures when unknown).
    """
    checked = check_ratings(ratings)
    curve = reliability_curve(checked, max_raters, rng=rng, replicates=replicates, level=level,
                              progress=progress)
    needed = raters_needed(curve, target)
    rated = checked[checked["kind"] != "checkpoint"]
    n_pairs = len(rated[ITEM].drop_duplicates())
    per_pair = answers(checked).groupby(ITEM, observed=True).size()
    pilot = {"raters": None if is_anonymous(rated) else int(rated["rater_id"].nunique()),
             "pairs": n_pairs, "ratings_per_pair": _figure(len(answers(checked)) / n_pairs),
             "pairs_rated_twice": int((per_pair > 1).sum()), "scale": _scale(rated)}
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
        "pilot": pilot,
        "too_small": too_small(curve, pilot, needed),
        "cost": {"pairs": study_pairs, "raters": needed, "seconds_per_pair": _figure(seconds),
                 "seconds_measured": measured and not math.isnan(seconds),
                 "pay_per_hour": pay_per_hour, "hours": _figure(hours),
                 "amount": _figure(amount)},
    }


def _scale(rated: pd.DataFrame) -> list[float]:
    """The rating scale: the declared ``scale_min``/``scale_max`` where given, else the range
    of the ratings."""
    low, high = float(rated["rating"].min()), float(rated["rating"].max())
    if {"scale_min", "scale_max"} <= set(rated.columns):
        declared = pd.to_numeric(rated["scale_min"], errors="coerce").min(), \
            pd.to_numeric(rated["scale_max"], errors="coerce").max()
        low = float(declared[0]) if pd.notna(declared[0]) else low
        high = float(declared[1]) if pd.notna(declared[1]) else high
    return [low, high]


def too_small(curve: pd.DataFrame, pilot: dict, needed: int | None) -> str | None:
    """Why a pilot cannot tell how many raters a study needs, or None.

    Too small: fewer than :data:`MIN_PAIRS` pairs rated twice or more, fewer than
    :data:`MIN_RATERS` identified raters (two raters cannot tell a rater's noise from a pair's
    spread), or an interval wider than :data:`TOO_WIDE` at the k planned (the raters needed,
    else the curve's last k)."""
    if pilot["pairs_rated_twice"] < MIN_PAIRS:
        return (f"only {pilot['pairs_rated_twice']} pairs have two or more ratings "
                f"(at least {MIN_PAIRS} needed)")
    if pilot["raters"] is not None and pilot["raters"] < MIN_RATERS:
        return f"only {pilot['raters']} raters (at least {MIN_RATERS} needed)"
    row = curve.set_index("raters").loc[needed if needed is not None else curve["raters"].max()]
    width = float(row["high"] - row["low"])
    if not math.isnan(width) and width > TOO_WIDE:
        return (f"the {int(row.name)}-rater reliability's interval [{row['low']:.3f}, "
                f"{row['high']:.3f}] is {width:.3f} wide (more than {TOO_WIDE:g})")
    return None


def plot_curve(result: dict, path) -> None:
    """Draw :func:`plan_study`'s curve with its interval and the target to a PNG at ``path``."""
    import matplotlib.pyplot as plt

    figure = curve_figure(result)
    figure.savefig(path, dpi=100)
    plt.close(figure)


def curve_figure(result: dict):
    """The matplotlib figure of :func:`plot_curve` (whole raters per pair on the x axis)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

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
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.set_xlabel("raters per pair (k)")
    axes.set_ylabel("Spearman between two groups of k raters")
    axes.set_title(f"pilot: {result['pilot']['pairs']} pairs, "
                   f"{result['pilot']['ratings_per_pair']:.1f} ratings per pair")
    axes.legend(loc="lower right")
    axes.grid(alpha=0.3)
    figure.tight_layout()
    return figure


def summary_lines(result: dict) -> list[str]:
    """``lexgold plan``'s text output."""
    def show(value):
        return "n/a" if value is None else f"{value:.3f}"

    low_end, high_end = result["pilot"]["scale"]
    span = high_end - low_end
    column = f"pair-mean 95% CI width ({low_end:g}-{high_end:g} scale)"
    lines = [f"raters  reliability  [{result['level']:.0%} interval]  {column}  IAA-2"]
    wider = False
    for row, extra in zip(result["curve"], result["details"]):
        width = show(extra["ci_width"])
        if extra["ci_width"] is not None and extra["ci_width"] > span:
            width, wider = width + "*", True
        lines.append(f"{row['raters']:>6}  {show(row['reliability']):>11}  [{show(row['low'])}, "
                     f"{show(row['high'])}]  {width:>{len(column)}}  {show(extra['iaa2'])}")
    if wider:
        lines.append(f"* wider than the whole {low_end:g}-{high_end:g} scale: k ratings give a "
                     "t interval on k - 1 degrees of freedom (t = 12.71 for k = 2)")
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
    if result["too_small"]:
        lines.append(f"too small to tell: {result['too_small']}; pilot more pairs or raters "
                     "before trusting the raters needed")
    return lines
