"""Rating logs read into the long format: a user's log in any layout (:func:`read_log`, for
``lexgold crowd fit`` and ``lexgold replay``) and the real logs shipped with lexgold
(``lexgold/resources/data``, SOURCES.toml); and what a fitted crowd records about the log it
was fitted to."""

from __future__ import annotations

import contextlib
import hashlib
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from lexgold import __version__
from lexgold.compression import OPENERS, open_input
from lexgold.errors import InputError

#: name -> (resource in SOURCES.toml, layout of lexgold.ratings.layouts, declared scale);
#: ``aligned`` is Card-660's pair of line-aligned files (:func:`~lexgold.ratings.layouts.read_aligned`)
SHIPPED = {"simverb": ("simverb3500_ratings", "anonymous", (0.0, 6.0)),
           "wordsim353": ("wordsim353_set1", "wide", (0.0, 10.0)),
           "danish": ("danish_similarity", "wide", (0.0, 6.0)),
           "card660": ("card660", "aligned", (0.0, 4.0))}


@contextlib.contextmanager
def plain_copy(path: str | Path):
    """``path`` itself, or a decompressed copy of a compressed file (``.gz``, ``.bz2``, ``.xz``:
    :data:`lexgold.compression.OPENERS`) under its own name, whose stem names anonymous raters
    (errors about the copy name the file given). For the published layouts, read whole: the
    copy stops at the limit of a file read whole (``LEXGOLD_MAX_WHOLE_BYTES``)."""
    path = Path(path)
    if path.suffix.lower() not in OPENERS:
        yield path
        return
    with tempfile.TemporaryDirectory() as folder:
        plain = Path(folder) / path.stem
        with open_input(path, "rb", whole=True) as source, open(plain, "wb") as out:
            shutil.copyfileobj(source, out)
        try:
            yield plain
        except InputError as err:
            raise InputError(str(err).replace(str(plain), str(path))) from None


def read_log(path: str | Path, layout: str | None = None) -> pd.DataFrame:
    """A rating log as a long-format frame: lexgold's long CSV (read and checked by
    :func:`lexgold.ratings.long.read_ratings`) or a layout that ``lexgold ratings import`` reads
    (:mod:`lexgold.ratings.layouts`: WordSim-353's one column per rater, SimVerb-3500's
    anonymous ratings, ...), recognised from its first line unless ``layout`` names it; plain or
    compressed. A long CSV is streamed from the file given (compressed or not) in parts of
    bounded text, its keys made categorical codes as they are read (each distinct rater,
    tranche and word held once: :func:`lexgold.ratings.long.read_ratings`), only the columns
    the cost tools use kept (:data:`lexgold.ratings.long.COST_COLUMNS`); a published
    layout is read whole from a decompressed copy (:func:`plain_copy`, bounded).

    Raises
    ------
    InputError
        Naming the file given (not a decompressed copy), the line and the field at fault.
    """
    from lexgold.ratings.detect import detect_layout
    from lexgold.ratings.layouts import read_layout
    from lexgold.ratings.long import COST_COLUMNS, read_ratings

    path = Path(path)
    if not path.is_file():
        raise InputError("file not found", path=path)
    layout = layout or detect_layout(path)
    if layout == "long":
        frame = read_ratings(path, columns=COST_COLUMNS)
    else:
        with plain_copy(path) as plain:
            frame = read_layout(plain, layout).frame
    return check_log_ratings(frame, path, lines=layout == "long")


#: no rating scale reaches this far from 0 (as ``--scale``, :data:`lexgold.cliutil.SCALE_BOUND`)
RATING_BOUND = 1e6


def check_log_ratings(frame: pd.DataFrame, path, *, lines: bool) -> pd.DataFrame:
    """``frame`` when every rating is finite and inside the log's scale: the row's declared
    ``scale_min .. scale_max``, else within :data:`RATING_BOUND` of 0 (a rating of 1e308
    makes every mean and variance of a replay meaningless).

    Raises
    ------
    InputError
        The first rating outside, naming the file and, with ``lines`` (one row a line, header
        line 1), the line.
    """
    values = frame["rating"].to_numpy(dtype=float)
    low = np.full(len(values), -RATING_BOUND)
    high = np.full(len(values), RATING_BOUND)
    if "scale_min" in frame.columns:
        declared = frame["scale_min"].notna().to_numpy()
        low[declared] = frame["scale_min"].to_numpy(dtype=float)[declared]
        high[declared] = frame["scale_max"].to_numpy(dtype=float)[declared]
    bad = ~((values >= low) & (values <= high))
    if "kind" in frame.columns:
        bad &= (frame["kind"].astype(str) != "checkpoint").to_numpy()
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise InputError(f"rating {values[row]:g} is outside the log's scale "
                         f"{low[row]:g}..{high[row]:g}", path=path,
                         line=row + 2 if lines else None, field="rating")
    return frame


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
    """SHA-256 of a file's content (of the decompressed content of a compressed file, as
    :func:`read_log` reads it)."""
    digest = hashlib.sha256()
    with open_input(path, "rb", lines=False) as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def log_record(frame: pd.DataFrame, *, file: str, sha256: str, scale, anonymous: bool) -> dict:
    """What a crowd records about the log it was fitted to."""
    from lexgold.crowd.model import anonymous_ids

    named = frame.loc[~anonymous_ids(frame["rater_id"]), "rater_id"]
    return {"file": file, "sha256": sha256,
            "pairs": int(frame[["word1", "word2"]].drop_duplicates().shape[0]),
            "ratings": int(len(frame)),
            "raters": "anonymous" if anonymous else int(named.nunique()),
            "scale": [float(scale[0]), float(scale[1])], "lexgold_version": __version__}
