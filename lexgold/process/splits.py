"""Train/dev/test splits of a gold standard (HyperLex section 5, Table 10).

- Random split: 70 % / 5 % / 25 %, "controlling for a broad coverage in terms of similarity
  ranges": stratified over the score intervals [0,2), [2,4), [4,6), [6,8), [8,10] and, as the
  released split is (1,831 / 130 / 655, each part exact within every interval and POS), over
  further labels such as the POS.
- Lexical split: test shares no word with train or dev; pairs whose words fall on both sides
  ("cross-set" pairs) are dropped. ``mode="two-way"`` (the released split: train and dev share
  114 words, train-test and dev-test none; 1,487 pairs kept, 1,133 / 85 / 269) splits the
  vocabulary into train+dev and test and draws dev from the train side's pairs;
  ``mode="strict"`` splits it three ways, so that no part shares a word with another.
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
                 intervals=(0.0, 2.0, 4.0, 6.0, 8.0, 10.0), strata=()) -> np.ndarray:
    """Random train/dev/test split stratified over score intervals and optional labels.

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
    strata : sequence of array-like, optional
        Further labels per pair (HyperLex: ``[pos]``); a stratum is one interval and one value
        of each label.

    Returns
    -------
    numpy.ndarray of str
        ``"train"``, ``"dev"`` or ``"test"`` per pair, in input order.

    Notes
    -----
    Within each stratum the pairs are shuffled and dealt out so that the running count of each
    part never strays by more than one from its share (a largest-deficit rule): each part gets
    its share of every stratum within one pair, and of all pairs within one pair per stratum.
    """
    fractions = _check_fractions(fractions)
    if not isinstance(rng, np.random.Generator):
        raise InputError(f"expected a numpy.random.Generator, found {type(rng).__name__}",
                         field="rng")
    values = np.asarray(scores, dtype=float)
    keys = [score_interval(values, intervals)]
    for labels in strata:
        if len(labels) != len(values):
            raise InputError(f"expected one stratum label per pair ({len(values)}), found "
                             f"{len(labels)}", field="strata")
        keys.append(pd.factorize(pd.Series(np.asarray(labels, dtype=object)).fillna(""))[0])
    stratum = (pd.factorize(pd.MultiIndex.from_arrays(keys))[0] if len(values)
               else np.zeros(0, dtype=int))
    order = np.lexsort((rng.random(len(values)), stratum))
    labels = np.empty(len(values), dtype=object)
    dealt, position, current = np.zeros(3), 0, None
    for index in order:
        if stratum[index] != current:
            dealt, position, current = np.zeros(3), 0, stratum[index]
        part = int(np.argmax(fractions * (position + 1) - dealt))
        dealt[part] += 1
        position += 1
        labels[index] = PARTS[part]
    return labels.astype(str)


LEXICAL_MODES = ("two-way", "strict")


def lexical_split(pairs: pd.DataFrame, *, rng: np.random.Generator,
                  fractions=(0.70, 0.05, 0.25), mode: str = "two-way") -> np.ndarray:
    """Lexical split: words are split, not pairs, so that test shares no word with the rest.

    Parameters
    ----------
    pairs : pandas.DataFrame
        Columns ``word1, word2``.
    rng : numpy.random.Generator
        The only source of randomness.
    fractions : (float, float, float)
        Wanted shares of the kept pairs in train, dev and test.
    mode : {"two-way", "strict"}
        ``"two-way"``: the vocabulary is split into train+dev and test; dev is drawn at random
        from the pairs of the train side (its share of them: dev / (train + dev)), so train and
        dev share words, as in the released HyperLex lexical split. ``"strict"``: the
        vocabulary is split three ways and no part shares a word with another.

    Returns
    -------
    numpy.ndarray of str
        ``"train"``, ``"dev"``, ``"test"``, or ``""`` for a dropped cross-set pair.

    Notes
    -----
    The vocabulary is shuffled and each word goes to a side with probability proportional to the
    square root of its wanted share, since a pair stays in a side only when both its words do
    (share squared). Kept pairs then come close to the wanted ratio; fewer pairs are kept than
    by the random split (with 70/5/25 about 54 % two-way, 41 % strict).
    """
    fractions = _check_fractions(fractions)
    if mode not in LEXICAL_MODES:
        raise InputError(f"expected one of {', '.join(LEXICAL_MODES)}, found {mode!r}",
                         field="lexical")
    sides = fractions if mode == "strict" else np.array([fractions[0] + fractions[1], 0.0,
                                                         fractions[2]])
    words = pd.unique(pd.concat([pairs["word1"], pairs["word2"]], ignore_index=True))
    weights = np.sqrt(sides) / np.sqrt(sides).sum()
    shuffled = rng.permutation(len(words))
    bounds = np.round(np.cumsum(weights) * len(words)).astype(int)
    part_of = {}
    for rank, index in enumerate(shuffled):
        part_of[words[index]] = PARTS[int(np.searchsorted(bounds, rank, side="right"))]
    first = pairs["word1"].map(part_of).to_numpy()
    second = pairs["word2"].map(part_of).to_numpy()
    labels = np.where(first == second, first, "").astype(object)
    if mode == "two-way":
        side = np.flatnonzero(labels == "train")
        share = fractions[1] / (fractions[0] + fractions[1]) if fractions[0] + fractions[1] else 0
        labels[rng.choice(side, size=round(share * len(side)), replace=False)] = "dev"
    return labels.astype(str)
