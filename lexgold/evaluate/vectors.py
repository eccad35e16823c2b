"""Readers of word-vector files: word2vec text and binary, GloVe and fastText text, gensim files.

The text and binary readers need only numpy. gensim KeyedVectors / Word2Vec ``.save()`` files are
pickles and need gensim (``pip install lexgold[gensim]``); without it the reader says so.

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
line parses as ``word`` + d numbers; anything else is GloVe.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from lexgold.errors import InputError

FORMATS = ("auto", "word2vec", "glove", "word2vec-bin", "gensim")
CASE_POLICIES = ("lower", "exact")


@dataclass(frozen=True)
class Vectors:
    """Word vectors: ``words[i]`` has the row ``matrix[i]`` (float32, file order kept).

    File order matters: word2vec and GloVe files list words by descending frequency, and when
    case folding maps two rows to one key the first row wins (as in gensim and word2vec's
    ``compute-accuracy``).
    """

    words: list[str]
    matrix: np.ndarray
    source: str = "<memory>"
    _index: dict = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self):
        if self.matrix.ndim != 2 or self.matrix.shape[0] != len(self.words):
            raise ValueError(f"matrix shape {self.matrix.shape} does not match {len(self.words)} words")

    @property
    def dim(self) -> int:
        return int(self.matrix.shape[1])

    def __len__(self) -> int:
        return len(self.words)

    def key_index(self, case: str = "lower") -> dict[str, int]:
        """Map each (case-folded) key to its first row. ``case``: 'lower' or 'exact'."""
        check_choice("case", case, CASE_POLICIES)
        if case not in self._index:
            index: dict[str, int] = {}
            for row, word in enumerate(self.words):
                index.setdefault(fold(word, case), row)
            self._index[case] = index
        return self._index[case]

    def unit(self) -> np.ndarray:
        """Rows scaled to length 1 (zero rows stay zero), float32."""
        norms = np.linalg.norm(self.matrix, axis=1, keepdims=True)
        return (self.matrix / np.where(norms == 0, 1, norms)).astype(np.float32, copy=False)


def fold(word: str, case: str) -> str:
    """The lookup key of ``word`` under a case policy ('lower' folds with str.lower)."""
    return word.lower() if case == "lower" else word


def check_choice(name: str, value, allowed) -> None:
    """The one input checker: an unknown option names the argument, the choices and the value."""
    if value not in allowed:
        raise InputError(f"{name} must be one of {', '.join(map(str, allowed))}; got {value!r}",
                         field=name)


def read_vectors(path, format: str = "auto", limit: int | None = None) -> Vectors:
    """Read a word-vector file.

    Parameters
    ----------
    path : str or Path
        The vector file.
    format : {'auto', 'word2vec', 'glove', 'word2vec-bin', 'gensim'}
        File layout (see the module docstring); 'auto' detects it.
    limit : int, optional
        Read only the first ``limit`` words (files are ordered by frequency).

    Returns
    -------
    Vectors

    Raises
    ------
    InputError
        A malformed line (wrong number of values, non-numeric value), naming file and line.
    """
    check_choice("format", format, FORMATS)
    path = Path(path)
    if format == "auto":
        format = detect_format(path)
    if format == "gensim":
        return _read_gensim(path, limit)
    if format == "word2vec-bin":
        return _read_word2vec_binary(path, limit)
    return _read_text(path, header=(format == "word2vec"), limit=limit)


def detect_format(path: Path) -> str:
    """Guess the layout of a vector file from its first bytes (see the module docstring)."""
    with open(path, "rb") as handle:
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


def _read_text(path: Path, header: bool, limit: int | None) -> Vectors:
    words: list[str] = []
    rows: list[np.ndarray] = []
    dim = None
    with open(path, encoding="utf-8", errors="strict") as handle:
        for number, line in enumerate(handle, start=1):
            if number == 1 and header:
                try:
                    dim = int(line.split()[1])
                except (IndexError, ValueError):
                    raise InputError("first line must be '<words> <dimensions>'", path=path,
                                     line=1) from None
                continue
            line = line.rstrip("\r\n").rstrip(" ")
            if not line:
                continue
            if limit is not None and len(words) >= limit:
                break
            parts = line.split(" ")
            if dim is None:
                dim = len(parts) - 1
            if len(parts) < dim + 1:
                raise InputError(f"expected a word and {dim} values, found {len(parts)} fields",
                                 path=path, line=number)
            try:
                rows.append(np.asarray(parts[-dim:], dtype=np.float32))
            except ValueError:
                raise InputError("non-numeric vector value", path=path, line=number) from None
            words.append(" ".join(parts[:-dim]))
    if not words:
        raise InputError("no vectors found", path=path)
    return Vectors(words, np.vstack(rows), str(path))


def _read_word2vec_binary(path: Path, limit: int | None) -> Vectors:
    data = path.read_bytes()
    end = data.index(b"\n")
    try:
        n, dim = (int(v) for v in data[:end].split())
    except ValueError:
        raise InputError("first line must be '<words> <dimensions>'", path=path, line=1) from None
    if limit is not None:
        n = min(n, limit)
    width = 4 * dim
    words, matrix, at = [], np.empty((n, dim), dtype=np.float32), end + 1
    for i in range(n):
        while at < len(data) and data[at:at + 1] in (b"\n", b"\r"):
            at += 1
        space = data.find(b" ", at)
        if space < 0 or space + 1 + width > len(data):
            raise InputError(f"file ends at word {i + 1} of {n}", path=path)
        words.append(data[at:space].decode("utf-8", errors="replace"))
        matrix[i] = np.frombuffer(data, dtype="<f4", count=dim, offset=space + 1)
        at = space + 1 + width
    return Vectors(words, matrix, str(path))


def _read_gensim(path: Path, limit: int | None) -> Vectors:
    try:
        from gensim.utils import SaveLoad
    except ImportError:
        raise InputError("reading gensim KeyedVectors files needs gensim: "
                         "pip install 'lexgold[gensim]'", path=path) from None
    model = SaveLoad.load(str(path))
    kv = getattr(model, "wv", model)
    if not hasattr(kv, "index_to_key"):
        raise InputError(f"not a gensim KeyedVectors or Word2Vec file ({type(model).__name__})",
                         path=path)
    n = len(kv.index_to_key) if limit is None else min(limit, len(kv.index_to_key))
    return Vectors(list(kv.index_to_key[:n]), np.asarray(kv.vectors[:n], dtype=np.float32),
                   str(path))
