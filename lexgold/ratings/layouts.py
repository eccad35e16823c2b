"""Readers of raw ratings in the layouts their authors distributed, into the long format.

==============  ===============================================================================
layout          file
==============  ===============================================================================
``wide``        one column per rater: WordSim-353 ``set1.csv``/``set2.csv`` (and ``.tab``),
                header ``Word 1,Word 2,Human (mean),1,2,...``; the mean column is not a rater.
                Rater ids ``<file stem>:<column>``, tranche = file stem. The Danish
                similarity dataset's ``all_sims_da.csv`` has this layout too (``word1 word2
                similarity r1 ... r38``, one column per judge, ``nan`` where a judge gave none):
                a column named ``similarity``, ``score`` or ``average`` is the published
                score, not a rater.
``per-rater``   one file per rater, no header, ``word1 TAB word2 TAB rating`` (MEN's agreement
                files, e.g. ``elias-men-ratings.txt``; simcross's copies put a header
                ``word1 word2 score`` over them). Rater id = file stem; the files of one
                import form one tranche.
``anonymous``   ratings without rater identity: SimVerb-3500 ``SimVerb-3500-ratings.txt``,
                header ``word1 word2 r1 ... r10``, rows of any number of ratings. The columns
                are not annotators, so every rating gets its own rater id starting with ``?``
                (:data:`lexgold.ratings.ANONYMOUS`): means, SDs and split-half on random
                halves are defined, per-rater statistics are refused. Without a header (Rare
                Words' ``rw.txt``: ``word1 word2 mean r1 ... r10``) the first number is the
                published mean, not a rating.
``hyperlex``    HyperLex's release ``hyperlex-all.txt`` (and lexgold's own): ``WORD1 WORD2 POS
                TYPE AVG_SCORE AVG_SCORE_0_10 STD SCORES..``, the trailing ratings read as
                ratings without rater identity, POS and TYPE kept as ``pos`` and
                ``relation`` (:mod:`lexgold.ratings.released`).
``long``        lexgold's own long CSV (``docs/process.md``).
``potato``      Potato-style exports: one JSON object per annotation and line (or a JSON list).
==============  ===============================================================================

Card-660's two line-aligned files (``dataset.tsv``: ``word1 TAB word2 TAB gold``; ``scores.tsv``:
one column per annotator, no header) are read together by :func:`read_aligned`.

Other released files (scores, not ratings: TR9856's ``TermRelatednessResults``, SimLex-999.txt)
are recognised from their header and refused with a message saying what they are
(:func:`lexgold.ratings.detect.detect_layout` recognises each file's layout).

Hand-made files are read as they are: stray blanks around values (Unicode spaces too, as
:func:`lexgold.tables.normalise_spaces` does for every reader),
trailing delimiters, CRLF line ends and blank lines are normalised and counted in
:attr:`Imported.notes`; a pair listed twice in one file is kept as two listings, the later ones
with ``kind = duplicate`` (a rater's answers to one pair are averaged by ``lexgold process``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd

from lexgold.cliutil import plural
from lexgold.compression import check_regular
from lexgold.errors import InputError
from lexgold.ratings import ANONYMOUS, LAYOUTS
from lexgold.ratings.detect import WORD_COLUMNS, guess_delimiter
from lexgold.ratings.lines import (Cleaner, Imported, column_name, printed_decimals, read_lines,
                                   read_rating, read_words, records_frame, to_number)
from lexgold.ratings.long import read_long
from lexgold.ratings.released import read_hyperlex


#: names (after :func:`column_name`) of a wide file's published score column, besides any
#: holding ``mean``
PUBLISHED = ("similarity", "score", "average")

def read_layout(path: str | Path, layout: str, *, tranche: str | None = None) -> Imported:
    """Read one file of ``layout`` into long-format rows (``tranche`` only for per-rater).

    The long layout is read and checked by :func:`lexgold.ratings.long.read_long`."""
    path = Path(path)
    if not path.exists():
        raise InputError("file not found", path=path)
    check_regular(path)
    if layout not in LAYOUTS:
        raise InputError(f"expected one of {', '.join(LAYOUTS)}, found {layout!r}",
                         field="layout")

    reader = {"wide": _wide, "per-rater": _per_rater, "anonymous": _anonymous,
              "hyperlex": read_hyperlex, "long": read_long, "potato": _potato}[layout]
    imported = reader(path, tranche) if layout == "per-rater" else reader(path)
    imported.notes = _repeats(imported.frame, layout) + imported.notes
    return imported


# -- the layouts -------------------------------------------------------------------------------

def _wide(path: Path) -> Imported:
    """WordSim-353 set1/set2: ``Word 1,Word 2,Human (mean),1,...,13`` (comma or TAB)."""
    cleaner = Cleaner()
    lines, delimiter, header = _headed(path, cleaner, "'Word 1, Word 2, ...'", shown=2)
    names = [column_name(h) for h in header]
    mean_at = next((i for i, n in enumerate(names) if "mean" in n or n in PUBLISHED), None)
    raters = [i for i in range(2, len(header)) if i != mean_at]
    if not raters:
        raise InputError("no rater columns after the word columns", path=path, line=lines[0][0])
    stem, records, means, missing = path.stem, [], [], 0
    for number, line in lines[1:]:
        fields = cleaner.fields(line, delimiter, width=len(header))
        if len(fields) != len(header):
            raise InputError(f"expected {len(header)} fields as in the header, found "
                             f"{len(fields)}", path=path, line=number)
        word1, word2 = read_words(fields, path, number)
        row = []
        for i in raters:
            if fields[i] == "" or fields[i].lower() == "nan":
                missing += fields[i] != ""
                continue                          # this rater did not rate the pair
            value = read_rating(fields[i], path, number, header[i])
            row.append(value)
            records.append((f"{stem}:{header[i]}", stem, word1, word2, value, number, header[i]))
        if mean_at is not None and row:
            published = read_rating(fields[mean_at], path, number, header[mean_at])
            means.append((published, float(np.mean(row)), printed_decimals(fields[mean_at])))
    frame = records_frame(records)
    notes = cleaner.notes() + ([f"{plural(missing, 'cell')} 'nan': not rated"] if missing else [])
    if means:
        same = sum(abs(p - m) <= 0.5 * 10 ** -d + 1e-9 for p, m, d in means)
        notes.append(f"'{header[mean_at]}' is not a rater; it equals the mean of the rater "
                     f"columns on {same} of {len(means)} rows (to its printed decimals)")
    return Imported(path, "wide", frame, notes)


def read_aligned(pairs: str | Path, scores: str | Path, *, tranche: str | None = None
                 ) -> Imported:
    """Card-660 (Pilehvar et al. 2018, the package's README): ``pairs`` lists ``word1 TAB word2
    TAB gold`` and ``scores`` the annotators' ratings of the same line, one column per annotator
    (no headers). Rater ids ``<tranche>:<column>`` (tranche default: the stem of ``pairs``); the
    gold column is kept in :attr:`Imported.published`."""
    pairs, scores = Path(pairs), Path(scores)
    for path in (pairs, scores):
        if not path.exists():
            raise InputError("file not found", path=path)
        check_regular(path)
    cleaner = Cleaner()
    words, ratings = read_lines(pairs, cleaner), read_lines(scores, cleaner)
    if len(words) != len(ratings):
        raise InputError(f"{len(words)} pairs but {len(ratings)} rows of ratings in {scores}: "
                         f"the files must be line-aligned", path=pairs)
    tranche = tranche or pairs.stem
    records, published, width = [], [], None
    for (number, pair_line), (_, rating_line) in zip(words, ratings):
        fields = cleaner.fields(pair_line, guess_delimiter(pair_line), width=3)
        if len(fields) != 3:
            raise InputError(f"expected 3 fields (word1, word2, gold), found {len(fields)}",
                             path=pairs, line=number)
        word1, word2 = read_words(fields, pairs, number)
        values = cleaner.fields(rating_line, guess_delimiter(rating_line))
        if width is None:
            width = len(values)
        if len(values) != width:
            raise InputError(f"expected {width} ratings as on line 1, found {len(values)}",
                             path=scores, line=number)
        for k, text in enumerate(values, start=1):
            value = read_rating(text, scores, number, str(k))
            records.append((f"{tranche}:{k}", tranche, word1, word2, value, number, str(k)))
        published.append((number, read_rating(fields[2], pairs, number, "gold"),
                          printed_decimals(fields[2])))
    return Imported(pairs, "aligned", records_frame(records), cleaner.notes(), published)


def _per_rater(path: Path, tranche: str | None) -> Imported:
    """MEN agreement files: ``word1 TAB word2 TAB rating``, no header, one rater per file."""
    cleaner = Cleaner()
    records = []
    lines = read_lines(path, cleaner)
    if lines and tuple(column_name(f) for f in Cleaner().fields(
            lines[0][1], guess_delimiter(lines[0][1]))[:2]) in WORD_COLUMNS:
        lines = lines[1:]                   # simcross's copies: a header 'word1 word2 score'
    for number, line in lines:
        fields = cleaner.fields(line, guess_delimiter(line), width=3)
        if len(fields) != 3:
            raise InputError(f"expected 3 fields (word1, word2, rating), found {len(fields)}",
                             path=path, line=number)
        word1, word2 = read_words(fields, path, number)
        value = read_rating(fields[2], path, number, "rating")
        records.append((path.stem, tranche or "1", word1, word2, value, number, "rating"))
    return Imported(path, "per-rater", records_frame(records), cleaner.notes())


def _anonymous(path: Path) -> Imported:
    """SimVerb-3500 ratings: ``word1 word2 r1 ... r10``; the columns are not annotators.
    Without a header (Rare Words' ``rw.txt``: ``word1 TAB word2 TAB mean TAB r1 ... r10``) the
    first number is the published score, not a rating (kept in :attr:`Imported.published`)."""
    cleaner = Cleaner()
    first = read_lines(path, Cleaner())
    headerless = bool(first) and tuple(column_name(f) for f in Cleaner().fields(
        first[0][1], guess_delimiter(first[0][1]))[:2]) not in WORD_COLUMNS
    if headerless:
        lines = [(0, "")] + read_lines(path, cleaner)
        delimiter, header, skip = guess_delimiter(lines[1][1]), ["word1", "word2", "mean"], 1
    else:
        lines, delimiter, header = _headed(path, cleaner, "'word1 word2 r1 ...'", shown=3)
        skip = 0
    records, published = [], []
    for number, line in lines[1:]:
        fields = cleaner.fields(line, delimiter)
        if len(fields) < 3 + skip:
            raise InputError(f"expected word1, word2{', the mean' if skip else ''} and at "
                             f"least one rating, found {len(fields)} fields", path=path,
                             line=number)
        word1, word2 = read_words(fields, path, number)
        row = []
        for k, text in enumerate(fields[2 + skip:], start=1):
            column = header[k + 1] if k + 1 < len(header) else f"rating {k}"
            if text == "":
                continue
            value = read_rating(text, path, number, column)
            row.append(value)
            records.append((f"{ANONYMOUS}{path.stem}:{number}:{k}", path.stem, word1, word2,
                            value, number, column))
        if skip and row:
            published.append((number, read_rating(fields[2], path, number, "mean"),
                              printed_decimals(fields[2])))
    notes = cleaner.notes() + ["the rating columns are not annotators: kept as anonymous "
                               "ratings (rater ids '?...'); per-rater statistics are undefined"]
    return Imported(path, "anonymous", records_frame(records), notes, published)


#: keys of a Potato-style annotation object, first found wins
_POTATO_RATER = ("rater_id", "user_id", "user", "annotator", "annotator_id", "worker_id")


def _potato(path: Path) -> Imported:
    """One JSON object per annotation: a rater key (``user_id``, ``annotator``, ...; for
    Potato's ``annotation_output/<user>/annotated_instances.jsonl`` the folder name), the
    words (``word1``/``word2``, top level or in ``instance``) and a number (``rating``, or the
    one number inside ``label_annotations``); optional ``tranche``."""
    cleaner = Cleaner()
    lines = read_lines(path, cleaner)
    text = "\n".join(line for _, line in lines).strip()
    if text.startswith("["):
        try:
            objects = [(lines[0][0], o) for o in json.loads(text)]
        except json.JSONDecodeError as err:
            raise InputError(f"not valid JSON: {err.msg}", path=path, line=err.lineno) from None
    else:
        objects = []
        for number, line in lines:
            try:
                objects.append((number, json.loads(line)))
            except json.JSONDecodeError as err:
                raise InputError(f"not a JSON object: {err.msg}", path=path,
                                 line=number) from None
    records = []
    for number, obj in objects:
        if not isinstance(obj, dict):
            raise InputError("expected a JSON object", path=path, line=number)
        rater = next((obj[k] for k in _POTATO_RATER if obj.get(k) not in (None, "")), None)
        if rater is None and path.name == "annotated_instances.jsonl":
            rater = path.parent.name          # Potato: annotation_output/<user>/annotated_...
        if rater is None:
            raise InputError(f"no rater key (one of {', '.join(_POTATO_RATER)})", path=path,
                             line=number)
        where = obj.get("instance") if isinstance(obj.get("instance"), dict) else obj
        words = next(((where[a], where[b]) for a, b in WORD_COLUMNS
                      if a in where and b in where), None)
        if words is None:
            raise InputError("no word1/word2 keys", path=path, line=number)
        value = obj.get("rating")
        if value is None:
            found = _numbers(obj.get("label_annotations"))
            if len(found) != 1:
                raise InputError(f"expected 'rating' or one number in label_annotations, "
                                 f"found {len(found)}", path=path, line=number)
            value = found[0]
        word1, word2 = read_words([cleaner.field(str(w)) for w in words], path, number)
        records.append((cleaner.field(str(rater)), str(obj.get("tranche", path.stem)), word1,
                        word2, read_rating(str(value), path, number, "rating"), number, "rating"))
    return Imported(path, "potato", records_frame(records), cleaner.notes())


# -- helpers -----------------------------------------------------------------------------------

def _headed(path: Path, cleaner: Cleaner, expected: str,
            shown: int) -> tuple[list[tuple[int, str]], str, list[str]]:
    """The non-blank lines, the delimiter and the header fields of a file whose header names
    the two word columns first (else an error quoting ``expected`` and ``shown`` fields)."""
    lines = read_lines(path, cleaner)
    if not lines:
        raise InputError("empty file: no ratings", path=path)
    delimiter = guess_delimiter(lines[0][1])
    header = cleaner.fields(lines[0][1], delimiter)
    if tuple(column_name(h) for h in header[:2]) not in WORD_COLUMNS:
        raise InputError(f"expected a header {expected}, found {header[:shown]}",
                         path=path, line=lines[0][0])
    return lines, delimiter, header


def _numbers(value) -> list[float]:
    if isinstance(value, dict):
        return [n for v in value.values() for n in _numbers(v)]
    if isinstance(value, list):
        return [n for v in value for n in _numbers(v)]
    number = to_number(str(value)) if value is not None and not isinstance(value, bool) else None
    return [] if number is None else [number]


def _repeats(frame: pd.DataFrame, layout: str) -> list[str]:
    """Mark a rater's later answers to a pair listed twice in one file ``kind = duplicate``.

    For anonymous ratings a pair's later listing (line) is the duplicate. lexgold's long CSV
    is left as it is (its kinds say what a repeat is).
    """
    if frame.empty or layout == "long":
        return []
    if layout in ("anonymous", "hyperlex"):
        listing = frame.drop_duplicates(["_line"])
        later_lines = listing.loc[listing.duplicated(["word1", "word2"]), "_line"]
        later = frame["_line"].isin(later_lines).to_numpy()
    else:
        later = frame.duplicated(["rater_id", "word1", "word2"]).to_numpy()
    if not later.any():
        return []
    frame.loc[later, "kind"] = "duplicate"
    shown = frame[later].drop_duplicates(["word1", "word2"])
    examples = ", ".join(f"{w1}-{w2} (line {n})" for w1, w2, n in shown[
        ["word1", "word2", "_line"]].head(3).itertuples(index=False))
    return [f"{plural(len(shown), 'pair')} listed twice ({examples}): both listings kept, "
            f"the later as kind=duplicate"]


def common_tranche(paths: list[Path]) -> str:
    """The default tranche of per-rater files: their stems' common prefix, else ``1``."""
    prefix = os.path.commonprefix([p.stem for p in paths]).rstrip("-_. ")
    return prefix if prefix and len(paths) > 1 else "1"
