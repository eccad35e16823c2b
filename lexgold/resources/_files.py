"""Where the resource files live: a user-given location, else the vendored copies in ``data/``.

The USF and Brysbaert norms ship inside the package as gzip copies of the files exactly as
their authors served them (see ``data/SOURCES.toml`` for citations, original URLs and the
SHA-256 of each uncompressed file).
"""

from __future__ import annotations

import hashlib
import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from lexgold.compression import read_input_bytes

DATA = resources.files("lexgold.resources") / "data"


def sources() -> dict:
    """The parsed ``SOURCES.toml``: one table per vendored resource."""
    return tomllib.loads((DATA / "SOURCES.toml").read_text(encoding="utf-8"))


@dataclass(frozen=True)
class ResourceFile:
    """One file of a resource: its name as distributed, where it was found, its expected checksum."""

    name: str
    location: str
    expected_sha256: str | None

    def read_bytes(self) -> bytes:
        """The file's (decompressed) bytes, read within the limits of a whole read (a gzip
        bomb in a user's folder is one line: :func:`lexgold.compression.read_input_bytes`)."""
        return read_input_bytes(self.location)

    def sha256(self) -> str:
        return hashlib.sha256(self.read_bytes()).hexdigest()


def resource_files(resource: str, directory: str | Path | None = None) -> list[ResourceFile]:
    """The files of ``resource`` (a table name in SOURCES.toml), from ``directory`` or vendored.

    A user directory must hold every file under its distributed name (plain or ``.gz``).
    """
    table = sources()[resource]
    files = []
    for name, digest in table["files"].items():
        if directory is None:
            candidates = [Path(str(DATA / f"{resource}_{name}.gz")), Path(str(DATA / f"{name}.gz"))]
        else:
            candidates = [Path(directory) / name, Path(directory) / f"{name}.gz"]
        found = next((c for c in candidates if c.is_file()), None)
        if found is None:
            where = directory if directory is not None else "the vendored data"
            raise FileNotFoundError(f"{where}: {resource} file {name!r} not found")
        files.append(ResourceFile(name, str(found), digest))
    return files
