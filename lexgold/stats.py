"""The shared statistics toolbox: linear rescaling, ranks, Pearson and Spearman, bootstrap
intervals.

One function per statistic that more than one part of lexgold needs; the parts call these
instead of keeping their own copies:

- :func:`rescale` maps values linearly between two intervals (SimLex-999 section 3.6: "transformed
  all scores linearly from the interval [0, 6] to the interval [0, 10]"; HyperLex section 4.5;
  the builders' concreteness fallback; the cross-lingual sets' ``--rescale``).
- :func:`rowwise_pearson` is Pearson's r of many paired samples at once (bootstrap replicates,
  split-half splits).
- :func:`average_ranks`, :func:`pearson` and :func:`spearman` equal SciPy's ``rankdata``
  (method ``average``), ``pearsonr`` and ``spearmanr`` (tests/test_stats_ranks.py checks them
  against SciPy, ties and NaN included) with numpy alone.
- :func:`percentile_interval` is the one percentile bootstrap interval (the central ``level``
  of the defined replicates), whatever drew the replicates: :func:`bootstrap_ci` here, the
  stratified bootstrap over pairs of the agreement figures
  (:func:`lexgold.process.agreement.bootstrap_over_pairs`).
- :func:`bootstrap_ci` is a paired (case-resampling) bootstrap confidence interval: the
  replicates drawn as :func:`scipy.stats.bootstrap` draws them, the percentile interval in
  numpy, BCa through SciPy.
- :func:`trimmed_1sd` is the mean within one SD of the mean, the Rare Words rule (Luong et al.
  2013): ``[process] aggregate = "trimmed_1sd"`` (:mod:`lexgold.process.aggregate`) and the
  import summary's check of rw.txt's published scores (:mod:`lexgold.ratings.importer`).

Pure functions over arrays; randomness comes in through an explicit ``numpy.random.Generator``.
This module imports nothing from the rest of lexgold but :mod:`lexgold.errors`, and SciPy only
for the BCa interval: ``lexgold evaluate`` and ``lexgold agree`` start without loading
``scipy.stats`` (about 0.7 s).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from lexgold.errors import InputError

#: the interval methods of :func:`bootstrap_ci`
BOOTSTRAP_METHODS = ("percentile", "bca")


def rescale(values, source: tuple[float, float], target: tuple[float, float]):
    """Map values linearly from the interval ``source`` onto the interval ``target``.

    Parameters
    ----------
    values : scalar, array-like or pandas.Series
        Values on the ``source`` scale (values outside it are mapped by the same line).
    source, target : (float, float)
        ``(low, high)`` of each interval, ``high > low``.

    Returns
    -------
    Same kind as ``values``
        ``target_low + (values - source_low) * (target_high - target_low) / (source_high -
        source_low)``; a Series keeps its index, a list becomes a float array.

    Notes
    -----
    Both offsets count: USF's 1-7 concreteness onto Brysbaert's 1-5 maps 4 to 3, not to 2.86.

    References
    ----------
    Hill et al. (2015), SimLex-999, section 3.6; Vulic et al. (2017), HyperLex, section 4.5.

    Examples
    --------
    >>> rescale([0, 3, 6], (0, 6), (0, 10)).tolist()
    [0.0, 5.0, 10.0]
    >>> float(rescale(4.0, (1, 7), (1, 5)))
    3.0
    """
    (a, b), (c, d) = (tuple(float(v) for v in source), tuple(float(v) for v in target))
    if not b > a or not d > c:
        raise InputError(f"need increasing intervals, found {tuple(source)} -> {tuple(target)}",
                         field="scale")
    if not hasattr(values, "dtype"):
        values = np.asarray(values, dtype=float)
    return c + (values - a) * (d - c) / (b - a)


def rowwise_pearson(x, y, *, axis: int = -1) -> np.ndarray:
    """Pearson's r of each pair of rows (``axis=-1``) or columns (``axis=0``) of ``x`` and ``y``.

    Parameters
    ----------
    x, y : array-like, same shape
        Paired samples; the correlation runs along ``axis``.
    axis : int
        The axis holding the observations.

    Returns
    -------
    numpy.ndarray
        r in [-1, 1] (1 best) for every sample; NaN where either sample is constant (no
        warning: callers that draw many samples decide what an undefined one means).

    References
    ----------
    Pearson's product-moment r, as :func:`scipy.stats.pearsonr` along an axis.

    Examples
    --------
    >>> rowwise_pearson([[1, 2, 3], [1, 2, 3]], [[2, 4, 7], [3, 2, 1]]).round(4).tolist()
    [0.9934, -1.0]
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    x = x - x.mean(axis=axis, keepdims=True)
    y = y - y.mean(axis=axis, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (x * y).sum(axis=axis) / np.sqrt((x * x).sum(axis=axis) * (y * y).sum(axis=axis))


def average_ranks(values, *, axis: int = -1, omit_nan: bool = False) -> np.ndarray:
    """Ranks 1..n along ``axis``, tied values sharing the mean of their ranks.

    The ``average`` method of :func:`scipy.stats.rankdata` (the ranks of Spearman's rho with
    ties; Kendall & Gibbons 1990, section 3.6), in numpy: a slice holding a NaN is all NaN,
    as SciPy's default ``nan_policy="propagate"`` gives; with ``omit_nan``, as
    ``nan_policy="omit"``: NaN cells are left out of the ranking and get NaN. Slices without
    ties (continuous scores) skip the tie pass.

    Examples
    --------
    >>> average_ranks([10, 20, 20, 5]).tolist()
    [2.0, 3.5, 3.5, 1.0]
    >>> average_ranks([[1, 1, 2], [3, float("nan"), 1]]).tolist()
    [[1.5, 1.5, 3.0], [nan, nan, nan]]
    >>> average_ranks([3, float("nan"), 1], omit_nan=True).tolist()
    [2.0, nan, 1.0]
    """
    values = np.asarray(values, dtype=float)
    if values.ndim == 1 and len(values) and not omit_nan:
        return _sample_ranks(values)
    values = np.moveaxis(values, axis, -1)
    shape = values.shape
    flat = values.reshape(-1, shape[-1])
    order = np.argsort(flat, axis=-1)                     # NaN last; ties: any order
    ordered = np.take_along_axis(flat, order, axis=-1)
    ranked = np.broadcast_to(np.arange(1.0, shape[-1] + 1), flat.shape)
    first = np.ones(flat.shape, dtype=bool)               # where a run of equal values begins
    first[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    tied = np.flatnonzero(~first.all(axis=-1))
    if len(tied):                        # a tie's ranks: from its first to its last place
        ranked = ranked.copy()
        first = first[tied]
        last = np.ones(first.shape, dtype=bool)
        last[:, :-1] = first[:, 1:]
        place = ranked[tied]
        low = np.maximum.accumulate(np.where(first, place, 0.0), axis=-1)
        high = np.minimum.accumulate(np.where(last, place, np.inf)[:, ::-1], axis=-1)[:, ::-1]
        ranked[tied] = (low + high) / 2
    ranks = np.empty(flat.shape)
    np.put_along_axis(ranks, order, ranked, axis=-1)
    missing = np.isnan(flat)
    if omit_nan:
        ranks[missing] = np.nan
    else:                                                 # SciPy propagates: the slice is NaN
        ranks[missing.any(axis=-1)] = np.nan
    return np.moveaxis(ranks.reshape(shape), -1, axis)


def _sample_ranks(values: np.ndarray) -> np.ndarray:
    """:func:`average_ranks` of one sample (1-D, not empty): a tie's places found from where
    each run of equal values starts, each run given ``(first + last) / 2``."""
    size = len(values)
    order = np.argsort(values)                            # NaN last
    ordered = values[order]
    ranks = np.empty(size)
    if np.isnan(ordered[-1]):
        ranks.fill(np.nan)
        return ranks
    first = np.empty(size, dtype=bool)
    first[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    starts = np.flatnonzero(first)
    if len(starts) == size:
        ranks[order] = np.arange(1.0, size + 1)
        return ranks
    ends = np.append(starts[1:], size)                    # a run's last place, from 1
    ranks[order] = np.repeat((starts + 1 + ends) / 2, ends - starts)
    return ranks


def pearson(x, y) -> float:
    """Pearson's r of two 1-D samples, computed as :func:`scipy.stats.pearsonr` computes it.

    Centred samples scaled by their largest deviation before their lengths are taken, the
    product clipped to [-1, 1] (exactly -1 or 1 for two points); NaN when either sample is constant (no warning: callers
    decide) or holds a NaN.

    Examples
    --------
    >>> round(pearson([1, 2, 3, 4], [2, 4, 5, 9]), 6)
    0.964764
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(x) != len(y) or len(x) < 2:
        raise ValueError(f"need two samples of the same length >= 2, found {len(x)} and {len(y)}")
    if (x == x[0]).all() or (y == y[0]).all():
        return float("nan")
    xm, ym = x - x.mean(), y - y.mean()
    with np.errstate(invalid="ignore", divide="ignore"):
        x_max, y_max = np.abs(xm).max(), np.abs(ym).max()
        x_norm = x_max * np.linalg.norm(xm / x_max, axis=-1)
        y_norm = y_max * np.linalg.norm(ym / y_max, axis=-1)
        r = np.vecdot(xm / x_norm, ym / y_norm)
    return float(np.round(r) if len(x) == 2 else np.clip(r, -1.0, 1.0))   # 2 points: +-1


def spearman(x, y) -> float:
    """Spearman's rho of two 1-D samples: Pearson's r of their average ranks (ties share the
    mean rank), as :func:`scipy.stats.spearmanr` computes it (``numpy.corrcoef`` of the
    ranks); NaN when either sample is constant or holds a NaN.

    Examples
    --------
    >>> spearman([1, 2, 3, 4, 5], [5, 6, 7, 8, 7])
    0.8207826816681233
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(x) != len(y) or len(x) < 2:
        raise ValueError(f"need two samples of the same length >= 2, found {len(x)} and {len(y)}")
    if (x == x[0]).all() or (y == y[0]).all() or np.isnan(x).any() or np.isnan(y).any():
        return float("nan")
    return float(np.corrcoef(average_ranks(x), average_ranks(y))[1, 0])


def check_bootstrap(rng, n_boot: int, level: float, method: str = "percentile") -> None:
    """The one check of bootstrap arguments: a Generator, ``n_boot >= 1``, ``0 < level < 1``,
    a known ``method``; each failure is an :class:`~lexgold.errors.InputError` naming the field."""
    if not isinstance(rng, np.random.Generator):
        raise InputError(f"expected a numpy.random.Generator, found {type(rng).__name__}",
                         field="rng")
    if isinstance(n_boot, bool) or not isinstance(n_boot, (int, np.integer)) or n_boot < 1:
        raise InputError(f"need an integer n_boot >= 1, found {n_boot!r}", field="n_boot")
    if not 0 < level < 1:
        raise InputError(f"need 0 < level < 1, found {level!r}", field="level")
    if method not in BOOTSTRAP_METHODS:
        raise InputError(f"unknown method {method!r}; allowed: {', '.join(BOOTSTRAP_METHODS)}",
                         field="method")


def percentile_interval(replicates, level: float) -> np.ndarray:
    """The percentile bootstrap interval: the central ``level`` of the defined replicates.

    Parameters
    ----------
    replicates : array-like, shape (..., n_boot)
        The statistic of every bootstrap replicate (last axis); NaN for an undefined one.
    level : float
        Coverage in (0, 1).

    Returns
    -------
    numpy.ndarray, shape (..., 2)
        ``[low, high]``: the ``(1 - level) / 2`` and ``1 - (1 - level) / 2`` quantiles (linear
        interpolation, :func:`numpy.quantile`) of the defined replicates; NaN where fewer than
        two are defined (one value is not an interval).

    References
    ----------
    Efron & Tibshirani (1993), An Introduction to the Bootstrap, section 13.3.

    Examples
    --------
    >>> percentile_interval(np.arange(5.0), 0.5).tolist()
    [1.0, 3.0]
    >>> percentile_interval([[0.0, 1.0, np.nan], [np.nan, 2.0, np.nan]], 0.5).tolist()
    [[0.25, 0.75], [nan, nan]]
    """
    values = np.asarray(replicates, dtype=float)
    tail = (1 - level) / 2
    out = np.full(values.shape[:-1] + (2,), np.nan)
    for index in np.ndindex(values.shape[:-1]):
        row = values[index]
        row = row[~np.isnan(row)]
        if len(row) >= 2:
            out[index] = np.quantile(row, [tail, 1 - tail])
    return out


def bootstrap_ci(samples: Sequence, statistic: Callable[..., np.ndarray], *,
                 rng: np.random.Generator, n_boot: int = 1000, level: float = 0.95,
                 method: str = "percentile") -> np.ndarray:
    """Paired bootstrap confidence interval of ``statistic(*samples)``.

    The observations (the i-th value of every sample together) are drawn with replacement
    ``n_boot`` times: replicate k uses the rows ``rng.integers(0, n, size=(n_boot, n))[k]``,
    the draws of :func:`scipy.stats.bootstrap` with ``paired=True`` (which computes BCa).

    Parameters
    ----------
    samples : sequence of 1-D arrays, same length n
        Paired samples (e.g. gold and model scores of the same pairs).
    statistic : callable
        ``statistic(*resampled, axis=-1)`` on arrays of shape ``(replicates, n)`` returns one
        value per replicate (shape ``(replicates,)``) or several statistics at once (shape
        ``(k, replicates)``); NaN for an undefined replicate.
    rng : numpy.random.Generator
        The only source of randomness.
    n_boot : int
        Number of replicates (>= 1).
    level : float
        Coverage in (0, 1).
    method : {"percentile", "bca"}
        ``percentile``: :func:`percentile_interval` of the replicates. ``bca``:
        bias-corrected and accelerated (Efron 1987), scipy's; NaN when a replicate or the
        jackknife is undefined.

    Returns
    -------
    numpy.ndarray
        ``[low, high]``, or shape ``(k, 2)`` for k statistics; NaN when fewer than two
        replicates are defined.

    References
    ----------
    Efron & Tibshirani (1993), An Introduction to the Bootstrap, sections 13.3 (percentile) and
    14.3 (BCa).

    Examples
    --------
    >>> x = np.arange(10.0)
    >>> bootstrap_ci([x, 2 * x], rowwise_pearson, rng=np.random.default_rng(0), n_boot=50).tolist()
    [1.0, 1.0]
    """
    check_bootstrap(rng, n_boot, level, method)
    samples = [np.asarray(s, dtype=float) for s in samples]
    if method == "bca":
        return _bca(samples, statistic, rng=rng, n_boot=n_boot, level=level)
    rows = rng.integers(0, len(samples[0]), size=(n_boot, len(samples[0])))
    with np.errstate(invalid="ignore", divide="ignore"):
        distribution = np.asarray(statistic(*(s[rows] for s in samples), axis=-1), dtype=float)
    return percentile_interval(distribution, level)


def _bca(samples, statistic, *, rng, n_boot: int, level: float) -> np.ndarray:
    """The BCa interval of :func:`scipy.stats.bootstrap` (its replicates are those of the
    percentile interval: the same draws from ``rng``)."""
    from scipy import stats     # here: only BCa needs scipy.stats (0.7 s to import)

    with np.errstate(invalid="ignore", divide="ignore"):
        result = stats.bootstrap(samples, statistic, n_resamples=n_boot, paired=True,
                                 vectorized=True, confidence_level=level, method="BCa",
                                 rng=rng)
    low, high = result.confidence_interval
    return np.stack([np.asarray(low, dtype=float), np.asarray(high, dtype=float)], axis=-1)


#: slack for a rating exactly one SD from the mean (an integer scale has many: 2.5 from 4.5
#: when the SD is 2.5), against the rounding of the SD's square root
BOUND_SLACK = 1e-9


def least_squares_line(x, y) -> tuple[float, float]:
    """``(slope, intercept)`` of the least-squares line ``y = intercept + slope x``:
    ``slope = sum(dx dy) / sum(dx^2)``, ``intercept = mean(y) - slope mean(x)``; a constant
    ``x`` (or a single point) gives the flat line through ``mean(y)``. How every machine rater's
    scores are mapped to the human scale (docs/machine.md, "its calibration").

    Examples
    --------
    >>> least_squares_line([0, 5, 10], [0.0, 3.0, 6.0])
    (0.6, 0.0)
    >>> least_squares_line([2, 2, 2], [1.0, 2.0, 6.0])
    (0.0, 3.0)
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    dx = x - x.mean()
    spread = float(np.dot(dx, dx))
    if spread == 0:
        return 0.0, float(y.mean())
    slope = float(np.dot(dx, y - y.mean()) / spread)
    return slope, float(y.mean() - slope * x.mean())


def trimmed_1sd(values) -> float:
    """The mean of ``values`` within one population SD (ddof = 0) of their mean, the bound
    included (Luong et al. 2013; rw.txt's published scores).

    Examples
    --------
    >>> trimmed_1sd([7, 7, 6, 1, 4, 6, 6, 7, 2, 4])       # rw.txt: squishing / squirt, 5.88
    5.875
    >>> trimmed_1sd([3, 3, 3])
    3.0
    """
    x = np.asarray(values, dtype=float)
    keep = np.abs(x - x.mean()) <= x.std() + BOUND_SLACK
    return float(x[keep].mean())


#: prior weight (in ratings) of the pooled variance in a pair's variance (shrinkage: with 2-3
#: raters a pair's own variance is too noisy to act on)
PRIOR_RATINGS = 2.0


def shrunk_variances(n, var, prior: float = PRIOR_RATINGS) -> np.ndarray:
    """Each pair's rating variance shrunk towards the pooled within-pair variance ``v0``:
    ``v = ((n - 1) var + prior v0) / (n - 1 + prior)`` (a pair with one rating gets ``v0``;
    ``v0`` is 1 when no pair has two ratings; ``prior = 0`` leaves the variances as they are):
    the site's allocation criteria (lexgold.crowd.allocation_criteria) and a machine prior's
    noise (lexgold.machine.prior) both use it.

    >>> shrunk_variances([3, 3], [0.0, 2.0]).tolist()
    [0.5, 1.5]
    """
    n = np.asarray(n, float)
    own = np.nan_to_num(np.asarray(var, float))
    df = np.clip(n - 1, 0, None)
    pooled = float((own * df).sum() / df.sum()) if df.sum() > 0 else 1.0
    return (own * df + prior * pooled) / (df + prior)
