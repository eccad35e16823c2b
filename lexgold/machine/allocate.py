"""``machine-allocate``: the machine decides where human ratings go; every released score stays a
human mean.

After a first round, each pair's human mean ``m_i`` of ``n_i`` ratings is compared with the
machine's calibrated score ``c_i`` (:func:`lexgold.machine.prior.calibrate`). Under the
empirical-Bayes model of :mod:`lexgold.machine.prior` (true scores around ``c_i`` with variance
``tau^2``; a mean's sampling variance ``s_i = sigma^2 / n_i``, ``sigma^2`` the pooled
within-pair variance) the expected squared error of the human mean, given what the machine
says, is

    ``E_i = w_i s_i + (1 - w_i)^2 d_i^2``,   ``d_i = m_i - c_i``,   ``w_i = tau^2 / (tau^2 + s_i)``

(the posterior variance plus the squared distance of the mean from the posterior mean), whose
expectation over pairs is ``s_i``. ``e`` more ratings shrink the mean's error by the factor
``n_i / (n_i + e)`` and add their own noise, so they are worth
``E_i (1 - (n_i / (n_i + e))^2) - e sigma^2 / (n_i + e)^2``: with ``E_i`` at its expectation,
``sigma^2 e / (n_i (n_i + e))``, the error gain with one variance for all pairs (it evens the
ratings out: uniform). :func:`machine_gain` keeps that and adds the pair's excess,

    ``g_i = sigma^2 e / (n_i (n_i + e))
    + lambda (1 - (n_i / (n_i + e))^2) ((1 - w_i)^2 d_i^2 - (1 - w_i) s_i)``,

weighted by ``lambda = max(0, 1 - tau^2 / tau_0^2)``, the share of the between-pair variance
``tau_0^2`` (around the grand mean, same method of moments) that the machine explains: a pair
whose mean disagrees with the machine by more than its noise explains gets more ratings, one
that agrees stops (``g_i <= 0``), and a machine that explains nothing (``lambda = 0``; its
calibrated score is the grand mean, whose James-Stein pull would otherwise send ratings to the
ends of the scale) leaves the allocation uniform. :func:`disagreement` is the plain rule it was
measured against (docs/process.md): the distance ``|m_i - c_i|`` in standard errors.
"""

from __future__ import annotations

import numpy as np

from lexgold.machine.prior import between_variance, calibrate


def machine_gain(means, n, sigma2: float, machine, extra: int = 2) -> np.ndarray:
    """``g_i`` of the module docstring: what ``extra`` more ratings of each pair are worth,
    given the machine.

    Parameters
    ----------
    means, n : arrays
        Each pair's human mean and its number of ratings.
    sigma2 : float
        The pooled within-pair rating variance.
    machine : array of float
        The machine's number on its own scale (NaN: none; the pair gets the first term only).
    extra : int
        Ratings of a top-up.

    Returns
    -------
    numpy.ndarray
        Gains; a pair whose gain is 0 or less stops.

    A machine that explains the means (``tau^2 = 0``, ``lambda = 1``): the pair off its line
    gains, the others stop; one that knows nothing (slope 0, ``lambda = 0``): every pair gains
    ``sigma^2 e / (n (n + e)) = 0.25``:

    >>> machine_gain([1.0, 3.0, 5.0, 4.0], [2] * 4, 1.0, [0.0, 1.0, 2.0, 1.0]).round(3).tolist()
    [-0.078, -0.078, -0.078, 0.297]
    >>> machine_gain([1.0, 5.0, 1.0, 5.0], [2] * 4, 1.0, [0, 0, 1, 1]).round(4).tolist()
    [0.25, 0.25, 0.25, 0.25]
    """
    m, n = np.asarray(means, float), np.asarray(n, float)
    x = np.asarray(machine, float)
    s = sigma2 / n
    covered = np.isfinite(x) & np.isfinite(m)
    a, b = calibrate(x, m)
    d = np.where(covered, m - (a + b * np.where(covered, x, 0.0)), 0.0)
    tau2 = between_variance(d[covered], s[covered])
    tau0 = max(0.0, float(np.var(m[covered], ddof=1) - s[covered].mean()))
    explained = max(0.0, 1 - tau2 / tau0) if tau0 > 0 else 0.0
    with np.errstate(invalid="ignore", divide="ignore"):
        pull = np.where(covered & (s + tau2 > 0), s / (s + tau2), 0.0)     # 1 - w_i
    excess = pull ** 2 * d ** 2 - pull * s
    shrink = 1 - (n / (n + extra)) ** 2
    return sigma2 * extra / (n * (n + extra)) + explained * shrink * excess


def disagreement(means, n, var, machine) -> np.ndarray:
    """``|m_i - c_i| / sqrt(v_i / n_i)``: how many standard errors each pair's human mean lies
    from the calibrated machine (NaN without a machine score).

    >>> disagreement([1.0, 3.0, 5.0, 4.0], [4] * 4, [1.0] * 4, [0.0, 1.0, 2.0, 1.0]).tolist()
    [0.5, 0.5, 0.5, 1.5]
    """
    m, n, v = (np.asarray(a, float) for a in (means, n, var))
    x = np.asarray(machine, float)
    a, b = calibrate(x, m)
    return np.abs(m - (a + b * x)) / np.sqrt(v / n)
