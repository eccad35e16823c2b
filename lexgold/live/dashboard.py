"""The admin dashboard's chart data: pure functions over the frames the figures
refresher has already read (:func:`lexgold.live.figures.compute`), so the charts cost the
raters' requests nothing and the admin page only prints what is stored.

- :func:`completions`: completed raters over time, cumulative (the study's progress);
- :func:`rating_counts`: the distribution of ratings per tranche, counts per value bin of the
  study's scale (a tranche rated on one value or at the scale's end shows at a glance);
- :func:`rater_quality`: per rater, Spearman's rho with the mean of the other raters of its
  tranche (the IAA-2 term, HyperLex section 5; SimLex-999 section 3.5) against its median
  seconds per pair (:mod:`lexgold.process.quality`), the marked and excluded raters flagged;
- :func:`growth`: agreement as it grows, raters taken in the order they completed: IAA-1
  (mean pairwise Spearman), Krippendorff's interval alpha and the split-half reliability of the
  pair means (Spearman-Brown corrected, :func:`lexgold.live.allocator.pair_mean_reliability`)
  after 2, 3, 5, ... completed raters (each about 1.5 times the last, and all of them), against
  the ratings collected; points once computed are kept, so a round computes about one.

The drawing is :mod:`lexgold.live.dashboard_svg`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from lexgold.live.allocator import pair_mean_reliability
from lexgold.live.quiet import collected_warnings
from lexgold.process.agreement import iaa_pairwise, rater_against_mean
from lexgold.process.reliability import krippendorff_alpha

#: points of the completions curve at most (evenly spaced completions, the last included)
POINTS = 200
#: the agreement curve's numbers of raters grow by this factor (:func:`schedule`)
GROWTH_RATIO = 1.5
#: a round computes new points of the curve worth at most this many times all the raters
#: (the last point, then the smaller missing ones): a first round over a large study stays
#: about as long as two agreement computations, and the next rounds fill the curve in
GROWTH_BUDGET = 2.0
#: value bins of the ratings histogram at most (a scale with fewer values: one bin a value)
BINS = 10
#: the planner's pilot: the first raters to complete, this many per tranche
PILOT_PER_TRANCHE = 2
GROWTH_COLUMNS = ["ratings", "raters", "iaa1", "alpha_interval", "split_half"]


def completions(done: pd.Series, points: int = POINTS) -> pd.DataFrame:
    """Completed raters over time: ``at`` (completion time), ``completed`` (raters completed
    by then), at most ``points`` rows (evenly spaced completions, the first and last kept).

    >>> t = pd.to_datetime(pd.Series(["2026-01-01 10:00", "2026-01-01 09:00",
    ...                               "2026-01-02 08:00"]))
    >>> completions(t)["completed"].tolist()
    [1, 2, 3]
    """
    times = pd.to_datetime(done.dropna()).sort_values(kind="stable").reset_index(drop=True)
    if times.empty:
        return pd.DataFrame({"at": pd.Series(dtype="datetime64[ns]"),
                             "completed": pd.Series(dtype=int)})
    keep = np.unique(np.linspace(0, len(times) - 1, min(points, len(times))).round().astype(int))
    return pd.DataFrame({"at": times.iloc[keep].to_numpy(), "completed": keep + 1})


def per_day(done: pd.Series) -> pd.DataFrame:
    """The text alternative of :func:`completions`: ``day, completed, total`` (UTC days)."""
    times = pd.to_datetime(done.dropna())
    days = times.dt.strftime("%Y-%m-%d").value_counts().sort_index()
    return pd.DataFrame({"day": days.index, "completed": days.to_numpy(),
                         "total": days.cumsum().to_numpy()})


def bins(scale_min: int, scale_max: int, most: int = BINS) -> list[tuple[int, int]]:
    """Inclusive integer bins ``(low, high)`` covering the scale, at most ``most``.

    >>> bins(0, 6)
    [(0, 0), (1, 1), (2, 2), (3, 3), (4, 4), (5, 5), (6, 6)]
    >>> bins(0, 100, 4)
    [(0, 24), (25, 49), (50, 74), (75, 100)]
    """
    values = scale_max - scale_min + 1
    n = min(most, values)
    edges = [scale_min + (values * k) // n for k in range(n + 1)]
    return [(edges[k], edges[k + 1] - 1) for k in range(n)]


def rating_counts(ratings: pd.DataFrame, scale_min: int, scale_max: int,
                  most: int = BINS) -> pd.DataFrame:
    """Ratings per tranche and value bin (checkpoints left out): ``tranche, low, high, n``,
    every bin of every tranche rated (0 where none)."""
    edges = bins(scale_min, scale_max, most)
    columns = ["tranche", "low", "high", "n"]
    rated = ratings[ratings["kind"] != "checkpoint"] if len(ratings) else ratings
    if rated.empty:
        return pd.DataFrame(columns=columns)
    lows = np.array([low for low, _ in edges])
    which = np.searchsorted(lows, rated["rating"].to_numpy(float), side="right") - 1
    which = which.clip(0, len(edges) - 1)
    counts = pd.crosstab(rated["tranche"].to_numpy(), which).reindex(
        columns=range(len(edges)), fill_value=0)
    rows = [{"tranche": int(t), "low": edges[b][0], "high": edges[b][1], "n": int(counts.at[t, b])}
            for t in counts.index for b in counts.columns]
    return pd.DataFrame(rows, columns=columns)


def rater_quality(ratings: pd.DataFrame, flags: pd.DataFrame, limit: float,
                  excluded: set[str]) -> pd.DataFrame:
    """Per rater: ``rater_id, agreement`` (rho with the mean of the others of its tranche;
    NaN when undefined), ``median_s`` (median seconds per pair), ``marked`` (too fast,
    one value throughout or a checkpoint failed: :func:`marked`),
    ``excluded`` (by the protocol's rules so far). ``flags``: :func:`lexgold.process.quality.
    quality_flags` rows."""
    columns = ["rater_id", "agreement", "median_s", "marked", "excluded"]
    if flags.empty:
        return pd.DataFrame(columns=columns)
    rated = ratings[ratings["kind"] != "checkpoint"]
    with collected_warnings():
        against = rater_against_mean(rated, min_overlap=3) if len(rated) else None
    rho = (against.groupby("rater_id")["rho"].mean() if against is not None and len(against)
           else pd.Series(dtype=float))
    table = pd.DataFrame({
        "rater_id": flags["rater_id"].astype(str),
        "median_s": flags["median_s_per_pair"].astype(float),
        "marked": [marked(row, limit) for row in flags.to_dict("records")]})
    table["agreement"] = table["rater_id"].map(rho.set_axis(rho.index.astype(str))).astype(float)
    table["excluded"] = table["rater_id"].isin({str(r) for r in excluded})
    return table[columns].reset_index(drop=True)


def schedule(n: int, ratio: float = GROWTH_RATIO) -> list[int]:
    """The numbers of completed raters the agreement curve is computed at: 2, then each about
    ``ratio`` times the one before, and ``n`` (fixed points, so a point once computed stays
    right as raters complete, and :func:`growth` reuses it).

    >>> schedule(30)
    [2, 3, 4, 7, 10, 15, 23, 30]
    """
    points, k = [], 2.0
    while round(k) < n:
        if not points or round(k) > points[-1]:
            points.append(round(k))
        k *= ratio
    return points + [n] if n >= 2 else points


def growth(ratings: pd.DataFrame, done: pd.Series, known: list[dict] | None = None,
           seed: int = 0) -> pd.DataFrame:
    """Agreement as raters complete: at the :func:`schedule`'s numbers of completed raters
    (taken in the order they completed; ``done``: completion time by rater ID), the ratings
    collected from them and IAA-1, Krippendorff's interval alpha and the split-half
    reliability of their pair means (NaN while undefined). Checkpoints left out. ``known``:
    rows computed before (the stored figures'), reused where the number of raters and of
    ratings is the same (the first k raters to complete do not change); of the others, the last
    point and then the smaller ones within :data:`GROWTH_BUDGET` are computed, the rest left to
    the next rounds."""
    rated = ratings[ratings["kind"] != "checkpoint"] if len(ratings) else ratings
    order = pd.to_datetime(done.dropna()).sort_values(kind="stable").index
    order = order[order.isin(set(rated["rater_id"]))] if len(rated) else order[:0]
    if len(order) == 0:
        return pd.DataFrame(columns=GROWTH_COLUMNS)
    rated = rated.assign(pair=pd.factorize(
        rated["word1"].astype(str) + "\0" + rated["word2"].astype(str) + "\0" +
        rated["pos"].astype(str))[0])
    counts = rated.groupby("rater_id").size().reindex(order).cumsum()
    reuse = {(row["raters"], row["ratings"]): row for row in known or []}
    wanted = [k for k in schedule(len(order)) if (k, int(counts.iloc[k - 1])) not in reuse]
    todo, spent = set(wanted[-1:]), wanted[-1] if wanted else 0
    for k in wanted[:-1]:                    # the smaller ones, within the round's budget
        if spent + k > GROWTH_BUDGET * len(order):
            break
        todo.add(k)
        spent += k
    rows = []
    for k in schedule(len(order)):
        if (k, int(counts.iloc[k - 1])) in reuse:
            rows.append(reuse[(k, int(counts.iloc[k - 1]))])
            continue
        if k not in todo:
            continue
        chosen = rated[rated["rater_id"].isin(set(order[:k]))]
        with collected_warnings():
            iaa1 = iaa_pairwise(chosen)
            alpha = krippendorff_alpha(chosen, "interval")
        rows.append({"ratings": int(counts.iloc[k - 1]), "raters": k, "iaa1": iaa1,
                     "alpha_interval": alpha,
                     "split_half": pair_mean_reliability(chosen, np.random.default_rng(seed))})
    return pd.DataFrame(rows, columns=GROWTH_COLUMNS)


def pilot(ratings: pd.DataFrame, done: pd.Series, tranches: int,
          per_tranche: int = PILOT_PER_TRANCHE) -> pd.DataFrame | None:
    """The ratings of the first ``per_tranche`` times ``tranches`` raters to complete (the
    pilot :func:`lexgold.process.plan.reliability_curve` plans from, as ``lexgold process
    plan`` does from a pilot study), checkpoints left out; None until that many completed."""
    wanted = per_tranche * max(tranches, 1)
    rated = ratings[ratings["kind"] != "checkpoint"] if len(ratings) else ratings
    order = pd.to_datetime(done.dropna()).sort_values(kind="stable").index
    order = order[order.isin(set(rated["rater_id"]))] if len(rated) else order[:0]
    if len(order) < wanted:
        return None
    return rated[rated["rater_id"].isin(set(order[:wanted]))]


def marked(row: dict, limit: float) -> bool:
    """Is this quality row marked on the admin page (too fast, one value throughout, a
    checkpoint failed)?"""
    fast = row.get("median_s_per_pair")
    return ((fast is not None and fast < limit) or (row.get("top_value_share") or 0) >= 1
            or bool(row.get("checkpoints_failed")))
