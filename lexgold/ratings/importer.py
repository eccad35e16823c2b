"""``lexgold ratings import``: published rating files in, one long-format CSV out.

Each file's layout is recognised from the file (:func:`lexgold.ratings.detect.detect_layout`)
unless named. Raters of different files are different people (WordSim-353 set1 and set2 were
rated by different subjects): wide files give rater ids ``<file stem>:<column>``. A declared
source scale (``--scale MIN MAX``) is checked and recorded in ``scale_min, scale_max``; the
ratings themselves are written as read, and ``lexgold process`` maps them onto the protocol's
scale. Without a declared scale nothing is rescaled.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from lexgold.cliutil import plural
from lexgold.errors import InputError
from lexgold.ratings import ITEM
from lexgold.ratings.detect import LABELS, detect_layout
from lexgold.ratings.layouts import common_tranche, read_layout
from lexgold.ratings.lines import Imported
from lexgold.ratings.long import COLUMNS
from lexgold.ratings.overlap import map_words
from lexgold.stats import trimmed_1sd


def import_ratings(paths: list[str | Path], *, layout: str | None = None,
                   tranche: str | None = None,
                   scale: tuple[float, float] | None = None,
                   word_map: dict[str, str] | None = None
                   ) -> tuple[pd.DataFrame, list[Imported]]:
    """Read raw rating files into one long-format frame.

    Parameters
    ----------
    paths : list of str or Path
        The files, in any of the layouts of :mod:`lexgold.ratings.layouts`.
    layout : str, optional
        Force one layout for every file; default: recognised per file.
    tranche : str, optional
        Tranche of the one-file-per-rater files (default: the common prefix of their stems,
        else ``1``).
    scale : (float, float), optional
        The sources' declared rating scale; a rating outside it is an error.
    word_map : dict, optional
        Words to respell, ``from -> to`` (:func:`lexgold.ratings.overlap.read_word_map`), so
        that files spelling the same items differently (MEN's natural and lemma forms) name
        the same pairs; each file's notes count what was changed.

    Returns
    -------
    (pandas.DataFrame, list of Imported)
        The long-format rows (``rater_id, tranche, word1, word2, rating, kind`` and
        ``scale_min, scale_max`` when declared) and one :class:`Imported` per file.

    Raises
    ------
    InputError
        Naming the file, line and value of anything that cannot be read.
    """
    paths = [Path(p) for p in paths]
    if not paths:
        raise InputError("no files to import", field="FILE")
    if scale is not None and not scale[0] < scale[1]:
        raise InputError(f"need MIN < MAX, found {scale[0]:g} {scale[1]:g}", field="--scale")
    layouts = [layout or detect_layout(p) for p in paths]
    per_rater = [p for p, kind in zip(paths, layouts) if kind == "per-rater"]
    group = tranche or common_tranche(per_rater)
    stems = [p.stem for p, kind in zip(paths, layouts) if kind in ("wide", "per-rater",
                                                                   "anonymous", "hyperlex")]
    twice = sorted({s for s in stems if stems.count(s) > 1})
    if twice:
        raise InputError(f"two files named {twice[0]!r}: rater ids come from file names, "
                         f"so rename one", field="FILE")
    imported = [read_layout(p, kind, tranche=group) for p, kind in zip(paths, layouts)]
    for item, path in zip(imported, paths):
        if item.frame.empty:
            raise InputError("no ratings: the file has no rows below its header", path=path,
                             line=2)
        if item.published:
            item.notes.append(published_rule_note(item))
    if word_map:
        for item in imported:
            item.frame, words, rows = map_words(item.frame, word_map)
            if words:
                item.notes.append(f"{plural(words, 'word')} on {plural(rows, 'row')} respelled "
                                  f"by the --map file")
    if scale is not None:
        for item in imported:
            _check_scale(item, scale)
            item.frame["scale_min"], item.frame["scale_max"] = float(scale[0]), float(scale[1])
    frame = pd.concat([item.frame for item in imported], ignore_index=True)
    columns = [c for c in COLUMNS if c in frame.columns]
    return frame[columns], imported


def _check_scale(item: Imported, scale: tuple[float, float]) -> None:
    frame = item.frame
    outside = (frame["kind"] != "checkpoint") & ((frame["rating"] < scale[0])
                                                | (frame["rating"] > scale[1]))
    if outside.any():
        row = frame[outside].iloc[0]
        raise InputError(f"rating {row['rating']:g} is outside the declared scale "
                         f"{scale[0]:g}-{scale[1]:g}", path=item.path, line=int(row["_line"]),
                         field=str(row["_field"]))


def reproduced(item: Imported) -> dict[str, int]:
    """On how many rows of :attr:`Imported.published` each rule of ``[process] aggregate``
    that needs no rater identity (the plain mean; Rare Words' ``trimmed_1sd``,
    :func:`lexgold.stats.trimmed_1sd`) gives the published score to its printed
    decimals (a tie such as 8.625 printed 8.62 or 8.63 counts either way)."""
    ratings = item.frame[item.frame["kind"] != "checkpoint"].groupby("_line")["rating"]
    rules = {"mean": lambda values: float(np.mean(values)), "trimmed_1sd": trimmed_1sd}
    counts = dict.fromkeys(rules, 0)
    for line, score, decimals in item.published:
        values = ratings.get_group(line).to_numpy(dtype=float)
        for name, rule in rules.items():
            counts[name] += abs(rule(values) - score) <= 0.5 * 10 ** -decimals + 1e-9
    return counts


def published_rule_note(item: Imported) -> str:
    """The summary's phrase on a published score column: which rule reproduces it."""
    counts, rows = reproduced(item), len(item.published)
    best = max(counts, key=counts.get)
    other = min(counts, key=counts.get)
    verdict = (f"it follows {RULE_NAMES[best]}" if counts[best] > counts[other]
               and 2 * counts[best] > rows else "neither rule reproduces most rows")
    return (f"no header: field 3 is the published score, not a rating; the plain mean of the "
            f"ratings gives it on {counts['mean']} of {rows} rows, the mean within one SD of "
            f"their mean (aggregate = \"trimmed_1sd\", Rare Words' rule) on "
            f"{counts['trimmed_1sd']} (to its printed decimals): {verdict}")


#: how the import summary names the rules
RULE_NAMES = {"mean": "the plain mean", "trimmed_1sd": "trimmed_1sd"}


def summary(item: Imported, scale: tuple[float, float] | None = None) -> str:
    """One line: file, layout, raters, pairs, ratings, scale seen, what was normalised."""
    frame = item.frame
    rated = frame[frame["kind"] != "checkpoint"]
    raters = ("" if item.layout in ("anonymous", "hyperlex") else
              plural(rated["rater_id"].nunique(), "rater") + ", ")
    seen = (f"scale seen {rated['rating'].min():g}-{rated['rating'].max():g}" if len(rated)
            else "no ratings")
    declared = (f" (declared {scale[0]:g}-{scale[1]:g})" if scale else
                " (not declared: not rescaled)")
    line = (f"{item.path.name}: {LABELS[item.layout]}, {raters}"
            f"{plural(len(rated[ITEM].drop_duplicates()), 'pair')}, "
            f"{plural(len(rated), 'rating')}, {seen}"
            f"{declared}")
    if item.notes:
        line += "; " + "; ".join(item.notes)
    return line


def shared_pairs(frame: pd.DataFrame) -> int:
    """Pairs rated by more than one rater (MEN's two files do not list the same pairs)."""
    rated = frame[frame["kind"] != "checkpoint"]
    per_pair = rated.groupby(ITEM)["rater_id"].nunique()
    return int((per_pair > 1).sum())
