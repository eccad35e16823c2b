"""Replay a real rating log: what an allocation or stopping policy saves, measured on real raters.

Each random split draws, for every pair, ``pool`` of its real ratings without replacement into
a budget pool, in a random order (the order they "arrive"); the rest of the pair's ratings are
its held-out reference (:func:`split_log`). A policy spends ratings out of the pool, taking each
pair's ratings in arrival order (:data:`POLICIES`):

``uniform``       ``k`` ratings of every pair (the uniform design's curve, ``k = 1 .. pool``);
``<rule>``        the site's adaptive allocation with criterion ``rule``
                  (:mod:`lexgold.crowd.allocation_criteria`): a first round of
                  ``first_round`` ratings of every pair, then top-up rounds of ``step`` ratings for the share
                  ``round_share`` of the pairs with the highest gain, until ``k`` ratings per
                  pair are spent on average;
``stopping``      per-pair stopping: after the first round a pair gets one more rating at a
                  time while the 95 % CI half-width of its mean, ``1.96 sqrt(v / n)`` with ``v``
                  its variance at the upper 95 % bound of its posterior (the first round's
                  pooled variance as prior: empirical Bayes), is above a threshold: the
                  smallest threshold that spends at most ``k`` ratings per pair on average;
``oracle``        the ``error`` rule told each pair's variance over all its ratings in the log
                  (a bound, not a policy a site could run).

Accuracy against the held-out reference (:func:`accuracy`): Spearman's correlation between the
pair estimates and the reference means, the mean absolute error between them, and the 95th
percentile of the pairs' 95 % CI half-widths ``1.96 S_i / sqrt(n_i)``, ``S_i`` the SD of all
the pair's ratings in the log (the half-width its estimate has at ``n_i`` ratings, not a sample
SD a stopping rule could have been lucky with).

The saving of a policy at equal accuracy (:func:`saving`): the ratings per pair uniform needs
for the same figure, ``k_u`` (uniform's curve of the same split, linear between integer ``k``),
against what the policy spent: ``1 - spent / k_u``, per split: ``1 - B / k`` with ``B`` the
ratings per pair a policy spends and ``k`` the ratings per pair uniform spends for the same
figure (issue 45's definition; ``machine-prior`` reads it the other way round, below). The
figure quoted is the median over the splits, with a bootstrap interval over the splits
(:func:`summarise`); the spread over the splits (what one study may see) is kept beside it.

A machine rater's policies (``replay(..., machine=...)``, :data:`MACHINE_POLICIES`):

``machine-prior``
    ``b`` human ratings of every pair (``b`` on a grid of tenths from 1.1 to the pool; a
    fractional ``b`` gives ``ceil(b)`` ratings to a share ``b - floor(b)`` of the pairs, spread
    over the log), the released score the empirical-Bayes posterior of
    :func:`lexgold.machine.prior.prior_scores`. Its saving at ``k`` is ``1 - B / k``, ``B`` the
    ratings per pair at which its curve reaches uniform's figure at ``k`` (linear between grid
    points; at least 1.1, the grid's start, so a curve already past the figure there gives a
    lower bound of the saving). Half-widths are the posterior's (``sqrt(w_i s_i)`` with the
    pair's SD over the log).
``machine-allocate``
    the site's rounds (a first round, then top-ups of ``step`` ratings to a share of the pairs)
    given by :func:`lexgold.machine.allocate.machine_gain`; a pair whose gain is 0 stops, so the
    policy may spend less than ``k``. Released scores are human means; the saving is the
    replay's ``1 - spent / k_u``.
``machine-disagreement``
    the same rounds given to the pairs farthest from the calibrated machine in standard errors
    (:func:`lexgold.machine.allocate.disagreement`); a pair stops when the machine lies within
    its 95 % CI.
``machine-allocate+prior``
    ``machine-allocate``'s ratings, released as ``machine-prior``'s posterior.

Pairs the machine does not cover get ``k`` ratings each (uniform) in the allocation policies
and are shrunk toward their grand mean in the prior (:func:`lexgold.machine.prior.posterior`).

``circularity`` (:func:`machine_spearman`): the machine's Spearman correlation with the gold the
policy builds, over the pairs it covers, minus its Spearman with the uniform human-only gold of
the same Spearman accuracy against the held-out reference (uniform's curve read at the
policy's equivalent ``k``, linear between integer ``k``, held at the ends).

The estimator of a pair's score is pluggable (:data:`ESTIMATORS`; the mean by default, as the
papers aggregate).
"""

from __future__ import annotations

import multiprocessing
import os
from collections import deque
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial

import numpy as np
import pandas as pd
from scipy.special import chdtri

from lexgold.crowd.allocation_criteria import (PRIOR_RATINGS, RULES, gains, shrunk_variances,
                                               uncertainties)
from lexgold.errors import InputError
from lexgold.machine.allocate import disagreement, machine_gain
from lexgold.machine.prior import prior_scores
from lexgold.machine.worth import padded_rows
from lexgold.stats import average_ranks

#: the site's defaults (lexgold.study.config: first_round_raters, topup_raters)
FIRST_ROUND = 3
STEP = 2
#: share of the pairs topped up per round
ROUND_SHARE = 0.1
Z95 = 1.959963984540054
#: most cells of a log's matrix (pairs x most ratings of a pair): a split draws a number for
#: every cell, the padding's too, so a split's time stays bounded
MAX_CELLS = 20_000_000


@dataclass
class LogMatrix:
    """A rating log as a matrix: one row per pair, its ratings left-aligned, NaN after. Held
    without the padding (each pair's ratings one pair after another: memory grows with the
    ratings, not with pairs x the most ratings of a pair, 80 MB of ratings and 80 MB of rater
    codes at 10,000 raters where the consistency pairs have 10,000 ratings each); the rows are
    made a block of pairs at a time (:meth:`rows`), the whole matrix only when asked for
    (:attr:`ratings`, :attr:`raters`)."""
    pairs: pd.DataFrame               # word1, word2
    values: np.ndarray                # the ratings, pair by pair (float)
    codes: np.ndarray | None          # their integer rater codes; None: anonymous
    starts: np.ndarray                # pair i's ratings: values[starts[i]:starts[i + 1]]
    width: int                        # the most ratings of a pair
    dropped: int = 0                  # pairs with too few ratings for the pool and a reference

    @property
    def counts(self) -> np.ndarray:
        """The ratings of each pair."""
        return np.diff(self.starts)

    def rows(self, first: int, last: int):
        """``(ratings, raters)`` of pairs ``first .. last - 1``: pairs x :attr:`width`, the
        ratings NaN-padded, the rater codes -1-padded (None: anonymous)."""
        pairs = np.arange(first, min(last, len(self.pairs)))
        ratings = padded_rows(self.values, self.starts, pairs, self.width)
        raters = (None if self.codes is None
                  else padded_rows(self.codes, self.starts, pairs, self.width, -1))
        return ratings, raters

    @property
    def ratings(self) -> np.ndarray:
        """The whole matrix: pairs x most ratings, float, NaN padded."""
        return self.rows(0, len(self.pairs))[0]

    @property
    def raters(self) -> np.ndarray | None:
        """The whole matrix's integer rater codes (-1: none); None: anonymous."""
        return self.rows(0, len(self.pairs))[1]

    def sds(self, rows: int = 64) -> np.ndarray:
        """Each pair's SD (``ddof=1``) as ``np.nanstd`` of its row gives it, a block at a time."""
        out = np.empty(len(self.pairs))
        for first in range(0, len(out), rows):
            out[first:first + rows] = np.nanstd(self.rows(first, first + rows)[0], axis=1,
                                                ddof=1)
        return out


def log_matrix(ratings: pd.DataFrame, pool: int) -> LogMatrix:
    """The long-format ``ratings`` (``rater_id, word1, word2, rating``; checkpoint rows
    dropped; a rater's repeated answers to a pair averaged) as a :class:`LogMatrix` of the
    pairs with at least ``pool + 1`` ratings (the pool and a held-out reference). Rater identity
    is kept unless any ``rater_id`` starts with ``?`` (ratings without rater identity)."""
    frame = ratings
    if "kind" in frame.columns:
        frame = frame[frame["kind"].astype(str) != "checkpoint"]
    anonymous = frame["rater_id"].astype(str).str.startswith("?").any()
    frame = (frame.groupby(["word1", "word2", "rater_id"], sort=False, observed=True)["rating"]
             .mean().reset_index())
    frame["n"] = frame.groupby(["word1", "word2"], sort=False, observed=True)["rating"] \
        .transform("size")
    pairs_all = frame[["word1", "word2"]].drop_duplicates()
    frame = frame[frame["n"] > pool]
    keys = frame[["word1", "word2"]].drop_duplicates().reset_index(drop=True)
    if len(keys) < 3:
        raise InputError(f"{len(keys)} pairs have more than --pool {pool} ratings; a replay "
                         f"needs 3 or more (a pool and a held-out reference each)",
                         field="--pool")
    code = pd.MultiIndex.from_frame(keys).get_indexer(
        pd.MultiIndex.from_frame(frame[["word1", "word2"]]))
    column = frame.groupby(code).cumcount().to_numpy()
    width = int(column.max()) + 1
    if len(keys) * width > MAX_CELLS:
        raise InputError(f"a pair has {width} ratings: {len(keys)} pairs x {width} is more than "
                         f"the replay holds ({MAX_CELLS:,} ratings)", field="LOG")
    order = np.lexsort((column, code))             # pair by pair, each in its column order
    codes = None if anonymous else pd.factorize(frame["rater_id"])[0].astype(np.int64)[order]
    starts = np.concatenate([[0], np.cumsum(np.bincount(code, minlength=len(keys)))])
    return LogMatrix(keys, frame["rating"].to_numpy(float)[order], codes, starts, width,
                     dropped=len(pairs_all) - len(keys))


def split_log(log: LogMatrix, pool: int, rng: np.random.Generator):
    """One random split: ``(pool_ratings, pool_raters, reference)``; every pair's ratings
    drawn in random order, the first ``pool`` into the pool (in arrival order), the rest into
    the reference (NaN padded). ``pool_raters`` is None for an anonymous log."""
    keys = rng.random(log.ratings.shape)
    keys[np.isnan(log.ratings)] = np.inf
    order = np.argsort(keys, axis=1)
    drawn = np.take_along_axis(log.ratings, order, axis=1)
    raters = None if log.raters is None else np.take_along_axis(log.raters, order, axis=1)
    return drawn[:, :pool], None if raters is None else raters[:, :pool], drawn[:, pool:]


class PoolDraws:
    """Splits of ``log`` as :func:`split_log` draws them (the same numbers from the generator,
    the same pool in the same order, the same reference means to the last bit), ``rows`` pairs
    at a time (the generator's numbers for a block of pairs, padding included, then the next:
    the numbers of one matrix in its row order; one thread draws). The pool is taken from the
    pairs' own ratings (:class:`LogMatrix` holds no padding; a padded block only where the
    reference must be summed in the order drawn). Where every sum of a pair's ratings is exact in floating point (ratings on a grid
    of 1/1024, as integer and half-point scales are), the reference is never put in order: its
    mean is ``(total - pool's sum) / (ratings - pool)``, and only the pool's ratings are found
    (a partition, then a sort of ``pool``); otherwise the reference is summed in the order
    drawn, as :func:`split_log` leaves it."""

    #: ratings on a grid of 2^-GRID sum exactly (below 2^53 in units of the grid)
    GRID = 10

    def __init__(self, log: LogMatrix, pool: int, rows: int = 64):
        self.log, self.pool, self.rows = log, pool, rows
        self.count = log.counts
        finite = log.values * 2.0 ** self.GRID
        self.exact = bool(np.all(finite == np.round(finite)) and
                          np.abs(finite).max(initial=0) * log.width < 2.0 ** 52)
        # exact sums: in any order the same (used only when exact)
        self.total = np.bincount(np.repeat(np.arange(len(self.count)), self.count),
                                 weights=log.values, minlength=len(self.count))
        self.columns = np.arange(log.width)[None, :]

    def draw(self, rng: np.random.Generator):
        """``(pool_ratings, pool_raters, reference_means)`` of the next split: the keys of a
        block of pairs drawn after the block before (the numbers of one matrix of keys in its
        row order)."""
        pairs = len(self.count)
        ratings = np.empty((pairs, self.pool))
        raters = None if self.log.codes is None else np.empty((pairs, self.pool),
                                                               dtype=self.log.codes.dtype)
        reference = np.empty(pairs)
        for a in range(0, pairs, self.rows):
            rows = slice(a, a + self.rows)
            count = self.count[rows]
            block = rng.random((len(count), self.log.width))
            np.copyto(block, np.inf, where=self.columns >= count[:, None])   # the padding
            if self.exact:
                part = np.argpartition(block, self.pool - 1, axis=1)[:, :self.pool]
                order = np.argsort(np.take_along_axis(block, part, axis=1), axis=1)
                first = np.take_along_axis(part, order, axis=1)
            else:
                order = np.argsort(block, axis=1)
                first = order[:, :self.pool]
                drawn = np.take_along_axis(self.log.rows(a, a + self.rows)[0], order, axis=1)
                reference[rows] = np.nanmean(drawn[:, self.pool:], axis=1)
            # the pool's ratings are never padding: their place in the pair's own ratings
            index = self.log.starts[a:a + len(count)][:, None] + first
            ratings[rows] = self.log.values[index]
            if raters is not None:
                raters[rows] = self.log.codes[index]
        if self.exact:
            reference = (self.total - ratings.sum(axis=1)) / (self.count - self.pool)
        return ratings, raters, reference


# -- estimators --------------------------------------------------------------------------------

def mean_estimate(values: np.ndarray, raters: np.ndarray | None) -> np.ndarray:
    """The mean of each row's ratings (NaN: not used), as SimLex-999 (section 3.6) and the
    other papers aggregate."""
    return np.nanmean(values, axis=1)


#: pair estimators: ``f(values, raters) -> estimates``, ``values`` pairs x pool with NaN where a
#: rating was not used, ``raters`` their rater codes (None without rater identity)
ESTIMATORS: dict[str, Callable[[np.ndarray, np.ndarray | None], np.ndarray]] = {
    "mean": mean_estimate}


# -- policies ----------------------------------------------------------------------------------

def _moments(pool_ratings: np.ndarray):
    s1 = np.cumsum(pool_ratings, axis=1)
    s2 = np.cumsum(pool_ratings ** 2, axis=1)
    return s1, s2


def _mean_var(s1, s2, n, rows=None):
    """Mean and sample variance of each pair's first ``n`` ratings (of ``rows`` only, if
    given), from the running sums ``s1``, ``s2`` of :func:`_moments`."""
    if rows is None:
        rows = np.arange(len(n))
    else:
        n = n[rows]
    total, squares = s1[rows, n - 1], s2[rows, n - 1]
    mean = total / n
    with np.errstate(invalid="ignore", divide="ignore"):
        var = np.where(n > 1, (squares - n * mean ** 2) / (n - 1), np.nan)
    return mean, np.maximum(var, 0, out=var)


def uniform_counts(pool_ratings: np.ndarray, ks: Iterable[float]) -> dict[float, np.ndarray]:
    """``k`` ratings of every pair, for each ``k``."""
    return {k: np.full(len(pool_ratings), int(k)) for k in ks}


def adaptive_counts(pool_ratings: np.ndarray, ks: Iterable[float], rule: str, *,
                    first_round: int = FIRST_ROUND, step: int = STEP,
                    round_share: float = ROUND_SHARE,
                    known_var: np.ndarray | None = None,
                    shared: dict | None = None) -> dict[float, np.ndarray]:
    """Ratings per pair of the site's adaptive allocation with criterion ``rule`` at budgets
    of ``k`` ratings per pair (ascending; the state at a budget is the prefix of one run: a
    greedy rule's run with a smaller budget stops earlier on the same path; between rounds only
    the topped-up pairs' means and variances are computed again). ``known_var`` replaces the
    shrunk sample variances in the error gain (the oracle; ``rule`` unused). ``shared``: a
    dict kept by the caller for one ``pool_ratings``, where the first round's rank
    uncertainties (the same for both rank rules) are kept for the next rule."""
    pairs, pool = pool_ratings.shape
    s1, s2 = _moments(pool_ratings)
    n = np.full(pairs, min(first_round, pool))
    per_round = max(1, int(round(round_share * pairs)))
    mean, var = _mean_var(s1, s2, n)
    spent = int(n.sum())
    first = rule in ("misordering", "rank+error") and known_var is None
    out = {}
    for k in sorted(ks):
        budget = int(round(k * pairs))
        while spent < budget:
            open_ = n < pool
            opened = int(np.count_nonzero(open_))
            if not opened:
                break
            u = None
            if first:
                key = ("uncertainty", int(n[0]))
                u = shared.get(key) if shared is not None else None
                if u is None:
                    u = uncertainties(n, mean, var)
                    if shared is not None:
                        shared[key] = u
                first = False
            gain = (gains(rule, n, mean, var, step, uncertainty=u) if known_var is None else
                    known_var * step / (n * (n + step)))      # the oracle: error gain, told v
            gain[~open_] = -np.inf
            take = min(per_round, opened, -(-(budget - spent) // step))
            chosen = (np.argpartition(-gain, take - 1)[:take] if take < pairs
                      else np.arange(pairs))
            before = n[chosen]
            n[chosen] = np.minimum(before + step, pool)
            spent += int((n[chosen] - before).sum())
            mean[chosen], var[chosen] = _mean_var(s1, s2, n, chosen)
        out[k] = n.copy()
    return out


def stopping_counts(pool_ratings: np.ndarray, ks: Iterable[float], *,
                    first_round: int = FIRST_ROUND) -> dict[float, np.ndarray]:
    """Ratings per pair of per-pair stopping at a CI half-width: a pair rated ``n`` times
    stops at the first ``n >= first_round`` where ``1.96 sqrt(v_n / n)`` is at most the
    threshold, ``v_n`` the upper 95 % bound of its variance with the first round's pooled
    variance as prior (:func:`lexgold.crowd.allocation_criteria.upper_variances`: a pair whose first
    ratings happen to agree does not stop on that luck); for each budget ``k`` the threshold
    is the smallest whose spending is at most ``k`` ratings per pair."""
    pairs, pool = pool_ratings.shape
    start = min(first_round, pool)
    s1, s2 = _moments(pool_ratings)
    first_n = np.full(pairs, start)
    _, first_var = _mean_var(s1, s2, first_n)
    df = np.clip(first_n - 1, 0, None)
    pooled = float((first_var * df).sum() / df.sum()) if df.sum() > 0 else 1.0
    steps = np.arange(start, pool + 1)
    widths = np.empty((pairs, len(steps)))
    for j, n in enumerate(steps):
        _, var = _mean_var(s1, s2, np.full(pairs, n))
        d = n - 1 + PRIOR_RATINGS
        v = (np.nan_to_num(var) * (n - 1) + PRIOR_RATINGS * pooled) / d
        widths[:, j] = Z95 * np.sqrt(v * d / chdtri(d, 0.95) / n)
    widths[:, -1] = -np.inf                        # the pool is spent: stop

    def spend(threshold):
        return steps[np.argmax(widths <= threshold, axis=1)]

    candidates = np.unique(widths[np.isfinite(widths)])
    if not len(candidates):                        # the first round is the whole pool
        return {k: np.full(pairs, start) for k in ks}
    out = {}
    for k in ks:
        low, high = 0, len(candidates) - 1         # spending falls as the threshold rises
        if spend(candidates[high]).mean() > k:
            out[k] = spend(np.inf)
            continue
        while low < high:
            middle = (low + high) // 2
            if spend(candidates[middle]).mean() <= k:
                high = middle
            else:
                low = middle + 1
        out[k] = spend(candidates[low])
    return out


#: policies measured by :func:`replay` besides uniform
POLICIES = (*RULES, "stopping", "oracle")
#: policies that spend a machine's ratings (the module docstring; they need ``machine``)
MACHINE_POLICIES = ("machine-prior", "machine-allocate", "machine-disagreement",
                    "machine-allocate+prior")


def policy_counts(policy: str, pool_ratings: np.ndarray, ks, known_var=None, shared=None,
                  **options):
    """Ratings per pair of ``policy`` at each budget ``k``; ``shared``: a dict kept by the
    caller across the policies of one ``pool_ratings`` (:func:`adaptive_counts`)."""
    if policy == "uniform":
        return uniform_counts(pool_ratings, ks)
    if policy == "stopping":
        return stopping_counts(pool_ratings, ks, first_round=options.get("first_round",
                                                                          FIRST_ROUND))
    if policy == "oracle":
        return adaptive_counts(pool_ratings, ks, "error", known_var=known_var, **options)
    if policy in RULES:
        return adaptive_counts(pool_ratings, ks, policy, shared=shared, **options)
    raise InputError(f"unknown policy {policy!r}; expected uniform or one of "
                     f"{', '.join(POLICIES)}", field="policy")


# -- accuracy and savings ----------------------------------------------------------------------

def accuracy(estimates, n, reference_means, sd_all, sd_used=None, reference_ranks=None) -> dict:
    """``spearman`` (estimates against reference means), ``mae`` and ``halfwidth`` (95th
    percentile of ``1.96 sd_all / sqrt(n)``); with ``sd_used`` (the SD of the ratings each
    pair got) also ``halfwidth_sample``, the 95th percentile of ``1.96 sd_used / sqrt(n)``
    over pairs of two ratings or more: the half-width a release would print, which flatters a
    rule that stops when a pair's first ratings happen to agree. ``reference_ranks``: the
    ranks of ``reference_means``, when a split's many measures share them."""
    a = average_ranks(estimates)
    b = average_ranks(reference_means) if reference_ranks is None else reference_ranks
    found = {"spearman": float(np.corrcoef(a, b)[0, 1]),
             "mae": float(np.mean(np.abs(np.asarray(estimates) - reference_means))),
             "halfwidth": float(np.percentile(Z95 * np.asarray(sd_all) / np.sqrt(n), 95))}
    if sd_used is not None:
        widths = Z95 * np.asarray(sd_used) / np.sqrt(n)
        widths = widths[np.asarray(n) > 1]
        found["halfwidth_sample"] = float(np.percentile(widths, 95)) if len(widths) else np.nan
    return found


#: whether a larger figure is better
BETTER_HIGH = {"spearman": True, "mae": False, "halfwidth": False, "halfwidth_sample": False}


def equivalent_k(curve_k, curve_values, value, higher_is_better: bool) -> float:
    """The ratings per pair uniform needs to reach ``value``: ``curve_values`` (uniform's
    figure at ``curve_k``) read backwards, linear between points, extended by the first or
    last segment beyond them (the curve made monotone first).

    >>> equivalent_k([1, 2, 3, 4], [0.5, 0.6, 0.7, 0.8], 0.75, True)
    3.5
    """
    k = np.asarray(curve_k, float)
    y = np.asarray(curve_values, float) * (1 if higher_is_better else -1)
    defined = np.isfinite(y)                 # a figure undefined at k = 1 (one rating: no SD)
    k, y = k[defined], np.maximum.accumulate(y[defined])
    if not np.isfinite(value) or len(y) < 2:
        return float("nan")
    v = value * (1 if higher_is_better else -1)
    if v <= y[0] or v >= y[-1]:
        i = 0 if v <= y[0] else len(y) - 2
        slope = (y[i + 1] - y[i]) / (k[i + 1] - k[i])
        return float(k[i] + (v - y[i]) / slope) if slope > 0 else float(k[i if v <= y[0] else -1])
    return float(np.interp(v, y, k))


def saving(spent: float, equivalent: float) -> float:
    """``1 - spent / equivalent``: the share of uniform's ratings a policy does without.

    >>> saving(3.0, 4.0)
    0.25
    """
    return 1.0 - spent / equivalent


def replay_split(log: LogMatrix, pool: int, ks, rng: np.random.Generator, *,
                 policies=POLICIES, estimator: str = "mean", machine: np.ndarray | None = None,
                 **options) -> list[dict]:
    """One split: a record per policy and ``k`` (uniform's at ``k = 1 .. pool`` too) with
    ``spent`` (ratings per pair), the :func:`accuracy` figures and, for policies other than
    uniform, ``saving_<figure>`` for each figure. ``machine``: a machine's number for each pair
    of the log (NaN where it has none), for the policies of :data:`MACHINE_POLICIES`
    (machine's policies below), whose records add ``circularity``."""
    return _replay_drawn(PoolDraws(log, pool).draw(rng), ks, log.sds(), policies=policies,
                         estimator=estimator, machine=machine, **options)


def _used_moments(pool_ratings: np.ndarray, counts: np.ndarray):
    """Mean and SD of each pair's first ``counts`` ratings of the pool (SD NaN for one)."""
    used = np.arange(pool_ratings.shape[1])[None, :] < counts[:, None]
    with np.errstate(invalid="ignore", divide="ignore"):         # the pool holds no NaN
        means = np.where(used, pool_ratings, 0.0).sum(axis=1) / counts
        deviations = np.where(used, (pool_ratings - means[:, None]) ** 2, 0.0).sum(axis=1)
        sd_used = np.where(counts > 1, np.sqrt(deviations / (counts - 1)), np.nan)
    return means, sd_used


def _replay_drawn(drawn, ks, sd_all, *, policies=POLICIES, estimator: str = "mean",
                  machine: np.ndarray | None = None, **options) -> list[dict]:
    """:func:`replay_split` of a split already drawn (:meth:`PoolDraws.draw`), ``sd_all`` the
    SD of each pair's ratings over the log."""
    estimate = ESTIMATORS[estimator]
    pool_ratings, pool_raters, reference_means = drawn
    pairs, pool = pool_ratings.shape
    reference_ranks = average_ranks(reference_means)
    columns = np.arange(pool)
    rows = np.arange(pairs)
    # every pair's mean and SD at each count 1 .. pool, as _used_moments gives them for that
    # count (a pair's figures do not depend on the other rows): the measures gather them
    at_count = [_used_moments(pool_ratings, np.full(pairs, k)) for k in range(1, pool + 1)]
    means_at = np.stack([means for means, _ in at_count], axis=1)
    sd_at = np.stack([sd for _, sd in at_count], axis=1)

    def measure(counts, keep=None):
        if counts.dtype.kind in "iu" and counts.min() >= 1:
            means, sd_used = means_at[rows, counts - 1], sd_at[rows, counts - 1]
        else:
            means, sd_used = _used_moments(pool_ratings, counts)
        if estimate is mean_estimate:
            estimates = means
        else:
            used = columns[None, :] < counts[:, None]
            raters = None if pool_raters is None else np.where(used, pool_raters, -1)
            estimates = estimate(np.where(used, pool_ratings, np.nan), raters)
        if keep is not None:
            keep.append(estimates)
        return accuracy(estimates, counts, reference_means, sd_all, sd_used, reference_ranks)

    curve_k = list(range(1, pool + 1))
    golds: list[np.ndarray] = []
    curve = [measure(n, golds) for n in uniform_counts(pool_ratings, curve_k).values()]
    records = [{"policy": "uniform", "k": k, "spent": float(k), **fig}
               for k, fig in zip(curve_k, curve)]
    if machine is not None:
        records += machine_records(policies, pool_ratings, ks, machine, curve_k, curve, golds,
                                   measure, reference_means, sd_all, **options)
        policies = [p for p in policies if p not in MACHINE_POLICIES]
    shared: dict = {}
    for policy in policies:
        counts = policy_counts(policy, pool_ratings, ks, known_var=sd_all ** 2, shared=shared,
                               **options)
        for k in ks:
            n = counts[k]
            fig = measure(n)
            record = {"policy": policy, "k": k, "spent": float(n.mean()), **fig}
            for name, high in BETTER_HIGH.items():
                equal = equivalent_k(curve_k, [c[name] for c in curve], fig[name], high)
                record[f"saving_{name}"] = saving(float(n.mean()), equal)
            records.append(record)
    return records


def replay(log: LogMatrix, *, pool: int, ks, splits: int, seed: int = 0, policies=POLICIES,
           estimator: str = "mean", progress=None, machine: np.ndarray | None = None,
           workers: int | None = None, **options) -> pd.DataFrame:
    """:func:`replay_split` over ``splits`` random splits (``default_rng(seed)``), one frame
    of records with a ``split`` column. ``progress``: called once per split done.
    ``machine``: the machine's number for each pair of ``log`` (NaN: none), needed by the
    policies of :data:`MACHINE_POLICIES`. ``workers``: processes measuring splits at once
    (default: one per CPU the process may use; forked where the system can fork, else threads),
    each given a split drawn here: the splits are drawn one after another from the one
    generator, so the records are the same whatever the number."""
    if not 1 <= pool:
        raise InputError(f"need a pool of 1 rating or more, found {pool}", field="--pool")
    bad = [k for k in ks if not 1 <= k <= pool]
    if bad:
        raise InputError(f"k = {bad[0]:g} is outside 1 .. --pool {pool}", field="--k")
    if estimator not in ESTIMATORS:
        raise InputError(f"unknown estimator {estimator!r}; expected one of "
                         f"{', '.join(ESTIMATORS)}", field="estimator")
    wanted = [p for p in policies if p in MACHINE_POLICIES]
    if wanted and machine is None:
        raise InputError(f"policy {wanted[0]} needs a machine's ratings", field="--machine")
    rng = np.random.default_rng(seed)
    sd_all = log.sds()
    draws = PoolDraws(log, pool)
    workers = max(1, min(splits, workers or getattr(os, "process_cpu_count", os.cpu_count)() or 1))
    frames: list[pd.DataFrame] = []
    measure = partial(_replay_drawn, ks=ks, sd_all=sd_all, policies=policies,
                      estimator=estimator, machine=machine, **options)

    def keep(records):
        frames.append(pd.DataFrame(records).assign(split=len(frames)))
        if progress is not None:
            progress()

    if workers == 1:
        for _ in range(splits):
            keep(measure(draws.draw(rng)))
        return pd.concat(frames, ignore_index=True)
    pending: deque = deque()
    with _executor(workers) as executor:
        for _ in range(splits):
            pending.append(executor.submit(measure, draws.draw(rng)))
            if len(pending) > 2 * workers:           # a few splits drawn ahead, not all
                keep(pending.popleft().result())
        while pending:
            keep(pending.popleft().result())
    return pd.concat(frames, ignore_index=True)


def _executor(workers: int):
    """Forked processes (a split's measures hold the GIL in many small numpy steps: on SimVerb
    two threads gave 7.9 s wall, two processes 5.5 s); threads where the system cannot fork."""
    if "fork" in multiprocessing.get_all_start_methods():
        return ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"))
    return ThreadPoolExecutor(workers)


#: what the rating site does by default, chosen by replaying every real log lexgold ships
#: (SimVerb-3500, WordSim-353 set 1, the Danish similarity set, Card-660; docs/process.md, "What
#: lexgold saves"): no adaptive rule nor per-pair stopping saves at equal Spearman *and* at
#: equal MAE on every log (the error rule: -4.8 to +6.9 % and -6.3 to +12.4 %; stopping: -6.0 to
#: +11.1 % and -4.3 to +18.7 %), so the site allocates uniformly (``[study] allocation =
#: "uniform"``) and an adaptive study, asked for, uses :data:`SITE_RULE`
SITE_DEFAULT = "uniform"


def uniform_rows(records: pd.DataFrame) -> list[dict]:
    """Uniform's own row per ``k`` (the yardstick: every saving 0 by definition), with the
    median of its figures over the splits, for the JSON beside the policies' rows."""
    rows = []
    for k, group in records[records["policy"] == "uniform"].groupby("k", sort=True):
        row = {"policy": "uniform", "k": float(k), "spent": float(k)}
        row.update({f"saving_{name}": 0.0 for name in BETTER_HIGH})
        row.update({name: float(group[name].median()) for name in BETTER_HIGH})
        rows.append(row)
    return rows


def summarise(records: pd.DataFrame, level: float = 0.95, seed: int = 0,
              resamples: int = 2000) -> pd.DataFrame:
    """Per policy and ``k`` (uniform left out): the median over splits of ``spent``, each
    figure and each saving; for each saving its interval ``_low``, ``_high``: the ``level``
    percentile bootstrap interval of the median over the splits (the splits resampled
    ``resamples`` times with ``default_rng(seed)``: how precisely the replay knows the quoted
    saving), and ``_spread_low``, ``_spread_high``: the percentiles holding ``level`` of the
    splits (what one study, with the ratings it happened to get, may save)."""
    rows = []
    lo, hi = 100 * (1 - level) / 2, 100 * (1 + level) / 2
    others = records[records["policy"] != "uniform"]
    rng = np.random.default_rng(seed)
    splits = int(others["split"].nunique()) if len(others) else 0
    draws = rng.integers(0, max(splits, 1), size=(resamples, max(splits, 1)))
    for (policy, k), group in others.groupby(["policy", "k"], sort=False):
        row = {"policy": policy, "k": float(k), "spent": float(group["spent"].median())}
        group = group.sort_values("split")
        for name in BETTER_HIGH:
            values = group[f"saving_{name}"].to_numpy(float)
            medians = (np.median(values[draws], axis=1) if len(values) == splits
                       else values)
            row[f"saving_{name}"] = float(np.median(values))
            row[f"saving_{name}_low"] = float(np.percentile(medians, lo))
            row[f"saving_{name}_high"] = float(np.percentile(medians, hi))
            row[f"saving_{name}_spread_low"] = float(np.percentile(values, lo))
            row[f"saving_{name}_spread_high"] = float(np.percentile(values, hi))
        for name in BETTER_HIGH:
            row[name] = float(group[name].median())
        for name in ("circularity", "weight"):
            if name in group and group[name].notna().any():
                values = group[name].to_numpy(float)
                medians = (np.median(values[draws], axis=1) if len(values) == splits
                           else values)
                row[name] = float(np.median(values))
                row[f"{name}_low"] = float(np.percentile(medians, lo))
                row[f"{name}_high"] = float(np.percentile(medians, hi))
        rows.append(row)
    return pd.DataFrame(rows)


# -- a machine rater's policies ----------------------------------------------------------------

#: grid step of machine-prior's budgets (ratings per pair)
GRID_STEP = 0.1


def machine_spearman(machine: np.ndarray, gold: np.ndarray) -> float:
    """Spearman's correlation of the machine with ``gold`` over the pairs it covers.

    >>> machine_spearman(np.array([1.0, 2.0, np.nan, 3.0]), np.array([3.0, 1.0, 9.0, 2.0]))
    -0.5
    """
    covered = np.isfinite(machine) & np.isfinite(gold)
    if covered.sum() < 3:
        return float("nan")
    a, b = average_ranks(machine[covered]), average_ranks(gold[covered])
    return float(np.corrcoef(a, b)[0, 1])


def fractional_counts(pairs: int, b: float, pool: int) -> np.ndarray:
    """``floor(b)`` ratings of every pair, one more to a share ``b - floor(b)`` of them spread
    evenly over the rows.

    >>> fractional_counts(4, 1.5, 5).tolist()
    [1, 2, 1, 2]
    """
    whole = int(np.floor(b + 1e-9))
    rows = np.arange(1, pairs + 1)
    extra = np.floor(rows * (b - whole) + 1e-9) - np.floor((rows - 1) * (b - whole) + 1e-9)
    return np.minimum(whole + extra.astype(int), pool)


def allocate_counts(pool_ratings: np.ndarray, ks, machine: np.ndarray, rule: str = "gain", *,
                    first_round: int = FIRST_ROUND, step: int = STEP,
                    round_share: float = ROUND_SHARE) -> dict[float, np.ndarray]:
    """Ratings per pair of ``machine-allocate`` (``rule="gain"``) or ``machine-disagreement``
    (``rule="disagreement"``) at each budget ``k``: the covered pairs share ``k`` ratings per
    pair in rounds, a pair with nothing to gain stopping; uncovered pairs get ``k`` each."""
    pairs, pool = pool_ratings.shape
    covered = np.isfinite(machine)
    s1, s2 = _moments(pool_ratings)
    n = np.full(pairs, min(first_round, pool))
    per_round = max(1, int(round(round_share * covered.sum())))
    out = {}
    for k in sorted(ks):
        budget = int(round(k * covered.sum()))
        while n[covered].sum() < budget:
            mean, var = _mean_var(s1, s2, n)
            if rule == "gain":
                gain = machine_gain(mean, n, _pooled(n, var), machine, step)
                gain[gain <= 0] = -np.inf
            else:
                gain = disagreement(mean, n, shrunk_variances(n, var), machine)
                gain[~(gain > Z95)] = -np.inf
            gain[~covered | (n >= pool)] = -np.inf
            open_ = np.isfinite(gain)
            if not open_.any():
                break
            take = min(per_round, int(open_.sum()),
                       -(-(budget - int(n[covered].sum())) // step))
            chosen = np.argpartition(-gain, take - 1)[:take]
            n[chosen] = np.minimum(n[chosen] + step, pool)
        counts = n.copy()
        counts[~covered] = fractional_counts(int((~covered).sum()), k, pool)
        out[k] = counts
    return out


def _pooled(n, var) -> float:
    df = np.clip(n - 1, 0, None)
    return float((np.nan_to_num(var) * df).sum() / df.sum()) if df.sum() > 0 else 1.0


def _prior_measure(pool_ratings, counts, machine, reference_means, sd_all):
    """Accuracy of machine-prior's posterior at ``counts`` ratings per pair, and the gold."""
    columns = np.arange(pool_ratings.shape[1])
    values = np.where(columns[None, :] < counts[:, None], pool_ratings, np.nan)
    fit = prior_scores(values, machine)
    covered = np.isfinite(fit["calibrated"]).to_numpy()
    spread = np.where(covered, fit.attrs["tau2"], fit.attrs["tau2_0"])
    s = sd_all ** 2 / counts
    with np.errstate(invalid="ignore", divide="ignore"):
        human = np.where(np.isfinite(spread) & (s + spread > 0), spread / (s + spread), 1.0)
    fig = accuracy(fit["posterior"].to_numpy(), counts, reference_means, np.sqrt(human) * sd_all)
    fig["halfwidth_sample"] = float(np.percentile(Z95 * fit["posterior_sd"], 95))
    fig["weight"] = float(fit["weight"][covered].mean()) if covered.any() else np.nan
    return fig, fit["posterior"].to_numpy()


def _uniform_at(curve_k, values, k):
    return float(np.interp(k, curve_k, values))


def prior_records(pool_ratings, ks, machine, curve_k, curve, uniform_rho, reference_means,
                  sd_all, policy="machine-prior") -> list[dict]:
    """machine-prior's records at each ``k`` (module docstring)."""
    pool = pool_ratings.shape[1]
    grid = np.round(np.arange(1 + GRID_STEP, pool + 1e-9, GRID_STEP), 6)
    figs, rhos = [], []
    for b in grid:
        fig, gold = _prior_measure(pool_ratings, fractional_counts(len(pool_ratings), b, pool),
                                   machine, reference_means, sd_all)
        figs.append(fig)
        rhos.append(machine_spearman(machine, gold))
    records = []
    for k in ks:
        at = int(np.argmin(np.abs(grid - k)))
        record = {"policy": policy, "k": k, "spent": float(k),
                  **{name: figs[at][name] for name in (*BETTER_HIGH, "weight")}}
        for name, high in BETTER_HIGH.items():
            target = _uniform_at(curve_k, [c[name] for c in curve], k)
            spent = max(equivalent_k(grid, [f[name] for f in figs], target, high), grid[0])
            record[f"saving_{name}"] = saving(spent, k)
            if name == "spearman":
                equal = float(np.interp(spent, grid, rhos))
                record["circularity"] = equal - _uniform_at(curve_k, uniform_rho, k)
        records.append(record)
    return records


def machine_records(policies, pool_ratings, ks, machine, curve_k, curve, golds, measure,
                    reference_means, sd_all, *, first_round: int = FIRST_ROUND,
                    step: int = STEP, round_share: float = ROUND_SHARE) -> list[dict]:
    """The records of the machine's policies among ``policies`` for one split (module
    docstring); ``curve`` and ``golds`` are uniform's figures and estimates at ``curve_k``,
    ``measure(counts, keep)`` the replay's measure of human means."""
    uniform_rho = [machine_spearman(machine, gold) for gold in golds]
    records = []
    if "machine-prior" in policies:
        records += prior_records(pool_ratings, ks, machine, curve_k, curve, uniform_rho,
                                 reference_means, sd_all)
    options = {"first_round": first_round, "step": step, "round_share": round_share}
    for policy, rule in (("machine-allocate", "gain"), ("machine-disagreement", "disagreement"),
                         ("machine-allocate+prior", "gain")):
        if policy not in policies:
            continue
        counts = allocate_counts(pool_ratings, ks, machine, rule, **options)
        for k in ks:
            n = counts[k]
            if policy.endswith("+prior"):
                fig, gold = _prior_measure(pool_ratings, n, machine, reference_means, sd_all)
            else:
                kept: list[np.ndarray] = []
                fig = measure(n, kept)
                gold = kept[0]
            record = {"policy": policy, "k": k, "spent": float(n.mean()), **fig}
            for name, high in BETTER_HIGH.items():
                equal = equivalent_k(curve_k, [c[name] for c in curve], fig[name], high)
                record[f"saving_{name}"] = saving(float(n.mean()), equal)
                if name == "spearman":
                    record["circularity"] = (machine_spearman(machine, gold)
                                             - _uniform_at(curve_k, uniform_rho, equal))
            records.append(record)
    return records
