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
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from lexgold.errors import InputError
from lexgold.stats import least_squares_line

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


def _alignment(value: np.ndarray, others: np.ndarray, how: str) -> np.ndarray:
    """``S``: minus the RMSE of ``value`` against each row of ``others`` (NaN-padded), or minus
    its absolute difference from their mean."""
    if how == "rmse":
        return -np.sqrt(np.nanmean((others - value[:, None]) ** 2, axis=1))
    return -np.abs(np.nanmean(others, axis=1) - value)


def _calibrate(machine: np.ndarray, target: np.ndarray) -> np.ndarray:
    """The least-squares line from ``machine`` to ``target``, applied to ``machine``."""
    slope, intercept = least_squares_line(machine, target)
    return slope * machine + intercept


def _one_sided_p(d: np.ndarray, epsilon: float) -> tuple[float, float]:
    """t statistic and p-value of ``H0: mean(d) >= epsilon`` against ``mean(d) < epsilon``."""
    from scipy.stats import ttest_1samp

    if np.all(d == d[0]):
        return (-math.inf if d[0] < epsilon else math.inf), (0.0 if d[0] < epsilon else 1.0)
    result = ttest_1samp(d, epsilon, alternative="less")
    return float(result.statistic), float(result.pvalue)


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
    frame = ratings[ratings["key"].isin(machine.index)]
    wide = frame.pivot(index="key", columns="rater_id", values="rating")
    wide = wide[pd.unique(frame["rater_id"])]                  # raters in file order
    scores = machine.reindex(wide.index).to_numpy(float)
    values = wide.to_numpy(float)
    records, left_out = [], []
    for j, rater in enumerate(wide.columns):
        others = np.delete(values, j, axis=1)
        use = ~np.isnan(values[:, j]) & (np.sum(~np.isnan(others), axis=1) > 0)
        if use.sum() < 2:
            left_out.append(str(rater))
            continue
        others, own, raw = others[use], values[use, j], scores[use]
        calibrated = _calibrate(raw, np.nanmean(others, axis=1)) if calibrate else raw
        s_machine = _alignment(calibrated, others, alignment)
        s_human = _alignment(own, others, alignment)
        tie = np.isclose(s_machine, s_human, rtol=1e-9, atol=1e-12)   # equal but for rounding
        w_machine = ((s_machine > s_human) | tie).astype(float)
        w_human = ((s_human > s_machine) | tie).astype(float)
        t, p = _one_sided_p(w_human - w_machine, epsilon)
        records.append({"rater": str(rater), "pairs": int(use.sum()),
                        "rho_machine": float(w_machine.mean()),
                        "rho_human": float(w_human.mean()), "t": t, "p": p})
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
