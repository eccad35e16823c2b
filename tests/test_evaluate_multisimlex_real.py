"""Multi-SimLex's word lists on real cells of Concepticon's concept list (issue 36 item 2):
multi-word forms, glosses and variants in parentheses, in five scripts
(tests/data/multisimlex_real_cells.tsv, its source in tests/data/SOURCE.md).

A concept row gives, per language, the word column (``наставник (учитель)``) and the word as
each of its pairs' sources spelled it, space-separated (``наставник наставник наставник
учитель учитель``); :func:`split_words` must cut that list into one word per pair, each of them
a spelling the word column gives.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from lexgold.evaluate.multisimlex import _GLOSS, split_words

CELLS = pd.read_csv(Path(__file__).parent / "data" / "multisimlex_real_cells.tsv", sep="\t",
                    dtype=str, keep_default_na=False)


def spellings(word_column: str) -> set[str]:
    """The spellings a word column gives: outside and inside its parentheses."""
    return {part.strip() for part in re.split(r"[()]", word_column) if part.strip()}


@pytest.mark.parametrize("row", list(CELLS.itertuples(index=False)),
                         ids=[f"{r.line}-{r.column}" for r in CELLS.itertuples()])
def test_every_real_list_splits_into_one_spelling_per_pair(row):
    words, _ = split_words(row.in_source, int(row.ids), row.word, line=int(row.line),
                           field=f"{row.column}_IN_SOURCE")
    assert len(words) == int(row.ids)
    assert {_GLOSS.sub("", w).strip() for w in words} <= spellings(row.word)
    assert " ".join(words).split() == row.in_source.split()      # nothing lost or added


def test_hand_read_splits():
    """What a reader of the concept list sees, written out by hand."""
    def split(line, column):
        row = CELLS[(CELLS["line"] == str(line)) & (CELLS["column"] == column)].iloc[0]
        return split_words(row.in_source, int(row.ids), row.word)[0]

    assert split(14, "RUSSIAN") == ["наставник"] * 3 + ["учитель"] * 2
    assert split(30, "ARABIC") == ["محرك", "محرّك كهربائي"]
    assert split(31, "ESTONIAN") == ["süüa tegema", "küpsetama", "süüa tegema"]
    assert split(24, "POLISH") == ["pojawić się"] * 3
    assert split(799, "WELSH") == ["asgwrn cefn"] * 2
    assert split(22, "HEBREW") == ["בית משפט"]
    assert split(813, "CHINESE") == ["神职人员", "牧师", "牧师"]
