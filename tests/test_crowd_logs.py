"""Rating logs read once (lexgold.crowd.logs.read_log, for `crowd fit` and `replay`): any
layout `ratings import` reads, plain or compressed, errors naming the file given; and the long
layout read by lexgold.ratings.layouts.read_layout itself (lexgold.ratings.long)."""

from __future__ import annotations

import bz2
import gzip
import hashlib
import lzma
from pathlib import Path

import pandas as pd
import pytest

from lexgold.crowd.logs import file_sha256, read_log
from lexgold.errors import InputError
from lexgold.ratings.layouts import read_layout
from lexgold.ratings.long import read_ratings
from lexgold.resources._files import resource_files

COMPRESS = {".gz": gzip.compress, ".bz2": bz2.compress, ".xz": lzma.compress}

LONG = ("rater_id,tranche,word1,word2,rating\n"
        "a,1,old,new,1\n"
        "a,1,cup,mug,5\n"
        "b,1,old,new,2\n"
        "b,1,cup,mug,6\n")


@pytest.fixture(scope="module")
def set1(tmp_path_factory):
    """WordSim-353 set 1 as shipped, decompressed under its published name."""
    (found,) = resource_files("wordsim353_set1")
    plain = tmp_path_factory.mktemp("ws") / "set1.csv"
    plain.write_bytes(gzip.decompress(Path(found.location).read_bytes()))
    return plain


@pytest.mark.parametrize("suffix", ["", *COMPRESS])
def test_a_published_layout_reads_the_same_plain_or_compressed(set1, tmp_path, suffix):
    expected = read_layout(set1, "wide").frame
    path = tmp_path / f"set1.csv{suffix}"
    data = set1.read_bytes()
    path.write_bytes(COMPRESS[suffix](data) if suffix else data)
    frame = read_log(path)
    pd.testing.assert_frame_equal(frame, expected)
    assert frame["rater_id"].iloc[0].startswith("set1:")      # the stem names the raters
    assert frame["rater_id"].nunique() == 13


@pytest.mark.parametrize("suffix", ["", ".gz", ".xz"])
def test_the_long_format_is_read_and_checked_by_the_one_reader(tmp_path, suffix):
    plain = tmp_path / "log.csv"
    plain.write_text(LONG, encoding="utf-8")
    path = tmp_path / f"log.csv{suffix}"
    if suffix:
        path.write_bytes(COMPRESS[suffix](LONG.encode()))
    pd.testing.assert_frame_equal(read_log(path), read_ratings(plain))
    assert read_log(path)["rating"].tolist() == [1.0, 5.0, 2.0, 6.0]


def test_an_error_in_a_compressed_log_names_the_file_given(tmp_path):
    path = tmp_path / "bad.csv.bz2"
    path.write_bytes(bz2.compress(LONG.replace("cup,mug,6", "cup,mug,high").encode()))
    with pytest.raises(InputError) as caught:
        read_log(path)
    message = str(caught.value)
    assert message.startswith(f"{path}:5, field 'rating': expected a number, found 'high'")
    assert "\n" not in message


def test_a_missing_log_and_a_layout_named_wrongly_are_one_line_errors(tmp_path):
    with pytest.raises(InputError, match="nope.csv: file not found"):
        read_log(tmp_path / "nope.csv")
    path = tmp_path / "log.csv"
    path.write_text(LONG, encoding="utf-8")
    with pytest.raises(InputError, match="log.csv"):
        read_log(path, "wide")


def test_the_fitted_logs_checksum_is_of_the_decompressed_content(tmp_path):
    data = LONG.encode()
    want = hashlib.sha256(data).hexdigest()
    for suffix, compress in {"": bytes, **COMPRESS}.items():
        path = tmp_path / f"log.csv{suffix}"
        path.write_bytes(compress(data))
        assert file_sha256(path) == want, suffix


def test_read_layout_reads_the_long_layout_itself(tmp_path):
    path = tmp_path / "long.csv"
    path.write_text(LONG.replace("rating\n", "rating,answered_at\n", 1)
                    .replace("a,1,old,new,1\n", "a,1,old,new,1,2026-01-01T00:00:00Z\n"),
                    encoding="utf-8")
    imported = read_layout(path, "long")
    assert imported.layout == "long" and imported.notes == []
    frame = imported.frame
    assert list(frame.columns) == ["rater_id", "tranche", "word1", "word2", "rating", "kind",
                                   "answered_at", "_line", "_field"]
    assert frame["kind"].tolist() == ["unique"] * 4
    assert frame["_line"].tolist() == [2, 3, 4, 5]
    bad = tmp_path / "bad.csv"
    bad.write_text(LONG.replace("b,1,old,new,2", "b,1,old,,2"), encoding="utf-8")
    with pytest.raises(InputError, match=r"bad.csv:4, field 'word2': empty value"):
        read_layout(bad, "long")
