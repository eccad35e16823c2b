"""Gold files as distributed (WordSim-353 set1/set2, SimVerb-500-dev, HyperLex's non-English
files, TR9856's ``#term1`` header), refusal of an unexpected header, per-subset intervals, and
the round trip ``ratings import`` -> ``process --protocol plain`` -> ``evaluate``."""

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
from tests.test_ratings_import import write_ws353, ws353_rows

DATA = Path(gensim.__file__).parent / "test" / "test_data"


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.mark.parametrize("name,delimiter", [("set1.csv", ","), ("set2.tab", "\t")])
def test_wordsim353_set_files_read_human_mean(tmp_path, name, delimiter):
    rows = ws353_rows(10, 13, seed=5)
    write_ws353(tmp_path / name, rows, delimiter=delimiter)
    gold = read_gold(tmp_path / name)
    assert gold.attrs["format"] == "ws353"
    assert list(gold.columns) == ["word1", "word2", "score"]
    assert gold["score"].tolist() == [round(float(np.mean(r)), 2) for *_, r in rows]
    assert gold["word1"].iloc[1] == rows[1][0]


def test_wordsim353_combined_with_comment_header_from_gensim():
    """gensim's copy of WordSim-353 (combined) lists money / cash twice (lines 34 and 100,
    9.15 and 9.08): 352 pairs, the first kept, with a warning (issue 36)."""
    with pytest.warns(UserWarning, match=r"1 row repeats an earlier pair \(the first: line "
                      r"100, 'money' / 'cash'\)"):
        gold = read_gold(DATA / "wordsim353.tsv")
    assert len(gold) == 352 and gold.iloc[0].tolist() == ["love", "sex", 6.77]
    assert gold.loc[gold["word1"].eq("money") & gold["word2"].eq("cash"), "score"].tolist() \
        == [9.15]


def test_simverb_row_without_relation(tmp_path):
    path = tmp_path / "SimVerb-500-dev.txt"
    path.write_text("take\tremove\tV\t6.81\tSYNONYMS\nensure\tsecure\tV\t4.07\n"
                    "run\tsleep\tV\t0.33\tNONE\n")
    gold = read_gold(path)
    assert gold.attrs["format"] == "simverb"
    assert gold["score"].tolist() == [6.81, 4.07, 0.33]
    assert gold["relation"].tolist()[0] == "SYNONYMS" and pd.isna(gold["relation"].iloc[1])


@pytest.mark.parametrize("separator", [" ", "\t"])
def test_hyperlex_non_english_header(tmp_path, separator):
    path = tmp_path / "hyperlex-it.txt"
    path.write_text(separator.join(["word1", "word2", "pos", "avg"]) + "\n"
                    + "\n".join(separator.join(r) for r in [
                        ("gatto", "animale", "N", "5.5"), ("correre", "muoversi", "V", "4.25")])
                    + "\n")
    gold = read_gold(path)
    assert gold.attrs["format"] == "hyperlex"
    assert gold[["word1", "pos", "score"]].values.tolist() == [["gatto", "N", 5.5],
                                                               ["correre", "V", 4.25]]


def test_tr9856_commented_header_is_the_header(tmp_path):
    path = tmp_path / "TR9856.txt"
    path.write_text("#term1\tterm2\tscore\nnew york\tcity\t0.9\ncat\tdog\t0.1\n"
                    "war\tpeace\t0.5\n")
    gold = read_gold(path)
    assert gold.attrs["format"] == "tr9856"
    assert gold["word1"].tolist() == ["new york", "cat", "war"]


@pytest.mark.parametrize("content", ["pair left right\na b 3\nc d 4\n",
                                     "word1,word2,score,2015\na,b,1\nc,d,1\ne,f,1\n"])
def test_unexpected_header_is_an_error(tmp_path, content):
    path = tmp_path / "gold.txt"
    path.write_text(content)
    with pytest.raises(InputError, match=r"gold\.txt"):
        read_gold(path)


@pytest.fixture(scope="module")
def vectors(tmp_path_factory):
    """A small word2vec text file over the words of the WordSim-353-like sets below."""
    folder = tmp_path_factory.mktemp("vec")
    words = sorted({w for seed, n, k, rep in ((1, 12, 13, None), (2, 15, 16, 4))
                    for w1, w2, _ in ws353_rows(n, k, seed, rep) for w in (w1, w2)})
    rng = np.random.default_rng(7)
    matrix = rng.normal(size=(len(words), 8))
    path = folder / "vectors.txt"
    path.write_text(f"{len(words)} 8\n" + "".join(
        f"{w} {' '.join(f'{v:.6f}' for v in row)}\n" for w, row in zip(words, matrix)))
    return path, dict(zip(words, np.round(matrix, 6)))


def test_round_trip_import_process_plain_evaluate(tmp_path, vectors):
    path, table = vectors
    write_ws353(tmp_path / "set1.csv", ws353_rows(12, 13, seed=1))
    write_ws353(tmp_path / "set2.csv", ws353_rows(15, 16, seed=2, repeat=4))
    assert run("ratings", "import", tmp_path / "set1.csv", tmp_path / "set2.csv", "--scale",
               0, 10, "--out", tmp_path / "ws.csv").exit_code == 0
    result = run("process", tmp_path / "ws.csv", "--protocol", "plain", "--out",
                 tmp_path / "gold", "--no-plots", "--bootstrap", 0)
    assert result.exit_code == 0, result.output
    result = run("evaluate", "--gold", tmp_path / "gold" / "gold.csv", "--vectors", path,
                 "--json", "--bootstrap", 0)
    assert result.exit_code == 0, result.output
    figures = json.loads(result.output)
    gold = pd.read_csv(tmp_path / "gold" / "gold.csv")
    cosine = [float(np.dot(table[a], table[b]) / np.linalg.norm(table[a])
                    / np.linalg.norm(table[b])) for a, b in zip(gold["word1"], gold["word2"])]
    assert figures["pairs"] == figures["covered"] == 27
    assert figures["spearman"] == pytest.approx(stats.spearmanr(gold["score"], cosine).statistic,
                                                abs=1e-6)


def test_every_subset_gets_an_interval(tmp_path, vectors):
    path, table = vectors
    words = sorted(table)
    rng = np.random.default_rng(8)
    rows = [(words[i], words[-1 - i], "NV"[i % 2], f"{rng.uniform(0, 6):.2f}")
            for i in range(len(words) // 2)]
    gold = tmp_path / "hyperlex-xx.txt"
    gold.write_text("word1 word2 pos avg\n" + "".join(" ".join(r) + "\n" for r in rows))
    result = run("evaluate", "--gold", gold, "--vectors", path, "--json", "--bootstrap", 200)
    assert result.exit_code == 0, result.output
    subsets = json.loads(result.output)["subsets"]
    assert set(subsets) == {"pos=N", "pos=V"}
    for sub in subsets.values():
        low, high = sub["ci"]["spearman"]
        assert -1 <= low <= high <= 1 and sub["ci"]["level"] == 0.95
    text = run("evaluate", "--gold", gold, "--vectors", path, "--bootstrap", 50).output
    subset_lines = [line for line in text.splitlines() if line.startswith("  pos=")]
    assert len(subset_lines) == 2 and all("CI [" in line for line in subset_lines)
