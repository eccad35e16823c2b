"""A machine's ratings read in: a CSV of ``word1, word2`` and a number, or word vectors' cosines.

Any CSV with the two word columns (``word1, word2``, or the published spellings ``WORD1``,
``term1`` ... of :data:`lexgold.pairfiles.PAIR_COLUMN_ALIASES`) and one numeric column is a
machine's ratings, on any scale and covering some or all pairs. The numeric column is named
with ``column`` or found: the one column other than the words whose every cell is a number (an
LLM's raw answer such as ``0 (not at all similar)`` beside the parsed number is not one), or
named by the sidecar's ``column`` (``lexgold machine rate``: ``rating``, beside ``samples``).
A cell that is not a finite number, and a pair given twice (in either order), stop the read
with the line named.

A ratings file carries its provenance in a sidecar JSON beside it, ``FILE.json`` (written by
``lexgold machine rate``): the model, the endpoint's host, the prompt and its SHA-256, the
parameters, the date and lexgold's version. A file without one is read with the provenance
``{"model": null}`` and the file's own checksum, so a release can say the model is unknown.

Word vectors are a machine too (:func:`vector_scores`): the cosine of the two words' vectors,
read by the streaming reader of ``lexgold evaluate`` (only the rows of the pairs' words are
kept); pairs with a word missing from the vocabulary get no machine score.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd

from lexgold.compression import check_regular, sha256_file
from lexgold.errors import InputError
from lexgold.pairfiles import PAIR_COLUMN_ALIASES
from lexgold.tables import check_words, read_text_table

#: columns of a machine's scores as lexgold hands them on
COLUMNS = ["word1", "word2", "machine"]
#: the provenance keys of a sidecar (docs/machine.md)
PROVENANCE_KEYS = ("model", "endpoint_host", "prompt", "prompt_sha256", "parameters", "date",
                   "lexgold_version")
#: a sidecar larger than this is not a provenance record
SIDECAR_MAX_BYTES = 1_000_000


def sidecar_path(path: str | Path) -> Path:
    """Where the provenance of the ratings file ``path`` is kept: ``path`` + ``.json``."""
    return Path(str(path) + ".json")


def read_machine(path: str | Path, *, column: str | None = None) -> pd.DataFrame:
    """Read a machine's ratings of word pairs.

    Parameters
    ----------
    path : str or Path
        A CSV (``.gz``, ``.bz2``, ``.xz`` read as they are) with a header naming the two word
        columns and at least one numeric column.
    column : str, optional
        The column holding the machine's number; when not given, the one the sidecar names
        (``"column"``, as ``lexgold machine rate`` writes it), else found (module docstring).

    Returns
    -------
    pandas.DataFrame
        Columns ``word1, word2, machine`` (float), one row per pair, file order.
        ``attrs``: ``column`` (the column read), ``provenance`` (the sidecar's record, with
        ``file`` and ``file_sha256`` added), ``scale`` (the lowest and highest number given).

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
    named = provenance.get("column")
    if column is None and isinstance(named, str) and named in frame.columns:
        column = provenance["column"]
    if column is None:
        column = _numeric_column(frame, words, path)
    elif column not in frame.columns:
        raise InputError(f"no column {column!r} (columns: {', '.join(frame.columns)})",
                         path=path)
    lines = frame.index + 2
    for name in words:
        check_words(frame[name], path=path, lines=lines, field=name)
    numbers = pd.to_numeric(frame[column].str.strip(), errors="coerce")
    bad = ~numbers.map(lambda x: math.isfinite(x) if pd.notna(x) else False)
    if bad.any():
        at = int(bad.to_numpy().argmax())
        raise InputError(f"not a number: {frame[column].iloc[at]!r}", path=path,
                         line=int(lines[at]), field=column)
    scores = pd.DataFrame({"word1": frame[words[0]].str.strip().to_numpy(),
                           "word2": frame[words[1]].str.strip().to_numpy(),
                           "machine": numbers.to_numpy(dtype=float)})
    _check_duplicates(scores, lines, path)
    scores.attrs.update(column=column, provenance=provenance,
                        scale=(float(scores["machine"].min()), float(scores["machine"].max()))
                        if len(scores) else (math.nan, math.nan))
    return scores


def _numeric_column(frame: pd.DataFrame, words: list[str], path: Path) -> str:
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
        raise InputError(f"{what} of numbers besides the words: name the machine's with "
                         "--column", path=path)
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
    """The provenance of the ratings file ``path``: its sidecar's record (module docstring), or
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
        except (UnicodeDecodeError, json.JSONDecodeError) as err:
            raise InputError(f"not a JSON provenance record ({err})", path=side) from None
        if not isinstance(record, dict):
            raise InputError("not a JSON object", path=side)
    return {**record, "file": path.name, "file_sha256": sha256_file(path)}


def vector_scores(path: str | Path, pairs: pd.DataFrame, *, vectors_format: str = "auto",
                  case: str | None = None) -> pd.DataFrame:
    """Word vectors as a machine: the cosine of each pair's two words.

    Parameters
    ----------
    path : str or Path
        A vector file in any layout ``lexgold evaluate`` reads (streamed: only the rows of the
        pairs' words are kept).
    pairs : pandas.DataFrame
        Columns ``word1, word2``.
    vectors_format, case
        As ``lexgold evaluate``'s ``--vectors-format`` and ``--case``.

    Returns
    -------
    pandas.DataFrame
        Columns ``word1, word2, machine`` for the pairs whose words are both found (partial
        coverage), ``attrs['provenance']`` naming the vectors file and its checksum, and
        ``attrs['coverage']`` the share of pairs scored.
    """
    from lexgold.evaluate.vectors import DEFAULT_CASE, read_vectors
    from lexgold.evaluate.wordpairs import cosine_rows, lookup_words, term_vectors

    case = case or DEFAULT_CASE
    path = Path(path)
    unique = pairs[["word1", "word2"]].drop_duplicates().reset_index(drop=True)
    words = lookup_words(unique["word1"].tolist() + unique["word2"].tolist())
    vectors = read_vectors(path, vectors_format, keep=words, case=case)
    left, found1 = term_vectors(unique["word1"].tolist(), vectors, case, "drop")
    right, found2 = term_vectors(unique["word2"].tolist(), vectors, case, "drop")
    found = found1 & found2
    cosines = cosine_rows(left, right)
    scores = pd.DataFrame({"word1": unique["word1"].to_numpy()[found],
                           "word2": unique["word2"].to_numpy()[found],
                           "machine": cosines[found].astype(float)})
    scores.attrs.update(column="cosine", coverage=float(found.mean()) if len(found) else 0.0,
                        provenance={"model": f"word vectors {path.name} (cosine)",
                                    "kind": "vectors", "file": path.name,
                                    "file_sha256": sha256_file(path)},
                        scale=(-1.0, 1.0))
    return scores
