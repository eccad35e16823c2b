"""The shared statistics toolbox: linear rescaling, row-wise Pearson, bootstrap intervals,
split-half reliability.

One function per statistic that more than one part of lexgold needs; the parts call these
instead of keeping their own copies:

- :func:`rescale` maps values linearly between two intervals (SimLex-999 section 3.6: "transformed
  all scores linearly from the interval [0, 6] to the interval [0, 10]"; HyperLex section 4.5;
  the builders' concreteness fallback; the cross-lingual sets' ``--rescale``).
- :func:`rowwise_pearson` is Pearson's r of many paired samples at once (bootstrap replicates,
  split-half splits).
- :func:`percentile_interval` is the one percentile bootstrap interval (the central ``level``
  of the defined replicates), whatever drew the replicates: :func:`bootstrap_ci` here, the
  stratified bootstrap over pairs of the agreement figures
  (:func:`lexgold.process.agreement.bootstrap_over_pairs`).
- :func:`bootstrap_ci` is a paired (case-resampling) bootstrap confidence interval built on
  :func:`scipy.stats.bootstrap` with ``paired=True``, percentile or BCa.

Pure functions over arrays; randomness comes in through an explicit ``numpy.random.Generator``.
This module imports nothing from the rest of lexgold but :mod:`lexgold.errors`, and SciPy only
inside :func:`bootstrap_ci` (``lexgold agree`` must start without loading ``scipy.stats``).
"""

from __future__ import annotations

import warnings
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
    ``n_boot`` times by :func:`scipy.stats.bootstrap` with ``paired=True``: replicate k uses
    the rows ``rng.integers(0, n, size=(n_boot, n))[k]``.

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
    from scipy import stats     # here: importing lexgold.stats must not load scipy.stats

    check_bootstrap(rng, n_boot, level, method)
    samples = [np.asarray(s, dtype=float) for s in samples]
    scipy_method = "BCa" if method == "bca" else "percentile"
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        if method == "percentile":        # scipy's own interval is replaced below
            warnings.simplefilter("ignore", stats.DegenerateDataWarning)
        result = stats.bootstrap(samples, statistic, n_resamples=n_boot, paired=True,
                                 vectorized=True, confidence_level=level, method=scipy_method,
                                 rng=rng)
    if method == "bca":
        low, high = result.confidence_interval
        return np.stack([np.asarray(low, dtype=float), np.asarray(high, dtype=float)], axis=-1)
    return percentile_interval(result.bootstrap_distribution, level)
