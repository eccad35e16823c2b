"""Multi-SimLex words as Concepticon's lists write them (issue 36): alternatives ``x/y`` under a
stated policy (first, each, skip; counted), multi-word forms, parenthesised parts, and all 12
languages read as pairs (66 cross-lingual sets).

No real excerpt of Vulic-2020-2244.tsv was available to this repository: the rows below are
hand-made in the file's layout (only the columns the reader uses), each case named where it is
written; ``tests/data/multisimlex_concepticon_sample.tsv`` is made up too (its SOURCE note).
"""

import json
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from lexgold.cli import cli
from lexgold.errors import InputError
from lexgold.evaluate.gold import read_gold
from lexgold.evaluate.multisimlex import LANGUAGES, split_words
from lexgold.pairfiles import read_pair_table

SAMPLE = Path(__file__).parent / "data" / "multisimlex_concepticon_sample.tsv"
HEADER = ["SIMLEX_IDS", "POS", "ENGLISH", "ENGLISH_IN_SOURCE", "ENGLISH_SCORE", "FRENCH",
          "FRENCH_IN_SOURCE", "FRENCH_SCORE"]
ROWS = [
    # pair 1 word1 and pair 2 word1: alternatives x/y, the list one entry per id
    ["1:1 2:1", "adjectives", "hot", "hot hot", "0.5 3.0", "chaud/chaude", "chaud/chaude "
     "chaud/chaude", "0.6 2.5"],
    ["1:2", "adjectives", "cold", "cold", "0.5", "froid", "froid", "0.6"],
    # a word of three words with a parenthesised part, twice: pairs 2 (word2) and 3 (word1)
    ["2:2 3:1", "nouns", "potato", "potato potato", "3.0 4.0", "pomme de terre (tubercule)",
     "pomme de terre (tubercule) pomme de terre (tubercule)", "2.5 4.5"],
    ["3:2", "nouns", "vegetable", "vegetable", "4.0", "légume", "légume", "4.5"],
]


def write(path, rows):
    path.write_text("\t".join(HEADER) + "\n" + "".join("\t".join(r) + "\n" for r in rows),
                    encoding="utf-8")
    return path


@pytest.fixture
def concepts(tmp_path):
    return write(tmp_path / "Vulic-2020-2244.tsv", ROWS)


def test_alternatives_first_by_default_and_counted(concepts):
    gold = read_gold(concepts, language="fr")
    assert gold[["pair_id", "word1", "word2"]].values.tolist() == [
        ["1", "chaud", "froid"], ["2", "chaud", "pomme de terre"],
        ["3", "pomme de terre", "légume"]]
    assert gold["score"].tolist() == [0.6, 2.5, 4.5]
    notes = gold.attrs["notes"]
    assert "FRENCH: 2 pairs with a parenthesised part dropped from a word" in notes
    assert ("FRENCH: 2 pairs with alternatives (x/y): the first alternative kept "
            "(--alternatives first)") in notes


def test_alternatives_each_and_skip(concepts):
    each = read_gold(concepts, language="fr", alternatives="each")
    assert each[["pair_id", "word1", "word2"]].values.tolist() == [
        ["1", "chaud", "froid"], ["1", "chaude", "froid"], ["2", "chaud", "pomme de terre"],
        ["2", "chaude", "pomme de terre"], ["3", "pomme de terre", "légume"]]
    assert "a pair for every combination (2 pairs added)" in " ".join(each.attrs["notes"])
    skip = read_gold(concepts, language="fr", alternatives="skip")
    assert skip["pair_id"].tolist() == ["3"]
    english = read_gold(concepts)
    assert english["word1"].tolist() == ["hot", "hot", "potato"] and not english.attrs["notes"]


def test_a_list_with_no_single_best_split_names_its_line(tmp_path):
    rows = ROWS[:2] + [["2:2 3:1", "nouns", "potato", "potato potato", "3.0 4.0", "patate",
                        "pomme de terre tubercule", "2.5 4.5"], ROWS[3]]
    with pytest.raises(InputError) as err:
        read_gold(write(tmp_path / "bad.tsv", rows), language="fr")
    assert str(err.value).startswith(f"{tmp_path / 'bad.tsv'}:4, field 'FRENCH_IN_SOURCE': "
                                     "cannot split 'pomme de terre tubercule' into 2 words")


@pytest.mark.parametrize("text,n,spellings,words", [
    ("antaa lupa antaa lupa", 2, "antaa lupa", ["antaa lupa", "antaa lupa"]),
    ("heaks kiitma lubama", 2, "heaks kiitma (lubama)", ["heaks kiitma", "lubama"]),
    ("pojawić się/ukazać się stać się", 2, "pojawić się/ukazać się", ["pojawić się/ukazać się",
                                                                      "stać się"]),
    ("кот (кошка) кот", 2, "кот", ["кот (кошка)", "кот"]),
    ("محرّك كهربائي محرّك كهربائي", 2, "محرّك كهربائي (محرك)", ["محرّك كهربائي", "محرّك كهربائي"]),
    ("לשמוח/להתמוגג לשמוח/להתמוגג", 2, "לשמוח/להתמוגג", ["לשמוח/להתמוגג", "לשמוח/להתמוגג"]),
])
def test_split_words_across_scripts(text, n, spellings, words):
    """Hand-made lists in Latin, Cyrillic, Arabic and Hebrew script: multi-word forms,
    alternatives with spaces, parenthesised parts."""
    assert split_words(text, n, spellings)[0] == words


def test_evaluate_language_option_with_alternatives(concepts, tmp_path):
    vectors = tmp_path / "v.txt"
    vectors.write_text("chaud 1 0\nchaude 0.9 0.2\nfroid -1 0.1\nlégume 0.2 1\n"
                       "pomme_de_terre 0.3 0.9\n", encoding="utf-8")
    out = CliRunner().invoke(cli, ["evaluate", "--gold", str(concepts), "--language", "fr",
                                   "--alternatives", "each", "--vectors", str(vectors),
                                   "--json", "--bootstrap", "0"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["pairs"] == 5
    assert "Note: " in out.output and "2 pairs added" in out.output


def test_all_twelve_languages_and_the_66_crosslingual_sets(tmp_path):
    for code in LANGUAGES:
        table = read_pair_table(SAMPLE, language=code)
        assert len(table) == 9, code
    gold = [f"--gold={code}={SAMPLE}" for code in LANGUAGES]
    out = CliRunner().invoke(cli, ["crosslingual", *gold, "--scale", "0", "6", "--out",
                                   str(tmp_path)])
    assert out.exit_code == 0, out.output
    sets = sorted(p.name for p in tmp_path.glob("*-*.csv"))
    assert len(sets) == 66 and "ar-he.csv" in sets and "zh-yue.csv" in sets
    pairs = pd.read_csv(tmp_path / "fr-pl.csv")
    assert {"word1", "word2", "score"} <= set(pairs.columns) and len(pairs) > 0
