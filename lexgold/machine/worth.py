"""What a machine rater is worth on a pilot: the number of human ratings it equals, its
calibration to the human scale, and where it errs.

A pilot is a long-format ratings frame (``rater_id, word1, word2, rating``, optionally ``pos``
and ``relation``/``kind``); a machine is a frame ``word1, word2, machine``
(:func:`lexgold.machine.ratings.read_machine`). Pairs are matched whatever the case of their
words, in their order or else reversed; only the pairs both cover are compared.

**The number of human ratings it equals** (:func:`worth_curves`). Per random split each pair's
ratings are drawn in random order: the first ``pool`` are the pool, the rest the pair's
held-out reference, and its mean is the yardstick (pairs with no rating left for it are left
out). The mean of the first ``k`` pool ratings, ``k = 1 .. pool``, has a Spearman and a mean
absolute error (MAE) against the reference means; the machine has its own against the same
means. Its Spearman is of its raw scores (a monotone map changes no rank); its MAE is of its
scores calibrated to the human scale by a least-squares line fitted on the *other* half of the
pairs (two random halves per split, cross-fitted), so no pair's own human ratings calibrate its
machine score. The machine *equals* ``k*`` ratings where its figure crosses the human curve,
linearly interpolated between whole ``k``; the curve starts at ``k = 0``: a Spearman of 0 (no
rating ranks nothing) and the MAE of one constant for every pair (the median of the reference
means, the best constant under absolute error). A machine past the curve's end is worth more
than ``pool`` ratings (``inf``). Quoted: the median of ``k*`` over the splits and the central
95 % of the splits.

**Calibration** (:func:`calibration`): the least-squares line from the machine's scores to the
pairs' human means (all their ratings), with its slope, intercept and R^2, and the scales seen.

**Where it errs** (:func:`errors_by`, :func:`misjudged`): the residual of a pair is its human
mean minus its calibrated machine score (the line of :func:`calibration`); per part of speech,
relation or score band (human-mean quantiles), the Spearman, the MAE and the mean residual
(bias); the pairs with the largest absolute residuals.

**Published pairs** (:func:`published_overlap`): the share of the pilot's pairs that a known
published dataset holds; a model trained on the web may have seen those pairs and their scores.

References
----------
Trott, S. (2024). Can large language models help augment English psycholinguistic datasets?
Behavior Research Methods 56, 6082-6100 (GPT-4's SimVerb-3500 ratings, and their worth in
human ratings measured against held-out human means).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from lexgold.errors import InputError
from lexgold.machine.alttest import alternative_annotator_test
from lexgold.machine.prior import machine_for
from lexgold.stats import least_squares_line, spearman

#: the share of splits quoted around the median of ``k*``
LEVEL = 0.95
#: floats of random keys :func:`worth_curves` draws at a time (bounds its memory)
DRAW_FLOATS = 2 ** 20


def pair_key(word1: pd.Series, word2: pd.Series, *, ordered: bool = True) -> pd.Series:
    """A case-insensitive key of each pair: its two words lower-cased and joined by a tab, in
    their order (a pair and its reverse are two items of SimVerb-3500) or, ``ordered=False``,
    sorted."""
    a = word1.astype(str).str.strip().str.lower().to_numpy()
    b = word2.astype(str).str.strip().str.lower().to_numpy()
    if not ordered:
        a, b = np.where(a <= b, a, b), np.where(a <= b, b, a)
    return pd.Series([f"{x}\t{y}" for x, y in zip(a, b)], index=word1.index, dtype=object)


def _rater_answers(ratings: pd.DataFrame) -> tuple[pd.DataFrame, np.ndarray]:
    """Each rater's mean rating of each pair (checkpoints dropped), in the order of their first
    rating: ``code`` (the pair's index in ``keys``, first-seen order), ``rater_id``,
    ``word1``, ``word2`` (the words of its first row) and ``rating``; and ``keys``
    (:func:`pair_key`).

    Keys are made once per distinct ``word1, word2`` and the means grouped by integer codes
    (the ``groupby`` mean of the same ratings), so no string is made per rating."""
    frame = ratings[["rater_id", "word1", "word2", "rating"]]   # the columns used, not a copy
    if "kind" in ratings.columns:                                 # of every column read
        frame = frame[(ratings["kind"] != "checkpoint").to_numpy()]
    first_word, words1 = pd.factorize(frame["word1"])
    second_word, words2 = pd.factorize(frame["word2"])
    combo, distinct = pd.factorize(first_word.astype(np.int64) * max(len(words2), 1)
                                   + second_word)
    combo_key, keys = pd.factorize(pair_key(
        pd.Series(np.asarray(words1, dtype=object)[distinct // max(len(words2), 1)]),
        pd.Series(np.asarray(words2, dtype=object)[distinct % max(len(words2), 1)])))
    code = combo_key[combo]
    rater, ids = pd.factorize(frame["rater_id"])
    group, _ = pd.factorize(code.astype(np.int64) * max(len(ids), 1) + rater)
    first = np.unique(group, return_index=True)[1]             # a group's first row
    rows = pd.Series(frame["rating"].to_numpy(float)).groupby(group, sort=False).mean()
    found = pd.DataFrame({"code": code[first], "rater_id": np.asarray(ids)[rater[first]],
                          "word1": frame["word1"].array.take(first),    # codes stay codes
                          "word2": frame["word2"].array.take(first),
                          "rating": rows.to_numpy(float)})
    return found, np.asarray(keys, dtype=object)


def rating_matrix(ratings: pd.DataFrame) -> tuple[pd.DataFrame, np.ndarray]:
    """The pilot as one row of ratings per pair.

    Parameters
    ----------
    ratings : pandas.DataFrame
        Long format: ``rater_id, word1, word2, rating``; rows of ``kind`` ``checkpoint`` are
        dropped and a rater's repeated ratings of a pair averaged.

    Returns
    -------
    pairs : pandas.DataFrame
        ``word1, word2, key, n`` (the ratings of the pair), first-seen order.
    matrix : numpy.ndarray, shape (pairs, most ratings of a pair)
        The ratings, NaN-padded (a pair's raters in the order of their first rating of it).
    """
    return _matrix(*_rater_answers(ratings))


def _matrix(found: pd.DataFrame, keys: np.ndarray) -> tuple[pd.DataFrame, np.ndarray]:
    """:func:`rating_matrix` of :func:`_rater_answers`' frame and keys."""
    pairs, ragged = _ragged(found, keys)
    return pairs, ragged.rows(np.arange(len(keys)))


def _ragged(found: pd.DataFrame, keys: np.ndarray) -> tuple[pd.DataFrame, PairRatings]:
    """:func:`rating_matrix`'s pairs, and their ratings as :class:`PairRatings` (no pairs x
    most-ratings matrix)."""
    code = found["code"].to_numpy()
    column = found.groupby(code, sort=False).cumcount().to_numpy()
    counts = np.bincount(code, minlength=len(keys))
    ratings = PairRatings(found["rating"].to_numpy(float)[np.argsort(code, kind="stable")],
                          np.concatenate([[0], np.cumsum(counts)]),
                          int(column.max()) + 1 if len(found) else 0)
    first = np.zeros(len(keys), dtype=np.int64)
    seen = np.flatnonzero(column == 0)
    first[code[seen]] = seen
    pairs = pd.DataFrame({"word1": np.asarray(found["word1"].take(first), dtype=object),
                          "word2": np.asarray(found["word2"].take(first), dtype=object),
                          "key": keys, "n": counts})
    return pairs, ratings


@dataclass(frozen=True)
class PairRatings:
    """Each pair's ratings one pair after another (in :func:`rating_matrix`'s column order):
    the rows of the NaN-padded matrix made a block of pairs at a time (:meth:`rows`), so that
    memory grows with the ratings, not with pairs x the most ratings of a pair (at 10,000
    raters the consistency pairs' 10,000 ratings made the matrix 80 MB, the ratings 11 MB)."""

    values: np.ndarray        # the ratings, pair by pair
    starts: np.ndarray        # pair i's ratings: values[starts[i]:starts[i + 1]]
    width: int                # the most ratings of a pair (the matrix's columns)

    @property
    def counts(self) -> np.ndarray:
        """The ratings of each pair."""
        return np.diff(self.starts)

    def rows(self, pairs: np.ndarray) -> np.ndarray:
        """The matrix's rows of ``pairs``: their ratings, NaN-padded to :attr:`width`."""
        return padded_rows(self.values, self.starts, pairs, self.width)

    def means(self) -> np.ndarray:
        """Each pair's mean rating (NaN without ratings), as ``np.nanmean`` of its matrix row
        gives it, a block of pairs at a time."""
        out = np.empty(len(self.starts) - 1)
        step = max(1, DRAW_FLOATS // max(self.width, 1))
        for first in range(0, len(out), step):
            block = np.arange(first, min(first + step, len(out)))
            out[block] = np.nanmean(self.rows(block), axis=1)
        return out


def padded_rows(values: np.ndarray, starts: np.ndarray, pairs: np.ndarray, width: int,
                fill=np.nan) -> np.ndarray:
    """Rows ``pairs`` of a matrix held pair after pair without its padding (pair ``i``:
    ``values[starts[i]:starts[i + 1]]``): ``len(pairs) x width``, each pair's values
    left-aligned, ``fill`` after (in ``values``' dtype).

    >>> padded_rows(np.array([1.0, 2.0, 3.0]), np.array([0, 2, 3]), np.array([1, 0]), 2)
    array([[ 3., nan],
           [ 1.,  2.]])
    """
    counts = starts[pairs + 1] - starts[pairs]
    out = np.full((len(pairs), width), fill, dtype=values.dtype)
    row = np.repeat(np.arange(len(pairs)), counts)
    column = np.arange(len(row)) - np.repeat(np.cumsum(counts) - counts, counts)
    out[row, column] = values[np.repeat(starts[pairs], counts) + column]
    return out


def crossing(curve, value: float, *, start: float, higher_is_better: bool = True) -> float:
    """The ``k`` at which ``value`` crosses the curve ``start, curve[0], curve[1], ...`` (at
    ``k = 0, 1, 2, ...``), linearly interpolated.

    Returns
    -------
    float
        ``0`` for a value no better than ``start``, ``inf`` for one better than the curve's
        every point, NaN for an undefined value; the first crossing of a curve that dips.

    Examples
    --------
    >>> crossing([0.5, 0.7, 0.8], 0.6, start=0.0)
    1.5
    >>> crossing([1.0, 0.8, 0.7], 0.9, start=1.4, higher_is_better=False)
    1.5
    >>> crossing([0.6, 0.7], 0.9, start=0.0)
    inf
    """
    points = np.concatenate([[start], np.asarray(curve, dtype=float)])
    if math.isnan(value):
        return math.nan
    sign = 1.0 if higher_is_better else -1.0
    points, value = sign * points, sign * value
    if value <= points[0]:
        return 0.0
    for k in range(1, len(points)):
        if value <= points[k]:
            low, high = points[k - 1], points[k]
            return float(k - 1 + (value - low) / (high - low)) if high > low else float(k)
    return math.inf


def _calibrated(machine: np.ndarray, target: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The machine mapped to the human scale by a line fitted on the other half of the pairs."""
    half = rng.permutation(len(machine)) % 2 == 0
    out = np.empty_like(machine)
    for fit, apply in ((half, ~half), (~half, half)):
        slope, intercept = least_squares_line(machine[fit], target[fit])
        out[apply] = slope * machine[apply] + intercept
    return out


def worth_curves(matrix: np.ndarray | PairRatings, machine: np.ndarray, *, pool: int,
                 splits: int, rng: np.random.Generator) -> dict:
    """The human curves and the machine's figures against held-out human means, per split.

    Parameters
    ----------
    matrix : numpy.ndarray, shape (pairs, ratings), or PairRatings
        Each pair's ratings, NaN-padded (:func:`rating_matrix`), or the same ratings without
        the padding (:class:`PairRatings`: its rows are made a block of pairs at a time); only
        pairs with more than ``pool`` ratings and a machine score are used.
    machine : numpy.ndarray, shape (pairs,)
        The machine's scores, NaN where it gives none.
    pool : int
        The most human ratings a mean is made of (``k = 1 .. pool``).
    splits : int
        Random splits of each pair's ratings into pool and reference.
    rng : numpy.random.Generator

    Returns
    -------
    dict
        ``pairs`` (used), ``human_spearman`` and ``human_mae`` (arrays ``splits x pool``),
        ``machine_spearman``, ``machine_mae``, ``constant_mae`` (arrays of ``splits``),
        ``k_spearman`` and ``k_mae`` (the ratings the machine equals, per split; ``inf`` past
        ``pool``).

    Raises
    ------
    InputError
        Fewer than 3 pairs with a machine score and more than ``pool`` ratings.
    """
    if isinstance(matrix, PairRatings):
        counts, width, rows_of = matrix.counts, matrix.width, matrix.rows
    else:
        counts, width = np.sum(~np.isnan(matrix), axis=1), matrix.shape[1]
        rows_of = matrix.__getitem__
    use = (counts > pool) & ~np.isnan(machine)
    if use.sum() < 3:
        raise InputError(f"{int(use.sum())} pairs have a machine score and more than --pool "
                         f"{pool} ratings; the worth needs 3 or more", field="--pool")
    used, scores = np.flatnonzero(use), machine[use]
    out = {name: np.full((splits, pool), np.nan) for name in ("human_spearman", "human_mae")}
    out.update({name: np.full(splits, np.nan) for name in
                ("machine_spearman", "machine_mae", "constant_mae", "k_spearman", "k_mae")})
    reference, means = np.empty(len(used)), np.empty((len(used), pool))
    step = max(1, DRAW_FLOATS // max(width, 1))
    for s in range(splits):
        # a random order of each pair's ratings, a block of pairs at a time (the draws are
        # those of one matrix of keys, in its row order)
        for first in range(0, len(used), step):
            rows = slice(first, first + step)
            block = rows_of(used[rows])
            keys = rng.random(block.shape)
            keys[np.isnan(block)] = np.inf
            drawn = np.take_along_axis(block, np.argsort(keys, axis=1), axis=1)
            reference[rows] = np.nanmean(drawn[:, pool:], axis=1)
            means[rows] = np.cumsum(drawn[:, :pool], axis=1) / np.arange(1, pool + 1)
        for k in range(pool):
            out["human_spearman"][s, k] = spearman(means[:, k], reference)
            out["human_mae"][s, k] = np.mean(np.abs(means[:, k] - reference))
        out["machine_spearman"][s] = spearman(scores, reference)
        out["machine_mae"][s] = np.mean(np.abs(_calibrated(scores, reference, rng) - reference))
        out["constant_mae"][s] = np.mean(np.abs(np.median(reference) - reference))
        out["k_spearman"][s] = crossing(out["human_spearman"][s], out["machine_spearman"][s],
                                        start=0.0)
        out["k_mae"][s] = crossing(out["human_mae"][s], out["machine_mae"][s],
                                   start=out["constant_mae"][s], higher_is_better=False)
    out["pairs"] = int(use.sum())
    return out


def spread(values, level: float = LEVEL) -> tuple[float, float, float]:
    """The median and the central ``level`` of per-split figures, as order statistics (an
    ``inf``, "more than the pool", stays one)."""
    values = np.asarray(values, dtype=float)
    values = values[~np.isnan(values)]
    if not len(values):
        return math.nan, math.nan, math.nan
    tail = (1 - level) / 2
    low, mid, high = np.quantile(values, [tail, 0.5, 1 - tail], method="inverted_cdf")
    return float(mid), float(low), float(high)


def summarise_curves(curves: dict, level: float = LEVEL) -> dict:
    """The per-split figures of :func:`worth_curves` as medians with their spread."""
    pool = curves["human_spearman"].shape[1]
    return {
        "pairs": curves["pairs"], "pool": pool, "splits": len(curves["machine_spearman"]),
        "human": [{"k": k + 1, "spearman": float(np.median(curves["human_spearman"][:, k])),
                   "mae": float(np.median(curves["human_mae"][:, k]))} for k in range(pool)],
        "machine_spearman": float(np.median(curves["machine_spearman"])),
        "machine_mae": float(np.median(curves["machine_mae"])),
        "constant_mae": float(np.median(curves["constant_mae"])),
        "ratings_spearman": dict(zip(("median", "low", "high"),
                                     spread(curves["k_spearman"], level))),
        "ratings_mae": dict(zip(("median", "low", "high"), spread(curves["k_mae"], level))),
    }


def calibration(machine, human) -> dict:
    """The least-squares line from a machine's scores to the human means.

    Parameters
    ----------
    machine, human : array-like
        The machine's score and the human mean of each pair (both defined).

    Returns
    -------
    dict
        ``slope``, ``intercept``, ``r2`` (the share of the human means' variance the line
        explains, 0 .. 1, higher is better; NaN for a constant machine), ``pairs``,
        ``machine_scale`` and ``human_scale`` (the lowest and highest value seen).

    Examples
    --------
    >>> fit = calibration([0, 5, 10], [0, 3, 6])
    >>> round(fit["slope"], 6), round(abs(fit["intercept"]), 6), round(fit["r2"], 6)
    (0.6, 0.0, 1.0)
    """
    x, y = np.asarray(machine, dtype=float), np.asarray(human, dtype=float)
    if len(x) < 3:
        raise InputError(f"{len(x)} pairs have a machine score and human ratings; a "
                         "calibration needs 3 or more", field="--machine")
    slope, intercept = least_squares_line(x, y)
    if np.ptp(x) == 0:
        r2 = math.nan
    else:
        residual = y - (slope * x + intercept)
        total = float(np.sum((y - y.mean()) ** 2))
        r2 = 1 - float(np.sum(residual ** 2)) / total if total > 0 else math.nan
    return {"slope": slope, "intercept": intercept, "r2": r2, "pairs": int(len(x)),
            "machine_scale": [float(x.min()), float(x.max())],
            "human_scale": [float(y.min()), float(y.max())]}


def residuals(frame: pd.DataFrame, fit: dict) -> pd.DataFrame:
    """``frame`` (``machine``, ``human``) with ``calibrated`` (the machine on the human scale,
    :func:`calibration`'s line) and ``residual`` (human minus calibrated)."""
    calibrated = fit["slope"] * frame["machine"] + fit["intercept"]
    return frame.assign(calibrated=calibrated, residual=frame["human"] - calibrated)


def score_bands(human: pd.Series, bands: int) -> pd.Series:
    """Each pair's human-mean quantile band (``1`` lowest .. ``bands``), labelled with its
    range: an ordered categorical, lowest band first (ties split by file order)."""
    if bands < 2:
        raise InputError(f"need 2 or more bands, found {bands}", field="--bands")
    codes = pd.qcut(human.rank(method="first"), bands, labels=False)
    edges = human.groupby(codes).agg(["min", "max"])
    names = {code: f"{code + 1}/{bands} [{row['min']:.2f}, {row['max']:.2f}]"
             for code, row in edges.iterrows()}
    return pd.Series(pd.Categorical(codes.map(names), categories=list(names.values()),
                                    ordered=True), index=human.index)


def errors_by(frame: pd.DataFrame, by: str) -> pd.DataFrame:
    """The machine's errors per group of pairs.

    Parameters
    ----------
    frame : pandas.DataFrame
        One row per pair: ``machine``, ``human``, ``calibrated``, ``residual``
        (:func:`residuals`) and the column ``by``.
    by : str
        The grouping column (``pos``, ``relation``, ``band`` ...).

    Returns
    -------
    pandas.DataFrame
        One row per group (in the order of an ordered categorical, as score bands are, else
        of first appearance): ``group``,
        ``pairs``, ``spearman`` (machine against human means within the group; NaN for fewer
        than 3 pairs), ``mae`` (calibrated), ``bias`` (mean residual: above 0, the machine
        rates the group too low).
    """
    rows = []
    ordered = isinstance(frame[by].dtype, pd.CategoricalDtype) and frame[by].cat.ordered
    groups = frame.groupby(by, sort=ordered, observed=True, dropna=True)
    for name, part in groups:
        rows.append({"group": str(name), "pairs": int(len(part)),
                     "spearman": spearman(part["machine"], part["human"])
                     if len(part) >= 3 else math.nan,
                     "mae": float(part["residual"].abs().mean()),
                     "bias": float(part["residual"].mean())})
    return pd.DataFrame(rows, columns=["group", "pairs", "spearman", "mae", "bias"])


def misjudged(frame: pd.DataFrame, top: int = 10) -> pd.DataFrame:
    """The ``top`` pairs with the largest absolute residual (:func:`residuals`), largest
    first (ties in file order)."""
    order = frame["residual"].abs().sort_values(ascending=False, kind="stable").index
    return frame.loc[order[:top], ["word1", "word2", "human", "machine", "calibrated",
                                   "residual"]].reset_index(drop=True)


def published_overlap(keys, known: dict[str, pd.DataFrame], *, at_least: float = 0.1) -> list:
    """The published datasets holding a share of the pilot's pairs.

    Parameters
    ----------
    keys : array-like of str
        The pilot's pair keys (:func:`pair_key`); a pair matches in either order.
    known : dict
        Dataset name -> its pairs (``word1, word2``).
    at_least : float
        The share of the pilot's pairs from which a dataset is named.

    Returns
    -------
    list of dict
        ``dataset``, ``pairs`` (of the pilot's it holds), ``share``; largest share first.
    """
    keys = ["\t".join(sorted(key.split("\t"))) for key in keys]
    found = []
    for name, pairs in known.items():
        published = set(pair_key(pairs["word1"], pairs["word2"], ordered=False))
        held = sum(key in published for key in keys)
        share = held / len(keys) if keys else 0.0
        if held and share >= at_least:
            found.append({"dataset": name, "pairs": held, "share": share})
    return sorted(found, key=lambda row: -row["share"])


def machine_worth(ratings: pd.DataFrame, machine: pd.DataFrame, *, pool: int = 5,
                  splits: int = 40, bands: int = 3, top: int = 10,
                  rng: np.random.Generator, labels: pd.DataFrame | None = None,
                  identified: bool = False, epsilon: float = 0.2, alignment: str = "rmse",
                  known: dict[str, pd.DataFrame] | None = None) -> dict:
    """Everything :func:`worth_curves`, :func:`calibration`, :func:`errors_by`,
    :func:`misjudged`, :func:`published_overlap` and, where raters are identified, the
    alternative annotator test (:mod:`lexgold.machine.alttest`) say about a machine on a pilot.

    Parameters
    ----------
    ratings : pandas.DataFrame
        The pilot, long format (:func:`rating_matrix`); a ``pos`` or ``relation`` column
        groups the errors.
    machine : pandas.DataFrame
        ``word1, word2, machine``.
    pool, splits : int
        As :func:`worth_curves`.
    bands : int
        Score bands: human-mean quantiles (3 terciles, 5 quintiles).
    top : int
        The misjudged pairs listed.
    rng : numpy.random.Generator
    labels : pandas.DataFrame, optional
        ``word1, word2`` and ``pos``/``relation`` columns for the pairs (a pairs file).
    identified : bool
        Whether ``rater_id`` names people (then the alternative annotator test runs).
    epsilon, alignment
        As :func:`lexgold.machine.alttest.alternative_annotator_test`.
    known : dict, optional
        Published datasets' pairs (:func:`published_overlap`), checked against the pairs the
        machine scored.

    Returns
    -------
    dict
        ``pairs`` (the pilot's), ``covered`` (with a machine score), ``worth``
        (:func:`summarise_curves`), ``calibration``, ``errors`` (group column -> its table as
        records), ``misjudged`` (records), ``alternative_annotator_test`` (None for anonymous
        raters), ``published`` (:func:`published_overlap`).
    """

    answered, keys = _rater_answers(ratings)
    pairs, matrix = _ragged(answered, keys)
    scores = machine_for(pairs, machine)
    covered = ~np.isnan(scores)
    if covered.sum() < 3:
        raise InputError(f"the machine scores {int(covered.sum())} of the pilot's "
                         f"{len(pairs)} pairs; its worth needs 3 or more", field="--machine")
    curves = worth_curves(matrix, scores, pool=pool, splits=splits, rng=rng)
    frame = pairs.assign(machine=scores, human=matrix.means())[covered]
    fit = calibration(frame["machine"], frame["human"])
    frame = residuals(frame, fit)
    frame["band"] = score_bands(frame["human"], bands)
    groups = _labels(ratings, labels)
    errors = {}
    for name in ("pos", "relation"):
        if name in groups:
            found = frame["key"].map(groups[name])
            if found.notna().any():
                errors[name] = errors_by(frame.assign(**{name: found}), name)
    errors["band"] = errors_by(frame, "band")
    test = None
    if identified:
        long = pd.DataFrame({"rater_id": answered["rater_id"].astype(str),
                             "key": keys[answered["code"].to_numpy()],
                             "rating": answered["rating"]})
        test = alternative_annotator_test(
            long, pd.Series(frame["machine"].to_numpy(), index=frame["key"].to_numpy()),
            epsilon=epsilon, alignment=alignment)
    return {"pairs": int(len(pairs)), "covered": int(covered.sum()),
            "worth": summarise_curves(curves), "calibration": fit,
            "errors": {name: table.to_dict("records") for name, table in errors.items()},
            "misjudged": misjudged(frame, top).to_dict("records"),
            "alternative_annotator_test": test,
            "published": published_overlap(frame["key"], known or {})}


def _labels(ratings: pd.DataFrame, labels: pd.DataFrame | None) -> dict[str, pd.Series]:
    """Pair key -> part of speech and relation: the pairs file's ``pos`` and ``relation`` (or
    ``kind``) columns first, else the pilot's ``pos`` and ``relation`` (its ``kind`` is the
    row's kind in lexgold's long format, not a relation)."""
    sources = [(labels, {"pos": "pos", "relation": "relation", "kind": "relation"}),
               (ratings, {"pos": "pos", "relation": "relation"})]
    out: dict[str, pd.Series] = {}
    for source, names in sources:
        if source is None:
            continue
        for column, name in names.items():
            if column in source.columns and name not in out:
                # each distinct row once: the first row of a pair with a label stays first
                rows = source[["word1", "word2", column]].drop_duplicates()
                keys = pair_key(rows["word1"], rows["word2"]).to_numpy()
                table = pd.Series(rows[column].astype("string").str.strip().to_numpy(),
                                  index=keys)
                table = table[table.notna() & (table != "")]
                out[name] = table[~table.index.duplicated()]
    return out
