"""The published gold files lexgold reads, and recognising the gold files of a folder.

The catalogue (``lexgold/resources/data/gold_files.toml``) lists, per data set, its name,
citation, licence where it could be checked, where it is distributed, the ``--gold-format``
layout that reads it, the names of its distributed files and the SHA-256 of those files where a
real copy was available to compute it (none is guessed: a file without one is recognised by
name only).

:func:`scan_folder` walks a folder (``lexgold evaluate --gold-dir``, like
word-embeddings-benchmarks' ``evaluate_on_all``, but offline: nothing is fetched). Each file is,
in this order:

1. part of a **lexgold release**: a folder holding ``gold.csv`` with ``datapackage.json`` or
   ``croissant.json`` beside it (``lexgold process``). Its ``gold.csv`` is evaluated, named as
   the release's card names it (``pretty_name`` of ``README.md``, else the data package's
   ``title``, the Croissant ``name``, the folder's name), on the scale its ``report.json``
   declares, checked against the release's ``SHA256SUMS``; every other file of the release
   (the published-layout copy of the same pairs, ``report.json``, ``exclusions.csv``, plots
   ...) is ignored;
2. **not a data file** by its name (README, CITATION.cff, SHA256SUMS, LICENSE, images,
   JSON, Markdown, TOML ..., hidden files and folders such as ``.git``): ignored;
3. a **catalogue file**, by name or checksum, with a verdict: ``verified`` (a catalogue name,
   or any name, whose checksum is the catalogue's), ``modified`` (a catalogue name whose
   checksum differs: the figures are not those of the published file), ``unverified`` (a
   catalogue name with no checksum in the catalogue);
4. any other file that ``lexgold evaluate --gold`` reads (:func:`lexgold.evaluate.gold.read_gold`,
   layout recognised from its content), named by its file name; a file it cannot read is
   ignored, with the reader's reason.

Ignored files are returned with their reason (:class:`Ignored`), not evaluated. A compressed
copy (``.gz``, ``.bz2``, ``.xz``) is recognised by the name inside and checked on its
uncompressed bytes.
"""

from __future__ import annotations

import json
import re
import warnings
from importlib import resources
from pathlib import Path
from typing import NamedTuple

from lexgold.compression import parse_toml, read_input_json, read_input_text, sha256_file
from lexgold.errors import InputError
from lexgold.evaluate.gold import read_gold

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
    """A file of the scanned folder that is evaluated."""
    path: Path
    entry: Entry | None   # the catalogue's data set; None for a release or a file read as is
    file: str             # the catalogue's file name, or the file's own
    verdict: str          # verified, modified or unverified; "" for a file read as is
    sha256: str
    name: str = ""        # the data set's name (catalogue, release card or file name)
    release: dict | None = None   # a lexgold release: name, folder, scale, protocol, simulated

    @property
    def source(self) -> str:
        """``catalogue``, ``lexgold release`` or ``file`` (read as ``--gold`` reads it)."""
        return ("catalogue" if self.entry is not None else
                "lexgold release" if self.release is not None else "file")


class Ignored(NamedTuple):
    """A file of the scanned folder that is not evaluated, and why."""
    path: Path
    reason: str           # not a data file, part of a lexgold release, not word pairs: ...


#: names and suffixes (lower case) of files that are never gold files
NOT_DATA_NAMES = {"sha256sums", "md5sums", "citation.cff", "exclusions.csv", "splits.csv",
                  ".ds_store", "thumbs.db"}
NOT_DATA_PREFIXES = ("readme", "license", "licence", "copying", "changelog", "notice", ".")
NOT_DATA_SUFFIXES = (".md", ".rst", ".html", ".htm", ".pdf", ".png", ".jpg", ".jpeg", ".gif",
                     ".svg", ".json", ".jsonld", ".cff", ".toml", ".yaml", ".yml", ".py", ".sh",
                     ".ipynb", ".bib", ".log", ".zip", ".tar", ".tgz", ".doc", ".docx",
                     ".xls", ".xlsx", ".sqlite", ".db", ".bin", ".npy", ".kv", ".pkl")
#: the reasons of :class:`Ignored`
NOT_DATA, IN_RELEASE, NOT_PAIRS, TOO_LARGE = ("not a data file", "part of a lexgold release",
                                               "not word pairs", "too large for a gold file")


def load_catalogue(path=None) -> list[Entry]:
    """The catalogue entries, from ``path`` or the packaged ``gold_files.toml``."""
    if path is None:
        text = (resources.files("lexgold.resources") / "data" / "gold_files.toml").read_text(
            encoding="utf-8")
    else:
        text = read_input_text(path, encoding="utf-8")
    table = parse_toml(text, path or "gold_files.toml", what="catalogue")
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


def is_release(folder: Path) -> bool:
    """A lexgold release folder: ``gold.csv`` with ``datapackage.json`` or ``croissant.json``."""
    return (folder / "gold.csv").is_file() and any(
        (folder / name).is_file() for name in ("datapackage.json", "croissant.json"))


def _json(path: Path) -> dict:
    try:
        found = read_input_json(path)
    except (OSError, ValueError):          # InputError too: not JSON, nested too deeply
        return {}
    return found if isinstance(found, dict) else {}


def _card_name(folder: Path) -> str:
    """The release's name: ``pretty_name`` of its card, the data package's ``title``, the
    Croissant ``name``, else the folder's name."""
    card = folder / "README.md"
    if card.is_file():
        text = card.read_text(encoding="utf-8", errors="replace")
        front = text.split("\n---", 1)[0] if text.startswith("---") else ""
        found = re.search(r"^pretty_name:\s*(.+?)\s*$", front, re.MULTILINE)
        if found:
            name = found.group(1)
            try:
                return str(json.loads(name)) if name.startswith('"') else name.strip("'")
            except ValueError:
                return name
    for file, key in (("datapackage.json", "title"), ("croissant.json", "name")):
        value = _json(folder / file).get(key)
        if isinstance(value, str) and value:
            return value
    return folder.name


def declared_scale(report: dict, name: str):
    """The scale of the scores that ``report`` (a ``report.json`` of ``lexgold process``)
    declares for its file ``name``, as written (unchecked): ``scale.released``, else the
    protocol's release scale recorded there; None when the report does not list ``name`` or
    declares no scale. :func:`release_scale` and ``lexgold crosslingual`` read it."""
    if name not in (report.get("files") or []):
        return None
    released = (report.get("scale") or {}).get("released")
    release = (report.get("config") or {}).get("release") or {}
    if released is None and release.get("rating_scale", "protocol") == "protocol":
        released = [release.get("score_min"), release.get("score_max")]
    return released


def release_scale(folder: Path) -> list | None:
    """``[min, max]`` of the scores of a release's ``gold.csv``: ``scale.released`` of its
    ``report.json`` (else the protocol's release scale recorded there), as ``lexgold
    crosslingual`` reads it (:func:`lexgold.languages.crosslingual.gold_file_scale`); None when
    the report declares none."""
    released = declared_scale(_json(folder / "report.json"), "gold.csv")
    if (not isinstance(released, list) or len(released) != 2
            or not all(isinstance(v, (int, float)) for v in released)):
        return None
    return [float(v) for v in released]


def _release_match(folder: Path) -> Match:
    """The ``gold.csv`` of a release, checked against its ``SHA256SUMS``."""
    path = folder / "gold.csv"
    digest = content_sha256(path)
    sums = folder / "SHA256SUMS"
    expected = None
    if sums.is_file():
        for line in sums.read_text(encoding="utf-8", errors="replace").splitlines():
            fields = line.split()
            if len(fields) == 2 and fields[1].lstrip("*") == "gold.csv":
                expected = fields[0].lower()
    verdict = ("unverified" if expected is None else
               "verified" if digest == expected else "modified")
    report = _json(folder / "report.json")
    simulated = report.get("simulated")
    release = {"name": _card_name(folder), "folder": str(folder),
               "scale": release_scale(folder), "protocol": report.get("protocol"),
               "simulated": bool(simulated) if simulated is not None else None,
               "expected_sha256": expected}
    return Match(path, None, "gold.csv", verdict, digest, release["name"], release)


def not_data(path: Path) -> bool:
    """A file that is never a gold file, by its name (module docstring, step 2)."""
    name = _inner_name(path).lower()
    return (name in NOT_DATA_NAMES or name.startswith(NOT_DATA_PREFIXES)
            or name.endswith(NOT_DATA_SUFFIXES))


def _reads_as_pairs(path: Path) -> str | None:
    """None when ``lexgold evaluate --gold`` reads ``path``, else the reader's reason."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            read_gold(path)
    except InputError as err:
        return re.sub(r"^:(\d+)", r"line \1", str(err).removeprefix(f"{path}")).lstrip(":, ")
    except (OSError, EOFError, UnicodeDecodeError, ValueError) as err:
        return f"not readable as text ({type(err).__name__})"
    return None


def scan_folder(folder, catalogue: list[Entry] | None = None
                ) -> tuple[list[Match], list[Ignored]]:
    """The gold files under ``folder`` (recursively) and the files it ignores.

    Parameters
    ----------
    folder : str or Path
    catalogue : list of Entry, optional
        Default: :func:`load_catalogue`.

    Returns
    -------
    (list of Match, list of Ignored)
        The files to evaluate, in path order, and the others with their reason (module
        docstring).

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
    paths = sorted(p for p in folder.rglob("*") if p.is_file())
    releases = sorted({p.parent for p in paths if p.name == "gold.csv" and is_release(p.parent)})
    known, ignored = [], []
    for path in paths:
        release = next((r for r in releases if r == path.parent or r in path.parents), None)
        if release is not None:
            if path == release / "gold.csv":
                known.append(_release_match(release))
            else:
                ignored.append(Ignored(path, IN_RELEASE))
            continue
        if not_data(path) or any(part.startswith(".")
                                 for part in path.relative_to(folder).parts[:-1]):
            ignored.append(Ignored(path, NOT_DATA))
            continue
        match = _catalogue_match(path, by_name, by_sum)
        if match is not None:
            known.append(match)
        elif path.stat().st_size > MAX_HASH_BYTES:
            ignored.append(Ignored(path, TOO_LARGE))
        elif (reason := _reads_as_pairs(path)) is not None:
            ignored.append(Ignored(path, f"{NOT_PAIRS}: {reason}"))
        else:
            known.append(Match(path, None, path.name, "", content_sha256(path),
                               _inner_name(path)))
    return known, ignored


def _catalogue_match(path: Path, by_name: dict, by_sum: dict) -> Match | None:
    """The catalogue's verdict on ``path`` (module docstring, step 3), or None."""
    named = by_name.get(_inner_name(path).lower())
    if named is None and (path.stat().st_size > MAX_HASH_BYTES or not by_sum):
        return None
    try:
        digest = content_sha256(path)
    except (OSError, EOFError, InputError):      # an unreadable or broken archive
        return None
    if named is None:
        if digest not in by_sum:
            return None
        entry, file = by_sum[digest]                # a renamed copy of a known file
        return Match(path, entry, file, "verified", digest, entry.name)
    entry, file = named
    expected = entry.sha256.get(file)
    verdict = ("unverified" if expected is None else
               "verified" if digest == expected else "modified")
    return Match(path, entry, file, verdict, digest, entry.name)
