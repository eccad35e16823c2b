"""One reader for every command that takes word pairs.

``lexgold translate export --pairs``, ``lexgold crosslingual --gold``, ``lexgold simulate
--pairs``, ``lexgold study create`` and ``lexgold process --pairs`` read their pairs here, so
that a file one of them accepts, all of them accept:

- a CSV whose header is comma-separated (a builder's ``pairs.csv``, lexgold's ``gold.csv``,
  ``aligned.csv``): read as text cells by :func:`lexgold.tables.read_text_table`, every column
  kept as written;
- a published gold standard in its authors' layout (SimLex-999.txt, HyperLex's files, TR9856's
  ``#term1 TAB term2 TAB score``, SimVerb-3500, MEN, WordSim-353, RG-65): split as
  :func:`lexgold.evaluate.gold.read_gold` splits it (delimiter detected, ``#term1`` header,
  Unicode spaces read as plain spaces). A file with a header keeps its column names as written
  (``WORD1, WORD2, POS, AVG_SCORE_0_10``; TR9856's ``term1, term2``), so a published layout is
  still recognised by its columns; HyperLex's trailing ``SCORES..`` field keeps the ratings,
  space-separated. A file without a header gets lexgold's names (``word1, word2, pos, score``);
- Multi-SimLex as Concepticon distributes it (``Vulic-2020-2244.tsv``): one language's pairs,
  ``pair_id, word1, word2, pos, score`` (:mod:`lexgold.evaluate.multisimlex`), with
  ``attrs['scale']`` its published 0-6 scale.

Words written with their language (the cross-lingual HyperLex files: ``en_dog de_tier``)
lose the prefix in a published layout when every word has one
(:func:`lexgold.evaluate.gold.strip_language_prefixes`; columns ``lang1, lang2`` added).
``attrs['format']`` names what was read (``csv``, a gold format, or ``multisimlex``) and
``attrs['notes']`` what was normalised. Every word is checked by
:func:`lexgold.tables.word_problem` (at most 300 characters, no control or invisible
formatting character such as a NUL byte, U+202E or U+200B, no blank letter such as U+3164 or
U+2800, no private-use character), the error naming the line, and kept in Unicode NFC
(:func:`lexgold.tables.normal_word`): an NFD spelling next to its NFC one is one word (a pair
listed in both is then a pair listed twice).
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pandas as pd

from lexgold.compression import check_regular, open_input
from lexgold.errors import InputError
from lexgold.tables import PAIR_COLUMN_ALIASES, check_words, normal_word, read_text_table

__all__ = ["PAIR_COLUMN_ALIASES", "read_pair_table"]


def read_pair_table(path: str | Path, *, language: str | None = None,
                    alternatives: str = "first") -> pd.DataFrame:
    """Read a pair file of any layout the module docstring lists.

    Parameters
    ----------
    path : str or Path
        The file (``.gz``, ``.bz2``, ``.xz`` read as they are).
    language : str, optional
        For Multi-SimLex: the language (ISO code or name); default English. Other layouts
        hold one language and ignore it.
    alternatives : str
        For Multi-SimLex: a word given as ``x/y``, ``first``, ``each`` or ``skip``.

    Returns
    -------
    pandas.DataFrame
        Text cells (Multi-SimLex: a numeric ``score``), one row per pair, file order.

    Raises
    ------
    InputError
        Naming the file, line and field of what cannot be read.
    """
    frame = _read(Path(path), language, alternatives)
    changed = 0
    for column in frame.columns:
        if PAIR_COLUMN_ALIASES.get(column, column) in ("word1", "word2"):
            normal = frame[column].map(lambda word: normal_word(word) if isinstance(word, str)
                                       else word)
            changed += int((normal != frame[column]).sum())
            frame[column] = normal
    if changed:
        frame.attrs["notes"] = [*frame.attrs.get("notes", []),
                                f"{changed:,} words written in Unicode NFD (decomposed) "
                                f"read in NFC"]
    return frame


def _read(path: Path, language: str | None, alternatives: str) -> pd.DataFrame:
    from lexgold.evaluate.gold import read_gold, split_rows, strip_language_prefixes
    from lexgold.evaluate.multisimlex import is_multisimlex, multisimlex_pairs

    if not path.exists():
        raise InputError("file not found", path=path)
    check_regular(path)
    if _comma_header(path):
        frame = read_text_table(path)
        for column in frame.columns:
            if PAIR_COLUMN_ALIASES.get(column, column) in ("word1", "word2"):
                check_words(frame[column], path=path, lines=frame.index + 2, field=column)
        frame.attrs.update(format="csv", notes=[])
        return frame
    header, rows, notes = split_rows(path)
    if header is not None and is_multisimlex(header):
        frame = multisimlex_pairs(header, rows, language, path, alternatives)
        frame.attrs.update(format="multisimlex", notes=notes + frame.attrs["notes"])
        return frame
    for at, field in enumerate(("word1", "word2")):
        check_words([fields[at] if len(fields) > at else "" for _, fields in rows], path=path,
                    lines=[number for number, _ in rows], field=field)
    if header is None:
        gold = read_gold(path)
        frame = gold.astype(object).where(gold.notna(), "").astype(str)
        frame.attrs.update(format=gold.attrs["format"], notes=gold.attrs["notes"])
        return frame
    names = [h.lstrip("#").strip() for h in header]
    width = len(names)
    records = []
    for number, fields in rows:
        if len(fields) < 2:
            raise InputError(f"expected at least 2 fields (two words), found {len(fields)}",
                             path=path, line=number)
        cells = fields[:width - 1] + [" ".join(fields[width - 1:])] if len(fields) > width \
            else fields + [""] * (width - len(fields))
        records.append(cells)
    frame = pd.DataFrame(records, columns=names, dtype=str)
    frame, stripped = strip_language_prefixes(frame, None, path, columns=names[:2])
    notes = notes + ([stripped] if stripped else [])
    try:
        with warnings.catch_warnings():    # the rows are kept as written: only the format
            warnings.simplefilter("ignore")
            kind = read_gold(path).attrs["format"]
    except InputError:                     # a pair list without scores is no gold standard
        kind = "table"
    frame.attrs.update(format=kind, notes=notes)
    return frame


def _comma_header(path: Path) -> bool:
    """Whether the first line is a comma-separated header (a CSV, not a published layout)."""
    try:
        with open_input(path, "rt", encoding="utf-8-sig", newline="") as handle:
            first = handle.readline()
    except (OSError, UnicodeDecodeError, EOFError):
        return True                      # read_text_table names the problem
    if not first.strip():
        return True                      # an empty first line: read_text_table says so
    return "," in first and "\t" not in first and not first.lstrip().startswith("#")
