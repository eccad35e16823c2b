"""The published gold files lexgold reads, and recognising them in a folder.

The catalogue (``lexgold/resources/data/gold_files.toml``) lists, per data set, its name,
citation, licence where it could be checked, where it is distributed, the ``--gold-format``
layout that reads it, the names of its distributed files and the SHA-256 of those files where a
real copy was available to compute it (none is guessed: a file without one is recognised by
name only).

:func:`scan_folder` walks a folder (``lexgold evaluate --gold-dir``, like
word-embeddings-benchmarks' ``evaluate_on_all``, but offline: nothing is fetched) and gives each
file a verdict:

- ``verified``: a catalogue name (or any name) whose checksum is the catalogue's;
- ``modified``: a catalogue name whose checksum differs from the catalogue's (a warning: the
  figures are not those of the published file);
- ``unverified``: a catalogue name with no checksum in the catalogue;
- unknown files are returned apart and not evaluated.

A compressed copy (``.gz``, ``.bz2``, ``.xz``) is recognised by the name inside and checked on
its uncompressed bytes.
"""

from __future__ import annotations

import tomllib
from importlib import resources
from pathlib import Path
from typing import NamedTuple

from lexgold.compression import sha256_file
from lexgold.errors import InputError

COMPRESSED = (".gz", ".bz2", ".xz")
#: files above this size are never hashed to recognise a renamed copy (vector files ...)
MAX_HASH_BYTES = 64 * 1024 * 1024


class Entry(NamedTuple):
    """One published data set of the catalogue."""
    key: str
    name: str
    files: tuple
    layout: str
    citation: str
    url: str
    licence: str
    sha256: dict          # file name -> SHA-256, only those computed from real copies


class Match(NamedTuple):
    """A file of the scanned folder that the catalogue knows."""
    path: Path
    entry: Entry
    file: str             # the catalogue's file name
    verdict: str          # verified, modified or unverified
    sha256: str


def load_catalogue(path=None) -> list[Entry]:
    """The catalogue entries, from ``path`` or the packaged ``gold_files.toml``."""
    if path is None:
        text = (resources.files("lexgold.resources") / "data" / "gold_files.toml").read_text(
            encoding="utf-8")
    else:
        text = Path(path).read_text(encoding="utf-8")
    try:
        table = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise InputError(f"not a valid catalogue: {err}", path=path or "gold_files.toml")
    return [Entry(key, item["name"], tuple(item["files"]), item["layout"], item["citation"],
                  item.get("url", ""), item.get("licence", ""), dict(item.get("sha256", {})))
            for key, item in table.items()]


def content_sha256(path: Path) -> str:
    """SHA-256 of the file's (uncompressed) bytes."""
    return sha256_file(path, uncompressed=True)


def _inner_name(path: Path) -> str:
    name = path.name
    for suffix in COMPRESSED:
        if name.lower().endswith(suffix):
            return name[: -len(suffix)]
    return name


def scan_folder(folder, catalogue: list[Entry] | None = None) -> tuple[list[Match], list[Path]]:
    """The known gold files under ``folder`` (recursively) and the files it does not know.

    Parameters
    ----------
    folder : str or Path
    catalogue : list of Entry, optional
        Default: :func:`load_catalogue`.

    Returns
    -------
    (list of Match, list of Path)
        Known files in path order with their verdict (module docstring), and the others.

    Raises
    ------
    InputError
        ``folder`` is not a folder.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError("not a folder", path=folder, field="--gold-dir")
    catalogue = load_catalogue() if catalogue is None else catalogue
    by_name = {file.lower(): (entry, file) for entry in catalogue for file in entry.files}
    by_sum = {digest: (entry, file) for entry in catalogue
              for file, digest in entry.sha256.items()}
    known, unknown = [], []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        named = by_name.get(_inner_name(path).lower())
        if named is None and (path.stat().st_size > MAX_HASH_BYTES or not by_sum):
            unknown.append(path)
            continue
        try:
            digest = content_sha256(path)
        except (OSError, EOFError, InputError):      # an unreadable or broken archive
            unknown.append(path)
            continue
        if named is None:
            if digest in by_sum:                    # a renamed copy of a known file
                entry, file = by_sum[digest]
                known.append(Match(path, entry, file, "verified", digest))
            else:
                unknown.append(path)
            continue
        entry, file = named
        expected = entry.sha256.get(file)
        verdict = ("unverified" if expected is None else
                   "verified" if digest == expected else "modified")
        known.append(Match(path, entry, file, verdict, digest))
    return known, unknown
