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
``multisimlex`` Multi-SimLex as Concepticon distributes it (``Vulic-2020-2244.tsv``: one row
                per concept, ``SIMLEX_IDS``, ``<LANGUAGE>_IN_SOURCE``, ``<LANGUAGE>_SCORE``),
                one language's pairs (:mod:`lexgold.evaluate.multisimlex`)
``plain``       ``word1 word2 score``, ``#`` comment lines, optional header
==============  ==========================================================================

A first row is a header when it has no number or when it names a word column (``Word 1``,
``term1`` ...). A ``#`` comment that is the file's first line, just before the first row, is
the header when it names word columns (TR9856's ``#term1``). A header must name the two word
columns and a score column: any other first line without numbers is an error, and a file whose
scores are all equal is refused, never read into an undefined correlation. With ``format="auto"`` a header row picks the format by its column names
(SimLex999, AVG_SCORE or avg, term1/term2, Human (mean)); headerless files are SimVerb when
they have four or five fields with a POS in the third, MEN lemma form when every word ends in
``-n/-v/-j`` (also under a ``word1 word2 score`` header, as in the simcross copies), plain
otherwise.

Files as distributed are read exactly: the delimiter is detected on the data rows, so a header
may use another one (simcross: a space-separated header over TAB-separated rows); a Unicode
space inside a field (a no-break space in the Italian HyperLex files) is a plain space, as in
``lexgold ratings import`` (:func:`lexgold.tables.normalise_spaces`), and what was changed is
listed in ``attrs['notes']``. Files that are not pair lists are refused, saying what they look
like: a matrix of numbers (gensim's ``similarities0-1.txt``) or word vectors.

Language prefixes (:func:`strip_language_prefixes`): the cross-lingual HyperLex files (Vulic et
al. 2019) write every word with its language, ``en_dog de_tier``. The prefix is stripped, the
languages kept in ``lang1, lang2``, when every word of both columns starts with two or three
lower-case letters and ``_`` and the file uses at most two such prefixes (detected;
``strip_language_prefix=True`` requires it, ``False`` keeps the words as written).

Pairs listed twice (:func:`handle_duplicates`): the same ``word1, word2`` (as written, in that
order) on several rows is warned about (:class:`DuplicatePairWarning`: how many, the first
line) and handled by the ``duplicates`` policy: ``"first"`` keeps the first row, ``"mean"``
one row with the mean score (other columns from the first), ``"error"`` stops naming the
line. A published SimVerb-3500 copy with a repeated line is otherwise scored as 3,001 pairs.
"""

from __future__ import annotations

import csv
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from lexgold.compression import read_input_text
from lexgold.errors import InputError
from lexgold.evaluate.multisimlex import is_multisimlex, multisimlex_pairs
from lexgold.evaluate.vectors import check_choice
from lexgold.tables import has_unicode_space, normalise_spaces

GOLD_FORMATS = ("auto", "simlex", "hyperlex", "tr9856", "ws353", "simverb", "men", "rg65",
                "multisimlex", "plain")
#: how a pair listed twice is handled (:func:`handle_duplicates`)
DUPLICATE_POLICIES = ("first", "mean", "error")
_LANGUAGE_PREFIX = r"^([a-z]{2,3})_(.+)$"


class DuplicatePairWarning(UserWarning):
    """A gold file lists a pair more than once."""

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
_BLANKS = re.compile(r"[ \t]+")


def _normalise(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def read_gold(path, format: str = "auto", language: str | None = None, *,
              strip_language_prefix: bool | None = None,
              duplicates: str = "first", alternatives: str = "first",
              score_column: str | None = None) -> pd.DataFrame:
    """Read a gold standard into ``word1, word2, score`` (+ optional columns, see module doc).

    Parameters
    ----------
    path : str or Path
    format : str
        One of ``GOLD_FORMATS``; 'auto' detects it.
    language : str, optional
        Multi-SimLex only: the language whose pairs are read (ISO code or name, see
        :data:`lexgold.evaluate.multisimlex.LANGUAGES`); default English.
    strip_language_prefix : bool, optional
        ``en_dog`` -> ``dog`` (module doc): None when detected, True always (an error when a
        word has none), False never.
    duplicates : str
        A pair listed twice: ``first``, ``mean`` or ``error`` (:func:`handle_duplicates`).
    alternatives : str
        Multi-SimLex only: a word given as ``x/y``, ``first``, ``each`` or ``skip``
        (:mod:`lexgold.evaluate.multisimlex`).
    score_column : str, optional
        The header's column read as the score instead of the layout's (``--gold-column``):
        ``human_score``, the human-only mean a machine-prior release keeps beside its score
        (docs/evaluate.md). Matched as the header names are (case, spaces and punctuation
        ignored); a file without a header, or Multi-SimLex, cannot name one.

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
    check_choice("duplicates", duplicates, DUPLICATE_POLICIES)
    path = Path(path)
    first_fields, rows, notes = split_rows(path)
    header = None
    if first_fields is not None:
        header = [_normalise(f) for f in first_fields]
        if format in ("auto", "multisimlex") and is_multisimlex(first_fields):
            if score_column is not None:
                raise InputError("Multi-SimLex has one score column per language: give "
                                 "--language, not a score column", path=path,
                                 field="--gold-column")
            frame = multisimlex_pairs(first_fields, rows, language, path, alternatives)
            frame.attrs.update(format="multisimlex", notes=notes + frame.attrs["notes"])
            return frame
    if format == "multisimlex":
        raise InputError("not Multi-SimLex as Concepticon distributes it: the header needs "
                         "SIMLEX_IDS and ENGLISH_IN_SOURCE", path=path, line=rows[0][0])
    if language is not None:
        raise InputError("--language applies to Multi-SimLex files only", path=path,
                         field="--language")
    _check_pair_list(path, rows)
    if format == "auto":
        format = _detect(header, rows)
    if score_column is not None and (header is None or format == "simverb"):
        raise InputError(f"no header to name the column {score_column!r} in (read as {format})",
                         path=path, field="--gold-column")
    frame = _frame(path, header, rows, format, score_column, first_fields)
    frame, stripped = strip_language_prefixes(frame, strip_language_prefix, path)
    notes = notes + ([stripped] if stripped else [])
    frame = handle_duplicates(frame, duplicates, path).drop(columns="line")
    if len(frame) > 1 and frame["score"].nunique() < 2:
        raise InputError(f"every score is {frame['score'].iloc[0]:g}: nothing to correlate "
                         f"(read as {format}; is line 1 a header of another layout? "
                         f"name it with --gold-format)", path=path, field="score")
    frame.attrs["format"] = format
    frame.attrs["notes"] = notes
    return frame


def strip_language_prefixes(frame: pd.DataFrame, strip: bool | None = None, path=None,
                            columns=("word1", "word2")) -> tuple[pd.DataFrame, str | None]:
    """Words without their language prefix (``en_dog`` -> ``dog``), as the module doc says.

    Returns the frame (``lang1, lang2`` added when stripped) and a note saying what was
    stripped, or None.

    Examples
    --------
    >>> frame = pd.DataFrame({"word1": ["en_dog", "en_car"], "word2": ["de_tier", "de_auto"]})
    >>> out, note = strip_language_prefixes(frame)
    >>> out[["word1", "word2", "lang1", "lang2"]].values.tolist(), note
    ([['dog', 'tier', 'en', 'de'], ['car', 'auto', 'en', 'de']], 'language prefixes en_, de_ stripped from 4 words (kept in lang1, lang2)')
    >>> strip_language_prefixes(pd.DataFrame({"word1": ["to_go"], "word2": ["run"]}))[1] is None
    True
    """
    first, second = columns
    if strip is False or frame.empty:
        return frame, None
    parts = [frame[column].astype(str).str.extract(_LANGUAGE_PREFIX) for column in columns]
    prefixed = ~(parts[0][0].isna() | parts[1][0].isna())
    prefixes = pd.unique(pd.concat([parts[0][0], parts[1][0]]).dropna())
    if not prefixed.all() or len(prefixes) > 2:
        if strip:
            bad = int(np.flatnonzero(~prefixed.to_numpy())[0]) if not prefixed.all() else 0
            why = ("has no language prefix (xx_)" if not prefixed.all()
                   else f"the file uses {len(prefixes)} prefixes ({', '.join(prefixes[:4])}), "
                        "a cross-lingual set two")
            line = frame["line"].iloc[bad] if "line" in frame.columns else None
            raise InputError(f"--strip-language-prefix: {frame[first].iloc[bad]!r} / "
                             f"{frame[second].iloc[bad]!r} {why}", path=path, line=line)
        return frame, None
    out = frame.copy()
    out[first], out[second] = parts[0][1].to_numpy(), parts[1][1].to_numpy()
    out["lang1"], out["lang2"] = parts[0][0].to_numpy(), parts[1][0].to_numpy()
    shown = ", ".join(f"{p}_" for p in prefixes)
    return out, f"language prefixes {shown} stripped from {2 * len(out)} words (kept in " \
                f"lang1, lang2)"


def handle_duplicates(frame: pd.DataFrame, policy: str = "first", path=None) -> pd.DataFrame:
    """Pairs listed more than once (same ``word1, word2``), warned and handled by ``policy``.

    ``first`` keeps each pair's first row, ``mean`` its first row with the mean score of all
    its rows, ``error`` raises :class:`InputError` naming the first repeated line. The warning
    (:class:`DuplicatePairWarning`) gives how many rows repeat an earlier pair and the first
    such line. A ``line`` column (file line numbers), when present, is used for the lines.

    Examples
    --------
    >>> frame = pd.DataFrame({"word1": ["a", "c", "a"], "word2": ["b", "d", "b"],
    ...                       "score": [1.0, 5.0, 2.0]})
    >>> import warnings
    >>> with warnings.catch_warnings(record=True):
    ...     handle_duplicates(frame, "mean")["score"].tolist()
    [1.5, 5.0]
    """
    check_choice("duplicates", policy, DUPLICATE_POLICIES)
    key = ["word1", "word2"]
    repeated = frame.duplicated(key, keep="first").to_numpy()
    if not repeated.any():
        return frame
    at = int(np.flatnonzero(repeated)[0])
    line = frame["line"].iloc[at] if "line" in frame.columns else None
    pair = f"{frame['word1'].iloc[at]!r} / {frame['word2'].iloc[at]!r}"
    where = f"line {line}" if line is not None else f"row {at + 1}"
    count = int(repeated.sum())
    if policy == "error":
        raise InputError(f"pair {pair} listed again ({count} repeated "
                         f"row{'s' if count > 1 else ''}; --duplicates first or mean reads "
                         f"them)", path=path, line=line)
    kept = {"first": "the first row of each kept", "mean": "one row per pair with the mean "
            "score kept"}[policy]
    rows = f"{count} row{'s repeat' if count > 1 else ' repeats'}"
    warnings.warn(f"{path}: {rows} an earlier pair (the first: {where}, {pair}); {kept} "
                  f"(--duplicates {policy})",
                  DuplicatePairWarning, stacklevel=2)
    out = frame.loc[~repeated].copy()
    if policy == "mean":
        means = frame.groupby(key, sort=False)["score"].mean()
        out["score"] = means.loc[list(zip(out["word1"], out["word2"]))].to_numpy()
    return out.reset_index(drop=True)


def _check_pair_list(path: Path, rows) -> None:
    """Refuse files that are not lists of word pairs, saying what they look like: a matrix of
    numbers (gensim's ``similarities0-1.txt``) or word vectors (a word, then numbers)."""
    sample = [fields for _, fields in rows[:50]]
    numeric = [sum(_is_number(f) for f in fields) for fields in sample]
    widths = sorted({len(fields) for fields in sample})
    if all(n == len(fields) for n, fields in zip(numeric, sample)):
        shape = f"{len(rows)} rows of {'/'.join(map(str, widths))} numbers"
        raise InputError(f"not a list of word pairs: every field is a number ({shape}; a "
                         "similarity matrix?); a gold standard has two words and a score per "
                         "row", path=path, line=rows[0][0])
    if min(widths) > 10 and all(n == len(fields) - 1 and not _is_number(fields[0])
                                for n, fields in zip(numeric, sample)):
        raise InputError(f"not a list of word pairs: a word then {min(widths) - 1} numbers per "
                         "row (word vectors? pass them as --vectors); a gold standard has two "
                         "words and a score per row", path=path, line=rows[0][0])


def split_rows(path: Path) -> tuple[list[str] | None, list[tuple[int, list[str]]], list[str]]:
    """The header fields as written (None without a header), the data rows as (line number,
    fields) and what was normalised: a pair file split as the gold readers split it (module
    doc), shared with :func:`lexgold.pairfiles.read_pair_table`."""
    rows, notes = _data_rows(path)
    if not rows:
        raise InputError("no word pairs found", path=path)
    first_fields = rows[0][1]
    if any(_is_number(f) for f in first_fields) and not _is_header(first_fields):
        return None, rows, notes
    if len(rows) == 1:
        raise InputError("no word pairs found after the header", path=path)
    return first_fields, rows[1:], notes


def _is_header(fields: list[str]) -> bool:
    """A row naming a word column first (``Word 1``, ``term1``, ``#term1``): a header."""
    return bool(fields) and _normalise(fields[0]) in _WORD_HEADERS


def _data_rows(path: Path) -> tuple[list[tuple[int, list[str]]], list[str]]:
    """(line number, fields) of the non-comment lines, split on the detected delimiter; a
    first-line comment just before them too when it is a header (``#term1 term2``); and what
    was normalised.

    The delimiter is detected on the data rows: a header may use its own (the simcross copies
    put ``word1 word2 score`` over TAB-separated rows). Unicode spaces (a no-break space ...,
    :data:`lexgold.tables.UNICODE_SPACES`) inside a field become plain spaces, as in
    ``lexgold ratings import``; in a file delimited by blanks they separate fields only where
    the row would otherwise have too few fields.
    """
    text = read_input_text(path)
    lines = [(n, line.rstrip("\r\n")) for n, line in enumerate(text.splitlines(), start=1)]
    lines = [(n, line) for n, line in lines if line.strip()]
    first = next((i for i, (_, line) in enumerate(lines)
                  if not line.lstrip().startswith("#")), None)
    header = None
    if first == 1:                        # the file's only comment, just before the data
        number, line = lines[0]
        candidate = line.lstrip()[1:]
        if _is_header(_split(candidate, _delimiter(candidate), None)):
            header = (number, candidate)
    lines = [(n, line) for n, line in lines if not line.lstrip().startswith("#")]
    if header is not None:
        lines.insert(0, header)
    if not lines:
        return [], []
    delimiter = _delimiter(lines[1][1] if len(lines) > 1 else lines[0][1])
    head_delimiter = _delimiter(lines[0][1])
    if head_delimiter != delimiter and _is_header(_split(lines[0][1], head_delimiter, None)):
        delimiter_of = {lines[0][0]: head_delimiter}          # a header with its own delimiter
    else:
        delimiter_of = {}
    width = len(_split(lines[0][1], delimiter_of.get(lines[0][0], delimiter), None))
    rows, spaced = [], []
    for number, line in lines:
        raw = _split(line, delimiter_of.get(number, delimiter), width, path, number)
        fields = [normalise_spaces(f) for f in raw]
        spaced += [(number, f) for f, r in zip(fields, raw) if has_unicode_space(r)]
        rows.append((number, fields))
    notes = []
    if spaced:
        shown = ", ".join(f"line {n} {f!r}" for n, f in spaced[:3])
        notes.append(f"Unicode spaces (no-break space ...) in {len(spaced)} "
                     f"field{'s' if len(spaced) > 1 else ''} read as plain spaces ({shown})")
    return rows, notes


def _delimiter(line: str) -> str | None:
    return next((d for d in ("\t", ";", ",") if d in line), None)


def _split(line: str, delimiter: str | None, width: int | None, path=None,
           number: int = 0) -> list[str]:
    """Fields of one line; with no delimiter, split on ASCII blanks, and on Unicode spaces
    too only when that gives the ``width`` fields the ASCII split misses."""
    if delimiter is None:
        fields = _BLANKS.split(line.strip(" \t"))
        if width is not None and len(fields) < width:
            unicode_split = line.split()
            if len(unicode_split) == width:
                return unicode_split
        return fields
    try:
        return next(csv.reader([line], delimiter=delimiter))
    except csv.Error as err:          # a field over the csv module's limit (128 KiB)
        raise InputError(f"not a gold standard row: {err}", path=path, line=number) from None


def _is_number(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


def _detect(header, rows) -> str:
    men = all(_MEN_LEMMA.match(f[0]) and _MEN_LEMMA.match(f[1]) for _, f in rows[:50])
    if header is not None:
        for name, fmt in _FORMAT_BY_HEADER:
            if name in header:
                return fmt
        return "men" if men else "plain"        # simcross's MEN copies: word1 word2 score
    fields = rows[0][1]
    if len(fields) in (4, 5) and fields[2].upper() in {"N", "V", "A"} and _is_number(fields[3]):
        return "simverb"
    return "men" if men else "plain"


def _frame(path: Path, header, rows, format: str, score_column: str | None = None,
           names=None) -> pd.DataFrame:
    if format == "simverb":
        positions = {"word1": 0, "word2": 1, "pos": 2, "score": 3, "relation": 4}
    elif header is not None:
        positions = {}
        for i, name in enumerate(header):
            column = _HEADER_NAMES.get(name)
            if column and column not in positions:
                positions[column] = i
        if score_column is not None:
            if _normalise(score_column) not in header:
                raise InputError(f"no column {score_column!r} (columns: {', '.join(names)})",
                                 path=path, line=1, field="--gold-column")
            positions["score"] = header.index(_normalise(score_column))
        missing = [c for c in ("word1", "word2", "score") if c not in positions]
        if missing:
            raise InputError(f"header has no column for {', '.join(missing)} "
                             f"(found: {', '.join(header)})", path=path, line=1)
    else:
        positions = {"word1": 0, "word2": 1, "score": 2}
    optional = {"relation"} if format == "simverb" else set()
    width = max(i for column, i in positions.items() if column not in optional) + 1
    records, lines = [], []
    for number, fields in rows:
        lines.append(number)
        if len(fields) < width:
            raise InputError(f"expected at least {width} fields, found {len(fields)}",
                             path=path, line=number)
        record = {column: fields[i] if i < len(fields) else None     # optional, missing
                  for column, i in positions.items()}
        if not _is_number(record["score"]):
            raise InputError(f"score {record['score']!r} is not a number", path=path,
                             line=number, field="score")
        if not np.isfinite(float(record["score"])):
            raise InputError(f"score {record['score']!r} is not a finite number", path=path,
                             line=number, field="score")
        records.append(record)
    frame = pd.DataFrame.from_records(records, columns=list(positions)).assign(line=lines)
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
