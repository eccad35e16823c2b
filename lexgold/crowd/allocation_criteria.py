"""Which pairs more ratings should go to: the criteria of adaptive allocation, pure functions.

A pair rated ``n_i`` times has a mean ``m_i`` and a sample variance; with two or three ratings
that variance is too noisy to act on, so every criterion uses it shrunk towards the pooled
within-pair variance (:func:`shrunk_variances`, empirical Bayes with the weight of
:data:`PRIOR_RATINGS` ratings). ``extra`` more ratings of pair ``i`` are worth:

``misordering``
    ``u_i^2 extra / (n_i + extra)``, ``u_i`` the expected number of pairs the pair is ordered
    against wrongly (:func:`rank_uncertainty`): the loss of Spearman's correlation alone
    (:func:`misordering_gain`). Measured on real logs (``lexgold replay``, docs/process.md) it
    buys a little Spearman at the price of absolute error: it starves pairs at the ends of the
    scale, where a 0-6 crowd piles its scores and where a pair's rank moves past few others.
``error``
    ``v_i extra / (n_i (n_i + extra))``: the expected fall of the squared error of the pair's
    mean, ``v_i / n_i - v_i / (n_i + extra)`` (:func:`error_gain`). Given greedily it approaches
    ``n_i`` proportional to the pair's SD, Neyman allocation for the total squared error
    (Neyman 1934, "On the two different aspects of the representative method", JRSS 97(4),
    section 5; Cochran 1977, Sampling Techniques, section 5.5).
``halfwidth``
    the pair's standard error at the upper 95 % bound of its variance,
    ``sqrt(upper_v_i / n_i)`` (:func:`upper_variances`; not a gain but a priority): top-ups to
    the pairs whose CI half-width may still be widest, so that the widest half-widths fall
    first (per-pair stopping at a half-width, spent in rounds).
``rank+error``
    each of the two above divided by its sum over the pairs, then added
    (:func:`rank_error_gain`): the fall of the rank loss and of the squared error, each as a
    share of what more ratings can still gain, valued equally.

:data:`SITE_RULE` names the criterion the rating site uses
(:func:`lexgold.live.allocator.least_certain`); it is the one that did best on the real logs
replayed in docs/process.md ("What lexgold saves, measured on real logs").
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd
from scipy.special import chdtri, ndtr, ndtri

from lexgold.stats import PRIOR_RATINGS, shrunk_variances

#: the criterion of the site's adaptive allocation (see the module docstring)
SITE_RULE = "error"


def upper_variances(n, var, prior: float = PRIOR_RATINGS, level: float = 0.95) -> np.ndarray:
    """Each pair's rating variance at the upper ``level`` bound of its posterior: with the
    pooled variance as a scaled-inverse-chi-square prior worth ``prior`` degrees of freedom
    (the shrinkage of :func:`shrunk_variances`), the posterior of a pair's variance after
    ``n - 1`` more is scaled-inverse-chi-square with ``d = n - 1 + prior`` degrees of freedom
    and scale ``v`` (the shrunk variance), so its upper bound is ``v d / chi2_{1 - level}(d)``
    (Gelman et al. 2013, Bayesian Data Analysis, 3rd ed., section 2.6). A pair whose first
    ratings happen to agree keeps a wide bound until more ratings confirm it.

    >>> round(float(upper_variances([3], [1.0])[0] * 0.7107 / 4), 3)
    1.0
    """
    n = np.asarray(n, float)
    d = np.clip(n - 1, 0, None) + prior
    counts = n.astype(np.intp) if len(n) and n.min() >= 0 and n.max() < 2 ** 20 else None
    if counts is not None and np.array_equal(counts, n):    # counts of ratings: a table
        quantiles = chdtri(np.clip(np.arange(counts.max() + 1.0) - 1, 0, None) + prior,
                           level)[counts]
    else:
        distinct = np.unique(d)             # few: one per count of ratings
        quantiles = chdtri(distinct, level)[np.searchsorted(distinct, d)]
    return shrunk_variances(n, var, prior) * d / quantiles


def standard_errors(table: pd.DataFrame, prior: float = PRIOR_RATINGS) -> pd.Series:
    """Standard error of each pair's mean: ``sqrt(v / n)`` with ``v`` the pair's
    :func:`shrunk_variances` (``table``: ``n``, ``var`` per pair)."""
    v = shrunk_variances(table["n"], table["var"], prior)
    return pd.Series(np.sqrt(v / table["n"].astype(float)), index=table.index)


#: relative accuracy of :func:`misorderings` against the full sum over every pair
MISORDERING_TOLERANCE = 1e-13


def misorderings(means, se2, block: int = 64) -> np.ndarray:
    """``sum_{j != i} Phi(-|m_i - m_j| / sqrt(se2_i + se2_j))`` per ``i`` (equal means with a
    zero scale count 0.5), within :data:`MISORDERING_TOLERANCE` of the full sum, relatively.

    Pairs of the same mean and standard error (few ratings on an integer scale take few
    distinct values) are counted together (found by hashing, not sorting every pair); the
    distinct rows, sorted by mean, are summed over the pairs ``i < j`` (a term counts for
    both) in strips of ``block`` rows that reuse two buffers. A strip stops at the band's edge: beyond a gap ``m_j - m_i`` of
    ``z sqrt(max se2_i + max se2)`` every term is below ``Phi(-z)``, ``z`` the normal quantile
    with ``N Phi(-z) = tolerance / 2`` (``N`` the pairs), so what is left out of a row is below
    ``tolerance / 2``: relatively below the tolerance where the row's sum is 1/2 or more (any
    pair tied with another or near one); the rare rows below that, if anything was left out,
    are summed again over every pair."""
    means, se2 = np.asarray(means, float), np.asarray(se2, float)
    if len(means) == 0:
        return np.empty(0)
    key = np.empty(len(means), complex)     # (mean, se2) as one hashable number
    key.real, key.imag = means, se2
    code, distinct = pd.factorize(key, use_na_sentinel=False)
    order = np.lexsort((distinct.imag, distinct.real))
    m, s = distinct.real[order], distinct.imag[order]
    counts = np.bincount(code, minlength=len(distinct))[order].astype(float)
    z = -ndtri(MISORDERING_TOLERANCE / 2 / len(means))
    u, skipped = _misordering_strips(m, s, counts, z, block)
    if skipped:
        short = np.flatnonzero(u < 0.5)
        if len(short):
            u[short] = _misordering_rows(m, s, counts, short, block)
    by_code = np.empty(len(distinct))
    by_code[order] = u
    return by_code[code]


def _misordering_strips(m, s, counts, z, block):
    """The banded sum of :func:`misorderings` over distinct rows sorted by mean; whether
    anything was left out."""
    size = len(m)
    u = 0.5 * (counts - 1)                  # the pair's equals count 1/2, itself not
    gap_buffer, scale_buffer = np.empty(block * size), np.empty(block * size)
    below = _lower_triangle(block)
    widest = float(s.max())
    skipped = False
    with np.errstate(divide="ignore", invalid="ignore"):
        for a in range(0, size, block):
            b = min(a + block, size)
            reach = m[b - 1] + z * np.sqrt(float(s[a:b].max()) + widest)
            q = int(np.searchsorted(m, reach, side="right"))
            skipped = skipped or q < size   # every term beyond q below Phi(-z)
            shape = (b - a, q - a)
            x = gap_buffer[:shape[0] * shape[1]].reshape(shape)
            scale = scale_buffer[:shape[0] * shape[1]].reshape(shape)
            np.subtract(m[a:b, None], m[None, a:q], out=x)        # <= 0: sorted by mean
            np.add(s[None, a:q], s[a:b, None], out=scale)
            np.sqrt(scale, out=scale)
            np.divide(x, scale, out=x)      # 0 / 0 only on the diagonal, dropped below
            ndtr(x, out=x)
            np.copyto(x[:, :b - a], 0.0, where=below[:b - a, :b - a])
            u[a:b] += x @ counts[a:q]
            u[a:q] += counts[a:b] @ x
    return u, skipped


@functools.lru_cache(maxsize=8)
def _lower_triangle(block: int) -> np.ndarray:
    """The diagonal and the cells below it of a ``block`` square (read-only, shared)."""
    below = np.tri(block, dtype=bool)
    below.setflags(write=False)
    return below


def _misordering_rows(m, s, counts, rows, block):
    """:func:`misorderings`' sum for the distinct ``rows``, over every pair."""
    out = 0.5 * (counts[rows] - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        for a in range(0, len(rows), block):
            chosen = rows[a:a + block]
            gap = np.abs(m[None, :] - m[chosen, None])
            scale = np.sqrt(s[None, :] + s[chosen, None])
            p = ndtr(-np.where(scale > 0, gap / scale, np.where(gap > 0, np.inf, 0.0)))
            p[np.arange(len(chosen)), chosen] = 0.0
            out[a:a + block] += p @ counts
    return out


def rank_uncertainty(table: pd.DataFrame, prior: float = PRIOR_RATINGS,
                     block: int = 64) -> pd.Series:
    """How uncertain each pair's place in the ranking is: the expected number of other pairs
    it is ordered against wrongly,

    ``u_i = sum_{j != i} Phi(-|m_i - m_j| / sqrt(s_i^2 + s_j^2))``,

    with ``m`` the pair means, ``s`` their standard errors (:func:`standard_errors`) and
    ``Phi`` the normal distribution function: the normal-approximation probability that the
    true scores of ``i`` and ``j`` are in the other order than their means (the rank
    uncertainty of an empirical ranking, Hall and Miller 2009, "Using the bootstrap to quantify
    the authority of an empirical ranking", Ann. Statist. 37(6B), section 2). Two means equal
    (ties are common with few raters on an integer scale) count 0.5 each.

    >>> t = pd.DataFrame({"n": [4, 4, 4], "mean": [1.0, 1.0, 5.0], "var": [1.0, 1.0, 1.0]})
    >>> rank_uncertainty(t).round(3).tolist()
    [0.5, 0.5, 0.0]
    """
    se2 = standard_errors(table, prior).to_numpy(float) ** 2
    return pd.Series(misorderings(table["mean"].to_numpy(float), se2, block),
                     index=table.index, name="uncertainty")


def uncertainties(n, means, var, prior: float = PRIOR_RATINGS) -> np.ndarray:
    """:func:`rank_uncertainty` from arrays of ratings ``n``, ``means`` and sample variances
    ``var``: the ``u`` of the rank rules' :func:`gains`."""
    n = np.asarray(n, float)
    return misorderings(means, shrunk_variances(n, var, prior) / n)


def gains(rule: str, n, means, var, extra: int, prior: float = PRIOR_RATINGS,
          uncertainty: np.ndarray | None = None) -> np.ndarray:
    """The worth of ``extra`` more ratings of each pair under ``rule`` (:data:`RULES`), from
    arrays of ratings ``n``, ``means`` and sample variances ``var`` (NaN for one rating);
    ``uncertainty``: the pairs' :func:`uncertainties` when already known (the rank rules
    start from the same first round)."""
    n = np.asarray(n, float)
    if rule == "halfwidth":
        return np.sqrt(upper_variances(n, var, prior) / n)
    v = shrunk_variances(n, var, prior)
    if rule == "error":
        return v * extra / (n * (n + extra))
    u = misorderings(means, v / n) if uncertainty is None else uncertainty
    rank = u ** 2 * extra / (n + extra)
    if rule == "misordering":
        return rank
    if rule == "rank+error":
        error = v * extra / (n * (n + extra))
        return _share(rank) + _share(error)
    raise ValueError(f"unknown allocation rule {rule!r}; expected one of {', '.join(RULES)}")


#: the criteria of :func:`gains`
RULES = ("misordering", "error", "rank+error", "halfwidth")


def _share(values: np.ndarray) -> np.ndarray:
    total = values.sum()
    return values / total if total > 0 else values


def misordering_gain(table: pd.DataFrame, extra: int, prior: float = PRIOR_RATINGS) -> pd.Series:
    """How much ``extra`` more ratings of each pair are expected to improve the ranking:

    ``g_i = u_i^2 extra / (n_i + extra)``,

    with ``u_i`` the pair's :func:`rank_uncertainty` and ``n_i`` its raters. Spearman's
    correlation loses by the squared rank errors, ``rho = 1 - 6 sum d_i^2 / (N (N^2 - 1))``; a
    pair's error moves it past its close neighbours together, so ``E[d_i^2]`` grows as
    ``u_i^2``, which is ``c_i / n_i``; ``extra`` ratings bring it to ``c_i / (n_i + extra)``, a
    reduction of ``g_i``. A pair tied with another keeps its gain (``u`` counts a tie 1/2).

    >>> t = pd.DataFrame({"n": [4, 4, 4], "mean": [1.0, 1.0, 5.0], "var": [1.0, 1.0, 1.0]})
    >>> misordering_gain(t, 4).round(3).tolist()
    [0.125, 0.125, 0.0]
    """
    return _table_gain("misordering", table, extra, prior)


def error_gain(table: pd.DataFrame, extra: int, prior: float = PRIOR_RATINGS) -> pd.Series:
    """The expected fall of the squared error of each pair's mean with ``extra`` more
    ratings, ``v_i / n_i - v_i / (n_i + extra)``, ``v_i`` its :func:`shrunk_variances`.

    >>> t = pd.DataFrame({"n": [2, 4], "mean": [1.0, 5.0], "var": [1.0, 1.0]})
    >>> error_gain(t, 2).round(4).tolist()
    [0.25, 0.0833]
    """
    return _table_gain("error", table, extra, prior)


def rank_error_gain(table: pd.DataFrame, extra: int, prior: float = PRIOR_RATINGS) -> pd.Series:
    """:func:`misordering_gain` and :func:`error_gain`, each divided by its sum over the
    pairs, added."""
    return _table_gain("rank+error", table, extra, prior)


def site_gain(table: pd.DataFrame, extra: int, prior: float = PRIOR_RATINGS) -> pd.Series:
    """The gain of :data:`SITE_RULE`, the site's criterion."""
    return _table_gain(SITE_RULE, table, extra, prior)


def _table_gain(rule: str, table: pd.DataFrame, extra: int, prior: float) -> pd.Series:
    values = gains(rule, table["n"].to_numpy(float), table["mean"].to_numpy(float),
                   table["var"].to_numpy(float), extra, prior)
    return pd.Series(values, index=table.index, name="gain")
