"""Released gold-standard files handed to ``lexgold ratings import``.

A released file holds scores computed from ratings (means, fractions of annotators), not the
ratings themselves, with one exception:

- HyperLex's ``hyperlex-all.txt`` (Vulic et al. 2017; and lexgold's own HyperLex release) ends
  each row in the pair's ratings: ``WORD1 WORD2 POS TYPE AVG_SCORE AVG_SCORE_0_10 STD
  SCORES..``, fields separated by one space, 7-14 integer ratings on 0-6 per published row.
  It is the only public copy of HyperLex's raw ratings; :func:`read_hyperlex` reads them as
  ratings without rater identity (the release does not say who gave which rating), keeping
  POS and TYPE as the pair attributes ``pos`` and ``relation``, so that ``lexgold process
  --protocol hyperlex`` regenerates the file.
- Every other released layout (TR9856's ``TermRelatednessResults`` with scores that are the
  fraction of annotators who said "related", lexgold's ``TR9856.txt``, SimLex-999.txt,
  WordSim-353's ``combined.csv``) is recognised from its header and refused as ratings by
  :func:`released_scores`, with a message saying what it is; a headerless copy of TR9856's
  scores by its numbers (:func:`fraction_scores`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from lexgold.errors import InputError
from lexgold.ratings import ANONYMOUS
from lexgold.ratings.lines import (Cleaner, Imported, column_name, printed_decimals,
                                   read_lines, read_rating, records_frame, read_words,
                                   to_number)

HYPERLEX_HEADER = ("WORD1", "WORD2", "POS", "TYPE", "AVG_SCORE", "AVG_SCORE_0_10", "STD",
                   "SCORES..")
#: hyperlex-all.txt's header, as the names :func:`lexgold.ratings.lines.column_name` makes of it
HYPERLEX_NAMES = ("word1", "word2", "pos", "type", "avgscore", "avgscore010", "std", "scores")
#: header names of released scores and pair attributes (normalised): a header that names the
#: two word columns and then only these is a released gold standard, not ratings
_RELEASED_NAMES = {"score", "scores", "humanmean", "mean", "avg", "avgscore", "avgscore010",
                   "std", "sd", "simlex999", "sdsimlex", "concw1", "concw2", "concq", "assocusf",
                   "simassoc333", "topic", "pos", "type", "relation", "similarity",
                   "relatedness"}


def is_hyperlex(names: list[str]) -> bool:
    """Whether a normalised header is hyperlex-all.txt's."""
    return tuple(names[:len(HYPERLEX_NAMES)]) == HYPERLEX_NAMES


def released_scores(names: list[str], word_columns) -> str | None:
    """What a header of released scores is (a sentence), or None when it may hold ratings.

    ``names`` are the normalised header names; ``word_columns`` the accepted names of the two
    word columns.

    Examples
    --------
    >>> released_scores(["term1", "term2", "score", "topic"], [("term1", "term2")])[:31]
    "TR9856's released scores (TermR"
    >>> released_scores(["word1", "word2", "1", "2"], [("word1", "word2")]) is None
    True
    >>> released_scores(["word1", "word2", "pos", "relation"], [("word1", "word2")])[:15]
    'a list of pairs'
    """
    rest = names[2:]
    if tuple(names[:2]) not in word_columns or not rest or not set(rest) <= _RELEASED_NAMES:
        return None
    if names[:2] == ["term1", "term2"] and "score" in rest:
        return ("TR9856's released scores (TermRelatednessResults, or lexgold's TR9856.txt): "
                "'score' is the fraction of a pair's annotators who said \"related\", not a "
                "rating, and TR9856's individual labels were not published; use the file as a "
                "gold standard (lexgold evaluate --gold FILE), not as ratings")
    if set(rest) <= {"pos", "type", "relation", "topic"}:
        return (f"a list of pairs (columns {', '.join(rest)}) with no ratings in it: import "
                f"the ratings, and pass the pairs to lexgold process with --pairs")
    hint = ("; if it is one rater's ratings (simcross's copies of MEN's agreement files head "
            "theirs 'word1 word2 score'), pass --layout per-rater") if rest == ["score"] else ""
    return (f"a released gold standard (columns {', '.join(rest)}): its scores summarise "
            f"ratings that the file does not hold; use it as a gold standard (lexgold evaluate "
            f"--gold FILE), not as ratings{hint}")


def fraction_scores(fields: list[list[str]]) -> str | None:
    """What a headerless ``word1 word2 number ...`` file is when its numbers look like TR9856's
    released scores (every one within 0-1, some fractional: the share of a pair's annotators
    who said "related"), else None. ``fields`` are the split lines.

    Examples
    --------
    >>> fraction_scores([["stem cell", "embryo", "0.9"], ["tax", "moon", "0.1"]])[:42]
    "TR9856's released scores (every score 0-1,"
    >>> fraction_scores([["sun", "sunlight", "7"], ["car", "tree", "1"]]) is None
    True
    """
    values = [to_number(f[2]) if len(f) > 2 else None for f in fields]
    if not values or any(v is None or not 0 <= v <= 1 for v in values) \
            or all(float(v).is_integer() for v in values):
        return None
    return ("TR9856's released scores (every score 0-1, fractional: the share of a pair's "
            "annotators who said \"related\"), not one rater's ratings; use the file as a gold "
            "standard (lexgold evaluate --gold FILE), or pass --layout per-rater if these are "
            "one rater's ratings on a 0-1 scale")


def read_hyperlex(path: Path):
    """hyperlex-all.txt as long-format ratings without rater identity.

    Every rating of ``SCORES..`` gets its own rater id ``?<file stem>:<line>:<k>`` (line and
    position zero-padded, so that rater-id order is file order and ``process`` lists them
    back in the same order); tranche = file stem; ``pos`` = POS and ``relation`` = TYPE
    (``NA`` read as empty). The notes say whether AVG_SCORE is the mean of the listed ratings
    and STD their population SD (to the printed decimals).

    Raises
    ------
    InputError
        A row with fewer than 8 fields or a rating that is not a number, naming file and line.
    """
    cleaner = Cleaner()
    lines = read_lines(path, cleaner)
    header = cleaner.fields(lines[0][1], None) if lines else []
    if not is_hyperlex([column_name(h) for h in header]):
        raise InputError(f"expected the header of hyperlex-all.txt ({' '.join(HYPERLEX_HEADER)}),"
                         f" found {' '.join(header[:8])!r}", path=path,
                         line=lines[0][0] if lines else 1)
    rows = [(number, cleaner.fields(line, None)) for number, line in lines[1:]]
    for number, fields in rows:
        if len(fields) < 8:
            raise InputError(f"expected WORD1 WORD2 POS TYPE AVG_SCORE AVG_SCORE_0_10 STD and "
                             f"at least one rating, found {len(fields)} fields", path=path,
                             line=number)
    width = len(str(max((n for n, _ in rows), default=1)))
    places = len(str(max((len(f) - 7 for _, f in rows), default=1)))
    records, attributes, checks = [], [], []
    for number, fields in rows:
        word1, word2 = read_words(fields, path, number)
        pos, relation = ("" if f == "NA" else f for f in fields[2:4])
        values = [read_rating(text, path, number, f"SCORES.. {k}")
                  for k, text in enumerate(fields[7:], start=1)]
        for k, value in enumerate(values, start=1):
            records.append((f"{ANONYMOUS}{path.stem}:{number:0{width}d}:{k:0{places}d}",
                            path.stem, word1, word2, value, number, f"SCORES.. {k}"))
            attributes.append((pos, relation))
        checks.append((_printed(fields[4], np.mean(values)),
                       _printed(fields[6], np.std(values))))
    frame = records_frame(records)
    frame["pos"] = [a[0] for a in attributes]
    frame["relation"] = [a[1] for a in attributes]
    mean_ok, sd_ok = (sum(c[0] for c in checks), sum(c[1] for c in checks))
    anonymous = ("SCORES.. are not attributed to raters: kept as anonymous ratings (rater ids "
                 "'?...'); POS and TYPE kept as columns pos and relation")
    checked = (f"AVG_SCORE is the mean of SCORES on {mean_ok} of {len(rows)} rows, STD their "
               f"population SD on {sd_ok} of {len(rows)} rows (to the printed decimals)")
    notes = [*cleaner.notes(), anonymous, checked]
    return Imported(path, "hyperlex", frame, notes)


def _printed(text: str, value: float) -> bool:
    """Whether ``text`` is ``value`` to its printed decimals."""
    number = to_number(text)
    return number is not None and abs(number - value) <= 0.5 * 10 ** -printed_decimals(text) + 1e-9
