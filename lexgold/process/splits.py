"""Train/dev/test splits of a gold standard (HyperLex section 5, Table 10).

- Random split: 70 % / 5 % / 25 %, "controlling for a broad coverage in terms of similarity
  ranges": stratified over the score intervals [0,2), [2,4), [4,6), [6,8), [8,10].
- Lexical split: no word is shared between train, dev and test; pairs whose words fall in two
  different parts ("cross-set" pairs) are dropped.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from lexgold.errors import InputError

PARTS = ("train", "dev", "test")


def _check_fractions(fractions):
    fractions = np.asarray(fractions, dtype=float)
    if len(fractions) != 3 or (fractions < 0).any() or not np.isclose(fractions.sum(), 1.0):
        raise InputError(f"expected three shares summing to 1, found {fractions.tolist()}",
                         field="fractions")
    return fractions


def score_interval(scores, intervals) -> np.ndarray:
    """Index of each score's interval ``[e_i, e_i+1)``; the last interval is closed."""
    edges = np.asarray(intervals, dtype=float)
    index = np.searchsorted(edges, np.asarray(scores, dtype=float), side="right") - 1
    return np.clip(index, 0, len(edges) - 2)


def random_split(scores: pd.Series | np.ndarray, *, rng: np.random.Generator,
                 fractions=(0.70, 0.05, 0.25),
                 intervals=(0.0, 2.0, 4.0, 6.0, 8.0, 10.0)) -> np.ndarray:
    """Random train/dev/test split stratified over score intervals.

    Parameters
    ----------
    scores : array-like
        The released score of each pair (HyperLex: 0-10).
    rng : numpy.random.Generator
        The only source of randomness.
    fractions : (float, float, float)
        Shares of train, dev and test (HyperLex: 0.70, 0.05, 0.25).
    intervals : sequence of float
        Interval edges of the stratification.

    Returns
    -------
    numpy.ndarray of str
        ``"train"``, ``"dev"`` or ``"test"`` per pair, in input order.

    Notes
    -----
    Pairs are ordered by interval, shuffled within it, and dealt out in that order so that the
    running count of each part never strays by more than one from its share (a largest-deficit
    rule). Each part's total is therefore within one pair of its share of all pairs, and within
    each interval within about one pair of its share of the interval.
    """
    fractions = _check_fractions(fractions)
    if not isinstance(rng, np.random.Generator):
        raise InputError(f"expected a numpy.random.Generator, found {type(rng).__name__}",
                         field="rng")
    values = np.asarray(scores, dtype=float)
    order = np.lexsort((rng.random(len(values)), score_interval(values, intervals)))
    labels = np.empty(len(values), dtype=object)
    dealt = np.zeros(3)
    for position, index in enumerate(order):
        part = int(np.argmax(fractions * (position + 1) - dealt))
        dealt[part] += 1
        labels[index] = PARTS[part]
    return labels.astype(str)


def lexical_split(pairs: pd.DataFrame, *, rng: np.random.Generator,
                  fractions=(0.70, 0.05, 0.25)) -> np.ndarray:
    """Lexical split: words are split, not pairs, so that no part shares a word with another.

    Parameters
    ----------
    pairs : pandas.DataFrame
        Columns ``word1, word2``.
    rng : numpy.random.Generator
        The only source of randomness.
    fractions : (float, float, float)
        Wanted shares of the kept pairs in train, dev and test.

    Returns
    -------
    numpy.ndarray of str
        ``"train"``, ``"dev"``, ``"test"``, or ``""`` for a dropped cross-set pair.

    Notes
    -----
    The vocabulary is shuffled and each word goes to a part with probability proportional to the
    square root of its wanted share, since a pair stays in a part only when both its words do
    (share squared). Kept pairs then come close to the wanted ratio; as in HyperLex, fewer pairs
    are kept than by the random split (about 40 % with 70/5/25).
    """
    fractions = _check_fractions(fractions)
    words = pd.unique(pd.concat([pairs["word1"], pairs["word2"]], ignore_index=True))
    weights = np.sqrt(fractions) / np.sqrt(fractions).sum()
    shuffled = rng.permutation(len(words))
    bounds = np.round(np.cumsum(weights) * len(words)).astype(int)
    part_of = {}
    for rank, index in enumerate(shuffled):
        part_of[words[index]] = PARTS[int(np.searchsorted(bounds, rank, side="right"))]
    first = pairs["word1"].map(part_of).to_numpy()
    second = pairs["word2"].map(part_of).to_numpy()
    return np.where(first == second, first, "").astype(str)
