"""Readers of word-pair gold standards: lexgold's own ``gold.csv`` and the published files.

Every reader returns one frame with the columns ``word1, word2, score`` and, when the file has
them, ``pos, relation, conc1, conc2, assoc, assoc333, topic, sd`` and ``score_0_10`` (HyperLex's
AVG_SCORE_0_10 beside its 0-6 AVG_SCORE, which is ``score``).

==============  ==========================================================================
format          layout (delimiter: tab, comma, semicolon or spaces, detected)
==============  ==========================================================================
``simlex``      SimLex-999.txt: word1 word2 POS SimLex999 conc(w1) conc(w2) concQ Assoc(USF)
                SimAssoc333 SD(SimLex) (also lexgold's SimLex ``gold.csv``)
``hyperlex``    HyperLex: WORD1 WORD2 POS TYPE AVG_SCORE AVG_SCORE_0_10 STD SCORES..; the
                non-English and cross-lingual files: word1 word2 pos avg
``tr9856``      TR9856: term1 term2 score topic (terms may be multi-word); the distributed
                header ``#term1 TAB term2 TAB score`` is a header, not a comment
``ws353``       WordSim-353 combined.csv/.tab: Word 1, Word 2, Human (mean); also set1/set2
                (.csv, .tab), whose rater columns 1, 2, ... are not read
``simverb``     SimVerb-3500: word1 word2 POS score [relation], no header (the relation is
                optional: SimVerb-500-dev has ``ensure secure V 4.07``)
``men``         MEN: word1 word2 score; the lemma form ``sun-n sunlight-n 50`` gets POS n
``rg65``        RG-65: word1;word2;score
``plain``       ``word1 word2 score``, ``#`` comment lines, optional header
==============  ==========================================================================

A first row is a header when it has no number or when it names a word column (``Word 1``,
``term1`` ...). A ``#`` comment that is the file's first line, just before the first row, is
the header when it names word columns (TR9856's ``#term1``). A header must name the two word
columns and a score column: any other first line without numbers is an error, and a file whose
scores are all equal is refused, never read into an undefined correlation. With ``format="auto"`` a header row picks the format by its column names
(SimLex999, AVG_SCORE or avg, term1/term2, Human (mean)); headerless files are SimVerb when
they have four or five fields with a POS in the third, MEN lemma form when every word ends in
``-n/-v/-j``, plain otherwise.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

import numpy as np
import pandas as pd

from lexgold.compression import read_input_text
from lexgold.errors import InputError
from lexgold.evaluate.vectors import check_choice

GOLD_FORMATS = ("auto", "simlex", "hyperlex", "tr9856", "ws353", "simverb", "men", "rg65",
                "plain")

#: normalised header name -> lexgold column
_HEADER_NAMES = {
    "word1": "word1", "w1": "word1", "term1": "word1", "wordone": "word1",
    "word2": "word2", "w2": "word2", "term2": "word2", "wordtwo": "word2",
    "simlex999": "score", "avgscore": "score", "avg": "score", "score": "score",
    "humanmean": "score", "avgscore010": "score_0_10",
    "pos": "pos", "type": "relation", "relation": "relation",
    "concw1": "conc1", "concw2": "conc2", "assocusf": "assoc", "simassoc333": "assoc333",
    "topic": "topic", "sdsimlex": "sd", "std": "sd",
}
_FORMAT_BY_HEADER = [("simlex999", "simlex"), ("avgscore", "hyperlex"), ("avg", "hyperlex"),
                     ("term1", "tr9856"), ("humanmean", "ws353")]
#: normalised names of the first word column: a row with one of them first is a header
_WORD_HEADERS = {name for name, column in _HEADER_NAMES.items() if column == "word1"}
_MEN_LEMMA = re.compile(r"^(.+)-([nvj])$")


def _normalise(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def read_gold(path, format: str = "auto") -> pd.DataFrame:
    """Read a gold standard into ``word1, word2, score`` (+ optional columns, see module doc).

    Parameters
    ----------
    path : str or Path
    format : str
        One of ``GOLD_FORMATS``; 'auto' detects it.

    Returns
    -------
    pandas.DataFrame
        One row per pair, file order; ``attrs['format']`` names the format read.

    Raises
    ------
    InputError
        Too few fields or a non-numeric score, naming the file and line.
    """
    check_choice("gold format", format, GOLD_FORMATS)
    path = Path(path)
    rows = _data_rows(path)
    if not rows:
        raise InputError("no word pairs found", path=path)
    header = None
    first_fields = rows[0][1]
    if not any(_is_number(f) for f in first_fields) or _is_header(first_fields):
        header = [_normalise(f) for f in first_fields]
        rows = rows[1:]
        if not rows:
            raise InputError("no word pairs found after the header", path=path)
    if format == "auto":
        format = _detect(header, rows)
    frame = _frame(path, header, rows, format)
    if len(frame) > 1 and frame["score"].nunique() < 2:
        raise InputError(f"every score is {frame['score'].iloc[0]:g}: nothing to correlate "
                         f"(read as {format}; is line 1 a header of another layout? "
                         f"name it with --gold-format)", path=path, field="score")
    frame.attrs["format"] = format
    return frame


def _is_header(fields: list[str]) -> bool:
    """A row naming a word column first (``Word 1``, ``term1``, ``#term1``): a header."""
    return bool(fields) and _normalise(fields[0]) in _WORD_HEADERS


def _data_rows(path: Path) -> list[tuple[int, list[str]]]:
    """(line number, fields) of the non-comment lines, split on the detected delimiter; a
    first-line comment just before them too when it is a header (``#term1 term2``)."""
    text = read_input_text(path)
    lines = [(n, line.rstrip("\r\n")) for n, line in enumerate(text.splitlines(), start=1)]
    lines = [(n, line) for n, line in lines if line.strip()]
    first = next((i for i, (_, line) in enumerate(lines)
                  if not line.lstrip().startswith("#")), None)
    header = None
    if first == 1:                        # the file's only comment, just before the data
        number, line = lines[0]
        candidate = line.lstrip()[1:]
        if _is_header(candidate.split("\t") if "\t" in candidate else candidate.split()):
            header = (number, candidate)
    lines = [(n, line) for n, line in lines if not line.lstrip().startswith("#")]
    if header is not None:
        lines.insert(0, header)
    if not lines:
        return []
    sample = lines[0][1] + (lines[1][1] if len(lines) > 1 else "")
    delimiter = next((d for d in ("\t", ";", ",") if d in sample), None)
    if delimiter is None:
        return [(n, line.split()) for n, line in lines]
    parsed = csv.reader([line for _, line in lines], delimiter=delimiter)
    try:
        return [(n, [f.strip() for f in fields]) for (n, _), fields in zip(lines, parsed)]
    except csv.Error as err:          # a field over the csv module's limit (128 KiB)
        raise InputError(f"not a gold standard row: {err}", path=path,
                         line=lines[max(parsed.line_num - 1, 0)][0]) from None


def _is_number(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


def _detect(header, rows) -> str:
    if header is not None:
        for name, fmt in _FORMAT_BY_HEADER:
            if name in header:
                return fmt
        return "plain"
    fields = rows[0][1]
    if len(fields) in (4, 5) and fields[2].upper() in {"N", "V", "A"} and _is_number(fields[3]):
        return "simverb"
    if all(_MEN_LEMMA.match(f[0]) and _MEN_LEMMA.match(f[1]) for _, f in rows[:50]):
        return "men"
    return "plain"


def _frame(path: Path, header, rows, format: str) -> pd.DataFrame:
    if format == "simverb":
        positions = {"word1": 0, "word2": 1, "pos": 2, "score": 3, "relation": 4}
    elif header is not None:
        positions = {}
        for i, name in enumerate(header):
            column = _HEADER_NAMES.get(name)
            if column and column not in positions:
                positions[column] = i
        missing = [c for c in ("word1", "word2", "score") if c not in positions]
        if missing:
            raise InputError(f"header has no column for {', '.join(missing)} "
                             f"(found: {', '.join(header)})", path=path, line=1)
    else:
        positions = {"word1": 0, "word2": 1, "score": 2}
    optional = {"relation"} if format == "simverb" else set()
    width = max(i for column, i in positions.items() if column not in optional) + 1
    records = []
    for number, fields in rows:
        if len(fields) < width:
            raise InputError(f"expected at least {width} fields, found {len(fields)}",
                             path=path, line=number)
        record = {column: fields[i] if i < len(fields) else None     # optional, missing
                  for column, i in positions.items()}
        if not _is_number(record["score"]):
            raise InputError(f"score {record['score']!r} is not a number", path=path,
                             line=number, field="score")
        records.append(record)
    frame = pd.DataFrame.from_records(records, columns=list(positions))
    for column in ("score", "conc1", "conc2", "assoc", "assoc333", "sd", "score_0_10"):
        if column in frame:
            frame[column] = pd.to_numeric(frame[column], errors="coerce")
    if format == "men":
        frame = _split_men_lemmas(frame)
    return frame


def _split_men_lemmas(frame: pd.DataFrame) -> pd.DataFrame:
    """MEN lemma form: ``car-n`` -> word ``car``, POS ``n`` (pair POS when both agree)."""
    parts1 = frame["word1"].str.extract(_MEN_LEMMA)
    parts2 = frame["word2"].str.extract(_MEN_LEMMA)
    if parts1.isna().any().any() or parts2.isna().any().any():
        return frame
    out = frame.copy()
    out["word1"], out["word2"] = parts1[0], parts2[0]
    out["pos"] = np.where(parts1[1] == parts2[1], parts1[1].str.upper().replace({"J": "A"}),
                          "mixed")
    return out
