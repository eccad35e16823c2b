"""Issue 23 items 2 and 11: rating files as their authors (and their copiers) distribute them.

- Rare Words' ``rw.txt`` (Luong et al. 2013): no header, ``word1 TAB word2 TAB mean TAB r1 ...
  r10``, integer ratings 0-10; the mean is not a rating (the first four lines of the published
  file, whose means are not the plain means of the ten ratings).
- The simcross copies of MEN's agreement files: a space-separated header ``word1 word2 score``
  over TAB-separated rows.
- MEN's two agreement files spell the same items differently (one rater's file in natural word
  forms, the other's in lemma forms): a warning with the overlap figures in ``ratings import``,
  ``agree`` and ``process``, and ``--map FILE`` to respell one onto the other.
"""

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from scipy import stats

from lexgold.cli import cli
from lexgold.errors import InputError
from lexgold.ratings.overlap import map_words, overlap_warnings, read_word_map

RW = (b"squishing\tsquirt\t5.88\t7\t7\t6\t1\t4\t6\t6\t7\t2\t4\n"
      b"undated\tundatable\t5.83\t10\t9\t6\t5\t5\t7\t7\t9\t2\t5\n"
      b"circumvents\tbeat\t5.33\t7\t7\t3\t9\t8\t6\t3\t2\t0\t6\n"
      b"circumvents\tebb\t3.25\t7\t4\t6\t4\t2\t0\t0\t3\t6\t0\n")
NATURAL = ["sun", "cars", "dogs", "cats", "kittens", "trees", "bird", "sky", "birds", "rivers",
           "boats", "cakes"]
LEMMA = ["sun", "car", "dog", "cat", "kitten", "tree", "bird", "sky", "bird", "river", "boat",
         "cake"]
SECOND = ["sunlight", "automobile", "puppy", "kitten", "cat", "forest", "nest", "cloud", "wing",
          "water", "harbour", "chocolate"]


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def test_rare_words_individual_ratings(tmp_path):
    path = tmp_path / "rw.txt"
    path.write_bytes(RW)
    out = run("ratings", "import", path, "--scale", "0", "10", "--out", tmp_path / "rw.csv")
    assert out.exit_code == 0, out.output
    assert "rw.txt: ratings without rater identity, 4 pairs, 40 ratings, scale seen 0-10" \
        in out.output
    assert ("no header: field 3 is the published score, not a rating; the plain mean of the "
            "ratings gives it on 0 of 4 rows, the mean within one SD of their mean (aggregate = "
            "\"trimmed_1sd\", Rare Words' rule) on 4 (to its printed decimals): it follows "
            "trimmed_1sd") in out.output
    long = pd.read_csv(tmp_path / "rw.csv")
    assert long["rater_id"].str.startswith("?").all()
    first = long[(long["word1"] == "squishing")]["rating"].tolist()
    assert first == [7, 7, 6, 1, 4, 6, 6, 7, 2, 4]
    assert 5.88 not in set(long["rating"])
    process = run("process", tmp_path / "rw.csv", "--protocol", "plain", "--out",
                  tmp_path / "gold", "--no-plots")
    assert process.exit_code == 0, process.output
    gold = pd.read_csv(tmp_path / "gold" / "gold.csv")
    assert gold.set_index("word1").loc["undated", "score"] == pytest.approx(6.5)


def write_men(path, first, second, ratings, header=b"word1 word2 score\n"):
    """simcross's copy of an agreement file: space-separated header over TAB-separated rows."""
    rows = b"".join(f"{a}\t{b}\t{r}\n".encode() for a, b, r in zip(first, second, ratings))
    path.write_bytes(header + rows)


@pytest.fixture
def men(tmp_path):
    rng = np.random.default_rng(7)
    truth = rng.integers(1, 8, len(SECOND))
    elias = np.clip(truth + rng.integers(-1, 2, len(truth)), 1, 7)
    marcos = np.clip(truth + rng.integers(-1, 2, len(truth)), 1, 7)
    write_men(tmp_path / "elias-men-ratings.txt", NATURAL, SECOND, elias)
    write_men(tmp_path / "marcos-men-ratings.txt", LEMMA, SECOND, marcos)
    mapping = tmp_path / "natural-to-lemma.tsv"
    mapping.write_bytes(b"from\tto\n" + b"".join(
        f"{n}\t{lemma}\n".encode() for n, lemma in zip(NATURAL, LEMMA) if n != lemma))
    return tmp_path, elias, marcos


def test_simcross_agreement_files_are_one_file_per_rater(men):
    folder, elias, _ = men
    out = run("ratings", "import", folder / "elias-men-ratings.txt", "--out", folder / "e.csv")
    # 'word1 word2 score' is also how simcross heads released gold files: not guessed
    assert out.exit_code == 1 and "pass --layout per-rater" in out.output
    out = run("ratings", "import", folder / "elias-men-ratings.txt", "--layout", "per-rater",
              "--out", folder / "e.csv")
    assert out.exit_code == 0, out.output
    assert "one file per rater, 1 rater, 12 pairs, 12 ratings" in out.output
    long = pd.read_csv(folder / "e.csv")
    assert set(long["rater_id"]) == {"elias-men-ratings"}
    assert long["word1"].tolist() == NATURAL and long["rating"].tolist() == elias.tolist()


def test_few_shared_pairs_are_warned_about_everywhere(men):
    folder, *_ = men
    files = [folder / "elias-men-ratings.txt", folder / "marcos-men-ratings.txt"]
    out = run("ratings", "import", *files, "--layout", "per-rater", "--scale", 1, 7, "--out",
              folder / "men.csv")
    assert out.exit_code == 0, out.output
    # 3 of 12 pairs spelled alike (sun, bird, sky): 12 + 12 - 3 = 21 pairs
    expected = ("Warning: tranche 1: rater 'marcos-men-ratings' shares 3 of its 12 pairs "
                "(25.0%) with rater 'elias-men-ratings' (12 pairs); the tranche's 2 raters list "
                "21 different pairs.")
    assert expected in out.stderr
    assert "--map FILE" in out.stderr
    agree = run("agree", folder / "men.csv")
    assert agree.exit_code == 0 and expected[len("Warning: "):] in agree.stderr
    process = run("process", folder / "men.csv", "--protocol", "plain", "--out",
                  folder / "gold", "--no-plots")
    assert process.exit_code == 0, process.output
    assert expected[len("Warning: "):] in process.stderr
    report = json.loads((folder / "gold" / "report.json").read_text())
    assert len(report["overlap_warnings"]) == 1
    assert report["overlap_warnings"][0].startswith(expected[len("Warning: "):])


def test_map_file_respells_and_the_raters_then_share_every_pair(men):
    folder, elias, marcos = men
    files = [folder / "elias-men-ratings.txt", folder / "marcos-men-ratings.txt"]
    out = run("ratings", "import", *files, "--layout", "per-rater", "--scale", 1, 7, "--map",
              folder / "natural-to-lemma.tsv", "--out", folder / "men.csv")
    assert out.exit_code == 0, out.output
    assert "9 words on 9 rows respelled by the --map file" in out.output
    assert "Warning" not in out.stderr
    assert "(12 pairs rated by more than one)" in out.output
    figures = json.loads(run("agree", folder / "men.csv", "--json").stdout)
    assert figures["pairs"] == 12
    assert figures["iaa1"] == pytest.approx(stats.spearmanr(elias, marcos).statistic)


def test_overlap_is_measured_within_tranches_and_skips_quitters():
    rows = [("a", "t1", f"w{i}", "x", 3) for i in range(10)]
    rows += [("b", "t1", f"w{i}", "x", 3) for i in range(4)]          # quit early: a subset
    rows += [("c", "t2", f"v{i}", "x", 3) for i in range(10)]           # another tranche
    frame = pd.DataFrame(rows, columns=["rater_id", "tranche", "word1", "word2", "rating"])
    assert overlap_warnings(frame) == []
    frame.loc[frame["rater_id"] == "b", "word1"] = ["w0", "w1", "z2", "z3"]
    assert overlap_warnings(frame)[0].startswith(
        "tranche t1: rater 'b' shares 2 of its 4 pairs (50.0%) with rater 'a' (10 pairs); the "
        "tranche's 2 raters list 12 different pairs.")


@pytest.mark.parametrize("content,message", [
    (b"cats\tcat\ncats\tkitty\n", (r"map.tsv:2: 'cats' is mapped to 'cat' on line 1 and "
                                   r"to 'kitty' here")),
    (b"cats\n", r"map.tsv:1: expected two words \(from, to\), found 1 fields"),
    (b"", r"empty mapping file"),
])
def test_map_file_errors(tmp_path, content, message):
    path = tmp_path / "map.tsv"
    path.write_bytes(content)
    with pytest.raises(InputError, match=message):
        read_word_map(path)


def test_map_file_delimiters_and_header(tmp_path):
    path = tmp_path / "map.csv"
    path.write_bytes(b"from,to\r\n# natural -> lemma\r\ncats,cat\r\nnew\xc2\xa0york,new york\r\n")
    assert read_word_map(path) == {"cats": "cat", "new york": "new york"}
    blank = tmp_path / "map.txt"
    blank.write_text("dogs dog\n\ncats cat\n")
    mapping = read_word_map(blank)
    frame = pd.DataFrame({"word1": ["dogs", "sun"], "word2": ["cats", "moon"]})
    mapped, words, rows = map_words(frame, mapping)
    assert mapped.values.tolist() == [["dog", "cat"], ["sun", "moon"]] and (words, rows) == (2, 1)
