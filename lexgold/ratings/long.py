"""Ratings in the long format of docs/contract.md: the one reader and the one checker.

One row per answer: ``rater_id, tranche, word1, word2, rating``, optionally ``pos``, ``kind``
(``unique`` / ``consistency`` / ``calibration`` / ``duplicate`` / ``checkpoint``) and
``answered_at``. Every statistic of :mod:`lexgold.process` calls :func:`check_ratings` first;
:func:`lexgold.ratings.layouts.read_layout` reads the long layout with :func:`read_long`.

Checkpoint rows (``kind == "checkpoint"``, SimLex section 3.3) carry the answer's correctness in
``rating``: 1 for a correct answer, 0 for a wrong one; ``word1``/``word2`` name the checkpoint
(for example the chosen pair). They never enter agreement or scores.

Two optional columns record where the ratings came from (``lexgold ratings import``):
``scale_min, scale_max`` is the scale the source declared (``--scale``); ``lexgold process``
maps those ratings linearly onto the protocol's scale (:func:`on_scale`). A ``rater_id``
starting with ``?`` (:data:`ANONYMOUS`) is a rating without rater identity (SimVerb-3500's
rating columns): means and SDs are defined, per-rater statistics are not (:func:`require_raters`).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
from pandas.api.types import union_categoricals

from lexgold.errors import InputError
from lexgold.ratings import ANONYMOUS, ITEM
from lexgold.ratings.detect import LABELS, detect_layout
from lexgold.ratings.lines import Imported
from lexgold.compression import limit
from lexgold.tables import MAX_WORD, normal_word, read_text_chunks, word_problem

REQUIRED = ("rater_id", "tranche", "word1", "word2", "rating")
OPTIONAL = ("pos", "kind", "answered_at", "scale_min", "scale_max")
KINDS = ("unique", "consistency", "calibration", "duplicate", "checkpoint")
#: columns of a written long file (``lexgold ratings import``), in order (optional ones only
#: when present)
COLUMNS = ["rater_id", "tranche", "word1", "word2", "rating", "kind", "pos", "relation",
           "answered_at",
           "topic", "scale_min", "scale_max", "platform"]


def read_ratings(path: str | Path, *, columns: tuple[str, ...] | None = None) -> pd.DataFrame:
    """Read a long-format ratings CSV and check it.

    Parameters
    ----------
    path : str or Path
        UTF-8 CSV with a header containing at least ``rater_id, tranche, word1, word2, rating``.
    columns : tuple of str, optional
        The only columns kept besides :data:`REQUIRED` (the cost tools' own:
        :data:`COST_COLUMNS`, :data:`PLAN_COLUMNS`); each part drops the others as soon as it
        is parsed and checked for its fields, and holds :data:`CODED_WITH_COLUMNS` as
        categoricals. A 10,000-rater study's ``answered_at`` and ``platform`` as text are
        190 MB of the 237 MB read. Default: every column.

    Raises
    ------
    InputError
        Naming the file, the line (header = line 1) and the field at fault.
    """
    path = Path(path)
    try:
        frame = _read_coded(path, columns)
    except InputError:
        if path.is_file():
            _suggest_import(path)
        raise
    if "rater_id" not in frame.columns:
        _suggest_import(path)
    if frame.empty and all(column in frame.columns for column in REQUIRED):
        raise InputError("no ratings: the file has no rows below its header", path=path, line=2)
    return coded(check_ratings(frame, source=path))



def read_long(path: Path) -> Imported:
    """lexgold's long CSV as :func:`read_ratings` reads and checks it, with the columns of
    :data:`COLUMNS` it has, as :func:`lexgold.ratings.layouts.read_layout` gives every layout."""
    frame = read_ratings(path)
    keep = [c for c in COLUMNS if c in frame.columns]
    frame = frame[keep].copy()
    frame["_line"] = np.arange(len(frame)) + 2
    frame["_field"] = "rating"
    return Imported(path, "long", frame.reset_index(drop=True), [])

#: the columns ``crowd fit``, ``replay`` and ``machine worth`` read besides :data:`REQUIRED`
#: (:func:`lexgold.crowd.logs.read_log`)
COST_COLUMNS = ("pos", "kind", "relation", "scale_min", "scale_max")
#: the columns ``lexgold plan`` reads besides :data:`REQUIRED`: the cost tools' and the times
#: of :func:`lexgold.process.quality.pair_seconds`, the ``platform`` of
#: :func:`lexgold.simulated.simulated_rows`
PLAN_COLUMNS = (*COST_COLUMNS, "answered_at", "response_ms", "server_ms", "platform",
                "simulated")
#: text columns held as categoricals when :func:`read_ratings` keeps chosen ``columns``: a
#: few distinct values in every row, or one time per page of answers (``answered_at``: at
#: 10,000 raters 103 MB as a string per row)
CODED_WITH_COLUMNS = ("platform", "relation", "simulated", "answered_at")
#: rows read at a time by :func:`read_ratings`
CHUNK_ROWS = 100_000
#: characters read at a time by :func:`read_ratings` (fewer rows when lines are long)
CHUNK_CHARS = 4 << 20


def _read_coded(path: Path, columns: tuple[str, ...] | None = None) -> pd.DataFrame:
    """The file as :func:`lexgold.tables.read_text_table` reads it, but read in parts of
    :data:`CHUNK_ROWS` rows whose key columns (:data:`CODED`) and ``rating`` the parser makes
    categoricals as it reads them, then are joined (:func:`pandas.api.types.union_categoricals`,
    categories in sorted order, as :class:`pandas.Categorical` gives them for the whole
    column). No column of 1.4 M strings is ever held: reading a 10,000-rater study as strings
    first took 170 MB more at its peak than the coded frame. Other columns stay text. With
    ``columns`` (:func:`read_ratings`), a part keeps only those and :data:`REQUIRED` (after
    the checks of its text, so a file is refused for the same cells whatever is kept)."""
    parts, held, most = [], 0, limit("LEXGOLD_MAX_WHOLE_BYTES")
    categorical = (*CODED, "rating") if columns is None else \
        (*CODED, *CODED_WITH_COLUMNS, "rating")
    for part in read_text_chunks(path, rows=CHUNK_ROWS, categorical=categorical,
                                 chars=CHUNK_CHARS):
        held += _held_text(part, path)
        if held > most:
            raise InputError(f"more than {most:,} characters of text to hold (distinct keys "
                             f"and other cells): over the limit LEXGOLD_MAX_WHOLE_BYTES (a "
                             f"decompression bomb?)", path=path,
                             line=int(part.index[-1]) + 2 if len(part) else None)
        if columns is not None:
            wanted = {*REQUIRED, *columns}
            part = part.iloc[:, [at for at, name in enumerate(part.columns) if name in wanted]]
        parts.append(part)
    names, columns = list(parts[0].columns), {}
    for at in range(len(names)):          # by position: stripped names may repeat
        pieces = [part.iloc[:, at] for part in parts]
        if isinstance(pieces[0].dtype, pd.CategoricalDtype):     # categories as str
            pieces = [piece.cat.rename_categories(pd.Index(piece.cat.categories.astype(str)))
                      for piece in pieces]
            columns[at] = union_categoricals(pieces, sort_categories=True)
        else:
            columns[at] = pd.concat(pieces, ignore_index=True).array
    parts.clear()
    frame = pd.DataFrame(columns)
    frame.columns = names
    return frame


def _held_text(part: pd.DataFrame, path: Path) -> int:
    """Characters of text ``part`` holds (each distinct key once, other cells each), after
    refusing a word longer than :data:`lexgold.tables.MAX_WORD` as soon as its part is read
    (a decompression bomb of long words ends in one line, not in memory exhausted)."""
    held = 0
    for at, column in enumerate(part.columns):
        values = part.iloc[:, at]
        if isinstance(values.dtype, pd.CategoricalDtype):
            names = pd.Index(values.cat.categories).astype(str)
            lengths = names.str.len().to_numpy()
            long = [w for w in names[lengths > MAX_WORD] if len(w.strip()) > MAX_WORD]
            if column in ("word1", "word2") and long:
                row = int(np.flatnonzero(values.isin(long).to_numpy())[0])
                raise InputError(word_problem(long[0].strip()) or "word too long", path=path,
                                 line=int(part.index[row]) + 2, field=column)
            held += int(lengths.sum())
        else:
            held += int(values.astype(str).str.len().sum())
    return held


#: the key columns held as categoricals by :func:`coded`
CODED = ("rater_id", "tranche", "word1", "word2", "pos", "kind")


def coded(ratings: pd.DataFrame) -> pd.DataFrame:
    """A checked frame with its key columns (:data:`CODED`) as categoricals: the same values,
    their categories in sorted order (so grouping and sorting order them as the strings), each
    distinct string stored once and compared, grouped and merged by integer code. At 10,000
    raters (1.4 M rows) most of ``lexgold process``'s time went to hashing these strings again
    in every groupby, merge and comparison. Other columns are left as they are."""
    frame = ratings.copy(deep=False)
    for column in CODED:
        if column in frame.columns and not isinstance(frame[column].dtype, pd.CategoricalDtype):
            frame[column] = pd.Categorical(frame[column].to_numpy(dtype=object))
    frame.attrs = dict(ratings.attrs)
    return frame


def _suggest_import(path: Path) -> None:
    """A published layout handed to a long-format reader: say how to convert it."""
    try:
        layout = detect_layout(path)
    except InputError:
        return
    if layout != "long":
        raise InputError(f"missing column rater_id: this is {LABELS[layout]} (a published "
                         f"layout), not the long format; convert it with `lexgold ratings "
                         f"import {path.name} --out LONG.csv`", path=path, line=1,
                         field="rater_id")


def check_ratings(ratings: pd.DataFrame, *, source: str | Path | None = None) -> pd.DataFrame:
    """Check a long-format ratings frame and return a normalised copy.

    Parameters
    ----------
    ratings : pandas.DataFrame
        Columns of the long format (docs/contract.md). ``rating`` must be a finite number; ``kind``, when present,
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

    Notes
    -----
    Validated once, at the edge: the returned frame carries a mark in ``attrs`` (kept by row
    subsets and copies). A marked frame is checked again only where that is cheap (columns,
    ratings finite numbers, kinds known); its keys, already stripped strings, are not scanned
    again, so the statistics of :mod:`lexgold.process` can each call this function without
    re-reading every string of a large study.
    """
    if not isinstance(ratings, pd.DataFrame):
        raise InputError(f"ratings: expected a pandas DataFrame, found {type(ratings).__name__}")
    where = source if source is not None else "ratings"
    missing = [c for c in REQUIRED if c not in ratings.columns]
    if missing:
        raise InputError(f"missing column; required: {', '.join(REQUIRED)}", path=where,
                         line=1 if source is not None else None, field=missing[0])
    if _still_checked(ratings):
        return ratings.copy(deep=False)
    frame = ratings.copy(deep=False)      # columns are replaced, never changed in place
    if "kind" not in frame.columns:
        frame["kind"] = "unique"
    frame["kind"] = _kinds(frame["kind"])
    bad = ~frame["kind"].isin(KINDS)
    if bad.any():
        first = int(np.flatnonzero(bad.to_numpy())[0])
        _fail(f"expected one of {', '.join(KINDS)}, found {frame['kind'].iloc[first]!r}",
              frame, bad, "kind", source)
    checkpoint = (frame["kind"] == "checkpoint").to_numpy()
    for column in ("rater_id", "tranche", "word1", "word2"):
        frame[column] = _stripped(frame[column])
        bad = frame[column].isin(["", "nan", "None", "<NA>"]) | ratings[column].isna().to_numpy()
        if column in ("word1", "word2"):
            bad &= ~checkpoint        # a checkpoint row need not name a pair
        if bad.any():
            _fail("empty value", frame, bad, column, source)
        if column in ("word1", "word2"):
            _check_words(frame, column, source)
    values = _numbers(frame["rating"])
    bad = values.isna() | ~np.isfinite(values.fillna(0.0))
    if bad.any():
        first = int(np.flatnonzero(bad.to_numpy())[0])
        _fail(f"expected a number, found {ratings['rating'].iloc[first]!r}", frame, bad,
              "rating", source)
    frame["rating"] = values.astype(float)
    _check_scale_columns(frame, where, source)
    frame.attrs[_CHECKED] = True
    return frame


def _kinds(column: pd.Series) -> pd.Series:
    """``kind`` stripped, an empty one ``unique``; a categorical stays one (its categories
    renamed, merged and sorted), so that the rows are never compared as strings."""
    if not isinstance(column.dtype, pd.CategoricalDtype):
        kind = _stripped(column.astype(object))
        return kind.where(kind != "", "unique")
    kind = _stripped(column)
    names = ["unique" if name == "" else name for name in kind.cat.categories]
    categories = sorted(set(names))
    recode = np.array([categories.index(name) for name in names], dtype=np.int64)
    return pd.Series(pd.Categorical.from_codes(recode[kind.cat.codes.to_numpy()],
                                               categories=pd.Index(categories)),
                     index=column.index)


def _numbers(column: pd.Series) -> pd.Series:
    """:func:`pandas.to_numeric` (``errors="coerce"``) of ``column``; a categorical's
    categories are converted once each (the ratings of :func:`read_ratings`: a few distinct
    values in 1.4 M rows)."""
    if not isinstance(column.dtype, pd.CategoricalDtype):
        return pd.to_numeric(column, errors="coerce")
    numbers = pd.to_numeric(pd.Series(column.cat.categories), errors="coerce").to_numpy(
        dtype=float, na_value=np.nan)
    codes = column.cat.codes.to_numpy()
    values = np.append(numbers, np.nan)[codes]              # code -1 (missing) -> NaN
    return pd.Series(values, index=column.index)


#: the ``attrs`` key of a frame returned by :func:`check_ratings`
_CHECKED = "lexgold.checked"


def _still_checked(frame: pd.DataFrame) -> bool:
    """A frame :func:`check_ratings` returned (or a row subset of one) that still holds: the
    cheap parts are checked again; a frame that fails is checked in full (and the error named)."""
    if not frame.attrs.get(_CHECKED) or "kind" not in frame.columns \
            or frame["rating"].dtype != np.float64:
        return False
    if not np.isfinite(frame["rating"].to_numpy()).all():
        return False
    kinds = pd.unique(frame["kind"])
    return all(isinstance(k, str) and k in KINDS for k in kinds)


def _check_scale_columns(frame: pd.DataFrame, where, source) -> None:
    """``scale_min, scale_max``: both or neither, numbers or empty, min < max (in place)."""
    if ("scale_min" in frame.columns) != ("scale_max" in frame.columns):
        raise InputError("scale_min and scale_max go together", path=where,
                         field="scale_min" if "scale_min" in frame.columns else "scale_max")
    if "scale_min" in frame.columns:
        for column in ("scale_min", "scale_max"):
            text = _stripped(frame[column])
            values = pd.to_numeric(text.where(text != ""), errors="coerce")
            bad = values.isna() & (text != "")
            if bad.any():
                _fail(f"expected a number or nothing, found {text[bad].iloc[0]!r}", frame, bad,
                      column, source)
            frame[column] = values.astype(float)
        bad = ~(frame["scale_min"] < frame["scale_max"]) & frame["scale_min"].notna()
        bad |= frame["scale_min"].isna() != frame["scale_max"].isna()
        if bad.any():
            _fail("need scale_min < scale_max, both given or both empty", frame, bad,
                  "scale_min", source)


#: the most points (steps) a rating scale may have: a 0-100 slider in steps of 0.1 has 1,001
MAX_SCALE_POINTS = 1_001


def scale_points(low: float, high: float, step: float, *, source=None) -> int:
    """The number of points of the scale ``low..high`` in steps of ``step``, at most
    :data:`MAX_SCALE_POINTS` (a model over the scale holds arrays of that length).

    >>> scale_points(0, 6, 0.5)
    13

    Raises
    ------
    InputError
        A step that is not a positive finite number, or too many points (naming ``--step``).
    """
    if not (math.isfinite(step) and step > 0):
        raise InputError(f"expected a positive finite number, found {step!r}", path=source,
                         field="--step")
    points = (high - low) / step + 1
    if not points <= MAX_SCALE_POINTS:
        raise InputError(f"the scale {low:g}-{high:g} in steps of {step:g} has {points:,.0f} "
                         f"points, more than {MAX_SCALE_POINTS:,}: give a larger --step (or "
                         f"--scale)", path=source, field="--step")
    return int(round(points - 1)) + 1


def declare_scale(ratings: pd.DataFrame, scale: tuple[float, float]) -> pd.DataFrame:
    """Declare ``scale`` (min, max) for the rows that declare none; others keep theirs."""
    low, high = float(scale[0]), float(scale[1])
    if not low < high:
        raise InputError(f"need MIN < MAX, found {low:g} {high:g}", field="--scale")
    frame = ratings.copy()
    if "scale_min" not in frame.columns:
        frame["scale_min"], frame["scale_max"] = np.nan, np.nan
    missing = frame["scale_min"].isna()
    frame.loc[missing, "scale_min"], frame.loc[missing, "scale_max"] = low, high
    return frame


def is_anonymous(ratings: pd.DataFrame) -> bool:
    """Whether any rating lacks rater identity (a ``rater_id`` starting with ``?``)."""
    raters = pd.Series(pd.unique(ratings["rater_id"]))      # each distinct id once
    return bool(raters.astype(str).str.startswith(ANONYMOUS).any())


def require_raters(ratings: pd.DataFrame, what: str, *, source: str | Path | None = None) -> None:
    """Refuse a per-rater statistic on ratings without rater identity.

    Raises
    ------
    InputError
        Naming the file, the statistic and what is defined instead.
    """
    if is_anonymous(ratings):
        raise InputError(f"{what}: not defined for ratings without rater identity (rater ids "
                         f"starting with '?', such as SimVerb-3500's rating columns); means, "
                         f"SDs and split-half on random halves are (lexgold agree --split-half)",
                         path=source if source is not None else "ratings", field="rater_id")


def on_scale(ratings: pd.DataFrame, rating_min: float, rating_max: float, *,
             source: str | Path | None = None) -> pd.DataFrame:
    """Check every rating against its scale and map declared scales onto the protocol's.

    A row with ``scale_min, scale_max`` must lie within that declared scale and is mapped
    linearly onto ``[rating_min, rating_max]``; a row without must lie within
    ``[rating_min, rating_max]``. Nothing is clipped. Checkpoint rows are not ratings.

    Raises
    ------
    InputError
        The first rating outside its scale, naming the file, line (header = line 1) and value.

    Examples
    --------
    >>> import pandas as pd
    >>> men = pd.DataFrame({"rater_id": "a", "tranche": 1, "word1": ["x", "y"], "word2": "z",
    ...                     "rating": [1, 7], "scale_min": 1, "scale_max": 7})
    >>> on_scale(check_ratings(men), 0, 6)["rating"].tolist()
    [0.0, 6.0]
    """
    frame = ratings.copy(deep=False)      # columns are replaced, never changed in place
    rated = (frame["kind"] != "checkpoint").to_numpy()
    low = pd.Series(float(rating_min), index=frame.index)
    high = pd.Series(float(rating_max), index=frame.index)
    declared = pd.Series(False, index=frame.index)
    if "scale_min" in frame.columns:
        declared = frame["scale_min"].notna()
        low, high = low.where(~declared, frame["scale_min"]), high.where(~declared,
                                                                          frame["scale_max"])
    bad = rated & ((frame["rating"] < low) | (frame["rating"] > high)).to_numpy()
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        row = frame.iloc[first]
        scale = f"{low.iloc[first]:g}-{high.iloc[first]:g}"
        hint = ("the declared scale" if declared.iloc[first] else
                "the protocol's scale; declare the source's scale (lexgold ratings import "
                "--scale MIN MAX, or lexgold process --scale) to rescale it")
        _fail(f"rating {row['rating']:g} is outside {scale}, {hint}", frame, bad, "rating",
              source)
    move = rated & declared.to_numpy()
    if move.any():                        # a new column: the caller's frame is not changed
        a, b = frame.loc[move, "scale_min"], frame.loc[move, "scale_max"]
        rating = frame["rating"].copy()
        rating.loc[move] = rating_min + (frame.loc[move, "rating"] - a) * (
            rating_max - rating_min) / (b - a)
        frame["rating"] = rating
    return frame


#: a declared scale is doubted when the ratings seen span less than this share of it
SCALE_USE_MIN = 2 / 3


def scale_use(ratings: pd.DataFrame) -> list[str]:
    """Warnings for each declared scale (``scale_min, scale_max``) that the ratings declared on
    it use less than two thirds of: a wrong declaration (SimVerb-3500's 0-6 ratings declared
    0-10) misplaces every rescaled and released score without any rating falling outside.

    Returns
    -------
    list of str
        One sentence per doubtful scale; empty when none (or no scale is declared).

    Examples
    --------
    >>> simverb = pd.DataFrame({"rater_id": "?a", "tranche": 1, "word1": ["x", "y"],
    ...                         "word2": "z", "rating": [0, 6], "scale_min": 0, "scale_max": 10})
    >>> scale_use(check_ratings(simverb))[0][:58]
    'the ratings declared on 0-10 span only 0-6 (60% of the sca'
    """
    if "scale_min" not in ratings.columns:
        return []
    rated = ratings[(ratings["kind"] != "checkpoint").to_numpy() & ratings["scale_min"].notna()]
    out = []
    for (low, high), group in rated.groupby(["scale_min", "scale_max"]):
        seen = group["rating"].max() - group["rating"].min()
        if seen < SCALE_USE_MIN * (high - low):
            out.append(f"the ratings declared on {low:g}-{high:g} span only "
                       f"{group['rating'].min():g}-{group['rating'].max():g} "
                       f"({seen / (high - low):.0%} of the scale, less than two thirds): is "
                       f"the declared scale theirs? (SimVerb-3500's ratings are on 0-6, "
                       f"MEN's on 1-7, WordSim-353's on 0-10)")
    return out


def check_binary(ratings: pd.DataFrame, *, source: str | Path | None = None) -> None:
    """Refuse a rating other than 0 or 1 for a binary protocol (TR9856 section 3.4: each
    annotator says related or unrelated; a pair's score is the fraction who said related).

    Raises
    ------
    InputError
        Naming the file, the line of the first other rating and its value; a fraction there
        means released scores were given as ratings.
    """
    rated = (ratings["kind"] != "checkpoint").to_numpy()
    bad = rated & ~ratings["rating"].isin([0.0, 1.0]).to_numpy()
    if bad.any():
        value = ratings["rating"].to_numpy()[bad][0]
        _fail(f"rating {value:g}: a binary protocol takes 0 (unrelated) or 1 (related) from "
              f"each annotator (a fraction is a released score, not a rating)", ratings, bad,
              "rating", source)


def _stripped(column: pd.Series) -> pd.Series:
    """``str`` values without surrounding blanks; the work is done once per distinct value.
    A categorical stays one (its categories stripped, merged and sorted; a missing value is
    ``""``), so a coded frame (:func:`coded`) is checked without a string per row."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        codes = column.cat.codes.to_numpy()
        cleaned = pd.Index(column.cat.categories).astype(str).str.strip().to_numpy(dtype=object)
        if (codes == -1).any():
            cleaned = np.append(cleaned, "")                  # code -1 (missing) -> ""
        categories, inverse = np.unique(cleaned.astype(str), return_inverse=True)
        codes = inverse[codes]
        return pd.Series(pd.Categorical.from_codes(codes, categories=pd.Index(
            categories.astype(object))), index=column.index)
    codes, uniques = pd.factorize(column, use_na_sentinel=True)
    cleaned = np.append(pd.Index(uniques).astype(str).str.strip().to_numpy(dtype=object), "")
    return pd.Series(cleaned[codes], index=column.index, dtype=object)


def _check_words(frame: pd.DataFrame, column: str, source) -> None:
    """:func:`lexgold.tables.word_problem` of each distinct word of ``column`` (a checkpoint
    row's empty word aside), the first bad one in file order named by its line; the words
    are then kept in NFC (:func:`lexgold.tables.normal_word`)."""
    words = frame[column]
    distinct = words.cat.categories if isinstance(words.dtype, pd.CategoricalDtype) \
        else pd.unique(words.to_numpy(dtype=object))
    problems = {word: problem for word in distinct if word != ""
                and (problem := word_problem(str(word)))}
    if problems:
        bad = words.isin(list(problems)).to_numpy()
        first = words.iloc[int(np.flatnonzero(bad)[0])]
        _fail(problems[first], frame, bad, column, source)
    normal = {word: normal_word(str(word)) for word in distinct}
    changed = {word: nfc for word, nfc in normal.items() if nfc != word}
    if changed:                    # an NFD spelling is the word of its NFC one
        normalised = words.astype(object).replace(changed)
        frame[column] = normalised.astype("category") \
            if isinstance(words.dtype, pd.CategoricalDtype) else normalised


def _fail(message, frame, bad, column, source):
    position = int(np.flatnonzero(np.asarray(bad))[0])
    if source is not None:
        raise InputError(message, path=source, line=position + 2, field=column)
    raise InputError(f"row {position}: {message}", path="ratings", field=column)


def answers(ratings: pd.DataFrame) -> pd.DataFrame:
    """One rating per rater, tranche and item: the mean of that rater's answers to the item.

    Checkpoint rows are dropped; a pair rated twice by the same rater (the calibration repeat of
    SimLex section 3.3, a HyperLex duplicate, section 4.4) counts once, with the mean of the
    answers. Returns columns ``rater_id, tranche, word1, word2, rating`` (and ``pos`` if given),
    one row per rater, tranche and item in the order of their first answer.

    Coded frames (:func:`coded`) are grouped by the keys' integer codes; the mean is the one
    ``groupby(...).mean()`` gives (one or two answers per key, or whole-number ratings, add up
    exactly in any order), other frames go through ``groupby``.
    """
    frame = ratings[ratings["kind"] != "checkpoint"]
    keys = ["rater_id", "tranche", *ITEM]
    found = _coded_answers(frame, keys)
    if found is None:
        found = frame.groupby(keys, sort=False, as_index=False)["rating"].mean()
    if "pos" in frame.columns:
        pos = frame.groupby(ITEM, sort=False)["pos"].first()
        found = found.join(pos, on=ITEM)
    return found


def _coded_answers(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame | None:
    """:func:`answers`' means by integer codes, or None when the keys are not all categoricals,
    their codes do not fit one integer, or a mean could differ from ``groupby``'s in the last
    bit (three answers or more to one key that are not whole numbers)."""
    group = key_groups(frame, keys)
    if group is None:
        return None
    counts = np.bincount(group)
    rating = frame["rating"].to_numpy(dtype=float)
    if len(counts) and counts.max() > 2 and not (rating == np.round(rating)).all():
        return None
    found = frame[keys].iloc[first_rows(group)].reset_index(drop=True)
    found["rating"] = np.bincount(group, weights=rating, minlength=len(counts)) / counts
    return found


def first_rows(group: np.ndarray) -> np.ndarray:
    """Positions of each group's first row, for groups numbered in order of first appearance
    (:func:`key_groups`)."""
    if not len(group):
        return np.array([], dtype=np.intp)
    top = np.maximum.accumulate(group)
    return np.flatnonzero(np.concatenate([[True], top[1:] > top[:-1]]))


def key_groups(frame: pd.DataFrame, keys: list[str]) -> np.ndarray | None:
    """Per row, the number of its combination of ``keys`` values, numbered in order of first
    appearance (``groupby(keys, sort=False).ngroup()``), from the categoricals' integer codes;
    None when a key is not a categorical or the codes do not fit one integer."""
    columns = [frame[k] for k in keys]
    if not all(isinstance(c.dtype, pd.CategoricalDtype) for c in columns):
        return None
    sizes = [len(c.cat.categories) + 1 for c in columns]
    if float(np.prod(sizes, dtype=float)) >= 2.0 ** 62:
        return None
    key = np.zeros(len(frame), dtype=np.int64)
    for column, size in zip(columns, sizes):
        key = key * size + column.cat.codes.to_numpy().astype(np.int64) + 1
    return pd.factorize(key)[0]


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
