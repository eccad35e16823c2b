"""The human check of sampled HyperLex pairs (Vulic et al. 2017, section 4.2, steps 1 and 2).

"All sampled pairs were manually checked [...] in several iterations. Only such sampled pairs
where the majority of human checkers agreed on the lexical relation were retained. If a pair
was discarded, another substitute pair was randomly sampled if available, and again verified."

How lexgold runs it (HyperLex section 4.2):

1. ``lexgold build hyperlex`` draws pairs and writes a checking sheet ``check-round-1.csv``.
2. Each checker fills a copy of the sheet in a spreadsheet: ``agree`` = yes / no (blank =
   not judged yet) and ``checker`` = their name (blank: the sheet's file name is used).
3. ``lexgold build hyperlex --checked alice.csv --checked bob.csv ...`` (same seed and
   protocol) records the verdicts in ``checks.csv`` in the output folder, keeps the pairs a
   strict majority agreed with once ``min_checkers`` checkers judged them, replaces rejected
   pairs by the next random pair of their pool and writes ``check-round-2.csv`` for the pairs
   still to judge; and so on until every quota is met or its pool is exhausted.

Sheet columns (:data:`SHEET_COLUMNS`): round, step, word1, word2, pos, relation, question,
votes_so_far, agree, checker, comment. Only the last three are filled in by a checker.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from lexgold.errors import InputError
from lexgold.tables import normal_word, read_text_table, word_problem

SHEET_COLUMNS = ["round", "step", "word1", "word2", "pos", "relation", "question",
                 "votes_so_far", "agree", "checker", "comment"]
KEY = ["word1", "word2", "pos", "relation"]
VERDICT_COLUMNS = KEY + ["checker", "agree", "round", "source"]
YES = {"yes", "y", "1", "true", "agree", "x"}
NO = {"no", "n", "0", "false", "disagree"}


def checker_statement(word1: str, word2: str, pos: str, relation: str) -> str:
    """The statement a checker agrees or disagrees with, in plain words (verbs as "to X")."""
    x, y = (f"to {word1}", f"to {word2}") if pos == "V" else (word1, word2)
    if relation.startswith("hyp-"):
        return f"'{x}' is a type of '{y}'"
    if relation.startswith("rhyp-"):
        return f"'{y}' is a type of '{x}'"
    return {
        "syn": f"'{x}' and '{y}' mean the same (synonyms)",
        "ant": f"'{x}' and '{y}' are opposites (antonyms)",
        "mero": f"'{x}' is a part of '{y}'",
        "cohyp": f"'{x}' and '{y}' are two kinds of the same thing",
        "no-rel": f"'{x}' and '{y}' are not related in meaning",
    }[relation]


def read_sheets(paths, known=None) -> pd.DataFrame:
    """Verdicts from filled checking sheets: one row per judged (pair, checker).

    Parameters
    ----------
    paths : iterable of paths
        Filled sheets (columns as :data:`SHEET_COLUMNS`; extra columns are ignored).
    known : callable, optional
        ``known(word1, word2, pos, relation) -> bool``; a row for a pair this build never drew
        raises :class:`InputError`.

    Raises
    ------
    InputError
        Naming file, line and field: missing column, an ``agree`` value that is neither yes
        nor no, an unknown pair, or one checker judging one pair twice in different ways.
    """
    frames = []
    for path in paths:
        frames.append(_read_sheet(Path(path), known))
    if not frames:
        return pd.DataFrame(columns=VERDICT_COLUMNS)
    return merge_verdicts(pd.DataFrame(columns=VERDICT_COLUMNS), pd.concat(frames, ignore_index=True))


def _read_sheet(path: Path, known) -> pd.DataFrame:
    sheet = read_text_table(path)
    sheet.columns = [c.lower() for c in sheet.columns]
    for column in KEY + ["agree"]:
        if column not in sheet.columns:
            raise InputError("missing column of a checking sheet", path=path, line=1, field=column)
    rows = []
    for i, row in enumerate(sheet.itertuples(index=False)):
        line = i + 2
        answer = str(row.agree).strip().lower()
        if answer == "":
            continue
        if answer not in YES | NO:
            raise InputError(f"expected yes or no, found {row.agree!r}", path=path, line=line,
                             field="agree")
        word1, word2 = str(row.word1).strip().lower(), str(row.word2).strip().lower()
        for field, word in (("word1", word1), ("word2", word2)):
            if problem := word_problem(word):
                raise InputError(problem, path=path, line=line, field=field)
        word1, word2 = normal_word(word1), normal_word(word2)
        pos, relation = str(row.pos).strip().upper(), str(row.relation).strip()
        if known is not None and not known(word1, word2, pos, relation):
            raise InputError(f"{word1} / {word2} ({pos}, {relation}) is not a pair this build "
                             "drew (same protocol and seed?)", path=path, line=line)
        checker = str(getattr(row, "checker", "")).strip() or path.stem
        round_ = str(getattr(row, "round", "")).strip()
        rows.append({"word1": word1, "word2": word2, "pos": pos, "relation": relation,
                     "checker": checker, "agree": answer in YES,
                     "round": int(round_) if round_.isdigit() else 0,
                     "source": f"{path.name}:{line}"})
    return pd.DataFrame(rows, columns=VERDICT_COLUMNS)


def merge_verdicts(old: pd.DataFrame, new: pd.DataFrame) -> pd.DataFrame:
    """Add ``new`` verdicts to ``old``; the same verdict again is ignored, a changed one is an error."""
    merged = pd.concat([old, new], ignore_index=True) if len(old) else new.reset_index(drop=True)
    merged["agree"] = merged["agree"].map(_as_bool)
    first = merged.drop_duplicates(KEY + ["checker"], keep="first")
    conflict = merged.merge(first[KEY + ["checker", "agree", "source"]], on=KEY + ["checker"],
                            suffixes=("", "_first"))
    conflict = conflict[conflict["agree"] != conflict["agree_first"]]
    if len(conflict):
        row = conflict.iloc[0]
        raise InputError(f"{row['checker']} judged {row['word1']} / {row['word2']} "
                         f"({row['relation']}) both ways (also at {row['source_first']})",
                         path=row["source"].rsplit(":", 1)[0], line=int(row["source"].rsplit(":", 1)[1]),
                         field="agree")
    return first.sort_values(KEY + ["checker"]).reset_index(drop=True)


def _as_bool(value) -> bool:
    return value if isinstance(value, bool) else str(value).strip().lower() in YES


def read_verdict_log(path: Path) -> pd.DataFrame:
    """The verdicts recorded by earlier runs (``checks.csv``), or none."""
    if not path.is_file():
        return pd.DataFrame(columns=VERDICT_COLUMNS)
    frame = read_text_table(path)
    missing = [c for c in VERDICT_COLUMNS if c not in frame.columns]
    if missing:
        raise InputError("not a lexgold verdict log", path=path, line=1, field=missing[0])
    frame["agree"] = frame["agree"].map(_as_bool)
    frame["round"] = pd.to_numeric(frame["round"], errors="coerce").fillna(0).astype(int)
    return frame[VERDICT_COLUMNS]


def tally_verdicts(verdicts: pd.DataFrame, min_checkers: int) -> dict[tuple, str]:
    """Pair key -> ``accepted`` / ``rejected`` once ``min_checkers`` checkers judged it.

    Accepted when a strict majority agreed with the relation (a tie rejects the pair).
    Pairs with fewer verdicts are absent (still to check).
    """
    if not len(verdicts):
        return {}
    counts = verdicts.groupby(KEY)["agree"].agg(["sum", "count"])
    decided = counts[counts["count"] >= min_checkers]
    return {key: ("accepted" if 2 * row["sum"] > row["count"] else "rejected")
            for key, row in decided.iterrows()}


def votes(verdicts: pd.DataFrame) -> dict[tuple, tuple[int, int]]:
    """Pair key -> (agreeing checkers, checkers)."""
    if not len(verdicts):
        return {}
    counts = verdicts.groupby(KEY)["agree"].agg(["sum", "count"])
    return {key: (int(row["sum"]), int(row["count"])) for key, row in counts.iterrows()}


def sheet(pending: pd.DataFrame, round_: int, tallies: dict[tuple, tuple[int, int]]) -> pd.DataFrame:
    """The checking sheet for the pairs still to judge (columns :data:`SHEET_COLUMNS`)."""
    rows = []
    for r in pending.itertuples(index=False):
        agree, total = tallies.get((r.word1, r.word2, r.pos, r.relation), (0, 0))
        rows.append({"round": round_, "step": r.step, "word1": r.word1, "word2": r.word2,
                     "pos": r.pos, "relation": r.relation,
                     "question": checker_statement(r.word1, r.word2, r.pos, r.relation),
                     "votes_so_far": f"{agree} of {total} agree" if total else "",
                     "agree": "", "checker": "", "comment": ""})
    return pd.DataFrame(rows, columns=SHEET_COLUMNS)
