"""Adaptive allocation: the same gold standard for fewer ratings.

With ``[study] allocation = "adaptive"`` every tranche of the design first gets
``first_round_raters`` slots. Once every slot of the study is completed (the round is over),
:func:`allocate` looks at the pair means so far and either stops, because the reliability of
the means has reached ``target_reliability`` or the next tranche would overspend
``budget_ratings``, or adds one *top-up tranche*: the ``topup_pairs`` pairs whose means more
raters are expected to make most precise
(:func:`lexgold.crowd.allocation_criteria.error_gain`: the fall of the squared error of the
mean, from each pair's shrunk rating variance and the raters it already has; Neyman allocation, the rule that did best on the real logs replayed by ``lexgold
replay``, docs/process.md), laid out by the
study's own designer (:func:`lexgold.study.design.design_study`) with the whole
consistency set, calibration repeats, POS-pure groups of 6-7, checkpoints and duplicates
(SimLex-999 sections 3.2, 3.4; HyperLex section 4.4), with ``topup_raters`` slots.

A study with a machine rater (``study create --machine``, :mod:`lexgold.study.machine`; mode
``machine-allocate``, issue 45) ranks the top-up pairs by the machine's gain instead
(:func:`machine_ranking`, :func:`lexgold.machine.allocate.machine_gain`: what ``topup_raters``
more ratings are worth given how far the pair's human mean lies from the machine's calibrated
score): a pair whose mean the machine says more ratings would not improve (gain 0 or less) gets
no more, and when no pair is left the study stops (status ``machine``). Released scores stay
human means. While the machine cannot be calibrated (fewer than 3 of its pairs rated, no pair
with two raters) the site's own rule ranks the pairs.

Where it runs: the site's background refresher (:func:`lexgold.live.refresher.refresh`,
never in a rater's request), ``lexgold study rehearse`` after each completion, and ``lexgold
study top-up`` by hand. It is idempotent across processes: a top-up tranche is numbered after
the last one, so a concurrent call that counted the same tranches collides on the unique
tranche number and adds nothing; and nothing is added while a slot is open.

The statistics are pure functions over frames (:func:`pair_table`, :func:`pair_mean_reliability`,
:func:`reliability_path`; the criteria in :mod:`lexgold.crowd.allocation_criteria`); the picture of
the admin view is :func:`lexgold.live.adaptive_svg.picture`.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlalchemy.orm import Session

from lexgold.study import models as m
from lexgold.study.design import design_study
from lexgold.study.config import StudyConfig
from lexgold.live import tally
from lexgold.study.store import store_tranche
from lexgold.crowd.allocation_criteria import (  # noqa: F401  (re-exported for the site)
    PRIOR_RATINGS,
    SITE_RULE,
    error_gain,
    misordering_gain,
    rank_uncertainty,
    site_gain,
    standard_errors,
)
from lexgold.errors import InputError
from lexgold.study.design import _split_duplicates
from lexgold.study.machine import machine_scores
from lexgold.machine.allocate import machine_gain
from lexgold.machine.prior import pooled_variance
from lexgold.study.export import export_ratings
from lexgold.process.exclusions import excluded_raters
from lexgold.live.adaptive_svg import picture
from lexgold.process.agreement import AgreementWarning
from lexgold.process.plan import reliability_curve
from lexgold.process.splithalf import split_half_random

#: random splits averaged by :func:`pair_mean_reliability`
SPLITS = 10
#: points of the reliability path drawn in the admin view
PATH_POINTS = 10


# -- statistics (pure) --------------------------------------------------------------------------

def pair_table(ratings: pd.DataFrame) -> pd.DataFrame:
    """Per pair: ``n`` (raters), ``mean`` and ``var`` (sample variance over raters; NaN for
    one rater) of the rater-level means, from ``pair, rater_id, rating`` (a rater who saw a
    pair twice, as a duplicate or calibration repeat, counts once with the mean of the two).
    Indexed by ``pair``."""
    per_rater = ratings.groupby(["pair", "rater_id"], sort=False)["rating"].mean()
    grouped = per_rater.groupby(level="pair")
    return pd.DataFrame({"n": grouped.size(), "mean": grouped.mean(), "var": grouped.var()})


def least_certain(table: pd.DataFrame, candidates, count: int, extra: int = 1) -> list:
    """The ``count`` pairs of ``candidates`` (pair keys) whose estimates ``extra`` more raters
    each are expected to improve most (:func:`lexgold.crowd.allocation_criteria.site_gain`, the
    criterion :data:`~lexgold.crowd.allocation_criteria.SITE_RULE`, over every pair of ``table``;
    ``extra``: the slots of a top-up tranche); ties go to the pair with fewer raters, then the
    lower key. Candidates without a rating come first."""
    gain = site_gain(table, extra) if len(table) else pd.Series(dtype=float)
    frame = pd.DataFrame({"pair": list(candidates)})
    frame["u"] = frame["pair"].map(gain).fillna(np.inf)
    frame["n"] = frame["pair"].map(table["n"]).fillna(0)
    frame = frame.sort_values(["u", "n", "pair"], ascending=[False, True, True], kind="stable")
    return frame["pair"].head(count).tolist()


def machine_ranking(ratings: pd.DataFrame, machine: pd.Series, candidates,
                    extra: int = 1) -> pd.DataFrame:
    """``machine-allocate``'s ranking of the ``candidates`` (pair keys): each pair's gain from
    ``extra`` more raters given the machine (:func:`lexgold.machine.allocate.machine_gain`
    over every rated pair: its human mean and raters (:func:`pair_table`), the pooled
    within-pair variance of the rater-level ratings
    (:func:`lexgold.machine.prior.pooled_variance`) and the machine's number, ``machine``
    indexed by pair key, NaN where it has none).

    Returns
    -------
    pandas.DataFrame
        ``pair, n, mean, machine, gain``, one row per candidate, largest gain first (ties:
        fewer raters, then the lower key); a candidate without a rating has gain ``inf``
        (it needs its first raters). A pair with gain 0 or less is to stop.

    Raises
    ------
    InputError
        The machine cannot be calibrated yet (:func:`lexgold.machine.prior.calibrate_machine`), or
        no pair has two raters (no within-pair variance).
    """
    per_rater = ratings.groupby(["pair", "rater_id"], sort=True)["rating"].mean()
    table = pair_table(ratings)
    values = per_rater.reset_index()
    values["k"] = values.groupby("pair").cumcount()
    matrix = values.pivot(index="pair", columns="k", values="rating").reindex(table.index)
    sigma2 = pooled_variance(matrix.to_numpy(dtype=float))
    if not np.isfinite(sigma2) or sigma2 <= 0:
        raise InputError("no pair has two raters who differ yet: the machine's gains need "
                         "the within-pair variance", field="machine")
    x = machine.reindex(table.index).to_numpy(dtype=float)
    gain = pd.Series(machine_gain(table["mean"].to_numpy(), table["n"].to_numpy(), sigma2, x,
                                  extra), index=table.index)
    frame = pd.DataFrame({"pair": list(candidates)})
    frame["n"] = frame["pair"].map(table["n"]).fillna(0).astype(int)
    frame["mean"] = frame["pair"].map(table["mean"])
    frame["machine"] = frame["pair"].map(machine)
    frame["gain"] = frame["pair"].map(gain).fillna(np.inf)
    return frame.sort_values(["gain", "n", "pair"], ascending=[False, True, True],
                             kind="stable", ignore_index=True)


def fits(content: int, config: StudyConfig) -> bool:
    """Can ``content`` showings of one batch (unique, consistency and duplicates) be laid out
    in groups of ``group_size_min``-``group_size_max``, with the calibration repeat opening
    every group after the first (as :func:`lexgold.study.design._batch_groups` lays them)?"""
    cal = 1 if config.calibration_repeat else 0
    groups = max(1, -(-(content - cal) // max(config.group_size_max - cal, 1)))
    return content + cal * (groups - 1) >= groups * config.group_size_min


def _groups(content: int, config: StudyConfig) -> int:
    """Groups :func:`lexgold.study.design._batch_groups` lays ``content`` showings in."""
    cal = 1 if config.calibration_repeat else 0
    return max(1, -(-(content - cal) // max(config.group_size_max - cal, 1)))


def fill_groups(ranked: list, wanted: int, pairs: pd.DataFrame, config: StudyConfig) -> list:
    """The top-up's unique pairs: the first ``wanted`` of ``ranked`` (least precise first),
    then, batch by batch (part of speech; topic), the next least precise pairs of a batch
    whose showings would not fill groups of the layout's size (:func:`fits`; a batch's
    consistency pairs and its share of the duplicates count) or that holds a share of the
    duplicates in one group (a duplicate follows its first showing in a later group), so that
    every group of the top-up tranche keeps the layout (SimLex-999 section 3.4: groups of 7,
    the last 6). A
    batch left without unique pairs is left so (it shows its consistency pairs only)."""
    key = "pos" if config.group_by == "pos" else "topic"
    batch = pairs[key]
    consistency = pairs.index[pairs["consistency"]]
    counts_cons = batch[consistency].value_counts().to_dict()
    chosen = list(ranked[:wanted])
    rest = {b: [p for p in ranked[wanted:] if batch[p] == b] for b in set(batch)}
    for _ in range(len(ranked)):
        share = {b: [p for p in chosen if batch[p] == b] for b in sorted(set(batch))}
        dups = _split_duplicates([share], config.duplicates_per_tranche)[0]
        short = [b for b, held in share.items()
                 if (held or counts_cons.get(b)) and rest[b]
                 and (not fits(len(held) + counts_cons.get(b, 0) + dups[b], config)
                      or (dups[b] and _groups(len(held) + counts_cons.get(b, 0) + dups[b],
                                              config) < 2))]
        if not short:
            break
        chosen.append(rest[short[0]].pop(0))
    return chosen


def pair_mean_reliability(ratings: pd.DataFrame, rng: np.random.Generator,
                          splits: int = SPLITS) -> float:
    """Reliability of the pair means: the Spearman-Brown figure of
    :func:`lexgold.process.splithalf.split_half_random` (``lexgold agree --split-half``), the
    one split-half definition of lexgold. NaN with fewer than three pairs with two raters.

    ``ratings``: ``pair, rater_id, rating``."""
    frame = pd.DataFrame({"rater_id": ratings["rater_id"].astype(str), "tranche": "1",
                          "word1": ratings["pair"].astype(str), "word2": "-",
                          "rating": ratings["rating"]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AgreementWarning)
        return float(split_half_random(frame, rng=rng, splits=splits)["spearman_brown"])


def reliability_path(ratings: pd.DataFrame, seed: int = 0,
                     points: int = PATH_POINTS) -> pd.DataFrame:
    """Reliability (:func:`pair_mean_reliability`) against ratings collected: raters taken in
    the order they completed (``done``, a sortable completion time per rating row), at ``points``
    evenly spaced numbers of raters, each split with ``default_rng(seed)`` (the last point is
    :func:`allocate`'s figure). Returns ``ratings, raters, reliability``."""
    if ratings.empty:
        return pd.DataFrame(columns=["ratings", "raters", "reliability"])
    order = ratings.groupby("rater_id")["done"].max().sort_values(kind="stable").index
    counts = ratings.groupby("rater_id").size().reindex(order).cumsum()
    rows = []
    for k in sorted({round(x) for x in np.linspace(1, len(order), min(points, len(order)))}):
        chosen = ratings[ratings["rater_id"].isin(order[:k])]
        rows.append({"ratings": int(counts.iloc[k - 1]), "raters": k,
                     "reliability": pair_mean_reliability(chosen, np.random.default_rng(seed))})
    return pd.DataFrame(rows, columns=["ratings", "raters", "reliability"])


# -- the study database -------------------------------------------------------------------------

def completed_ratings(session: Session) -> pd.DataFrame:
    """Answers of raters who completed their tranche: ``pair`` (id), ``rater_id`` (public),
    ``rating``, ``done`` (the rater's completion time)."""
    return pd.DataFrame(session.execute(
        select(m.Item.pair_id, m.Rater.public_id, m.Answer.rating, m.Rater.completed_at)
        .join(m.Item, m.Answer.item_id == m.Item.id)
        .join(m.Rater, m.Answer.rater_id == m.Rater.id)
        .where(m.Rater.completed_at.is_not(None))).all(),
        columns=["pair", "rater_id", "rating", "done"])


def budget(session: Session, config: StudyConfig) -> dict:
    """``budget`` (``budget_ratings``, or the uniform design's spending: ``raters_per_tranche``
    times the showings of the design's tranches), ``committed`` (showings of every slot, open
    or completed) and ``spent`` (showings of completed slots)."""
    showings = dict(session.execute(select(m.Item.tranche_id, func.count())
                                    .group_by(m.Item.tranche_id)).all())
    slots = session.execute(select(m.Slot.tranche_id, m.Slot.status)).all()
    committed = sum(showings.get(t, 0) for t, _ in slots)
    spent = sum(showings.get(t, 0) for t, status in slots if status == "completed")
    total = config.budget_ratings
    if not total:
        report = session.scalar(select(m.Study.report)) or {}
        first = report.get("tranches", len(showings))
        numbers = dict(session.execute(select(m.Tranche.id, m.Tranche.number)).all())
        total = config.raters_per_tranche * sum(
            n for t, n in showings.items() if numbers.get(t, 0) <= first)
    return {"budget": int(total), "committed": int(committed), "spent": int(spent)}


def adaptive_state(session: Session, config: StudyConfig, excluded: set[str] = frozenset()) -> dict:
    """What the admin view shows of an adaptive study: :func:`budget`, ``reliability`` now,
    ``path`` (:func:`reliability_path` records), ``first_tranches`` (the design's tranches;
    later ones are top-ups), ``target``."""
    ratings = completed_ratings(session)
    ratings = ratings[~ratings["rater_id"].isin(excluded)]
    path = reliability_path(ratings)
    report = session.scalar(select(m.Study.report)) or {}
    found = {**budget(session, config), "target": config.target_reliability,
             "first_tranches": int(report.get("tranches", 0)),
             "pairs": int(session.scalar(select(func.count()).select_from(m.Pair)) or 0),
             "reliability": (None if path.empty or pd.isna(path["reliability"].iloc[-1])
                             else float(path["reliability"].iloc[-1])),
             "path": [{k: (None if pd.isna(v) else v) for k, v in row.items()}
                      for row in path.to_dict("records")]}
    return found


def allocate(session: Session, config: StudyConfig, excluded: set[str] | None = None,
             rng_seed: int | None = None) -> dict:
    """One step of adaptive allocation (module docstring): when no slot is open, stop or add
    one top-up tranche (committed). ``excluded``: raters the exclusion rules exclude (by
    default the forecast of :func:`lexgold.live.tally.exclusion_forecast`).

    Returns
    -------
    dict
        ``status``: ``uniform`` (not adaptive), ``waiting`` (slots open), ``target``
        (reliability reached), ``budget`` (no budget for another tranche), ``added`` or
        ``busy`` (a concurrent call won, or the database is busy), ``machine`` (a study with
        a machine rater: no pair is left whose gain is positive); ``reliability``;
        with ``added``: ``tranche`` (its number), ``slots``, ``pairs`` (the pair ids chosen).
        A study with a machine rater adds ``machine``: ``mode`` (``allocate``), ``stopped``
        (unique pairs given no more raters: gain 0 or less) and ``ranked_by`` (``machine``,
        or the site's rule while the machine cannot be calibrated, with ``note`` saying why).
    """
    if config.allocation != "adaptive":
        return {"status": "uniform"}
    try:
        open_slots = session.scalar(select(func.count()).select_from(m.Slot)
                                    .where(m.Slot.status != "completed"))
        if open_slots:
            session.commit()
            return {"status": "waiting"}
        if excluded is None:
            excluded = _forecast(session)
        study = session.scalars(select(m.Study)).one()
        ratings = completed_ratings(session)
        ratings = ratings[~ratings["rater_id"].isin(excluded)]
        number = int(session.scalar(select(func.max(m.Tranche.number))) or 0) + 1
        seed = (study.seed if rng_seed is None else rng_seed) * 1009 + number
        reliability = pair_mean_reliability(ratings, np.random.default_rng(0))
        if not np.isnan(reliability) and reliability >= config.target_reliability:
            session.commit()
            return {"status": "target", "reliability": reliability}
        pairs = _pair_frame(session)
        unique = pairs.index[~pairs["consistency"]]
        wanted = config.topup_pairs or config.unique_per_tranche
        machine = machine_scores(session)
        note = {}
        if machine is None:
            ranked = least_certain(pair_table(ratings), unique, len(unique), config.topup_raters)
        else:
            ranked, note = _machine_ranked(ratings, machine, unique, config)
            if not ranked:
                session.commit()
                return {"status": "machine", "reliability": reliability, "machine": note}
        chosen = fill_groups(ranked, wanted, pairs, config)
        keep = pairs.loc[sorted(set(chosen) | set(pairs.index[pairs["consistency"]]))]
        one = _one_tranche(config)
        design = design_study(keep, one, np.random.default_rng(seed))
        extra = {"machine": note} if note else {}
        if not design.tranches:
            session.commit()
            return {"status": "budget", "reliability": reliability, **extra}
        steps = design.tranches[0]
        showings = sum(len(s.items) for s in steps)
        money = budget(session, config)
        raters = min(config.topup_raters, (money["budget"] - money["committed"]) // showings)
        if raters <= 0:
            session.commit()
            return {"status": "budget", "reliability": reliability, **extra}
        store_tranche(session, number, steps, int, raters)
        session.commit()
        return {"status": "added", "reliability": reliability, "tranche": number,
                "slots": int(raters), "pairs": [int(p) for p in chosen], **extra}
    except (IntegrityError, OperationalError):
        session.rollback()   # another process added this tranche number, or the database is busy
        return {"status": "busy"}


def _machine_ranked(ratings: pd.DataFrame, machine: pd.Series, unique,
                    config: StudyConfig) -> tuple[list, dict]:
    """The unique pairs worth more raters by the machine (:func:`machine_ranking`, gain > 0)
    and what :func:`allocate` says of the machine; the site's rule while the machine cannot be
    calibrated."""
    try:
        ranking = machine_ranking(ratings, machine, unique, config.topup_raters)
    except InputError as err:
        ranked = least_certain(pair_table(ratings), unique, len(unique), config.topup_raters)
        return ranked, {"mode": "allocate", "ranked_by": SITE_RULE, "stopped": 0,
                        "note": f"the machine is not used yet: {err}"}
    keep = ranking["gain"] > 0
    return ranking.loc[keep, "pair"].tolist(), {"mode": "allocate", "ranked_by": "machine",
                                                "stopped": int((~keep).sum())}


#: what :func:`allocate`'s status means (``lexgold study top-up``)
STATUS = {"uniform": "not an adaptive study",
          "waiting": "slots are still open; the next top-up tranche comes after",
          "target": "stopped, the target reliability is reached",
          "budget": "stopped, the budget left is too small for another tranche",
          "added": "a top-up tranche of the pairs whose means are least precise was added",
          "machine": "stopped, the machine rater gives no pair a positive gain: more ratings "
                     "would not make any pair's mean more accurate (machine-allocate)",
          "busy": "the database is busy or another process added it; run again"}


def describe_allocation(step: dict) -> str:
    """:func:`allocate`'s result in words (with a machine rater: how it ranked, how many
    pairs it stopped).

    >>> describe_allocation({"status": "added", "tranche": 3, "slots": 2,
    ...           "machine": {"mode": "allocate", "ranked_by": "machine", "stopped": 40}})
    'a top-up tranche of the pairs the machine rater ranks first was added (tranche 3, 2 slots); machine-allocate: 40 pairs get no more raters'
    """
    machine = step.get("machine")
    text = STATUS[step["status"]]
    if step["status"] == "added":
        if machine and machine["ranked_by"] == "machine":
            text = "a top-up tranche of the pairs the machine rater ranks first was added"
        text += f" (tranche {step['tranche']}, {step['slots']} slots)"
    if machine and machine.get("note"):
        text += f"; {machine['note']}"
    elif machine and step["status"] != "machine":
        text += f"; machine-allocate: {machine['stopped']} pairs get no more raters"
    return text


def _forecast(session: Session) -> set[str]:
    protocol = tally.study_protocol(session)
    if not protocol.get("process", {}).get("exclusions"):
        return set()
    table, _ = tally.exclusion_forecast(export_ratings(session, complete_only=True), protocol)
    return set() if table is None else set(excluded_raters(table))


def _pair_frame(session: Session) -> pd.DataFrame:
    """The study's pairs as the designer reads them, indexed by pair id."""
    rows = session.execute(select(m.Pair.id, m.Pair.word1, m.Pair.word2, m.Pair.pos,
                                  m.Pair.topic, m.Pair.consistency)).all()
    frame = pd.DataFrame(rows, columns=["id", "word1", "word2", "pos", "topic", "consistency"])
    frame["consistency"] = frame["consistency"].astype(bool)
    return frame.set_index("id")


def _one_tranche(config: StudyConfig) -> StudyConfig:
    from dataclasses import replace

    return replace(config, tranches=1)


# -- the refresher's step -----------------------------------------------------------------------

def refresh_step(reads: Session, writes: Session, config: StudyConfig, figures: dict, *,
                 allocate_now: bool = True) -> dict:
    """What :func:`lexgold.live.refresher.refresh` does for an adaptive study: puts
    ``figures["adaptive"]`` (:func:`adaptive_state`, its ``status`` and the admin view's picture,
    :func:`lexgold.live.adaptive_svg.picture`) and, when no slot is open (and
    ``allocate_now``: recruitment added no slot this round), runs :func:`allocate`
    (``writes``). Returns :func:`allocate`'s result (``waiting`` while slots are open)."""
    rows = figures.get("exclusions")
    excluded = ({r["rater_id"] for r in rows if r.get("excluded")}
                if isinstance(rows, list) else set())
    found = adaptive_state(reads, config, excluded)
    reads.commit()
    step = {"status": "waiting"}
    if allocate_now and not any(row.get("open") for row in figures.get("tranches", [])):
        step = allocate(writes, config, excluded)
    found["status"] = step["status"]
    if "machine" in step:
        found["machine"] = step["machine"]
    found["svg"] = picture(found, figures.get("tranches", []), planner_curve(reads))
    reads.commit()
    figures["adaptive"] = found
    return step


def planner_curve(session: Session) -> pd.DataFrame | None:
    """The planner's predicted reliability per raters per pair (``raters, reliability, low,
    high``; :func:`lexgold.process.plan.reliability_curve`, seeded, 50 bootstrap replicates)
    from the completed raters' ratings; None while they are too few to plan from."""
    ratings = export_ratings(session, complete_only=True)
    ratings = ratings[ratings["kind"] != "checkpoint"]
    if ratings.empty:
        return None
    try:
        return reliability_curve(ratings, rng=np.random.default_rng(0), replicates=50)
    except InputError:                  # too few pairs or raters yet (the message says which)
        return None
