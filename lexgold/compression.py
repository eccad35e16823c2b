"""Opening the files people hand to lexgold, compressed or not, chosen by the file name's suffix.

fastText ships its vectors as ``.vec.gz``, gensim its corpora as ``.cor.bz2``, and gold standards
travel as ``.gz``, ``.bz2`` or ``.xz``. Every reader (vector files, gold standards, analogy
questions, rating CSVs, SDT corpora) opens its file through :func:`open_input`, so each of
them reads these transparently and streams them: nothing is decompressed to disk or held whole
in memory.

==========================  =============================
suffix                      opened with
==========================  =============================
``.gz``                     :func:`gzip.open`
``.bz2``                    :func:`bz2.open`
``.xz``, ``.lzma``          :func:`lzma.open`
anything else               :func:`open`
==========================  =============================

A file that is not UTF-8 text, or a damaged or truncated archive, is an
:class:`~lexgold.errors.InputError` naming the file, never a traceback.

Every file is read within limits, so that a decompression bomb, an endless line or a device
ends in one line naming the file (and line) instead of exhausting memory or time:

- only regular files are opened (:func:`check_regular`): a FIFO would block the command
  forever and ``/dev/zero`` never ends;
- a line holds at most :data:`LIMITS` ``["LEXGOLD_MAX_LINE"]`` characters (bytes in binary
  mode), a file at most ``LEXGOLD_MAX_LINES`` lines, and its decompressed content at most
  ``LEXGOLD_MAX_BYTES`` bytes (``LEXGOLD_MAX_WHOLE_BYTES`` for files read whole: gold
  standards, pair lists, rating layouts read at once).

The defaults are generous for research data (docs/contract.md, "Input limits"); each can be
changed with its environment variable.
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import io
import lzma
import os
import stat
import zlib
from contextlib import contextmanager
from pathlib import Path

from lexgold.errors import InputError

#: suffix -> (opener, name used in error messages)
OPENERS = {".gz": (gzip.open, "gzip"), ".bz2": (bz2.open, "bzip2"), ".xz": (lzma.open, "xz"),
           ".lzma": (lzma.open, "xz")}


#: name (also the environment variable that changes it) -> default
LIMITS = {
    # characters of one line: a vector row of 1,000 dimensions is about 12,000; a gold or
    # ratings row under 1,000
    "LEXGOLD_MAX_LINE": 1 << 20,
    # lines of one file: ConceptNet Numberbatch 19.08 (multilingual) has 9.16 M vector rows,
    # a 10,000-rater study's export 1.4 M ratings
    "LEXGOLD_MAX_LINES": 10_000_000,
    # decompressed bytes of one file read as a stream (vector files: Numberbatch 19.08 is
    # about 22 GB as text)
    "LEXGOLD_MAX_BYTES": 64 << 30,
    # decompressed bytes of one file read whole (the largest gold standard is a few MB)
    "LEXGOLD_MAX_WHOLE_BYTES": 256 << 20,
}


def limit(name: str) -> int:
    """The limit ``name`` of :data:`LIMITS`, from its environment variable when set.

    >>> limit("LEXGOLD_MAX_LINES")
    10000000
    """
    text = os.environ.get(name, "").strip()
    if not text:
        return LIMITS[name]
    try:
        value = int(text.replace("_", ""))
    except ValueError:
        value = 0
    if value < 1:
        raise InputError(f"expected a positive whole number, found {text!r}", field=name)
    return value


def check_regular(path) -> None:
    """Refuse anything but a regular file (after symbolic links): a FIFO, socket or device.

    Raises
    ------
    InputError
        Naming the file and what it is; FileNotFoundError when it does not exist.
    """
    mode = os.stat(path).st_mode
    if stat.S_ISREG(mode):
        return
    kind = ("a folder" if stat.S_ISDIR(mode) else "a named pipe (FIFO)" if stat.S_ISFIFO(mode)
            else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
            else "a socket" if stat.S_ISSOCK(mode) else "not a regular file")
    raise InputError(f"{kind}, not a regular file: lexgold reads files only", path=path)


class _Limited:
    """A read handle (text or bytes) that counts what is read and stops at the limits."""

    def __init__(self, handle, path: Path, *, newline, size_limit: str, lines: bool):
        self._handle, self._path, self._nl = handle, path, newline
        self._size_limit, self._max_bytes = size_limit, limit(size_limit)
        self._check_lines = lines
        self._max_line, self._max_lines = limit("LEXGOLD_MAX_LINE"), limit("LEXGOLD_MAX_LINES")
        self._size = self._lines = self._run = 0

    def _count(self, chunk):
        self._size += len(chunk)
        if self._size > self._max_bytes:
            unit = "characters" if isinstance(chunk, str) else "bytes"
            raise InputError(f"more than {self._max_bytes:,} {unit} (decompressed): over the "
                             f"limit {self._size_limit} (a decompression bomb?)", path=self._path,
                             line=self._lines + 1 if self._check_lines else None)
        if not self._check_lines:
            return chunk
        ends = chunk.count(self._nl)
        first = chunk.find(self._nl) if ends else len(chunk)
        if self._run + first > self._max_line:
            raise InputError(f"line longer than {self._max_line:,} characters (the limit "
                             f"LEXGOLD_MAX_LINE)", path=self._path, line=self._lines + 1)
        if ends:
            self._lines += ends
            self._run = len(chunk) - chunk.rfind(self._nl) - 1
            if self._lines > self._max_lines:
                raise InputError(f"more than {self._max_lines:,} lines (the limit "
                                 f"LEXGOLD_MAX_LINES)", path=self._path,
                                 line=self._max_lines + 1)
        else:
            self._run += len(chunk)
        return chunk

    def read(self, size: int = -1):
        block = self._max_line if self._check_lines else 1 << 20
        if 0 <= size <= block:
            return self._count(self._handle.read(size))
        parts = []
        while size < 0 or size > 0:
            part = self._count(self._handle.read(block if size < 0 else min(size, block)))
            if not part:
                break
            parts.append(part)
            if size > 0:
                size -= len(part)
        return self._nl[:0].join(parts)

    def readline(self, size: int = -1):
        cap = self._max_line - self._run + 1 if self._check_lines else -1
        if size >= 0:
            cap = size if cap < 0 else min(size, cap)
        return self._count(self._handle.readline(cap))

    def __iter__(self):
        if not self._check_lines:
            yield from iter(self.readline, self._nl[:0])
            return
        readline, newline, cap = self._handle.readline, self._nl, self._max_line + 1
        first = self.readline()            # may continue a line begun by read()
        if not first:
            return
        yield first
        while True:                        # the per-line work of _count, inlined (speed)
            line = readline(cap)
            if not line:
                return
            self._size += len(line)
            if line[-1:] == newline:
                self._lines += 1
                if self._lines > self._max_lines or self._size > self._max_bytes:
                    self._lines -= 1
                    self._size -= len(line)
                    self._count(line)       # raises, naming the limit
            elif len(line) == cap or self._size > self._max_bytes:
                self._size -= len(line)
                self._count(line)
            else:
                self._run = len(line)       # the last line, without a line end
            yield line

    def __getattr__(self, name):
        return getattr(self._handle, name)


@contextmanager
def open_input(path, mode: str = "rt", encoding: str = "utf-8-sig", newline: str | None = None,
               *, whole: bool = False, lines: bool = True):
    """Open ``path`` for reading, decompressing by suffix (module docstring); a context manager.

    Parameters
    ----------
    path : str or Path
    mode : {'rt', 'rb'}
        Text (decoded with ``encoding``) or bytes.
    encoding : str
        Text mode only; the default drops a UTF-8 byte-order mark.
    newline : str, optional
        Text mode only, as for :func:`open` (``''`` for the csv module).
    whole : bool
        The caller holds the whole file: at most ``LEXGOLD_MAX_WHOLE_BYTES`` (module doc).
    lines : bool
        Check line lengths and counts (False for binary formats without lines).

    Raises
    ------
    InputError
        Not a regular file, not UTF-8 (text mode), the archive is damaged or truncated, or a
        limit of the module docstring is passed; raised also for errors met while the caller
        reads inside the ``with`` block.
    """
    if mode not in ("rt", "rb"):
        raise ValueError(f"mode must be 'rt' or 'rb'; got {mode!r}")
    path = Path(path)
    check_regular(path)
    opener, kind = OPENERS.get(path.suffix.lower(), (open, None))
    text = {"encoding": encoding, "newline": newline} if mode == "rt" else {}
    try:
        with opener(path, mode, **text) as handle:
            if kind is not None and mode == "rb":        # fewer, larger decompression calls
                handle = io.BufferedReader(handle, buffer_size=1 << 20)
            yield _Limited(handle, path, newline="\n" if mode == "rt" else b"\n",
                           size_limit="LEXGOLD_MAX_WHOLE_BYTES" if whole
                           else "LEXGOLD_MAX_BYTES", lines=lines)
    except UnicodeDecodeError as err:
        raise InputError(f"not UTF-8 text ({err.reason}: byte "
                         f"{err.object[err.start:err.start + 1]!r})", path=path) from None
    except (EOFError, zlib.error, lzma.LZMAError, gzip.BadGzipFile) as err:
        raise InputError(f"damaged or truncated {kind or 'compressed'} file ({err})",
                         path=path) from None
    except OSError as err:
        if kind is None or err.errno is not None:    # a real I/O error: not found, permission
            raise
        raise InputError(f"damaged or truncated {kind} file ({err})", path=path) from None


def read_input_text(path, encoding: str = "utf-8-sig") -> str:
    """The whole text of a (possibly compressed) UTF-8 file; for small files such as gold."""
    with open_input(path, "rt", encoding=encoding, whole=True) as handle:
        return handle.read()


def parse_toml(text: str, path, *, what: str = "TOML file") -> dict:
    """The table of TOML ``text`` read from ``path`` (named in errors as a ``what``).

    Raises
    ------
    InputError
        Not TOML, or arrays or tables nested so deeply that the parser would overflow
        Python's stack (5,000 ``[``: a RecursionError otherwise).
    """
    import tomllib

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise InputError(f"not a valid {what}: {err}", path=path) from None
    except RecursionError:
        raise InputError(f"not a valid {what}: arrays or tables nested too deeply",
                         path=path) from None


def read_input_toml(path, *, what: str = "TOML file") -> dict:
    """The table of the TOML file ``path``, read whole within the limits (a FIFO or device
    refused, its size bounded: :func:`open_input`) and parsed by :func:`parse_toml`. The one
    reader of the TOML files people hand to lexgold (``--consent``, ``--topics``)."""
    return parse_toml(read_input_text(path, encoding="utf-8"), path, what=what)


def read_input_json(path, *, what: str = "JSON file"):
    """The value of the JSON file ``path``, read whole within the limits (:func:`open_input`).

    Raises
    ------
    InputError
        Not JSON, or nested too deeply for Python's parser (naming the file).
    """
    import json

    text = read_input_text(path, encoding="utf-8")
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise InputError(f"not a valid {what}: {err}", path=path) from None
    except RecursionError:
        raise InputError(f"not a valid {what}: arrays or objects nested too deeply",
                         path=path) from None


def read_input_bytes(path) -> bytes:
    """The whole (decompressed) content of a file read at once, within the limits of a whole
    read (module docstring)."""
    with open_input(path, "rb", whole=True) as handle:
        return handle.read()


def sha256_file(path, *, uncompressed: bool = False) -> str:
    """SHA-256 of the file at ``path``, read in 1 MiB blocks; with ``uncompressed``, of its
    decompressed bytes (:func:`open_input`), as the gold-file catalogue checks a ``.gz`` copy.
    The one file checksum of lexgold: builders' manifests, SHA256SUMS, the catalogue."""
    digest = hashlib.sha256()
    check_regular(path)
    with (open_input(path, "rb", lines=False) if uncompressed else open(path, "rb")) as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
