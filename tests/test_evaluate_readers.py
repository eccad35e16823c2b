"""Vector and gold-standard readers: every format, on real files where installable."""

import sys
from pathlib import Path

import gensim
import numpy as np
import pandas as pd
import pytest
from gensim.models import KeyedVectors, Word2Vec

from lexgold.errors import InputError
from lexgold.evaluate.gold import read_gold
from lexgold.evaluate.vectors import Vectors, detect_format, read_vectors

DATA = Path(gensim.__file__).parent / "test" / "test_data"


@pytest.fixture(scope="module")
def lee_kv():
    """A small real word2vec model: the Lee corpus, seeded, one worker."""
    sentences = [line.lower().split() for line in (DATA / "lee_background.cor").open()]
    model = Word2Vec(sentences, vector_size=20, min_count=5, seed=1, workers=1, epochs=2)
    return model.wv


@pytest.mark.parametrize("binary", [False, True])
def test_word2vec_text_and_binary_round_trip(tmp_path, lee_kv, binary):
    path = tmp_path / ("v.bin" if binary else "v.txt")
    lee_kv.save_word2vec_format(str(path), binary=binary)
    assert detect_format(path) == ("word2vec-bin" if binary else "word2vec")
    vectors = read_vectors(path)
    assert vectors.words == list(lee_kv.index_to_key)
    np.testing.assert_allclose(vectors.matrix, lee_kv.vectors, rtol=1e-5, atol=1e-6)


def test_gensim_keyedvectors_file(tmp_path, lee_kv):
    path = tmp_path / "v.kv"
    lee_kv.save(str(path))
    vectors = read_vectors(path)
    assert detect_format(path) == "gensim"
    assert vectors.words == list(lee_kv.index_to_key)
    np.testing.assert_array_equal(vectors.matrix, lee_kv.vectors)


def test_gensim_missing_gives_clear_error(tmp_path, lee_kv, monkeypatch):
    path = tmp_path / "v.kv"
    lee_kv.save(str(path))
    monkeypatch.setitem(sys.modules, "gensim.utils", None)
    with pytest.raises(InputError,
                       match=r"needs gensim: pip install -e '\.\[gensim\]' in the lexgold clone"):
        read_vectors(path)


def test_glove_and_fasttext_text_files_from_gensim():
    glove = read_vectors(DATA / "test_glove.txt")
    assert detect_format(DATA / "test_glove.txt") == "glove"
    assert glove.words[0] == "the" and glove.dim == 50
    assert glove.matrix[0, 0] == pytest.approx(0.418)
    fasttext = read_vectors(DATA / "lee_fasttext.vec")
    assert len(fasttext) == 1762 and fasttext.dim == 10
    reference = KeyedVectors.load_word2vec_format(str(DATA / "lee_fasttext.vec"))
    np.testing.assert_allclose(fasttext.matrix, reference.vectors, rtol=1e-6)


def test_bad_vector_line_names_file_and_line(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_text("2 3\ncat 1 2 3\ndog 1 x 3\n")
    with pytest.raises(InputError, match=r"bad.txt:3: non-numeric vector value"):
        read_vectors(path)
    path.write_text("2 3\ncat 1 2 3\ndog 1 2\n")
    with pytest.raises(InputError, match=r"bad.txt:3: expected a word and 3 values"):
        read_vectors(path)


def test_lower_case_policy_first_variant_wins():
    vectors = Vectors(["Apple", "apple", "pear"], np.eye(3, dtype=np.float32))
    assert vectors.key_index("lower") == {"apple": 0, "pear": 2}
    assert vectors.key_index("exact") == {"Apple": 0, "apple": 1, "pear": 2}


def test_plain_gold_with_comments_from_gensim():
    gold = read_gold(DATA / "simlex999.txt")
    assert len(gold) == 999 and gold.attrs["format"] == "plain"
    assert gold.iloc[0][["word1", "word2", "score"]].tolist() == ["old", "new", 1.58]


SIMLEX_HEAD = ("word1\tword2\tPOS\tSimLex999\tconc(w1)\tconc(w2)\tconcQ\tAssoc(USF)\t"
               "SimAssoc333\tSD(SimLex)\n")


def test_simlex_published_format(tmp_path):
    path = tmp_path / "SimLex-999.txt"
    path.write_text(SIMLEX_HEAD + "old\tnew\tA\t1.58\t2.72\t2.81\t2\t7.25\t1\t0.41\n"
                    "smart\tintelligent\tA\t9.2\t1.75\t2.46\t1\t7.11\t1\t0.67\n")
    gold = read_gold(path)
    assert gold.attrs["format"] == "simlex"
    assert gold.loc[1, ["word1", "word2", "pos", "score", "conc1", "conc2", "assoc", "assoc333",
                        "sd"]].tolist() == ["smart", "intelligent", "A", 9.2, 1.75, 2.46, 7.11,
                                            1, 0.67]


def test_hyperlex_tr9856_ws353_simverb_men_rg65(tmp_path):
    cases = {
        "hyperlex.txt": ("WORD1 WORD2 POS TYPE AVG_SCORE AVG_SCORE_0_10 STD SCORES..\n"
                         "conflict disagreement N hyp-1 3.72 6.2 1.0 4 3 5\n", "hyperlex",
                         {"relation": "hyp-1", "score": 3.72, "pos": "N"}),
        "tr.csv": ('term1,term2,score,topic\n"social networking",privacy,0.9,"Internet, Web"\n',
                   "tr9856", {"word1": "social networking", "topic": "Internet, Web",
                              "score": 0.9}),
        "combined.csv": ("Word 1,Word 2,Human (mean)\nlove,sex,6.77\n", "ws353",
                         {"word2": "sex", "score": 6.77}),
        "SimVerb-3500.txt": ("take\tremove\tV\t6.81\tSYNONYMS\n", "simverb",
                             {"pos": "V", "relation": "SYNONYMS", "score": 6.81}),
        "MEN_lemma.txt": ("sun-n sunlight-n 50.000000\nbright-j shine-v 40\n", "men",
                          {"word1": "sun", "pos": "N", "score": 50.0}),
        "rg65.txt": ("cord;smile;0.02\n", "plain", {"word1": "cord", "score": 0.02}),
    }
    for name, (text, fmt, expected) in cases.items():
        path = tmp_path / name
        path.write_text(text)
        gold = read_gold(path)
        assert gold.attrs["format"] == fmt, name
        for column, value in expected.items():
            assert gold.loc[0, column] == value, (name, column)
    assert read_gold(tmp_path / "MEN_lemma.txt").loc[1, "pos"] == "mixed"


def test_bad_gold_score_names_line_and_field(tmp_path):
    path = tmp_path / "gold.txt"
    path.write_text("# comment\ncat dog 3.5\ncat mouse lots\n")
    with pytest.raises(InputError, match=r"gold.txt:3, field 'score': score 'lots' is not"):
        read_gold(path)
    path.write_text("word1\tword2\tscore\n")
    with pytest.raises(InputError, match="gold.txt: no word pairs found after the header"):
        read_gold(path)
    path.write_text("a\tb\tscore\ncat\tdog\t3\n")
    with pytest.raises(InputError, match=r"gold.txt:1: header has no column for word1, word2"):
        read_gold(path)


def test_lexgold_process_gold_csv(tmp_path):
    """``lexgold process`` writes gold.csv as CSV with the published column names; cells
    it cannot fill (no concreteness source) are empty."""
    simlex = pd.DataFrame({"word1": ["old", "smart"], "word2": ["new", "intelligent"],
                           "POS": ["A", "A"], "SimLex999": [1.58, 9.2],
                           "conc(w1)": [np.nan, 1.75], "conc(w2)": [np.nan, 2.46],
                           "concQ": [np.nan, 1], "Assoc(USF)": [7.25, 0.0],
                           "SimAssoc333": [1, 0], "SD(SimLex)": [0.41, 0.67]})
    simlex.to_csv(tmp_path / "gold.csv", index=False)
    gold = read_gold(tmp_path / "gold.csv")
    assert gold.attrs["format"] == "simlex"
    assert gold["score"].tolist() == [1.58, 9.2] and np.isnan(gold.loc[0, "conc1"])
    hyperlex = pd.DataFrame({"WORD1": ["dog"], "WORD2": ["animal"], "POS": ["N"],
                             "TYPE": ["hyp-1"], "AVG_SCORE": [5.5], "AVG_SCORE_0_10": [9.17],
                             "STD": [0.5], "SCORES..": ["6 5 6 5"]})
    hyperlex.to_csv(tmp_path / "gold_h.csv", index=False)
    gold = read_gold(tmp_path / "gold_h.csv")
    assert gold.attrs["format"] == "hyperlex"
    assert gold.loc[0, ["word1", "relation", "score"]].tolist() == ["dog", "hyp-1", 5.5]


def test_a_glove_file_read_past_the_first_allocation_is_trimmed_exactly(tmp_path):
    """The matrix grows by doubling (no header), then is trimmed in place (issue 22 item 7):
    every row as written, nothing past the last."""
    matrix = np.random.default_rng(3).standard_normal((1000, 7)).astype(np.float32)
    path = tmp_path / "glove.txt"
    path.write_text("".join(f"w{i} " + " ".join(repr(float(x)) for x in row) + "\n"
                            for i, row in enumerate(matrix)))
    vectors = read_vectors(path)
    assert vectors.words == [f"w{i}" for i in range(1000)]
    assert vectors.matrix.shape == (1000, 7) and vectors.matrix.flags["C_CONTIGUOUS"]
    np.testing.assert_array_equal(vectors.matrix, matrix)
