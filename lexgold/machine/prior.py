"""``machine-prior``: each pair's human mean shrunk toward the machine's calibrated score, with
the weight estimated from the data (empirical Bayes).

Calibration (:func:`calibrate_machine`): the machine's number ``x_i`` is mapped to the human scale by
the least-squares line of the pairs' human means on it, ``c_i = a + b x_i``, fitted on the pairs
that have both, so a machine on any scale (GPT-4's 0-10, cosines in -1 .. 1) lands on the
humans' (a 0-6 crowd); a machine that knows nothing gets ``b`` near 0 and ``c_i`` near the grand
mean.

Shrinkage (:func:`posterior`): the human mean ``m_i`` of ``n_i`` ratings has sampling variance
``s_i = sigma^2 / n_i`` (``sigma^2`` the pooled within-pair rating variance); the pairs' true
scores scatter around the calibrated machine with variance ``tau^2``, estimated by the method
of moments from the residuals ``r_i = m_i - c_i``,
``tau^2 = max(0, sum r_i^2 / (N - 2) - mean(s_i))``. Each pair's posterior mean is

    ``theta_i = w_i m_i + (1 - w_i) c_i``,  ``w_i = tau^2 / (tau^2 + s_i)``,

with posterior variance ``w_i s_i`` (Efron & Morris 1975, sections 2-3; James & Stein 1961).
A strong machine (small ``tau^2``) pulls hard; a weak one (``tau^2`` large against ``s_i``)
leaves the human means nearly as they are. Pairs the machine does not cover are shrunk toward
their grand mean the same way (James-Stein with no machine; :func:`posterior`'s Notes say
why); with no machine at all every pair is.

References
----------
Efron, B. & Morris, C. (1975). Data analysis using Stein's estimator and its generalizations.
JASA 70(350), 311-319.
James, W. & Stein, C. (1961). Estimation with quadratic loss. Proc. Fourth Berkeley Symposium 1,
361-379.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from lexgold.errors import InputError
from lexgold.stats import least_squares_line

Z95 = 1.959963984540054


def machine_for(pairs: pd.DataFrame, scores: pd.DataFrame) -> np.ndarray:
    """The machine's number for each row of ``pairs`` (``word1, word2``), NaN where ``scores``
    (``word1, word2, machine``, as :func:`lexgold.machine.ratings.read_machine` gives) has no
    such pair: matched as ``lexgold evaluate --scores`` matches a score file
    (:func:`lexgold.evaluate.scores.score_pairs`, case-insensitively): in the same order, else
    reversed unless the reverse is a pair of ``pairs`` of its own (SimVerb-3500 rates some pairs
    in both orders).

    >>> pairs = pd.DataFrame({"word1": ["cat", "sun", "moon"], "word2": ["dog", "moon", "sun"]})
    >>> scores = pd.DataFrame({"word1": ["Dog", "moon"], "word2": ["cat", "sun"],
    ...                        "machine": [7.0, 8.0]})
    >>> machine_for(pairs, scores).tolist()
    [7.0, nan, 8.0]
    """
    from lexgold.evaluate.scores import score_pairs

    gold = pd.DataFrame({"word1": pairs["word1"].astype(str).to_numpy(),
                         "word2": pairs["word2"].astype(str).to_numpy(), "score": np.nan})
    found = score_pairs(gold, scores.rename(columns={"machine": "score"}), case="lower")
    return found["model"].to_numpy(float)


def calibrate_machine(machine, human) -> tuple[float, float]:
    """The line ``human = a + b machine`` fitted by least squares on the pairs where both are
    finite: ``b = cov(x, m) / var(x)``, ``a = mean(m) - b mean(x)``.

    Returns
    -------
    (a, b) : tuple of float
        Intercept and slope on the human scale.

    Raises
    ------
    InputError
        Fewer than 3 pairs with both, or a machine that gives them all the same number.

    >>> calibrate_machine([0, 5, 10], [0.0, 3.0, 6.0])
    (0.0, 0.6)
    """
    x, m = np.asarray(machine, float), np.asarray(human, float)
    both = np.isfinite(x) & np.isfinite(m)
    if both.sum() < 3:
        raise InputError(f"{int(both.sum())} pairs have both a machine score and human "
                         "ratings; calibrating the machine needs 3 or more", field="machine")
    x, m = x[both], m[both]
    if np.ptp(x) == 0:
        raise InputError("the machine gives every rated pair the same number "
                         f"({x[0]:g}): it cannot be calibrated", field="machine")
    b, a = least_squares_line(x, m)
    return a, b


def between_variance(residuals, noise) -> float:
    """``tau^2``: the variance of the pairs' true scores around the calibrated machine, by the
    method of moments: ``max(0, sum r_i^2 / (N - 2) - mean(s_i))`` (two degrees of freedom
    spent on the calibration line).

    >>> between_variance([1.0, -1.0, 1.0, -1.0], [0.5, 0.5, 0.5, 0.5])
    1.5
    >>> between_variance([0.1, -0.1, 0.1, -0.1], [0.5, 0.5, 0.5, 0.5])
    0.0
    """
    r, s = np.asarray(residuals, float), np.asarray(noise, float)
    if len(r) < 3:
        return float("nan")
    return max(0.0, float(np.dot(r, r) / (len(r) - 2) - s.mean()))


def pooled_variance(values: np.ndarray) -> float:
    """The pooled within-pair rating variance ``sigma^2`` of a pairs x ratings matrix (NaN:
    no rating): ``sum_i sum_j (y_ij - m_i)^2 / sum_i (n_i - 1)``; NaN when no pair has two
    ratings.

    >>> pooled_variance(np.array([[1.0, 3.0], [2.0, np.nan], [4.0, 4.0]]))
    1.0
    """
    values = np.asarray(values, float)
    n = np.isfinite(values).sum(axis=1)
    rated = n > 0
    means = np.full(len(values), np.nan)
    means[rated] = np.nanmean(values[rated], axis=1)
    squares = np.nansum((values - means[:, None]) ** 2, axis=1)
    df = np.clip(n - 1, 0, None).sum()
    return float(squares.sum() / df) if df > 0 else float("nan")


def posterior(means, noise, machine) -> pd.DataFrame:
    """The empirical-Bayes posterior of each pair's score (module docstring).

    Parameters
    ----------
    means : array of float
        Each pair's human mean ``m_i``.
    noise : array of float
        Its sampling variance ``s_i = sigma^2 / n_i``.
    machine : array of float
        The machine's number on its own scale, NaN where it has none (all NaN: no machine).

    Returns
    -------
    pandas.DataFrame
        One row per pair: ``calibrated`` (``c_i``, NaN without a machine score), ``weight``
        (``1 - w_i``, the share of the prior mean in the posterior), ``posterior``
        (``theta_i``), ``posterior_sd`` (``sqrt(w_i s_i)``), ``low``, ``high`` (the 95 %
        interval ``theta_i -/+ 1.96 posterior_sd``). ``attrs``: ``a``, ``b`` (calibration),
        ``tau2``, ``tau2_0`` (the variance around the grand mean), ``covered`` (pairs with a
        machine score).

    Notes
    -----
    A pair the machine does not cover is shrunk the same way toward the grand mean ``g`` of the
    uncovered pairs' human means, with ``tau_0^2 = max(0, var(m) - mean(s))`` over them (the
    James-Stein estimator with no machine): left as plain means they would keep their spread
    while the covered pairs' is pulled in, and a weak machine, whose calibrated score is about
    the grand mean, would scramble the order of covered against uncovered pairs (measured:
    docs/process.md). The interval is conditional on the fitted line and variances (their own
    uncertainty, small with hundreds of pairs, is left out). With ``tau^2 = 0`` the machine
    takes a covered pair's whole weight: the human means scatter around it no more than their
    noise does.

    Every pull, toward the machine or toward the grand mean, is scaled by the share of the
    covered pairs' between-pair variance the machine explains, ``lambda = max(0, 1 - tau^2 /
    tau_c^2)`` (``tau_c^2`` their variance around their own mean beyond noise), as
    :func:`lexgold.machine.allocate.machine_gain` weighs its term: a machine that explains
    nothing leaves every released score a human mean. Without it a weak machine cost 15-20 % of
    the ratings at equal MAE on Card-660, whose unanimous pairs at the ends of the scale the
    pull toward the middle moved (docs/process.md).

    >>> fit = posterior([1.0, 3.0, 5.0, 3.0], [0.5] * 4, [0.0, 1.0, 2.0, np.nan])
    >>> fit.attrs["b"], fit["weight"].tolist()[:3]
    (2.0, [1.0, 1.0, 1.0])
    >>> fit["posterior"].tolist()
    [1.0, 3.0, 5.0, 3.0]
    """
    m = np.asarray(means, float)
    s = np.asarray(noise, float)
    x = np.asarray(machine, float)
    covered = np.isfinite(x) & np.isfinite(m)
    a, b = calibrate_machine(x, m) if covered.any() else (np.nan, np.nan)
    c = np.where(covered, a + b * np.where(covered, x, 0.0), np.nan)
    tau2 = between_variance((m - c)[covered], s[covered]) if covered.any() else np.nan
    rest = ~covered & np.isfinite(m)
    grand, tau2_0 = np.nan, np.nan
    if rest.sum() >= 2:
        grand = float(m[rest].mean())
        tau2_0 = max(0.0, float(np.var(m[rest], ddof=1) - s[rest].mean()))
    center = np.where(covered, c, grand)
    spread = np.where(covered, tau2, tau2_0)
    with np.errstate(invalid="ignore", divide="ignore"):
        human = np.where(s + spread > 0, spread / (s + spread), 1.0)
    human = np.where(np.isfinite(center) & np.isfinite(human), human, 1.0)
    explained = 0.0
    if covered.sum() >= 3:                # the machine's share of the between-pair variance
        between = max(0.0, float(np.var(m[covered], ddof=1) - s[covered].mean()))
        explained = max(0.0, 1 - tau2 / between) if between > 0 else 0.0
    human = 1 - explained * (1 - human)
    theta = np.where(human < 1, human * m + (1 - human) * np.nan_to_num(center), m)
    sd = np.sqrt(human * s)
    frame = pd.DataFrame({"calibrated": c, "weight": 1 - human, "posterior": theta,
                          "posterior_sd": sd, "low": theta - Z95 * sd,
                          "high": theta + Z95 * sd})
    frame.attrs.update(a=a, b=b, tau2=tau2, tau2_0=tau2_0, explained=explained,
                       covered=int(covered.sum()))
    return frame


def prior_scores(values: np.ndarray, machine) -> pd.DataFrame:
    """:func:`posterior` of a pairs x ratings matrix (NaN: no rating) with the pooled
    within-pair variance as ``sigma^2`` (:func:`pooled_variance`): the released scores of
    ``machine-prior``, with the human-only ``mean`` and ``n`` beside them.

    Raises
    ------
    InputError
        No pair with two ratings (``sigma^2`` cannot be estimated), or the machine cannot be
        calibrated (:func:`calibrate_machine`).
    """
    values = np.asarray(values, float)
    sigma2 = pooled_variance(values)
    if not np.isfinite(sigma2):
        raise InputError("no pair has two human ratings: the within-pair variance of the "
                         "empirical-Bayes weight cannot be estimated", field="ratings")
    n = np.isfinite(values).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(n > 0, np.nansum(values, axis=1) / n, np.nan)
        noise = np.where(n > 0, sigma2 / n, np.nan)
    fit = posterior(means, noise, machine)
    fit.insert(0, "n", n)
    fit.insert(1, "mean", means)
    fit.attrs["sigma2"] = sigma2
    return fit


def prior_table(ratings: pd.DataFrame, scores: pd.DataFrame) -> pd.DataFrame:
    """The ``machine-prior`` release of long-format ``ratings`` (``word1, word2, rating``) and
    a machine's ``scores`` (``word1, word2, machine``): one row per pair with ``n``, the
    human-only ``mean`` and the columns of :func:`posterior`."""
    grouped = ratings.groupby(["word1", "word2"], sort=False, observed=True)["rating"]
    pairs = grouped.size().reset_index()[["word1", "word2"]]
    column = grouped.cumcount().to_numpy()
    code = pd.MultiIndex.from_frame(pairs).get_indexer(
        pd.MultiIndex.from_frame(ratings[["word1", "word2"]]))
    values = np.full((len(pairs), int(column.max()) + 1 if len(column) else 1), np.nan)
    values[code, column] = ratings["rating"].to_numpy(float)
    fit = prior_scores(values, machine_for(pairs, scores))
    out = pd.concat([pairs, fit], axis=1)
    out.attrs.update(fit.attrs)
    return out
