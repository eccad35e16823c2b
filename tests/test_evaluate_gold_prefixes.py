"""Gold files read as published (issue 36): cross-lingual HyperLex's language prefixes
(``en_dog de_tier``) stripped by rule, and pairs listed twice warned (how many, the first line)
and handled by a stated policy (first, mean, error).

The files below are small hand-made files in the published layouts; every expected score and
count is worked out by hand in the comments.
"""

import warnings

import pytest
from click.testing import CliRunner

from lexgold.cli import cli
from lexgold.errors import InputError
from lexgold.evaluate.gold import DuplicatePairWarning, read_gold
from lexgold.pairfiles import read_pair_table

#: word1 word2 pos score, cross-lingual HyperLex's words with their language first
CROSS = "en_dog de_tier N 5.5\nen_car de_fahrzeug N 5.0\nen_run de_bewegen V 4.0\n"
#: the vectors know the words without prefixes
VECTORS = ("dog 1 0 0\ntier 0.9 0.1 0\ncar 0 1 0\nfahrzeug 0.1 0.9 0.2\nrun 0 0 1\n"
           "bewegen 0.3 0.2 0.8\n")
#: SimVerb-3500's layout (no header) with its second row listed again on line 4
SIMVERB = ("take remove V 6.81 SYNONYMS\nwalk trail V 4.81 COHYPONYMS\n"
           "feed starve V 1.49 ANTONYMS\nwalk trail V 3.00 COHYPONYMS\n")


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.fixture
def files(tmp_path):
    (tmp_path / "en_de.txt").write_text(CROSS, encoding="utf-8")
    (tmp_path / "vec.txt").write_text(VECTORS, encoding="utf-8")
    (tmp_path / "simverb.txt").write_text(SIMVERB, encoding="utf-8")
    return tmp_path


def test_language_prefixes_are_stripped_when_every_word_has_one(files):
    gold = read_gold(files / "en_de.txt")
    assert gold["word1"].tolist() == ["dog", "car", "run"]
    assert gold["word2"].tolist() == ["tier", "fahrzeug", "bewegen"]
    assert set(gold["lang1"]) == {"en"} and set(gold["lang2"]) == {"de"}
    assert "language prefixes en_, de_ stripped from 6 words" in gold.attrs["notes"][0]
    kept = read_gold(files / "en_de.txt", strip_language_prefix=False)
    assert kept["word1"].tolist() == ["en_dog", "en_car", "en_run"]


def test_prefixes_are_not_stripped_unless_every_word_has_one(tmp_path):
    path = tmp_path / "verbs.txt"
    path.write_text("to_go walk 3.5\nto_run move 4.5\nstay leave 1.0\n", encoding="utf-8")
    assert read_gold(path)["word1"].tolist() == ["to_go", "to_run", "stay"]
    with pytest.raises(InputError) as err:
        read_gold(path, strip_language_prefix=True)
    assert str(err.value).startswith(f"{path}:1: --strip-language-prefix: 'to_go' / 'walk' "
                                     "has no language prefix")


def test_evaluate_covers_prefixed_pairs_and_the_hint_names_prefixes(files):
    result = run("evaluate", "--gold", files / "en_de.txt", "--vectors", files / "vec.txt",
                 "--bootstrap", 0)
    assert result.exit_code == 0, result.output
    assert "pairs 3, covered 3, used 3" in result.output
    kept = run("evaluate", "--gold", files / "en_de.txt", "--vectors", files / "vec.txt",
               "--keep-language-prefix", "--bootstrap", 0)
    assert kept.exit_code == 1
    assert "no pair covered" in kept.output
    assert "language prefixes such as 'en_': --strip-language-prefix" in kept.output


def test_crosslingual_and_translate_reader_strips_prefixes(tmp_path):
    path = tmp_path / "en_de.txt"
    path.write_text("WORD1 WORD2 POS AVG\n" + CROSS, encoding="utf-8")
    table = read_pair_table(path)
    assert table["WORD1"].tolist() == ["dog", "car", "run"]
    assert table["lang2"].tolist() == ["de", "de", "de"]


def test_a_pair_listed_twice_is_warned_and_kept_once(files):
    with pytest.warns(DuplicatePairWarning, match=r"1 row repeats an earlier pair \(the first: "
                      r"line 4, 'walk' / 'trail'\); the first row of each kept"):
        gold = read_gold(files / "simverb.txt")
    assert len(gold) == 3
    assert gold.loc[gold["word1"] == "walk", "score"].tolist() == [4.81]


def test_duplicate_policy_mean_and_error(files):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DuplicatePairWarning)
        gold = read_gold(files / "simverb.txt", duplicates="mean")
    # (4.81 + 3.00) / 2 = 3.905
    assert gold.loc[gold["word1"] == "walk", "score"].tolist() == [pytest.approx(3.905)]
    assert gold["word1"].tolist() == ["take", "walk", "feed"]
    with pytest.raises(InputError) as err:
        read_gold(files / "simverb.txt", duplicates="error")
    assert str(err.value).startswith(f"{files / 'simverb.txt'}:4: pair 'walk' / 'trail' "
                                     "listed again (1 repeated row")


def test_evaluate_counts_a_repeated_pair_once_and_says_so(files):
    (files / "vec.txt").write_text(
        "take 1 0\nremove 0.8 0.3\nwalk 0.5 0.5\ntrail 0.6 0.4\nfeed 0 1\nstarve 1 0.1\n",
        encoding="utf-8")
    result = run("evaluate", "--gold", files / "simverb.txt", "--vectors", files / "vec.txt",
                 "--bootstrap", 0)
    assert result.exit_code == 0, result.output
    assert "pairs 3, covered 3" in result.output
    assert "1 row repeats an earlier pair (the first: line 4" in result.output
    stopped = run("evaluate", "--gold", files / "simverb.txt", "--vectors", files / "vec.txt",
                  "--duplicates", "error")
    assert stopped.exit_code == 1
    assert "simverb.txt:4: pair 'walk' / 'trail' listed again" in stopped.output
