"""Inter-annotator agreement: IAA-1 (pairwise) and IAA-2 (against the mean of the others).

SimLex-999 section 4.1 and HyperLex section 5 ("Inter-Annotator Agreement"):

- IAA-1 is the mean Spearman rho over pairs of raters;
- IAA-2 is the mean, over raters, of the Spearman rho between a rater and the mean of all
  other raters.

How raters who saw different tranches are pooled (both functions, ``pool`` argument):

``pool="tranche"`` (default)
    Raters are compared only with raters of their own tranche, on the items both rated (the
    tranche's unique pairs plus the consistency pairs). IAA-1 is the mean over *all* such
    within-tranche rater pairs of every tranche, each rater pair weighing the same (so tranches
    with more raters weigh more). For IAA-2 "the other raters" are the other raters of the same
    tranche; IAA-2 is the mean over all raters of all tranches.
``pool="all"``
    Tranches are ignored: every two raters are compared on the items they share (across
    tranches these are the consistency pairs), and for IAA-2 the mean of the others on an item
    is over every other rater of that item.

In both, a correlation is computed only on at least ``min_overlap`` shared items; a rater pair
(IAA-1) or a rater (IAA-2) with fewer is left out. A pair a rater answered twice (calibration
repeat, duplicate) counts once with the mean of the answers; checkpoint rows never count.
Undefined correlations (constant ratings, too little overlap) are left out of the means with an
:class:`AgreementWarning`; when none is defined the result is NaN, never 0 (with
``pool="tranche"`` and several tranches the warning says raters are compared only within their
tranche and names ``pool="all"``).

Cost. A group where every rater rated every item (a SimLex tranche) gets IAA-1 in
closed form, O(items x raters) (:func:`_dense_rho_sum`); it equals the mean of the pairwise rho
to about 1e-15, not bit for bit. Raters who overlap partially are still correlated pair by pair
on their shared items. The bootstrap draws every replicate's items first (the same generator
calls as one replicate at a time), then computes batches of replicates from the drawn counts
of each rater's rating levels (:mod:`lexgold.process.replicates`): IAA-2 intervals are the
same bytes as before, IAA-1 intervals equal to about 1e-15.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Callable, Literal

import numpy as np
import pandas as pd

from lexgold.errors import InputError
from lexgold.ratings import ITEM
from lexgold.ratings.long import REQUIRED, check_ratings, first_rows, key_groups
from lexgold.process.replicates import ReplicateTerms
from lexgold.stats import average_ranks, check_bootstrap, percentile_interval

Pool = Literal["tranche", "all"]
POOLS = ("tranche", "all")
#: fewest shared items on which a correlation is computed (both designs share >= 79)
MIN_OVERLAP = 10


class AgreementWarning(UserWarning):
    """An agreement figure is undefined or rests on fewer correlations than the data has."""


def iaa_pairwise(ratings: pd.DataFrame, *, pool: Pool = "tranche",
                 min_overlap: int = MIN_OVERLAP) -> float:
    """IAA-1: the mean pairwise Spearman rho between raters.

    Parameters
    ----------
    ratings : pandas.DataFrame
        Long format (docs/contract.md): ``rater_id, tranche, word1, word2, rating``.
    pool : {"tranche", "all"}
        How tranches are pooled; see the module docstring.
    min_overlap : int
        Fewest shared items for a rater pair to be compared (at least 2).

    Returns
    -------
    float
        In [-1, 1], 1 is perfect agreement. NaN with an :class:`AgreementWarning` when no rater
        pair has a defined correlation (one rater, constant ratings, too little overlap).

    References
    ----------
    Hill, Reichart & Korhonen (2015), SimLex-999, section 4.1; Vulic et al. (2017), HyperLex,
    section 5, IAA-1.

    Examples
    --------
    >>> import pandas as pd
    >>> ratings = pd.DataFrame({"rater_id": list("aaabbbccc"), "tranche": 1,
    ...     "word1": list("xyzxyzxyz"), "word2": "w", "rating": [0, 3, 6, 1, 4, 5, 6, 3, 0]})
    >>> round(iaa_pairwise(ratings, min_overlap=3), 4)   # (1 + -1 + -1) / 3
    -0.3333
    """
    _check_options(pool, min_overlap)
    return _iaa1(check_ratings(ratings), pool, min_overlap)


def iaa_against_mean(ratings: pd.DataFrame, *, pool: Pool = "tranche",
                     min_overlap: int = MIN_OVERLAP) -> float:
    """IAA-2: the mean over raters of Spearman rho(rater, mean of the other raters).

    Parameters
    ----------
    ratings : pandas.DataFrame
        Long format (docs/contract.md).
    pool : {"tranche", "all"}
        Who "the other raters" are; see the module docstring.
    min_overlap : int
        Fewest items, rated by the rater and by at least one other rater, for the rater to count.

    Returns
    -------
    float
        In [-1, 1], 1 is best. NaN with an :class:`AgreementWarning` when no rater has a defined
        correlation.

    References
    ----------
    Vulic et al. (2017), HyperLex, section 5, IAA-2; Hill et al. (2015), section 2.2 (WS-353).

    Examples
    --------
    >>> import pandas as pd
    >>> ratings = pd.DataFrame({"rater_id": list("aaabbbccc"), "tranche": 1,
    ...     "word1": list("xyzxyzxyz"), "word2": "w", "rating": [0, 3, 6, 1, 4, 5, 2, 3, 4]})
    >>> iaa_against_mean(ratings, min_overlap=3)
    1.0
    """
    _check_options(pool, min_overlap)
    return _iaa2(check_ratings(ratings), pool, min_overlap)


def _iaa1(frame: pd.DataFrame, pool: Pool, min_overlap: int, groups=None) -> float:
    """:func:`iaa_pairwise` of a frame :func:`check_ratings` has already checked (``groups``:
    its :func:`_matrices`, when already made).

    A group where every rater rated every item (a SimLex tranche) takes the closed form of
    :func:`_dense_rho_sum`, O(items x raters); the others correlate each pair of raters on
    their shared items (:func:`_spearman_matrix`)."""
    total, defined, compared = 0.0, 0, 0
    for group in groups if groups is not None else _matrices(frame, pool, checked=True):
        matrix = group.matrix
        raters = matrix.shape[1]
        if raters < 2:
            continue
        if not np.isnan(matrix).any():
            if len(matrix) >= min_overlap:
                rho_sum, varying = _dense_rho_sum(average_ranks(matrix, axis=0))
                total += float(rho_sum)
                defined += int(varying) * (int(varying) - 1) // 2
                compared += raters * (raters - 1) // 2
            continue
        rho, n = _spearman_matrix(matrix, min_overlap)
        upper_a, upper_b = np.triu_indices(raters, k=1)
        kept = rho[upper_a, upper_b][n[upper_a, upper_b] >= min_overlap]
        total += float(np.nansum(kept))
        defined += int((~np.isnan(kept)).sum())
        compared += len(kept)
    return _mean_of_sum(total, defined, compared, "IAA-1", "rater pair",
                        _pool_hint(frame, pool))


def _iaa2(frame: pd.DataFrame, pool: Pool, min_overlap: int, groups=None) -> float:
    """:func:`iaa_against_mean` of a frame :func:`check_ratings` has already checked."""
    table = rater_against_mean(frame, pool=pool, min_overlap=min_overlap,
                               _groups=groups if groups is not None
                               else _matrices(frame, pool, checked=True))
    return _mean_or_nan(table["rho"], "IAA-2", "rater", _pool_hint(frame, pool))


def _dense_rho_sum(ranks: np.ndarray):
    """Sum of the Spearman rho over every pair of non-constant raters, and their number k.

    ``ranks`` is items x raters (or a stack of such matrices, ``(..., items, raters)``) of
    ranks within each column, with no missing cell. With z_i the centred, unit-length rank
    column of rater i, rho_ij = z_i . z_j and z_i . z_i = 1, so
    sum over pairs i < j of rho_ij = (|sum_i z_i|^2 - k) / 2: O(items x raters) instead of
    O(items x raters^2); |z_i|^2 is subtracted as computed. Constant columns (no defined rho)
    are left out, as NaN rho is.
    Equal to the pairwise route to about 1e-12 (rounding), not bit for bit.
    """
    centred = ranks - ranks.mean(axis=-2, keepdims=True)
    squares = (centred * centred).sum(axis=-2, keepdims=True)
    varying = squares > 1e-9 * ranks.shape[-2]
    with np.errstate(invalid="ignore", divide="ignore"):
        unit = np.where(varying, centred / np.sqrt(squares), 0.0)
    summed = unit.sum(axis=-1)
    k = varying.sum(axis=(-2, -1))
    # z_i . z_i is 1 up to rounding; subtracting the computed squares (not k) cancels that
    # rounding, so that e.g. two identical raters give exactly their |z|^2
    return ((summed * summed).sum(axis=-1) - (unit * unit).sum(axis=(-2, -1))) / 2, k


def iaa_weighted_by_pairs(ratings: pd.DataFrame, *, min_overlap: int = MIN_OVERLAP,
                          repeats: Literal["keep", "merge"] = "keep") -> dict:
    """IAA-1 and IAA-2 per tranche, aggregated as a mean weighted by each tranche's pairs.

    The aggregation of the WordSim-353 figures quoted by SimLex-999 (section 2.3) and HyperLex
    (Table 4): the IAA of each set (set1: 153 pairs, 13 raters; set2: 200 pairs, 16 raters),
    weighted by its number of listed pairs, with a pair listed twice in a set kept as two items.

    Parameters
    ----------
    ratings : pandas.DataFrame
        Long format (docs/contract.md).
    min_overlap : int
        Fewest shared items for a correlation, within a tranche.
    repeats : {"keep", "merge"}
        ``keep``: a rater's second answer to a pair (a pair listed twice) is a separate item;
        ``merge``: one item with the mean of the answers, as everywhere else in lexgold.

    Returns
    -------
    dict
        ``iaa1, iaa2`` (weighted means; NaN when no tranche is defined) and ``tranches``: one
        ``{"tranche", "iaa1", "iaa2", "raters", "pairs"}`` per tranche. A tranche whose figure
        is undefined is left out of that figure's mean.

    Examples
    --------
    >>> import pandas as pd
    >>> ratings = pd.DataFrame({"rater_id": list("aaabbbcccddd"), "tranche": list("xxxxxxyyyyyy"),
    ...     "word1": list("pqrpqrstustu"), "word2": "w",
    ...     "rating": [1, 2, 3, 1, 2, 3, 1, 2, 3, 3, 2, 1]})
    >>> iaa_weighted_by_pairs(ratings, min_overlap=3)["iaa1"]   # (3 * 1 + 3 * -1) / 6
    0.0
    """
    if repeats not in ("keep", "merge"):
        raise InputError(f"expected keep or merge, found {repeats!r}", field="repeats")
    frame = check_ratings(ratings)
    frame = frame[frame["kind"] != "checkpoint"]          # a new frame: no copy needed
    if repeats == "keep":
        keys = ["rater_id", "tranche", *ITEM]
        group = key_groups(frame, keys)
        listing = (frame.groupby(keys, sort=False).cumcount().to_numpy() if group is None
                   else pd.Series(group).groupby(group, sort=False).cumcount().to_numpy())
        if (listing > 0).any():          # the second listing is an item of its own
            frame = frame.assign(**{_LISTING: listing})
    item = [*ITEM, _LISTING] if _LISTING in frame.columns else ITEM
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AgreementWarning)
        for tranche, part in frame.groupby("tranche", sort=True):
            groups = _matrices(part, "tranche", checked=True)
            rows.append({"tranche": tranche,
                         "iaa1": _iaa1(part, "tranche", min_overlap, groups),
                         "iaa2": _iaa2(part, "tranche", min_overlap, groups),
                         "raters": int(part["rater_id"].nunique()),
                         "pairs": int(len(part[item].drop_duplicates()))})
    table = pd.DataFrame(rows, columns=["tranche", "iaa1", "iaa2", "raters", "pairs"])
    out = {}
    for name in ("iaa1", "iaa2"):
        defined = table[table[name].notna()]
        out[name] = (float(np.average(defined[name], weights=defined["pairs"]))
                     if len(defined) else np.nan)
    out["tranches"] = table.to_dict(orient="records")
    return out


def pairwise_correlations(ratings: pd.DataFrame, *, pool: Pool = "tranche",
                          min_overlap: int = MIN_OVERLAP) -> pd.DataFrame:
    """Spearman rho of every compared rater pair (the terms of IAA-1).

    Returns
    -------
    pandas.DataFrame
        ``group, rater_a, rater_b, n, rho``: one row per rater pair of a group (tranche, or
        ``"all"``) with at least ``min_overlap`` shared items; ``rho`` is NaN when one of the two
        gave constant ratings on the shared items.
    """
    frames = []
    for group, raters, rho, n in _group_correlations(ratings, pool, min_overlap):
        upper_a, upper_b = np.triu_indices(len(raters), k=1)
        keep = n[upper_a, upper_b] >= min_overlap
        frames.append(pd.DataFrame({
            "group": group, "rater_a": raters[upper_a[keep]], "rater_b": raters[upper_b[keep]],
            "n": n[upper_a, upper_b][keep].astype(int), "rho": rho[upper_a, upper_b][keep]}))
    if not frames:
        return pd.DataFrame({"group": [], "rater_a": [], "rater_b": [], "n": [], "rho": []})
    return pd.concat(frames, ignore_index=True)


def rater_agreement(ratings: pd.DataFrame, *, pool: Pool = "tranche",
                    min_overlap: int = MIN_OVERLAP) -> pd.DataFrame:
    """Per-rater agreement figures, computed at once for every rater (vectorised).

    Returns
    -------
    pandas.DataFrame
        One row per rater and group: ``rater_id, group, n_items, n_pairs`` (compared raters),
        ``mean_rho`` (mean pairwise Spearman with the others: SimLex exclusion rule a),
        ``rho_vs_mean`` (IAA-2 term), ``gain`` (IAA-1 without the rater minus IAA-1 with all:
        SimLex exclusion rule b).

    Notes
    -----
    The leave-one-out gain is not obtained by recomputing IAA-1 per rater. With S the sum and N
    the number of defined pairwise correlations, and s_r, n_r those involving rater r,
    IAA-1 without r is (S - s_r) / (N - n_r): one pass over the correlation matrices.
    """
    rows = []
    frame = check_ratings(ratings)
    groups = _matrices(frame, pool, checked=True)
    for group, raters, rho, n in _group_correlations(frame, pool, min_overlap, groups):
        defined = ~np.isnan(rho)
        rows.append(pd.DataFrame({
            "rater_id": raters, "group": group, "n_items": np.diag(n).astype(int),
            "n_pairs": defined.sum(axis=1), "sum_rho": np.where(defined, rho, 0.0).sum(axis=1)}))
    columns = ["rater_id", "group", "n_items", "n_pairs", "mean_rho", "rho_vs_mean", "gain"]
    if not rows:
        return pd.DataFrame(columns=columns)
    table = pd.concat(rows, ignore_index=True)
    total, count = table["sum_rho"].sum() / 2, table["n_pairs"].sum() / 2
    with np.errstate(invalid="ignore", divide="ignore"):
        table["mean_rho"] = table["sum_rho"] / table["n_pairs"].where(table["n_pairs"] > 0)
        without = (total - table["sum_rho"]) / (count - table["n_pairs"]).where(
            count - table["n_pairs"] > 0)
        table["gain"] = without - (total / count if count else np.nan)
    against = rater_against_mean(frame, pool=pool, min_overlap=min_overlap, _groups=groups)
    table = table.merge(against[["rater_id", "group", "rho"]], on=["rater_id", "group"],
                        how="left").rename(columns={"rho": "rho_vs_mean"})
    return table[columns]


def rater_against_mean(ratings: pd.DataFrame, *, pool: Pool = "tranche",
                       min_overlap: int = MIN_OVERLAP, _groups=None) -> pd.DataFrame:
    """Spearman rho of each rater against the mean of the other raters (the terms of IAA-2).

    Returns
    -------
    pandas.DataFrame
        ``rater_id, group, n, rho`` for raters with at least ``min_overlap`` items that another
        rater of the group also rated; ``rho`` NaN for constant ratings.

    Notes
    -----
    Vectorised per group over the items x raters matrix: with S_i and C_i the sum and count of
    ratings of item i, the mean of the others is (S_i - x_ri) / (C_i - 1); ranks are taken per
    rater over its items with C_i >= 2, and rho is the Pearson correlation of the ranks.
    """
    _check_options(pool, min_overlap)
    frames = []
    for group in _groups if _groups is not None else _matrices(ratings, pool):
        rho, n = _against_mean_columns(group.matrix, min_overlap)
        keep = n >= min_overlap
        frames.append(pd.DataFrame({"rater_id": group.raters[keep], "group": group.key,
                                    "n": n[keep].astype(int), "rho": rho[keep]}))
    if not frames:
        return pd.DataFrame({"rater_id": [], "group": [], "n": [], "rho": []})
    return pd.concat(frames, ignore_index=True)


def agreement_by_subset(ratings: pd.DataFrame, subset: pd.Series | str, *,
                        pool: Pool = "tranche", min_overlap: int = MIN_OVERLAP,
                        rng: np.random.Generator | None = None, n_boot: int = 0,
                        level: float = 0.95) -> pd.DataFrame:
    """IAA-1 and IAA-2 within each subset of pairs (POS, concreteness class, relation ...).

    Parameters
    ----------
    ratings : pandas.DataFrame
        Long format (docs/contract.md).
    subset : str or pandas.Series
        A column of ``ratings`` (e.g. ``"pos"``), or a Series indexed by ``(word1, word2)``
        giving each pair's subset label; pairs without a label are left out.
    rng, n_boot, level : optional
        With ``n_boot > 0``, bootstrap intervals per subset (see :func:`bootstrap_over_pairs`).

    Returns
    -------
    pandas.DataFrame
        ``subset, iaa1, iaa2, raters, pairs`` sorted by subset, plus ``iaa1_low, iaa1_high,
        iaa2_low, iaa2_high`` with ``n_boot > 0``. Correlations are computed on the subset's
        items only (SimLex Figure 4; HyperLex Table 5), so ``min_overlap`` applies per subset.
    """
    _check_options(pool, min_overlap)
    if n_boot > 0:
        check_bootstrap(rng, n_boot, level)
    frame = check_ratings(ratings)
    if isinstance(subset, str) and subset not in frame.columns:
        raise InputError(f"no such column; columns: {', '.join(frame.columns)}",
                         path="ratings", field=subset)
    used = (*REQUIRED, "kind", subset if isinstance(subset, str) else "kind")   # copied per subset
    frame = frame.loc[(frame["kind"] != "checkpoint").to_numpy(), frame.columns.isin(used)]
    if isinstance(subset, str):
        labels = frame[subset]
    else:
        labels = pd.Series(subset, name="subset")
        labels.index = pd.MultiIndex.from_tuples(labels.index, names=ITEM)
        labels = _labels_of_rows(frame, labels.rename("_subset"))
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AgreementWarning)
        for label, part in frame.groupby(labels.to_numpy(), sort=True, dropna=True):
            groups = _matrices(part, pool, checked=True)      # once per subset
            row = {"subset": label,
                   "iaa1": _iaa1(part, pool, min_overlap, groups),
                   "iaa2": _iaa2(part, pool, min_overlap, groups),
                   "raters": part["rater_id"].nunique(),
                   "pairs": len(part[ITEM].drop_duplicates())}
            for name in ("iaa1", "iaa2"):
                if n_boot > 0:
                    row[f"{name}_low"], row[f"{name}_high"] = _bootstrap_dense(
                        groups, name, rng, n_boot, level, min_overlap)
            rows.append(row)
    columns = ["subset", "iaa1", "iaa2", "raters", "pairs"]
    if n_boot > 0:
        columns += ["iaa1_low", "iaa1_high", "iaa2_low", "iaa2_high"]
    return pd.DataFrame(rows, columns=columns)


def _labels_of_rows(frame: pd.DataFrame, labels: pd.Series) -> pd.Series:
    """Each row's label, from ``labels`` indexed by ``(word1, word2)``: joined once per
    distinct pair (by the key columns' integer codes) rather than once per row."""
    item = key_groups(frame, ITEM)
    if item is None:
        return frame.join(labels, on=ITEM)[labels.name]
    pairs = frame.iloc[first_rows(item)][ITEM]
    per_pair = pairs.join(labels, on=ITEM)[labels.name].to_numpy()
    return pd.Series(per_pair[item], index=frame.index, name=labels.name)


def stage_agreement(ratings: pd.DataFrame, *, pool: Pool = "tranche",
                    min_overlap: int = MIN_OVERLAP, rng: np.random.Generator | None = None,
                    n_boot: int = 0, level: float = 0.95) -> dict:
    """IAA-1 and IAA-2 of one set of ratings, with their bootstrap intervals when ``n_boot``.

    The figures of :func:`iaa_pairwise`, :func:`iaa_against_mean` and (``n_boot > 0``)
    :func:`bootstrap_over_pairs` of each, in that order from ``rng``, from one items x raters
    matrix per group instead of one per figure.

    Returns
    -------
    dict
        ``iaa1, iaa2`` and, with ``n_boot > 0``, ``iaa1_ci, iaa2_ci`` as ``[low, high]``.
    """
    _check_options(pool, min_overlap)
    if n_boot > 0:
        check_bootstrap(rng, n_boot, level)
    frame = check_ratings(ratings)
    groups = _matrices(frame, pool, checked=True)
    out = {"iaa1": _iaa1(frame, pool, min_overlap, groups),
           "iaa2": _iaa2(frame, pool, min_overlap, groups)}
    if n_boot > 0:
        for name in ("iaa1", "iaa2"):
            out[f"{name}_ci"] = list(_bootstrap_dense(groups, name, rng, n_boot, level,
                                                      min_overlap))
    return out


def bootstrap_over_pairs(ratings: pd.DataFrame, statistic: Callable[..., float], *,
                         rng: np.random.Generator, n_boot: int = 1000, level: float = 0.95,
                         **kwargs) -> tuple[float, float]:
    """Percentile bootstrap confidence interval of an agreement statistic over pairs.

    Pairs (items) are drawn with replacement, each drawn pair bringing all of its ratings; a
    pair drawn twice counts as two items. The draw is stratified by design: pairs are grouped by
    the set of tranches they appear in (each tranche's unique pairs; the consistency pairs) and
    each stratum keeps its size, so every tranche keeps its number of pairs.
    ``statistic(resampled, **kwargs)`` is recomputed per replicate; undefined replicates are
    dropped. The interval is :func:`lexgold.stats.percentile_interval` of the replicates, as
    for :func:`lexgold.stats.bootstrap_ci`; only the draw differs (``scipy.stats.bootstrap``
    resamples rows and cannot stratify or draw clusters).

    Parameters
    ----------
    ratings : pandas.DataFrame
        Long format (docs/contract.md).
    statistic : callable
        E.g. :func:`iaa_pairwise` or :func:`iaa_against_mean`.
    rng : numpy.random.Generator
        The only source of randomness.
    n_boot : int
        Number of replicates.
    level : float
        Coverage in (0, 1).

    Returns
    -------
    (float, float)
        Lower and upper bounds; NaN when fewer than two replicates are defined.
    """
    check_bootstrap(rng, n_boot, level)
    dense = {iaa_pairwise: _iaa1_dense, iaa_against_mean: _iaa2_dense}.get(statistic)
    pool, min_overlap = kwargs.get("pool", "tranche"), kwargs.get("min_overlap", MIN_OVERLAP)
    _check_options(pool, min_overlap)
    if dense is None:
        return _bootstrap_frames(ratings, statistic, rng, n_boot, level, kwargs)
    return _bootstrap_dense(_matrices(ratings, pool), "iaa1" if dense is _iaa1_dense else "iaa2",
                            rng, n_boot, level, min_overlap)


def _bootstrap_dense(matrices: list[_Group], name: str, rng, n_boot, level, min_overlap):
    """:func:`bootstrap_over_pairs` of IAA-1 (``name="iaa1"``) or IAA-2 over the groups'
    matrices.

    Every replicate's items are drawn first, in the same order and from the same ``rng`` calls
    as one replicate at a time, so the draws (and the generator's state afterwards) do not
    change. A group where every rater rated every item keeps the same number of rows in every
    replicate (each stratum keeps its size): its replicates are computed in batches by
    :class:`lexgold.process.replicates.ReplicateTerms`; other groups are computed one
    replicate at a time.
    """
    n_items = max((int(g.items.max()) + 1 for g in matrices if len(g.items)), default=0)
    groups = []
    for group in matrices:
        where = np.full(n_items, -1)
        where[group.items] = np.arange(len(group.items))
        groups.append((where, group.matrix))
    draw = _stratified_draw(
        np.concatenate([g.items for g in matrices]) if matrices else np.array([], int),
        np.concatenate([[str(g.key)] * len(g.items) for g in matrices]) if matrices
        else np.array([], str), n_items)
    draws = [draw(rng) for _ in range(n_boot)]
    parts = []                      # per group: one entry per replicate
    for where, matrix in groups:
        picked = [where[d][where[d] >= 0] for d in draws]
        if matrix.shape[1] < 2 or np.isnan(matrix).any() or not picked \
                or len({len(p) for p in picked}) > 1:
            parts.append([matrix[p] for p in picked])
            continue
        rows = np.stack(picked)
        replicates = ReplicateTerms(matrix, name)
        batch, done = replicates.batch(), []
        for start in range(0, n_boot, batch):
            done.extend(replicates.terms(rows[start:start + batch], min_overlap))
        parts.append(done)
    values = []
    for b in range(n_boot):
        terms = [part[b] for part in parts]
        values.append(_iaa1_terms(terms, min_overlap) if name == "iaa1"
                      else _iaa2_terms(terms, min_overlap))
    return _percentile_interval(values, level)


def _iaa1_terms(terms, min_overlap) -> float:
    """IAA-1 of one replicate: a matrix (computed here) or a ``(rho sum, pairs)`` per group."""
    total, count = 0.0, 0
    for term in terms:
        if isinstance(term, np.ndarray):
            term = _iaa1_dense_parts([term], min_overlap)
        total, count = total + term[0], count + term[1]
    return total / count if count else np.nan


def _iaa2_terms(terms, min_overlap) -> float:
    """IAA-2 of one replicate: a matrix (computed here) or a ``(rho, n)`` per group."""
    pairs = [_against_mean_columns(t, min_overlap) if isinstance(t, np.ndarray) else t
             for t in terms]
    values = [r[n >= min_overlap] for r, n in pairs]
    values = np.concatenate(values) if values else np.array([])
    values = values[~np.isnan(values)]
    return float(values.mean()) if len(values) else np.nan


def _percentile_interval(values, level) -> tuple[float, float]:
    low, high = percentile_interval(values, level)
    return (float(low), float(high))


def _stratified_draw(items: np.ndarray, groups: np.ndarray, n_items: int):
    """A function ``rng -> item codes``: items redrawn with replacement within their stratum,
    a stratum being the set of groups (tranches) an item appears in."""
    labels, group_index = np.unique(np.asarray(groups, dtype=str), return_inverse=True)
    membership = np.zeros((n_items, max(len(labels), 1)), dtype=bool)
    membership[items, group_index] = True
    stratum = np.unique(membership, axis=0, return_inverse=True)[1].ravel()
    order = np.argsort(stratum, kind="stable")
    in_order = stratum[order]
    sizes = np.bincount(stratum)
    starts = np.cumsum(sizes) - sizes

    def draw(rng: np.random.Generator) -> np.ndarray:
        if n_items == 0:
            return np.array([], dtype=int)
        return order[starts[in_order] + rng.integers(0, sizes[in_order])]
    return draw


def _bootstrap_frames(ratings, statistic, rng, n_boot, level, kwargs):
    """Bootstrap of any statistic over long-format frames (slower; used for other callables)."""
    frame = check_ratings(ratings)
    frame = frame[frame["kind"] != "checkpoint"].reset_index(drop=True)
    codes = frame.groupby(ITEM, sort=False).ngroup().to_numpy()
    order = np.argsort(codes, kind="stable")
    counts = np.bincount(codes)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    by = frame["tranche"] if kwargs.get("pool", "tranche") == "tranche" else "all"
    draw = _stratified_draw(codes, np.broadcast_to(np.asarray(by, dtype=str), len(codes)),
                            len(counts))
    values = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AgreementWarning)
        for _ in range(n_boot):
            draws = draw(rng)
            sizes = counts[draws]
            offsets = np.arange(sizes.sum()) - np.repeat(np.cumsum(sizes) - sizes, sizes)
            rows = order[np.repeat(starts[draws], sizes) + offsets]
            sample = frame.iloc[rows].assign(word1=np.repeat(np.arange(len(draws)), sizes)
                                             .astype(str), word2="*")
            values.append(statistic(sample, **kwargs))
    return _percentile_interval(values, level)


def _iaa1_dense(matrices, min_overlap) -> float:
    """IAA-1 over dense items x raters matrices (NaN = not rated); NaN if undefined."""
    total, count = _iaa1_dense_parts(matrices, min_overlap)
    return total / count if count else np.nan


def _iaa1_dense_parts(matrices, min_overlap) -> tuple[float, int]:
    """Sum and number of the defined pairwise rho over items x raters matrices."""
    total, count = 0.0, 0
    for matrix in matrices:
        if matrix.shape[1] < 2:
            continue
        if not np.isnan(matrix).any():
            if len(matrix) >= min_overlap:
                rho_sum, varying = _dense_rho_sum(average_ranks(matrix, axis=0))
                total, count = total + float(rho_sum), count + int(varying) * (int(varying) - 1) // 2
            continue
        rho, _ = _spearman_matrix(matrix, min_overlap)
        upper = rho[np.triu_indices(matrix.shape[1], k=1)]
        upper = upper[~np.isnan(upper)]
        total, count = total + upper.sum(), count + len(upper)
    return total, count


def _iaa2_dense(matrices, min_overlap) -> float:
    """IAA-2 over dense items x raters matrices; NaN if undefined."""
    values = [r[n >= min_overlap] for r, n in
              (_against_mean_columns(m, min_overlap) for m in matrices)]
    values = np.concatenate(values) if values else np.array([])
    values = values[~np.isnan(values)]
    return float(values.mean()) if len(values) else np.nan


def _against_mean_columns(matrix: np.ndarray, min_overlap: int, ranks=None):
    """Per column of ``matrix`` (items x raters, NaN = not rated; or a stack of such matrices,
    ``(..., items, raters)``): Spearman rho against the leave-one-out row means, over the
    column's items another rater also rated; and that count. ``ranks``: the ranks of
    ``matrix`` and of the leave-one-out means when known (no missing cell)."""
    mask = ~np.isnan(matrix)
    count = mask.sum(axis=-1, keepdims=True)
    total = np.where(mask, matrix, 0.0).sum(axis=-1, keepdims=True)
    valid = mask & (count > 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        others = (total - matrix) / (count - 1)
    if ranks is not None and valid.all():
        x, y = ranks
    elif valid.all():
        x, y = average_ranks(matrix, axis=-2), average_ranks(others, axis=-2)
    else:
        x = average_ranks(np.where(valid, matrix, np.nan), axis=-2, omit_nan=True)
        y = average_ranks(np.where(valid, others, np.nan), axis=-2, omit_nan=True)
        x, y = np.where(valid, x, 0.0), np.where(valid, y, 0.0)
    n = valid.sum(axis=-2)
    with np.errstate(invalid="ignore", divide="ignore"):
        mx, my = x.sum(axis=-2) / n, y.sum(axis=-2) / n
        sxy = (x * y).sum(axis=-2) - n * mx * my
        sxx = (x * x).sum(axis=-2) - n * mx * mx
        syy = (y * y).sum(axis=-2) - n * my * my
        r = sxy / np.sqrt(sxx * syy)
    r[(n < max(min_overlap, 2)) | (sxx <= 1e-9 * n) | (syy <= 1e-9 * n)] = np.nan
    return np.clip(r, -1.0, 1.0), n


# -- private helpers -----------------------------------------------------------------------

def _check_options(pool, min_overlap):
    if pool not in POOLS:
        raise InputError(f"expected one of {', '.join(POOLS)}, found {pool!r}", field="pool")
    if isinstance(min_overlap, bool) or not isinstance(min_overlap, (int, np.integer)) \
            or min_overlap < 2:
        raise InputError(f"expected an integer >= 2, found {min_overlap!r}", field="min_overlap")


#: largest items x raters matrix of one group (pool="all" on a very large study is refused)
MAX_CELLS = 60_000_000


@dataclass
class _Group:
    key: object
    raters: np.ndarray       # rater ids, one per column
    items: np.ndarray        # global item codes, one per row
    matrix: np.ndarray       # items x raters ratings, NaN = not rated


def _matrices(ratings, pool, *, checked: bool = False) -> list[_Group]:
    """One dense items x raters matrix per group (tranche, or all raters), sorted by group.

    A rater's answers to one item (calibration repeat, duplicate) are averaged; checkpoint rows
    are dropped. Item codes are shared across groups (the consistency pairs). ``checked``: the
    frame comes from :func:`check_ratings` already (validated once, at the edge).
    """
    _check_options(pool, 2)
    frame = ratings if checked else check_ratings(ratings)
    frame = frame[frame["kind"] != "checkpoint"]
    item = _item_codes(frame)
    rater, rater_ids = pd.factorize(frame["rater_id"])
    if pool == "tranche":
        group, group_keys = pd.factorize(frame["tranche"])
    else:
        group, group_keys = np.zeros(len(frame), dtype=np.intp), np.array(["all"], dtype=object)
    rating = frame["rating"].to_numpy(dtype=float)
    order = np.argsort(group, kind="stable")
    bounds = np.flatnonzero(np.diff(group[order])) + 1
    out = []
    for rows in np.split(order, bounds) if len(order) else []:
        raters, column = np.unique(rater[rows], return_inverse=True)
        items, row = np.unique(item[rows], return_inverse=True)
        if len(items) * len(raters) > MAX_CELLS:
            raise InputError(f"{len(raters)} raters x {len(items)} pairs in one group is too "
                             f"large to compare every pair of raters; use pool='tranche'",
                             field="pool")
        cell = row * len(raters) + column
        size = len(items) * len(raters)
        sums = np.bincount(cell, weights=rating[rows], minlength=size)
        counts = np.bincount(cell, minlength=size)
        with np.errstate(invalid="ignore", divide="ignore"):
            matrix = (sums / counts).reshape(len(items), len(raters))
        out.append(_Group(group_keys[group[rows[0]]], np.asarray(rater_ids)[raters], items,
                          matrix))
    return sorted(out, key=lambda g: str(g.key))


#: a column numbering a rater's listings of one pair (0, 1 ...): each listing is an item
_LISTING = "_listing"


def _item_codes(frame) -> np.ndarray:
    """Item codes in order of first appearance: a pair, or a pair's listing
    (:data:`_LISTING`)."""
    first, _ = pd.factorize(frame["word1"])
    second, uniques = pd.factorize(frame["word2"])
    codes = first.astype(np.int64) * (len(uniques) + 1) + second
    if _LISTING in frame.columns:
        listing = frame[_LISTING].to_numpy(dtype=np.int64)
        codes = codes * (int(listing.max(initial=0)) + 1) + listing
    return pd.factorize(codes)[0]


def _group_correlations(ratings, pool, min_overlap, groups=None):
    """Yield ``group, raters, rho, n`` per group: Spearman matrix and shared-item counts."""
    _check_options(pool, min_overlap)
    for group in groups if groups is not None else _matrices(ratings, pool):
        if group.matrix.shape[1] < 2:
            continue
        rho, n = _spearman_matrix(group.matrix, min_overlap)
        yield group.key, group.raters, rho, n


def _spearman_matrix(matrix: np.ndarray, min_overlap: int):
    """Spearman rho between the columns of ``matrix`` (items x raters), NaN = not rated.

    With no missing cell the ranks are taken once and correlated with ``np.corrcoef``; with
    missing cells each pair is re-ranked on its shared items (pandas pairwise-complete rho).
    """
    mask = ~np.isnan(matrix)
    n = mask.T.astype(float) @ mask.astype(float)
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        if mask.all():
            rho = np.corrcoef(average_ranks(matrix, axis=0), rowvar=False)
        else:
            rho = pd.DataFrame(matrix).corr(method="spearman",
                                            min_periods=min_overlap).to_numpy()
    rho = np.array(rho, dtype=float).reshape(matrix.shape[1], matrix.shape[1])
    rho[n < min_overlap] = np.nan
    np.fill_diagonal(rho, np.nan)
    return np.clip(rho, -1.0, 1.0), n


def _pool_hint(ratings: pd.DataFrame, pool: Pool) -> str:
    """What to add to an "undefined" warning: with ``pool="tranche"`` and raters in more than
    one tranche, that raters were compared only within their tranche, and how to compare them
    across tranches (on the pairs they share there, the consistency pairs)."""
    if pool != "tranche" or "tranche" not in ratings or ratings["tranche"].nunique() < 2:
        return ""
    return ("; raters are compared only within their tranche (pool='tranche'; a tranche with "
            "one rater has nobody to compare with): pool='all' (`lexgold agree --pool all`) "
            "compares raters of different tranches on the pairs they share")


def _mean_or_nan(values: pd.Series, name: str, unit: str, hint: str = "") -> float:
    defined = values.dropna()
    if not _warn_undefined(len(defined), len(values), name, unit, hint):
        return float("nan")
    return float(defined.mean())


def _mean_of_sum(total: float, defined: int, compared: int, name: str, unit: str,
                 hint: str = "") -> float:
    """:func:`_mean_or_nan` from the sum and number of the defined correlations."""
    if not _warn_undefined(defined, compared, name, unit, hint):
        return float("nan")
    return total / defined


def _warn_undefined(defined: int, compared: int, name: str, unit: str, hint: str) -> bool:
    """Warn about undefined correlations; whether any is defined."""
    if compared > defined:
        warnings.warn(f"{name}: {compared - defined} of {compared} {unit} "
                      f"correlations undefined (constant ratings) and left out",
                      AgreementWarning, stacklevel=4)
    if not defined:
        warnings.warn(f"{name} is undefined: no {unit} with a defined correlation on enough "
                      f"shared items (one rater, constant ratings, or too little overlap){hint}",
                      AgreementWarning, stacklevel=4)
        return False
    return True
