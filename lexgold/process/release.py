"""Released gold standards in the layout of the published files.

Every run writes the table twice: ``gold.csv``, a comma-separated copy for spreadsheets and
pandas (one field per column, ``SCORES..`` joined by spaces), and the release file in the
published file's exact layout (:func:`write_release`), named by ``[process.release]
release_file``:

==========  ===================  ==========================================================
format      release file         header and delimiter
==========  ===================  ==========================================================
simlex      ``SimLex-999.txt``   ``word1 word2 POS SimLex999 conc(w1) conc(w2) concQ
                                 Assoc(USF) SimAssoc333 SD(SimLex)``, TAB-separated
hyperlex    ``hyperlex-all.txt`` ``WORD1 WORD2 POS TYPE AVG_SCORE AVG_SCORE_0_10 STD
                                 SCORES..``, one space between fields, the accepted ratings
                                 as trailing fields (as many as the pair has)
tr9856      ``TR9856.txt``       ``#term1 term2 score``, TAB-separated, score = the fraction
                                 of annotators who said "related"
==========  ===================  ==========================================================

Each layout prints numbers by the rules ``[process.release]`` declares, whose defaults are its
published file's (:data:`NUMBER_FORMATS`, :func:`released_score`):

- ``number_format``: SimLex-999.txt and TR9856 ``"trimmed"``, at most ``decimals`` decimals,
  trailing zeros dropped (``9.2``, ``2``); hyperlex-all.txt ``"fixed"``, exactly ``decimals``
  decimals (``5.20``). ``"shortest"`` is Python's shortest repr of the rounded value.
- ``score_format``: the released score column (SimLex999, AVG_SCORE_0_10, TR9856 score);
  hyperlex-all.txt prints its AVG_SCORE_0_10 ``"shortest"`` (``7.5``, ``0.9``, ``0.0``,
  ``10.0``) beside its fixed AVG_SCORE and STD.
- ``score_rounding``: ``"half-up"`` rounds the exact score half up on its decimal value
  (:func:`round_half_up`: 6.125 -> 6.13, as WordSim-353's published means, where numpy rounds
  the binary value half to even, 6.12); ``"mean-first"`` is HyperLex's AVG_SCORE_0_10,
  ``round(round(mean, 2) * 10 / 6, 2)`` with Python's round(), which reproduces every row of
  the vendored real excerpt of hyperlex-all.txt (tests/data/hyperlex-all.excerpt.txt) and,
  checked against the published file, all 2,616 of its rows. Every other number
  (AVG_SCORE, STD, SimLex's metadata) is rounded half up. ``"half-even"`` rounds the exact
  score half to even on its decimal value (:func:`round_half_even`: 8.625 -> 8.62, 8.635 ->
  8.64), as the Stanford Rare Words set prints its scores (Luong et al. 2013; every row of the
  real excerpt of ``rw.txt`` in tests/data/rw, where half up misses the two ties).

The ratings of hyperlex-all.txt print as integers (``5``; a rater's mean of two answers keeps
its decimals, ``4.5``); SimLex-999.txt has CRLF line ends, the others LF. A missing value is
an empty field (TAB layouts) or ``NA`` (HyperLex's space layout, where an empty field cannot be
seen). ``gold.csv`` also keeps the TR9856 ``topic``.

Where the SimLex metadata comes from (Hill et al. 2015, section 3.1 and the release's README):

- ``conc(w1)``, ``conc(w2)``: with ``conc_source = "brysbaert"`` (the default, key
  ``[process.release] conc_source``) the concreteness norms passed as ``brysbaert`` (English:
  Brysbaert et al. 2014, 1-5, the scale of the published file, shipped with lexgold; a language
  pack: its ``[resources.concreteness]``); with ``"pairs"`` the ``conc1``/``conc2`` columns of
  the builder's ``pairs.csv`` (``--pairs``), falling back to the norms for pairs it lacks. A word
  with no rating gets an empty cell, and so does the pair's ``concQ``.
- ``concQ``: the quartile (1 = most abstract ... 4 = most concrete) of conc(w1) + conc(w2) over
  the released pairs that have both, ranked with ties broken by row order (the earlier row
  ranks lower), as the published file's concQ is: that rule reproduces all 999 of its values,
  mean ranks for ties 997 (checked against the published file).
- ``Assoc(USF)``: 10 x the free-association strength FSG(word2 -> word1), on 0-10 as in the
  published file (SimLex's word1 is the USF target, word2 the cue). FSG is the ``fsg`` column
  of ``pairs.csv`` (USF's 0-1 FSG) when given, otherwise looked up in the association norms
  passed as ``usf`` (English: the shipped USF norms; a language pack: its
  ``[resources.association_norms]``). A pair whose cue word2 was normed but never produced
  word1 gets 0; a pair whose cue was never normed, or with no norms at all, gets an empty cell.
- ``SimAssoc333``: 1 for the 333 pairs with the highest Assoc(USF) (section 6.2), else 0.
  Only pairs with a known association above 0 are ranked; ties are broken by word1, then
  word2 (Unicode code point order), never by the order of the rows. When no pair has a known
  association (no norms for the language), the column is empty, as Assoc(USF) is.
- ``SD(SimLex)``: the SD of the accepted ratings of the pair, on the rating scale (0-6).

HyperLex ``TYPE`` is the ``relation`` column of ``pairs.csv`` in the published names
(:func:`hyperlex_type`: hyp-1..hyp-4 with hyp-4 for every path of 4 or more, r-hyp-1..r-hyp-4,
cohyp, mero, syn, ant, no-rel); ``STD`` is the population SD (ddof = 0) on the rating scale,
as published; ``SCORES..`` holds the accepted ratings the pair's AVG_SCORE and STD are computed
from, one per accepted rater (a rater's repeated answers averaged), in rater-id order. A pair
rated in several tranches (the consistency set) lists every accepted rater of every tranche, so
that AVG_SCORE is always the mean of SCORES and STD their SD (the published file lists 7-14). TR9856 ``topic`` (``gold.csv`` only) comes from a ``topic`` column of the
ratings or of ``pairs.csv``.
"""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal
from pathlib import Path

import numpy as np
import pandas as pd

from lexgold.builder.relations import hyperlex_type
from lexgold.errors import InputError
from lexgold.pairfiles import PAIR_COLUMN_ALIASES, read_pair_table
from lexgold.process.source import numeric_pair_columns
from lexgold.simulated import COMMENT, SIMULATED

SIMLEX_COLUMNS = ["word1", "word2", "POS", "SimLex999", "conc(w1)", "conc(w2)", "concQ",
                  "Assoc(USF)", "SimAssoc333", "SD(SimLex)"]
HYPERLEX_COLUMNS = ["WORD1", "WORD2", "POS", "TYPE", "AVG_SCORE", "AVG_SCORE_0_10", "STD",
                    "SCORES.."]
TR9856_COLUMNS = ["term1", "term2", "score", "topic"]
FORMATS = ("simlex", "hyperlex", "tr9856")
#: the file name of each published release (key ``[process.release] release_file``)
RELEASE_FILES = {"simlex": "SimLex-999.txt", "hyperlex": "hyperlex-all.txt",
                 "tr9856": "TR9856.txt"}
#: SimLex-999 section 6.2: the most associated pairs
SIMASSOC_PAIRS = 333
#: each layout's published number form: (number_format, score_format) of its release file
NUMBER_FORMATS = {"simlex": ("trimmed", "trimmed"), "hyperlex": ("fixed", "shortest"),
                  "tr9856": ("trimmed", "trimmed"), "plain": ("shortest", "shortest")}
#: each layout's published rounding of its score (``score_rounding``; others: half-up)
SCORE_ROUNDING = {"hyperlex": "mean-first"}
#: the released score column of each layout
SCORE_COLUMNS = {"simlex": "SimLex999", "hyperlex": "AVG_SCORE_0_10", "tr9856": "score"}


def read_release_pairs(path: str | Path) -> pd.DataFrame:
    """A builder ``pairs.csv`` (or any CSV with ``word1, word2`` or ``term1, term2``, or a
    published gold file: :func:`lexgold.pairfiles.read_pair_table`).

    Returns the frame with ``term1/term2`` renamed to ``word1/word2``; other columns as read.
    """
    path = Path(path)
    frame = read_pair_table(path).rename(columns=PAIR_COLUMN_ALIASES)
    for column in ("word1", "word2"):
        if column not in frame.columns:
            raise InputError("missing column; need word1, word2 (or term1, term2)", path=path,
                             line=1, field=column)
    return numeric_pair_columns(frame, path)


def concreteness_quartile(total: pd.Series) -> pd.Series:
    """Quartile 1-4 of summed concreteness (NaN stays NaN), as SimLex's ``concQ``.

    Parameters
    ----------
    total : Series
        conc(w1) + conc(w2) per pair, in the release's row order.

    Returns
    -------
    Series (Int64)
        ``ceil(4 r / n)`` for the rank r (1..n) of each known sum among the n known sums, ties
        ranked in row order (SimLex-999 section 5's quartiles; the published file's concQ
        follows row order for ties, not mean ranks); ``<NA>`` where the sum is missing, and
        everywhere when fewer than 4 sums are known.

    Examples
    --------
    >>> concreteness_quartile(pd.Series([2.0, 5.0, 5.0, 5.0, 8.0, 9.0, 1.0, 5.0])).tolist()
    [1, 2, 2, 3, 4, 4, 1, 3]
    """
    out = pd.Series(np.nan, index=total.index)
    known = total.dropna()
    if len(known) >= 4:
        ranks = known.rank(method="first")         # ties: the earlier row ranks lower
        out[known.index] = np.ceil(ranks * 4 / len(known)).clip(1, 4)
    return out.astype("Int64")


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


def association_strength(word1: pd.Series, word2: pd.Series, norms: pd.DataFrame) -> pd.Series:
    """FSG(word2 -> word1) from association norms (``cue, target, fsg``, as
    :func:`lexgold.resources.read_usf`): word2 is the cue, word1 the target (SimLex-999's
    orientation). 0 when the cue was normed but never gave the target, NaN when it was not
    normed. Words are compared case-insensitively.

    Examples
    --------
    >>> norms = pd.DataFrame({"cue": ["DOG", "DOG"], "target": ["CAT", "BONE"],
    ...                       "fsg": [0.5, 0.1]})
    >>> association_strength(pd.Series(["cat", "cat", "bone"]), pd.Series(["dog", "mouse", "dog"]),
    ...                      norms).tolist()
    [0.5, nan, 0.1]
    """
    cues, targets = norms["cue"].astype(str).str.upper(), norms["target"].astype(str).str.upper()
    table = pd.Series(norms["fsg"].to_numpy(dtype=float),
                      index=pd.MultiIndex.from_arrays([cues, targets]))
    table = table[~table.index.duplicated()]
    wanted = pd.MultiIndex.from_arrays([word2.astype(str).str.upper().to_numpy(),
                                        word1.astype(str).str.upper().to_numpy()])
    found = pd.Series(table.reindex(wanted).to_numpy(), index=word1.index)
    normed = pd.Series(word2.astype(str).str.upper().isin(set(cues)).to_numpy(), index=word1.index)
    return found.where(found.notna() | ~normed, 0.0)


def most_associated(assoc: pd.Series, word1: pd.Series, word2: pd.Series,
                    n: int = SIMASSOC_PAIRS) -> pd.Series:
    """SimLex-999's ``SimAssoc333``: 1 for the ``n`` pairs with the highest association.

    Only pairs with a known association above 0 are ranked (a pair that is not associated, or
    whose association is unknown, is never among the most associated); ties are broken by word1,
    then word2, in Unicode code point order, so the result does not depend on the row order.

    Examples
    --------
    >>> most_associated(pd.Series([0.5, 2.0, 0.5, None, 0.0]), pd.Series(list("dcbae")),
    ...                 pd.Series(list("xxxxx")), n=2).tolist()
    [0, 1, 1, 0, 0]
    """
    table = pd.DataFrame({"assoc": pd.to_numeric(assoc, errors="coerce").to_numpy(),
                          "word1": word1.astype(str).to_numpy(),
                          "word2": word2.astype(str).to_numpy()}, index=assoc.index)
    ranked = table[table["assoc"] > 0].sort_values(["assoc", "word1", "word2"],
                                                   ascending=[False, True, True], kind="stable")
    out = pd.Series(0, index=assoc.index, dtype=int)
    out[ranked.index[:n]] = 1
    return out


def simlex_gold(scores: pd.DataFrame, *, pairs: pd.DataFrame | None = None,
                usf: pd.DataFrame | None = None, brysbaert: pd.DataFrame | None = None,
                decimals: int = 2, conc_source: str = "brysbaert") -> pd.DataFrame:
    """SimLex-999.txt layout from :func:`lexgold.process.scaling.gold_scores` output.

    ``usf`` (association norms: ``cue, target, fsg``, as :func:`lexgold.resources.read_usf`)
    and ``brysbaert`` (concreteness norms: ``word, conc_m``, as :func:`read_brysbaert`) fill
    what ``pairs`` lacks (see the module docstring); pass None where the language has none.
    """
    out = scores[["word1", "word2"]].copy()
    out["POS"] = _column(scores, pairs, "pos")
    out["SimLex999"] = round_half_up(scores["score"], decimals)
    if conc_source not in ("brysbaert", "pairs"):
        raise InputError(f"expected brysbaert or pairs, found {conc_source!r}",
                         field="conc_source")
    conc = _from_pairs(scores, pairs if conc_source == "pairs" else None, ["conc1", "conc2"])
    if brysbaert is not None:
        lookup = brysbaert.assign(key=brysbaert["word"].str.lower()).drop_duplicates(
            "key").set_index("key")["conc_m"]
        for column, word in (("conc1", "word1"), ("conc2", "word2")):
            conc[column] = conc[column].fillna(scores[word].str.lower().map(lookup))
    out["conc(w1)"] = round_half_up(conc["conc1"], 2)
    out["conc(w2)"] = round_half_up(conc["conc2"], 2)
    out["concQ"] = concreteness_quartile(conc["conc1"] + conc["conc2"])
    fsg = _from_pairs(scores, pairs, ["fsg"])["fsg"]
    if usf is not None:
        fsg = fsg.fillna(association_strength(scores["word1"], scores["word2"], usf))
    out["Assoc(USF)"] = round_half_up(10 * fsg, decimals)
    out["SimAssoc333"] = (most_associated(out["Assoc(USF)"], scores["word1"], scores["word2"])
                          .astype("Int64"))
    if out["Assoc(USF)"].isna().all():       # no norms: not "none most associated" but unknown
        out["SimAssoc333"] = pd.array([pd.NA] * len(out), dtype="Int64")
    out["SD(SimLex)"] = round_half_up(scores["sd"], decimals)
    return out[SIMLEX_COLUMNS]


def hyperlex_gold(scores: pd.DataFrame, *, pairs: pd.DataFrame | None = None,
                  decimals: int = 2) -> pd.DataFrame:
    """HyperLex layout (hyperlex-all.txt) from :func:`gold_scores` output.

    ``STD`` is the population SD (ddof = 0) of the ratings listed in ``SCORES..``, as in the
    published file (Vulic et al. 2017, section 4.5; it matches all 2,616 published rows to
    0.005); ``SCORES..`` lists every accepted rating of the pair in rater-id order (module
    docstring).

    Examples
    --------
    >>> scores = pd.DataFrame({"word1": ["dog"], "word2": ["animal"], "pos": ["N"],
    ...                        "relation": ["hyp-1"], "mean": [5.2], "score": [26 / 3],
    ...                        "scores": [[6.0, 5.0, 5.0, 4.0, 6.0]]})
    >>> print(release_text(hyperlex_gold(scores), "hyperlex"), end="")
    WORD1 WORD2 POS TYPE AVG_SCORE AVG_SCORE_0_10 STD SCORES..
    dog animal N hyp-1 5.20 8.67 0.75 6 5 5 4 6
    """
    out = pd.DataFrame({"WORD1": scores["word1"], "WORD2": scores["word2"]})
    out["POS"] = _column(scores, pairs, "pos")
    out["TYPE"] = _column(scores, pairs, "relation").map(hyperlex_type)
    out["AVG_SCORE"] = round_half_up(scores["mean"], decimals)
    out["AVG_SCORE_0_10"] = round_half_up(scores["score"], decimals)
    population_sd = pd.Series([float(np.std(values)) if len(values) else np.nan
                               for values in scores["scores"]], index=scores.index)
    out["STD"] = round_half_up(population_sd, decimals)
    out["SCORES.."] = [" ".join(_rating_text(v) for v in values) for values in scores["scores"]]
    return out[HYPERLEX_COLUMNS]


def tr9856_gold(scores: pd.DataFrame, *, pairs: pd.DataFrame | None = None,
                decimals: int = 2) -> pd.DataFrame:
    """TR9856 layout (term1 term2 score topic) from :func:`gold_scores` output."""
    return pd.DataFrame({"term1": scores["word1"], "term2": scores["word2"],
                         "score": round_half_up(scores["score"], decimals),
                         "topic": _column(scores, pairs, "topic")})[TR9856_COLUMNS]


def released_score(scores: pd.DataFrame, *, decimals: int = 2, rounding: str = "half-up",
                   rating_range: tuple[float, float] = (0.0, 6.0),
                   score_range: tuple[float, float] = (0.0, 10.0)) -> pd.Series:
    """The released score of every pair, rounded by ``[process.release] score_rounding``.

    ``"half-up"``: the exact ``score`` (the mean on ``score_range``) rounded half up on its
    decimal value (:func:`round_half_up`); ``"half-even"`` the same, half to even
    (:func:`round_half_even`, Rare Words' rule). ``"mean-first"``: the HyperLex release's
    AVG_SCORE_0_10 (Vulic et al. 2017, section 4.5: the 0-6 mean scaled to 0-10), the ``mean``
    rounded to ``decimals`` with Python's round() (the binary value, half to even), mapped
    linearly from ``rating_range`` to ``score_range`` and rounded again the same way.

    Examples
    --------
    >>> scores = pd.DataFrame({"mean": [4.5, 4.125], "score": [7.5, 4.125 * 10 / 6]})
    >>> released_score(scores, rounding="mean-first").tolist()   # round(4.12 * 10 / 6, 2)
    [7.5, 6.87]
    >>> released_score(scores).tolist()                          # 6.875 half up
    [7.5, 6.88]
    >>> released_score(scores, rounding="half-even").tolist()    # 6.875 half to even
    [7.5, 6.88]
    >>> released_score(pd.DataFrame({"score": [8.625, 8.635]}), rounding="half-even").tolist()
    [8.62, 8.64]
    """
    if rounding in ("", "half-up"):
        return round_half_up(scores["score"], decimals)
    if rounding == "half-even":
        return round_half_even(scores["score"], decimals)
    if rounding != "mean-first":
        raise InputError(f"expected half-up, half-even or mean-first, found {rounding!r}",
                         field="process.release.score_rounding")
    (low, high), (start, end) = rating_range, score_range

    def rule(mean):
        if mean is None or mean is pd.NA or not np.isfinite(float(mean)):
            return np.nan
        return round((round(float(mean), decimals) - low) * (end - start) / (high - low) + start,
                     decimals)

    return scores["mean"].map(rule).astype(float)


def gold_table(scores: pd.DataFrame, format: str, *, score_rounding: str = "",
               rating_range: tuple[float, float] = (0.0, 6.0),
               score_range: tuple[float, float] = (0.0, 10.0), **sources) -> pd.DataFrame:
    """The released table in ``format`` (``simlex``, ``hyperlex``, ``tr9856``), its score
    rounded by ``score_rounding`` (:func:`released_score`; "" = the layout's published rule,
    :data:`SCORE_ROUNDING`)."""
    if format not in FORMATS:
        raise InputError(f"expected one of {', '.join(FORMATS)}, found {format!r}",
                         field="format")
    scores = scores.assign(score=released_score(
        scores, decimals=sources.get("decimals", 2),
        rounding=score_rounding or SCORE_ROUNDING.get(format, "half-up"),
        rating_range=rating_range, score_range=score_range).array)
    if format == "simlex":
        return simlex_gold(scores, **sources)
    sources = {k: v for k, v in sources.items() if k in ("pairs", "decimals")}
    return (hyperlex_gold if format == "hyperlex" else tr9856_gold)(scores, **sources)


def release_name(format: str, release_file: str = "") -> str:
    """The release file's name: ``release_file`` when set, else the published one;
    ``gold.csv`` for a format with no published layout (plain), whose release it is."""
    if format not in RELEASE_FILES:
        return "gold.csv"
    name = release_file or RELEASE_FILES[format]
    if Path(name).name != name or name in ("gold.csv", "exclusions.csv", "report.json"):
        raise InputError(f"expected a plain file name other than gold.csv, exclusions.csv and "
                         f"report.json, found {name!r}", field="process.release.release_file")
    return name


def release_text(gold: pd.DataFrame, format: str, *, decimals: int = 2, number_format: str = "",
                 score_format: str = "") -> str:
    """The table of :func:`gold_table` in the published file's exact layout (module docstring),
    numbers printed as ``number_format`` and the score column as ``score_format`` (``fixed``,
    ``trimmed``, ``shortest``; "" = the layout's published form, :data:`NUMBER_FORMATS`). A
    gold table with a ``simulated`` column (:mod:`lexgold.simulated`) keeps it as the last
    column (SimLex, TR9856), or opens with :data:`lexgold.simulated.COMMENT` (HyperLex).

    Raises :class:`InputError` when a word holds the layout's delimiter (a TAB; for HyperLex
    any white space), which would shift the columns.

    Examples
    --------
    >>> table = pd.DataFrame({"term1": ["a b"], "term2": ["c"], "score": [0.8], "topic": ["t"]})
    >>> release_text(table, "tr9856")
    '#term1\\tterm2\\tscore\\na b\\tc\\t0.8\\n'
    """
    if format not in RELEASE_FILES:
        raise InputError(f"no published layout for format {format!r}; expected one of "
                         f"{', '.join(RELEASE_FILES)}", field="process.release.format")
    score_format = score_format or number_format or NUMBER_FORMATS[format][1]
    number_format = number_format or NUMBER_FORMATS[format][0]
    columns = {"simlex": SIMLEX_COLUMNS, "tr9856": TR9856_COLUMNS[:3],
               "hyperlex": HYPERLEX_COLUMNS[:-1]}[format]
    forms = [score_format if column == SCORE_COLUMNS[format] else number_format
             for column in columns]
    rows = [[_number_text(v, decimals, form) for v, form in zip(row, forms)]
            for row in gold[columns].itertuples(index=False)]
    marked = SIMULATED in gold.columns            # lexgold.simulated: the mark travels
    if marked and format != "hyperlex":           # a last column "simulated", True
        columns = [*columns, SIMULATED]
        rows = [[*row, "True"] for row in rows]
    if format == "simlex":
        return _join(["\t".join(columns)], rows, "\t", gold, end="\r\n")
    if format == "tr9856":
        return _join(["#" + "\t".join(columns)], rows, "\t", gold)
    rows = [[field or "NA" for field in fields] + str(scores).split()
            for fields, scores in zip(rows, gold["SCORES.."])]
    return _join([COMMENT] * marked + [" ".join(HYPERLEX_COLUMNS)], rows, " ", gold)


def plain_table(gold: pd.DataFrame, *, decimals: int = 2, number_format: str = "",
                score_format: str = "") -> pd.DataFrame:
    """The plain release (``word1, word2, score``: ``gold.csv`` of ``format = "plain"`` and of
    Best-Worst Scaling) with its score printed as ``score_format`` (else ``number_format``,
    else ``shortest``, the form pandas writes a float in).

    >>> plain_table(pd.DataFrame({"word1": ["a"], "word2": ["b"], "score": [7.5]}),
    ...             score_format="fixed")["score"].tolist()
    ['7.50']
    """
    form = score_format or number_format or NUMBER_FORMATS["plain"][1]
    return gold.assign(score=[_number_text(v, decimals, form) for v in gold["score"]])


def write_release(gold: pd.DataFrame, format: str, path: str | Path, *, decimals: int = 2,
                  number_format: str = "", score_format: str = "") -> Path:
    """Write :func:`release_text` to ``path`` (UTF-8; the layout's line ends)."""
    path = Path(path)
    path.write_bytes(release_text(gold, format, decimals=decimals, number_format=number_format,
                                  score_format=score_format).encode("utf-8"))
    return path


def round_half_up(values, decimals: int = 2):
    """Round half up (away from zero) on the decimal value, as the published files print.

    The value is first read as the decimal it stands for (its shortest repr, cut to 9 decimals,
    so that a mean such as 49 / 8 = 6.125 or a float sum's last-bit error does not decide), then
    rounded to ``decimals`` with :data:`decimal.ROUND_HALF_UP`. numpy and ``round()`` round the
    binary value half to even (6.125 -> 6.12): 17 of the 352 WordSim-353 means regenerated that
    way are 0.01 off the published ones.

    Parameters
    ----------
    values : float or pandas.Series
    decimals : int

    Returns
    -------
    float or pandas.Series
        Same shape; NaN stays NaN.

    Examples
    --------
    >>> round_half_up(6.125), round_half_up(0.145), round_half_up(-2.675), round(6.125, 2)
    (6.13, 0.15, -2.68, 6.12)
    >>> round_half_up(pd.Series([1.005, None, 2.0])).tolist()
    [1.01, nan, 2.0]
    """
    return _on_decimal_value(values, decimals, ROUND_HALF_UP)


def round_half_even(values, decimals: int = 2):
    """Round half to even on the decimal value (8.625 -> 8.62, 8.635 -> 8.64), as the Stanford
    Rare Words set prints its scores; the decimal value is read as :func:`round_half_up` reads
    it, so a float sum's last-bit error does not decide (numpy's half to even acts on the
    binary value: ``np.round(8.635, 2)`` is 8.63).

    Examples
    --------
    >>> round_half_even(8.625), round_half_even(8.635), round_half_even(-2.675), round(8.635, 2)
    (8.62, 8.64, -2.68, 8.63)
    >>> round_half_even(pd.Series([0.125, None, 2.0])).tolist()
    [0.12, nan, 2.0]
    """
    return _on_decimal_value(values, decimals, ROUND_HALF_EVEN)


def _on_decimal_value(values, decimals: int, mode: str):
    if isinstance(values, pd.Series):
        return values.map(lambda v: _round_decimal(v, decimals, mode)).astype(float)
    return _round_decimal(values, decimals, mode)


def _round_decimal(value, decimals: int, mode: str) -> float:
    if value is None or value is pd.NA or not np.isfinite(float(value)):
        return np.nan
    exact = Decimal(repr(float(value))).quantize(Decimal(1).scaleb(-9), ROUND_HALF_EVEN)
    return float(exact.quantize(Decimal(1).scaleb(-decimals), mode))


def _rating_text(value) -> str:
    """A rating of HyperLex's SCORES: an integer as such (``5``), else its shortest form."""
    value = float(value)
    return str(int(value)) if value.is_integer() else repr(value)


def _number_text(value, decimals: int, form: str) -> str:
    """A field in ``form``: ``fixed`` (exactly ``decimals`` decimals, ``5.20``), ``trimmed``
    (:func:`_text`) or ``shortest`` (the float's shortest repr, ``7.5``, ``10.0``); integers
    as such, NaN empty."""
    if isinstance(value, (float, np.floating)) and form != "trimmed":
        if np.isnan(value):
            return ""
        return f"{float(value):.{decimals}f}" if form == "fixed" else repr(float(value))
    return _text(value, decimals)


def _text(value, decimals: int) -> str:
    """A field: numbers with at most ``decimals`` decimals and no trailing zeros; NaN empty."""
    if value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value)):
        return ""
    if isinstance(value, (bool, np.bool_)):
        return str(int(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        text = f"{float(value):.{decimals}f}"
        text = text.rstrip("0").rstrip(".") if "." in text else text
        return "0" if text in ("-0", "") else text
    return str(value)


def _join(header: list[str], rows: list[list[str]], delimiter: str, gold: pd.DataFrame,
          end: str = "\n") -> str:
    for number, fields in enumerate(rows):
        for field in fields:
            if "\t" in field or "\n" in field or (delimiter == " " and not field.strip()) or (
                    delimiter == " " and len(field.split()) != 1):
                raise InputError(f"{field!r} cannot be written in this layout (it holds the "
                                 f"delimiter)", line=number + 2, field="release")
    return "".join(line + end for line in header + [delimiter.join(f) for f in rows])


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
