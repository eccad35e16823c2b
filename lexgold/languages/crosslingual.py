"""Cross-lingual gold standards from concept-aligned monolingual ones.

Camacho-Collados, Pilehvar & Navigli (2015, section 3) build a cross-lingual similarity set from
two monolingual versions of the same pairs: for a pair aligned as (a1, b1) in L1 and (a2, b2) in
L2, the cross-lingual pairs (a1, b2) and (a2, b1) get the mean of the two monolingual scores,
and a pair whose monolingual scores differ by more than a threshold is left out, since the
concepts are then not rated alike in the two languages. Multi-SimLex (Vulic et al. 2020,
section 7) and the cross-lingual HyperLex (Vulic et al. 2019) follow the same construction;
for HyperLex the order (X, Y) of a pair is kept: word1 always comes from the pair's word1.

**Decision: the threshold is a share of the scale** (protocol key ``[crosslingual]
max_score_difference_share``, default 0.2). A concept pair is dropped when its two monolingual
scores differ by more than ``share x (max - min)`` of the gold standards' declared scale: 2 on
0-10, 1.2 on 0-6, 0.2 on TR9856's 0-1. Camacho-Collados et al. (2015) drop pairs whose scores
differ by more than 1 on their 0-4 scale; measured on the published cross-lingual HyperLex
(Vulic et al. 2019), a threshold of one fifth of the scale reproduces the released sets, so
lexgold takes one fifth. A threshold in score units is right on one scale only (2.5, meant for
0-10, is 42 % of a 0-6 scale and drops nothing on 0-1); a share follows the scale.
``[crosslingual] max_score_difference`` (or ``lexgold crosslingual --max-score-difference``)
still sets the threshold in score units when given, as an explicit override. A difference
equal to the threshold is kept.

**Decision: where the scale comes from.** A gold file's scale is, in order: ``--scale MIN MAX``
(``scale=``); the ``scale.released`` entry of the ``report.json`` that ``lexgold process`` wrote
beside it (when that report lists the file); the score field's ``minimum``/``maximum``
constraints in a ``datapackage.json`` beside it; else the protocol's ``[process.release]
score_min, score_max``. A published layout fixes its own scale (``SimLex999`` and
``AVG_SCORE_0_10``: 0-10; TR9856's ``term1, term2, score``: 0-1), and a protocol whose release
scale differs from it is an error rather than a guess. Every score must lie inside its scale.
Two gold standards on different scales are an error: one threshold cannot hold for both, and
two scales often mean two protocols whose scores should not be averaged. With ``rescale``
(``--rescale``) each is instead mapped linearly onto the protocol's release scale first, and
report.json says so.

**Decision: one row per cross-lingual word pair.** Several concept pairs (``pair_id``) can give
the same cross-lingual word pair (word1 in L1, word2 in L2), e.g. when translation collapses two
senses into one word. After the concept-pair rule above, rows with the same word pair
(compared after :func:`~lexgold.languages.translation.normalise`) become one row: its score is
the mean of the concept pairs' cross-lingual scores (and ``score_<lang>`` the mean of their
monolingual scores), ``pair_ids`` lists them joined by ``;``, ``n_merged`` counts them and
``score_spread`` is max - min of their scores. When the spread exceeds the same threshold the
word pair is dropped: it is then ambiguous between readings rated differently, and a mean would
describe none of them, for the same reason a concept pair rated differently in two languages is
dropped. report.json counts the merged and the dropped word pairs.

Pairs are aligned through the ``pair_id`` the translation workflow gives every English pair
(:mod:`lexgold.languages.translation`): a gold standard either has a ``pair_id`` column or is
matched to its language's ``aligned.csv`` by (word1, word2).
"""

from __future__ import annotations

import dataclasses
import itertools
from pathlib import Path
from typing import Annotated, NamedTuple

import pandas as pd

from lexgold import stats
from lexgold.compression import read_input_json
from lexgold.errors import InputError
from lexgold.evaluate.catalogue import declared_scale
from lexgold.languages import sheets
from lexgold.languages.translation import normalise
from lexgold.pairfiles import read_pair_table
from lexgold.protocols import between, load_protocol, parse_section
from lexgold.protocols.release import release_config

#: score columns of the released layouts (lexgold.process.release), in order of preference
SCORE_COLUMNS = ("score", "SimLex999", "AVG_SCORE_0_10")
WORD_COLUMNS = (("word1", "word2"), ("WORD1", "WORD2"), ("term1", "term2"))
#: the scale a published layout fixes, by its score column (or TR9856's word column term1)
PUBLISHED_SCALES = {"SimLex999": (0.0, 10.0), "AVG_SCORE_0_10": (0.0, 10.0), "term1": (0.0, 1.0)}
#: tolerance for float comparisons with the threshold and the scale's ends
_EPS = 1e-9


@dataclasses.dataclass
class CrosslingualConfig:
    """The ``[crosslingual]`` table of a protocol file (module docstring, Decisions)."""
    #: drop when the scores differ by more than this share of the declared scale (0-1)
    max_score_difference_share: Annotated[float, between(0, 1)] = 0.2
    #: an explicit threshold in score units instead of the share (absent: use the share)
    max_score_difference: Annotated[float, between(0)] | None = None


class Scale(NamedTuple):
    """A gold standard's declared score range and where it was declared."""
    low: float
    high: float
    source: str = ""

    def __str__(self) -> str:
        return f"{self.low:g}-{self.high:g}" + (f" ({self.source})" if self.source else "")


def check_scale(low: float, high: float, source: str = "", *, where=None,
                field: str = "scale") -> Scale:
    """A :class:`Scale` after checking ``low < high`` (both finite numbers)."""
    try:
        low, high = float(low), float(high)
    except (TypeError, ValueError):
        raise InputError(f"a scale is two numbers MIN MAX, found {low!r} {high!r}", path=where,
                         field=field) from None
    if not low < high or high - low == float("inf"):
        raise InputError(f"a scale needs MIN < MAX, found {low:g} {high:g}", path=where,
                         field=field)
    return Scale(low, high, source)


def score_threshold(scale: Scale, config: CrosslingualConfig | None = None) -> float:
    """The threshold in score units: ``share x (high - low)``, or the explicit override.

    >>> score_threshold(Scale(0, 6))
    1.2
    >>> score_threshold(Scale(0, 10), CrosslingualConfig(max_score_difference=2.5))
    2.5
    """
    config = config or CrosslingualConfig()
    if config.max_score_difference is not None:
        if config.max_score_difference < 0:
            raise InputError(f"must be >= 0, found {config.max_score_difference:g}",
                             field="crosslingual.max_score_difference")
        return float(config.max_score_difference)
    share = config.max_score_difference_share
    if not 0 <= share <= 1:
        raise InputError(f"a share of the scale, 0 to 1, found {share:g}",
                         field="crosslingual.max_score_difference_share")
    return round(share * (scale.high - scale.low), 12)


def _layout(gold: pd.DataFrame, source) -> tuple[tuple[str, str], str]:
    """The (word1, word2) and score columns of a gold table."""
    words = next((c for c in WORD_COLUMNS if set(c) <= set(gold.columns)), None)
    score = next((c for c in SCORE_COLUMNS if c in gold.columns), None)
    if words is None or score is None:
        raise InputError("a gold standard needs word1, word2 and a score column "
                         f"({', '.join(SCORE_COLUMNS)})", path=source,
                         field="word1" if words is None else "score")
    return words, score


def monolingual_gold_scores(gold: pd.DataFrame, aligned: pd.DataFrame | None = None,
                source: str = "<gold>", scale: Scale | None = None) -> pd.DataFrame:
    """``pair_id, word1, word2, score`` of a monolingual gold standard.

    Parameters
    ----------
    gold : DataFrame
        Any of lexgold's released layouts (``word1, word2, SimLex999``; ``WORD1, WORD2,
        AVG_SCORE_0_10``; ``term1, term2, score``) or ``word1, word2, score``; with a
        ``pair_id`` column, ``aligned`` is not needed.
    aligned : DataFrame, optional
        The language's ``aligned.csv`` (``pair_id, word1, word2``): gives each gold pair its
        id by (word1, word2), compared after :func:`~lexgold.languages.translation.normalise`.
        A target pair made from two English pairs (``duplicate_of``) carries both ids.
    source : str
        Name of the gold file, for error messages.
    scale : Scale, optional
        The gold standard's declared scale: a score outside it is an error naming the line.
    """
    words, score = _layout(gold, source)
    out = pd.DataFrame({"word1": gold[words[0]].astype(str), "word2": gold[words[1]].astype(str),
                        "score": pd.to_numeric(gold[score], errors="coerce")})
    bad = out["score"].isna()
    if bad.any():
        line = int(bad.to_numpy().argmax()) + 2
        raise InputError(f"not a number: {gold[score].iloc[line - 2]!r}", path=source, line=line,
                         field=score)
    if scale is not None:
        outside = (out["score"] < scale.low - _EPS) | (out["score"] > scale.high + _EPS)
        if outside.any():
            line = int(outside.to_numpy().argmax()) + 2
            raise InputError(f"{out['score'].iloc[line - 2]:g} is outside the scale {scale}",
                             path=source, line=line, field=score)
    if "pair_id" in gold.columns:
        out.insert(0, "pair_id", gold["pair_id"].astype(str))
        return out
    if aligned is None:
        raise InputError("no pair_id column: give the language's aligned.csv too", path=source,
                         field="pair_id")
    key = aligned["word1"].map(normalise) + "\t" + aligned["word2"].map(normalise)
    ids = pd.DataFrame({"key": key, "pair_id": aligned["pair_id"].astype(str)})
    out["key"] = out["word1"].map(normalise) + "\t" + out["word2"].map(normalise)
    merged = out.merge(ids, on="key", how="left")
    unknown = merged["pair_id"].isna()
    if unknown.any():
        row = merged[unknown].iloc[0]
        raise InputError(f"pair ({row['word1']}, {row['word2']}) is not in the aligned pair set",
                         path=source, field="word1")
    return merged[["pair_id", "word1", "word2", "score"]]


def rescale_scores(scores: pd.DataFrame, scale: Scale, target: Scale) -> pd.DataFrame:
    """``scores`` with its ``score`` column mapped linearly from ``scale`` onto ``target``
    (:func:`lexgold.stats.rescale`).

    >>> frame = pd.DataFrame({"score": [0.0, 3.0, 6.0]})
    >>> rescale_scores(frame, Scale(0, 6), Scale(0, 10))["score"].tolist()
    [0.0, 5.0, 10.0]
    """
    return scores.assign(score=stats.rescale(scores["score"], (scale.low, scale.high),
                                             (target.low, target.high)))


def crosslingual_pairs(first: pd.DataFrame, second: pd.DataFrame, lang1: str, lang2: str,
                       max_score_difference: float) -> tuple[pd.DataFrame, dict]:
    """The cross-lingual set of two languages (Camacho-Collados et al. 2015, section 3).

    Parameters
    ----------
    first, second : DataFrame
        :func:`monolingual_gold_scores` of the two languages, on one scale.
    lang1, lang2 : str
        Their language codes.
    max_score_difference : float
        The threshold in score units (:func:`score_threshold`): keep a concept pair when
        ``|score1 - score2| <= max_score_difference``, and a cross-lingual word pair given by
        several concept pairs when their scores spread no more than that.

    Returns
    -------
    pairs : DataFrame
        ``pair_ids, word1, lang1, word2, lang2, score, score_<lang1>, score_<lang2>, n_merged,
        score_spread``: one row per cross-lingual word pair, (word1 in lang1, word2 in lang2)
        and (word1 in lang2, word2 in lang1); score = mean of the two monolingual scores,
        averaged over the ``n_merged`` concept pairs (``pair_ids``, ``;``-joined) that give
        the same word pair.
    counts : dict
        Concept pairs: ``aligned`` in both, ``only_<lang>`` missing in the other,
        ``dropped_disagreement`` (scores differ by more than the threshold), ``kept``.
        Cross-lingual word pairs: ``crosslingual_rows`` (two per kept concept pair),
        ``word_pairs`` (distinct), ``merged`` (given by two or more concept pairs),
        ``merged_rows`` (rows folded into them), ``dropped_merged_disagreement`` (merged word
        pairs whose scores spread more than the threshold), ``pairs`` (rows written).

    Examples
    --------
    >>> it = pd.DataFrame({"pair_id": ["p1", "p2"], "word1": ["tazza", "auto"],
    ...                    "word2": ["boccale", "strada"], "score": [8.0, 2.0]})
    >>> he = pd.DataFrame({"pair_id": ["p1", "p2"], "word1": ["ספל", "מכונית"],
    ...                    "word2": ["כוס", "כביש"], "score": [7.0, 6.0]})
    >>> pairs, counts = crosslingual_pairs(it, he, "it", "he", 2.0)
    >>> pairs[["word1", "word2", "score"]].values.tolist()
    [['tazza', 'כוס', 7.5], ['ספל', 'boccale', 7.5]]
    >>> counts["dropped_disagreement"]
    1
    """
    if max_score_difference < 0:
        raise InputError(f"max_score_difference must be >= 0, found {max_score_difference}",
                         field="max_score_difference")
    for frame, lang in ((first, lang1), (second, lang2)):
        repeated = frame["pair_id"].duplicated()
        if repeated.any():
            raise InputError(f"pair id {frame['pair_id'][repeated].iloc[0]!r} occurs twice",
                             field=f"{lang}.pair_id")
    both = first.merge(second, on="pair_id", suffixes=("_1", "_2"))
    difference = (both["score_1"] - both["score_2"]).abs()
    kept = both[difference <= max_score_difference + _EPS]
    mean = (kept["score_1"] + kept["score_2"]) / 2
    forward = pd.DataFrame({"pair_id": kept["pair_id"], "word1": kept["word1_1"], "lang1": lang1,
                            "word2": kept["word2_2"], "lang2": lang2, "score": mean})
    backward = pd.DataFrame({"pair_id": kept["pair_id"], "word1": kept["word1_2"], "lang1": lang2,
                             "word2": kept["word2_1"], "lang2": lang1, "score": mean})
    rows = pd.concat([forward.assign(_order=0), backward.assign(_order=1)]).assign(
        score_1=pd.concat([kept["score_1"], kept["score_1"]]),
        score_2=pd.concat([kept["score_2"], kept["score_2"]]))
    rows = rows.sort_values(["pair_id", "_order"], kind="stable").reset_index(drop=True)
    merged = merge_repeated(rows)
    disagree = merged["score_spread"] > max_score_difference + _EPS
    pairs = merged[~disagree].rename(columns={"score_1": f"score_{lang1}",
                                              "score_2": f"score_{lang2}"})
    counts = {"aligned": int(len(both)),
              f"only_{lang1}": int((~first["pair_id"].isin(second["pair_id"])).sum()),
              f"only_{lang2}": int((~second["pair_id"].isin(first["pair_id"])).sum()),
              "dropped_disagreement": int(len(both) - len(kept)),
              "kept": int(len(kept)), "crosslingual_rows": int(len(rows)),
              "word_pairs": int(len(merged)), "merged": int((merged["n_merged"] > 1).sum()),
              "merged_rows": int(merged.loc[merged["n_merged"] > 1, "n_merged"].sum()),
              "dropped_merged_disagreement": int(disagree.sum()),
              "pairs": int(len(pairs))}
    return pairs.reset_index(drop=True), counts


def merge_repeated(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per cross-lingual word pair (module docstring, Decision).

    ``rows`` holds one row per concept pair and direction (``pair_id, word1, lang1, word2,
    lang2, score, score_1, score_2``). Rows whose (lang1, word1, word2) are equal after
    :func:`~lexgold.languages.translation.normalise` become one, in the order of their first
    row, keeping its spelling: the means of ``score``, ``score_1``, ``score_2``, the
    ``;``-joined ``pair_ids``, ``n_merged`` and ``score_spread`` (max - min of ``score``; 0
    for a single concept pair).

    >>> rows = pd.DataFrame({"pair_id": ["p1", "p2"], "word1": ["tazza", "Tazza"],
    ...                      "lang1": "it", "word2": ["jarra", "jarra"], "lang2": "es",
    ...                      "score": [7.0, 8.0], "score_1": [7.0, 8.5], "score_2": [7.0, 7.5]})
    >>> merge_repeated(rows)[["pair_ids", "word1", "score", "n_merged", "score_spread"]
    ...                      ].values.tolist()
    [['p1;p2', 'tazza', 7.5, 2, 1.0]]
    """
    key = (rows["lang1"] + "\t" + rows["word1"].map(normalise) + "\t"
           + rows["word2"].map(normalise))
    groups = rows.groupby(key.to_numpy(), sort=False)
    merged = groups.agg(pair_ids=("pair_id", ";".join), word1=("word1", "first"),
                        lang1=("lang1", "first"), word2=("word2", "first"),
                        lang2=("lang2", "first"), score=("score", "mean"),
                        score_1=("score_1", "mean"), score_2=("score_2", "mean"),
                        n_merged=("pair_id", "size"), low=("score", "min"),
                        high=("score", "max"))
    merged["score_spread"] = merged.pop("high") - merged.pop("low")
    return merged.reset_index(drop=True)


def all_crosslingual(golds: dict[str, pd.DataFrame], max_score_difference: float
                     ) -> tuple[dict[tuple[str, str], pd.DataFrame], dict]:
    """:func:`crosslingual_pairs` for every pair of the given languages (in the given order).

    The gold standards must be on one scale and ``max_score_difference`` in its units; see
    :func:`crosslingual_sets` for the checked way in. Returns ``{(lang1, lang2): pairs}`` and
    a report ``{"lang1-lang2": counts, ...}`` plus ``max_score_difference``.
    """
    if len(golds) < 2:
        raise InputError("need the gold standards of at least two languages", field="gold")
    sets, report = {}, {"max_score_difference": max_score_difference, "languages": list(golds)}
    for lang1, lang2 in itertools.combinations(golds, 2):
        pairs, counts = crosslingual_pairs(golds[lang1], golds[lang2], lang1, lang2,
                                           max_score_difference)
        sets[(lang1, lang2)] = pairs
        report[f"{lang1}-{lang2}"] = counts
    return sets, report


def crosslingual_sets(golds: dict[str, pd.DataFrame], scales: dict[str, Scale],
                      config: CrosslingualConfig | None = None, *,
                      rescale_to: Scale | None = None
                      ) -> tuple[dict[tuple[str, str], pd.DataFrame], dict]:
    """Cross-lingual sets of gold standards on declared scales (module docstring, Decisions).

    Parameters
    ----------
    golds : dict
        Language code -> :func:`monolingual_gold_scores` frame.
    scales : dict
        Language code -> its gold standard's :class:`Scale`. Every score must lie inside it.
    config : CrosslingualConfig, optional
        The share of the scale (default 0.2) or an explicit threshold in score units.
    rescale_to : Scale, optional
        Map every gold standard linearly onto this scale first; without it, gold standards
        on different scales are an error.

    Returns
    -------
    sets, report
        As :func:`all_crosslingual`; the report adds ``scale`` (the common scale),
        ``scales`` (per language: ``scale``, ``source``, ``rescaled``),
        ``max_score_difference_share``, ``max_score_difference`` (the threshold in score
        units) and ``max_score_difference_from`` (``share`` or ``override``).

    Examples
    --------
    >>> it = pd.DataFrame({"pair_id": ["p1"], "word1": ["tazza"], "word2": ["boccale"],
    ...                    "score": [4.0]})
    >>> es = pd.DataFrame({"pair_id": ["p1"], "word1": ["taza"], "word2": ["jarra"],
    ...                    "score": [5.5]})
    >>> sets, report = crosslingual_sets({"it": it, "es": es},
    ...                                  {"it": Scale(0, 6), "es": Scale(0, 6)})
    >>> report["max_score_difference"], report["it-es"]["dropped_disagreement"]
    (1.2, 1)
    """
    config = config or CrosslingualConfig()
    missing = [lang for lang in golds if lang not in scales]
    if missing:
        raise InputError(f"no scale given for language {missing[0]!r}", field="scale")
    for lang, frame in golds.items():
        scale = scales[lang]
        outside = (frame["score"] < scale.low - _EPS) | (frame["score"] > scale.high + _EPS)
        if outside.any():
            row = frame[outside].iloc[0]
            raise InputError(f"{row['score']:g} (pair {row['pair_id']}) is outside the scale "
                             f"{scale}", field=f"{lang}.score")
    entries = {lang: {"scale": [scales[lang].low, scales[lang].high],
                      "source": scales[lang].source, "rescaled": False} for lang in golds}
    if rescale_to is not None:
        for lang in golds:
            if scales[lang][:2] != rescale_to[:2]:
                golds = golds | {lang: rescale_scores(golds[lang], scales[lang], rescale_to)}
                entries[lang]["rescaled"] = True
        common = rescale_to
    else:
        distinct = {scale[:2] for scale in scales.values()}
        if len(distinct) > 1:
            listed = ", ".join(f"{lang} {scales[lang]}" for lang in golds)
            raise InputError(f"the gold standards are on different scales ({listed}); one "
                             "threshold cannot hold for both: rescale them (--rescale maps "
                             "each linearly onto the protocol's release scale) or declare "
                             "their common scale (--scale MIN MAX)", field="scale")
        common = scales[next(iter(golds))]
    threshold = score_threshold(common, config)
    sets, report = all_crosslingual(golds, threshold)
    return sets, {"languages": report.pop("languages"), "scale": [common.low, common.high],
                  "scales": entries,
                  "max_score_difference_share": config.max_score_difference_share,
                  "max_score_difference": threshold,
                  "max_score_difference_from": ("share" if config.max_score_difference is None
                                                else "override")} | report


# -- files ------------------------------------------------------------------------------------

def gold_file_scale(path: str | Path, gold: pd.DataFrame, release, protocol: str = "") -> Scale:
    """The declared scale of a gold file (module docstring, Decision on the scale).

    Parameters
    ----------
    path : str or Path
        The gold file; ``report.json`` and ``datapackage.json`` beside it are read when they
        describe it.
    gold : DataFrame
        Its table, for the layout (a published layout fixes its scale).
    release : lexgold.protocols.release.ReleaseConfig
        The protocol's ``[process.release]``: ``score_min, score_max`` when nothing beside the
        file declares the scale.
    protocol : str
        The protocol's name, for messages.
    """
    path = Path(path)
    words, score = _layout(gold, path)
    found = _scale_in_report(path) or _scale_in_datapackage(path, gold)
    if found is not None:
        return found
    if release.rating_scale == "declared":
        raise InputError(f"protocol {protocol} releases on the ratings' declared scale and no "
                         "report.json beside the file declares it: pass --scale MIN MAX",
                         path=path, field="score")
    scale = check_scale(release.score_min, release.score_max,
                        f"protocol {protocol} [process.release]")
    column = score if score in PUBLISHED_SCALES else words[0]
    published = PUBLISHED_SCALES.get(column)
    if published is None and "scale" in gold.attrs:     # Multi-SimLex: 0-6
        column, published = score, tuple(gold.attrs["scale"])
    if published is not None and published != scale[:2]:
        raise InputError(f"this layout's scores are published on {published[0]:g}-"
                         f"{published[1]:g} but protocol {protocol} releases on {scale.low:g}-"
                         f"{scale.high:g}: pass the gold standard's --protocol or --scale MIN MAX",
                         path=path, field=column)
    return scale


def _read_json(path: Path):
    return read_input_json(path)


def _scale_in_report(path: Path) -> Scale | None:
    """``scale.released`` of the ``report.json`` of ``lexgold process`` that lists ``path``."""
    report_path = path.parent / "report.json"
    if not report_path.is_file():
        return None
    report = _read_json(report_path)
    released = declared_scale(report, path.name) if isinstance(report, dict) else None
    if released is None or released == [None, None]:
        return None
    if not isinstance(released, list) or len(released) != 2:
        raise InputError(f"expected [min, max], found {released!r}", path=report_path,
                         field="scale.released")
    return check_scale(*released, f"{report_path}", where=report_path, field="scale.released")


def _scale_in_datapackage(path: Path, gold: pd.DataFrame) -> Scale | None:
    """The score field's ``minimum``/``maximum`` constraints in a ``datapackage.json`` beside."""
    package_path = path.parent / "datapackage.json"
    if not package_path.is_file():
        return None
    package = _read_json(package_path)
    score = _layout(gold, path)[1]
    resources = package.get("resources", []) if isinstance(package, dict) else []
    for resource in resources:
        if not isinstance(resource, dict) or resource.get("path") != path.name:
            continue
        for field in (resource.get("schema") or {}).get("fields", []):
            limits = field.get("constraints") or {}
            if field.get("name") == score and {"minimum", "maximum"} <= set(limits):
                return check_scale(limits["minimum"], limits["maximum"], str(package_path),
                                   where=package_path, field=f"{score}.constraints")
    return None


def crosslingual_from_files(gold_paths: dict[str, Path], aligned_paths: dict[str, Path],
                            protocol: str | Path = "simlex", *,
                            scale: tuple[float, float] | None = None,
                            max_score_difference: float | None = None, rescale: bool = False
                            ) -> tuple[dict[tuple[str, str], pd.DataFrame], dict]:
    """``lexgold crosslingual``: read the gold files, find their scales, build every set.

    Parameters
    ----------
    gold_paths, aligned_paths : dict
        Language code -> gold file / ``aligned.csv`` (optional per language).
    protocol : str or Path
        Its ``[crosslingual]`` table and ``[process.release]`` scale are used.
    scale : (min, max), optional
        The scale of every gold file (``--scale``), instead of what lies beside them.
    max_score_difference : float, optional
        The threshold in score units (``--max-score-difference``), instead of the share.
    rescale : bool
        Map every gold standard linearly onto the protocol's release scale first.
    """
    loaded = load_protocol(protocol)
    config = parse_section(CrosslingualConfig, loaded, "crosslingual")
    if max_score_difference is not None:
        config = dataclasses.replace(config, max_score_difference=max_score_difference)
    release = release_config(loaded)
    name = loaded.get("name", str(protocol))
    given = check_scale(*scale, "--scale", field="--scale") if scale is not None else None
    target = None
    if rescale:
        if release.rating_scale == "declared":
            raise InputError(f"protocol {name} has no fixed release scale to rescale onto",
                             field="--rescale")
        target = check_scale(release.score_min, release.score_max,
                             f"protocol {name} [process.release]")
    golds, scales = {}, {}
    for lang, path in gold_paths.items():
        table = read_pair_table(path, language=lang)
        aligned = (sheets.read_table(aligned_paths[lang], ("pair_id", "word1", "word2"))
                   if lang in aligned_paths else None)
        scales[lang] = given or gold_file_scale(path, table, release, name)
        golds[lang] = monolingual_gold_scores(table, aligned, str(path), scales[lang])
    sets, report = crosslingual_sets(golds, scales, config, rescale_to=target)
    return sets, report | {"protocol": str(protocol)}
