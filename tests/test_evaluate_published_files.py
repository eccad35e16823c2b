"""Issue 23: gold files as their authors distribute them, read exactly (Unicode spaces, the
simcross copies' space-separated header over TAB rows, MEN lemma forms), files that are not
pair lists refused, and one bad gold file not stopping the others."""

import json
from pathlib import Path

import gensim
import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from scipy import stats

from lexgold.cli import cli
from lexgold.errors import InputError
from lexgold.evaluate.gold import read_gold
from lexgold.tables import UNICODE_SPACES, normalise_spaces

DATA = Path(gensim.__file__).parent / "test" / "test_data"
WORDS = ["gatto", "animale", "correre", "muoversi", "sole", "luna", "cane", "anno", "domini",
         "tempo", "sun", "sunlight", "car", "automobile", "cat", "kitten"]


@pytest.fixture(scope="module")
def vectors(tmp_path_factory):
    """A word2vec text file of WORDS with seeded random vectors."""
    rng = np.random.default_rng(3)
    matrix = rng.normal(size=(len(WORDS), 8))
    path = tmp_path_factory.mktemp("vec") / "tiny.vec"
    lines = [f"{len(WORDS)} 8"] + [w + " " + " ".join(f"{v:.6f}" for v in row)
                                   for w, row in zip(WORDS, matrix)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path, dict(zip(WORDS, matrix))


def cosine(table, a, b):
    x, y = table[a], table[b]
    return float(x @ y / np.linalg.norm(x) / np.linalg.norm(y))


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def hyperlex_it(path: Path):
    """HyperLex's Italian file layout (``word1 word2 pos avg``, spaces), one word holding a
    no-break space as in the distributed file."""
    path.write_bytes(b"word1 word2 pos avg\n"
                     b"gatto animale N 5.5\n"
                     b"anno\xc2\xa0domini tempo N 3.0\n"
                     b"correre muoversi V 4.25\n"
                     b"sole luna N 1.5\n")
    return path


def test_unicode_spaces_are_the_zs_category():
    import unicodedata
    assert set(UNICODE_SPACES) == {chr(c) for c in range(0x110000)
                                   if unicodedata.category(chr(c)) == "Zs"} - {" "}
    assert normalise_spaces("\u00a0anno\u202fdomini  ") == "anno domini"


def test_no_break_space_inside_a_word_is_a_plain_space_and_reported(tmp_path):
    gold = read_gold(hyperlex_it(tmp_path / "hyperlex-it.txt"))
    assert gold["word1"].tolist() == ["gatto", "anno domini", "correre", "sole"]
    assert gold["score"].tolist() == [5.5, 3.0, 4.25, 1.5]
    assert gold.attrs["notes"] == [("Unicode spaces (no-break space ...) in 1 field read as "
                                    "plain spaces (line 3 'anno domini')")]


def test_no_break_space_in_a_tab_file_and_as_the_only_separator(tmp_path):
    tabbed = tmp_path / "tabbed.txt"
    tabbed.write_bytes(b"word1\tword2\tscore\nsole\xe2\x80\xaf\tluna\t2\ncane\tgatto\t4\n")
    assert read_gold(tabbed)["word1"].tolist() == ["sole", "cane"]
    glued = tmp_path / "glued.txt"                  # a no-break space where a blank belongs
    glued.write_bytes(b"sole luna 2\ncane\xc2\xa0gatto 4\ncar automobile 9\n")
    assert read_gold(glued)[["word1", "word2"]].values.tolist() == [
        ["sole", "luna"], ["cane", "gatto"], ["car", "automobile"]]


def test_several_golds_one_bad_file_does_not_stop_the_others(tmp_path, vectors):
    path, table = vectors
    good = hyperlex_it(tmp_path / "hyperlex-it.txt")
    bad = tmp_path / "broken.txt"
    bad.write_text("word1 word2 score\ncane gatto many\n", encoding="utf-8")
    out = run("evaluate", "--gold", bad, "--gold", good, "--vectors", path, "--json",
              "--bootstrap", "0")
    assert out.exit_code == 1
    results = json.loads(out.stdout)
    assert results[0] == {"gold": str(bad), "error": f"{bad}:2, field 'score': score 'many' "
                                                     f"is not a number"}
    assert results[1]["gold"] == str(good) and results[1]["covered"] == 4
    gold = [5.5, 3.0, 4.25, 1.5]
    model = [cosine(table, "gatto", "animale"),
             cosine({"a": table["anno"] + table["domini"], "t": table["tempo"]}, "a", "t"),
             cosine(table, "correre", "muoversi"), cosine(table, "sole", "luna")]
    assert results[1]["spearman"] == pytest.approx(stats.spearmanr(gold, model).statistic)
    assert "Note: " in out.stderr and "read as plain spaces" in out.stderr
    assert f"Error: {bad}:2" in out.stderr


def test_per_pair_with_several_golds_names_the_file_gold_file(tmp_path, vectors):
    path, _ = vectors
    first = hyperlex_it(tmp_path / "hyperlex-it.txt")
    second = tmp_path / "plain.txt"
    second.write_text("cat kitten 9.5\ncar automobile 9\nsun luna 2\n", encoding="utf-8")
    out = run("evaluate", "--gold", first, "--gold", second, "--vectors", path,
              "--bootstrap", "0", "--per-pair", tmp_path / "pairs.csv")
    assert out.exit_code == 0, out.output
    pairs = pd.read_csv(tmp_path / "pairs.csv")
    assert list(pairs.columns[:4]) == ["gold_file", "word1", "word2", "gold"]
    assert pairs.columns.is_unique
    by_file = pairs.groupby("gold_file")["gold"].apply(sorted).to_dict()
    assert by_file == {str(first): [1.5, 3.0, 4.25, 5.5], str(second): [2.0, 9.0, 9.5]}


def test_similarity_matrix_is_refused_saying_what_it_looks_like():
    with pytest.raises(InputError, match=r"not a list of word pairs: every field is a number "
                                         r"\(50 rows of 50 numbers; a similarity matrix\?\)"):
        read_gold(DATA / "similarities0-1.txt")


def test_word_vectors_given_as_gold_are_refused(tmp_path, vectors):
    path, _ = vectors
    text = path.read_text().splitlines()[1:]          # without the word2vec count line
    vec = tmp_path / "vectors-as-gold.txt"
    vec.write_text("\n".join(line + " 0.5 0.25 0.125" for line in text) + "\n")
    with pytest.raises(InputError, match="a word then 11 numbers per row"):
        read_gold(vec)


def test_zero_covered_pairs_is_an_error_with_the_reason(tmp_path, vectors):
    path, _ = vectors
    unknown = tmp_path / "unknown.txt"
    unknown.write_text("zebra okapi 3\nwhale shark 5\nhorse pony 8\n", encoding="utf-8")
    out = run("evaluate", "--gold", unknown, "--vectors", path, "--bootstrap", "0")
    assert out.exit_code == 1
    assert out.output.count("Error: ") == 1 and "Traceback" not in out.output
    assert "no pair covered: none of the 3 pairs has all its words in" in out.output
    assert "'zebra', 'okapi'" in out.output
    both = run("evaluate", "--gold", unknown, "--gold", hyperlex_it(tmp_path / "it.txt"),
               "--vectors", path, "--bootstrap", "0")
    assert both.exit_code == 1
    assert "spearman" in both.stdout and "no pair covered" in both.stderr


def test_simcross_men_lemma_copy_header_over_tabs(tmp_path, vectors):
    """simcross's MEN copies: ``word1 word2 score`` (spaces) over ``sun-n TAB sunlight-n TAB
    50`` rows. The header is read as three columns and the POS suffixes come off."""
    path, _ = vectors
    men = tmp_path / "MEN_dataset_lemma_form.dev"
    men.write_bytes(b"word1 word2 score\n"
                    b"sun-n\tsunlight-n\t50.000000\n"
                    b"car-n\tautomobile-n\t48.000000\n"
                    b"cat-n\tkitten-n\t45.000000\n"
                    b"sole-n\tluna-n\t9.000000\n")
    gold = read_gold(men)
    assert gold.attrs["format"] == "men"
    assert gold[["word1", "word2"]].values.tolist()[0] == ["sun", "sunlight"]
    assert gold["pos"].tolist() == ["N"] * 4
    out = run("evaluate", "--gold", men, "--vectors", path, "--bootstrap", "0", "--json")
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["covered"] == 4
    natural = tmp_path / "MEN_dataset_natural_form_full"
    natural.write_bytes(b"word1 word2 score\nsun\tsunlight\t50.000000\ncar\tautomobile\t48.0\n")
    assert read_gold(natural).columns.tolist() == ["word1", "word2", "score"]
