"""HyperLex candidate pools and two-step sampling (Vulic et al. 2017, sections 4.1-4.2, 5).

Vulic et al. (2017), sections 4.1-4.2 and 5. Steps, each a function below:

1. :func:`candidate_pool` -- USF N/N and V/V pairs (USF POS tags) produced by more than two
   participants, minus multi-word items, named entities and words on the offensive-word lists;
   each labelled with its WordNet relation (:mod:`lexgold.builder.relations`); of (X, Y) and
   (Y, X) one is kept; rhyp-N pairs are reversed into hyp-N, and whole -> part pairs (cue = the
   whole, otherwise cohyp or no-rel) into part -> whole mero pairs, section 4.1 defining mero
   with X the part; no-rel pairs are dropped.
2. :func:`draw_step1` -- per POS and relation (hyp-N, cohyp, mero, syn, ant), pairs are drawn
   at random up to the quota; each goes through the human check (:mod:`checking`); a rejected
   pair is replaced by the next random pair of its pool.
3. :func:`draw_step2` -- once step 1 is settled: rhyp-N pool = the accepted hyp-N pairs
   reversed; no-rel pool = the Cartesian product of the accepted step-1 words per POS, minus
   pairs in USF (either direction), minus pairs with any WordNet relation, keeping pairs whose
   words were both normed as USF cues; drawn and checked as in step 2.
4. :func:`concreteness_groups` -- G1 both concrete (>= 4 on USF's scale), G2 both abstract,
   G3 mixed with a difference <= 1, G4 mixed with a difference > 1 (section 5, Table 9).

The draws are a pure function of (pools, seed, verdicts): every run with the same seed visits
each pool in the same random order, so earlier verdicts stay valid and a rejected pair's
substitute is simply the next pair in that order.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Literal

import numpy as np
import pandas as pd

from lexgold.builder import checking, common
from lexgold.builder.common import ConcretenessScale
from lexgold.builder.relations import (ANTONYM_ROUTES, DEFAULT_ANTONYMS, HOLONYM_KINDS,
                                       SENSE_POLICIES, RelationLabeller, relation_names)
from lexgold.compression import read_input_text
from lexgold.errors import InputError
from lexgold.protocols import Invalid, between, check_instance, load_protocol, parse_section
from lexgold.resources import read_usf
from lexgold.resources.wordnet_graph import load_graph

STEP1 = ("hyp", "cohyp", "mero", "syn", "ant")
POOL_COLUMNS = ["word1", "word2", "pos", "relation", "usf_relation", "reversed", "n_participants",
                "fsg", "pool", "excluded", "drawn"]
PAIR_COLUMNS = ["word1", "word2", "pos", "relation", "step", "check", "conc1", "conc2", "conc_group"]
GROUPS = ("G1", "G2", "G3", "G4")


@dataclasses.dataclass
class GroupScale(ConcretenessScale):
    """A concreteness scale with the G3/G4 difference threshold of HyperLex section 5."""

    group_difference: Annotated[float, between(0)] = 1.0


@dataclasses.dataclass
class HyperLexConcreteness:
    source: Literal["usf", "brysbaert"] = "usf"
    usf: GroupScale = dataclasses.field(default_factory=lambda: GroupScale([1.0, 7.0], 4.0, 1.0))
    brysbaert: GroupScale = dataclasses.field(
        default_factory=lambda: GroupScale([1.0, 5.0], 3.0, 0.6667))

    def active(self) -> GroupScale:
        return getattr(self, self.source)


#: Decision (see hyperlex.toml, ``quotas = "release"``): the released data set's pair counts
#: per relation and POS (hyperlex-all.txt), 2,163 N + 453 V = 2,616
RELEASE_QUOTAS = {
    "step1": {"N": {"hyp-1": 287, "hyp-2": 241, "hyp-3": 254, "hyp-4": 222, "cohyp": 242,
                    "mero": 241, "syn": 165, "ant": 68},
              "V": {"hyp-1": 97, "hyp-2": 49, "hyp-3": 35, "hyp-4": 20, "cohyp": 50, "syn": 29,
                    "ant": 30}},
    "step2": {"N": {"rhyp-1": 73, "rhyp-2": 53, "rhyp-3": 60, "rhyp-4": 40, "no-rel": 217},
              "V": {"rhyp-1": 25, "rhyp-2": 20, "rhyp-3": 15, "rhyp-4": 10, "no-rel": 73}},
}
#: ``quotas = "derived"``: the per-relation totals of the release split by a derivation from
#: the paper (rhyp-N keeps its hyp-N's verb share, section 4.2; docs/builders.md)
DERIVED_QUOTAS = {
    "step1": {"N": {"hyp-1": 287, "hyp-2": 241, "hyp-3": 241, "hyp-4": 222, "cohyp": 243,
                    "mero": 241, "syn": 161, "ant": 68},
              "V": {"hyp-1": 97, "hyp-2": 49, "hyp-3": 48, "hyp-4": 20, "cohyp": 49, "syn": 33,
                    "ant": 30}},
    "step2": {"N": {"rhyp-1": 73, "rhyp-2": 61, "rhyp-3": 62, "rhyp-4": 46, "no-rel": 217},
              "V": {"rhyp-1": 25, "rhyp-2": 12, "rhyp-3": 13, "rhyp-4": 4, "no-rel": 73}},
}
QUOTA_TABLES = {"release": RELEASE_QUOTAS, "derived": DERIVED_QUOTAS}
STEP1_QUOTAS, STEP2_QUOTAS = RELEASE_QUOTAS["step1"], RELEASE_QUOTAS["step2"]


@dataclasses.dataclass
class HyperLexBuild:
    """The ``[build]`` table of a HyperLex-style protocol; defaults as in the protocol file."""

    pos: list[Literal["N", "V"]] = dataclasses.field(default_factory=lambda: ["N", "V"])
    #: pairs produced by fewer participants are dropped
    min_participants: Annotated[int, between(0)] = 3
    word_pattern: str = "[a-z]+"
    named_entities: Literal["wordnet", "none"] = "wordnet"
    offensive_lists: list[str] = dataclasses.field(default_factory=lambda: ["offensive_en.txt"])
    hyp_max: Annotated[int, between(1)] = 4
    mero_holonyms: list[Literal[HOLONYM_KINDS]] = dataclasses.field(
        default_factory=lambda: list(HOLONYM_KINDS))
    #: first-sense | shortest-path (lexgold.builder.relations)
    sense_policy: Literal[SENSE_POLICIES] = "first-sense"
    antonyms: list[Literal[ANTONYM_ROUTES]] = dataclasses.field(
        default_factory=lambda: list(DEFAULT_ANTONYMS))
    min_checkers: Annotated[int, between(1)] = 3
    #: release | derived: the default step1 / step2 tables
    quotas: Literal[tuple(QUOTA_TABLES)] = "release"
    #: per POS and relation; None: from quotas
    step1: dict[Literal["N", "V"], dict[str, Annotated[int, between(0)]]] | None = None
    step2: dict[Literal["N", "V"], dict[str, Annotated[int, between(0)]]] | None = None
    concreteness: HyperLexConcreteness = dataclasses.field(default_factory=HyperLexConcreteness)

    def __post_init__(self):
        """A ``step1`` / ``step2`` table left out comes from the ``quotas`` table it names."""
        for step in ("step1", "step2"):
            if getattr(self, step) is None and self.quotas in QUOTA_TABLES:
                table = QUOTA_TABLES[self.quotas][step]
                setattr(self, step, {pos: dict(quotas) for pos, quotas in table.items()})

    def check(self) -> None:
        """Relation names of the step tables, which depend on ``hyp_max``."""
        names = set(relation_names(self.hyp_max))
        for step, allowed in (("step1", {n for n in names if n.split("-")[0] in STEP1}),
                              ("step2", {n for n in names if n.startswith("rhyp-")} | {"no-rel"})):
            for pos, quotas in (getattr(self, step) or {}).items():
                for relation in quotas:
                    if relation not in allowed:
                        raise Invalid(f"{step}.{pos}.{relation}",
                                      "relations " + " | ".join(sorted(allowed)), relation)


def check_settings(settings: HyperLexBuild, source: str = "<protocol>") -> HyperLexBuild:
    """Check settings again after command-line overrides (one path: the ``[build]`` schema)."""
    return check_instance(settings, source, "build")


def labeller_for(reader, settings: HyperLexBuild) -> RelationLabeller:
    """The relation labeller configured by the ``[build]`` table (section 4.1)."""
    return RelationLabeller(reader, settings.hyp_max, settings.mero_holonyms,
                            sense_policy=settings.sense_policy, antonyms=settings.antonyms)


def read_word_list(path: str | Path) -> set[str]:
    """Lower-case entries of a word-list file (``#`` comments and blank lines ignored)."""
    try:
        lines = read_input_text(path, encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise InputError("offensive-word list not found", path=path,
                         field="build.offensive_lists") from None
    return {line.strip().lower() for line in lines if line.strip() and not line.startswith("#")}


# -- step 1: pools ---------------------------------------------------------------------------
def candidate_pool(usf: pd.DataFrame, settings: HyperLexBuild, labeller: RelationLabeller,
                   offensive: set[str] = frozenset(), is_proper=None) -> pd.DataFrame:
    """Every USF pair with its relation and the first reason it is not a step-1 candidate.

    Reasons, in order: ``pos`` (not N/N or V/V), ``few-participants``, ``multi-word``,
    ``pattern``, ``same-word``, ``named-entity``, ``offensive``, ``no-rel``, ``duplicate``
    (the other order of a pair kept earlier). Rows with ``excluded == ""`` are the pools.
    """
    w1, w2 = common.lower_words(usf["cue"]), common.lower_words(usf["target"])
    same_pos = (usf["qps"] == usf["tps"]).fillna(False) & usf["qps"].isin(settings.pos).fillna(False)
    frame = pd.DataFrame({"word1": w1, "word2": w2, "pos": usf["qps"].where(same_pos, ""),
                          "n_participants": usf["n_participants"], "fsg": usf["fsg"]})
    reason = pd.Series(np.where(same_pos, "", "pos"), index=frame.index, dtype=object)

    def mark(mask, why):
        reason[(reason == "") & mask.fillna(True).astype(bool)] = why

    mark(frame["n_participants"] < settings.min_participants, "few-participants")
    for column in ("word1", "word2"):
        problem = common.word_form_problems(frame[column], settings.word_pattern)
        for why in ("multi-word", "pattern"):
            mark(problem == why, why)
    mark(w1 == w2, "same-word")
    if is_proper is not None:
        open_rows = reason == ""
        proper = {w for w in pd.unique(pd.concat([w1[open_rows], w2[open_rows]])) if is_proper(w)}
        mark(w1.isin(proper) | w2.isin(proper), "named-entity")
    mark(w1.isin(offensive) | w2.isin(offensive), "offensive")
    labelled = same_pos.to_numpy()
    usf_relation = pd.Series("", index=frame.index, dtype=object)
    usf_relation[labelled] = [labeller.relation(a, b, p) for a, b, p in
                              zip(w1[labelled], w2[labelled], frame["pos"][labelled])]
    # whole -> part (cue = the whole): section 4.1 defines mero with X the part, and mero goes
    # before cohyp, so the pair is a mero candidate in the order part -> whole ("rmero")
    maybe = np.flatnonzero(labelled & usf_relation.isin(["cohyp", "no-rel"]).to_numpy()
                           & (frame["pos"] == "N").to_numpy())
    usf_relation.iloc[maybe] = [
        "rmero" if labeller.relation(b, a, "N") == "mero" else old
        for a, b, old in zip(w1.iloc[maybe], w2.iloc[maybe], usf_relation.iloc[maybe])]
    flip = usf_relation.str.startswith("rhyp-") | (usf_relation == "rmero")
    frame["usf_relation"] = usf_relation
    frame["reversed"] = flip
    frame.loc[flip, ["word1", "word2"]] = frame.loc[flip, ["word2", "word1"]].to_numpy()
    frame["relation"] = usf_relation.where(~flip, usf_relation.str.replace("rhyp-", "hyp-")
                                           .str.replace("rmero", "mero"))
    mark(frame["relation"] == "no-rel", "no-rel")
    open_rows = reason == ""
    keys = pd.Series([frozenset(p) for p in zip(frame["word1"], frame["word2"])], index=frame.index)
    # among the pairs still in: an excluded (X, Y) must not knock out its (Y, X)
    mark(keys[open_rows].duplicated().reindex(frame.index, fill_value=False), "duplicate")
    frame["excluded"] = reason
    frame["pool"] = "step1"
    return frame[POOL_COLUMNS[:-1]]


# -- drawing with the human check -------------------------------------------------------------
@dataclasses.dataclass
class Draw:
    """The state of one pool's draw: pairs accepted, still to check, rejected, and looked at."""

    pos: str
    relation: str
    pool: int | str
    quota: int
    accepted: list = dataclasses.field(default_factory=list)
    pending: list = dataclasses.field(default_factory=list)
    rejected: int = 0

    def record(self) -> dict:
        short = self.quota - len(self.accepted) - len(self.pending)
        return {"pos": self.pos, "relation": self.relation, "pool": self.pool, "quota": self.quota,
                "accepted": len(self.accepted), "to_check": len(self.pending),
                "rejected": self.rejected, "shortfall": short}


def walk(draw: Draw, candidates: Iterator[tuple], decisions: dict | None) -> Draw:
    """Go through a pool in its random order until accepted + pending pairs fill the quota.

    ``decisions`` maps (word1, word2, pos, relation) to accepted / rejected; ``None`` accepts
    every pair unchecked (``--no-check``).
    """
    if draw.quota <= 0:
        return draw
    for key in candidates:
        status = "accepted" if decisions is None else decisions.get(key)
        if status == "accepted":
            draw.accepted.append(key)
        elif status == "rejected":
            draw.rejected += 1
        else:
            draw.pending.append(key)
        if len(draw.accepted) + len(draw.pending) >= draw.quota:
            break
    return draw


def _in_order(pool: pd.DataFrame, rng: np.random.Generator) -> Iterator[tuple]:
    pool = pool.sort_values(["word1", "word2"])
    keys = list(zip(pool["word1"], pool["word2"], pool["pos"], pool["relation"]))
    return (keys[i] for i in rng.permutation(len(keys)))


def draw_step1(pool: pd.DataFrame, settings: HyperLexBuild, rng: np.random.Generator,
               decisions: dict | None) -> list[Draw]:
    """Step 1 (section 4.2): each (POS, relation) quota drawn from its pool, with checks."""
    candidates = pool[pool["excluded"] == ""]
    draws = []
    for pos in settings.pos:
        quotas = settings.step1.get(pos, {})
        for relation in relation_names(settings.hyp_max):
            if relation not in quotas:
                continue
            stratum = candidates[(candidates["pos"] == pos) & (candidates["relation"] == relation)]
            draw = Draw(pos, relation, len(stratum), quotas[relation])
            draws.append(walk(draw, _in_order(stratum, rng), decisions))
    return draws


def draw_step2(step1: list[Draw], settings: HyperLexBuild, rng: np.random.Generator,
               decisions: dict | None, no_rel_candidates) -> list[Draw]:
    """Step 2 (section 4.2): rhyp-N from the accepted hyp-N pairs reversed, and no-rel pairs.

    ``no_rel_candidates(words, pos, rng)`` yields the no-rel pool lazily, in random order.
    """
    draws = []
    for pos in settings.pos:
        quotas = settings.step2.get(pos, {})
        accepted = [key for d in step1 if d.pos == pos for key in d.accepted]
        for relation in relation_names(settings.hyp_max):
            if relation not in quotas or relation == "no-rel":
                continue
            hyp = "hyp-" + relation.split("-")[1]
            reversed_ = pd.DataFrame([(b, a, p, relation) for a, b, p, r in accepted if r == hyp],
                                     columns=["word1", "word2", "pos", "relation"])
            draw = Draw(pos, relation, len(reversed_), quotas[relation])
            draws.append(walk(draw, _in_order(reversed_, rng), decisions))
        if "no-rel" in quotas:
            words = sorted({w for a, b, _, _ in accepted for w in (a, b)})
            draw = Draw(pos, "no-rel", f"{len(words)} words: {len(words) * (len(words) - 1)} ordered pairs",
                        quotas["no-rel"])
            draws.append(walk(draw, no_rel_candidates(words, pos, rng), decisions))
    return draws


class NoRelPool:
    """The no-rel pool drawn lazily from the Cartesian product of step-1 words (section 4.2).

    Each examined pair is kept in :attr:`examined` with the reason it was skipped, for pool.csv.
    """

    def __init__(self, usf: pd.DataFrame, labeller: RelationLabeller):
        w1, w2 = common.lower_words(usf["cue"]), common.lower_words(usf["target"])
        self.in_usf = set(zip(w1, w2))
        self.cues = set(w1)
        self.labeller = labeller
        self.examined: list[dict] = []

    def reason(self, a: str, b: str, pos: str) -> str:
        if (a, b) in self.in_usf or (b, a) in self.in_usf:
            return "in-usf"
        if a not in self.cues or b not in self.cues:
            return "not-normed"
        relation = self.labeller.relation(a, b, pos)
        if relation == "no-rel" and pos == "N" and self.labeller.relation(b, a, pos) == "mero":
            relation = "rmero"  # b is a part of a (section 4.1's mero, the other way round)
        return "" if relation == "no-rel" else f"wordnet-{relation}"

    def __call__(self, words: list[str], pos: str, rng: np.random.Generator) -> Iterator[tuple]:
        n = len(words)
        seen = set()
        for index in rng.permutation(n * n):
            a, b = words[index // n], words[index % n]
            if a == b:
                continue
            key = frozenset((a, b))
            why = "duplicate" if key in seen else self.reason(a, b, pos)
            seen.add(key)
            self.examined.append({"word1": a, "word2": b, "pos": pos, "relation": "no-rel",
                                  "pool": "no-rel", "excluded": why})
            if not why:
                yield (a, b, pos, "no-rel")


# -- section 5: concreteness groups -----------------------------------------------------------
def concreteness_groups(conc1: pd.Series, conc2: pd.Series, scale: GroupScale) -> pd.Series:
    """G1 both >= t; G2 both < t; G3 one each side, |c1 - c2| <= diff; G4 mixed, > diff."""
    concrete1, concrete2 = conc1 >= scale.threshold, conc2 >= scale.threshold
    mixed_close = (concrete1 != concrete2) & ((conc1 - conc2).abs() <= scale.group_difference)
    groups = np.select([concrete1 & concrete2, ~concrete1 & ~concrete2, mixed_close,
                        concrete1 != concrete2], GROUPS, "")
    return pd.Series(np.where(conc1.isna() | conc2.isna(), "", groups), index=conc1.index)


# -- the whole protocol -----------------------------------------------------------------------
@dataclasses.dataclass
class Resources:
    """What a HyperLex build reads, in memory."""

    usf: pd.DataFrame
    labeller: RelationLabeller
    conc: pd.Series
    offensive: set[str] = dataclasses.field(default_factory=set)
    is_proper: object = None


def build_hyperlex(res: Resources, settings: HyperLexBuild, seed: int,
                   verdicts: pd.DataFrame | None, pool: pd.DataFrame | None = None,
                   ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, dict]:
    """Pools, draws and checks of HyperLex sections 4.1-4.2 over in-memory resources.

    Parameters
    ----------
    res : Resources
    settings : HyperLexBuild
    seed : int
        Step 1 and step 2 draw from independent streams of this seed.
    verdicts : DataFrame or None
        Checkers' verdicts (:mod:`checking`); ``None`` skips the human check (every drawn pair
        is accepted as WordNet labels it).
    pool : DataFrame, optional
        The result of :func:`candidate_pool`, when already computed.

    Returns
    -------
    pool, pairs, to_check, report
        ``to_check`` holds the drawn pairs still waiting for verdicts (step, word1, word2, pos,
        relation).
    """
    if pool is None:
        pool = candidate_pool(res.usf, settings, res.labeller, res.offensive, res.is_proper)
    decisions = None if verdicts is None else checking.tally_verdicts(verdicts, settings.min_checkers)
    step1 = draw_step1(pool, settings, np.random.default_rng([seed, 1]), decisions)
    step1_open = any(d.pending for d in step1)
    no_rel = NoRelPool(res.usf, res.labeller)
    step2 = [] if step1_open else draw_step2(step1, settings, np.random.default_rng([seed, 2]),
                                             decisions, no_rel)
    if no_rel.examined:
        pool = pd.concat([pool, pd.DataFrame(no_rel.examined)], ignore_index=True)
    status = {key: "accepted" for d in step1 + step2 for key in d.accepted}
    status.update({key: "to-check" for d in step1 + step2 for key in d.pending})
    pool["drawn"] = [status.get(key, "") for key in
                     zip(pool["word1"], pool["word2"], pool["pos"], pool["relation"])]
    pool.loc[pool["excluded"] != "", "drawn"] = ""
    pairs = _pairs(step1, step2, res.conc, settings, verdicts)
    to_check = pd.DataFrame(
        [(step, *key) for step, draws in ((1, step1), (2, step2)) for d in draws for key in d.pending],
        columns=["step", "word1", "word2", "pos", "relation"])
    report = _report(pool, pairs, step1, step2, step1_open, settings, verdicts)
    return pool[POOL_COLUMNS], pairs, to_check, report


def _pairs(step1, step2, conc, settings, verdicts) -> pd.DataFrame:
    tallies = checking.votes(verdicts) if verdicts is not None else {}
    rows = []
    for step, draws in ((1, step1), (2, step2)):
        for draw in draws:
            for key in draw.accepted:
                agree, total = tallies.get(key, (0, 0))
                rows.append({"word1": key[0], "word2": key[1], "pos": key[2], "relation": key[3],
                             "step": step, "check": f"{agree} of {total} agree" if total else "unchecked"})
    pairs = pd.DataFrame(rows, columns=PAIR_COLUMNS[:6])
    pairs["conc1"], pairs["conc2"] = pairs["word1"].map(conc), pairs["word2"].map(conc)
    pairs["conc_group"] = concreteness_groups(pairs["conc1"], pairs["conc2"],
                                              settings.concreteness.active())
    return pairs[PAIR_COLUMNS]


def _report(pool, pairs, step1, step2, step1_open, settings, verdicts) -> dict:
    usf_rows = pool[pool["pool"] == "step1"]
    candidates = usf_rows[usf_rows["excluded"] == ""]
    not_rhyp = pairs[~pairs["relation"].str.startswith("rhyp-")]
    draws = [d.record() for d in step1 + step2]
    shortfalls = [f"{r['pos']} {r['relation']}: short by {r['shortfall']} (quota {r['quota']}, "
                  f"pool {r['pool']}; {r['accepted']} accepted)" for r in draws if r["shortfall"] > 0]
    to_check = sum(r["to_check"] for r in draws)
    if verdicts is None:
        status = "complete without the human check (--no-check): pairs are WordNet's labels"
    elif to_check:
        status = f"awaiting the human check of {to_check} pairs (step {1 if step1_open else 2})"
    else:
        status = "complete"
    return {
        "status": status,
        "pool": {
            "usf_pairs": len(usf_rows),
            "excluded": {k: int(v) for k, v in usf_rows.loc[usf_rows["excluded"] != "", "excluded"]
                         .value_counts().sort_index().items()},
            "candidates": {p: {r: int(((candidates["pos"] == p) & (candidates["relation"] == r)).sum())
                               for r in relation_names(settings.hyp_max)
                               if ((candidates["pos"] == p) & (candidates["relation"] == r)).any()}
                           for p in settings.pos},
        },
        "step1": [r for r in draws[:len(step1)]],
        "step2": draws[len(step1):] if not step1_open else "waits until every step-1 pair is checked",
        "quota_shortfall": sum(max(r["shortfall"], 0) for r in draws),
        "shortfalls": shortfalls or "none",
        "pairs": len(pairs),
        "pairs_by_pos": {p: int((pairs["pos"] == p).sum()) for p in settings.pos},
        "pairs_by_relation": {r: int((pairs["relation"] == r).sum())
                              for r in relation_names(settings.hyp_max)},
        "pairs_by_relation_and_pos": {
            r: {p: int(((pairs["relation"] == r) & (pairs["pos"] == p)).sum()) for p in settings.pos}
            for r in relation_names(settings.hyp_max)},
        "concreteness_groups": {
            "source": settings.concreteness.source, "rhyp_pairs_left_out": True,
            **{g: int((not_rhyp["conc_group"] == g).sum()) for g in GROUPS},
            "missing_rating": int((not_rhyp["conc_group"] == "").sum())},
        "human_check": None if verdicts is None else {
            "min_checkers": settings.min_checkers, "verdicts": len(verdicts),
            "checkers": sorted(set(verdicts["checker"])), "pairs_to_check": to_check},
    }


def closing_note(report: dict) -> str:
    """The lines ``lexgold build hyperlex`` ends with: pairs per relation and POS, shortfalls."""
    by_pos = ", ".join(f"{k} {v}" for k, v in report["pairs_by_pos"].items())
    cells = report["pairs_by_relation_and_pos"]
    pos = list(report["pairs_by_pos"])
    per_relation = ", ".join(f"{r} {'/'.join(str(cells[r][p]) for p in pos)}" for r in cells
                             if any(cells[r].values())) or "none accepted yet"
    short = report["shortfalls"]
    return (f"{report['pairs']} pairs accepted ({by_pos}); {report['status']}\n"
            f"per relation ({' / '.join(pos)}): {per_relation}\n"
            f"short: {'none' if short == 'none' else '; '.join(short)}")


def load_settings(protocol: dict, concreteness: str | None = None) -> HyperLexBuild:
    """The checked ``[build]`` table, with a command-line override of the concreteness source."""
    settings = parse_section(HyperLexBuild, protocol, "build")
    if concreteness:
        settings.concreteness.source = concreteness
    return check_settings(settings, protocol.get("_path", "<protocol>"))


def run_hyperlex(out_dir, *, protocol="hyperlex", usf_dir=None, wordnet_dir=None, brysbaert=None,
                 seed: int = 0, checked: tuple = (), no_check: bool = False,
                 concreteness: str | None = None) -> dict:
    """``lexgold build hyperlex``: build, record verdicts, write pool/pairs/report and a sheet.

    Files in ``out_dir``: ``pool.csv``, ``pairs.csv`` (accepted pairs), ``report.json``,
    ``checks.csv`` (every verdict so far) and, while pairs wait for a check,
    ``check-round-R.csv`` (the sheet to fill next; sheets of earlier rounds are left alone,
    they may be the filled copies).
    """
    protocol = load_protocol(protocol)
    settings = load_settings(protocol, concreteness)
    base = Path(protocol["_path"]).parent
    out = Path(out_dir)
    usf = read_usf(usf_dir)
    wordnet = load_graph(wordnet_dir)   # the cached graph: no NLTK reader (built if missing)
    labeller = labeller_for(wordnet, settings)
    lists = [common.resolve(base, p) for p in settings.offensive_lists]
    offensive = set().union(*(read_word_list(p) for p in lists)) if lists else set()
    source = settings.concreteness.source
    res = Resources(usf, labeller,
                    common.concreteness_table(source, usf, settings.concreteness.active(), brysbaert),
                    offensive,
                    common.proper_noun_detector(wordnet) if settings.named_entities == "wordnet" else None)
    pool = candidate_pool(res.usf, settings, res.labeller, res.offensive, res.is_proper)
    verdicts = None
    if not no_check:
        verdicts = _verdicts(out, checked, pool, res)
    elif checked:
        raise InputError("--checked and --no-check exclude each other", field="--checked")
    pool, pairs, to_check, report = build_hyperlex(res, settings, seed, verdicts, pool)
    resources = {"usf_appendix_a": common.usf_checksums(usf_dir),
                 "wordnet": common.wordnet_checksums(wordnet_dir),
                 "offensive_lists": common.files_checksums(lists)}
    if source == "brysbaert":
        resources["brysbaert_concreteness"] = common.brysbaert_checksums(brysbaert)
    report["manifest"] = common.manifest(protocol, seed, settings, resources)
    out.mkdir(parents=True, exist_ok=True)
    if verdicts is not None:
        round_ = int(verdicts["round"].max()) + 1 if len(verdicts) else 1
        if len(to_check):
            name = f"check-round-{round_}.csv"
            common.write_csv(checking.sheet(to_check, round_, checking.votes(verdicts)), out / name)
            report["human_check"]["sheet"] = name
        common.write_csv(verdicts, out / "checks.csv")
    common.write_csv(pool, out / "pool.csv")
    common.write_csv(pairs, out / "pairs.csv")
    common.write_json(report, out / "report.json")
    return report


def _verdicts(out: Path, checked, pool: pd.DataFrame, res: Resources) -> pd.DataFrame:
    """Earlier verdicts (``checks.csv``) plus those of the sheets given now."""
    open_ = pool[pool["excluded"] == ""]
    known_pairs = set(zip(open_["word1"], open_["word2"], open_["pos"], open_["relation"]))
    known_pairs |= {(b, a, p, "r" + r) for a, b, p, r in known_pairs if r.startswith("hyp-")}
    no_rel = NoRelPool(res.usf, res.labeller)

    def known(word1, word2, pos, relation):
        if relation == "no-rel":
            return pos in ("N", "V") and no_rel.reason(word1, word2, pos) == ""
        return (word1, word2, pos, relation) in known_pairs

    old = checking.read_verdict_log(out / "checks.csv")
    new = checking.read_sheets(checked, known)
    return checking.merge_verdicts(old, new) if len(new) else old
