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
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import io
import lzma
import zlib
from contextlib import contextmanager
from pathlib import Path

from lexgold.errors import InputError

#: suffix -> (opener, name used in error messages)
OPENERS = {".gz": (gzip.open, "gzip"), ".bz2": (bz2.open, "bzip2"), ".xz": (lzma.open, "xz"),
           ".lzma": (lzma.open, "xz")}


@contextmanager
def open_input(path, mode: str = "rt", encoding: str = "utf-8-sig", newline: str | None = None):
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

    Raises
    ------
    InputError
        The file is not UTF-8 (text mode) or the archive is damaged or truncated; raised also
        for errors met while the caller reads inside the ``with`` block.
    """
    if mode not in ("rt", "rb"):
        raise ValueError(f"mode must be 'rt' or 'rb'; got {mode!r}")
    path = Path(path)
    opener, kind = OPENERS.get(path.suffix.lower(), (open, None))
    text = {"encoding": encoding, "newline": newline} if mode == "rt" else {}
    try:
        with opener(path, mode, **text) as handle:
            if kind is not None and mode == "rb":        # fewer, larger decompression calls
                handle = io.BufferedReader(handle, buffer_size=1 << 20)
            yield handle
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
    with open_input(path, "rt", encoding=encoding) as handle:
        return handle.read()


def sha256_file(path, *, uncompressed: bool = False) -> str:
    """SHA-256 of the file at ``path``, read in 1 MiB blocks; with ``uncompressed``, of its
    decompressed bytes (:func:`open_input`), as the gold-file catalogue checks a ``.gz`` copy.
    The one file checksum of lexgold: builders' manifests, SHA256SUMS, the catalogue."""
    digest = hashlib.sha256()
    with (open_input(path, "rb") if uncompressed else open(path, "rb")) as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
