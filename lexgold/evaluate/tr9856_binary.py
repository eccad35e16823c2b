"""TR9856 binary task: related (score >= 0.8) vs unrelated (score <= 0.2) pairs.

Levy et al. (2015), section 5.4: pairs with a gold score >= 0.8 are positive, <= 0.2 negative,
the rest are left out; a model's threshold on its own score is chosen by 10-fold
cross-validation, and the mean test error over the folds is reported (Table 5, "Mean Error").
"""

from __future__ import annotations

import numpy as np


def best_threshold(model: np.ndarray, labels: np.ndarray) -> tuple[float, int]:
    """The threshold t minimising training errors of the rule ``model > t`` -> positive.

    Candidates are -inf and the midpoints between consecutive distinct scores (and +inf);
    the smallest threshold among equally good ones is returned.

    Returns
    -------
    threshold : float
    errors : int
        Misclassified training pairs at that threshold.
    """
    order = np.argsort(model, kind="stable")
    s, y = model[order], labels[order].astype(int)
    # cutting after the first k sorted scores: k negatives predicted; errors = positives
    # among the first k + negatives among the rest
    pos_below = np.concatenate([[0], np.cumsum(y)])
    neg_above = (len(y) - y.sum()) - np.concatenate([[0], np.cumsum(1 - y)])
    errors = pos_below + neg_above
    valid = np.ones(len(s) + 1, dtype=bool)
    valid[1:-1] = s[1:] > s[:-1]          # cannot cut between equal scores
    errors = np.where(valid, errors, np.iinfo(np.int64).max)
    k = int(np.argmin(errors))
    if k == 0:
        threshold = -np.inf
    elif k == len(s):
        threshold = np.inf
    else:
        threshold = (s[k - 1] + s[k]) / 2
    return float(threshold), int(errors[k])


def binary_task(gold: np.ndarray, model: np.ndarray, rng: np.random.Generator, *,
                folds: int = 10, positive: float = 0.8, negative: float = 0.2) -> dict:
    """Mean test error of a threshold on the model score chosen by k-fold cross-validation.

    Parameters
    ----------
    gold, model : array-like
        Gold relatedness (0-1 in TR9856) and model scores of the used pairs.
    rng : numpy.random.Generator
        Shuffles the pairs into folds.
    folds : int
        Number of folds (10 in the paper).
    positive, negative : float
        Gold score at or above which a pair is related, at or below which unrelated.

    Returns
    -------
    dict
        ``error`` (mean test error over folds, 0 best, 0.5 chance on balanced data),
        ``fold_errors``, ``thresholds``, ``positives``, ``negatives``.
    """
    gold, model = np.asarray(gold, dtype=float), np.asarray(model, dtype=float)
    keep = (gold >= positive) | (gold <= negative)
    labels, scores = (gold[keep] >= positive), model[keep]
    result = {"positives": int(labels.sum()), "negatives": int((~labels).sum()), "folds": folds}
    if len(labels) < folds:
        return {**result, "error": float("nan"), "fold_errors": [], "thresholds": []}
    parts = np.array_split(rng.permutation(len(labels)), folds)
    errors, thresholds = [], []
    for test in parts:
        train = np.setdiff1d(np.arange(len(labels)), test)
        threshold, _ = best_threshold(scores[train], labels[train])
        errors.append(float(np.mean((scores[test] > threshold) != labels[test])))
        thresholds.append(threshold)
    return {**result, "error": float(np.mean(errors)), "fold_errors": errors,
            "thresholds": thresholds}
