"""Best-Worst Scaling answers to scores: counting, Bradley-Terry, intervals, split-half, exclusions.

An answer to a tuple is stored in the long format, one row per pair of the tuple (docs/process.md,
"Best-Worst Scaling")::

    rater_id, tranche, tuple_id, position, word1, word2, rating, kind[, pos, answered_at]

with ``rating`` 1 for the pair chosen as most (similar), -1 for the least and 0 for the others,
``position`` the pair's 0-based row in the tuple as shown, ``kind`` ``unique``, ``consistency``
or ``checkpoint`` (a check tuple, ``tuple_id`` ``check-<n>``, n 1-based in the protocol's
``[[study.bws.checkpoints]]``). Every function here is pure: frames in, frames or dicts out,
randomness from an explicit ``numpy.random.Generator``.

- :func:`counting_scores`: %best - %worst per pair (Orme 2009; Kiritchenko & Mohammad 2016,
  section 3), on [-1, 1];
- :func:`bt_scores`: Bradley-Terry strengths (``choix.ilsr_pairwise``) on the comparisons an
  answer implies: the best pair beats each other pair, each other pair beats the worst;
- :func:`bootstrap_intervals`: per-pair percentile intervals over annotations resampled with
  replacement;
- :func:`bws_split_half`: Kiritchenko & Mohammad 2017 (section 4): the annotations of each tuple
  split at random into two halves, scores from each half, Spearman between them, averaged over
  100 splits; no Spearman-Brown correction is applied to ``r`` (they apply none; the corrected
  value is given beside it for comparison with rating scales' split-half figures);
- :func:`bws_exclusions`: failed check tuples, rushing, always the same position.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from lexgold.errors import InputError
from lexgold.process.rules import BWS_REGISTRY
from lexgold.stats import spearman

REQUIRED = ("rater_id", "tranche", "tuple_id", "position", "word1", "word2", "rating")
ITEM = ["word1", "word2"]
ANNOTATION = ["rater_id", "tuple_id"]


def check_bws(frame: pd.DataFrame, *, source=None) -> pd.DataFrame:
    """Check BWS answers (module docstring) and return a normalised copy.

    Raises :class:`InputError` naming the file, the column, or the rater and tuple: a missing
    column, a rating other than -1, 0, 1, or an answer without exactly one best and one worst
    pair (the same pair cannot be both: it has one row).
    """
    where = source if source is not None else "answers"
    missing = [c for c in REQUIRED if c not in frame.columns]
    if missing:
        raise InputError(f"not Best-Worst answers: missing column; required: "
                         f"{', '.join(REQUIRED)}", path=where, field=missing[0])
    out = frame.copy()
    for column in ("rater_id", "tranche", "tuple_id", "word1", "word2"):
        out[column] = out[column].astype(str).str.strip()
    out["kind"] = (out["kind"].fillna("unique").astype(str) if "kind" in out.columns
                   else "unique")
    rating = pd.to_numeric(out["rating"], errors="coerce")
    bad = ~rating.isin([-1, 0, 1])
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise InputError(f"rating {frame['rating'].iloc[row]!r}: a Best-Worst answer is 1 "
                         f"(most), -1 (least) or 0", path=where, line=row + 2, field="rating")
    out["rating"] = rating.astype(int)
    out["position"] = pd.to_numeric(out["position"], errors="coerce")
    if out["position"].isna().any():
        row = int(np.flatnonzero(out["position"].isna().to_numpy())[0])
        raise InputError("position: expected a 0-based integer", path=where, line=row + 2,
                         field="position")
    out["position"] = out["position"].astype(int)
    counts = pd.DataFrame({"best": out["rating"].eq(1), "worst": out["rating"].eq(-1)}).groupby(
        [out["rater_id"], out["tuple_id"]], sort=False).sum()
    wrong = counts[(counts["best"] != 1) | (counts["worst"] != 1)]
    if len(wrong):
        (rater, tuple_id), row = wrong.index[0], wrong.iloc[0]
        raise InputError(f"rater {rater}, tuple {tuple_id}: {row['best']} pairs marked most and "
                         f"{row['worst']} least; an answer needs one of each, two different "
                         f"pairs", path=where, field="rating")
    return out


def _scored(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[frame["kind"] != "checkpoint"]


def counting_scores(frame: pd.DataFrame) -> pd.DataFrame:
    """Counting scores: ``(times best - times worst) / times shown`` per pair, on [-1, 1].

    Parameters
    ----------
    frame : pandas.DataFrame
        Checked answers (:func:`check_bws`); check tuples are left out.

    Returns
    -------
    pandas.DataFrame
        ``word1, word2, n, best, worst, score`` (``n``: annotations of tuples holding the pair;
        1 = always chosen most, -1 = always least), one row per pair, sorted by pair.

    References
    ----------
    Orme 2009 (MaxDiff counting); Kiritchenko & Mohammad 2016, section 3.

    Examples
    --------
    >>> answers = pd.DataFrame({"rater_id": "r", "tranche": "1", "tuple_id": "1",
    ...     "position": [0, 1, 2, 3], "word1": list("abcd"), "word2": list("wxyz"),
    ...     "rating": [1, 0, 0, -1]})
    >>> counting_scores(check_bws(answers))["score"].tolist()
    [1.0, 0.0, 0.0, -1.0]
    """
    rows = _scored(frame)
    grouped = rows.groupby(ITEM)["rating"]
    flags = pd.DataFrame({"best": rows["rating"].eq(1), "worst": rows["rating"].eq(-1)})
    counts = flags.groupby([rows["word1"], rows["word2"]]).sum().astype(int)
    scores = pd.DataFrame({"n": grouped.size()}).join(counts).reset_index()
    scores["score"] = (scores["best"] - scores["worst"]) / scores["n"]
    return scores


def _codes(rows: pd.DataFrame):
    """``(items, keys, item, note)``: the pairs (sorted), the annotations, and per row the
    item id and the annotation id."""
    items = rows[ITEM].drop_duplicates().sort_values(ITEM).reset_index(drop=True)
    item = pd.MultiIndex.from_frame(rows[ITEM]).map(
        dict(zip(pd.MultiIndex.from_frame(items), range(len(items)))))
    keys = rows[ANNOTATION].drop_duplicates().reset_index(drop=True)
    note = pd.MultiIndex.from_frame(rows[ANNOTATION]).map(
        dict(zip(pd.MultiIndex.from_frame(keys), range(len(keys)))))
    return items, keys, np.asarray(item, dtype=int), np.asarray(note, dtype=int)


def comparisons(frame: pd.DataFrame, *, with_annotation: bool = False):
    """``(items, comparisons)``: the pairs (``word1, word2``, index = item id) and an ``(m, 2)``
    array of ``(winner, loser)`` item ids implied by the answers: the best pair beats each
    other pair of its tuple, each other pair beats the worst (``2 * size - 3`` per answer).
    ``with_annotation`` adds a third value: the annotation id of each comparison."""
    rows = _scored(frame)
    items, keys, item, note = _codes(rows)
    rating = rows["rating"].to_numpy()
    best = np.full(len(keys), -1)
    worst = np.full(len(keys), -1)
    best[note[rating == 1]] = item[rating == 1]
    worst[note[rating == -1]] = item[rating == -1]
    loses = rating != 1                                       # best > each other pair
    middle = rating == 0                                      # each middle pair > worst
    pairs = np.concatenate([
        np.column_stack([best[note[loses]], item[loses], note[loses]]),
        np.column_stack([item[middle], worst[note[middle]], note[middle]])]).astype(int)
    return items, pairs if with_annotation else pairs[:, :2]


def bt_scores(frame: pd.DataFrame, *, alpha: float = 0.01) -> pd.DataFrame:
    """Bradley-Terry scores of the pairs from the comparisons of :func:`comparisons`.

    Parameters
    ----------
    frame : pandas.DataFrame
        Checked answers (:func:`check_bws`).
    alpha : float
        Regularisation of ``choix.ilsr_pairwise`` (a pair that always wins stays finite).

    Returns
    -------
    pandas.DataFrame
        ``word1, word2, score``: log-strengths, mean 0 (higher = more often preferred).

    References
    ----------
    Bradley & Terry 1952; Maystre & Grossglauser 2015 (I-LSR, the ``choix`` package). The
    best > others > worst expansion treats a best-worst answer as the comparisons it implies
    (the "maxdiff as paired comparisons" reading, Louviere, Flynn & Marley 2015, chapter 1).
    """
    items, pairs = comparisons(frame)
    if len(items) < 2 or not len(pairs):
        return items.assign(score=np.nan)
    params = _bradley_terry(len(items), pairs, alpha)
    return items.assign(score=params - params.mean())


def _bradley_terry(n_items: int, pairs: np.ndarray, alpha: float,
                   initial: np.ndarray | None = None) -> np.ndarray:
    """Bradley-Terry log-strengths (mean 0) from ``(winner, loser)`` rows:
    ``choix.ilsr_pairwise(n_items, pairs, alpha)``, computed by choix on the win-count matrix
    (``choix.ilsr_pairwise_dense``: the same chain, without a Python loop over comparisons;
    tests compare the two). ``initial``: starting log-strengths (bootstrap replicates start
    from the full data's)."""
    import choix

    wins = np.zeros((n_items, n_items))
    np.add.at(wins, (pairs[:, 0], pairs[:, 1]), 1)
    params = choix.ilsr_pairwise_dense(wins, alpha=alpha, initial_params=initial,
                                       max_iter=1000)
    return params - params.mean()


def method_scores(frame: pd.DataFrame, method: str, *, alpha: float = 0.01) -> pd.DataFrame:
    """Scores of ``method`` (``counting`` or ``bradley-terry``): ``word1, word2, score``."""
    if method == "counting":
        return counting_scores(frame)[ITEM + ["score"]]
    if method == "bradley-terry":
        return bt_scores(frame, alpha=alpha)
    raise InputError(f"method: allowed 'counting' | 'bradley-terry', given {method!r}",
                     field="method")


def bws_release_scale(scores: pd.Series, method: str, low: float, high: float):
    """The linear map of a method's scores onto the release scale ``[low, high]``.

    Counting scores run from -1 to 1, which map onto ``low`` and ``high`` (fixed ends: a
    score means the same in every study); Bradley-Terry strengths have no fixed ends, so the
    lowest and highest pair of the study are mapped onto ``low`` and ``high``. Returns
    ``f(values) -> values`` (apply it to intervals too).

    >>> f = bws_release_scale(pd.Series([-0.5, 0.5]), "counting", 0, 10)
    >>> f(np.array([-1.0, 0.0, 1.0])).tolist()
    [0.0, 5.0, 10.0]
    """
    if method == "counting":
        a, b = -1.0, 1.0
    else:
        a, b = float(np.nanmin(scores)), float(np.nanmax(scores))
        if not b > a:
            return lambda values: np.full(np.shape(values), (low + high) / 2)
    return lambda values: low + (np.asarray(values, dtype=float) - a) * (high - low) / (b - a)


def bootstrap_intervals(frame: pd.DataFrame, method: str, *, replicates: int, level: float,
                        rng: np.random.Generator, alpha: float = 0.01) -> pd.DataFrame:
    """Percentile intervals of each pair's score over annotations (a rater's answer to a tuple)
    resampled with replacement.

    Returns ``word1, word2, low, high`` on the method's own scale (NaN with 0 replicates).
    """
    rows = _scored(frame)
    items, keys, item, note = _codes(rows)
    if replicates == 0 or rows.empty:
        return items.assign(low=np.nan, high=np.nan)
    rating = rows["rating"].to_numpy()
    if method == "bradley-terry":
        pairs = comparisons(rows, with_annotation=True)[1]
        start = _bradley_terry(len(items), pairs[:, :2], alpha)
    draws = np.empty((replicates, len(items)))
    for b in range(replicates):
        weight = rng.multinomial(len(keys), np.full(len(keys), 1 / len(keys)))
        if method == "counting":
            w = weight[note]
            n = np.bincount(item, weights=w, minlength=len(items))
            net = np.bincount(item, weights=w * rating, minlength=len(items))
            with np.errstate(invalid="ignore", divide="ignore"):
                draws[b] = np.where(n > 0, net / n, np.nan)
        else:
            drawn = np.repeat(pairs[:, :2], weight[pairs[:, 2]], axis=0)
            draws[b] = _bradley_terry(len(items), drawn, alpha, start)
    tail = (1 - level) / 2 * 100
    with np.errstate(invalid="ignore"):
        low, high = np.nanpercentile(draws, [tail, 100 - tail], axis=0)
    return items.assign(low=low, high=high)


def _half_scores(item, rating, mask, n_items):
    n = np.bincount(item[mask], minlength=n_items)
    net = np.bincount(item[mask], weights=rating[mask], minlength=n_items)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, net / np.maximum(n, 1), np.nan)


def _spearman(one, two) -> float:
    both = np.isfinite(one) & np.isfinite(two)
    one, two = one[both], two[both]
    if len(one) < 3 or np.ptp(one) == 0 or np.ptp(two) == 0:
        return float("nan")
    return spearman(one, two)


def bws_split_half_once(frame: pd.DataFrame, first: pd.Series) -> float:
    """Spearman between the counting scores of two halves of the annotations.

    ``first`` is a boolean per row of ``frame`` (the same for every row of an annotation): the
    row's annotation belongs to the first half. Pairs scored in only one half are left out.
    """
    rows = _scored(frame)
    first = first.loc[rows.index].to_numpy(dtype=bool)
    items, _, item, _ = _codes(rows)
    rating = rows["rating"].to_numpy(dtype=float)
    return _spearman(_half_scores(item, rating, first, len(items)),
                     _half_scores(item, rating, ~first, len(items)))


def bws_split_half(frame: pd.DataFrame, *, splits: int = 100,
               rng: np.random.Generator) -> dict:
    """Split-half reliability as Kiritchenko & Mohammad (2017, section 4) compute it.

    Each split divides the annotations of every tuple at random into two halves (an odd
    count gives the extra annotation to a random half); counting scores are computed from each
    half and correlated (Spearman, :func:`bws_split_half_once`); ``r`` is the mean over the splits.

    Returns
    -------
    dict
        ``r`` (mean Spearman; 1 is best), ``sd`` over splits, ``splits``,
        ``spearman_brown_applied`` (False: ``r`` is the half-size correlation, as K&M report
        it) and ``spearman_brown`` (``2r / (1 + r)``, the full-size estimate, for comparison).
    """
    rows = _scored(frame)
    items, keys, item, note = _codes(rows)
    rating = rows["rating"].to_numpy(dtype=float)
    tuple_codes = pd.factorize(keys["tuple_id"])[0]
    size = np.bincount(tuple_codes)[tuple_codes]
    values = []
    for _ in range(splits):
        order = rng.permutation(len(keys))          # rank of each annotation in its tuple
        rank = pd.Series(order).groupby(tuple_codes).rank(method="first").to_numpy() - 1
        coin = rng.integers(0, 2, len(keys))
        half = np.where(size % 2 == 1, (size - 1) // 2 + coin, size // 2)
        first = (rank < half)[note]
        values.append(_spearman(_half_scores(item, rating, first, len(items)),
                                _half_scores(item, rating, ~first, len(items))))
    values = np.array(values)
    finite = np.isfinite(values).any()
    r = float(np.nanmean(values)) if finite else float("nan")
    return {"r": r, "sd": float(np.nanstd(values)) if finite else float("nan"),
            "splits": splits, "spearman_brown_applied": False,
            "spearman_brown": 2 * r / (1 + r) if finite and r > -1 else float("nan")}


def annotations(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per answer: ``rater_id, tranche, tuple_id, kind, best, worst`` (positions),
    ``best_pair``, ``worst_pair`` (``word1 / word2``), ``size`` and ``answered_at``."""
    rows = frame.assign(pair=frame["word1"] + " / " + frame["word2"])
    group = rows.groupby(ANNOTATION, sort=False)
    out = group.agg(tranche=("tranche", "first"), kind=("kind", "first"), size=("rating", "size"))
    best = rows[rows["rating"] == 1].set_index(ANNOTATION)
    worst = rows[rows["rating"] == -1].set_index(ANNOTATION)
    out["best"], out["best_pair"] = best["position"], best["pair"]
    out["worst"], out["worst_pair"] = worst["position"], worst["pair"]
    if "answered_at" in rows.columns:
        out["answered_at"] = group["answered_at"].first()
    return out.reset_index()


def bws_exclusions(frame: pd.DataFrame, config, checkpoints=()) -> pd.DataFrame:
    """Rater exclusions of a BWS study.

    Parameters
    ----------
    frame : pandas.DataFrame
        Checked answers (:func:`check_bws`).
    config : lexgold.process.config.BwsConfig
        ``rules`` (run in the order of :data:`lexgold.process.rules.BWS_REGISTRY`) and their
        thresholds.
    checkpoints : sequence of lexgold.study.config.BwsCheckpoint
        The protocol's check tuples; ``check-<n>`` answers are marked against the n-th.

    Returns
    -------
    pandas.DataFrame
        ``rater_id, tranche, tuples, checkpoint_failures, median_s_per_tuple,
        best_position_share, worst_position_share, excluded, reasons`` (reasons: the rules that
        fired, ``;``-separated). ``median_s_per_tuple`` is NaN without ``answered_at`` (the
        rule then excludes no one): the seconds between a page and the rater's previous one,
        per tuple of the page.
    """
    notes = annotations(frame)
    out = notes.groupby("rater_id").agg(tranche=("tranche", "first")).reset_index()
    checks = notes[notes["kind"] == "checkpoint"].copy()

    def failed(row) -> bool:
        number = row["tuple_id"].removeprefix("check-")
        if not number.isdigit() or not 1 <= int(number) <= len(checkpoints):
            return False
        check = checkpoints[int(number) - 1]
        best = " / ".join(check.pairs[check.best])
        worst = " / ".join(check.pairs[check.worst])
        return row["best_pair"] != best or row["worst_pair"] != worst

    checks["failed"] = checks.apply(failed, axis=1) if len(checks) else pd.Series(dtype=bool)
    out["checkpoint_failures"] = out["rater_id"].map(
        checks.groupby("rater_id")["failed"].sum()).fillna(0).astype(int)
    scored = notes[notes["kind"] != "checkpoint"]
    out["tuples"] = out["rater_id"].map(scored.groupby("rater_id").size()).fillna(0).astype(int)
    for side in ("best", "worst"):
        share = scored.groupby("rater_id")[side].agg(
            lambda p: p.value_counts(normalize=True).iloc[0])
        out[f"{side}_position_share"] = out["rater_id"].map(share)
    out["median_s_per_tuple"] = out["rater_id"].map(_seconds_per_tuple(notes))
    fired = {name: rule.function(out, config).to_numpy()
             for name, rule in BWS_REGISTRY.items() if name in config.rules}
    reasons = [[name for name, hit in fired.items() if hit[i]] for i in range(len(out))]
    out["excluded"] = [bool(r) for r in reasons]
    out["reasons"] = [";".join(r) for r in reasons]
    return out


def _seconds_per_tuple(notes: pd.DataFrame) -> pd.Series:
    """Median seconds per tuple of each rater: a page (the answers sent together, one
    ``answered_at``) over the time since the rater's previous page."""
    if "answered_at" not in notes.columns:
        return pd.Series(dtype=float)
    at = pd.to_datetime(notes["answered_at"], errors="coerce", utc=True)
    pages = notes.assign(at=at).dropna(subset=["at"]).groupby(["rater_id", "at"]).size()
    pages = pages.rename("tuples").reset_index().sort_values(["rater_id", "at"])
    pages["seconds"] = pages.groupby("rater_id")["at"].diff().dt.total_seconds()
    pages = pages.dropna(subset=["seconds"])
    return (pages["seconds"] / pages["tuples"]).groupby(pages["rater_id"]).median()
