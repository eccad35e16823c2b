"""Study figures: what the admin view and live recruitment show, computed once, off the raters'
requests, and stored in the study database for every server process and host.

One computation (:func:`compute`) reads the answers once (:func:`~lexgold.study.export.
export_ratings`), runs the protocol's exclusion rules once, over the raters who completed their
tranche (HyperLex section 4.5; the same raters ``lexgold process`` would judge), and derives
from them, with vectorised pandas and SQL aggregates:

- per tranche: slots, completed, excluded, accepted and missing raters against
  ``min_accepted_raters`` (HyperLex section 4.4, :mod:`lexgold.live.recruit`), IAA-1 and
  IAA-2 (HyperLex section 5; SimLex-999 section 3.5), median completion minutes;
- the pairs below the minimum of accepted raters;
- the exclusions preview and the quality flags per rater (:mod:`lexgold.process.quality`),
  with each rater's platform and platform ID.

:func:`refresh` recomputes them only when the study changed: the version key counts the slots,
the completed slots and the last answer ids. With ``[study] allocation = "adaptive"`` it also
draws the allocation's picture and adds the next top-up tranche once no slot is open
(:func:`lexgold.live.allocator.refresh_step`). It also tops up recruitment, as the site did in the
request of the rater who completed a tranche's last slot: when a tranche has become fully
completed since the stored figures, every tranche short of accepted raters gets new slots
(:func:`lexgold.live.recruit.top_up`'s rule; concurrent refreshers collide on (tranche,
number) and add nothing twice). ``lexgold serve`` runs :func:`watch` in a child process
(:func:`start_refresher`; its own interpreter, so no GIL is shared with the raters' requests,
computing at a lower priority, writing at the server's), at most every ``--figures-every`` seconds, and waiting at least
:data:`BACKOFF` times as long as the last computation took (so it uses at most a fifth of a
core); ``lexgold study figures`` runs it by hand or as a loop
(``--watch``) on another host. The admin view only reads the stored figures (:func:`load`):
one row with what the page shows (long lists cut at :data:`SHOWN`), one with the full lists.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from datetime import datetime

import numpy as np
import pandas as pd
from sqlalchemy import case, func, insert, select, update
from sqlalchemy.orm import Session

from lexgold.errors import InputError
from lexgold.study import models as m
from lexgold.live import dashboard as d
from lexgold.live import dashboard_svg as svg
from lexgold.live import tally
from lexgold.live.dashboard import marked
from lexgold.live.quiet import collected_warnings
from lexgold.study.config import StudyConfig
from lexgold.study.export import export_ratings
from lexgold.process import exclusions
from lexgold.process.config import process_config
from lexgold.process.plan import reliability_curve
from lexgold.process.agreement import iaa_against_mean, iaa_pairwise
from lexgold.process.reliability import icc, krippendorff_alpha
from lexgold.process.quality import quality_flags

#: the rows of ``study_figures``: what the admin page shows (long lists cut at :data:`SHOWN`,
#: marked raters first), and the full lists (``quality.csv``, ``study report``)
ROW_ID, DETAILS_ID = 1, 2
#: rows of each long list on the admin page
SHOWN = 200
LISTS = ("quality", "exclusions", "pairs_below")
#: ``lexgold serve --figures-every`` default (seconds)
EVERY_S = 5.0
#: a refresher waits at least this many times its last computation before the next
BACKOFF = 4.0
TRANCHE_FIELDS = [*tally.TRANCHE_COLUMNS, "iaa1", "iaa2", "alpha_interval", "icck",
                  "median_minutes"]


@dataclass
class Stored:
    """Figures as stored: the version key they were computed from, when, and the figures."""

    version: str
    computed_at: datetime
    figures: dict


def version_key(session: Session) -> dict:
    """What the figures depend on, from four index lookups and one count: ``slots``,
    ``completed`` (slots), ``answer`` and ``checkpoint`` (the last answer ids)."""
    slots, completed = session.execute(select(
        func.count(), func.coalesce(func.sum(case((m.Slot.status == "completed", 1), else_=0)),
                                    0)).select_from(m.Slot)).one()
    answer = session.scalar(select(func.coalesce(func.max(m.Answer.id), 0)))
    checkpoint = session.scalar(select(func.coalesce(func.max(m.CheckpointAnswer.id), 0)))
    return {"slots": int(slots), "completed": int(completed), "answer": int(answer),
            "checkpoint": int(checkpoint)}


#: the figures' layout: stored figures of another layout are recomputed whatever their key
LAYOUT = 2


def _key_text(key: dict) -> str:
    return f"{LAYOUT}:" + "{slots}:{completed}:{answer}:{checkpoint}".format(**key)


def compute(session: Session, config: StudyConfig, protocol: dict, *,
            admin: bool = True, previous: dict | None = None) -> dict:
    """Every figure of the admin view and recruitment (module docstring), JSON-ready; with
    ``admin=False`` only recruitment's (``tranches`` without agreement and completion times,
    ``full``; the rest empty), for a top-up. ``previous``: the stored figures, whose
    agreement curve points are reused (:func:`lexgold.live.dashboard.growth`).

    Returns
    -------
    dict
        ``n_answers`` (answers; Best-Worst: answered tuples); ``n_rows`` (answer rows,
        :func:`lexgold.live.tally.stored_rows`, what the admin view compares with its live
        count); ``min_accepted_raters``; ``too_fast_s`` (:func:`too_fast_s`);
        ``tranches`` (one dict per tranche with
        :data:`TRANCHE_FIELDS`; NaN as None); ``full`` (tranches without an open slot);
        ``pairs_below`` (``word1, word2, pos, accepted``); ``note`` (the rules not yet
        computable, :func:`lexgold.live.tally.exclusion_forecast`); ``exclusions`` (rows
        of :func:`lexgold.process.exclusions.exclusion_table` with ``platform, platform_id``;
        the rules not yet computable exclude nobody); ``quality`` (rows of
        :func:`lexgold.process.quality.quality_flags` with ``tranche, platform, platform_id``).
    """
    rows = tally.stored_rows(session)  # first: answers stored meanwhile count as "since"
    ratings = export_ratings(session)
    raters = pd.DataFrame(session.execute(select(
        m.Rater.public_id, m.Rater.platform, m.Rater.external_id,
        m.Rater.completed_at)).all(),
        columns=["rater_id", "platform", "platform_id", "completed_at"])
    raters["done"] = raters["completed_at"].notna()
    slots, shown = tally.slot_frame(session), tally.shown_frame(session)
    minutes = completion_minutes(session) if admin else _none("median_minutes")
    session.commit()                   # end the read: SQLite holds its snapshot until then
    raters["platform_id"] = raters["platform_id"].fillna("")
    complete = ratings[ratings["rater_id"].isin(raters.loc[raters["done"], "rater_id"])]
    table, note = tally.exclusion_forecast(complete, protocol)
    excluded = set() if table is None else set(exclusions.excluded_raters(table))
    found = tally.tally(slots, shown, excluded, config.min_accepted_raters)
    notes: list[str] = []
    bws = config.task == "bws"     # Best-Worst answers: no IAA or slider quality flags
    if bws:
        notes.append("Best-Worst Scaling: agreement is the split-half reliability of "
                     "`lexgold process` (docs/process.md), not IAA")
    tranches = found["tranches"].merge(
        agreement(ratings, notes) if admin and not bws
        else _none("iaa1", "iaa2", "alpha_interval", "icck"),
        on="tranche", how="left").merge(minutes, on="tranche", how="left")[TRANCHE_FIELDS]
    ids = raters[["rater_id", "platform", "platform_id"]]
    answered = ratings.groupby(["rater_id", "tranche", "tuple_id"]).ngroups if bws \
        else len(ratings)                     # BWS: answered tuples (check tuples included)
    flags = quality(ratings, ids) if admin and not bws else pd.DataFrame()
    found = {"n_answers": answered, "n_rows": rows, "min_accepted_raters": config.min_accepted_raters,
            "too_fast_s": too_fast_s(protocol, config), "tranches": _records(tranches),
            "full": [int(t) for t in tranches.loc[tranches["open"] == 0, "tranche"]],
            "pairs_below": _records(found["pairs_below"]),
            "note": note, "n_excluded": len(excluded),
            "exclusions": (_records(table.merge(ids, on="rater_id", how="left"))
                           if table is not None else []),
            "quality": _records(flags),
            "agreement_notes": notes}
    if admin:
        found["dashboard"] = dashboard(config, ratings[ratings["rater_id"].isin(
            raters.loc[raters["done"], "rater_id"])], raters, flags, excluded,
            found["too_fast_s"], sum(int(t["slots"]) for t in found["tranches"]),
            len(found["tranches"]), ((previous or {}).get("dashboard") or {}).get("growth"))
    return found


def dashboard(config: StudyConfig, complete: pd.DataFrame, raters: pd.DataFrame,
              flags: pd.DataFrame, excluded: set[str], too_fast: float, target: int,
              n_tranches: int, known: list[dict] | None = None) -> dict:
    """The admin dashboard's charts (:mod:`lexgold.live.dashboard`, drawn by
    :mod:`lexgold.live.dashboard_svg`) and their text alternatives, from the completed
    raters' ratings; a Best-Worst study has completions only (its answers are choices, not
    values: its agreement is ``lexgold process``'s split-half)."""

    done = raters.set_index("rater_id")["completed_at"]
    points = d.completions(done)
    points["at"] = points["at"].dt.strftime("%Y-%m-%dT%H:%M:%S+00:00")
    out = {"completions": _records(points), "per_day": _records(d.per_day(done)),
           "svg": {"completions": svg.completions_chart(_records(points), target)}}
    if config.task == "bws":
        return out
    counts = d.rating_counts(complete, config.scale_min, config.scale_max)
    people = d.rater_quality(complete, flags, too_fast, excluded)
    growth = d.growth(complete, done, known)
    pilot, curve = d.pilot(complete, done, n_tranches), None
    if pilot is not None:
        try:
            with collected_warnings():
                curve = _records(reliability_curve(pilot, rng=np.random.default_rng(0),
                                                   replicates=0)[["raters", "reliability"]])
        except InputError:                    # too few pairs or raters yet
            curve = None
    pairs = int(complete.drop_duplicates(["word1", "word2", "pos"]).shape[0]) if len(complete) \
        else 0
    rated = complete[complete["kind"] != "checkpoint"] if len(complete) else complete
    per_rater = len(rated) / max(rated["rater_id"].nunique(), 1) if len(rated) else 0
    budget = int(round(target * per_rater))       # ratings once every place is completed
    flagged = people["marked"] | people["excluded"] if len(people) else pd.Series(dtype=bool)
    summary = [{"raters": label, "n": int(part.shape[0]),
                "agreement": _plain(part["agreement"].median()),
                "median_s": _plain(part["median_s"].median())}
               for label, part in (("flagged", people[flagged]), ("others", people[~flagged]))
               ] if len(people) else []
    out.update({"ratings": _records(counts), "growth": _records(growth), "planner": curve,
                "pilot_raters": d.PILOT_PER_TRANCHE * n_tranches,
                "quality_summary": summary})
    out["svg"].update({"ratings": svg.ratings_chart(out["ratings"]),
                       "quality": svg.quality_chart(_records(people), too_fast),
                       "growth": svg.growth_chart(out["growth"], curve, pairs, budget)})
    return out


def too_fast_s(protocol: dict, config: StudyConfig) -> float:
    """Seconds per pair below which a rater is marked too fast: the protocol's
    ``too_fast_s_per_pair`` when set, else the study's ``min_seconds_per_pair``."""
    limit = process_config(protocol).exclusions.too_fast_s_per_pair
    return float(limit or config.min_seconds_per_pair)


def _none(*columns: str) -> pd.DataFrame:
    """No figure for any tranche: ``tranche`` and ``columns``, no rows."""
    return pd.DataFrame({"tranche": pd.Series(dtype="int64"),
                         **{c: pd.Series(dtype=float) for c in columns}})


def agreement(ratings: pd.DataFrame, notes: list[str] | None = None) -> pd.DataFrame:
    """IAA-1 and IAA-2 per tranche (HyperLex section 5), Krippendorff's interval alpha and
    ICC(2,k) (:mod:`lexgold.process.reliability`), NaN where undefined; why a figure is
    undefined goes to ``notes`` (the admin page shows them; never the log)."""
    rows = []
    rated = ratings[ratings["kind"] != "checkpoint"] if len(ratings) else ratings
    columns = ["tranche", "iaa1", "iaa2", "alpha_interval", "icck"]
    alone = []
    for tranche, frame in rated.groupby("tranche"):
        if frame["rater_id"].nunique() < 2:    # one rater: nothing to agree with yet, said
            rows.append({"tranche": tranche})  # once for all such tranches, not per figure
            alone.append(str(tranche))
            continue
        with collected_warnings() as caveats:
            rows.append({"tranche": tranche, "iaa1": iaa_pairwise(frame),
                         "iaa2": iaa_against_mean(frame),
                         "alpha_interval": krippendorff_alpha(frame, "interval"),
                         "icck": icc(frame)["icck"]})
        if notes is not None:
            notes.extend(f"tranche {tranche}: {caveat}" for caveat in caveats)
    if notes is not None and alone:
        notes.append(f"IAA-1, IAA-2, alpha and ICC compare the raters of a tranche: "
                     f"{'tranche' if len(alone) == 1 else 'tranches'} {', '.join(alone)} "
                     f"{'has' if len(alone) == 1 else 'have'} one rater so far")
    return pd.DataFrame(rows, columns=columns)


def quality(ratings: pd.DataFrame, ids: pd.DataFrame) -> pd.DataFrame:
    """Quality flags per rater (:func:`lexgold.process.quality.quality_flags`) with the
    rater's tranche (the one most of its answers are in; the lowest on a tie), platform and
    platform ID; raters in tranche order."""
    if ratings.empty:
        return pd.DataFrame()
    flags = quality_flags(ratings)
    counts = ratings.groupby(["rater_id", "tranche"]).size().rename("n").reset_index()
    counts = counts.sort_values(["rater_id", "n", "tranche"], ascending=[True, False, True],
                                kind="stable").drop_duplicates("rater_id")
    flags = flags.merge(counts[["rater_id", "tranche"]], on="rater_id", how="left")
    flags = flags.sort_values(["tranche", "rater_id"], kind="stable")
    return flags.merge(ids, on="rater_id", how="left")


def completion_minutes(session: Session) -> pd.DataFrame:
    """Median minutes from entering (consent) to completion, per tranche, completed raters."""
    rows = session.execute(
        select(m.Tranche.number, m.Rater.created_at, m.Rater.completed_at)
        .join(m.Slot, (m.Slot.id == m.Rater.slot_id) & (m.Slot.rater_id == m.Rater.id))
        .join(m.Tranche, m.Tranche.id == m.Slot.tranche_id)
        .where(m.Rater.completed_at.is_not(None))).all()
    frame = pd.DataFrame(rows, columns=["tranche", "created_at", "completed_at"])
    frame["minutes"] = (pd.to_datetime(frame["completed_at"]) -
                        pd.to_datetime(frame["created_at"])).dt.total_seconds() / 60.0
    return frame.groupby("tranche", as_index=False).agg(median_minutes=("minutes", "median"))


def _records(frame: pd.DataFrame) -> list[dict]:
    """Rows as plain Python values (numpy scalars unwrapped, NaN and NA as None)."""
    return [{k: _plain(v) for k, v in row.items()} for row in frame.to_dict("records")]


def _plain(value):
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


# -- storing ------------------------------------------------------------------------------------

def load(session: Session, *, details: bool = False) -> Stored | None:
    """The stored figures (with ``details``: the full lists), or None before the first
    computation."""
    row = session.get(m.StudyFigures, DETAILS_ID if details else ROW_ID)
    if row is None:
        return None
    return Stored(row.version, row.computed_at, json.loads(row.figures))


def save(session: Session, key: dict, computed_at: datetime, figures: dict) -> None:
    """Store ``figures`` (replacing the row; commits). The JSON is written before the
    transaction starts, so the write lock is held for one row only. Another process storing at
    the same moment wins (IntegrityError is left to the caller)."""
    shown = {**figures, "key": key}
    limit = figures.get("too_fast_s", 0.0)
    for name in LISTS:
        rows = figures.get(name, [])
        if name == "quality":
            rows = sorted(rows, key=lambda q: not marked(q, limit))
        shown[name] = rows if isinstance(rows, str) else rows[:SHOWN]
        shown[f"n_{name}"] = 0 if isinstance(rows, str) else len(rows)
    texts = {ROW_ID: json.dumps(shown, allow_nan=False, default=str),
             DETAILS_ID: json.dumps({name: figures.get(name, []) for name in LISTS},
                                    allow_nan=False, default=str)}
    session.commit()
    table = m.StudyFigures.__table__
    for row_id, text in texts.items():   # two statements: the old rows are never read here
        values = {"version": _key_text(key), "computed_at": computed_at, "figures": text}
        if not session.execute(update(table).where(table.c.id == row_id)
                               .values(**values)).rowcount:
            session.execute(insert(table).values(id=row_id, **values))
    session.commit()


# -- refreshing and topping up ------------------------------------------------------------------

#: figures older than this many refresh periods, with answers since, are said to be stale
STALE_PERIODS = 6


def stale(stored: Stored | None, answers_since: int, now: datetime,
          every_s: float) -> float | None:
    """How old (seconds) the stored figures are when they should have been refreshed by now:
    answers came in since, and more than :data:`STALE_PERIODS` periods went by (a period is
    ``every_s``, or :data:`BACKOFF` times the last computation if longer). None otherwise."""
    if stored is None or answers_since <= 0 or every_s <= 0:
        return None
    period = max(every_s, BACKOFF * float(stored.figures.get("seconds") or 0.0))
    age = (now - stored.computed_at).total_seconds()
    return age if age > STALE_PERIODS * period else None
