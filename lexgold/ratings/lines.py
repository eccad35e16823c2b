"""Lines and fields of a hand-made ratings file, read as they are (the readers of
:mod:`lexgold.ratings.layouts` and :mod:`lexgold.ratings.released` share them).

Stray blanks around values (Unicode spaces too, as :func:`lexgold.tables.normalise_spaces`
does for every reader), trailing delimiters, CRLF line ends and blank lines are normalised and
counted by :class:`Cleaner`, whose notes go to :attr:`Imported.notes`.
"""

from __future__ import annotations

import csv
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from lexgold.cliutil import plural
from lexgold.compression import open_input, read_input_bytes
from lexgold.errors import InputError
from lexgold.tables import has_unicode_space, normal_word, normalise_spaces, word_problem


@dataclass
class Imported:
    """One file read: its long-format rows and what was done to read it."""
    path: Path
    layout: str
    #: long-format rows plus ``_line`` (source line) and ``_field`` (source column)
    frame: pd.DataFrame
    #: what was normalised, one phrase each ("CRLF line ends on 154 lines")
    notes: list[str] = field(default_factory=list)
    #: a published score column beside the ratings (rw.txt's field 3): ``(line, score,
    #: decimals printed)`` per row; the importer says which rule of ``[process] aggregate``
    #: reproduces it
    published: list[tuple[int, float, int]] = field(default_factory=list)


class Cleaner:
    """Splits lines into clean fields and counts every normalisation it makes."""

    def __init__(self):
        self.counts = Counter()

    def field(self, text: str) -> str:
        nbsp = has_unicode_space(text)
        stripped = normalise_spaces(text)
        if nbsp:
            self.counts["nbsp"] += 1
        elif stripped != text:
            self.counts["blanks"] += 1
        return stripped

    def fields(self, line: str, delimiter: str | None, width: int | None = None) -> list[str]:
        if delimiter is None:
            raw = line.replace("\xa0", " ").split()
        elif delimiter == ",":
            raw = next(csv.reader([line]))
        else:
            raw = line.split(delimiter)
        values = [self.field(f) for f in raw]
        trailing = 0
        while values and values[-1] == "" and (width is None or len(values) > width):
            values.pop()
            trailing += 1
        if trailing:
            self.counts["trailing"] += 1
        return values

    def notes(self) -> list[str]:
        phrases = {"crlf": "CRLF line ends on {}", "blank": "{} skipped",
                   "nbsp": "non-breaking spaces in {}", "blanks": "stray blanks around {}",
                   "trailing": "trailing delimiters on {}"}
        units = {"crlf": "line", "blank": "blank line", "nbsp": "value", "blanks": "value",
                 "trailing": "line"}
        return [phrase.format(plural(self.counts[key], units[key]))
                for key, phrase in phrases.items() if self.counts[key]]


#: bytes of a file's head that :func:`detect_layout` reads
HEAD_BYTES = 1 << 20


def file_head(path: Path) -> bytes:
    """The first :data:`HEAD_BYTES` of the (decompressed) file, cut after its last full line."""
    with open_input(path, "rb") as handle:
        data = handle.read(HEAD_BYTES)
        if len(data) == HEAD_BYTES and handle.read(1):
            data = data[:data.rfind(b"\n") + 1] or data
    return data


def read_lines(path: Path, cleaner: Cleaner, *, head: bool = False) -> list[tuple[int, str]]:
    """(line number, text) of the non-blank lines; CRLF and a byte-order mark are dropped.
    The file is read whole within :mod:`lexgold.compression`'s limits (``head``: its
    first lines only, :func:`file_head`)."""
    data = file_head(path) if head else read_input_bytes(path)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = data[:err.start].count(b"\n") + 1
        raise InputError("not UTF-8 text", path=path, line=line) from None
    raw = text.split("\n")
    if raw and raw[-1] == "":
        raw.pop()                                 # the final line end
    lines = []
    for number, line in enumerate(raw, start=1):
        if line.endswith("\r"):
            cleaner.counts["crlf"] += 1
            line = line[:-1]
        if line.replace("\xa0", " ").strip():
            lines.append((number, line))
        else:
            cleaner.counts["blank"] += 1
    return lines


def records_frame(records) -> pd.DataFrame:
    frame = pd.DataFrame.from_records(records, columns=["rater_id", "tranche", "word1", "word2",
                                                        "rating", "_line", "_field"])
    frame.insert(5, "kind", "unique")
    return frame




def column_name(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def to_number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if np.isfinite(value) else None


def printed_decimals(text: str) -> int:
    return len(text.split(".")[1]) if "." in text else 0


def read_rating(text: str, path: Path, line: int, column: str) -> float:
    value = to_number(text)
    if value is None:
        raise InputError(f"expected a number, found {text!r}", path=path, line=line,
                         field=column)
    return value


def read_words(fields: list[str], path: Path, line: int) -> tuple[str, str]:
    for i, name in ((0, "word1"), (1, "word2")):
        if fields[i] == "":
            raise InputError("empty word", path=path, line=line, field=name)
        problem = word_problem(fields[i])
        if problem:
            raise InputError(problem, path=path, line=line, field=name)
    return normal_word(fields[0]), normal_word(fields[1])
