"""Per-pair scores: mean and SD of the accepted ratings, mapped linearly to the released scale.

SimLex-999 section 3.6 ("we computed average (mean) scores for each pair, and transformed all
scores linearly from the interval [0, 6] to the interval [0, 10]"); HyperLex section 4.5 (the
same); TR9856 section 4 (mean of binary labels, kept on [0, 1]).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from lexgold.ratings import ITEM
from lexgold.ratings.long import answers, check_ratings
from lexgold.stats import rescale


def linear_scale(values, *, source: tuple[float, float] = (0.0, 6.0),
                 target: tuple[float, float] = (0.0, 10.0)):
    """Map values linearly from the interval ``source`` onto ``target`` as a float array
    (:func:`lexgold.stats.rescale` with the released scales as defaults).

    Examples
    --------
    >>> linear_scale([0, 3, 6]).tolist()
    [0.0, 5.0, 10.0]
    """
    return np.asarray(rescale(values, source, target), dtype=float)


def gold_scores(ratings: pd.DataFrame, *, rating_range: tuple[float, float] = (0.0, 6.0),
                score_range: tuple[float, float] = (0.0, 10.0),
                estimates: pd.DataFrame | None = None) -> pd.DataFrame:
    """Mean, SD and scaled score of every pair over the raters who rated it.

    Parameters
    ----------
    ratings : pandas.DataFrame
        Long format (docs/contract.md) of the accepted raters. A pair answered twice by one rater
        (calibration repeat, duplicate) counts once for that rater, with the mean of the answers.
    rating_range, score_range : (float, float)
        The slider's interval and the released one (SimLex/HyperLex: 0-6 -> 0-10).
    estimates : pandas.DataFrame, optional
        ``word1, word2, estimate``: each pair's score on the rating scale by another rule of
        ``[process] aggregate`` (:func:`lexgold.process.aggregate.pair_estimates`); None: the
        mean (the papers' rule).

    Returns
    -------
    pandas.DataFrame
        ``word1, word2, [pos], n`` (raters), ``mean`` (the pair's score on the rating scale:
        the mean, or its ``estimate`` when given; what HyperLex's ``AVG_SCORE`` releases),
        ``sd`` (sample SD of the ratings, ddof=1; NaN for one rater), ``score`` (``mean``
        mapped to ``score_range``), ``scores`` (the raters' answers, in rater order), in order
        of first appearance; with ``estimates``, also ``plain_mean`` (the mean of the
        ratings).
    """
    answered = answers(check_ratings(ratings))                  # once
    frame = answered.sort_values("rater_id", kind="stable")
    grouped = frame.groupby(ITEM, sort=False)["rating"]
    out = grouped.agg(n="count", mean="mean", sd=lambda r: r.std(ddof=1)).reset_index()
    out["scores"] = _answer_lists(frame["rating"].to_numpy(dtype=float),
                                  grouped.ngroup().to_numpy(), len(out))
    if "pos" in frame.columns:
        out.insert(2, "pos", frame.groupby(ITEM, sort=False)["pos"].first().to_numpy())
    if estimates is not None:
        out["plain_mean"] = out["mean"]
        out["mean"] = out[ITEM].merge(estimates, on=ITEM, how="left")["estimate"].to_numpy()
    out["score"] = linear_scale(out["mean"], source=rating_range, target=score_range)
    order = answered[ITEM].drop_duplicates()
    return order.merge(out, on=ITEM, how="left")


def _answer_lists(ratings: np.ndarray, pair: np.ndarray, n_pairs: int) -> np.ndarray:
    """Each pair's ratings as a list, in row order: ``ratings`` split by ``pair`` (the pair's
    number in the output, ``0 .. n_pairs - 1``), an object array of ``n_pairs`` lists.

    The lists of a pair share one float object per distinct value (the same value, bit for
    bit): at 10,000 raters ``groupby(...).agg(list)`` made a float object per answer, 1.4 M
    of them held for the whole run and 100 MB more at its peak."""
    order = np.argsort(pair, kind="stable")
    bits, inverse = np.unique(ratings[order].view(np.int64), return_inverse=True)
    shared = np.array(bits.view(np.float64).tolist(), dtype=object)[inverse]
    bounds = np.cumsum(np.bincount(pair, minlength=n_pairs))[:-1]
    out = np.empty(n_pairs, dtype=object)
    for at, part in enumerate(np.split(shared, bounds) if n_pairs else []):
        out[at] = part.tolist()
    return out
