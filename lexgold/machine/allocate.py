"""``machine-allocate``: the machine decides where human ratings go; every released score stays a
human mean.

After a first round, each pair's human mean ``m_i`` of ``n_i`` ratings is compared with the
machine's calibrated score ``c_i`` (:func:`lexgold.machine.prior.calibrate`). Under the
empirical-Bayes model of :mod:`lexgold.machine.prior` (true scores around ``c_i`` with variance
``tau^2``, a mean's sampling variance ``s_i = v_i / n_i``) the expected squared error of the
human mean, given what the machine says, is

    ``E_i = w_i s_i + (1 - w_i)^2 (m_i - c_i)^2``,   ``w_i = tau^2 / (tau^2 + s_i)``

(the posterior variance plus the squared distance of the mean from the posterior mean). ``e``
more ratings shrink the mean's error by the factor ``n_i / (n_i + e)`` and add their own noise,
so they are worth (:func:`machine_gain`)

    ``g_i = E_i (1 - (n_i / (n_i + e))^2) - e v_i / (n_i + e)^2``.

A pair whose mean disagrees with the machine by more than its noise explains gets more ratings;
one that agrees stops. A machine that knows nothing (``w_i`` near 1) gives ``E_i = s_i`` and
``g_i = v_i e / (n_i (n_i + e))``: the variance-driven ``error`` rule of
:mod:`lexgold.crowd.allocation`, so a weak machine leaves the allocation as it would be without
it. :func:`disagreement` is the plain rule it was measured against (docs/machine.md): the
distance ``|m_i - c_i|`` in standard errors ``sqrt(s_i)``.
"""

from __future__ import annotations

import numpy as np

from lexgold.machine.prior import between_variance, calibrate


def machine_gain(means, n, var, machine, extra: int = 2) -> np.ndarray:
    """``g_i`` of the module docstring: the expected fall of the squared error of each pair's
    human mean from ``extra`` more ratings, given the machine.

    Parameters
    ----------
    means, n, var : arrays
        Each pair's human mean, its number of ratings and its rating variance ``v_i`` (shrunk
        toward the pooled variance, as the site's rules use it).
    machine : array of float
        The machine's number on its own scale (NaN: none; the pair gets the ``error`` gain).
    extra : int
        Ratings of a top-up.

    Returns
    -------
    numpy.ndarray
        Gains, larger first; 0 is nothing to gain.

    A machine that explains the means (``tau^2 = 0``): nothing to gain; one that knows nothing
    (slope 0): close to the ``error`` gain ``v e / (n (n + e)) = 0.25``:

    >>> machine_gain([1.0, 3.0, 5.0], [2, 2, 2], [1.0] * 3, [0.0, 1.0, 2.0]).tolist()
    [0.0, 0.0, 0.0]
    >>> machine_gain([1.0, 5.0, 1.0, 5.0], [2] * 4, [1.0] * 4, [0, 0, 1, 1]).round(4).tolist()
    [0.2383, 0.2383, 0.2383, 0.2383]
    """
    m, n, v = (np.asarray(a, float) for a in (means, n, var))
    x = np.asarray(machine, float)
    s = v / n
    covered = np.isfinite(x) & np.isfinite(m)
    a, b = calibrate(x, m)
    c = a + b * np.where(covered, x, 0.0)
    tau2 = between_variance((m - c)[covered], s[covered])
    with np.errstate(invalid="ignore", divide="ignore"):
        w = np.where(covered & (s + tau2 > 0), tau2 / (s + tau2), 1.0)
    expected = w * s + (1 - w) ** 2 * np.where(covered, m - c, 0.0) ** 2
    shrink = 1 - (n / (n + extra)) ** 2
    return np.clip(expected * shrink - extra * v / (n + extra) ** 2, 0.0, None)


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
