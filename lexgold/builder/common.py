"""Pieces the SimLex-999 and HyperLex builders share: word filters, concreteness and POS
sources, random stratified draws, the run manifest and the output files (docs/contract.md).

Outputs are deterministic: a run with the same inputs, protocol and seed writes the same bytes
(CSV with ``\\n`` line ends, JSON with sorted keys, no clock time anywhere).
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Annotated, Literal

import numpy as np
import pandas as pd

from lexgold import stats
from lexgold.compression import sha256_file
from lexgold.errors import InputError
from lexgold.manifest import run_manifest
from lexgold.protocols import Invalid, between
from lexgold.resources import (one_tag_per_word, penn_tag_counts, pos_tendency,
                               read_brysbaert, semcor_tag_counts, sum_counts,
                               tagged_corpus_counts, usf_concreteness, usf_pos_counts)
from lexgold.resources._files import resource_files
from lexgold.resources.pos import COARSE, LINGUA_WORDS
from lexgold.resources.wordnet import wordnet_file

MULTI_WORD = re.compile(r"[\s_\-]")


@dataclasses.dataclass
class ConcretenessScale:
    """A concreteness rating scale: its range and the concrete/abstract threshold on it."""

    scale: list[float]
    threshold: float

    def check(self) -> None:
        if len(self.scale) != 2 or not self.scale[0] < self.scale[1]:
            raise Invalid("scale", "two numbers [low, high], low < high", self.scale)
        if not self.scale[0] <= self.threshold <= self.scale[1]:
            raise Invalid("threshold", f"a number on the scale {self.scale[0]:g}.."
                          f"{self.scale[1]:g}", self.threshold)


POS_SOURCES = ("usf", "penn", "semcor", "corpus")


@dataclasses.dataclass
class PosKeys:
    """POS tendency (SimLex-999 section 3.1): tag sources and the minimum share of one POS.

    ``source`` is one of :data:`POS_SOURCES` or a list of them; counts of listed sources add up.
    """

    source: Literal[POS_SOURCES] | list[Literal[POS_SOURCES]] = dataclasses.field(
        default_factory=lambda: ["penn", "semcor"])
    #: a word's share of tags on its majority POS, in (0, 1]
    min_tendency: Annotated[float, between(0, 1, low_open=True)] = 0.75
    share_among: Literal["nva", "all"] = "nva"   # the share over the N, V, A tags or all tags
    corpus: list[str] = dataclasses.field(default_factory=list)  # word/TAG files (source corpus)
    penn_file: str = str(LINGUA_WORDS)

    def check(self) -> None:
        sources = [self.source] if isinstance(self.source, str) else list(self.source)
        if not sources or len(set(sources)) < len(sources):
            raise Invalid("source", "one or more different sources", self.source)


# -- words ------------------------------------------------------------------------------------
def lower_words(series: pd.Series) -> pd.Series:
    """USF spells words in capitals; outputs use lower case like the published data sets."""
    return series.astype("string").str.strip().str.lower()


def word_form_problems(words: pd.Series, pattern: str) -> pd.Series:
    """Per word: ``multi-word`` (space, hyphen, underscore), ``pattern`` (fails the protocol's
    ``word_pattern``, e.g. digits or apostrophes) or ``""``."""
    multi = words.str.contains(MULTI_WORD, regex=True).fillna(True)
    fails = ~words.str.fullmatch(pattern).fillna(False).astype(bool)
    return pd.Series(np.select([multi, fails], ["multi-word", "pattern"], ""), index=words.index)


def proper_noun_detector(wordnet) -> Callable[[str], bool]:
    """A test for words that are capitalised, i.e. named entities, in WordNet.

    USF prints every word in capitals, so the papers' "capital letter" (SimLex-999) and "named
    entity" (HyperLex) filters are recovered from WordNet: a word counts as a proper noun when
    every one of its synsets (any POS) holds it only as a capitalised lemma (mexico, europe,
    christmas), never when one sense is a common word (china, turkey).

    ``wordnet`` is the cached WordNet graph (:func:`lexgold.resources.wordnet_graph.load_graph`,
    what the builders pass) or NLTK's reader; both give the same answers.
    """
    from lexgold.resources.wordnet_graph import WordNetGraph

    cache: dict[str, bool] = {}
    if isinstance(wordnet, WordNetGraph):
        lemma_names = wordnet.lemma_names
    else:
        def lemma_names(synset):
            return [lemma.name() for lemma in synset.lemmas()]

    def is_proper(word: str) -> bool:
        found = cache.get(word)
        if found is None:
            key = word.replace(" ", "_")
            senses = wordnet.synsets(key)
            found = bool(senses) and all(
                any(n.lower() == key and n[:1].isupper() for n in names)
                and not any(n == key for n in names)
                for names in map(lemma_names, senses))
            cache[word] = found
        return found

    return is_proper


# -- concreteness -----------------------------------------------------------------------------
def brysbaert_concreteness(path=None) -> pd.Series:
    """Word (lower case) -> Brysbaert et al. (2014) mean concreteness (1-5), words only."""
    frame = read_brysbaert(path)
    frame = frame[~frame["bigram"]]
    return (frame.assign(word=lower_words(frame["word"])).drop_duplicates("word")
            .set_index("word")["conc_m"].astype(float))


def rescale_concreteness(values: pd.Series, source: ConcretenessScale,
                          target: ConcretenessScale) -> pd.Series:
    """Map ratings linearly from one scale's range onto another's (USF 1-7 -> 1-5: 4 -> 3);
    :func:`lexgold.stats.rescale` on the scales' ranges."""
    return stats.rescale(values, source.scale, target.scale)


def concreteness_with_fallback(source: str, fallback: str, usf: pd.DataFrame,
                               scales: dict[str, ConcretenessScale],
                               brysbaert=None) -> tuple[pd.Series, pd.Series]:
    """Concreteness per word from ``source``; words it lacks take ``fallback``'s rating, mapped
    linearly onto the source's scale (:func:`rescale_concreteness`). ``fallback`` may be ``"none"``.

    Returns the ratings and, per word, the name of the source its rating came from.
    """
    table = concreteness_table(source, usf, scales[source], brysbaert)
    origin = pd.Series(source, index=table.index, dtype=object)
    if fallback not in ("none", source):
        other = rescale_concreteness(
            concreteness_table(fallback, usf, scales[fallback], brysbaert),
            scales[fallback], scales[source])
        other = other[~other.index.isin(table.index)]
        table = pd.concat([table, other.round(6)]).sort_index()
        origin = pd.concat([origin, pd.Series(fallback, index=other.index, dtype=object)]).sort_index()
    return table, origin


def concreteness_table(source: str, usf: pd.DataFrame, scale: ConcretenessScale,
                       brysbaert=None) -> pd.Series:
    """Concreteness per word from ``source`` (``usf`` or ``brysbaert``), checked against its scale."""
    if source == "usf":
        table = usf_concreteness(usf)
    elif source == "brysbaert":
        table = brysbaert_concreteness(brysbaert)
    else:
        raise InputError(f"unknown concreteness source {source!r}; allowed: usf, brysbaert",
                         field="build.concreteness.source")
    low, high = scale.scale
    outside = table[(table < low) | (table > high)]
    if len(outside):
        raise InputError(f"rating {outside.iloc[0]} of {outside.index[0]!r} is outside the "
                         f"protocol's scale {scale.scale}", field=f"build.concreteness.{source}.scale")
    return table


# -- POS ----------------------------------------------------------------------------------------
def pos_sources(keys: PosKeys) -> list[str]:
    """The tag sources of ``keys.source`` as a list (a single name is a one-item list)."""
    return [keys.source] if isinstance(keys.source, str) else list(keys.source)


def pos_counts(keys: PosKeys, usf: pd.DataFrame, base: Path | None, wordnet_dir=None) -> pd.DataFrame:
    """Tag counts per word (N, V, A, other) of the selected sources, added up."""
    frames = []
    for source in pos_sources(keys):
        if source == "usf":
            frames.append(usf_pos_counts(usf))
        elif source == "penn":
            frames.append(penn_tag_counts(keys.penn_file))
        elif source == "semcor":
            frames.append(semcor_tag_counts(wordnet_file("cntlist.rev", wordnet_dir)))
        elif source == "corpus":
            if not keys.corpus:
                raise InputError("pos source 'corpus' needs word/TAG files", field="build.pos.corpus")
            frames.append(tagged_corpus_counts([resolve(base or Path("."), p) for p in keys.corpus]))
        else:
            raise InputError(f"unknown POS source {source!r}; allowed: {', '.join(POS_SOURCES)}",
                             field="build.pos.source")
    return sum_counts(frames)


def pos_table(keys: PosKeys, usf: pd.DataFrame, base: Path | None, wordnet_dir=None) -> pd.DataFrame:
    """Word -> (pos, share) from the selected tag sources (SimLex-999 section 3.1)."""
    return tendency(pos_counts(keys, usf, base, wordnet_dir), keys)


def tendency(counts: pd.DataFrame, keys: PosKeys) -> pd.DataFrame:
    """:func:`lexgold.resources.pos_tendency` with the share taken as ``keys.share_among`` says."""
    return pos_tendency(counts, ("N", "V", "A") if keys.share_among == "nva" else COARSE)


def one_tag_warning(counts: pd.DataFrame, keys: PosKeys) -> str | None:
    """A warning when the tag counts give each word a single POS: the tendency rule is then void."""
    if not one_tag_per_word(counts):
        return None
    return (f"POS source {'+'.join(pos_sources(keys))} gives every word a single tag, so every "
            f"word has a 100 % tendency and the {keys.min_tendency:.0%} POS-tendency rule "
            "(SimLex-999 section 3.1) drops nothing; use tag counts from a corpus "
            "(penn, semcor, corpus)")


def resolve(base: Path, path: str | Path) -> Path:
    """A path from a protocol file: absolute, or relative to the protocol file's folder."""
    path = Path(path).expanduser()
    return path if path.is_absolute() else base / path


# -- sampling ---------------------------------------------------------------------------------
def split_quota(quota: int, strata: list[str], rng: np.random.Generator) -> dict[str, int]:
    """Spread ``quota`` equally over ``strata``; the remainder goes to strata drawn at random.

    The papers stratify "equally" over four classes, but 66, 22 and 11 do not divide by 4.
    """
    share, rest = divmod(quota, len(strata))
    extra = set(rng.choice(len(strata), size=rest, replace=False).tolist()) if rest else set()
    return {s: share + (i in extra) for i, s in enumerate(strata)}


def proportional_quota(quota: int, sizes: dict[str, int]) -> dict[str, int]:
    """Spread ``quota`` over strata in proportion to their pool ``sizes`` (largest remainder).

    Each stratum gets the whole part of ``quota * size / total``; the pairs left over go to the
    largest fractional parts, ties to the stratum listed first. With an empty pool (total 0)
    nothing can be drawn from any stratum: the quota is then spread equally (the shortfall is
    reported per stratum). Used for ``class_allocation = "proportional"`` (SimLex-999 section
    3.1 asks for equal classes; this is the alternative docs/builders.md compares it with).

    >>> proportional_quota(600, {"C1": 9186, "C2": 8279, "C3": 1360, "C4": 2185})
    {'C1': 262, 'C2': 237, 'C3': 39, 'C4': 62}
    >>> proportional_quota(3, {"a": 1, "b": 1, "c": 1, "d": 1})
    {'a': 1, 'b': 1, 'c': 1, 'd': 0}
    """
    total = sum(sizes.values())
    if total == 0:
        share, rest = divmod(quota, len(sizes))
        return {s: share + (i < rest) for i, s in enumerate(sizes)}
    exact = {s: quota * n / total for s, n in sizes.items()}
    counts = {s: int(x) for s, x in exact.items()}
    order = sorted(sizes, key=lambda s: -(exact[s] - counts[s]))     # stable: ties keep order
    for s in order[:quota - sum(counts.values())]:
        counts[s] += 1
    return counts


def draw(pool: pd.DataFrame, quota: int, rng: np.random.Generator, taken: set) -> pd.DataFrame:
    """Draw up to ``quota`` rows at random, never two rows of the same unordered word pair.

    ``taken`` holds the unordered pairs drawn so far (updated in place).
    """
    order = rng.permutation(len(pool))
    chosen = []
    for i in order:
        if len(chosen) == quota:
            break
        key = frozenset((pool["word1"].iat[i], pool["word2"].iat[i]))
        if key not in taken:
            taken.add(key)
            chosen.append(i)
    return pool.iloc[chosen]


# -- run records ------------------------------------------------------------------------------
def usf_checksums(usf_dir) -> list[dict]:
    return [{"file": f.name, "sha256": f.sha256(), "expected_sha256": f.expected_sha256}
            for f in resource_files("usf_appendix_a", usf_dir)]


def brysbaert_checksums(path) -> list[dict]:
    if path and Path(path).is_file():  # a user's file, under any name
        return files_checksums([path])
    return [{"file": f.name, "sha256": f.sha256(), "expected_sha256": f.expected_sha256}
            for f in resource_files("brysbaert_concreteness", path)]


def wordnet_checksums(wordnet_dir) -> list[dict]:
    return [{"file": name, "sha256": sha256_file(wordnet_file(name, wordnet_dir))}
            for name in ("data.noun", "data.verb", "data.adj", "data.adv")
            if wordnet_file(name, wordnet_dir).is_file()]


def files_checksums(paths: Iterable[str | Path]) -> list[dict]:
    return [{"file": Path(p).name, "sha256": sha256_file(p)} for p in paths]


def manifest(protocol: dict, seed: int, settings, resources: dict) -> dict:
    """What a run was made from (:func:`lexgold.manifest.run_manifest`, the builders' one
    schema): protocol file hash, effective settings, resources, seed, library versions."""
    return run_manifest(protocol, seed, dataclasses.asdict(settings), resources)


def write_csv(frame: pd.DataFrame, path: Path) -> None:
    frame.to_csv(path, index=False, lineterminator="\n", encoding="utf-8")


def write_json(data: dict, path: Path) -> None:
    path.write_text(json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n",
                    encoding="utf-8")
