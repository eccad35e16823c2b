"""Ratings in the long format of SPEC section 5: the one reader and the one checker.

One row per answer: ``rater_id, tranche, word1, word2, rating``, optionally ``pos``, ``kind``
(``unique`` / ``consistency`` / ``calibration`` / ``duplicate`` / ``checkpoint``) and
``answered_at``. Every statistic of :mod:`lexgold.process` calls :func:`check_ratings` first.

Checkpoint rows (``kind == "checkpoint"``, SimLex section 3.3) carry the answer's correctness in
``rating``: 1 for a correct answer, 0 for a wrong one; ``word1``/``word2`` name the checkpoint
(for example the chosen pair). They never enter agreement or scores.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from lexgold.errors import InputError
from lexgold.tables import read_text_table

REQUIRED = ("rater_id", "tranche", "word1", "word2", "rating")
OPTIONAL = ("pos", "kind", "answered_at")
KINDS = ("unique", "consistency", "calibration", "duplicate", "checkpoint")
#: the key of an item (a word pair) everywhere in lexgold.process
ITEM = ["word1", "word2"]


def read_ratings(path: str | Path) -> pd.DataFrame:
    """Read a long-format ratings CSV and check it.

    Parameters
    ----------
    path : str or Path
        UTF-8 CSV with a header containing at least ``rater_id, tranche, word1, word2, rating``.

    Returns
    -------
    pandas.DataFrame
        The checked frame (see :func:`check_ratings`); ``rater_id``, ``tranche``, words and
        ``kind`` are strings, ``rating`` is float.

    Raises
    ------
    InputError
        Naming the file, the line (header = line 1) and the field at fault.
    """
    path = Path(path)
    return check_ratings(read_text_table(path), source=path)


def check_ratings(ratings: pd.DataFrame, *, source: str | Path | None = None) -> pd.DataFrame:
    """Check a long-format ratings frame and return a normalised copy.

    Parameters
    ----------
    ratings : pandas.DataFrame
        Columns of SPEC section 5. ``rating`` must be a finite number; ``kind``, when present,
        one of :data:`KINDS` (an empty ``kind`` means ``unique``).
    source : str or Path, optional
        File the frame was read from; errors then name it and the line (header = line 1).

    Returns
    -------
    pandas.DataFrame
        Copy with ``rater_id``, ``tranche``, ``word1``, ``word2``, ``kind`` as ``str``,
        ``rating`` as ``float`` and ``kind`` always present. Row order is kept.

    Raises
    ------
    InputError
        A missing column, an empty key, a rating that is not a finite number, an unknown kind.
    """
    if not isinstance(ratings, pd.DataFrame):
        raise InputError(f"ratings: expected a pandas DataFrame, found {type(ratings).__name__}")
    where = source if source is not None else "ratings"
    missing = [c for c in REQUIRED if c not in ratings.columns]
    if missing:
        raise InputError(f"missing column; required: {', '.join(REQUIRED)}", path=where,
                         line=1 if source is not None else None, field=missing[0])
    frame = ratings.copy()
    if "kind" not in frame.columns:
        frame["kind"] = "unique"
    kind = _stripped(frame["kind"])
    frame["kind"] = kind.where(kind != "", "unique")
    bad = ~frame["kind"].isin(KINDS)
    if bad.any():
        first = frame.index[bad.to_numpy()][0]
        _fail(f"expected one of {', '.join(KINDS)}, found {frame.loc[first, 'kind']!r}",
              frame, bad, "kind", source)
    checkpoint = (frame["kind"] == "checkpoint").to_numpy()
    for column in ("rater_id", "tranche", "word1", "word2"):
        frame[column] = _stripped(frame[column])
        bad = frame[column].isin(["", "nan", "None", "<NA>"]) | ratings[column].isna().to_numpy()
        if column in ("word1", "word2"):
            bad &= ~checkpoint        # a checkpoint row need not name a pair
        if bad.any():
            _fail("empty value", frame, bad, column, source)
    values = pd.to_numeric(frame["rating"], errors="coerce")
    bad = values.isna() | ~np.isfinite(values.fillna(0.0))
    if bad.any():
        first = frame.index[bad.to_numpy()][0]
        _fail(f"expected a number, found {ratings.loc[first, 'rating']!r}", frame, bad,
              "rating", source)
    frame["rating"] = values.astype(float)
    return frame


def _stripped(column: pd.Series) -> pd.Series:
    """``str`` values without surrounding blanks; the work is done once per distinct value."""
    codes, uniques = pd.factorize(column, use_na_sentinel=True)
    cleaned = np.append(pd.Index(uniques).astype(str).str.strip().to_numpy(dtype=object), "")
    return pd.Series(cleaned[codes], index=column.index, dtype=object)


def _fail(message, frame, bad, column, source):
    position = int(np.flatnonzero(np.asarray(bad))[0])
    if source is not None:
        raise InputError(message, path=source, line=position + 2, field=column)
    raise InputError(f"row {position}: {message}", path="ratings", field=column)


def answers(ratings: pd.DataFrame) -> pd.DataFrame:
    """One rating per rater, tranche and item: the mean of that rater's answers to the item.

    Checkpoint rows are dropped; a pair rated twice by the same rater (the calibration repeat of
    SimLex section 3.3, a HyperLex duplicate, section 4.4) counts once, with the mean of the
    answers. Returns columns ``rater_id, tranche, word1, word2, rating`` (and ``pos`` if given).
    """
    frame = ratings[ratings["kind"] != "checkpoint"]
    keys = ["rater_id", "tranche", *ITEM]
    out = frame.groupby(keys, sort=False, as_index=False)["rating"].mean()
    if "pos" in frame.columns:
        pos = frame.groupby(ITEM, sort=False)["pos"].first()
        out = out.join(pos, on=ITEM)
    return out


def consistency_items(ratings: pd.DataFrame) -> pd.DataFrame:
    """The consistency set (SimLex section 3.3; HyperLex section 4.4) as ``word1, word2`` rows.

    Items with ``kind == "consistency"``; when no row carries that kind, the items rated in every
    tranche (the definition of the consistency set) when there are at least two tranches.
    """
    marked = ratings.loc[ratings["kind"] == "consistency", ITEM].drop_duplicates()
    if len(marked):
        return marked.reset_index(drop=True)
    rated = ratings[ratings["kind"] != "checkpoint"]
    n_tranches = rated["tranche"].nunique()
    if n_tranches < 2:
        return pd.DataFrame(columns=ITEM)
    spread = rated.groupby(ITEM)["tranche"].nunique()
    return spread[spread == n_tranches].reset_index()[ITEM]
