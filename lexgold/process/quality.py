"""Quality flags per rater: speed, straight-lining, checkpoints, calibration repeats.

Figures the researcher reads while a study runs (the admin view) and after it (``exclusions.csv``),
next to the exclusion rules of :mod:`lexgold.process.exclusions`. They exclude nobody by
themselves; only ``too_fast`` is also a rule, off unless the protocol sets a threshold.

Columns of :func:`quality_flags`, one row per rater:

``median_s_per_pair``   median seconds per pair over the rater's answers (see :func:`pair_seconds`:
                        the server's times, the browser's only where the server's are missing);
                        SimLex-999 section 3.5: raters took 8-21 minutes for a tranche of about
                        120 showings, i.e. over 4 s a pair, so a median far below that is a
                        rater who does not read the pairs;
``top_value_share``     share of the rater's answers on its commonest value (straight-lining:
                        1.0 is one value throughout, HyperLex section 4.5 "one single rating");
``checkpoints_failed``  checkpoint questions answered wrong (SimLex-999 section 3.3), of
``checkpoints``         those answered;
``repeat_difference``   mean absolute difference between the rater's two answers to a pair it
                        rated twice: the calibration repeat that opens each group (SimLex-999
                        section 3.4) and HyperLex's duplicates (section 4.4); NaN without repeats.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from lexgold.ratings import ITEM
from lexgold.ratings.long import check_ratings

FLAG_COLUMNS = ["median_s_per_pair", "top_value_share", "checkpoints_failed", "checkpoints",
                "repeat_difference"]


def quality_flags(ratings: pd.DataFrame) -> pd.DataFrame:
    """The quality figures of every rater (module docstring).

    Parameters
    ----------
    ratings : pandas.DataFrame
        Long format (docs/contract.md); the optional ``server_ms``, ``response_ms`` and
        ``answered_at`` columns of ``lexgold study export`` give the times.

    Returns
    -------
    pandas.DataFrame
        ``rater_id`` and :data:`FLAG_COLUMNS`, sorted by rater. ``median_s_per_pair`` is NaN
        when the ratings carry no times.

    Examples
    --------
    Rater a sends two pages of two pairs: the first after 4 s (2 s a pair), the second
    after 12 s (6 s a pair); 3 of its 4 answers are 5; it fails one of its two checkpoints;
    its calibration repeat of (x, w) differs from its first answer by 2.

    >>> import pandas as pd
    >>> frame = pd.DataFrame({"rater_id": "a", "tranche": 1,
    ...     "word1": ["x", "y", "z", "x", "cp1", "cp2"], "word2": "w",
    ...     "kind": ["unique", "unique", "unique", "calibration", "checkpoint", "checkpoint"],
    ...     "rating": [3, 5, 5, 5, 1, 0],
    ...     "response_ms": [3000, 4000, 9000, 12000, 900, 900],
    ...     "answered_at": ["2026-01-01T10:00:00Z"] * 2 + ["2026-01-01T10:00:12Z"] * 2
    ...                    + ["2026-01-01T09:59:00Z"] * 2})
    >>> quality_flags(frame).to_dict("records") == [{"rater_id": "a",
    ...     "median_s_per_pair": 4.0, "top_value_share": 0.75, "checkpoints_failed": 1,
    ...     "checkpoints": 2, "repeat_difference": 2.0}]
    True
    """
    frame = check_ratings(ratings)
    rated = frame[frame["kind"] != "checkpoint"]
    checks = frame[frame["kind"] == "checkpoint"]
    raters = pd.Index(sorted(frame["rater_id"].unique()), name="rater_id")
    shares = rated.groupby(["rater_id", "rating"]).size().groupby("rater_id").max() / \
        rated.groupby("rater_id").size()
    repeats = rated.groupby(["rater_id", *ITEM])["rating"].agg(["min", "max", "count"])
    repeats = repeats[repeats["count"] > 1]
    figures = {
        "median_s_per_pair": median_seconds_per_pair(rated),
        "top_value_share": shares,
        "checkpoints_failed": (checks["rating"] == 0).groupby(checks["rater_id"]).sum(),
        "checkpoints": checks.groupby("rater_id").size(),
        "repeat_difference": (repeats["max"] - repeats["min"]).groupby("rater_id").mean(),
    }
    # coded rater ids (lexgold.ratings.long.coded): aggregates of subsets carry categorical indexes
    # whose codes may differ in width, which pandas cannot align; align them on plain ids
    table = pd.DataFrame({name: series.set_axis(series.index.astype(object))
                          for name, series in figures.items()}).reindex(raters)
    for column in ("checkpoints_failed", "checkpoints"):
        table[column] = table[column].fillna(0).astype(int)
    return table[FLAG_COLUMNS].reset_index()


def median_seconds_per_pair(rated: pd.DataFrame) -> pd.Series:
    """Each rater's median of :func:`pair_seconds` (NaN for a rater without times): the
    ``median_s_per_pair`` flag and the figure the ``too_fast`` exclusion rule tests."""
    return pair_seconds(rated).groupby(rated["rater_id"]).median()


def pair_seconds(rated: pd.DataFrame) -> pd.Series:
    """Seconds spent per pair, for each answer (aligned on ``rated``'s index).

    The server's time comes first: ``server_ms`` (``lexgold study export``) is the time from
    the site giving the page to the page's answers arriving, divided by the page's items,
    measured by the site's clock, which a browser cannot set. Answers without it (ratings from
    elsewhere, studies made before the site stored its own times) fall back on
    :func:`client_pair_seconds`.

    Returns NaN for answers without any time.

    Examples
    --------
    A bot waits 1.2 s per page of two pairs and claims 60 s per pair: the server's 0.6 s wins.

    >>> import pandas as pd
    >>> frame = pd.DataFrame({"rater_id": "bot", "word1": ["x", "y"], "word2": "w",
    ...     "response_ms": 60000, "server_ms": 600,
    ...     "answered_at": "2026-01-01T10:00:00Z"})
    >>> pair_seconds(frame).tolist()
    [0.6, 0.6]
    """
    client = client_pair_seconds(rated)
    if "server_ms" not in rated.columns:
        return client
    server = pd.to_numeric(rated["server_ms"], errors="coerce") / 1000.0
    return server.fillna(client).astype(float)


def client_pair_seconds(rated: pd.DataFrame) -> pd.Series:
    """Seconds per pair from the times the browser sent (a second opinion: a script can send
    any ``response_ms``), aligned on ``rated``'s index.

    A page is the answers of one rater sent together (same ``answered_at``). Its time is the
    largest ``response_ms`` among them (the rating site measures each answer from the page's
    display to the last touch of its slider, so the largest is the time to the page's last
    answer); without ``response_ms``, the time since the rater's previous page was sent (none
    for its first page). Each answer of the page gets the page's time divided by its answers.

    Returns NaN for answers whose page has no time (no ``answered_at`` column: all NaN).
    """
    if "answered_at" not in rated.columns or rated.empty:
        return pd.Series(np.nan, index=rated.index, dtype=float)
    at = pd.to_datetime(rated["answered_at"], utc=True, errors="coerce")
    ms = (pd.to_numeric(rated["response_ms"], errors="coerce") if "response_ms" in rated
          else pd.Series(np.nan, index=rated.index))
    pages = pd.DataFrame({"rater_id": rated["rater_id"], "at": at, "ms": ms})
    per_page = pages.groupby(["rater_id", "at"]).agg(ms=("ms", "max"), n=("ms", "size"))
    per_page = per_page.reset_index().sort_values(["rater_id", "at"])
    gap = per_page.groupby("rater_id")["at"].diff().dt.total_seconds() * 1000.0
    per_page["ms"] = per_page["ms"].fillna(gap)
    per_page["seconds"] = per_page["ms"] / per_page["n"] / 1000.0
    merged = pages.reset_index().merge(per_page[["rater_id", "at", "seconds"]],
                                       on=["rater_id", "at"], how="left").set_index("index")
    return merged["seconds"].reindex(rated.index).astype(float)
