"""The real rating logs shipped with lexgold (``lexgold/resources/data``, SOURCES.toml), read
into the long format, and what a fitted crowd records about the log it was fitted to."""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import tempfile
from pathlib import Path

import pandas as pd

from lexgold import __version__
from lexgold.errors import InputError

#: name -> (resource in SOURCES.toml, layout of lexgold.ratings.layouts, declared scale);
#: ``aligned`` is Card-660's pair of line-aligned files (:func:`~lexgold.ratings.layouts.read_aligned`)
SHIPPED = {"simverb": ("simverb3500_ratings", "anonymous", (0.0, 6.0)),
           "wordsim353": ("wordsim353_set1", "wide", (0.0, 10.0)),
           "danish": ("danish_similarity", "wide", (0.0, 6.0)),
           "card660": ("card660", "aligned", (0.0, 4.0))}


@contextlib.contextmanager
def plain_copy(path: str | Path):
    """``path`` itself, or a decompressed copy of a ``.gz`` file under its own name (errors
    about the copy name the file given)."""
    path = Path(path)
    if path.suffix != ".gz":
        yield path
        return
    with tempfile.TemporaryDirectory() as folder:
        plain = Path(folder) / path.stem
        try:
            plain.write_bytes(gzip.decompress(path.read_bytes()))
        except (OSError, EOFError) as err:
            raise InputError(f"not a gzip file ({err})", path=path) from None
        try:
            yield plain
        except InputError as err:
            raise InputError(str(err).replace(str(plain), str(path))) from None


def read_published(path: str | Path, layout: str) -> pd.DataFrame:
    """A published layout (``lexgold.ratings.layouts``) read into long-format rows, plain or
    ``.gz``."""
    from lexgold.ratings.layouts import read_layout

    with plain_copy(path) as plain:
        return read_layout(plain, layout).frame


def shipped_log(name: str) -> tuple[pd.DataFrame, dict]:
    """A shipped log (a name of :data:`SHIPPED`) in the long format, with its record
    (:func:`log_record`) and declared scale. Card-660's record names its ratings file."""
    from lexgold.resources._files import resource_files

    if name not in SHIPPED:
        raise InputError(f"expected one of {', '.join(SHIPPED)}, found {name!r}", field="log")
    resource, layout, scale = SHIPPED[name]
    if layout == "aligned":
        from lexgold.ratings.layouts import read_aligned

        pairs, found = resource_files(resource)
        with plain_copy(pairs.location) as words, plain_copy(found.location) as ratings:
            frame = read_aligned(words, ratings, tranche=name).frame
    else:
        (found,) = resource_files(resource)
        frame = read_published(found.location, layout)
    record = {"file": found.name, "sha256": found.sha256(), "resource": resource,
              "scale": list(scale)}
    return frame, record


def file_sha256(path: str | Path) -> str:
    """SHA-256 of a file's content (of the decompressed content for ``.gz``)."""
    data = Path(path).read_bytes()
    if str(path).endswith(".gz"):
        data = gzip.decompress(data)
    return hashlib.sha256(data).hexdigest()


def log_record(frame: pd.DataFrame, *, file: str, sha256: str, scale, anonymous: bool) -> dict:
    """What a crowd records about the log it was fitted to."""
    from lexgold.crowd.model import anonymous_ids

    named = frame.loc[~anonymous_ids(frame["rater_id"]), "rater_id"]
    return {"file": file, "sha256": sha256,
            "pairs": int(frame[["word1", "word2"]].drop_duplicates().shape[0]),
            "ratings": int(len(frame)),
            "raters": "anonymous" if anonymous else int(named.nunique()),
            "scale": [float(scale[0]), float(scale[1])], "lexgold_version": __version__}
