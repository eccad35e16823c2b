"""Cross-lingual gold standards from concept-aligned monolingual ones.

Camacho-Collados, Pilehvar & Navigli (2015, section 3) build a cross-lingual similarity set from
two monolingual versions of the same pairs: for a pair aligned as (a1, b1) in L1 and (a2, b2) in
L2, the cross-lingual pairs (a1, b2) and (a2, b1) get the mean of the two monolingual scores,
and a pair whose monolingual scores differ by more than a threshold is left out, since the
concepts are then not rated alike in the two languages. Multi-SimLex (Vulic et al. 2020,
section 7) and the cross-lingual HyperLex (Vulic et al. 2019) follow the same construction;
for HyperLex the order (X, Y) of a pair is kept: word1 always comes from the pair's word1.

**Decision** (protocol key ``[crosslingual] max_score_difference``): Camacho-Collados et al.
drop pairs whose scores differ by more than 1 on their 0-4 scale, a quarter of the range;
lexgold's default is the same quarter of each protocol's score range (2.5 on 0-10; 0.25 for
TR9856's 0-1). A difference equal to the threshold is kept.

Pairs are aligned through the ``pair_id`` the translation workflow gives every English pair
(:mod:`lexgold.languages.translation`): a gold standard either has a ``pair_id`` column or is
matched to its language's ``aligned.csv`` by (word1, word2).
"""

from __future__ import annotations

import dataclasses
import itertools

import pandas as pd

from lexgold.errors import InputError
from lexgold.languages.translation import normalise

#: score columns of the released layouts (lexgold.process.release), in order of preference
SCORE_COLUMNS = ("score", "SimLex999", "AVG_SCORE_0_10")
WORD_COLUMNS = (("word1", "word2"), ("WORD1", "WORD2"), ("term1", "term2"))


@dataclasses.dataclass
class CrosslingualConfig:
    """The ``[crosslingual]`` table of a protocol file (module docstring, Decision)."""
    max_score_difference: float = 2.5


def gold_scores(gold: pd.DataFrame, aligned: pd.DataFrame | None = None,
                source: str = "<gold>") -> pd.DataFrame:
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
    """
    words = next((c for c in WORD_COLUMNS if set(c) <= set(gold.columns)), None)
    score = next((c for c in SCORE_COLUMNS if c in gold.columns), None)
    if words is None or score is None:
        raise InputError("a gold standard needs word1, word2 and a score column "
                         f"({', '.join(SCORE_COLUMNS)})", path=source,
                         field="word1" if words is None else "score")
    out = pd.DataFrame({"word1": gold[words[0]].astype(str), "word2": gold[words[1]].astype(str),
                        "score": pd.to_numeric(gold[score], errors="coerce")})
    bad = out["score"].isna()
    if bad.any():
        line = int(bad.to_numpy().argmax()) + 2
        raise InputError(f"not a number: {gold[score].iloc[line - 2]!r}", path=source, line=line,
                         field=score)
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


def crosslingual_pairs(first: pd.DataFrame, second: pd.DataFrame, lang1: str, lang2: str,
                       max_score_difference: float = 2.5) -> tuple[pd.DataFrame, dict]:
    """The cross-lingual set of two languages (Camacho-Collados et al. 2015, section 3).

    Parameters
    ----------
    first, second : DataFrame
        :func:`gold_scores` of the two languages.
    lang1, lang2 : str
        Their language codes.
    max_score_difference : float
        Keep a concept pair when ``|score1 - score2| <= max_score_difference``.

    Returns
    -------
    pairs : DataFrame
        ``pair_id, word1, lang1, word2, lang2, score, score_lang1, score_lang2``: two rows per
        kept concept pair, (word1 in lang1, word2 in lang2) and (word1 in lang2, word2 in
        lang1); score = mean of the two monolingual scores.
    counts : dict
        ``aligned`` concept pairs in both, ``only_<lang>`` pairs missing in the other,
        ``dropped_disagreement``, ``kept`` concept pairs, ``pairs`` cross-lingual rows.

    Examples
    --------
    >>> it = pd.DataFrame({"pair_id": ["p1", "p2"], "word1": ["tazza", "auto"],
    ...                    "word2": ["boccale", "strada"], "score": [8.0, 2.0]})
    >>> he = pd.DataFrame({"pair_id": ["p1", "p2"], "word1": ["ספל", "מכונית"],
    ...                    "word2": ["כוס", "כביש"], "score": [7.0, 6.0]})
    >>> pairs, counts = crosslingual_pairs(it, he, "it", "he")
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
    kept = both[difference <= max_score_difference + 1e-12]
    mean = (kept["score_1"] + kept["score_2"]) / 2
    forward = pd.DataFrame({"pair_id": kept["pair_id"], "word1": kept["word1_1"], "lang1": lang1,
                            "word2": kept["word2_2"], "lang2": lang2, "score": mean})
    backward = pd.DataFrame({"pair_id": kept["pair_id"], "word1": kept["word1_2"], "lang1": lang2,
                             "word2": kept["word2_1"], "lang2": lang1, "score": mean})
    pairs = pd.concat([forward.assign(_order=0), backward.assign(_order=1)]).assign(
        score_lang1=pd.concat([kept["score_1"], kept["score_1"]]),
        score_lang2=pd.concat([kept["score_2"], kept["score_2"]]))
    pairs = pairs.rename(columns={"score_lang1": f"score_{lang1}", "score_lang2": f"score_{lang2}"})
    pairs = pairs.sort_values(["pair_id", "_order"], kind="stable").drop(columns="_order")
    pairs = pairs.reset_index(drop=True)
    counts = {"aligned": int(len(both)),
              f"only_{lang1}": int((~first["pair_id"].isin(second["pair_id"])).sum()),
              f"only_{lang2}": int((~second["pair_id"].isin(first["pair_id"])).sum()),
              "dropped_disagreement": int(len(both) - len(kept)),
              "kept": int(len(kept)), "pairs": int(len(pairs))}
    return pairs, counts


def all_crosslingual(golds: dict[str, pd.DataFrame], max_score_difference: float = 2.5
                     ) -> tuple[dict[tuple[str, str], pd.DataFrame], dict]:
    """:func:`crosslingual_pairs` for every pair of the given languages (in the given order).

    Returns ``{(lang1, lang2): pairs}`` and a report ``{"lang1-lang2": counts, ...}`` plus
    ``max_score_difference``.
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
