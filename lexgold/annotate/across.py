"""``lexgold study rehearse STUDY --across-crowds``: one study rehearsed once per shipped crowd.

Real crowds differ (docs/process.md, "The crowd model": WordSim-353's 13 raters are far less
noisy relative to their scale than SimVerb-3500's crowd workers), so one crowd's rehearsal is
one point. Here the study is rehearsed by each crowd of :data:`lexgold.crowd.crowds.ACROSS`
(the default crowd, then the crowd fitted to each shipped log alone) and what ``lexgold
process`` releases from each rehearsal is measured; the answer is the range across them
(issue 46).

Each rehearsal runs on its own copy of the study, made by SQLite's online backup
(:func:`lexgold.study.db.backup_study`) into a temporary folder, with a generator seeded
afresh from the same seed (the same study and seed give the same figures); the study itself is
left as it was. A PostgreSQL study has no file to copy and is refused.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Callable

import numpy as np
from sqlalchemy.engine import make_url

from lexgold.annotate.rehearse import rehearse
from lexgold.crowd.crowds import ACROSS
from lexgold.crowd.simulate import Crowd
from lexgold.errors import InputError
from lexgold.process.run_report import BwsReport
from lexgold.study.db import backup_study, database_url

#: the rehearsal's figures kept per crowd (from :func:`lexgold.annotate.rehearse.rehearse`)
REHEARSAL = ("raters", "completed", "quit", "screened_out", "turned_away", "expired",
             "places", "top_up_places", "pages", "requests", "simulated_hours", "finished")
#: the figures whose range across crowds is reported
RANGED = ("raters", "screened_out", "top_up_places", "pages", "simulated_hours",
          "released_pairs", "fewest_accepted_raters", "excluded_raters", "iaa1", "iaa2")


def sqlite_file(study) -> Path:
    """The SQLite file of ``study``; a PostgreSQL study is an :class:`InputError`."""
    url = make_url(database_url(study, must_exist=True))
    if url.get_backend_name() != "sqlite" or not url.database:
        raise InputError("--across-crowds rehearses copies of a SQLite study file, and a "
                         "PostgreSQL study has none: create the study in SQLite from the same "
                         "pairs and protocol (`lexgold study create --db study.sqlite`) and "
                         "rehearse that", field="--across-crowds")
    return Path(url.database)


def release_figures(report) -> dict:
    """What ``lexgold process`` released (``report``: its :class:`ProcessReport`, or a
    Best-Worst study's :class:`BwsReport`): pairs released, fewest accepted raters of a pair,
    raters excluded, IAA-1 and IAA-2 of the accepted raters, complete. A Best-Worst release
    counts answers per pair, not raters, and has no IAA: those are None."""
    counts = report.counts
    if isinstance(report, BwsReport):
        return {"released_pairs": int(counts.pairs), "fewest_accepted_raters": None,
                "excluded_raters": int(counts.raters_excluded), "iaa1": None, "iaa2": None,
                "complete": not report.warnings}
    final = report.agreement["final"]
    return {"released_pairs": int(counts.released_pairs),
            "fewest_accepted_raters": int(counts.min_raters_per_pair),
            "excluded_raters": int(counts.excluded_raters),
            "iaa1": plain(final.get("iaa1")), "iaa2": plain(final.get("iaa2")),
            "complete": not report.release_check.problems}


def plain(value) -> float | None:
    """A figure as JSON holds it: None for a missing or not finite one."""
    return None if value is None or not np.isfinite(value) else float(value)


def crowd_range(rows: list[dict], figures=RANGED) -> dict:
    """Per figure, the lowest and highest value across ``rows`` (one per crowd) and the crowds
    that gave them (the first in ``rows``' order on a tie); None where no row has the figure."""
    out = {}
    for name in figures:
        given = [(row[name], row["crowd"]) for row in rows if row.get(name) is not None]
        if not given:
            out[name] = None
            continue
        low = min(given, key=lambda item: item[0])
        high = max(given, key=lambda item: item[0])
        out[name] = {"min": low[0], "max": high[0], "min_crowd": low[1], "max_crowd": high[1]}
    return out


def rehearse_across(study, *, seed: int, crowd_keys: dict | None = None,
                    arrivals_per_hour: float = 120.0, max_raters: int | None = None,
                    crowds=ACROSS, progress_for: Callable | None = None) -> dict:
    """Rehearse ``study`` once per crowd of ``crowds`` on copies and process each (module
    docstring).

    ``crowd_keys``: the other keys of :class:`lexgold.crowd.simulate.Crowd` (spammers,
    quitters, recall, seconds per pair), the same for every crowd. ``progress_for(name)``
    gives the ``progress`` callable of the rehearsal by crowd ``name`` (None: none).

    Returns
    -------
    dict
        ``crowds``: one dict per crowd, its rehearsal's figures (:data:`REHEARSAL`) and its
        release's (:func:`release_figures`); ``range``: :func:`crowd_range` of them.
    """
    from lexgold.process.pipeline import run

    source = sqlite_file(study)
    keys = dict(crowd_keys or {})
    chosen = [Crowd(model=name, **keys) for name in crowds]      # a bad key fails first
    rows = []
    with tempfile.TemporaryDirectory(prefix="lexgold-across-") as folder:
        for crowd in chosen:
            name = str(crowd.model)
            copy = Path(folder) / f"{name}.sqlite"
            backup_study(source, copy)
            result = rehearse(database_url(copy), rng=np.random.default_rng(seed), crowd=crowd,
                              arrivals_per_hour=arrivals_per_hour, max_raters=max_raters,
                              progress=progress_for(name) if progress_for else None)
            report = run(copy, None, Path(folder) / f"{name}-gold", seed=seed, plots=False,
                         allow_incomplete=True)
            rows.append({"crowd": name, "spammers": crowd.spam_share,
                         **{key: result[key] for key in REHEARSAL},
                         **release_figures(report)})
    return {"crowds": rows, "range": crowd_range(rows)}
