"""A machine's ratings read in (lexgold.machine.ratings): the found column, its errors with their
lines, the provenance sidecar, and word vectors' cosines as a machine."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from lexgold.errors import InputError
from lexgold.machine.ratings import read_machine, read_provenance, sidecar_path, vector_scores
from lexgold.resources._files import resource_files


def write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


def test_gpt4_ratings_of_simverb_find_the_parsed_number():
    """Trott (2024)'s file has the raw answer (``0 (not at all similar)``) beside the number:
    only the number is a numeric column."""
    location = resource_files("simverb3500_gpt4")[0].location
    scores = read_machine(location)
    assert scores.attrs["column"] == "gpt4_rating"
    assert list(scores.columns) == ["word1", "word2", "machine"]
    assert len(scores) == 1750
    assert scores.iloc[0].tolist() == ["feed", "starve", 3.0]
    assert scores.attrs["scale"] == (0.0, 9.0)
    assert scores.attrs["provenance"]["model"] is None
    assert len(scores.attrs["provenance"]["file_sha256"]) == 64


def test_a_named_column_and_published_spellings(tmp_path):
    path = write(tmp_path / "m.csv", "WORD1,WORD2,a,b\ncat,dog,1,0.5\nsun,moon,2,0.25\n")
    with pytest.raises(InputError, match=r"m\.csv: 2 columns \(a, b\) of numbers.*--column"):
        read_machine(path)
    scores = read_machine(path, column="b")
    assert scores["machine"].tolist() == [0.5, 0.25]
    assert scores["word1"].tolist() == ["cat", "sun"]
    with pytest.raises(InputError, match="no column 'c'"):
        read_machine(path, column="c")


def test_an_unparsable_answer_is_named_with_its_line(tmp_path):
    path = write(tmp_path / "m.csv", "word1,word2,rating\ncat,dog,3\nsun,moon,about 4\n")
    with pytest.raises(InputError, match=r"m\.csv:3, field 'rating': not a number: 'about 4'"):
        read_machine(path, column="rating")
    path = write(tmp_path / "n.csv", "word1,word2,rating\ncat,dog,3\nsun,moon,inf\n")
    with pytest.raises(InputError, match=r"n\.csv:3, field 'rating': not a number"):
        read_machine(path, column="rating")


def test_a_pair_given_twice_in_either_order_is_named(tmp_path):
    path = write(tmp_path / "m.csv", "word1,word2,rating\ncat,dog,3\nsun,moon,1\ndog,cat,4\n")
    with pytest.raises(InputError, match=r"m\.csv:4: pair \(dog, cat\) given twice "
                                         r"\(first at line 2\)"):
        read_machine(path)


def test_no_word_column(tmp_path):
    path = write(tmp_path / "m.csv", "a,b,rating\ncat,dog,3\n")
    with pytest.raises(InputError, match="no word1 column"):
        read_machine(path)


def test_the_provenance_sidecar(tmp_path):
    path = write(tmp_path / "m.csv", "word1,word2,rating\ncat,dog,3\n")
    record = {"model": "gpt-4", "prompt_sha256": "ab" * 32, "parameters": {"temperature": 0}}
    sidecar_path(path).write_text(json.dumps(record), encoding="utf-8")
    found = read_machine(path).attrs["provenance"]
    assert found["model"] == "gpt-4" and found["parameters"] == {"temperature": 0}
    assert found["file"] == "m.csv"
    sidecar_path(path).write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(InputError, match=r"m\.csv\.json: not a JSON object"):
        read_provenance(path)
    sidecar_path(path).write_text("{", encoding="utf-8")
    with pytest.raises(InputError, match="not a JSON provenance record"):
        read_provenance(path)


def test_vector_cosines_cover_the_pairs_found(tmp_path):
    vectors = write(tmp_path / "v.txt", "3 2\ncat 1 0\ndog 1 1\nsun 0 2\n")
    pairs = pd.DataFrame({"word1": ["cat", "cat", "sun"], "word2": ["dog", "sun", "moon"]})
    scores = vector_scores(vectors, pairs)
    assert scores[["word1", "word2"]].values.tolist() == [["cat", "dog"], ["cat", "sun"]]
    np.testing.assert_allclose(scores["machine"], [1 / np.sqrt(2), 0.0], atol=1e-12)
    assert scores.attrs["coverage"] == pytest.approx(2 / 3)
    assert "v.txt" in scores.attrs["provenance"]["model"]
