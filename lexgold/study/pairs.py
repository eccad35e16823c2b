"""Reading the pair set a study rates: the builders' ``pairs.csv`` files (docs/contract.md).

Accepted: SimLex (word1, word2, pos, cohort, conc1, conc2, conc_class, fsg), HyperLex
(word1, word2, pos, relation), TR9856 (topic, term1, term2, source) and a minimal
(word1, word2, pos) file. An optional ``consistency`` column (1/0, true/false) marks the pairs
to show in every tranche (HyperLex: "20 manually chosen pairs", section 4.4).

The concept-aligned pair set of a translation (``lexgold translate adjudicate`` ->
``aligned.csv``, docs/languages.md) is accepted as it is, with its flags applied:

- a row with ``duplicate_of`` is a second English pair that became the same target pair; the
  target pair is rated once, under the earlier id (``lexgold crosslingual`` gives its score to
  both ids), so the row is skipped;
- a ``collapsed`` row (both words translated into one word) cannot be rated as a pair of two
  words; it stays in ``aligned.csv``, flagged, and is skipped here.

Skipped rows are counted in ``frame.attrs["skipped"]`` (the study report lists them).
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

import numpy as np
import pandas as pd

from lexgold.errors import InputError
from lexgold.pairfiles import PAIR_COLUMN_ALIASES, read_pair_table

TRUE = {"1", "true", "yes", "y"}
FALSE = {"0", "false", "no", "n", ""}


def read_study_pairs(path: str | Path, *, group_by: str = "pos") -> pd.DataFrame:
    """Read and check a pair set.

    Parameters
    ----------
    path : str or Path
        UTF-8 CSV with a header, or a published gold file (:mod:`lexgold.pairfiles`).
    group_by : {"pos", "topic"}
        ``pos`` needs a ``pos`` column; ``topic`` (TR9856) needs ``topic``.

    Returns
    -------
    pandas.DataFrame
        Columns ``word1, word2, pos, topic, consistency`` (bool) and ``extra`` (dict of the
        other columns, kept with the pair); TR9856's term1/term2 become word1/word2.

    Raises
    ------
    InputError
        Naming the file, the line (header = line 1) and the field at fault.
    """
    path = Path(path)
    table = read_pair_table(path).rename(columns=PAIR_COLUMN_ALIASES)
    return check_pairs(table, source=path, group_by=group_by)


def check_pairs(frame: pd.DataFrame, *, source=None, group_by: str = "pos") -> pd.DataFrame:
    """Check a pair-set frame (see :func:`read_study_pairs`) and return the normalised copy."""
    frame = frame.rename(columns={"term1": "word1", "term2": "word2"})
    required = ["word1", "word2"] + (["pos"] if group_by == "pos" else ["topic"])
    for column in required:
        if column not in frame.columns:
            raise InputError(f"missing column; the header needs {', '.join(required)}",
                             path=source, field=column)
    if frame.empty:
        raise InputError("no pairs", path=source)
    frame, skipped = _skip_aligned_flags(frame, source)
    if frame.empty:
        raise InputError("no pairs left to rate (every row is a duplicate_of or collapsed pair)",
                         path=source)
    out = pd.DataFrame({
        "word1": frame["word1"].astype(str).str.strip(),
        "word2": frame["word2"].astype(str).str.strip(),
        "pos": frame["pos"].astype(str).str.strip().str.upper() if "pos" in frame else "",
        "topic": frame["topic"].astype(str).str.strip() if "topic" in frame else "",
    })
    for column in ("word1", "word2") + (("pos",) if group_by == "pos" else ("topic",)):
        empty = out.index[out[column] == ""]
        if len(empty):
            raise InputError("empty value", path=source, line=int(empty[0]) + 2, field=column)
    for column, limit in LENGTHS.items():
        _check_text(out[column], limit, source, column)
    out["consistency"] = _flags(frame, source)
    key = out[["topic", "word1", "word2"]].apply(tuple, axis=1)
    dup = key.duplicated()
    if dup.any():
        raise InputError("pair listed twice", path=source, line=int(dup.idxmax()) + 2,
                         field="word1")
    known = {"word1", "word2", "pos", "topic", "consistency"}
    extra = [c for c in frame.columns if c not in known]
    for column in extra:              # stored as JSON: PostgreSQL refuses a NUL byte there
        nul = frame[column].astype(str).str.contains("\x00", regex=False)
        if nul.any():
            raise InputError("holds a NUL byte", path=source,
                             line=int(frame.index[np.flatnonzero(nul)[0]]) + 2, field=column)
    out["extra"] = frame[extra].to_dict("records") if extra else [{} for _ in range(len(out))]
    out = out.reset_index(drop=True)
    out.attrs["skipped"] = skipped
    return out


#: the longest value each pair column holds in the study database (lexgold.study.models)
LENGTHS = {"word1": 300, "word2": 300, "pos": 20, "topic": 500}


def _check_text(values: pd.Series, limit: int, source, field: str) -> None:
    """One-line :class:`InputError` for a value longer than ``limit`` characters or holding a
    control character (a NUL byte, a line break): the same on SQLite and PostgreSQL, checked
    before anything is written."""
    too_long = values.str.len() > limit
    if too_long.any():
        at = int(np.flatnonzero(too_long)[0])
        raise InputError(f"longer than {limit} characters ({len(values.iloc[at])})",
                         path=source, line=int(values.index[at]) + 2, field=field)
    control = values.map(has_control_character)
    if control.any():
        at = int(np.flatnonzero(control)[0])
        raise InputError("holds a control character (a NUL byte, a tab or a line break)",
                         path=source, line=int(values.index[at]) + 2, field=field)


def has_control_character(value: str) -> bool:
    """A character of Unicode category Cc (NUL, tab, line breaks), Zl or Zp."""
    return any(unicodedata.category(c) in ("Cc", "Zl", "Zp") for c in str(value))


def _skip_aligned_flags(frame: pd.DataFrame, source) -> tuple[pd.DataFrame, dict]:
    """Drop the ``duplicate_of`` and ``collapsed`` rows of an aligned pair set (module doc).

    The index is kept, so errors still name the line of the file."""
    skipped = {}
    keep = pd.Series(True, index=frame.index)
    if "duplicate_of" in frame.columns:
        duplicate = frame["duplicate_of"].fillna("").astype(str).str.strip() != ""
        skipped["duplicate_of"] = int(duplicate.sum())
        keep &= ~duplicate
    if "collapsed" in frame.columns:
        collapsed = _truth(frame["collapsed"], "collapsed", source)
        skipped["collapsed"] = int((collapsed & keep).sum())
        keep &= ~collapsed
    return frame[keep], skipped


def _truth(column: pd.Series, name: str, source) -> pd.Series:
    values = column.fillna("").astype(str).str.strip().str.lower()
    bad = values.index[~values.isin(TRUE | FALSE)]
    if len(bad):
        raise InputError(f"expected 1/0 or true/false, found {column[bad[0]]!r}",
                         path=source, line=int(bad[0]) + 2, field=name)
    return values.isin(TRUE)


def _flags(frame, source) -> pd.Series:
    if "consistency" not in frame.columns:
        return pd.Series(False, index=frame.index)
    return _truth(frame["consistency"], "consistency", source)
