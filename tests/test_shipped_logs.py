"""The real rating logs shipped in lexgold/resources/data (SOURCES.toml), read by
:func:`lexgold.crowd.logs.shipped_log`: their sizes, scales and raters, and the published score
each carries beside its ratings, recomputed from the ratings (issue 46)."""

from __future__ import annotations

import gzip
from decimal import ROUND_HALF_UP, Decimal

import numpy as np
import pytest

from lexgold.crowd.logs import SHIPPED, plain_copy, shipped_log
from lexgold.errors import InputError
from lexgold.ratings.detect import detect_layout
from lexgold.ratings.layouts import read_aligned, read_layout
from lexgold.resources._files import resource_files

#: name -> (pairs, ratings, identified raters or None for anonymous ratings)
SIZES = {"simverb": (3500, 35202, None), "wordsim353": (152, 1989, 13),
         "danish": (99, 3755, 38), "card660": (660, 5280, 8)}


def test_every_shipped_log_is_sized():
    assert set(SIZES) == set(SHIPPED)


@pytest.mark.parametrize("name", sorted(SIZES))
def test_shipped_log_sizes_scale_and_raters(name):
    frame, record = shipped_log(name)
    pairs, ratings, raters = SIZES[name]
    low, high = SHIPPED[name][2]
    assert frame[["word1", "word2"]].drop_duplicates().shape[0] == pairs
    assert len(frame) == ratings
    assert frame["rating"].between(low, high).all()
    assert frame["rating"].min() == low and frame["rating"].max() == high
    if raters is not None:
        assert frame["rater_id"].nunique() == raters
        unique = frame[frame["kind"] == "unique"]          # WordSim-353 lists money-cash twice
        assert not unique.duplicated(["rater_id", "word1", "word2"]).any()
    found = {f.name: f for f in resource_files(SHIPPED[name][0])}
    assert record["sha256"] == found[record["file"]].expected_sha256
    assert record["scale"] == [low, high]


def test_danish_judges_are_columns_and_nan_is_no_rating():
    (found,) = resource_files("danish_similarity")
    with plain_copy(found.location) as plain:
        assert detect_layout(plain) == "wide"
        imported = read_layout(plain, "wide")
        text = plain.read_text(encoding="utf-8")
    frame = imported.frame
    assert sorted(frame["_field"].unique(), key=lambda c: int(c[1:])) == [
        f"r{k}" for k in range(1, 39)]
    cells = [line.split("\t")[3:] for line in text.splitlines()[1:]]
    assert sum(c == "nan" for row in cells for c in row) == len(cells) * 38 - len(frame) == 7
    assert "7 cells 'nan': not rated" in imported.notes
    assert "equals the mean of the rater columns on 99 of 99 rows" in imported.notes[-1]
    # svær-vanskelig: judge r16 gave no rating; the published 5.6216... is the other 37's mean
    row = frame[(frame["word1"] == "svær") & (frame["word2"] == "vanskelig")]
    assert len(row) == 37 and "r16" not in set(row["_field"])
    assert row["rating"].mean() == pytest.approx(5.621621621621622, abs=1e-12)


def test_card660_gold_is_the_annotators_mean_rounded_half_up():
    pairs, scores = resource_files("card660")
    with plain_copy(pairs.location) as words, plain_copy(scores.location) as ratings:
        imported = read_aligned(words, ratings, tranche="card660")
    frame = imported.frame
    assert len(imported.published) == 660
    means = frame.groupby("_line")["rating"].apply(lambda r: Decimal(float(r.sum())) / len(r))
    gold = {line: Decimal(str(score)) for line, score, _ in imported.published}
    rounded = {line: m.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
               for line, m in means.items()}
    assert rounded == {line: g.quantize(Decimal("0.01")) for line, g in gold.items()}
    first = frame[frame["_line"] == 1]
    assert list(first["rating"]) == [4.0, 3.5, 4.0, 3.0, 4.0, 4.0, 4.0, 4.0]
    assert (first["word1"].iloc[0], first["word2"].iloc[0]) == ("Pokemon", "Pocket_Monsters")
    assert np.all(np.mod(frame["rating"] * 2, 1) == 0)          # steps of 0.5


def test_read_aligned_refuses_files_out_of_step(tmp_path):
    words = tmp_path / "dataset.tsv"
    ratings = tmp_path / "scores.tsv"
    words.write_text("cat\tdog\t2.00\nsun\tmoon\t1.50\n")
    ratings.write_text("2.00\t2.00\n")
    with pytest.raises(InputError, match=r"dataset\.tsv: 2 pairs but 1 rows of ratings"):
        read_aligned(words, ratings)
    ratings.write_text("2.00\t2.00\n1.00\t2.00\t1.50\n")
    with pytest.raises(InputError, match=r"scores\.tsv:2: expected 2 ratings as on line 1, "
                                         r"found 3"):
        read_aligned(words, ratings)
    ratings.write_text("2.00\t2.00\n1.00\tx\n")
    with pytest.raises(InputError, match=r"scores\.tsv:2, field '2': expected a number"):
        read_aligned(words, ratings)
    ratings.write_text("2.00\t2.00\n1.00\t2.00\n")
    imported = read_aligned(words, ratings)
    assert list(imported.frame["rater_id"]) == ["dataset:1", "dataset:2"] * 2


def test_wide_published_score_column_is_not_a_rater(tmp_path):
    path = tmp_path / "sims.csv"
    path.write_text("word1\tword2\tsimilarity\tr1\tr2\tr3\ncat\tdog\t3.0\t2.0\tnan\t4.0\n"
                    "sun\tmoon\t1.0\t1.0\t1.0\t1.0\n")
    imported = read_layout(path, "wide")
    assert list(imported.frame["_field"]) == ["r1", "r3", "r1", "r2", "r3"]
    assert "1 cell 'nan': not rated" in imported.notes
    assert "on 2 of 2 rows" in imported.notes[-1]


def test_vendored_gzip_holds_the_file_whole():
    for resource in ("danish_similarity", "card660"):
        for file in resource_files(resource):
            data = gzip.decompress(open(file.location, "rb").read())
            assert data.endswith(b"\n") and b"\r" not in data
