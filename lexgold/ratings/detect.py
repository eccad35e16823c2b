"""Which published layout a raw-ratings file is in, recognised from its first line.

The layouts are those of :mod:`lexgold.ratings.layouts` (its module table); released files of
scores, not ratings (TR9856's ``TermRelatednessResults``, SimLex-999.txt), are recognised from
their header and refused with a message saying what they are. Here, below the long-format
reader (:mod:`lexgold.ratings.long`), so that it can tell a published layout handed to it how
to convert the file.
"""

from __future__ import annotations

import re
from pathlib import Path

from lexgold.errors import InputError
from lexgold.ratings import LAYOUTS
from lexgold.ratings.lines import Cleaner, column_name, file_head, read_lines, to_number
from lexgold.ratings.released import fraction_scores, is_hyperlex, released_scores

#: how a summary names each layout
LABELS = {"wide": "one column per rater", "per-rater": "one file per rater",
          "anonymous": "ratings without rater identity",
          "hyperlex": "HyperLex release, ratings without rater identity",
          "long": "lexgold long CSV", "potato": "Potato JSON annotations"}

#: the names of the two word columns (after :func:`column_name`), in headers and JSON keys
WORD_COLUMNS = (("word1", "word2"), ("term1", "term2"))


def detect_layout(path: Path) -> str:
    """The layout of ``path`` recognised from its first line (see the module table)."""

    cleaner = Cleaner()
    try:
        lines = read_lines(path, cleaner, head=True)
    except InputError as err:             # TR9856's CSV is Latin-1: say what it is all the same
        if "not UTF-8" not in str(err):
            raise
        first = file_head(path).split(b"\n", 1)[0].decode("latin-1").strip()
        released = released_scores([column_name(f)
                                    for f in cleaner.fields(first, guess_delimiter(first))],
                                   WORD_COLUMNS)
        if released:
            raise InputError(released, path=path, line=1) from None
        raise
    if not lines:
        raise InputError("empty file: no ratings", path=path)
    first = lines[0][1].lstrip("\ufeff \t")
    if first.startswith("{") or first.startswith("["):
        return "potato"
    fields = cleaner.fields(first, guess_delimiter(first))
    names = [column_name(f) for f in fields]
    if {"raterid", "rating"} <= set(names):
        return "long"
    if is_hyperlex([column_name(f) for f in first.split()]):
        return "hyperlex"
    released = released_scores(names, WORD_COLUMNS)
    if released:
        raise InputError(released, path=path, line=lines[0][0])
    if len(names) >= 3 and tuple(names[:2]) in WORD_COLUMNS:
        rest = names[2:]
        if rest and all(re.fullmatch(r"r\d+", n) for n in rest):
            return "anonymous"
        if rest == ["rating"]:                  # one rater's file with a header
            return "per-rater"
        return "wide"
    if len(fields) > 3 and all(to_number(f) is not None for f in fields[2:]):
        return "anonymous"                       # Rare Words' rw.txt: mean, then ratings
    if len(fields) >= 3 and to_number(fields[2]) is not None:
        looks = fraction_scores([cleaner.fields(line, guess_delimiter(line)) for _, line in lines])
        if looks:
            raise InputError(looks, path=path, line=lines[0][0])
        return "per-rater"
    raise InputError(f"cannot recognise the layout from line 1 ({lines[0][1][:60]!r}); "
                     f"name it with --layout ({', '.join(LAYOUTS)})", path=path, line=lines[0][0])


def guess_delimiter(line: str) -> str | None:
    """A line's field delimiter: TAB if it has one, else comma, else None (blanks)."""
    return "\t" if "\t" in line else "," if "," in line else None
