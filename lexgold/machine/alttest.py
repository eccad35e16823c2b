"""The alternative annotator test: may the machine replace one of the pilot's human raters?

Calderon, Reichart & Dror (2025), "The Alternative Annotator Test for LLM-as-a-Judge: How to
Statistically Justify Replacing Human Annotators with LLMs" (arXiv 2501.10970), section 3,
for continuous ratings, leave one rater out:

1. For each rater ``j`` and each pair ``i`` that ``j`` rated and at least one other rater
   rated, the alignment of an annotation ``a`` with the others is ``S(a, i, j)``, here (the
   paper's choice for continuous annotations) ``-RMSE``: minus the root mean squared difference
   between ``a`` and the other raters' ratings of ``i``; ``alignment="ae"`` is minus the
   absolute difference from their mean instead.
2. ``W^f_ij = 1`` when the machine's alignment is at least rater ``j``'s
   (``S(f, i, j) >= S(h_j, i, j)``), ``W^h_ij = 1`` when ``j``'s is at least the machine's
   (a tie counts for both; two alignments equal but for floating-point rounding are a tie).
3. The advantage probabilities ``rho^f_j`` and ``rho^h_j`` are their means over ``j``'s pairs;
   the null hypothesis ``H0_j: rho^h_j - rho^f_j >= epsilon`` is tested against
   ``rho^h_j - rho^f_j < epsilon`` by a one-sided one-sample t-test of
   ``d_i = W^h_ij - W^f_ij`` against ``epsilon`` (the paired t-test of the paper).
4. The ``m`` p-values are corrected by Benjamini-Yekutieli at ``q`` (0.05):
   :func:`benjamini_yekutieli`.
5. The winning rate ``omega`` is the share of raters whose null is rejected; the machine
   passes when ``omega >= 0.5``. The average advantage probability ``rho`` is the mean of
   ``rho^f_j``.

Choices made here, where the paper leaves room:

- the machine is first put on the human scale: for each left-out rater ``j``, the
  least-squares line from the machine's scores to the other raters' mean ratings (``j``'s own
  ratings never calibrate the machine that competes with ``j``); a machine on another scale
  (GPT-4 answering 0-10 for a 0-6 study, cosines) would otherwise lose every comparison;
- ``epsilon`` defaults to 0.2 (the paper's value for experts; its code suggests 0.15 for
  skilled raters and 0.1 for crowd workers);
- a rater with fewer than 2 such pairs is left out of the test (no t-test), and reported;
- when every ``d_i`` is the same (no variance, the t statistic undefined) the p-value is 0
  if ``d < epsilon`` and 1 otherwise (the null is then certainly false or not rejectable);
- correlation-based alignment is not offered: the test compares annotations pair by pair.

Every figure is computed from sums: each pair's count, sum and sum of squares of its ratings
give, for each rating, the other raters' count, mean and mean squared deviation (the RMSE of
``a`` against them is ``sqrt(msd + (a - mean)^2)``), and each rater's sums over its ratings
give its calibration line and its t-test; memory grows with the ratings read, never with
raters x pairs.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from lexgold.errors import InputError

#: the alignments of :func:`alternative_annotator_test`
ALIGNMENTS = ("rmse", "ae")


def benjamini_yekutieli(pvalues, q: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """The Benjamini-Yekutieli step-up procedure (false discovery rate under any dependence).

    With ``m`` p-values sorted ``p_(1) <= ... <= p_(m)`` and ``c(m) = sum_{i=1..m} 1/i``, the
    hypotheses ``1 .. k`` are rejected for the largest ``k`` with
    ``p_(k) <= k q / (m c(m))``. The adjusted p-value of ``p_(i)`` is
    ``min_{k >= i} min(1, m c(m) p_(k) / k)``.

    Parameters
    ----------
    pvalues : array-like
        The p-values, any order.
    q : float
        The false discovery rate, in (0, 1).

    Returns
    -------
    rejected : numpy.ndarray of bool
    adjusted : numpy.ndarray
        Both in the order given.

    References
    ----------
    Benjamini, Y. & Yekutieli, D. (2001). The control of the false discovery rate in multiple
    testing under dependency. Annals of Statistics 29(4), 1165-1188, theorem 1.3.

    Examples
    --------
    >>> rejected, adjusted = benjamini_yekutieli([0.001, 0.025, 0.02])
    >>> rejected.tolist(), adjusted.round(5).tolist()
    ([True, True, True], [0.0055, 0.04583, 0.04583])
    """
    p = np.asarray(pvalues, dtype=float)
    if not 0 < q < 1:
        raise InputError(f"need 0 < q < 1, found {q!r}", field="q")
    m = len(p)
    if m == 0:
        return np.zeros(0, dtype=bool), np.zeros(0)
    c_m = float(np.sum(1.0 / np.arange(1, m + 1)))
    order = np.argsort(p, kind="stable")
    ranks = np.arange(1, m + 1)
    below = p[order] <= ranks * q / (m * c_m)
    k = int(ranks[below].max()) if below.any() else 0
    rejected = np.zeros(m, dtype=bool)
    rejected[order[:k]] = True
    stepped = np.minimum.accumulate((m * c_m * p[order] / ranks)[::-1])[::-1]
    adjusted = np.empty(m)
    adjusted[order] = np.minimum(stepped, 1.0)
    return rejected, adjusted


def _per_rater(code: np.ndarray, values: np.ndarray, raters: int) -> np.ndarray:
    """The sum of ``values`` over each rater's ratings (``code``: the rater of each)."""
    return np.bincount(code, weights=values, minlength=raters)


def _calibrated(code: np.ndarray, machine: np.ndarray, target: np.ndarray,
                raters: int) -> np.ndarray:
    """Per rating, the least-squares line from ``machine`` to ``target`` over its rater's
    ratings applied to its ``machine`` score (a rater whose machine scores do not vary: the
    mean of its ``target``)."""
    count = np.maximum(_per_rater(code, np.ones(len(code)), raters), 1)
    x_mean = _per_rater(code, machine, raters) / count
    t_mean = _per_rater(code, target, raters) / count
    dx = machine - x_mean[code]
    sxx = _per_rater(code, dx * dx, raters)
    sxt = _per_rater(code, dx * (target - t_mean[code]), raters)
    low, high = np.full(raters, np.inf), np.full(raters, -np.inf)
    np.minimum.at(low, code, machine)
    np.maximum.at(high, code, machine)
    varies = (high > low) & (sxx > 0)
    slope = np.where(varies, sxt / np.where(varies, sxx, 1.0), 0.0)
    return t_mean[code] + slope[code] * dx


def _one_sided_p(d: np.ndarray, code: np.ndarray, raters: int,
                 epsilon: float) -> tuple[np.ndarray, np.ndarray]:
    """Per rater, the t statistic and p-value of ``H0: mean(d) >= epsilon`` against
    ``mean(d) < epsilon`` over its ratings' ``d`` (the one-sample t-test, ``scipy.stats.
    ttest_1samp(..., alternative="less")``); a rater whose ``d`` are all equal gets
    ``-inf, 0`` when they are below ``epsilon`` and ``inf, 1`` otherwise."""
    from scipy.special import stdtr

    n = _per_rater(code, np.ones(len(code)), raters)
    mean = _per_rater(code, d, raters) / np.maximum(n, 1)
    squares = _per_rater(code, (d - mean[code]) ** 2, raters)
    low, high = np.full(raters, np.inf), np.full(raters, -np.inf)
    np.minimum.at(low, code, d)
    np.maximum.at(high, code, d)
    varies = high > low
    with np.errstate(invalid="ignore", divide="ignore"):
        t = (mean - epsilon) / np.sqrt(squares / np.maximum(n - 1, 1) / np.maximum(n, 1))
        p = stdtr(np.maximum(n - 1, 1), t)
    below = mean < epsilon
    t = np.where(varies, t, np.where(below, -math.inf, math.inf))
    p = np.where(varies, p, np.where(below, 0.0, 1.0))
    return t, p


def alternative_annotator_test(ratings: pd.DataFrame, machine: pd.Series, *,
                               epsilon: float = 0.2, q: float = 0.05,
                               alignment: str = "rmse", calibrate: bool = True) -> dict:
    """The alternative annotator test of a machine against identified human raters.

    Parameters
    ----------
    ratings : pandas.DataFrame
        Long format ``rater_id, key, rating`` (``key`` the pair; one rating per rater and
        pair: average repeats first).
    machine : pandas.Series
        The machine's score per pair key (pairs without one are left out).
    epsilon : float
        The cost-benefit margin: the machine may be this much less likely than a human to be
        the better-aligned annotator (0 .. 1).
    q : float
        The false discovery rate of the Benjamini-Yekutieli correction.
    alignment : {"rmse", "ae"}
        ``S``: minus the RMSE against the other raters' ratings (the paper's), or minus the
        absolute error against their mean.
    calibrate : bool
        Put the machine on the human scale first (module docstring); ``False`` for a machine
        already on it.

    Returns
    -------
    dict
        ``raters``: one record per rater tested (``rater``, ``pairs``, ``rho_machine``,
        ``rho_human``, ``t``, ``p``, ``p_adjusted``, ``won``); ``omega`` (winning rate, 0 .. 1,
        higher is better), ``rho`` (average advantage probability), ``passed``
        (``omega >= 0.5``), ``epsilon``, ``q``, ``alignment``, ``left_out`` (raters with fewer
        than 2 pairs).

    Raises
    ------
    InputError
        An unknown alignment, epsilon outside 0 .. 1, or fewer than 2 raters to test.
    """
    if alignment not in ALIGNMENTS:
        raise InputError(f"unknown alignment {alignment!r}; allowed: {', '.join(ALIGNMENTS)}",
                         field="alignment")
    if not 0 <= epsilon <= 1:
        raise InputError(f"need 0 <= epsilon <= 1, found {epsilon!r}", field="--epsilon")
    machine = machine[machine.notna()]
    frame = ratings[ratings["key"].isin(machine.index)]
    rater, ids = pd.factorize(frame["rater_id"])                # raters in file order
    rated = frame["rating"].notna().to_numpy()                  # NaN: not rated
    frame, rater = frame[rated], rater[rated]
    pair, keys = pd.factorize(frame["key"])
    if pd.Series(rater.astype(np.int64) * max(len(keys), 1) + pair).duplicated().any():
        raise InputError("a rater has two ratings of one pair: average them first",
                         field="rater_id")
    y = frame["rating"].to_numpy(float)
    raw = machine[~machine.index.duplicated()].reindex(keys).to_numpy(float)[pair]
    # the other raters of each rating's pair, from the pair's sums: count, mean, and the
    # sum of squared deviations from their mean
    count = np.bincount(pair, minlength=len(keys))[pair] - 1
    total = np.bincount(pair, weights=y, minlength=len(keys))[pair] - y
    squares = np.bincount(pair, weights=y * y, minlength=len(keys))[pair] - y * y
    pairs_of = np.bincount(rater, weights=(count > 0).astype(float), minlength=len(ids))
    tested = pairs_of >= 2
    left_out = [str(r) for r in ids[~tested]]
    use = (count > 0) & tested[rater]
    rater, y, raw = rater[use], y[use], raw[use]
    count, total, squares = count[use], total[use], squares[use]
    others = total / count
    spread = np.maximum(squares - total * others, 0.0) / count   # their mean squared deviation
    calibrated = _calibrated(rater, raw, others, len(ids)) if calibrate else raw
    if alignment == "rmse":
        s_machine = -np.sqrt(spread + (calibrated - others) ** 2)
        s_human = -np.sqrt(spread + (y - others) ** 2)
    else:
        s_machine, s_human = -np.abs(others - calibrated), -np.abs(others - y)
    tie = np.isclose(s_machine, s_human, rtol=1e-9, atol=1e-12)   # equal but for rounding
    w_machine = ((s_machine > s_human) | tie).astype(float)
    w_human = ((s_human > s_machine) | tie).astype(float)
    t, p = _one_sided_p(w_human - w_machine, rater, len(ids), epsilon)
    n = np.maximum(pairs_of, 1)
    rho_machine = _per_rater(rater, w_machine, len(ids)) / n
    rho_human = _per_rater(rater, w_human, len(ids)) / n
    records = [{"rater": str(ids[j]), "pairs": int(pairs_of[j]),
                "rho_machine": float(rho_machine[j]), "rho_human": float(rho_human[j]),
                "t": float(t[j]), "p": float(p[j])} for j in np.flatnonzero(tested)]
    if len(records) < 2:
        raise InputError(f"{len(records)} raters share 2 or more pairs with others and the "
                         "machine; the alternative annotator test needs 2 or more",
                         field="rater_id")
    rejected, adjusted = benjamini_yekutieli([r["p"] for r in records], q)
    for record, won, p_adj in zip(records, rejected, adjusted):
        record.update(p_adjusted=float(p_adj), won=bool(won))
    omega = float(np.mean(rejected))
    return {"raters": records, "omega": omega,
            "rho": float(np.mean([r["rho_machine"] for r in records])),
            "passed": omega >= 0.5, "epsilon": epsilon, "q": q, "alignment": alignment,
            "left_out": left_out}
