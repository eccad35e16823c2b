"""Issue 23 items 9 and 10: one pairs reader for every command that takes pairs, and
Multi-SimLex as Concepticon distributes it.

``tests/data/multisimlex_concepticon_sample.tsv`` is written in the layout of Concepticon's
``concepticondata/conceptlists/Vulic-2020-2244.tsv`` (concepticon/concepticon-data): its 48
columns in order, TAB-separated, ``SIMLEX_IDS`` as ``pairid:position``, the ``_IN_SOURCE`` and
``_SCORE`` lists aligned with it, alternatives in parentheses (``süüa tegema (küpsetama)``,
``cyhyrau (cyhyr)``), words of several words (``pojawić się``, ``heaks kiitma``), a list with
a trailing blank, the four ``_ERRATUM`` columns. Its 14 concept rows and 9 pairs, and the
scores, are made up (a few English scores are the published ones).
"""

import json
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from lexgold.cli import cli
from lexgold.errors import InputError
from lexgold.evaluate.gold import read_gold
from lexgold.pairfiles import read_pair_table

MULTISIMLEX = Path(__file__).parent / "data" / "multisimlex_concepticon_sample.tsv"
SIMLEX = (b"word1\tword2\tPOS\tSimLex999\tconc(w1)\tconc(w2)\tconcQ\tAssoc(USF)\tSimAssoc333\t"
          b"SD(SimLex)\r\n"
          b"old\tnew\tA\t1.58\t2.72\t2.81\t2\t7.25\t1\t0.41\r\n"
          b"smart\tintelligent\tA\t9.2\t1.75\t2.46\t1\t7.11\t1\t0.67\r\n"
          b"hard\tdifficult\tA\t8.77\t3.76\t2.21\t2\t5.94\t1\t1.19\r\n"
          b"happy\tcheerful\tA\t9.55\t2.56\t2.34\t1\t5.85\t1\t2.18\r\n")
HYPERLEX = (b"WORD1 WORD2 POS TYPE AVG_SCORE AVG_SCORE_0_10 STD SCORES..\n"
            b"conversation function N hyp-3 3.4 5.67 1.69 4 5 0 5 4 3 4 5 1 3\n"
            b"firefighter worker N hyp-1 5.5 9.17 0.5 6 6 5 5 5 6\n"
            b"run move V hyp-1 5.25 8.75 0.83 6 5 4 6\n")
TR9856 = (b"#term1\tterm2\tscore\ttopic\n"
          b"obesity\tchildren health\t0.7\tObesity\n"
          b"soccer\tfootball\t0.9\tSport\n"
          b"soccer\tcontract\t0.2\tSport\n")


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.fixture
def published(tmp_path):
    files = {}
    for name, content in (("SimLex-999.txt", SIMLEX), ("hyperlex-all.txt", HYPERLEX),
                          ("TermRelatednessResults.tsv", TR9856)):
        files[name] = tmp_path / name
        files[name].write_bytes(content)
    return files


def test_multisimlex_english_pairs_by_default():
    gold = read_gold(MULTISIMLEX)
    assert gold.attrs["format"] == "multisimlex" and gold.attrs["scale"] == (0.0, 6.0)
    assert gold["pair_id"].tolist() == ["1", "17", "203", "690", "1306", "1333", "1414", "1439",
                                        "1443"]
    first = gold.set_index("pair_id")
    assert first.loc["203", ["word1", "word2", "pos"]].tolist() == ["sculpture", "statue", "N"]
    assert first.loc["203", "score"] == 4.923076923076923
    assert first.loc["1414", ["word1", "word2", "pos"]].tolist() == ["become", "appear", "V"]


@pytest.mark.parametrize("language,pair,words,score", [
    ("fr", "690", ["muscle", "langue"], 3.4),
    ("french", "1443", ["permettre", "approuver"], 3.6),
    ("pl", "1414", ["stać się", "pojawić się"], 1.5),             # words of two words
    ("et", "1439", ["küpsetama", "praadima"], 2.1),               # second alternative
    ("et", "1443", ["lubama", "heaks kiitma"], 4.4),
    ("cy", "690", ["cyhyrau", "tongue"], 1.4),
    ("ru", "1414", ["become", "казаться"], 0.1),
    ("ar", "17", ["منحوتة", "محرّك كهربائي"], 0.5),
])
def test_multisimlex_other_languages(language, pair, words, score):
    gold = read_gold(MULTISIMLEX, language=language).set_index("pair_id")
    assert len(gold) == 9
    assert gold.loc[pair, ["word1", "word2"]].tolist() == words
    assert gold.loc[pair, "score"] == pytest.approx(score)


def test_multisimlex_errors_name_line_and_field(tmp_path):
    with pytest.raises(InputError, match=r"no language 'klingon' in this Multi-SimLex file"):
        read_gold(MULTISIMLEX, language="klingon")
    lines = MULTISIMLEX.read_text(encoding="utf-8").splitlines()
    broken = tmp_path / "broken.tsv"
    broken.write_text("\n".join(lines[:3]) + "\n", encoding="utf-8")   # pair 17 misses motor
    with pytest.raises(InputError, match=r"broken.tsv:3, field 'SIMLEX_IDS': pair 17 has no "
                                         r"concept at position 2"):
        read_gold(broken)
    plain = tmp_path / "plain.txt"
    plain.write_text("cat dog 3\nsun moon 5\n")
    with pytest.raises(InputError, match="--language applies to Multi-SimLex files only"):
        read_gold(plain, "auto", "fr")


def test_evaluate_multisimlex_language_option(tmp_path):
    vectors = tmp_path / "v.txt"
    words = ["bras", "muscle", "sculpture", "moteur", "statue", "langue", "partir", "apparaître"]
    vectors.write_text(f"{len(words)} 3\n" + "".join(
        f"{w} {i % 3 + 1} {(i * 7) % 5 + 1} {(i * 3) % 4 + 1}\n" for i, w in enumerate(words)),
        encoding="utf-8")
    out = run("evaluate", "--gold", MULTISIMLEX, "--language", "fr", "--vectors", vectors,
              "--json", "--bootstrap", "0")
    assert out.exit_code == 0, out.output
    result = json.loads(out.stdout)
    assert result["format"] == "multisimlex" and result["pairs"] == 9
    assert result["covered"] == 5          # bras-muscle, sculpture-moteur/statue, muscle-langue,
    #                                        partir-apparaître
    plain = tmp_path / "plain.txt"
    plain.write_text("bras muscle 3\nsculpture statue 5\nmuscle langue 1\n")
    refused = run("evaluate", "--gold", plain, "--language", "fr", "--vectors", vectors)
    assert refused.exit_code == 1
    assert "field '--language': applies to Multi-SimLex files only" in refused.output


@pytest.mark.parametrize("name,columns", [
    ("SimLex-999.txt", ["word1", "word2", "POS", "SimLex999"]),
    ("hyperlex-all.txt", ["WORD1", "WORD2", "POS", "TYPE", "AVG_SCORE", "AVG_SCORE_0_10", "STD",
                          "SCORES.."]),
    ("TermRelatednessResults.tsv", ["term1", "term2", "score", "topic"]),
])
def test_pair_table_keeps_the_published_column_names(published, name, columns):
    table = read_pair_table(published[name])
    assert list(table.columns[:len(columns)]) == columns
    assert len(table) == 3 or len(table) == 4
    if name == "hyperlex-all.txt":
        assert table["SCORES.."].tolist()[1] == "6 6 5 5 5 6"
    if name == "TermRelatednessResults.tsv":
        assert table["term2"].tolist()[0] == "children health"


@pytest.mark.parametrize("name,n", [("SimLex-999.txt", 4), ("hyperlex-all.txt", 3),
                                    ("TermRelatednessResults.tsv", 3)])
def test_translate_export_takes_published_files(published, tmp_path, name, n):
    out = run("translate", "export", "--pairs", published[name], "--lang", "it", "--out",
              tmp_path / "sheets", "--no-shuffle")
    assert out.exit_code == 0, out.output
    source = pd.read_csv(tmp_path / "sheets" / "source.csv", dtype=str, keep_default_na=False)
    assert list(source.columns[:3]) == ["pair_id", "word1", "word2"] and "pos" in source
    assert len(source) == n
    sheet = pd.read_csv(tmp_path / "sheets" / "it_A.csv", encoding="utf-8-sig", dtype=str)
    assert sheet["word1"].tolist() == source["word1"].tolist()


def test_translate_export_takes_multisimlex_with_its_pair_ids(tmp_path):
    out = run("translate", "export", "--pairs", MULTISIMLEX, "--lang", "it", "--out", tmp_path,
              "--no-shuffle")
    assert out.exit_code == 0, out.output
    source = pd.read_csv(tmp_path / "source.csv", dtype=str)
    assert source["pair_id"].tolist()[:3] == ["1", "17", "203"]
    assert source[["word1", "word2", "pos"]].values.tolist()[2] == ["sculpture", "statue", "N"]


@pytest.mark.parametrize("name,protocol,n", [("SimLex-999.txt", "simlex", 4),
                                             ("hyperlex-all.txt", "hyperlex", 3),
                                             ("TermRelatednessResults.tsv", "tr9856", 3)])
def test_simulate_takes_published_files(published, tmp_path, name, protocol, n):
    out = run("simulate", "--pairs", published[name], "--protocol", protocol, "--out",
              tmp_path / "ratings.csv", "--seed", "1", "--raters-per-tranche", "3")
    assert out.exit_code == 0, out.output
    ratings = pd.read_csv(tmp_path / "ratings.csv")
    rated = ratings.loc[ratings["kind"] != "checkpoint", ["word1", "word2"]].drop_duplicates()
    assert len(rated) == n
    assert ("children health" in set(rated["word2"])) == (protocol == "tr9856")


def test_crosslingual_from_multisimlex_languages(tmp_path):
    refused = run("crosslingual", "--gold", f"en={MULTISIMLEX}", "--gold", f"fr={MULTISIMLEX}",
                  "--out", tmp_path)
    assert refused.exit_code == 1
    assert "published on 0-6 but protocol simlex999 releases on 0-10" in refused.output
    out = run("crosslingual", "--gold", f"en={MULTISIMLEX}", "--gold", f"fr={MULTISIMLEX}",
              "--scale", "0", "6", "--out", tmp_path)
    assert out.exit_code == 0, out.output
    pairs = pd.read_csv(tmp_path / "en-fr.csv", dtype={"pair_ids": str})
    # threshold 0.2 x 6 = 1.2: pairs 1 (0.69 vs 2.6), 690 (1.62 vs 3.4), 1414 (0.08 vs 1.4) drop
    assert sorted(set(pairs["pair_ids"])) == ["1306", "1333", "1439", "1443", "17", "203"]
    row = pairs[(pairs["word1"] == "sculpture") & (pairs["word2"] == "statue")
                & (pairs["lang1"] == "en")].iloc[0]
    assert row["score"] == pytest.approx((4.923076923076923 + 5.2) / 2)


def test_crosslingual_reads_the_published_simlex_file(published, tmp_path):
    aligned = tmp_path / "aligned.csv"
    aligned.write_text("pair_id,word1,word2\np1,old,new\np2,smart,intelligent\n"
                       "p3,hard,difficult\np4,happy,cheerful\n", encoding="utf-8")
    italian = tmp_path / "it.csv"
    italian.write_text("pair_id,word1,word2,score\np1,vecchio,nuovo,1.2\np2,furbo,"
                       "intelligente,8.9\np3,duro,difficile,9.5\np4,felice,allegro,4.0\n",
                       encoding="utf-8")
    out = run("crosslingual", "--gold", f"en={published['SimLex-999.txt']}", "--aligned",
              f"en={aligned}", "--gold", f"it={italian}", "--out", tmp_path / "x")
    assert out.exit_code == 0, out.output
    pairs = pd.read_csv(tmp_path / "x" / "en-it.csv", dtype={"pair_ids": str})
    assert sorted(set(pairs["pair_ids"])) == ["p1", "p2", "p3"]         # p4: 9.55 vs 4.0
