"""Released gold standards in the column layout of the published files.

==========  ================================================================================
format      ``gold.csv`` columns (comma-separated, header as in the published file)
==========  ================================================================================
simlex      word1 word2 POS SimLex999 conc(w1) conc(w2) concQ Assoc(USF) SimAssoc333 SD(SimLex)
hyperlex    WORD1 WORD2 POS TYPE AVG_SCORE AVG_SCORE_0_10 STD SCORES..
tr9856      term1 term2 score topic
==========  ================================================================================

Where the SimLex metadata comes from (Hill et al. 2015, section 3.1 and the release's README):

- ``conc(w1)``, ``conc(w2)``: with ``conc_source = "brysbaert"`` (the default, key
  ``[process.release] conc_source``) Brysbaert et al. (2014) concreteness, 1-5, the scale of the
  published file, from the copy shipped with lexgold; with ``"pairs"`` the ``conc1``/``conc2``
  columns of the builder's ``pairs.csv`` (``--pairs``; USF 1-7 when the builder used USF),
  falling back to Brysbaert for pairs it lacks. A word with no rating gets an empty cell, and
  so does the pair's ``concQ``.
- ``concQ``: the quartile (1 = most abstract ... 4 = most concrete) of conc(w1) + conc(w2) over
  the released pairs that have both.
- ``Assoc(USF)``: the ``fsg`` column of ``pairs.csv`` when given, otherwise the USF forward
  strength (cue word1 -> target word2) from the shipped norms; a pair absent from USF gets 0
  (unassociated, as the unassociated cohort of section 3.1). lexgold writes USF's FSG (0-1)
  as it is.
- ``SimAssoc333``: 1 for the 333 pairs with the highest Assoc(USF) (section 6.2), else 0.
- ``SD(SimLex)``: the SD of the accepted ratings of the pair, on the rating scale (0-6).

HyperLex ``TYPE`` is the ``relation`` column of ``pairs.csv`` (empty without it); ``STD`` is on
the rating scale and ``SCORES..`` holds the accepted ratings separated by spaces. TR9856
``topic`` comes from a ``topic`` column of the ratings or of ``pairs.csv`` (empty otherwise).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from lexgold.errors import InputError
from lexgold.tables import read_text_table

SIMLEX_COLUMNS = ["word1", "word2", "POS", "SimLex999", "conc(w1)", "conc(w2)", "concQ",
                  "Assoc(USF)", "SimAssoc333", "SD(SimLex)"]
HYPERLEX_COLUMNS = ["WORD1", "WORD2", "POS", "TYPE", "AVG_SCORE", "AVG_SCORE_0_10", "STD",
                    "SCORES.."]
TR9856_COLUMNS = ["term1", "term2", "score", "topic"]
FORMATS = ("simlex", "hyperlex", "tr9856")


def read_pairs(path: str | Path) -> pd.DataFrame:
    """A builder ``pairs.csv`` (or any CSV with ``word1, word2`` or ``term1, term2``).

    Returns the frame with ``term1/term2`` renamed to ``word1/word2``; other columns as read.
    """
    path = Path(path)
    frame = read_text_table(path).rename(columns={"term1": "word1", "term2": "word2"})
    for column in ("word1", "word2"):
        if column not in frame.columns:
            raise InputError("missing column; need word1, word2 (or term1, term2)", path=path,
                             line=1, field=column)
    for column in ("conc1", "conc2", "fsg"):
        if column in frame.columns:
            values = pd.to_numeric(frame[column].replace("", np.nan), errors="coerce")
            bad = values.isna() & frame[column].ne("")
            if bad.any():
                raise InputError(f"expected a number, found {frame[column][bad].iloc[0]!r}",
                                 path=path, line=int(np.flatnonzero(bad)[0]) + 2, field=column)
            frame[column] = values
    return frame


def concreteness_quartile(total: pd.Series) -> pd.Series:
    """Quartile 1-4 of summed concreteness (NaN stays NaN), as SimLex's ``concQ``."""
    out = pd.Series(np.nan, index=total.index)
    known = total.dropna()
    if len(known) >= 4:
        ranks = known.rank(method="first")
        out[known.index] = np.ceil(ranks * 4 / len(known)).clip(1, 4)
    return out.astype("Int64")


def usf_concreteness(usf: pd.DataFrame) -> pd.Series:
    """Word (lower case) -> USF concreteness (1-7), from the cue and target columns."""
    cues = pd.Series(usf["qcon"].to_numpy(dtype=float), index=usf["cue"].str.lower())
    targets = pd.Series(usf["tcon"].to_numpy(dtype=float), index=usf["target"].str.lower())
    both = pd.concat([cues, targets]).dropna()
    return both[~both.index.duplicated()]


def concreteness_group(conc1, conc2, *, threshold: float = 4.0) -> pd.Series:
    """HyperLex section 5 groups: G1 both concrete (>= threshold), G2 both abstract, G3 one of
    each with difference <= 1, G4 one of each with difference > 1; empty when a rating is missing.

    Examples
    --------
    >>> concreteness_group([5, 2, 4.5, 6, None], [6, 3, 3.8, 2, 5]).tolist()
    ['G1', 'G2', 'G3', 'G4', '']
    """
    a = pd.Series(conc1, dtype=float).reset_index(drop=True)
    b = pd.Series(conc2, dtype=float).reset_index(drop=True)
    high_a, high_b = a >= threshold, b >= threshold
    mixed = np.where((a - b).abs() <= 1, "G3", "G4")
    group = np.where(high_a & high_b, "G1", np.where(~high_a & ~high_b, "G2", mixed))
    return pd.Series(np.where(a.isna() | b.isna(), "", group))


def simlex_gold(scores: pd.DataFrame, *, pairs: pd.DataFrame | None = None,
                usf: pd.DataFrame | None = None, brysbaert: pd.DataFrame | None = None,
                decimals: int = 2, conc_source: str = "brysbaert") -> pd.DataFrame:
    """SimLex-999.txt layout from :func:`lexgold.process.scaling.pair_scores` output.

    ``usf`` and ``brysbaert`` are the frames of :func:`lexgold.resources.read_usf` and
    :func:`read_brysbaert`, used for what ``pairs`` lacks (see the module docstring).
    """
    out = scores[["word1", "word2"]].copy()
    out["POS"] = _column(scores, pairs, "pos")
    out["SimLex999"] = scores["score"].round(decimals)
    if conc_source not in ("brysbaert", "pairs"):
        raise InputError(f"expected brysbaert or pairs, found {conc_source!r}",
                         field="conc_source")
    conc = _from_pairs(scores, pairs if conc_source == "pairs" else None, ["conc1", "conc2"])
    if brysbaert is not None:
        lookup = brysbaert.assign(key=brysbaert["word"].str.lower()).drop_duplicates(
            "key").set_index("key")["conc_m"]
        for column, word in (("conc1", "word1"), ("conc2", "word2")):
            conc[column] = conc[column].fillna(scores[word].str.lower().map(lookup))
    out["conc(w1)"], out["conc(w2)"] = conc["conc1"].round(2), conc["conc2"].round(2)
    out["concQ"] = concreteness_quartile(conc["conc1"] + conc["conc2"])
    assoc = _from_pairs(scores, pairs, ["fsg"])["fsg"]
    if usf is not None:
        keys = pd.MultiIndex.from_arrays([usf["cue"].str.upper(), usf["target"].str.upper()])
        fsg = pd.Series(usf["fsg"].to_numpy(dtype=float), index=keys)
        fsg = fsg[~fsg.index.duplicated()]
        wanted = pd.MultiIndex.from_arrays([scores["word1"].str.upper(),
                                            scores["word2"].str.upper()])
        assoc = assoc.fillna(pd.Series(fsg.reindex(wanted).to_numpy(), index=assoc.index))
    out["Assoc(USF)"] = assoc.fillna(0.0).round(4)
    top = out["Assoc(USF)"].rank(method="first", ascending=False) <= 333
    out["SimAssoc333"] = top.astype(int)
    out["SD(SimLex)"] = scores["sd"].round(decimals)
    return out[SIMLEX_COLUMNS]


def hyperlex_gold(scores: pd.DataFrame, *, pairs: pd.DataFrame | None = None,
                  decimals: int = 2) -> pd.DataFrame:
    """HyperLex layout (hyperlex-all.txt) from :func:`pair_scores` output."""
    out = pd.DataFrame({"WORD1": scores["word1"], "WORD2": scores["word2"]})
    out["POS"] = _column(scores, pairs, "pos")
    out["TYPE"] = _column(scores, pairs, "relation")
    out["AVG_SCORE"] = scores["mean"].round(decimals)
    out["AVG_SCORE_0_10"] = scores["score"].round(decimals)
    out["STD"] = scores["sd"].round(decimals)
    out["SCORES.."] = [" ".join(f"{v:g}" for v in values) for values in scores["scores"]]
    return out[HYPERLEX_COLUMNS]


def tr9856_gold(scores: pd.DataFrame, *, pairs: pd.DataFrame | None = None,
                decimals: int = 2) -> pd.DataFrame:
    """TR9856 layout (term1 term2 score topic) from :func:`pair_scores` output."""
    return pd.DataFrame({"term1": scores["word1"], "term2": scores["word2"],
                         "score": scores["score"].round(decimals),
                         "topic": _column(scores, pairs, "topic")})[TR9856_COLUMNS]


def gold_table(scores: pd.DataFrame, format: str, **sources) -> pd.DataFrame:
    """The released table in ``format`` (``simlex``, ``hyperlex``, ``tr9856``)."""
    if format not in FORMATS:
        raise InputError(f"expected one of {', '.join(FORMATS)}, found {format!r}",
                         field="format")
    if format == "simlex":
        return simlex_gold(scores, **sources)
    sources = {k: v for k, v in sources.items() if k in ("pairs", "decimals")}
    return (hyperlex_gold if format == "hyperlex" else tr9856_gold)(scores, **sources)


def _from_pairs(scores, pairs, columns) -> pd.DataFrame:
    """``columns`` of ``pairs`` aligned on the pairs of ``scores`` (NaN where missing)."""
    present = [c for c in columns if pairs is not None and c in pairs.columns]
    out = pd.DataFrame(np.nan, index=scores.index, columns=columns, dtype=float)
    if present:
        table = pairs.drop_duplicates(["word1", "word2"]).set_index(["word1", "word2"])
        keys = pd.MultiIndex.from_frame(scores[["word1", "word2"]])
        for column in present:
            out[column] = pd.to_numeric(table[column].reindex(keys), errors="coerce").to_numpy()
    return out


def _column(scores, pairs, name) -> pd.Series:
    """A text column from the scores (ratings) if present, else from ``pairs``, else empty."""
    values = pd.Series("", index=scores.index, dtype=object)
    if name in scores.columns:
        values = scores[name].fillna("").astype(str)
    if pairs is not None and name in pairs.columns:
        table = pairs.drop_duplicates(["word1", "word2"]).set_index(["word1", "word2"])[name]
        keys = pd.MultiIndex.from_frame(scores[["word1", "word2"]])
        looked_up = pd.Series(table.reindex(keys).to_numpy(), index=scores.index)
        values = values.where(values != "", looked_up.fillna("").astype(str))
    return values
