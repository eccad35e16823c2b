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
  alternating least squares, accelerated (:func:`_least_squares`) until a step moves them
  by less than a tolerance; ``v_i`` is the pair's residual variance shrunk towards a quadratic
  in the pair's score (empirical Bayes: the posterior mean under a scaled inverse chi-square
  prior of ``d0`` degrees of freedom, ``d0`` from how much the variances differ beyond
  sampling); ``t`` is shrunk by its estimation error so the scores' spread is the
  true scores' spread;
- a simulated study draws, per tranche, ``2k`` raters among the pilot's fitted raters (distinct
  when there are enough; fresh noise), rates each pair of the tranche (a pair of several
  tranches, the consistency set, in each), and correlates the two groups' pair means;
- uncertainty: a bootstrap over pairs (the model refitted) and over raters (the pool the crowd
  is drawn from resampled), so a pilot of 4 raters, one of them careless, gets a wide interval.
  The replicates are fitted and simulated in batches, a pair drawn c times weighing c in the
  fit (the same fit as the resampled ratings'), one sparse product per sum over ratings.

Ratings without rater identity (``?`` rater ids, SimVerb-3500) have one pooled rater (no bias
or scale of their own: a rater's bias is part of the pair's spread, as it is for a crowd whose
raters each rate a different subset) and only pairs are bootstrapped.
"""

from __future__ import annotations

import math
import sys
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from lexgold.errors import InputError
from lexgold.process.aggregate import model_saving, saving_line
from lexgold.ratings import ITEM
from lexgold.ratings.long import answers, check_ratings, is_anonymous
from lexgold.stats import average_ranks


#: columns of :func:`reliability_curve`'s frame
CURVE_COLUMNS = ("raters", "reliability", "low", "high", "ci_width", "iaa2")
#: a pilot whose interval at the planned k is wider than this cannot tell the raters needed
TOO_WIDE = 0.10
#: fewest pairs with two or more ratings, and fewest identified raters, for a plan to tell
MIN_PAIRS, MIN_RATERS = 30, 3
#: the fit has converged when a step moves no rater's bias by more than ``TOLERANCE`` rating
#: SDs and no rater's scale by more than ``TOLERANCE``; it takes tens of steps, and a fit still
#: moving after ``STEP_CAP`` steps is reported (a RuntimeWarning)
TOLERANCE, STEP_CAP = 1e-7, 500
#: the steps Anderson acceleration remembers
ANDERSON_DEPTH = 5
#: seconds of bootstrap before its progress bar shows (a quick plan prints no bar)
PROGRESS_DELAY = 1.0
#: floats a batch of bootstrap replicates may hold per array (bounds the memory)
BATCH_FLOATS = 2 ** 21


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
    steps: int = 0           # the least-squares steps the fit took to converge


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
    members = members.sort_values("pair", kind="stable")       # a pair's memberships together
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


@dataclass(frozen=True)
class _LeastSquares:
    """``t`` (replicates x pairs), ``a``, ``s`` (replicates x raters), the steps each fit took
    and which raters each replicate has ratings of."""

    t: np.ndarray
    a: np.ndarray
    s: np.ndarray
    steps: np.ndarray
    present: np.ndarray


def _least_squares(pilot: _Pilot, copies: np.ndarray | None = None,
                   start: tuple[np.ndarray, np.ndarray] | None = None, *,
                   tolerance: float | None = None, cap: int | None = None) -> _LeastSquares:
    """``t``, ``a``, ``s`` of ``y_ij = a_j + s_j t_i + e_ij`` by alternating least squares,
    for the pilot or for many bootstrap replicates of it at once.

    A step solves each block exactly: ``t`` given the raters (a weighted mean per pair), then
    each rater's ``a_j, s_j`` given ``t`` (a regression on its pairs; ``s`` rescaled to mean 1
    over the raters with 3 or more pairs, the others keep ``s_j = 1``). Alternating converges
    slowly where the pairs' scores and the raters' biases can trade off (tranches joined only
    by the consistency set), so the raters' ``a, s`` are the fixed point of that step found with
    Anderson acceleration (Walker & Ni 2011, SIAM J. Numer. Anal. 49(4); its history dropped
    when a step moves more than the one before). A fit stops when a step moves no ``a_j`` by
    more than ``tolerance`` (:data:`TOLERANCE`) rating SDs and no ``s_j`` by more than
    ``tolerance``, or at ``cap`` (:data:`STEP_CAP`) steps; the steps it
    took are returned (``cap`` where it did not converge). It takes 1 step on SimVerb-3500's
    ratings (no rater identity), 5-6 on WordSim-353 set 1's raters, 28 on those raters split
    into 3 tranches of 4 joined by 10 consistency pairs, and 18-20 on simulated SimLex pilots
    of 10 tranches (plain alternation: 1, 6-9, 522 and 74-83). It cannot where the ratings
    have no least-squares fit at finite scores: a tranche joined to the others by a few
    consistency pairs whose raters' ratings of them do not follow the other tranches' (as in
    some bootstrap replicates of such a design) lowers the residual ever more as its raters'
    scales shrink towards 0 and its pairs' scores grow; such a fit stops at ``cap``.

    ``copies`` (replicates x pairs): how often each pair is drawn into each bootstrap
    replicate (a pair drawn twice weighs twice; the fit is the fit of the resampled ratings);
    None: the pilot, once. ``start``: the raters' ``a, s`` to start from (a replicate starts
    from the pilot's fit). Sums over ratings are products with the sparse rater x pair
    incidence, one column per replicate.
    """
    from scipy import sparse

    tolerance = TOLERANCE if tolerance is None else tolerance
    cap = STEP_CAP if cap is None else cap
    n, m = pilot.n_pairs, pilot.n_raters
    pair, rater, y = pilot.pair, pilot.rater, pilot.value
    weight = (np.ones((n, 1)) if copies is None
              else np.ascontiguousarray(np.asarray(copies, dtype=float).T))
    replicates = weight.shape[1]
    ones = sparse.csr_array((np.ones(len(y)), (rater, pair)), shape=(m, n))
    values = sparse.csr_array((y, (rater, pair)), shape=(m, n))
    ones_t, values_t = ones.T.tocsr(), values.T.tocsr()
    per_rater = ones @ weight                                   # ratings, copies counted
    present = per_rater > 0
    per_rater = np.where(present, per_rater, 1.0)
    mean_y = (values @ weight) / per_rater
    free = (per_rater >= 3) & present & (not pilot.anonymous)   # raters with a scale
    sd = float(np.std(y)) or 1.0

    def step(x, columns):
        a, s = x[:m] * sd, x[m:]
        w, count, my, fr = (v[:, columns] for v in (weight, per_rater, mean_y, free))
        with np.errstate(invalid="ignore", divide="ignore"):
            t = (values_t @ s - ones_t @ (s * a)) / (ones_t @ (s * s))
            wt = np.where(w > 0, w * t, 0.0)
            t = t - wt.sum(axis=0) / w.sum(axis=0)
            wt = np.where(w > 0, w * t, 0.0)
            sum_t = ones @ wt
            mx = sum_t / count
            sxx = ones @ (wt * t) - sum_t * mx
            sxy = values @ wt - sum_t * my
            new_s = np.where(fr & (sxx > 0), sxy / np.where(sxx > 0, sxx, 1.0), 1.0)
            level = (new_s * fr).sum(axis=0) / np.maximum(fr.sum(axis=0), 1)
            level = np.where(fr.any(axis=0) & (level > 0), level, 1.0)
            new_s = np.where(fr, new_s / level, new_s)
        new_a = np.where(present[:, columns], my - new_s * mx, 0.0)
        return t, np.vstack([new_a / sd, new_s])

    if start is None:
        x = np.vstack([np.where(present, mean_y, 0.0) / sd, np.ones((m, replicates))])
    else:
        a0, s0 = (np.asarray(v, dtype=float).reshape(m, 1) for v in start)
        x = np.vstack([np.broadcast_to(np.where(present, a0, 0.0), (m, replicates)) / sd,
                       np.broadcast_to(np.where(present, s0, 1.0), (m, replicates))])
    t_out, x_out = np.full((n, replicates), np.nan), x.copy()
    steps = np.full(replicates, cap)
    active = np.arange(replicates)
    images, moves = [], []                       # Anderson's history: G(x) and G(x) - x
    last = np.full(replicates, np.inf)
    for done in range(1, cap + 1):
        t, image = step(x, active)
        move = image - x
        size = np.abs(move).max(axis=0)
        stop = ~(size > tolerance)               # converged, or failed (NaN: left to the caller)
        t_out[:, active], x_out[:, active] = t, image
        steps[active[stop]] = done
        if stop.all():
            break
        keep = ~stop
        active, x, image, move = active[keep], x[:, keep], image[:, keep], move[:, keep]
        size, last = size[keep], last[keep]
        images = [h[:, keep] for h in images] + [image]
        moves = [h[:, keep] for h in moves] + [move]
        images, moves = images[-ANDERSON_DEPTH - 1:], moves[-ANDERSON_DEPTH - 1:]
        restart = size > last
        last = size
        for history in (images, moves):
            for h in history[:-1]:
                h[:, restart] = history[-1][:, restart]     # their differences vanish
        if len(moves) < 2:
            x = image
            continue
        d_move = np.diff(np.stack(moves), axis=0)          # (depth, 2m, active)
        d_image = np.diff(np.stack(images), axis=0)
        gram = np.einsum("irc,jrc->cij", d_move, d_move)
        ridge = 1e-12 * np.trace(gram, axis1=1, axis2=2)[:, None, None] + 1e-300
        gamma = np.linalg.solve(gram + ridge * np.eye(len(d_move)),
                                np.einsum("irc,rc->ci", d_move, move)[..., None])[..., 0]
        x = image - np.einsum("irc,ci->rc", d_image, gamma)
    return _LeastSquares(t_out.T, x_out[:m].T * sd, x_out[m:].T, steps, present.T)


@dataclass(frozen=True)
class _Models:
    """Fitted models of the pilot or of its bootstrap replicates, one row per replicate:
    ``score``, ``spread`` per pair (weighted by the pair's copies), ``offset``, ``scale``,
    ``noise`` per rater, ``steps`` and ``present`` as :class:`_LeastSquares`, ``valid``
    (finite, with scores that vary)."""

    score: np.ndarray
    spread: np.ndarray
    offset: np.ndarray
    scale: np.ndarray
    noise: np.ndarray
    steps: np.ndarray
    present: np.ndarray
    valid: np.ndarray


def _models(pilot: _Pilot, copies: np.ndarray | None = None,
            start: tuple[np.ndarray, np.ndarray] | None = None) -> _Models:
    """The model of the module docstring fitted to the pilot (``copies`` None) or to each
    bootstrap replicate (``copies``, replicates x pairs, as :func:`_least_squares`)."""
    from scipy import sparse

    n, m = pilot.n_pairs, pilot.n_raters
    pair, rater, y = pilot.pair, pilot.rater, pilot.value
    fitted = _least_squares(pilot, copies, start)
    t, a, s = fitted.t, fitted.a, fitted.s
    weight = np.ones((1, n)) if copies is None else np.asarray(copies, dtype=float)
    cells = np.arange(len(y))
    by_rater = sparse.csr_array((np.ones(len(y)), (rater, cells)), shape=(m, len(y)))
    by_pair = sparse.csr_array((np.ones(len(y)), (pair, cells)), shape=(n, len(y)))

    def per_rater(values):
        return (by_rater @ values.T).T

    def per_pair(values):
        return (by_pair @ values.T).T

    with np.errstate(invalid="ignore", divide="ignore"):
        residual = y - a[:, rater] - s[:, rater] * t[:, pair]
        count = np.bincount(pair, minlength=n)
        df = np.maximum(count - 1, 0).astype(float)            # t_i takes one rating's freedom
        spent = 0 if pilot.anonymous else 2 * (m - 1)          # and each rater's a_j, s_j
        total_df = weight @ df
        inflate = total_df / np.maximum(total_df - spent, 1.0)
        share = np.where(count[pair] > 1, count[pair] / np.maximum(count[pair] - 1, 1), 0.0)
        drawn = weight[:, pair]                                 # each rating's copies
        w = per_rater(drawn * residual ** 2 * share) / np.maximum(
            per_rater(drawn * (share > 0)), 1)                 # unbiased per rating
        positive = w > 0
        typical = (w * positive).sum(axis=1) / np.maximum(positive.sum(axis=1), 1)
        w = np.where(positive, w / np.where(typical > 0, typical, 1.0)[:, None], 1.0)
        own = per_pair(residual ** 2 / w[:, rater]) * inflate[:, None]
        own = np.where(df > 0, own / np.maximum(df, 1), np.nan)
        spread = _shrunk_spread(t, own, df, weight)
        # the estimation error of t_i (weighted least squares) and the scores' true spread
        s2 = s[:, rater] ** 2
        error = spread * per_pair(s2 * w[:, rater]) / per_pair(s2) ** 2
        total_weight = weight.sum(axis=1)
        centre = (weight * t).sum(axis=1) / total_weight
        total = (weight * (t - centre[:, None]) ** 2).sum(axis=1) / total_weight
        true = np.maximum(total - (weight * error).sum(axis=1) / total_weight, 0.0)
        score = t * np.sqrt(true / total)[:, None]
    drawn_pairs = weight > 0
    valid = (total > 0) & np.isfinite(total) & np.all(
        np.isfinite(np.where(drawn_pairs, score, 0.0)) & np.isfinite(
            np.where(drawn_pairs, spread, 0.0)), axis=1)
    return _Models(score, spread, a, s, w, fitted.steps, fitted.present, valid)


def _fit(pilot: _Pilot) -> RatingModel:
    """The pilot's :class:`RatingModel` (an InputError when its pairs' scores do not vary)."""
    models = _models(pilot)
    if not models.valid[0]:
        raise InputError("the pilot's ratings do not vary between pairs: nothing to plan from",
                         field="rating")
    _warn_unconverged(models.steps)
    return RatingModel(models.score[0], models.spread[0], pilot.member_pair,
                       pilot.member_tranche, pilot.n_tranches, models.offset[0],
                       models.scale[0], models.noise[0], int(models.steps[0]))


def _warn_unconverged(steps: np.ndarray) -> None:
    stuck = int(np.sum(steps >= STEP_CAP))
    if stuck:
        warnings.warn(f"plan: {stuck} least-squares fit(s) still moving after {STEP_CAP} "
                      "steps; the figures may be off", RuntimeWarning, stacklevel=3)


def _shrunk_spread(score: np.ndarray, own: np.ndarray, df: np.ndarray,
                   copies: np.ndarray | None = None) -> np.ndarray:
    """Each pair's noise variance, shrunk towards a quadratic in its score (empirical Bayes).

    ``own`` (NaN where ``df`` is 0) is the pair's residual variance on ``df`` degrees of
    freedom. The prior is the quadratic fitted to ``own`` (weights ``df``); its strength ``d0``
    is estimated by moments, taking the true variances' squared coefficient of variation
    around the prior as ``2/d0`` (as for a chi-square on ``d0`` degrees of freedom):
    ``E[(own/prior - 1)^2] = 2/df + (1 + 2/df) * 2/d0``. The posterior mean under the scaled
    inverse chi-square prior is ``(d0 prior + df own) / (d0 + df)`` (a pair rated once gets
    the prior). ``score`` and ``own`` may hold one row per bootstrap replicate, ``copies``
    (same shape) each pair's copies in it, which weigh as many pairs."""
    single = np.ndim(score) == 1
    score, own = np.atleast_2d(score), np.atleast_2d(own)
    copies = np.ones_like(score) if copies is None else np.atleast_2d(copies)
    rated = df > 0
    weight = np.where(rated, df * copies, 0.0)
    known = np.where(rated, own, 0.0)
    design = np.stack([np.ones_like(score), score, score ** 2], axis=-1)
    gram = np.einsum("rni,rn,rnj->rij", design, weight, design)
    coef = np.einsum("rij,rj->ri", np.linalg.pinv(gram),
                     np.einsum("rni,rn->ri", design, weight * known))
    typical = (weight * known).sum(axis=1) / weight.sum(axis=1)
    prior = np.maximum(np.einsum("rni,ri->rn", design, coef), 0.05 * typical[:, None])
    with np.errstate(invalid="ignore", divide="ignore"):
        counted = np.where(rated, copies, 0.0)
        sampling = 2 / np.where(rated, df, 1.0)
        excess = ((counted * ((known / prior - 1) ** 2 - sampling)).sum(axis=1)
                  / (counted * (1 + sampling)).sum(axis=1))
        d0 = np.where(excess > 1e-6, 2 / np.where(excess > 1e-6, excess, 1.0), 1e6)[:, None]
        spread = np.where(rated, (d0 * prior + df * known) / (d0 + df), prior)
    spread = np.where((typical > 0)[:, None], spread, 0.0)
    return spread[0] if single else spread


def _drawn_raters(score, spread, pool, member_copy, member_tranche, n_tranches: int,
                  k_max: int, rng: np.random.Generator) -> tuple:
    """The raters of :func:`_simulate`'s two groups (``2 k_max`` per tranche of each study,
    distinct when the pool has enough: none in both groups), drawn first from ``rng``, as
    rater slot (rows) by (study, tranche) (columns): ``offset, scale, noise``; then per
    membership its ``column``, true ``value`` and ``sd``; and where each pair's memberships
    start (``starts``) and how many it has (``per_pair``)."""
    studies, n = score.shape
    size = pool[0].shape[1]
    if size >= 2 * k_max:
        drawn = np.argsort(rng.random((studies, n_tranches, size)), axis=2)[..., :2 * k_max]
    else:
        drawn = rng.integers(0, size, size=(studies, n_tranches, 2 * k_max))
    study = np.arange(studies)[:, None, None]
    offset, scale, noise = (v[study, drawn].reshape(-1, 2 * k_max).T for v in pool)
    column = member_copy // n * n_tranches + member_tranche
    value, sd = score.ravel()[member_copy], np.sqrt(spread.ravel()[member_copy])
    starts = np.flatnonzero(np.r_[True, member_copy[1:] != member_copy[:-1]])
    per_pair = np.diff(np.r_[starts, len(member_copy)])
    return offset, scale, noise, column, value, sd, starts, per_pair


def _simulate(score: np.ndarray, spread: np.ndarray, pool: tuple[np.ndarray, ...],
              member_copy: np.ndarray, member_tranche: np.ndarray, n_tranches: int,
              max_raters: int, rng: np.random.Generator, *, extras: bool = False):
    """Simulated studies, one per row of ``score`` and ``spread`` (studies x pairs), each of
    two groups of ``max_raters`` raters per tranche drawn from its row of ``pool`` (``offset,
    scale, noise``, studies x raters; distinct when there are enough; fresh noise), read for
    every k = 1..K as the first k raters of each group (common random numbers: a smooth curve).
    ``member_copy`` indexes the flattened studies x pairs (sorted: a pair's memberships
    together), ``member_tranche`` the tranche each membership's raters come from.

    Returns the Spearman of the two groups' pair means (studies x K) and, with ``extras``, group
    A's mean 95 % CI width of a pair mean and its IAA-2 (studies x K; NaN for k = 1; every
    study must then have as many memberships)."""
    studies, n = score.shape
    k_max = max_raters
    offset, scale, noise, column, value, sd, starts, per_pair = _drawn_raters(
        score, spread, pool, member_copy, member_tranche, n_tranches, k_max, rng)
    scores = rng.standard_normal((2 * k_max, len(member_copy)))
    scores *= np.sqrt(noise)[:, column] * sd
    scores += offset[:, column] + scale[:, column] * value
    ks = np.arange(1, k_max + 1)[:, None]
    sum_a = np.cumsum(scores[:k_max], axis=0)
    mean_a = np.add.reduceat(sum_a / ks, starts, axis=1) / per_pair
    mean_b = np.add.reduceat(np.cumsum(scores[k_max:], axis=0) / ks, starts, axis=1) / per_pair
    reliability = _spearman(mean_a.reshape(k_max, studies, n),
                            mean_b.reshape(k_max, studies, n), axis=-1).T
    if not extras:
        return reliability
    from scipy.special import stdtrit

    rows = len(member_copy) // studies
    width, iaa2 = np.full((k_max, studies), np.nan), np.full((k_max, studies), np.nan)
    with np.errstate(invalid="ignore", divide="ignore"):
        variance = (np.cumsum(scores[:k_max] ** 2, axis=0) - sum_a ** 2 / ks) / (ks - 1)
        half = stdtrit(np.maximum(ks - 1, 1), 0.975) * np.sqrt(np.maximum(variance, 0.0)) \
            / np.sqrt(ks)
    width[1:] = 2 * half.reshape(k_max, studies, rows).mean(axis=-1)[1:]
    # IAA-2: each of the first k raters against the mean of the other k - 1
    group = scores[:k_max].reshape(k_max, studies, rows)
    rater_ranks = _centred(average_ranks(group))
    for k in ks[1:, 0]:
        others = (sum_a[k - 1].reshape(studies, rows) - group[:k]) / (k - 1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            iaa2[k - 1] = np.nanmean(
                _correlation(rater_ranks[:k], _centred(average_ranks(others))), axis=0)
    return reliability, width.T, iaa2.T


#: floats of simulated ratings :func:`_simulated_reliability` holds at a time
SIMULATION_FLOATS = 2 ** 22


def _simulated_reliability(score: np.ndarray, spread: np.ndarray, pool: tuple[np.ndarray, ...],
                           member_copy: np.ndarray, member_tranche: np.ndarray,
                           n_tranches: int, max_raters: int, rng: np.random.Generator,
                           ks) -> np.ndarray:
    """:func:`_simulate`'s reliability (studies x K) at the ``ks`` wanted only (NaN at the
    others), from the same draws in the same order: the raters' ratings are drawn a block of
    rater slots at a time and each group's running sums kept, so memory is a block of
    simulated ratings and the wanted ks' pair means, whatever ``max_raters``."""
    studies, n = score.shape
    k_max = max_raters
    offset, scale, noise, column, value, sd, starts, per_pair = _drawn_raters(
        score, spread, pool, member_copy, member_tranche, n_tranches, k_max, rng)
    wanted = np.array(sorted(set(int(k) for k in ks if 1 <= k <= k_max)))
    means = np.empty((2, len(wanted), studies * n))
    block = max(1, SIMULATION_FLOATS // max(len(member_copy), 1))
    for group in (0, 1):
        running = np.zeros(len(member_copy))
        for first in range(0, k_max, block):
            last = min(first + block, k_max)
            slots = np.arange(first, last) + group * k_max
            scores = rng.standard_normal((len(slots), len(member_copy)))
            scores *= np.sqrt(noise)[slots][:, column] * sd
            scores += offset[slots][:, column] + scale[slots][:, column] * value
            scores[0] += running
            sums = np.cumsum(scores, axis=0)
            running = sums[-1].copy()
            for i in np.flatnonzero((wanted > first) & (wanted <= last)):
                k = wanted[i]
                means[group, i] = np.add.reduceat(sums[k - 1 - first] / k, starts) / per_pair
    reliability = np.full((k_max, studies), np.nan)         # laid out as _simulate's
    reliability[wanted - 1] = _spearman(means[0].reshape(len(wanted), studies, n),
                                        means[1].reshape(len(wanted), studies, n))
    return reliability.T


def _model_reliability(ratings: pd.DataFrame, max_raters: int, *, rng: np.random.Generator,
                       simulations: int, ks) -> np.ndarray:
    """:func:`reliability_curve`'s ``reliability`` without an interval (``replicates=0``) at
    the ``ks`` wanted (NaN at the others): the same figures from the same random numbers,
    without the width and IAA-2 it does not need (:func:`_simulated_reliability`)."""
    pilot = _pilot(ratings)
    model = _fit(pilot)
    studies = max(simulations, 1)
    picked = np.broadcast_to(np.arange(pilot.n_pairs), (studies, pilot.n_pairs))
    member_copy, member_tranche = _memberships(pilot, picked)
    reliability = _simulated_reliability(
        np.broadcast_to(model.score, picked.shape), np.broadcast_to(model.spread, picked.shape),
        tuple(np.broadcast_to(v, (studies, len(v)))
              for v in (model.offset, model.scale, model.noise)),
        member_copy, member_tranche, pilot.n_tranches, max_raters, rng, ks)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)     # the ks not wanted: all NaN
        return np.nanmean(reliability, axis=0)


def _spearman(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
    """Spearman rho between ``a`` and ``b`` along ``axis`` (NaN for a constant slice)."""
    a, b = np.moveaxis(a, axis, -1), np.moveaxis(b, axis, -1)
    return _correlation(_centred(average_ranks(a)), _centred(average_ranks(b)))


def _centred(values: np.ndarray) -> np.ndarray:
    return values - values.mean(axis=-1, keepdims=True)


def _correlation(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pearson r of ``a`` and ``b`` (centred) along the last axis."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return (a * b).sum(axis=-1) / np.sqrt((a ** 2).sum(axis=-1) * (b ** 2).sum(axis=-1))


def _memberships(pilot: _Pilot, picked: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The (pair, tranche) memberships of studies whose pairs are ``picked`` (studies x
    pairs, pilot pair indices): each copy's index in the flattened studies x pairs and the
    tranche, a copy's memberships together."""
    per_pair = np.bincount(pilot.member_pair, minlength=pilot.n_pairs)
    first = np.r_[0, np.cumsum(per_pair)[:-1]]
    counts = per_pair[picked.ravel()]
    member_copy = np.repeat(np.arange(picked.size), counts)
    within = np.arange(len(member_copy)) - np.repeat(np.cumsum(counts) - counts, counts)
    rows = np.repeat(first[picked.ravel()], counts) + within
    return member_copy, pilot.member_tranche[rows]


def _bootstrap(pilot: _Pilot, model: RatingModel, replicates: int, max_raters: int,
               rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """The reliability curves (replicates x K), and the steps each fit took, of a batch of
    bootstrap replicates: pairs resampled and the model refitted (from the pilot's raters'
    ``a, s``), then the pool of raters resampled among the raters the replicate has ratings of;
    a row of NaN where a replicate cannot be fitted."""
    n = pilot.n_pairs
    picked = rng.integers(0, n, size=(replicates, n))
    copies = np.bincount((picked + n * np.arange(replicates)[:, None]).ravel(),
                         minlength=replicates * n).reshape(replicates, n)
    models = _models(pilot, copies, (model.offset, model.scale))
    curves = np.full((replicates, max_raters), np.nan)
    ok = np.flatnonzero(models.valid)
    if not len(ok):
        return curves, models.steps
    present = models.present[ok]
    order = np.argsort(~present, axis=1, kind="stable")         # present raters first
    slot = (rng.random(present.shape) * present.sum(axis=1)[:, None]).astype(int)
    pool = np.take_along_axis(order, slot, axis=1)
    raters = tuple(np.take_along_axis(v[ok], pool, axis=1)
                   for v in (models.offset, models.scale, models.noise))
    picked = picked[ok]
    member_copy, member_tranche = _memberships(pilot, picked)
    curves[ok] = _simulate(np.take_along_axis(models.score[ok], picked, axis=1),
                           np.take_along_axis(models.spread[ok], picked, axis=1), raters,
                           member_copy, member_tranche, pilot.n_tranches, max_raters, rng)
    return curves, models.steps


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
        A tqdm bar on stderr over the bootstrap once it has run :data:`PROGRESS_DELAY`
        seconds (None: only on a terminal; False: never).

    Returns
    -------
    pandas.DataFrame
        One row per ``raters`` = k (1..K): ``reliability`` (expected Spearman between the pair
        means of two disjoint groups of k raters; best 1), ``low``, ``high`` (percentile
        bootstrap interval), ``ci_width`` (expected width of a pair mean's 95 % t interval,
        on the rating scale; NaN for k = 1), ``iaa2`` (expected IAA-2 of a k-rater study,
        HyperLex section 5; NaN for k = 1). ``attrs["steps"]``: the least-squares steps the
        pilot's fit took, ``attrs["replicate_steps"]`` each bootstrap replicate's
        (:data:`STEP_CAP`: still moving, see :func:`_least_squares`).

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
    studies = max(simulations, 1)
    picked = np.broadcast_to(np.arange(pilot.n_pairs), (studies, pilot.n_pairs))
    member_copy, member_tranche = _memberships(pilot, picked)
    reliability, width, iaa2 = _simulate(
        np.broadcast_to(model.score, picked.shape), np.broadcast_to(model.spread, picked.shape),
        tuple(np.broadcast_to(v, (studies, len(v)))
              for v in (model.offset, model.scale, model.noise)),
        member_copy, member_tranche, pilot.n_tranches, max_raters, rng, extras=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)     # k = 1: no width, no IAA-2
        frame = pd.DataFrame({"raters": ks, "reliability": np.nanmean(reliability, axis=0),
                              "ci_width": np.nanmean(width, axis=0),
                              "iaa2": np.nanmean(iaa2, axis=0)})
    boot = np.full((replicates, len(ks)), np.nan)
    steps = np.zeros(replicates, dtype=int)
    batch = max(1, BATCH_FLOATS // max(len(pilot.value), 2 * max_raters * len(pilot.member_pair),
                                       pilot.n_tranches * pilot.n_raters))
    from tqdm import tqdm

    with tqdm(total=replicates, desc="plan: bootstrap", unit=" replicates", leave=False,
              delay=PROGRESS_DELAY, file=sys.stderr,
              disable=None if progress is None else not progress) as bar:
        for first in range(0, replicates, batch):
            size = min(batch, replicates - first)
            boot[first:first + size], steps[first:first + size] = _bootstrap(
                pilot, model, size, max_raters, rng)
            bar.update(size)
    alpha = (1 - level) / 2
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)     # a k no replicate could fit
        low = np.nanquantile(boot, alpha, axis=0) if replicates else np.full(len(ks), np.nan)
        high = np.nanquantile(boot, 1 - alpha, axis=0) if replicates else np.full(len(ks), np.nan)
    frame["low"], frame["high"] = low, high
    frame = frame[list(CURVE_COLUMNS)]
    frame.attrs["steps"] = model.steps
    frame.attrs["replicate_steps"] = steps
    return frame


#: random subsets of the pilot's raters the planner's choice is cross-validated on
FOLDS = 12
#: random splits of the pilot into two groups for the reliability it shows itself
PILOT_SPLITS = 40
#: the methods the planner chooses between
METHODS = ("model", "spearman-brown")


def _rater_order(answered: pd.DataFrame, anonymous: bool, rng: np.random.Generator) -> np.ndarray:
    """Each rating's place among its pair's ratings in a random order of the raters (of the
    ratings themselves without rater identity): 0 first."""
    if anonymous:
        key = rng.random(len(answered))
    else:
        codes, ids = pd.factorize(answered["rater_id"])
        key = rng.permutation(len(ids))[codes].astype(float)
    ranked = pd.Series(key, index=answered.index).groupby(
        [answered[c] for c in ITEM], sort=False).rank(method="first")
    return ranked.to_numpy(dtype=int) - 1


def _pilot_reliability(answered: pd.DataFrame, k: int, anonymous: bool,
                       rng: np.random.Generator, splits: int = PILOT_SPLITS) -> float:
    """The Spearman between the pair means of two disjoint groups of ``k`` of the pilot's
    raters, over ``splits`` random splits (pairs with ``2k`` ratings or more)."""
    found = []
    for _ in range(splits):
        place = _rater_order(answered, anonymous, rng)
        group = np.where(place < k, 0, np.where(place < 2 * k, 1, -1))
        part = answered.assign(group=group)[group >= 0]
        means = part.groupby([*ITEM, "group"], sort=False)["rating"].agg(["mean", "size"])
        means = means[means["size"] == k]["mean"].unstack("group").dropna()
        if len(means) >= 3:
            found.append(float(_spearman(means[0].to_numpy(), means[1].to_numpy())))
    return float(np.nanmean(found)) if found else math.nan


def spearman_brown_curve(answered: pd.DataFrame, max_raters: int, anonymous: bool,
                         rng: np.random.Generator) -> np.ndarray:
    """Spearman-Brown's reliability for k = 1..``max_raters``: the mean Pearson between the
    pilot's raters (their shared pairs, 3 or more; between the places of a random order of each
    pair's ratings without rater identity) stepped up to k, ``k r / (1 + (k - 1) r)``
    (Spearman 1910, Brown 1910)."""
    column = _rater_order(answered, anonymous, rng) if anonymous else answered["rater_id"]
    r1 = mean_pairwise_pearson(answered, column)
    k = np.arange(1, max_raters + 1)
    return k * r1 / (1 + (k - 1) * r1)


#: floats a block of :func:`mean_pairwise_pearson`'s sums may hold per array (bounds memory)
PEARSON_BLOCK_FLOATS = 2 ** 19


def mean_pairwise_pearson(answered: pd.DataFrame, column, min_periods: int = 3) -> float:
    """The mean Pearson correlation between every two raters over the pairs both rated
    (``min_periods`` or more; a rater constant there has none): what ``pandas.DataFrame.corr
    (min_periods=...)`` of the pairs x raters table of mean ratings gives, averaged off its
    diagonal (NaN when no two raters qualify).

    From sums, never the raters x raters table nor a dense pairs x raters one: for a block of
    raters (ordered by the pairs they rate, so a block's raters share most of them) and only
    the pairs the block rated, the shared count and each side's sum and sum of squares and the
    cross products against every rater are matrix products of the 0/1 and rating tables, so
    ``r = (Sxy - Sx Sy / n) / sqrt((Sxx - Sx^2 / n)(Syy - Sy^2 / n))``.

    ``column``: each rating's rater (an array or Series aligned with ``answered``).
    """
    from scipy import sparse

    first_word, _ = pd.factorize(answered["word1"])
    second_word, seconds = pd.factorize(answered["word2"])
    pair, _ = pd.factorize(first_word.astype(np.int64) * max(len(seconds), 1) + second_word)
    rater, raters = pd.factorize(np.asarray(column))
    n, m = int(pair.max()) + 1 if len(pair) else 0, len(raters)
    if m < 2:
        return math.nan
    cell, first = pd.factorize(rater.astype(np.int64) * n + pair)   # a rater's mean per pair
    value = pd.Series(answered["rating"].to_numpy(float)).groupby(cell, sort=False).mean()
    cells = np.unique(cell, return_index=True)[1]
    rows, cols, y = pair[cells], rater[cells], value.to_numpy(float)
    low = np.full(m, n)
    np.minimum.at(low, cols, rows)
    high = np.zeros(m, dtype=int)
    np.maximum.at(high, cols, rows)
    place = np.empty(m, dtype=np.int64)                 # raters of the same pairs together
    place[np.lexsort((high, low))] = np.arange(m)
    cols = place[cols]
    ones = sparse.csr_array((np.ones(len(y)), (rows, cols)), shape=(n, m))
    values = sparse.csr_array((y, (rows, cols)), shape=(n, m))
    squares = sparse.csr_array((y * y, (rows, cols)), shape=(n, m))
    by_rater = sparse.csc_array((np.ones(len(y)), (rows, cols)), shape=(n, m))
    size = max(1, PEARSON_BLOCK_FLOATS // max(m, 1))
    total, count, last = 0.0, 0, None
    for start in range(0, m, size):
        block = slice(start, min(start + size, m))
        own = np.unique(by_rater[:, block].indices)     # the pairs the block rated
        if last is None or not np.array_equal(own, last):   # else the block before's pairs
            o_all, x_all, xx_all = (v[own].toarray() for v in (ones, values, squares))
            last = own
        # each block against itself and the raters after it: every two raters once
        o, x, xx = o_all[:, block], x_all[:, block], xx_all[:, block]
        o_on, x_on, xx_on = o_all[:, start:], x_all[:, start:], xx_all[:, start:]
        shared = o.T @ o_on
        sx, sy = x.T @ o_on, o.T @ x_on
        sxx, syy = xx.T @ o_on, o.T @ xx_on
        sxy = x.T @ x_on
        with np.errstate(invalid="ignore", divide="ignore"):
            vx = sxx - sx * sx / shared
            vy = syy - sy * sy / shared
            # a rater constant on the shared pairs: no correlation (rounding aside)
            vx = np.where(vx > 1e-12 * sxx, vx, 0.0)
            vy = np.where(vy > 1e-12 * syy, vy, 0.0)
            r = (sxy - sx * sy / shared) / np.sqrt(vx * vy)
        after = np.arange(shared.shape[1])[None, :] > np.arange(shared.shape[0])[:, None]
        keep = after & (shared >= min_periods) & np.isfinite(r)
        total += float(r[keep].sum())
        count += int(keep.sum())
    return total / count if count else math.nan


def _raters_per_pair(answered: pd.DataFrame) -> int:
    return int(np.median(answered.groupby(list(ITEM), sort=False).size()))


def cross_validation_design(answered: pd.DataFrame, anonymous: bool) -> dict | None:
    """How the planner's choice is cross-validated inside a pilot, or None when it cannot be.

    The pilot has ``m`` raters per pair (the median); subsets of ``fitted`` = max(3, m // 2)
    of them (at most m - 1; 2 allowed without rater identity) predict the reliability of two
    disjoint groups of ``k`` raters, the largest k that 30 pairs or more have 2k ratings for,
    which the whole pilot measures (:func:`_pilot_reliability`)."""
    m = _raters_per_pair(answered)
    counts = answered.groupby(list(ITEM), sort=False).size().to_numpy()
    reach = [k for k in range(1, m // 2 + 1) if (counts >= 2 * k).sum() >= MIN_PAIRS]
    fitted = min(m - 1, max(2 if anonymous else MIN_RATERS, m // 2))
    if not reach or fitted < (2 if anonymous else MIN_RATERS) or fitted >= m:
        return None
    return {"raters": m, "raters_fitted": fitted, "k": max(reach)}


def _subset(answered: pd.DataFrame, fitted: int, anonymous: bool,
            rng: np.random.Generator) -> pd.DataFrame:
    """``fitted`` raters per pair: without rater identity ``fitted`` random ratings of each
    pair; with it, ``fitted`` raters of each tranche (at most all but one), all their ratings."""
    if anonymous:
        return answered[_rater_order(answered, True, rng) < fitted]
    tranche = answered.groupby("rater_id", sort=False)["tranche"].agg(
        lambda t: t.mode().iloc[0])
    keep = []
    for _, raters in tranche.groupby(tranche):
        ids = raters.index.to_numpy()
        keep.extend(rng.permutation(ids)[:min(fitted, max(len(ids) - 1, 1))])
    return answered[answered["rater_id"].isin(keep)]


def choose_method(ratings: pd.DataFrame, max_raters: int, *, rng: np.random.Generator,
                  level: float = 0.9, folds: int = FOLDS, simulations: int = 20,
                  model_curve: np.ndarray | None = None) -> dict:
    """Cross-validate the planner's model against Spearman-Brown inside the pilot, and the
    interval of the chosen method from the spread of its predictions over the pilot's subsets.

    Each of ``folds`` random subsets of ``fitted`` of the pilot's ``m`` raters per pair
    (:func:`cross_validation_design`) gives both methods' curves; each method's error is the
    mean absolute difference between its prediction at ``k`` and the reliability the whole pilot
    shows at ``k`` (two disjoint groups of k of its raters); the method with the smaller error
    is chosen. The interval: the delete-d jackknife (Shao & Wu 1989, "A general theory for
    jackknife variance estimation", Ann. Statist. 17(3)) over the subsets, the variance of the
    whole pilot's prediction ``fitted / (m - fitted)`` times the mean squared deviation of the
    subsets' predictions from their mean, with Student's t quantile on one degree of freedom
    fewer than the distinct subsets drawn (4 of a 4-rater pilot's subsets of 3 are distinct):
    the spread from drawing the pilot's raters (its pairs are the study's), not a bound.

    Returns
    -------
    dict
        ``design`` (:func:`cross_validation_design`, None when the pilot cannot be
        cross-validated: then ``chosen`` is ``"model"`` and no interval is given), ``observed``
        (the pilot's own reliability at k), ``error`` (per method), ``chosen``, ``why``,
        ``curves`` (per method, the whole pilot's prediction for k = 1..K) and ``low``,
        ``high`` (the chosen method's interval per k; NaN without a design).
        ``model_curve``: the model's curve of the whole pilot when already computed.
    """
    from scipy.special import stdtrit

    answered = answers(check_ratings(ratings))
    anonymous = is_anonymous(answered)
    ks = np.arange(1, max_raters + 1)
    model = (reliability_curve(ratings, max_raters, rng=rng, replicates=0,
                               simulations=simulations)["reliability"].to_numpy()
             if model_curve is None else np.asarray(model_curve, dtype=float))
    curves = {"model": model,
              "spearman-brown": spearman_brown_curve(answered, max_raters, anonymous, rng)}
    design = cross_validation_design(answered, anonymous)
    nan = np.full(len(ks), np.nan)
    result = {"design": design, "observed": None, "error": {m: None for m in METHODS},
              "chosen": "model", "curves": curves, "low": nan, "high": nan.copy()}
    if design is None:
        result["why"] = ("the pilot has too few raters per pair to cross-validate (4 or more "
                         "on 30 pairs needed); the model, with its bootstrap interval")
        return result
    k, fitted, m = design["k"], design["raters_fitted"], design["raters"]
    observed = _pilot_reliability(answered, k, anonymous, rng)
    top = max(max_raters, k)
    predicted = {name: np.full((folds, top), np.nan) for name in METHODS}
    for fold in range(folds):
        part = _subset(answered, fitted, anonymous, rng)
        try:
            predicted["model"][fold] = _model_reliability(
                part, top, rng=rng, simulations=simulations, ks=[*range(1, max_raters + 1), k])
        except InputError:
            continue
        predicted["spearman-brown"][fold] = spearman_brown_curve(part, top, anonymous, rng)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        error = {name: float(np.nanmean(np.abs(p[:, k - 1] - observed)))
                 for name, p in predicted.items()}
    chosen = min(METHODS, key=lambda name: (np.nan_to_num(error[name], nan=np.inf),
                                            name != "model"))
    spread = predicted[chosen][:, :max_raters]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        deviation = np.nanmean((spread - np.nanmean(spread, axis=0)) ** 2, axis=0)
    distinct = math.comb(m, fitted) if not anonymous else folds
    quantile = stdtrit(max(min(folds, distinct) - 1, 1), 0.5 + level / 2)
    half = quantile * np.sqrt(deviation * fitted / (m - fitted))
    point = curves[chosen]
    other = "spearman-brown" if chosen == "model" else "model"
    result.update(observed=observed, error=error, chosen=chosen,
                  low=np.clip(point - half, -1, 1), high=np.clip(point + half, -1, 1),
                  why=(f"{folds} random subsets of {fitted} of the pilot's {m} raters per pair "
                       f"predicted the {k}-rater reliability the whole pilot shows "
                       f"({observed:.3f}): {chosen} off by {error[chosen]:.3f} on average, "
                       f"{other} by {error[other]:.3f}"))
    return result


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
        rating scale), ``method`` (the method chosen by cross-validation inside the pilot and
        why, both methods' predictions per k, :func:`choose_method`; ``curve`` holds the
        chosen one's figures and interval), ``aggregate_model`` (what ``aggregate = "model"``
        would save on this pilot, :func:`lexgold.process.aggregate.model_saving`), ``pilot``
        (raters, pairs, ratings per pair, pairs with two or more ratings, ``scale`` [low,
        high]), ``too_small`` (why the pilot cannot tell the raters needed, :func:`too_small`;
        None when it can) and ``cost`` (``pairs, seconds_per_pair, seconds_measured,
        pay_per_hour, hours, amount`` for ``raters_needed`` raters; None figures when unknown).
    """
    checked = check_ratings(ratings)
    design = cross_validation_design(answers(checked), is_anonymous(checked))
    curve = reliability_curve(checked, max_raters, rng=rng,
                              replicates=replicates if design is None else 0, level=level,
                              progress=progress)
    choice = choose_method(checked, max_raters, rng=rng, level=level,
                           model_curve=curve["reliability"].to_numpy())
    if design is not None:
        curve = curve.assign(reliability=choice["curves"][choice["chosen"]],
                             low=choice["low"], high=choice["high"])
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
        "method": _method_record(choice),
        "aggregate_model": model_saving(answers(checked), rng=rng),
        "too_small": too_small(curve, pilot, needed),
        "cost": {"pairs": study_pairs, "raters": needed, "seconds_per_pair": _figure(seconds),
                 "seconds_measured": measured and not math.isnan(seconds),
                 "pay_per_hour": pay_per_hour, "hours": _figure(hours),
                 "amount": _figure(amount)},
    }


def _method_record(choice: dict) -> dict:
    """``--json``'s ``method``: what was chosen and why, both methods' predictions and the
    cross-validation (:func:`choose_method`)."""
    design = choice["design"]
    return {"chosen": choice["chosen"], "why": choice["why"],
            "interval": "bootstrap" if design is None else "jackknife",
            "cross_validation": None if design is None else {
                **design, "observed": _figure(choice["observed"]),
                "error": {name: _figure(e) for name, e in choice["error"].items()}},
            "predictions": [{"raters": k + 1, **{name: _figure(curve[k]) for name, curve
                                                 in choice["curves"].items()}}
                            for k in range(len(choice["curves"]["model"]))]}


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
    if result.get("machine"):             # lexgold.process.plan_machine: approximate
        shown = pd.DataFrame(result["machine"]["curve"]).dropna()
        axes.plot(shown["raters"], shown["reliability"].astype(float), marker=".",
                  linestyle="--", label="with the machine as a prior (approx.)")
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.set_xlabel("raters per pair (k)")
    axes.set_ylabel("Spearman between two groups of k raters")
    axes.set_title(f"pilot: {result['pilot']['pairs']} pairs, "
                   f"{result['pilot']['ratings_per_pair']:.1f} ratings per pair")
    axes.legend(loc="lower right")
    axes.grid(alpha=0.3)
    figure.tight_layout()
    return figure


def plan_summary_lines(result: dict) -> list[str]:
    """``lexgold plan``'s text output."""
    def show(value):
        return "n/a" if value is None else f"{value:.3f}"

    low_end, high_end = result["pilot"]["scale"]
    span = high_end - low_end
    column = f"pair-mean 95% CI width ({low_end:g}-{high_end:g} scale)"
    lines = [f"raters  reliability  [{result['level']:.0%} interval]  model  Spearman-Brown  "
             f"{column}  IAA-2"]
    wider = False
    for row, extra, both in zip(result["curve"], result["details"],
                                result["method"]["predictions"]):
        width = show(extra["ci_width"])
        if extra["ci_width"] is not None and extra["ci_width"] > span:
            width, wider = width + "*", True
        lines.append(f"{row['raters']:>6}  {show(row['reliability']):>11}  [{show(row['low'])}, "
                     f"{show(row['high'])}]  {show(both['model']):>5}  "
                     f"{show(both['spearman-brown']):>14}  {width:>{len(column)}}  "
                     f"{show(extra['iaa2'])}")
    if wider:
        lines.append(f"* wider than the whole {low_end:g}-{high_end:g} scale: k ratings give a "
                     "t interval on k - 1 degrees of freedom (t = 12.71 for k = 2)")
    method = result["method"]
    lines.append(f"reliability from {method['chosen']} ({method['interval']} interval): "
                 f"{method['why']}")
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
        if cost["seconds_measured"] and result.get("simulated"):
            source = "measured on simulated raters, not people"
        text = (f"time: {cost['pairs']} pairs x {needed} raters x "
                f"{cost['seconds_per_pair']:.1f} s ({source}) = {cost['hours']:.1f} hours")
        if cost["amount"] is not None:
            text += f"; cost at {cost['pay_per_hour']:g} per hour: {cost['amount']:.2f}"
        lines.append(text)
    elif needed is not None:
        lines.append("time and cost: no times in the ratings; give --seconds-per-pair")
    if result["pilot"]["raters"] is not None:
        lines.append(saving_line(result["aggregate_model"]))
    if result["too_small"]:
        lines.append(f"too small to tell: {result['too_small']}; pilot more pairs or raters "
                     "before trusting the raters needed")
    return lines
