"""Where ``lexgold process`` takes its ratings from, and what it knows of their study.

The study database is the single source of truth: it stores, at ``lexgold study create``, the
pairs it rates (after a translation's decisions), the protocol file as it was (with its hash),
the language pack, the layout and the scale. Three sources are read:

- **a study** (a SQLite file or a database URL): the ratings of every rater who finished a
  tranche (as ``lexgold study export`` writes them by default) and the study's description;
- **an export with its description**: ``lexgold study export --out ratings.csv`` also writes
  ``ratings.study.json`` (:func:`description_path`), which ``process`` reads beside the CSV;
- **ratings from elsewhere** (``lexgold ratings import``, another tool): the CSV alone; the
  protocol comes from ``--protocol`` and the pairs, if any, from ``--pairs``.

With a description, the release is checked against the study's own pairs: a pair of the study
with no accepted rating makes the release incomplete (``--allow-incomplete`` writes it
anyway), so an export missing a tranche's rows is never released silently.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from lexgold.compression import read_input_json
from lexgold.errors import InputError
from lexgold.languages.packs import pack_folder
from lexgold.ratings.long import check_ratings, coded, read_ratings


@dataclass
class RatingsSource:
    """Ratings and, when they come from a study, its description."""

    ratings: pd.DataFrame
    label: str                       # the file or database named in messages
    description: dict | None = None  # see lexgold.study.export_sql.study_description
    kind: str = "ratings"            # "study", "export" or "ratings"

    @property
    def pairs(self) -> pd.DataFrame | None:
        """The study's pairs (``word1, word2, pos, topic`` and the pair file's columns)."""
        if self.description is None:
            return None
        frame = pd.DataFrame(self.description["pairs"])
        frame = frame.drop(columns=[c for c in ("consistency",) if c in frame.columns])
        return numeric_pair_columns(frame, self.label)

    def protocol(self) -> dict | None:
        """The study's protocol file, parsed, with ``_path`` (in its pack's folder when the
        pack is on this machine) and ``_sha256`` as :func:`lexgold.protocols.load_protocol`
        gives them."""
        if self.description is None:
            return None
        stored = self.description["protocol"]
        try:
            protocol = tomllib.loads(stored["text"])
        except tomllib.TOMLDecodeError as err:
            raise InputError(f"the study's protocol is not valid TOML: {err}",
                             path=self.label) from None
        pack = self.description.get("pack")
        folder = pack_folder(pack)
        protocol["_path"] = (str(folder / pack["protocol_file"]) if folder is not None
                             else f"<protocol {stored['name'] or '?'} of {self.label}>")
        protocol["_sha256"] = stored["sha256"]
        return protocol


def description_path(ratings_path: str | Path) -> Path:
    """The study description written beside an export: ``ratings.csv`` ->
    ``ratings.study.json``."""
    path = Path(ratings_path)
    return path.with_name(path.stem + ".study.json")


def is_study(text: str | Path) -> bool:
    """A database URL, or a file that is a SQLite database."""
    if "://" in str(text):
        return True
    path = Path(text)
    if not path.is_file():                # a FIFO would block here; its reader refuses it
        return False
    try:
        with path.open("rb") as handle:
            return handle.read(16) == b"SQLite format 3\x00"
    except OSError:
        return False


def read_source(path: str | Path, *, columns: tuple[str, ...] | None = None) -> RatingsSource:
    """The ratings of ``path``: a study, an export (with its description when it is there) or
    a ratings CSV (module docstring); of a file, only ``columns`` besides the required ones
    when given (:func:`lexgold.ratings.long.read_ratings`)."""
    if is_study(path):
        from lexgold.study.db import open_study, session_factory
        from lexgold.study.export import export_ratings
        from lexgold.study.export_sql import study_description

        engine = open_study(path)
        try:
            with session_factory(engine, write=False)() as session:
                ratings = export_ratings(session, complete_only=True)
                description = study_description(session)
        finally:
            engine.dispose()
        label = _shown(path)
        if ratings.empty:
            raise InputError("no rater has finished a tranche of this study yet", path=label)
        if "tuple_id" in ratings.columns:      # Best-Worst answers: checked by process.bws
            return RatingsSource(ratings, label, description, "study")
        return RatingsSource(coded(check_ratings(ratings, source=label)), label, description,
                             "study")
    ratings = read_ratings(path, columns=columns)
    sidecar = description_path(path)
    if not sidecar.is_file():
        return RatingsSource(ratings, str(path))
    try:
        description = read_input_json(sidecar, what="study description")
    except OSError as err:
        raise InputError(f"not a study description: {err}", path=sidecar) from None
    if not isinstance(description, dict) or "pairs" not in description \
            or "protocol" not in description:
        raise InputError("not a study description (written by `lexgold study export`)",
                         path=sidecar, field="pairs")
    return RatingsSource(ratings, str(path), description, "export")


def numeric_pair_columns(frame: pd.DataFrame, source) -> pd.DataFrame:
    """``conc1, conc2, fsg`` of a pair table as numbers (empty -> NaN); one-line error naming
    the line otherwise."""
    for column in ("conc1", "conc2", "fsg"):
        if column in frame.columns:
            text = frame[column].astype(object).where(frame[column].notna(), "")
            values = pd.to_numeric(text.replace("", np.nan), errors="coerce")
            bad = values.isna() & text.astype(str).ne("")
            if bad.any():
                raise InputError(f"expected a number, found {text[bad].iloc[0]!r}", path=source,
                                 line=int(np.flatnonzero(bad)[0]) + 2, field=column)
            frame[column] = values
    return frame


def _shown(path) -> str:
    """A study named in messages: the path, or the URL without its password."""
    from sqlalchemy.engine import make_url

    text = str(path)
    if "://" not in text:
        return text
    try:
        return make_url(text).render_as_string(hide_password=True)
    except Exception:                    # noqa: BLE001 - an unparsable URL is named as given
        return text
