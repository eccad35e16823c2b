"""Recruiting until every pair has enough accepted raters (HyperLex section 4.4).

"Each of the 2,616 concept pairs has to be assigned at least 10 ratings from 10 different
accepted annotators." A tranche starts with ``raters_per_tranche`` slots, and some of the
raters who complete it are excluded afterwards (section 4.5), so a fixed number of slots leaves
pairs short. With ``[study] min_accepted_raters`` above 0:

- *accepted* raters are those who completed their tranche and whom the protocol's exclusion
  rules (``[process.exclusions]``, the rules ``lexgold process`` applies) do not exclude, the
  rules being run over the ratings of every rater who has completed a tranche;
- when the last open slot of a tranche has been completed, every tranche short of accepted
  raters gets one new slot per accepted rater it still lacks, and the assignment keeps offering
  them: the site's background refresher does it (:func:`lexgold.live.refresher.refresh`,
  never in a rater's request), :func:`lexgold.live.recruit.top_up` does it at once (``lexgold study top-up`` by
  hand, ``lexgold study rehearse`` after each completion);
- :func:`recruitment` says per tranche and per pair what is missing (``lexgold study report``;
  the admin view shows the stored figures of :mod:`lexgold.live.figures`).

The live exclusions are a forecast: raters who complete later change the correlation-based
rules, and ``lexgold process`` decides at release. Slots are only ever added, never removed.
"""

from __future__ import annotations

import tomllib

import pandas as pd
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from lexgold.study import models as m
from lexgold.live.quiet import collected_warnings
from lexgold.study.config import StudyConfig
from lexgold.study.export import export_ratings
from lexgold.process import exclusions

TRANCHE_COLUMNS = ["tranche", "slots", "completed", "open", "excluded", "accepted", "missing"]
PAIR_COLUMNS = ["word1", "word2", "pos", "accepted"]


def study_protocol(session: Session) -> dict:
    """The protocol stored with the study, parsed (its ``[process]`` table holds the rules)."""
    return protocol_from_text(session.scalars(select(m.Study.protocol_text)).one())


def protocol_from_text(text: str) -> dict:
    """A protocol stored with a study (``study.protocol_text``), parsed."""
    protocol = tomllib.loads(text)
    protocol["_path"] = "<study protocol>"
    return protocol


def exclusion_forecast(ratings: pd.DataFrame, protocol: dict) -> tuple[pd.DataFrame | None, str]:
    """The protocol's exclusion table over ``ratings`` (completed raters; None without
    ratings), and a note: empty, or which rules cannot be computed yet and why (too few raters
    or pairs: :class:`lexgold.errors.UndefinedStatistic`); those rules exclude nobody yet, the
    others apply. Any other error, a bug in a rule included, is raised: top-ups must not stop
    silently."""
    if ratings.empty:
        return None, ""
    with collected_warnings():          # one thread at a time (lexgold.live.quiet)
        table = exclusions.exclusion_table(ratings, protocol)
    undefined = table.attrs.get("undefined", {})
    note = "; ".join(f"{rule} not yet computable: {why}" for rule, why in undefined.items())
    return table, (f"exclusions: {note}" if note else "")


def recruitment(session: Session, config: StudyConfig, protocol: dict | None = None) -> dict:
    """Accepted raters per tranche and per pair against ``min_accepted_raters``, computed now
    (``lexgold study report``; the site reads them from :mod:`lexgold.live.figures`).

    Returns
    -------
    dict
        ``min_accepted_raters``; ``tranches``, a DataFrame with :data:`TRANCHE_COLUMNS`
        (``open``: slots not completed yet, free or claimed; ``missing``: accepted raters
        lacking, ``max(0, minimum - accepted)``); ``pairs_below``, a DataFrame with
        :data:`PAIR_COLUMNS` of the pairs with fewer accepted raters than the minimum
        (empty when the minimum is 0); ``note`` (see :func:`exclusion_forecast`).
    """
    protocol = study_protocol(session) if protocol is None else protocol
    slots, shown = slot_frame(session), shown_frame(session)
    ratings = export_ratings(session, complete_only=True)
    session.commit()                  # end the read: SQLite holds its lock until then
    table, note = exclusion_forecast(ratings, protocol)
    excluded = set() if table is None else set(exclusions.excluded_raters(table))
    return {**tally(slots, shown, excluded, config.min_accepted_raters), "note": note}


def stored_rows(session: Session) -> int:
    """Answer rows stored (pair answers and checkpoint answers; a Best-Worst tuple stores one
    row per pair): what the admin view counts live and compares with the figures' count."""
    return int(session.scalar(select(func.count()).select_from(m.Answer)) +
               session.scalar(select(func.count()).select_from(m.CheckpointAnswer)))


def slot_frame(session: Session) -> pd.DataFrame:
    """Every slot: ``tranche, status, rater`` (the rater's public id, or None)."""
    return pd.DataFrame(session.execute(
        select(m.Tranche.number, m.Slot.status, m.Rater.public_id)
        .join(m.Tranche, m.Slot.tranche_id == m.Tranche.id)
        .outerjoin(m.Rater, m.Slot.rater_id == m.Rater.id)).all(),
        columns=["tranche", "status", "rater"])


def shown_frame(session: Session) -> pd.DataFrame:
    """Each pair once per tranche showing it: ``pair, word1, word2, pos, tranche``."""
    return pd.DataFrame(session.execute(
        select(m.Pair.id, m.Pair.word1, m.Pair.word2, m.Pair.pos, m.Tranche.number)
        .join(m.Item, m.Item.pair_id == m.Pair.id)
        .join(m.Tranche, m.Item.tranche_id == m.Tranche.id).distinct()).all(),
        columns=["pair", "word1", "word2", "pos", "tranche"])


def tally(slots: pd.DataFrame, shown: pd.DataFrame, excluded: set[str], minimum: int) -> dict:
    """:func:`recruitment`'s ``tranches`` and ``pairs_below`` from :func:`slot_frame`,
    :func:`shown_frame` and the excluded raters (a pure function)."""
    done = slots[slots["status"] == "completed"]
    accepted = done[~done["rater"].isin(excluded)]
    table = slots.groupby("tranche").size().rename("slots").to_frame()
    table["completed"] = done.groupby("tranche").size()
    table["excluded"] = done[done["rater"].isin(excluded)].groupby("tranche").size()
    table = table.fillna(0).astype(int)
    table["open"] = table["slots"] - table["completed"]
    table["accepted"] = table["completed"] - table["excluded"]
    table["missing"] = (minimum - table["accepted"]).clip(lower=0)
    per_pair = shown.merge(accepted[["tranche", "rater"]], on="tranche", how="left")
    counts = per_pair.groupby("pair")["rater"].nunique().rename("accepted")
    pairs = shown.drop_duplicates("pair").join(counts, on="pair").sort_values("pair")
    below = pairs[pairs["accepted"] < minimum][PAIR_COLUMNS].reset_index(drop=True)
    return {"min_accepted_raters": minimum, "tranches": table.reset_index()[TRANCHE_COLUMNS],
            "pairs_below": below}
