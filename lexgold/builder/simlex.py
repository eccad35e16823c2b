"""SimLex-999 candidate pool and stratified sample (Hill, Reichart & Korhonen 2015, section 3.1).

Steps, each a function below:

1. :func:`associated_pool` -- every USF cue-target pair, lower-cased and written in SimLex-999's
   orientation (word1 = the USF target, word2 = the cue: in the released file Assoc(USF) is
   10 x FSG(word2 -> word1)), with the reason it is not a candidate (multi-word item, capital
   letter, POS tendency below 75 %, mixed POS, no concreteness rating), its POS, concreteness
   and USF strength.
2. :func:`assign_classes` -- concreteness classes C1-C4 from the first item's rating c1 and the
   difference d = |c1 - c2| against the median m of d over the candidate pool (per POS):
   C1 c1 > t and d <= m; C2 c1 > t, d > m; C3 c1 <= t and d <= m; C4 c1 <= t, d > m
   (t = 3 on Brysbaert's 1-5 scale, 4 on USF's 1-7). With ``class_direction = "required"``
   C2 also needs c2 < c1 and C4 c2 > c1, as the paper words them.
3. :func:`sample_cohort` -- 600 N / 200 V / 100 A associated pairs, equally over C1-C4
   (``class_allocation = "proportional"``: in proportion to the classes' candidate pools).
4. :func:`unassociated_pool` -- the words of the sampled pairs paired up at random; pairs found
   anywhere in USF (either direction) are dropped, both words must have been normed as cues.
5. :func:`sample_cohort` again -- 66 N / 22 V / 11 A unassociated pairs, over C1-C4 as in 3.

:func:`build_simlex` runs them over frames; :func:`run_simlex` adds the I/O (``pool.csv``,
``pairs.csv``, ``report.json``). docs/builders.md gives each rule with its reason.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Annotated, Literal

import numpy as np
import pandas as pd

from lexgold.builder import common
from lexgold.builder.common import ConcretenessScale, PosKeys
from lexgold.errors import InputError
from lexgold.protocols import between, check_instance, load_protocol, parse_section
from lexgold.resources import read_usf
from lexgold.resources.wordnet import wordnet_file
from lexgold.resources.wordnet_graph import load_graph

CLASSES = ["C1", "C2", "C3", "C4"]
POS = ["N", "V", "A"]
POOL_COLUMNS = ["word1", "word2", "pos", "cohort", "conc1", "conc2", "conc_diff", "conc_class",
                "fsg", "bsg", "n_participants", "pos_share1", "pos_share2", "excluded", "sampled"]
PAIR_COLUMNS = ["word1", "word2", "pos", "cohort", "conc1", "conc2", "conc_class", "fsg"]


ORIENTATIONS = ("target-cue", "cue-target")
CONC_SOURCES = ("usf", "brysbaert")
#: how a POS quota is spread over C1-C4: equally (section 3.1) or as the eligible pool is
ALLOCATIONS = ("equal", "proportional")


@dataclasses.dataclass
class SimLexConcreteness:
    source: Literal[CONC_SOURCES] = "brysbaert"        # brysbaert (1-5) | usf (QCON/TCON, 1-7)
    fallback: Literal[CONC_SOURCES + ("none",)] = "usf"  # words the source lacks
    median_scope: Literal["pos", "global"] = "pos"      # Decision: median of d per POS pool
    class_direction: Literal["any", "required"] = "any"  # required: C2 c2 < c1, C4 c2 > c1
    class_allocation: Literal[ALLOCATIONS] = "equal"    # equal (the paper) | proportional
    usf: ConcretenessScale = dataclasses.field(
        default_factory=lambda: ConcretenessScale([1.0, 7.0], 4.0))
    brysbaert: ConcretenessScale = dataclasses.field(
        default_factory=lambda: ConcretenessScale([1.0, 5.0], 3.0))

    def active(self) -> ConcretenessScale:
        return getattr(self, self.source)


@dataclasses.dataclass
class SimLexBuild:
    """The ``[build]`` table of a SimLex-style protocol; defaults are the paper's values."""

    orientation: Literal[ORIENTATIONS] = "target-cue"  # word1 = USF target, word2 = cue
    word_pattern: str = "[a-z]+"         # Decision: single words of letters only
    proper_nouns: Literal["wordnet", "none"] = "wordnet"  # the "capital letter" test
    pos: PosKeys = dataclasses.field(default_factory=PosKeys)
    concreteness: SimLexConcreteness = dataclasses.field(default_factory=SimLexConcreteness)
    associated: dict[Literal[tuple(POS)], Annotated[int, between(0)]] = dataclasses.field(
        default_factory=lambda: {"N": 600, "V": 200, "A": 100})
    unassociated: dict[Literal[tuple(POS)], Annotated[int, between(0)]] = dataclasses.field(
        default_factory=lambda: {"N": 66, "V": 22, "A": 11})
    #: random pairings of the sampled words (paper: one)
    pairing_rounds: Annotated[int, between(1)] = 1


def check_settings(settings: SimLexBuild, source: str = "<protocol>") -> SimLexBuild:
    """Check settings again after command-line overrides (one path: the ``[build]`` schema)."""
    return check_instance(settings, source, "build")


# -- step 1 ------------------------------------------------------------------------------------
def associated_pool(usf: pd.DataFrame, pos: pd.DataFrame, conc: pd.Series, settings: SimLexBuild,
                    is_proper=None) -> pd.DataFrame:
    """Every USF pair with its POS, concreteness, strength and the first reason it is excluded.

    With ``settings.orientation == "target-cue"`` (the release's orientation) word1 is the USF
    target and word2 the cue, so ``fsg`` (USF's forward strength, cue -> target) is the strength
    of word2 -> word1 and ``conc1``, the "first item" of the classes, is the target's rating.

    Parameters
    ----------
    usf : DataFrame from :func:`lexgold.resources.read_usf`
    pos : DataFrame, index word, columns ``pos`` and ``share`` (:func:`pos_tendency`)
    conc : Series, word -> concreteness
    settings : SimLexBuild
    is_proper : callable, optional
        word -> bool, the "capital letter" test (:func:`common.proper_noun_detector`).
    """
    first, second = ("target", "cue") if settings.orientation == "target-cue" else ("cue", "target")
    w1, w2 = common.lower_words(usf[first]), common.lower_words(usf[second])
    frame = pd.DataFrame({"word1": w1, "word2": w2, "fsg": usf["fsg"], "bsg": usf["bsg"],
                          "n_participants": usf["n_participants"]})
    reason = pd.Series("", index=frame.index, dtype=object)

    def mark(mask, why):
        reason[(reason == "") & mask.fillna(True).astype(bool)] = why

    for column in ("word1", "word2"):
        problem = common.word_form_problems(frame[column], settings.word_pattern)
        for why in ("multi-word", "pattern"):
            mark(problem == why, why)
    mark(w1 == w2, "same-word")
    tag1, tag2 = w1.map(pos["pos"]), w2.map(pos["pos"])
    share1, share2 = w1.map(pos["share"]), w2.map(pos["share"])
    frame["pos_share1"], frame["pos_share2"] = share1.round(4), share2.round(4)
    mark(tag1.isna() | tag2.isna(), "no-pos")
    mark((share1 < settings.pos.min_tendency) | (share2 < settings.pos.min_tendency), "pos-tendency")
    mark(~tag1.isin(POS) | ~tag2.isin(POS), "pos-not-nva")
    mark(tag1 != tag2, "mixed-pos")
    frame["pos"] = np.where(tag1 == tag2, tag1, tag1.fillna("?") + "/" + tag2.fillna("?"))
    frame["conc1"], frame["conc2"] = w1.map(conc), w2.map(conc)
    mark(frame["conc1"].isna() | frame["conc2"].isna(), "no-concreteness")
    if is_proper is not None:  # last: the WordNet look-up is the slow test
        open_rows = reason == ""
        words = pd.unique(pd.concat([w1[open_rows], w2[open_rows]]))
        proper = {w for w in words if is_proper(w)}
        mark(w1.isin(proper) | w2.isin(proper), "capital-letter")
    frame["excluded"] = reason
    frame["cohort"] = "associated"
    return frame


# -- step 2 ------------------------------------------------------------------------------------
def assign_classes(frame: pd.DataFrame, threshold: float, median_scope: str = "pos",
                   direction: str = "any") -> tuple[pd.DataFrame, dict]:
    """Add ``conc_diff`` and ``conc_class`` (C1-C4) to the candidate rows (``excluded == ""``).

    Returns the frame (rows in no class get ``excluded = "no-class"``) and the median of d used
    per POS. Boundaries follow the paper: "below-median" is d <= m, "greater" is d > m.
    ``direction = "any"``: the four classes split the pool by c1 > t and d > m, so every
    candidate has a class; ``"required"``: C2 also needs c2 < c1 and C4 c2 > c1, and a pair
    with a large difference the other way has no class.
    """
    frame = frame.copy()
    # ratings have two decimals: round away float noise so that d == m counts as d <= m
    frame["conc_diff"] = (frame["conc1"] - frame["conc2"]).abs().round(6)
    frame["conc_class"] = ""
    candidate = frame["excluded"] == ""
    medians = {}
    scopes = [("all", candidate)] if median_scope == "global" else [
        (p, candidate & (frame["pos"] == p)) for p in POS]
    for name, rows in scopes:
        if not rows.any():
            continue
        m = float(frame.loc[rows, "conc_diff"].median())
        medians[name] = round(m, 6)
        c1, c2, d = frame["conc1"], frame["conc2"], frame["conc_diff"]
        concrete = c1 > threshold
        down, up = (c2 < c1, c2 > c1) if direction == "required" else (True, True)
        classes = np.select(
            [concrete & (d <= m), concrete & down & (d > m),
             ~concrete & (d <= m), ~concrete & up & (d > m)], CLASSES, "")
        frame.loc[rows, "conc_class"] = classes[rows.to_numpy()]
    frame.loc[candidate & (frame["conc_class"] == ""), "excluded"] = "no-class"
    return frame, medians


# -- steps 3 and 5 -------------------------------------------------------------------------------
def sample_cohort(pool: pd.DataFrame, quotas: dict[str, int], rng: np.random.Generator,
                  taken: set | None = None, allocation: str = "equal"
                  ) -> tuple[pd.DataFrame, list[dict]]:
    """Draw each POS quota over C1-C4 from the candidate rows of ``pool``.

    ``allocation = "equal"`` (section 3.1: "each of the four concreteness classes C1-C4 was
    equally represented") gives each class a quarter of the quota, the remainder to classes
    drawn at random; ``"proportional"`` gives each class the share it has of the POS's
    candidates (:func:`common.proportional_quota`).

    Returns the sample and one record per (POS, class): pool size, quota, sampled, shortfall.
    A class with too few candidates gives all it has; the shortfall is reported, not filled
    from other classes.
    """
    if allocation not in ALLOCATIONS:
        raise InputError(f"expected one of {', '.join(ALLOCATIONS)}, found {allocation!r}",
                         field="build.concreteness.class_allocation")
    taken = set() if taken is None else taken
    candidates = pool[pool["excluded"] == ""]
    parts, records = [], []
    for pos in POS:
        quota = quotas.get(pos, 0)
        strata = {cls: candidates[(candidates["pos"] == pos) & (candidates["conc_class"] == cls)]
                  for cls in CLASSES}
        per_class = (common.split_quota(quota, CLASSES, rng) if allocation == "equal" else
                     common.proportional_quota(quota, {c: len(f) for c, f in strata.items()}))
        for cls in CLASSES:
            stratum = strata[cls]
            chosen = common.draw(stratum.sort_values(["word1", "word2"]), per_class[cls], rng, taken)
            parts.append(chosen)
            records.append({"cohort": str(pool["cohort"].iat[0]) if len(pool) else "", "pos": pos,
                            "conc_class": cls, "pool": len(stratum), "quota": per_class[cls],
                            "sampled": len(chosen), "shortfall": per_class[cls] - len(chosen)})
    sample = pd.concat(parts) if parts else pool.iloc[:0]
    return sample, records


# -- step 4 ------------------------------------------------------------------------------------
def unassociated_pool(sample: pd.DataFrame, usf: pd.DataFrame, conc: pd.Series,
                      rng: np.random.Generator, rounds: int = 1) -> pd.DataFrame:
    """Pair up the words of the associated sample at random, per POS (section 3.1).

    Each round shuffles the word tokens of one POS and pairs neighbours. Excluded (first reason):
    ``same-word``, ``duplicate``, ``in-usf`` (the pair is in USF in either direction, any
    pair of the full norms), ``not-normed`` (a word was never a USF cue), ``no-concreteness``.
    """
    cues = set(common.lower_words(usf["cue"]))
    in_usf = set(zip(common.lower_words(usf["cue"]), common.lower_words(usf["target"])))
    rows = []
    for pos in POS:
        tokens = np.array(list(sample.loc[sample["pos"] == pos, ["word1", "word2"]].to_numpy().ravel()),
                          dtype=object)
        for _ in range(rounds):
            shuffled = tokens[rng.permutation(len(tokens))]
            for a, b in zip(shuffled[0::2], shuffled[1::2]):
                rows.append((a, b, pos))
    frame = pd.DataFrame(rows, columns=["word1", "word2", "pos"])
    reason = pd.Series("", index=frame.index, dtype=object)
    seen = set()
    for i, (a, b) in enumerate(zip(frame["word1"], frame["word2"])):
        key = frozenset((a, b))
        if a == b:
            reason.iat[i] = "same-word"
        elif key in seen:
            reason.iat[i] = "duplicate"
        elif (a, b) in in_usf or (b, a) in in_usf:
            reason.iat[i] = "in-usf"
        elif a not in cues or b not in cues:
            reason.iat[i] = "not-normed"
        seen.add(key)
    frame["conc1"], frame["conc2"] = frame["word1"].map(conc), frame["word2"].map(conc)
    reason[(reason == "") & (frame["conc1"].isna() | frame["conc2"].isna())] = "no-concreteness"
    frame["excluded"] = reason
    frame["cohort"] = "unassociated"
    frame["fsg"] = frame["bsg"] = frame["pos_share1"] = frame["pos_share2"] = np.nan
    frame["n_participants"] = pd.array([pd.NA] * len(frame), dtype="Int64")
    return frame


# -- the whole protocol ----------------------------------------------------------------------------
def build_simlex(usf: pd.DataFrame, pos: pd.DataFrame, conc: pd.Series, settings: SimLexBuild,
                 rng: np.random.Generator, is_proper=None) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """Pool, sample and report of SimLex-999 section 3.1 over in-memory resources.

    Returns
    -------
    pool : DataFrame, every USF pair and every random pairing, columns :data:`POOL_COLUMNS`
    pairs : DataFrame, the sample (:data:`PAIR_COLUMNS`), associated cohort first
    report : dict with pool sizes per exclusion reason, class sizes, quotas and shortfalls
    """
    threshold = settings.concreteness.active().threshold
    scope, direction = settings.concreteness.median_scope, settings.concreteness.class_direction
    assoc = associated_pool(usf, pos, conc, settings, is_proper)
    assoc, assoc_medians = assign_classes(assoc, threshold, scope, direction)
    taken: set = set()
    allocation = settings.concreteness.class_allocation
    assoc_sample, assoc_records = sample_cohort(assoc, settings.associated, rng, taken, allocation)
    unassoc = unassociated_pool(assoc_sample, usf, conc, rng, settings.pairing_rounds)
    unassoc, unassoc_medians = assign_classes(unassoc, threshold, scope, direction)
    unassoc_sample, unassoc_records = sample_cohort(unassoc, settings.unassociated, rng, taken,
                                                    allocation)
    for frame, sample in ((assoc, assoc_sample), (unassoc, unassoc_sample)):
        frame["sampled"] = frame.index.isin(sample.index)
    pool = pd.concat([assoc, unassoc], ignore_index=True)[POOL_COLUMNS]
    pairs = pd.concat([assoc_sample, unassoc_sample], ignore_index=True)[PAIR_COLUMNS]
    report = {
        "cohorts": {
            "associated": _cohort_report(assoc, assoc_medians, assoc_records),
            "unassociated": _cohort_report(unassoc, unassoc_medians, unassoc_records),
        },
        "class_allocation": allocation,
        "pairs": len(pairs),
        "pairs_by_pos": {p: int((pairs["pos"] == p).sum()) for p in POS},
    }
    report["quota_shortfall"] = sum(r["shortfall"] for c in report["cohorts"].values()
                                    for r in c["strata"])
    return pool, pairs, report


def _cohort_report(frame: pd.DataFrame, medians: dict, records: list[dict]) -> dict:
    candidates = frame[frame["excluded"] == ""]
    shortfalls = [f"{r['pos']} {r['conc_class']}: {r['sampled']} of {r['quota']} "
                  f"(short by {r['shortfall']})" for r in records if r["shortfall"] > 0]
    return {
        "rows": len(frame),
        "excluded": {k: int(v) for k, v in frame.loc[frame["excluded"] != "", "excluded"]
                     .value_counts().sort_index().items()},
        "candidates_by_pos": {p: int((candidates["pos"] == p).sum()) for p in POS},
        "classes": {p: {c: int(((candidates["pos"] == p) & (candidates["conc_class"] == c)).sum())
                        for c in CLASSES} for p in POS},
        "median_conc_diff": medians,
        "strata": [{k: (int(v) if isinstance(v, (int, np.integer)) else v) for k, v in r.items()}
                   for r in records],
        "shortfalls": shortfalls or "none: every quota met",
    }


def load_settings(protocol: dict, *, concreteness: str | None = None,
                  concreteness_fallback: str | None = None,
                  pos_source: str | tuple[str, ...] | None = None,
                  tagged_corpus: tuple[str, ...] = ()) -> SimLexBuild:
    """The checked ``[build]`` table with command-line overrides applied."""
    settings = parse_section(SimLexBuild, protocol, "build")
    if concreteness:
        settings.concreteness.source = concreteness
    if concreteness_fallback:
        settings.concreteness.fallback = concreteness_fallback
    if tagged_corpus:
        settings.pos.source, settings.pos.corpus = "corpus", [str(Path(p).resolve()) for p in tagged_corpus]
    if pos_source:
        settings.pos.source = pos_source if isinstance(pos_source, str) else (
            pos_source[0] if len(pos_source) == 1 else list(pos_source))
    return check_settings(settings, protocol.get("_path", "<protocol>"))


def run_simlex(out_dir, *, protocol="simlex", usf_dir=None, wordnet_dir=None, brysbaert=None,
               seed: int = 0, concreteness: str | None = None,
               concreteness_fallback: str | None = None,
               pos_source: str | tuple[str, ...] | None = None,
               tagged_corpus: tuple[str, ...] = ()) -> dict:
    """``lexgold build simlex``: read the resources, build, write pool.csv, pairs.csv, report.json.

    ``report["warnings"]`` lists what the caller should shout about (a POS source that gives
    every word one tag, so that the 75 % rule drops nothing).
    """
    protocol = load_protocol(protocol)
    settings = load_settings(protocol, concreteness=concreteness,
                             concreteness_fallback=concreteness_fallback, pos_source=pos_source,
                             tagged_corpus=tagged_corpus)
    base = Path(protocol["_path"]).parent
    usf = read_usf(usf_dir)
    counts = common.pos_counts(settings.pos, usf, base, wordnet_dir)
    pos = common.tendency(counts, settings.pos)
    warning = common.one_tag_warning(counts, settings.pos)
    conc_keys = settings.concreteness
    scales = {"usf": conc_keys.usf, "brysbaert": conc_keys.brysbaert}
    conc, origin = common.concreteness_with_fallback(conc_keys.source, conc_keys.fallback, usf,
                                                     scales, brysbaert)
    is_proper = None
    resources = {"usf_appendix_a": common.usf_checksums(usf_dir)}
    if settings.proper_nouns == "wordnet":
        is_proper = common.proper_noun_detector(load_graph(wordnet_dir))
        resources["wordnet"] = common.wordnet_checksums(wordnet_dir)
    if "brysbaert" in set(origin):
        resources["brysbaert_concreteness"] = common.brysbaert_checksums(brysbaert)
    sources = common.pos_sources(settings.pos)
    if "penn" in sources:
        resources["pos_penn"] = common.files_checksums([settings.pos.penn_file])
    if "semcor" in sources:
        resources["pos_semcor"] = common.files_checksums([wordnet_file("cntlist.rev", wordnet_dir)])
    if "corpus" in sources:
        resources["pos_corpus"] = common.files_checksums(
            [common.resolve(base, p) for p in settings.pos.corpus])
    pool, pairs, report = build_simlex(usf, pos, conc, settings, np.random.default_rng(seed), is_proper)
    candidates = pool[pool["excluded"] == ""]
    words = pd.unique(pd.concat([candidates["word1"], candidates["word2"]]))
    report["concreteness"] = {
        "source": conc_keys.source, "fallback": conc_keys.fallback,
        "scale": scales[conc_keys.source].scale,
        "candidate_words": {k: int(v) for k, v in origin.reindex(words).value_counts().sort_index().items()},
    }
    report["pos_tendency"] = {
        "sources": sources, "min_tendency": settings.pos.min_tendency, "words_tagged": len(pos),
        "words_below_min_tendency": int((pos["share"] < settings.pos.min_tendency).sum()),
    }
    report["orientation"] = settings.orientation
    report["warnings"] = [warning] if warning else []
    report["manifest"] = common.manifest(protocol, seed, settings, resources)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    common.write_csv(pool, out / "pool.csv")
    common.write_csv(pairs, out / "pairs.csv")
    common.write_json(report, out / "report.json")
    return report
