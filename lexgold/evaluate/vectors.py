"""Readers of word-vector files: word2vec text and binary, GloVe and fastText text, gensim files.

The text and binary readers need only numpy. gensim KeyedVectors / Word2Vec ``.save()`` files are
pickles and need gensim (``pip install -e '.[gensim]'`` in the lexgold clone); without it the
reader says so.

=================  ===========================================================================
format             layout
=================  ===========================================================================
``word2vec``       text; first line ``<n words> <dimensions>``; then ``word v1 ... vd`` per line
                   (fastText ``.vec`` files are this format)
``glove``          text without the header line: ``word v1 ... vd`` per line
``word2vec-bin``   first line ``<n> <d>``; then per word ``word<space>`` and d little-endian
                   float32, optionally followed by a newline (the original C tool's output)
``gensim``         a pickle written by ``KeyedVectors.save`` or ``Word2Vec.save``
=================  ===========================================================================

``format="auto"`` tells them apart from the first bytes: a pickle opcode (``0x80``) is a gensim
file; a first line of two integers is word2vec, text or binary depending on whether the next
line parses as ``word`` + d numbers; anything else is GloVe. Text and binary files may be
compressed (``.gz``, ``.bz2``, ``.xz``; :mod:`lexgold.compression`), and are read within
its limits (line length, lines, decompressed size; a FIFO or device is refused). A row that
is kept (or averaged) must hold finite numbers: NaN or an infinite value is an error naming the
file and line (binary files: the row), never a silent correlation.

Streaming. ``read_vectors(path, keep=words, case=policy)`` reads the file once, in blocks of
bytes (gensim files memory-mapped when gensim stored the array apart), and keeps only the rows a
lookup of ``words`` under ``policy`` can return; floats are parsed for those rows only, so a
2-million-word file costs the memory of the few thousand rows a gold standard needs. Every
row's word is still read: the row counts, the case variants of the looked-up words and the
file-order check below cover the whole file.

Text rows are parsed in batches by pandas' C parser (``read_csv``; numbers read as doubles
and rounded to float32, as numpy rounds a string); a row the batch cannot take as it is (a word
holding spaces, a blank line, a value that is not a finite number) is read on its own, and a
bad row is named by its line whichever way it was read.

Case policies (how a looked-up word finds its row):

- ``exact-then-lower`` (default): the row spelled exactly as the word, else the first row
  whose lower-cased form is the word's lower-cased form;
- ``lower``: the first row whose lower-cased form is the word's (gensim's
  ``case_insensitive=True``, word2vec's ``compute-accuracy``);
- ``exact``: the row spelled exactly as the word.

Whatever the policy, the first row wins: a later row never replaces an earlier one with the
same key. Decision: ``exact-then-lower`` is the default because "first" is "most frequent"
only in frequency-sorted files; in a file sorted by spelling ``ACTRESS`` precedes ``actress``,
and under ``lower`` a lower-case gold standard silently gets the capitalised row.
:func:`case_warning` says when a looked-up word has several case variants in a file that does
not look frequency-sorted (:attr:`Vectors.frequency_sorted`).
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from lexgold.compression import check_regular, open_input
from lexgold.compression import limit as input_limit
from lexgold.errors import InputError
from lexgold.evaluate import CASE_POLICIES, DEFAULT_CASE  # noqa: F401  (re-exported)

FORMATS = ("auto", "word2vec", "glove", "word2vec-bin", "gensim")
#: rows checked for spelling order, and rows whose mean length is compared with the rest
_ORDER_SAMPLE, _HEAD_ROWS = 10_000, 1_000
_READ_BLOCK = 1 << 20
#: bytes of row values parsed by one call of the C parser
_PARSE_BATCH = 8 << 20


@dataclass(frozen=True)
class Vectors:
    """Word vectors: ``words[i]`` has the row ``matrix[i]`` (float32, file order kept).

    File order matters: word2vec and GloVe files list words by descending frequency, and when
    case folding maps two rows to one key the first row wins (as in gensim and word2vec's
    ``compute-accuracy``).

    A streamed read (``read_vectors(..., keep=...)``) holds only the kept rows; then ``rows``
    gives their 0-based positions in the file, ``file_rows`` the number of rows read,
    ``mean`` the mean of every row read (when asked for), ``variants`` the number of rows of
    each lower-cased key of the kept words, and ``frequency_sorted`` the file-order check.
    """

    words: list[str]
    matrix: np.ndarray
    source: str = "<memory>"
    rows: np.ndarray | None = None
    file_rows: int | None = None
    mean: np.ndarray | None = None
    variants: dict | None = None
    frequency_sorted: bool | None = None
    _index: dict = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self):
        if self.matrix.ndim != 2 or self.matrix.shape[0] != len(self.words):
            raise ValueError(f"matrix shape {self.matrix.shape} does not match {len(self.words)} words")
        if self.frequency_sorted is None and self.file_rows is None:    # built in memory
            stats = _OrderStats()
            for word in self.words:
                stats.add(word)
            object.__setattr__(self, "frequency_sorted", stats.looks_frequency_sorted())

    @property
    def dim(self) -> int:
        return int(self.matrix.shape[1])

    def __len__(self) -> int:
        return len(self.words)

    def key_index(self, case: str = "lower") -> dict[str, int]:
        """Map each (case-folded) key to its first row. ``case``: 'lower' or 'exact'."""
        check_choice("case", case, ("lower", "exact"))
        if case not in self._index:
            index: dict[str, int] = {}
            for row, word in enumerate(self.words):
                index.setdefault(fold(word, case), row)
            self._index[case] = index
        return self._index[case]

    def find(self, word: str, case: str = DEFAULT_CASE) -> int | None:
        """Row of ``word`` under a case policy (module docstring), or None."""
        if case == "exact":
            return self.key_index("exact").get(word)
        if case == "lower":
            return self.key_index("lower").get(word.lower())
        check_choice("case", case, CASE_POLICIES)
        row = self.key_index("exact").get(word)
        return self.key_index("lower").get(word.lower()) if row is None else row

    def case_variants(self, word: str) -> int:
        """Rows of the file whose lower-cased form is ``word.lower()``."""
        if self.variants is not None:
            return self.variants.get(word.lower(), 0)
        if "variants" not in self._index:
            self._index["variants"] = Counter(w.lower() for w in self.words)
        return self._index["variants"].get(word.lower(), 0)

    def mean_vector(self) -> np.ndarray:
        """Mean of every row of the vocabulary (float64), also for a streamed read."""
        if self.mean is not None:
            return self.mean
        if self.rows is not None:
            raise ValueError("a streamed read holds the mean of the file only when read with "
                             "mean=True")
        return self.matrix.mean(axis=0, dtype=np.float64)

    def unit(self, n: int | None = None, *, in_place: bool = False) -> np.ndarray:
        """The first ``n`` rows (all by default) scaled to length 1 (zero rows stay zero).

        With ``in_place`` the rows of :attr:`matrix` themselves are scaled (no second copy of
        the matrix: what ``lexgold analogy`` does, which reads the vectors only to solve) and a
        view of them is returned; the vectors' lengths are then lost.
        """
        rows = self.matrix if n is None else self.matrix[:n]
        return unit_rows(rows, out=rows if in_place else None)


def unit_rows(matrix: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Rows scaled to length 1 (zero rows stay zero), float32, in blocks of 64 MB.

    ``out`` may be ``matrix`` itself (float32) to scale in place.
    """
    out = np.empty(matrix.shape, dtype=np.float32) if out is None else out
    step = max(1, (64 << 20) // max(1, 4 * matrix.shape[1]))
    for first in range(0, len(matrix), step):
        block = matrix[first:first + step]
        norms = np.linalg.norm(block, axis=1, keepdims=True)
        np.divide(block, np.where(norms == 0, 1, norms), out=out[first:first + step])
    return out


def fold(word: str, case: str) -> str:
    """The lookup key of ``word`` under a case policy ('lower' folds with str.lower)."""
    return word.lower() if case == "lower" else word


def check_choice(name: str, value, allowed) -> None:
    """The one input checker: an unknown option names the argument, the choices and the value."""
    if value not in allowed:
        raise InputError(f"{name} must be one of {', '.join(map(str, allowed))}; got {value!r}",
                         field=name)


def ambiguous_words(vectors: Vectors, words, case: str) -> list[tuple[str, int]]:
    """Looked-up words whose row is chosen by file order: ``(word, rows with its key)``.

    Under 'lower' a word is ambiguous when several rows fold to its key; under
    'exact-then-lower' when, besides, no row has its exact spelling; never under 'exact'.
    """
    if case == "exact":
        return []
    out = []
    for word in dict.fromkeys(words):
        count = vectors.case_variants(word)
        if count > 1 and (case == "lower" or vectors.find(word, "exact") is None):
            out.append((word, count))
    return out


class CaseVariantWarning(UserWarning):
    """File order chose among case variants in a vector file not sorted by frequency."""


def case_warning(vectors: Vectors, words, case: str) -> str | None:
    """A one-line warning when file order picks case variants in a file not sorted by frequency.

    None when the file looks frequency-sorted (the first variant is then the most frequent) or
    no looked-up word is ambiguous (:func:`ambiguous_words`).
    """
    if vectors.frequency_sorted:
        return None
    found = ambiguous_words(vectors, words, case)
    if not found:
        return None
    examples = ", ".join(f"{w} ({n} rows)" for w, n in found[:5])
    advice = "; --case exact-then-lower prefers the exact spelling" if case == "lower" else ""
    return (f"{vectors.source}: {len(found)} looked-up words have several case variants "
            f"(e.g. {examples}) and the file does not look sorted by frequency; case policy "
            f"{case!r} takes the first row of each{advice}")


class _OrderStats:
    """Does a file look sorted by frequency? Decided from its words alone, read in order.

    Frequent words are short (Zipf's law of abbreviation), so a frequency-sorted file starts
    with words shorter than the rest: the mean length of the first rows (1,000, or a tenth of
    a smaller file) must be below 0.85 times that of the other rows, and the file must not be
    sorted by spelling (90 percent of the first 10,000 neighbours in order). Files of fewer
    than 20 rows are not judged (None).
    """

    def __init__(self):
        self.count, self.total_length, self.ascending = 0, 0, 0
        self.lengths: list[int] = []
        self.previous = None

    def add(self, word: str) -> None:
        self.count += 1
        self.total_length += len(word)
        if self.count <= _HEAD_ROWS:
            self.lengths.append(len(word))
        if self.count <= _ORDER_SAMPLE + 1:
            key = word.casefold()
            if self.previous is not None and self.previous <= key:
                self.ascending += 1
            self.previous = key

    def add_many(self, words: list[str]) -> None:
        """:meth:`add` for each of ``words`` in order; past the sampled head rows only their
        count and lengths are kept."""
        sampled = max(0, max(_HEAD_ROWS, _ORDER_SAMPLE + 1) - self.count)
        for word in words[:sampled]:
            self.add(word)
        rest = words[sampled:]
        self.count += len(rest)
        self.total_length += sum(map(len, rest))

    def looks_frequency_sorted(self) -> bool | None:
        if self.count < 20:
            return None
        pairs = min(self.count, _ORDER_SAMPLE + 1) - 1
        if self.ascending >= 0.9 * pairs:
            return False
        head = min(len(self.lengths), max(1, self.count // 10))
        head_length = sum(self.lengths[:head])
        head_mean = head_length / head
        rest_mean = (self.total_length - head_length) / (self.count - head)
        return head_mean < 0.85 * rest_mean


class _RowSelector:
    """Which rows a lookup of ``words`` under ``case`` can return (module docstring).

    Keeps the first row of each exact spelling among ``words`` (policies 'exact',
    'exact-then-lower') and the first row of each lower-cased key (policies 'lower',
    'exact-then-lower'); counts the rows of every looked-up lower-cased key.
    """

    def __init__(self, words, case: str):
        check_choice("case", case, CASE_POLICIES)
        words = {str(w) for w in words}
        self.exact = words if case != "lower" else set()
        self.lower = {w.lower() for w in words} if case != "exact" else set()
        self.variants: Counter = Counter()
        self.counted = {w.lower() for w in words}
        self.first_words = self.counted | {w.split(" ")[0] for w in self.counted}
        self.seen_exact: set[str] = set()
        self.seen_lower: set[str] = set()

    def may_want(self, first_word: str) -> bool:
        """Whether a row whose word starts with ``first_word`` (then a space) can matter."""
        return first_word.lower() in self.first_words

    def wants(self, word: str) -> bool:
        take = False
        if word in self.exact and word not in self.seen_exact:
            self.seen_exact.add(word)
            take = True
        key = word.lower()
        if key in self.counted:
            self.variants[key] += 1
            if key in self.lower and key not in self.seen_lower:
                self.seen_lower.add(key)
                take = True
        return take


def read_vectors(path, format: str = "auto", limit: int | None = None, *, keep=None,
                 case: str = DEFAULT_CASE, mean: bool = False) -> Vectors:
    """Read a word-vector file, whole or streamed for a set of words.

    Parameters
    ----------
    path : str or Path
        The vector file, possibly compressed (``.gz``, ``.bz2``, ``.xz``).
    format : {'auto', 'word2vec', 'glove', 'word2vec-bin', 'gensim'}
        File layout (see the module docstring); 'auto' detects it.
    limit : int, optional
        Read only the first ``limit`` words (files are ordered by frequency).
    keep : iterable of str, optional
        Words that will be looked up: only the rows a lookup under ``case`` can return are
        kept and parsed (module docstring). None keeps every row.
    case : {'exact-then-lower', 'lower', 'exact'}
        Case policy of the lookups ``keep`` is for.
    mean : bool
        With ``keep``: also compute the mean of every row read (parses every row).

    Returns
    -------
    Vectors

    Raises
    ------
    InputError
        A malformed line (wrong number of values, non-numeric value in a parsed row), naming
        file and line.
    """
    check_choice("format", format, FORMATS)
    check_choice("case", case, CASE_POLICIES)
    path = Path(path)
    check_regular(path)
    if format == "auto":
        format = detect_format(path)
    selector = None if keep is None else _RowSelector(keep, case)
    if format == "gensim":
        return _read_gensim(path, limit, selector, mean)
    if format == "word2vec-bin":
        return _read_word2vec_binary(path, limit, selector, mean)
    return _read_text(path, format == "word2vec", limit, selector, mean)


def detect_format(path: Path) -> str:
    """Guess the layout of a vector file from its first bytes (see the module docstring)."""
    with open_input(path, "rb") as handle:
        head = handle.read(1 << 16)
    if not head:
        raise InputError("empty vector file", path=path)
    if head[:1] == b"\x80":
        return "gensim"
    first, _, rest = head.partition(b"\n")
    fields = first.split()
    if len(fields) == 2 and all(f.isdigit() for f in fields):
        dim = int(fields[1])
        second = rest.split(b"\n", 1)[0]
        try:
            values = second.decode("utf-8").rstrip().split(" ")
            np.asarray(values[-dim:], dtype=np.float32)
            return "word2vec" if len(values) > dim else "word2vec-bin"
        except (UnicodeDecodeError, ValueError):
            return "word2vec-bin"
    return "glove"


class _Collector:
    """Kept words, rows and matrix of one read; the running sum for ``mean``; the order check.

    The matrix is allocated once for the announced number of rows (word2vec header) when every
    row is kept, and grows by doubling otherwise.
    """

    def __init__(self, path: Path, selector: _RowSelector | None, mean: bool,
                 expected: int | None = None):
        self.path, self.selector, self.want_mean = path, selector, mean and selector is not None
        self.words: list[str] = []
        self.rows: list[int] = []
        self.capacity = expected if selector is None and expected else 256
        self.matrix: np.ndarray | None = None
        self.count = 0
        self.total = None
        self.order = _OrderStats()

    def skip(self, word: str) -> None:
        """Count the row of ``word``, which is not kept."""
        self.order.add(word)
        self.count += 1

    def skip_many(self, words: list[str]) -> None:
        """:meth:`skip` for each of ``words``, in order."""
        self.order.add_many(words)
        self.count += len(words)

    def offer(self, word: str) -> bool:
        """Count the row of ``word``; True when it is kept (then :meth:`add` its vector)."""
        self.order.add(word)
        self.count += 1
        if self.selector is None or self.selector.wants(word):
            self.words.append(word)
            self.rows.append(self.count - 1)
            return True
        return False

    def add(self, vector: np.ndarray) -> None:
        size = len(self.words) - 1                   # offer() has appended the word
        if self.matrix is None:
            self.matrix = np.empty((max(self.capacity, 1), len(vector)), dtype=np.float32)
        elif size >= len(self.matrix):
            grown = np.empty((2 * len(self.matrix), self.matrix.shape[1]), dtype=np.float32)
            grown[:size] = self.matrix[:size]
            self.matrix = grown
        self.matrix[size] = vector

    def add_rows(self, matrix: np.ndarray) -> None:
        """Append the vectors of the last ``len(matrix)`` kept words, in their order."""
        size = len(self.words) - len(matrix)
        if self.matrix is None:
            self.matrix = np.empty((max(self.capacity, len(matrix), 1), matrix.shape[1]),
                                   dtype=np.float32)
        if size + len(matrix) > len(self.matrix):
            grown = np.empty((max(2 * len(self.matrix), size + len(matrix)),
                              self.matrix.shape[1]), dtype=np.float32)
            grown[:size] = self.matrix[:size]
            self.matrix = grown
        self.matrix[size:size + len(matrix)] = matrix

    def accumulate(self, vector: np.ndarray) -> None:
        self.total = vector.astype(np.float64) if self.total is None else self.total + vector

    def accumulate_rows(self, matrix: np.ndarray) -> None:
        """Add the rows of ``matrix`` to the running sum of ``mean``."""
        block = matrix.sum(axis=0, dtype=np.float64)
        self.total = block if self.total is None else self.total + block

    def result(self, dim: int) -> Vectors:
        if not self.count:
            raise InputError("no vectors found", path=self.path)
        size = len(self.words)
        if self.matrix is None:
            matrix = np.empty((0, dim), dtype=np.float32)
        elif len(self.matrix) == size:
            matrix = self.matrix
        else:                  # trim in place (realloc), not a second copy of the matrix
            matrix = self.matrix
            matrix.resize((size, matrix.shape[1]), refcheck=False)
        mean = self.total / self.count if self.total is not None else None
        streamed = self.selector is not None
        return Vectors(self.words, matrix, str(self.path),
                       rows=np.asarray(self.rows, dtype=np.int64) if streamed else None,
                       file_rows=self.count, mean=mean,
                       variants=dict(self.selector.variants) if streamed else None,
                       frequency_sorted=self.order.looks_frequency_sorted())


def _read_text(path: Path, header: bool, limit: int | None, selector, mean: bool) -> Vectors:
    """Text formats, read as bytes in blocks; a row's floats are parsed only when needed.

    Every line's first word (up to its first space) is read. A line is split and its field
    count checked only when its row may be kept: always when reading whole or with ``mean``,
    else when that first word is a looked-up word or the first word of one; a word may hold
    spaces (GloVe 840B has ``. . .``) and is then everything before the last d values. Values
    of rows to parse wait in a :class:`_Batch` for the C parser.
    """
    out = _Collector(path, selector, mean)
    reader = _TextReader(path, out, _Batch(path, out), selector is None or out.want_mean, limit)
    # lines=False: the reader checks line lengths and counts itself, as it finds the lines
    with open_input(path, "rb", lines=False) as handle:
        if header:
            first = handle.readline(reader.max_line + 1)
            reader.check_length(len(first.rstrip(b"\n")), 1)
            try:
                announced, reader.dim = (int(v) for v in first.split()[:2])
            except ValueError:
                raise InputError("first line must be '<words> <dimensions>'", path=path,
                                 line=1) from None
            _check_header(announced, reader.dim, path)
            out.capacity = min(announced, limit or announced) if selector is None else 256
            reader.number = 2
        rest = b""                      # the start of a line that the next block ends
        while not reader.done:
            block = handle.read(_READ_BLOCK)
            if not block:
                if rest:
                    reader.block(rest, 0, len(rest))
                break
            newline = block.find(b"\n")
            if newline < 0:
                rest += block
                reader.check_length(len(rest), reader.number)
                continue
            start = 0
            if rest:
                joined = rest + block[:newline + 1]
                reader.block(joined, 0, len(joined))
                start = newline + 1
            cut = block.rfind(b"\n") + 1
            if start < cut and not reader.done:
                reader.block(block, start, cut)
            rest = block[cut:]
        reader.batch.flush()
    return out.result(reader.dim or 0)


class _TextReader:
    """The rows of a text vector file, one block of whole lines at a time (:func:`_read_text`).

    ``parse_all``: every row is parsed (a whole read, or ``mean``); its lines are checked one
    by one (a word, one space, d values) and queued for the C parser. Otherwise only the first
    words are read, decoded and lower-cased for the whole block at once; the rows whose first
    word may be wanted are read as single lines (:meth:`line`). A block holding a line that
    is not ``word value ...`` (blank, starting with a space, without values) is read line by
    line, which names a bad line or keeps a strange but valid row as before.
    """

    def __init__(self, path: Path, out, batch, parse_all: bool, limit: int | None):
        self.path, self.out, self.batch = path, out, batch
        self.parse_all, self.limit = parse_all, limit
        self.dim: int | None = None
        self.number = 1                       # line number of the block's first line
        self.done = False
        self.max_line = input_limit("LEXGOLD_MAX_LINE")
        self.max_lines = input_limit("LEXGOLD_MAX_LINES")

    def check_length(self, length: int, number: int) -> None:
        """The limits of :mod:`lexgold.compression` on line ``number`` of ``length`` bytes."""
        if length > self.max_line:
            self.batch.flush()
            raise InputError(f"line longer than {self.max_line:,} characters (the limit "
                             f"LEXGOLD_MAX_LINE)", path=self.path, line=number)
        if number > self.max_lines:
            self.batch.flush()
            raise InputError(f"more than {self.max_lines:,} lines (the limit "
                             f"LEXGOLD_MAX_LINES)", path=self.path, line=self.max_lines + 1)

    def block(self, data: bytes, start: int, end: int) -> None:
        """Read the lines of ``data[start:end]`` (whole lines, each ending with a newline, but
        maybe the file's last)."""
        while self.dim is None and start < end and not self.done:   # GloVe: d from row 1
            start = self._one(data, start, end)
        if self.done or start >= end:
            return
        if self.parse_all:
            self._parse_all(data, start, end)
        else:
            self._scan(data, start, end)

    def _one(self, data: bytes, start: int, end: int) -> int:
        """Read the line at ``start`` as a single line; the start of the next line."""
        newline = data.find(b"\n", start, end)
        stop = end if newline < 0 else newline + 1
        self.check_length(stop - start - (newline >= 0), self.number)
        self.line(data[start:stop], self.number)
        self.number += 1
        return stop

    def _lines(self, data: bytes, start: int, end: int) -> None:
        while start < end and not self.done:
            start = self._one(data, start, end)

    def _parse_all(self, data: bytes, start: int, end: int) -> None:
        find, count, dim = data.find, data.count, self.dim
        offer, queue = self.out.offer, self.batch.add
        while start < end:
            if self.limit is not None and self.out.count >= self.limit:
                self.done = True
                return
            newline = find(b"\n", start, end)
            stop = end if newline < 0 else newline
            if stop - start > self.max_line or self.number > self.max_lines:
                self.check_length(stop - start, self.number)
            last = stop
            if last > start and data[last - 1] == 13:           # "\r\n"
                last -= 1
            if last > start and data[last - 1] == 32:           # one trailing space (fastText)
                last -= 1
            space = find(b" ", start, last)
            if space <= start or count(b" ", start, last) != dim:
                self.line(data[start:min(stop + 1, end)], self.number)   # word with spaces, bad row
            else:
                try:
                    word = data[start:space].decode("utf-8")
                except UnicodeDecodeError:
                    self.batch.flush()
                    raise InputError("word is not UTF-8", path=self.path,
                                     line=self.number) from None
                queue(data[space + 1:last], self.number, offer(word))
            self.number += 1
            start = stop + 1

    def _scan(self, data: bytes, start: int, end: int) -> None:
        find = data.find
        starts, words = [], []
        first, number = start, self.number
        max_line = self.max_line
        while start < end:
            newline = find(b"\n", start, end)
            stop = end if newline < 0 else newline
            space = find(b" ", start, stop)
            if space <= start or stop - start > max_line:   # blank, a leading space, no
                self._lines(data, first, end)              # value at all, too long
                return
            starts.append(start)
            words.append(data[start:space])
            start = stop + 1
        if number + len(starts) - 1 > self.max_lines:
            self._lines(data, first, end)
            return
        if self.limit is not None:              # the rows before the limit
            starts, words = starts[:self.limit - self.out.count], words[:self.limit - self.out.count]
        try:
            text = b"\n".join(words).decode("utf-8")
        except UnicodeDecodeError:
            self._lines(data, first, end)      # names the line
            return
        names, keys = text.split("\n"), text.lower().split("\n")
        wanted = self.out.selector.first_words
        previous = 0
        for i in [i for i, key in enumerate(keys) if key in wanted]:
            self.out.skip_many(names[previous:i])
            stop = find(b"\n", starts[i], end)
            self.line(data[starts[i]:end if stop < 0 else stop + 1], number + i)
            previous = i + 1
        self.out.skip_many(names[previous:])
        self.number = number + len(starts)
        self.done = self.done or (self.limit is not None and self.out.count >= self.limit)

    def line(self, raw: bytes, number: int) -> None:
        """One line read on its own: checked, counted, and queued for parsing when needed."""
        out = self.out
        if self.limit is not None and out.count >= self.limit:
            self.done = True
            return
        line = raw.rstrip(b"\r\n").rstrip(b" ")
        if not line:
            return
        try:
            spaces = line.count(b" ")
            if self.dim is None:
                self.dim = spaces
            if spaces < self.dim or self.dim == 0:
                raise InputError(f"expected a word and {self.dim} values, found {spaces + 1} "
                                 f"fields", path=self.path, line=number)
            end = line.index(b" ") if spaces == self.dim else len(line.rsplit(b" ", self.dim)[0])
            kept = out.offer(_decode_word(line[:end], self.path, number))
        except InputError:
            self.batch.flush()                  # an earlier bad row is named first
            raise
        if kept or out.want_mean:
            self.batch.add(line[end + 1:], number, kept)


class _Batch:
    """Values of rows waiting to be parsed, in file order, and whether each row is kept.

    :meth:`flush` parses them with one call of pandas' C parser (numbers read as doubles,
    rounded to float32 as numpy does) and hands the kept rows to the collector, every row to
    the running sum of ``mean``. If the batch is not d finite numbers per row, the rows are
    parsed one by one, which names the first bad line.
    """

    def __init__(self, path: Path, out):
        self.path, self.out = path, out
        self.values: list[bytes] = []
        self.numbers: list[int] = []
        self.kept: list[bool] = []
        self.size = 0

    def add(self, values: bytes, number: int, kept: bool) -> None:
        self.values.append(values)
        self.numbers.append(number)
        self.kept.append(kept)
        self.size += len(values)
        if self.size >= _PARSE_BATCH:
            self.flush()

    def flush(self) -> None:
        if not self.values:
            return
        matrix = _parse_rows(self.values, self.numbers, self.path)
        if self.out.want_mean:
            self.out.accumulate_rows(matrix)
        if all(self.kept):
            self.out.add_rows(matrix)
        elif any(self.kept):
            self.out.add_rows(matrix[np.asarray(self.kept)])
        self.values, self.numbers, self.kept, self.size = [], [], [], 0


def _parse_rows(values: list[bytes], numbers: list[int], path: Path) -> np.ndarray:
    """Rows of space-separated numbers as a float32 matrix: one C parse (pandas), else row by
    row (naming the first bad line)."""
    width = values[0].count(b" ") + 1
    if len(values) > 1:
        try:
            with np.errstate(over="ignore"):        # 1e39: the row-by-row reading names it
                matrix = pd.read_csv(io.BytesIO(b"\n".join(values)), sep=" ", header=None,
                                     dtype=np.float32, quoting=csv.QUOTE_NONE, engine="c",
                                     skip_blank_lines=False).to_numpy()
            if matrix.shape == (len(values), width) and np.isfinite(matrix).all():
                return matrix
        except (ValueError, pd.errors.ParserError):
            pass
    return np.stack([_parse_values(v, path, n) for v, n in zip(values, numbers)])


def _decode_word(raw: bytes, path: Path, number: int) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError("word is not UTF-8", path=path, line=number) from None


def _parse_values(values: bytes, path: Path, number: int) -> np.ndarray:
    try:
        with np.errstate(over="ignore"):        # a float32 overflow is refused just below
            vector = np.asarray(values.decode("ascii").split(" "), dtype=np.float32)
    except (UnicodeDecodeError, ValueError):
        raise InputError("non-numeric vector value", path=path, line=number) from None
    _check_finite(vector, path, number)
    return vector


def _check_finite(vector: np.ndarray, path: Path, number: int | None, row: str = "") -> None:
    """NaN or an infinite value (or a float32 overflow, ``1e39``) is an error naming the line."""
    if not np.isfinite(vector).all():
        bad = vector[~np.isfinite(vector)][0]
        raise InputError(f"{row}value {bad} in the vector: only finite numbers are read",
                         path=path, line=number)


def _check_header(n: int, dim: int, path: Path) -> None:
    """The announced ``<words> <dimensions>`` within the limits (lexgold.compression): a
    header of 10^9 words would otherwise allocate the matrix before a row is read."""
    if not 0 <= n <= input_limit("LEXGOLD_MAX_LINES"):
        raise InputError(f"header announces {n:,} words: over the limit LEXGOLD_MAX_LINES "
                         f"({input_limit('LEXGOLD_MAX_LINES'):,})", path=path, line=1)
    if not 0 < 4 * dim <= input_limit("LEXGOLD_MAX_LINE"):
        raise InputError(f"header announces {dim:,} dimensions: outside 1-"
                         f"{input_limit('LEXGOLD_MAX_LINE') // 4:,} (the limit "
                         f"LEXGOLD_MAX_LINE / 4 bytes)", path=path, line=1)


def _read_word2vec_binary(path: Path, limit: int | None, selector, mean: bool) -> Vectors:
    """word2vec binary, read in blocks; a row is copied out only when kept."""
    with open_input(path, "rb", lines=False) as handle:
        first = handle.readline(1 << 10)
        try:
            n, dim = (int(v) for v in first.split())
        except ValueError:
            raise InputError("first line must be '<words> <dimensions>'", path=path,
                             line=1) from None
        _check_header(n, dim, path)
        if limit is not None:
            n = min(n, limit)
        out = _Collector(path, selector, mean, expected=n)
        width = 4 * dim
        data, at = b"", 0
        for i in range(n):
            while True:
                while at < len(data) and data[at] in (10, 13):       # '\n', '\r'
                    at += 1
                space = data.find(b" ", at)
                if space >= 0 and space + 1 + width <= len(data):
                    break
                more = handle.read(max(_READ_BLOCK, 2 * width))
                if not more:
                    raise InputError(f"file ends at word {i + 1} of {n}", path=path)
                data, at = data[at:] + more, 0
            word = data[at:space].decode("utf-8", errors="replace")
            kept = out.offer(word)
            if kept or out.want_mean:
                vector = np.frombuffer(data, dtype="<f4", count=dim, offset=space + 1)
                _check_finite(vector, path, None, f"word {i + 1} ({word!r}): ")
                if kept:
                    out.add(vector)
                if out.want_mean:
                    out.accumulate(vector)
            at = space + 1 + width
    return out.result(dim)


def _read_gensim(path: Path, limit: int | None, selector, mean: bool) -> Vectors:
    """gensim pickles, the vector array memory-mapped when gensim saved it as its own .npy."""
    try:
        from gensim.utils import SaveLoad
    except ImportError:
        raise InputError("reading gensim KeyedVectors files needs gensim: "
                         "pip install -e '.[gensim]' in the lexgold clone", path=path) from None
    model = SaveLoad.load(str(path), mmap="r")
    kv = getattr(model, "wv", model)
    if not hasattr(kv, "index_to_key"):
        raise InputError(f"not a gensim KeyedVectors or Word2Vec file ({type(model).__name__})",
                         path=path)
    n = len(kv.index_to_key) if limit is None else min(limit, len(kv.index_to_key))
    out = _Collector(path, selector, False)
    for word in kv.index_to_key[:n]:
        out.offer(str(word))
    out.matrix = np.asarray(kv.vectors[np.asarray(out.rows, dtype=np.int64)], dtype=np.float32)
    finite = np.isfinite(out.matrix).all(axis=1)
    if not finite.all():
        row = int(np.flatnonzero(~finite)[0])
        _check_finite(out.matrix[row], path, None, f"word {out.rows[row] + 1} "
                                                  f"({out.words[row]!r}): ")
    if selector is not None and mean and n:
        step = max(1, (64 << 20) // (4 * kv.vectors.shape[1]))
        out.total = sum(np.asarray(kv.vectors[i:min(i + step, n)]).sum(axis=0, dtype=np.float64)
                        for i in range(0, n, step))
    return out.result(kv.vectors.shape[1])
