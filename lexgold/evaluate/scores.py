"""Pair-score files as models: a CSV of ``word1, word2`` and a number, evaluated like vectors.

``lexgold evaluate --scores FILE`` scores a gold standard with any file that gives word pairs a
number: a machine's ratings (an LLM's, lexgold ``machine rate``'s), another study's means, a
model's similarities written out. The file is a CSV with the two word columns (``word1, word2``,
or the published spellings ``WORD1``, ``term1`` ... of
:data:`lexgold.tables.PAIR_COLUMN_ALIASES`) and one numeric column, on any scale (Spearman is
unchanged by a monotone map; Pearson by a linear one) and covering some or all pairs. The
numeric column is named (``--scores-column``), named by the sidecar's ``column`` (``lexgold
machine rate``'s ``rating``, beside ``samples``) or found: the one column other than the words
whose every cell is a number (an LLM's raw answer such as ``0 (not at all similar)`` beside the
parsed number is not one). A cell that is not a finite number, and a pair given twice (in
either order), stop the read with the line named. This is the one reader of such files:
:func:`lexgold.machine.ratings.read_machine` reads a machine's ratings through it.

A file carries its provenance in a sidecar JSON beside it, ``FILE.json`` (written by
``lexgold machine rate``: the model, the endpoint's host, the prompt and its SHA-256, the
parameters, the date, lexgold's version). Without one the provenance is ``{"model": null}``;
the file's name and SHA-256 are always added, so that a gold standard built with these very
ratings is recognised (:mod:`lexgold.evaluate.circularity`).

A gold pair gets the file's score for the same two words in either order (a similarity file
need not list a pair both ways), the reversed order only when the gold does not list it as a
pair of its own (SimVerb-3500 has both ``pass misspend`` and ``misspend pass``: a file scoring
the first does not score the second); matched as written, then, under the case policies that
allow it (``--case``: ``exact-then-lower``, ``lower``), lower-cased. A gold pair the file does
not score is not covered and is left out of the correlations whatever the ``--oov`` policy
(the policies fill a missing word's vector, and a score file has none).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd

from lexgold.compression import check_regular, sha256_file
from lexgold.errors import InputError
from lexgold.evaluate.vectors import CASE_POLICIES, DEFAULT_CASE, check_choice
from lexgold.tables import PAIR_COLUMN_ALIASES, check_words, read_text_table

#: columns of a score file as read
COLUMNS = ["word1", "word2", "score"]
#: a sidecar larger than this is not a provenance record
SIDECAR_MAX_BYTES = 1_000_000


def sidecar_path(path: str | Path) -> Path:
    """Where the provenance of the score file ``path`` is kept: ``path`` + ``.json``."""
    return Path(str(path) + ".json")


def read_scores(path: str | Path, *, column: str | None = None,
                option: str = "--column") -> pd.DataFrame:
    """Read a file of word pairs and their scores.

    Parameters
    ----------
    path : str or Path
        A CSV (``.gz``, ``.bz2``, ``.xz`` read as they are) with a header naming the two word
        columns and at least one numeric column.
    column : str, optional
        The column holding the score; found when not given (module docstring).
    option : str
        The command-line option that names the column, for the error when it cannot be found.

    Returns
    -------
    pandas.DataFrame
        Columns ``word1, word2, score`` (float), one row per pair, file order.
        ``attrs``: ``column`` (the column read), ``provenance`` (the sidecar's record, with
        ``file`` and ``file_sha256`` added), ``scale`` (the lowest and highest score given).

    Raises
    ------
    InputError
        A missing word column, no (or no single) numeric column, a cell that is not a finite
        number, or a pair given twice, naming the file, line and field.
    """
    path = Path(path)
    frame = read_text_table(path)
    names = {PAIR_COLUMN_ALIASES.get(name, name): name for name in frame.columns}
    for needed in ("word1", "word2"):
        if needed not in names:
            raise InputError(f"no {needed} column (columns: {', '.join(frame.columns)})",
                             path=path)
    words = [names["word1"], names["word2"]]
    provenance = read_provenance(path)
    named = provenance.get("column")         # lexgold machine rate names its column
    if column is None and isinstance(named, str) and named in frame.columns:
        column = named
    if column is None:
        column = _numeric_column(frame, words, path, option)
    elif column not in frame.columns:
        raise InputError(f"no column {column!r} (columns: {', '.join(frame.columns)})",
                         path=path)
    lines = frame.index + 2
    for name in words:
        frame[name] = check_words(frame[name], path=path, lines=lines, field=name)
    numbers = pd.to_numeric(frame[column].str.strip(), errors="coerce")
    bad = ~numbers.map(lambda x: math.isfinite(x) if pd.notna(x) else False)
    if bad.any():
        at = int(bad.to_numpy().argmax())
        raise InputError(f"not a number: {frame[column].iloc[at]!r}", path=path,
                         line=int(lines[at]), field=column)
    scores = pd.DataFrame({"word1": frame[words[0]].str.strip().to_numpy(),
                           "word2": frame[words[1]].str.strip().to_numpy(),
                           "score": numbers.to_numpy(dtype=float)})
    _check_duplicates(scores, lines, path)
    scores.attrs.update(column=column, provenance=provenance,
                        scale=(float(scores["score"].min()), float(scores["score"].max()))
                        if len(scores) else (math.nan, math.nan))
    return scores


def _numeric_column(frame: pd.DataFrame, words: list[str], path: Path, option: str) -> str:
    """The one column besides the words whose every cell is a finite number."""
    found = []
    for name in frame.columns:
        if name in words:
            continue
        values = pd.to_numeric(frame[name].str.strip(), errors="coerce")
        if len(values) and values.notna().all() and values.map(math.isfinite).all():
            found.append(name)
    if len(found) != 1:
        what = "no column" if not found else f"{len(found)} columns ({', '.join(found)})"
        raise InputError(f"{what} of numbers besides the words: name the column to read with "
                         f"{option}", path=path)
    return found[0]


def _check_duplicates(scores: pd.DataFrame, lines, path: Path) -> None:
    """Stop at the first pair given twice, in either order."""
    seen: dict[frozenset | tuple, int] = {}
    for w1, w2, line in zip(scores["word1"], scores["word2"], lines):
        key = frozenset((w1, w2)) if w1 != w2 else (w1, w1)
        if key in seen:
            raise InputError(f"pair ({w1}, {w2}) given twice (first at line {seen[key]})",
                             path=path, line=int(line))
        seen[key] = int(line)


def read_provenance(path: str | Path) -> dict:
    """The provenance of the score file ``path``: its sidecar's record (module docstring), or
    ``{"model": None}`` without one; ``file`` and ``file_sha256`` always added.

    Raises
    ------
    InputError
        A sidecar that is not a JSON object, or larger than :data:`SIDECAR_MAX_BYTES`.
    """
    path = Path(path)
    side = sidecar_path(path)
    record: dict = {"model": None}
    if side.exists():
        check_regular(side)
        if side.stat().st_size > SIDECAR_MAX_BYTES:
            raise InputError(f"provenance larger than {SIDECAR_MAX_BYTES:,} bytes", path=side)
        try:
            record = json.loads(side.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as err:
            raise InputError(f"not a JSON provenance record ({err})", path=side) from None
        if not isinstance(record, dict):
            raise InputError("not a JSON object", path=side)
    return {**record, "file": path.name, "file_sha256": sha256_file(path)}


def score_pairs(gold: pd.DataFrame, scores: pd.DataFrame,
                case: str = DEFAULT_CASE) -> pd.DataFrame:
    """Gold and file score per gold pair: the per-pair frame of
    :func:`lexgold.evaluate.wordpairs.pair_scores` for a score file.

    Parameters
    ----------
    gold : pandas.DataFrame
        ``word1, word2, score`` (:func:`lexgold.evaluate.gold.read_gold`).
    scores : pandas.DataFrame
        ``word1, word2, score`` (:func:`read_scores`).
    case : str
        ``exact`` matches the words as written; ``exact-then-lower`` and ``lower`` fall back
        to the lower-cased pair (module docstring).

    Returns
    -------
    pandas.DataFrame
        ``word1, word2, gold, model, found, used``: ``found`` and ``used`` where the file
        scores the pair (in either order, module docstring), ``model`` its score (NaN
        elsewhere).

    Examples
    --------
    >>> gold = pd.DataFrame({"word1": ["cat", "Sun", "red"], "word2": ["dog", "moon", "sea"],
    ...                      "score": [8.0, 5.0, 1.0]})
    >>> file = pd.DataFrame({"word1": ["dog", "sun"], "word2": ["cat", "moon"],
    ...                      "score": [0.9, 0.4]})
    >>> score_pairs(gold, file)["model"].tolist()
    [0.9, 0.4, nan]
    """
    check_choice("case", case, CASE_POLICIES)
    exact: dict[tuple[str, str], float] = {}
    lower: dict[tuple[str, str], float] = {}
    for w1, w2, value in zip(scores["word1"], scores["word2"], scores["score"]):
        exact.setdefault((w1, w2), float(value))
        lower.setdefault((w1.lower(), w2.lower()), float(value))
    pairs = list(zip(gold["word1"].astype(str).str.strip(), gold["word2"].astype(str).str.strip()))
    listed = set(pairs)
    listed_lower = {(w1.lower(), w2.lower()) for w1, w2 in pairs}

    def look(table: dict, owners: set, w1: str, w2: str) -> float:
        if (w1, w2) in table:
            return table[(w1, w2)]
        if (w2, w1) in table and (w2, w1) not in owners:
            return table[(w2, w1)]
        return np.nan

    model = np.full(len(gold), np.nan)
    for i, (w1, w2) in enumerate(pairs):
        if case != "lower":
            model[i] = look(exact, listed, w1, w2)
        if np.isnan(model[i]) and case != "exact":
            model[i] = look(lower, listed_lower, w1.lower(), w2.lower())
    found = ~np.isnan(model)
    return pd.DataFrame({"word1": gold["word1"].to_numpy(), "word2": gold["word2"].to_numpy(),
                         "gold": gold["score"].to_numpy(dtype=float), "model": model,
                         "found": found, "used": found}, index=gold.index)
