"""Reading the CSV files people hand to lexgold (pair sets, ratings, sheets, norms).

One reader so that every command treats a spreadsheet export the same way: UTF-8 with or
without a byte-order mark, plain or compressed (:mod:`lexgold.compression`), every cell read
as text (nothing silently turned into NaN or a number), header names stripped of spaces, and
one-line errors naming the file.
"""

from __future__ import annotations

import io
import re
import unicodedata
from collections.abc import Iterator
from contextlib import nullcontext
from pathlib import Path

import pandas as pd

from lexgold.compression import check_regular, open_input, read_input_text
from lexgold.errors import InputError

#: other spellings of the pair columns (released SimLex, HyperLex and TR9856 layouts); here, at
#: the bottom, so that every reader of word pairs (lexgold.pairfiles, the score files of
#: lexgold.evaluate) shares them
PAIR_COLUMN_ALIASES = {"WORD1": "word1", "WORD2": "word2", "POS": "pos", "term1": "word1",
                       "term2": "word2"}


def read_text_table(path: str | Path, *, sep: str = ",") -> pd.DataFrame:
    """Read a delimited UTF-8 file (``.gz``, ``.bz2``, ``.xz`` read transparently) as strings.

    Raises
    ------
    InputError
        When the file is missing, empty, not UTF-8 or not parseable, naming the file.
    """
    return list(read_text_chunks(path, rows=None, sep=sep))[0]


def read_text_chunks(path: str | Path, *, rows: int | None, sep: str = ",",
                     categorical: tuple[str, ...] = (),
                     chars: int | None = None) -> Iterator[pd.DataFrame]:
    """:func:`read_text_table` in parts of at most ``rows`` rows (``None``: the whole file in
    one part), for files too large to hold as strings (a ratings file of 1.4 M rows):
    the same cells, header names and errors; each part keeps its rows' positions in the file as
    its index. A file with a header and no rows gives one empty part. The columns named in
    ``categorical`` (header names, stripped) are made pandas categoricals of the same strings
    by the parser, each part with its own categories. With ``chars``, a part also ends after
    about that many characters (at a line end outside quotes), so that a part's text is
    bounded whatever the lines' length (a decompression bomb of long lines).

    Raises
    ------
    InputError
        As :func:`read_text_table`; an error met in a later part is raised when that part is
        read.
    """
    path = Path(path)
    if not path.exists():
        raise InputError("file not found", path=path)
    check_regular(path)
    dtype: type | dict = str
    if categorical:
        dtype = {raw: "category" if str(raw).strip() in categorical else str
                 for raw in _header(path, sep)}
    if chars is not None and rows is not None:
        yield from _bounded_chunks(path, rows, chars, sep, dtype)
        return
    with open_input(path, "rt", newline="") as handle:
        try:
            found = pd.read_csv(handle, sep=sep, dtype=dtype, keep_default_na=False,
                                chunksize=rows)
            with nullcontext([found]) if rows is None else found as parts:
                for part in parts:
                    if not isinstance(part.index, pd.RangeIndex):
                        raise InputError(f"the first row has {len(part.columns) + 1} fields "
                                         f"under a header of {len(part.columns)}: a field too "
                                         f"many (a stray delimiter?)", path=path, line=2)
                    part.columns = [str(c).strip() for c in part.columns]
                    yield part
        except pd.errors.EmptyDataError:
            raise InputError("empty file: expected a header line", path=path) from None
        except pd.errors.ParserError as err:
            raise parser_error(err, path, sep=sep) from None


_SEPARATORS = {",": "comma", "\t": "tab", ";": "semicolon", "|": "bar", " ": "space"}
_FIELD_COUNT = re.compile(r"Expected (\d+) fields in line (\d+), saw (\d+)")


def parser_error(err: Exception, path: str | Path, *, sep: str = ",") -> InputError:
    """pandas' ``ParserError`` said in lexgold's words, naming the file and line.

    >>> str(parser_error(ValueError("Error tokenizing data. C error: Expected 1 fields in "
    ...                             "line 3, saw 2\\n"), "ratings.csv"))
    'ratings.csv:3: expected 1 comma-separated field (as the header has), found 2 (another delimiter, or a value with an unquoted comma?)'
    """
    text = str(err).strip()
    found = _FIELD_COUNT.search(text)
    name = _SEPARATORS.get(sep, repr(sep))
    if found:
        expected, line, saw = (int(group) for group in found.groups())
        return InputError(f"expected {expected} {name}-separated field{'s' * (expected != 1)} "
                          f"(as the header has), found {saw} (another delimiter, or a value "
                          f"with an unquoted {name}?)", path=path, line=line)
    if "EOF inside string" in text or "EOF while" in text:
        row = re.search(r"starting at row (\d+)", text)
        return InputError("a quoted value is never closed (a stray double quote?)", path=path,
                          line=int(row.group(1)) + 1 if row else None)
    return InputError(f"not a valid {name}-separated file ({text.splitlines()[0]})", path=path)


def _bounded_chunks(path: Path, rows: int, chars: int, sep: str, dtype):
    """:func:`read_text_chunks` with parts of at most ``rows`` lines and about ``chars``
    characters: the lines are gathered here, each part parsed on its own under the header
    (errors name the file's own line)."""
    with open_input(path, "rt", newline="") as handle:
        header = handle.readline()
        done, line, parts = 0, 2, 0
        for text, lines in _line_blocks(handle, rows, chars):
            try:
                part = pd.read_csv(io.StringIO(header + text), sep=sep, dtype=dtype,
                                   keep_default_na=False)
            except pd.errors.EmptyDataError:
                raise InputError("empty file: expected a header line", path=path) from None
            except pd.errors.ParserError as err:       # its lines and rows are the part's
                shifted = re.sub(r"(line|row) (\d+)", lambda m: f"{m[1]} {int(m[2]) + line - 2}",
                                 str(err).strip())
                raise parser_error(ValueError(shifted), path, sep=sep) from None
            if not isinstance(part.index, pd.RangeIndex):
                if line == 2:
                    raise InputError(f"the first row has {len(part.columns) + 1} fields under "
                                     f"a header of {len(part.columns)}: a field too many (a "
                                     f"stray delimiter?)", path=path, line=2)
                raise parser_error(ValueError(f"Expected {len(part.columns)} fields in line "
                                              f"{line}, saw {len(part.columns) + 1}"),
                                   path, sep=sep)
            part.index = pd.RangeIndex(done, done + len(part))
            part.columns = [str(c).strip() for c in part.columns]
            done, line, parts = done + len(part), line + lines, parts + 1
            yield part
        if not parts:
            if not header.strip():
                raise InputError("empty file: expected a header line", path=path)
            part = pd.read_csv(io.StringIO(header), sep=sep, dtype=dtype, keep_default_na=False)
            part.columns = [str(c).strip() for c in part.columns]
            yield part


def _line_blocks(handle, rows: int, chars: int) -> Iterator[tuple[str, int]]:
    """The lines of ``handle`` joined in blocks of at most ``rows`` lines and about ``chars``
    characters, each cut at a line end outside double quotes: ``(text, lines)``."""
    block, size, quoted = [], 0, False
    for text in handle:
        block.append(text)
        size += len(text)
        quoted ^= text.count('"') % 2 == 1
        if not quoted and (len(block) >= rows or size >= chars):
            yield "".join(block), len(block)
            block, size = [], 0
    if block:
        yield "".join(block), len(block)


def _header(path: Path, sep: str) -> list:
    """The header's names as the parser reads them (not stripped); none when it cannot."""
    with open_input(path, "rt", newline="") as handle:
        try:
            return list(pd.read_csv(handle, sep=sep, dtype=str, nrows=0).columns)
        except (pd.errors.EmptyDataError, pd.errors.ParserError, UnicodeDecodeError):
            return []


#: the Unicode space separators (category Zs) other than the ASCII space: no-break space
#: U+00A0, ogham U+1680, en quad ... hair space U+2000-U+200A, narrow no-break U+202F, medium
#: mathematical U+205F, ideographic U+3000. Spreadsheets and word processors put them in words.
UNICODE_SPACES = "\u00a0\u1680" + "".join(chr(c) for c in range(0x2000, 0x200B)) \
    + "\u202f\u205f\u3000"
_TO_SPACE = str.maketrans(dict.fromkeys(UNICODE_SPACES, " "))


def has_unicode_space(text: str) -> bool:
    """Whether ``text`` holds a space of :data:`UNICODE_SPACES` (a no-break space ...)."""
    return any(c in UNICODE_SPACES for c in text)


def normalise_spaces(text: str) -> str:
    """``text`` with every Unicode space as a plain space, runs of blanks as one, ends stripped.

    One rule for every reader of hand-made files (``lexgold ratings import``, the gold readers
    of ``lexgold evaluate``): ``'anno\\u00a0domini '`` -> ``'anno domini'``.

    >>> normalise_spaces("\\u00a0sole\\u202fluna  ")
    'sole luna'
    """
    return " ".join(text.translate(_TO_SPACE).split())


#: the longest word (characters) any reader accepts, as the study database stores it
MAX_WORD = 300
#: the invisible formatting characters a word may hold: zero-width non-joiner and joiner, which
#: Persian, Indic scripts and emoji sequences need
WORD_JOINERS = "\u200c\u200d"
#: letters and symbols that show as nothing (a word of them looks blank, or like another word
#: with it): the Hangul fillers U+115F, U+1160, U+3164, U+FFA0, the Braille blank U+2800, the
#: Khmer inherent vowels U+17B4, U+17B5 and the combining grapheme joiner U+034F
INVISIBLE_LETTERS = "\u115f\u1160\u3164\uffa0\u2800\u17b4\u17b5\u034f"


def word_problem(word: str) -> str | None:
    r"""What is wrong with ``word`` as a word of a pair, or None.

    Refused: more than :data:`MAX_WORD` characters; any control or invisible formatting
    character (Unicode categories Cc, Cf, Zl, Zp, Cs; a NUL byte, a line break, a bidi override
    U+202E that reorders what raters see, a zero-width space U+200B that makes two spellings
    of one word), except :data:`WORD_JOINERS`; a private-use character (Co: it shows as
    whatever a font puts there); and the blank letters of :data:`INVISIBLE_LETTERS`. Words are
    compared in Unicode NFC (:func:`normal_word`): an NFD spelling is the same word.

    >>> word_problem("dog") is None
    True
    >>> word_problem("\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645") is None  # Persian, ZWNJ
    True
    >>> word_problem("ca\u202et")[:36]
    'holds U+202E RIGHT-TO-LEFT OVERRIDE:'
    >>> word_problem("\u3164")[:29]
    'holds U+3164 HANGUL FILLER: a'
    """
    if len(word) > MAX_WORD:
        return f"word longer than {MAX_WORD} characters ({len(word):,})"
    if word.isprintable() and not any(char in word for char in INVISIBLE_LETTERS):
        return None
    for char in word:
        if _is_control(char):
            return (f"holds U+{ord(char):04X} {_name(char)}: control and invisible "
                    f"formatting characters are refused in words")
        if unicodedata.category(char) == "Co" or char in INVISIBLE_LETTERS:
            return (f"holds U+{ord(char):04X} {_name(char)}: a blank or private-use "
                    f"character (it shows as nothing, or as another word) is refused in words")
    return None


def _is_control(char: str) -> bool:
    """A control character (Cc, Zl, Zp, Cs) or an invisible formatting one (Cf) other than
    :data:`WORD_JOINERS`: refused in words and in one-line texts alike."""
    category = unicodedata.category(char)
    return category in ("Cc", "Zl", "Zp", "Cs") or (category == "Cf"
                                                    and char not in WORD_JOINERS)


def _name(char: str) -> str:
    return unicodedata.name(char, "(a private-use character)" if unicodedata.category(char)
                            == "Co" else "(a control character)")


def normal_word(word: str) -> str:
    """``word`` in Unicode NFC (composed: ``e`` + U+0301 is ``\u00e9``), the one form every
    reader of words keeps, so that an NFD spelling next to its NFC one is one word.

    >>> normal_word("cafe\u0301") == "caf\u00e9"
    True
    """
    return word if unicodedata.is_normalized("NFC", word) else \
        unicodedata.normalize("NFC", word)


def check_words(values, *, path, lines, field: str) -> list[str]:
    """:func:`word_problem` over ``values`` (each distinct value once), an
    :class:`InputError` naming ``path``, the line of the first bad value (``lines[i]`` for
    ``values[i]``) and ``field``; returns the values in NFC (:func:`normal_word`)."""
    seen = {}
    normal = {}
    out = []
    for at, word in enumerate(values):
        word = str(word)
        if word not in seen:
            seen[word] = word_problem(word)
            normal[word] = normal_word(word)
        if seen[word]:
            raise InputError(seen[word], path=path, line=lines[at], field=field)
        out.append(normal[word])
    return out


def line_problem(text: str) -> str | None:
    r"""What is wrong with ``text`` as one line a rater or a researcher reads (a study's name,
    the consent page's contact, a completion code), or None: a control character (a line
    break, a tab, a NUL byte; Cc, Zl, Zp, Cs) or an invisible formatting character (Cf: a bidi
    override U+202E that shows the line reordered, a zero-width space), except
    :data:`WORD_JOINERS`.

    >>> line_problem("Dr A. Researcher, a.researcher@example.org") is None
    True
    >>> line_problem("ok‮gro.elpmaxe@a")
    'holds U+202E RIGHT-TO-LEFT OVERRIDE: control and bidi formatting characters are refused'
    """
    if text.isprintable():
        return None
    for char in text:
        if _is_control(char):
            return (f"holds U+{ord(char):04X} {_name(char)}: control and bidi formatting "
                    f"characters are refused")
    return None


def read_stop_words(path: str | Path) -> frozenset[str]:
    """A stop list file: one word per line; blank lines and lines starting with ``#`` ignored;
    words in NFC (:func:`normal_word`), as every reader of words keeps them."""
    path = Path(path)
    check_regular(path)
    try:
        lines = read_input_text(path, encoding="utf-8").splitlines()
    except InputError as err:
        raise InputError(f"stop list: {str(err).split(': ', 1)[-1]}", path=path) from None
    return frozenset(normal_word(w.strip()) for w in lines
                     if w.strip() and not w.lstrip().startswith("#"))
