"""The long ratings read in parts (issue 22 item 2): the same frame as reading the file at once,
the same one-line errors naming the line, whichever part the line falls in."""

import numpy as np
import pandas as pd
import pytest

from lexgold.errors import InputError
from lexgold.ratings import long as ratings_module
from lexgold.ratings.long import CODED, check_ratings, coded, read_ratings
from lexgold.tables import read_text_chunks, read_text_table

# quotes, a comma and a newline inside quotes, unicode (a no-break space inside a word, accents,
# CJK), blanks around keys, an empty kind, an empty topic, anonymous raters ('?'), ratings
# written three ways, and key values first seen in a late part (so the parts' categories differ)
AWKWARD = (
    'rater_id,tranche,word1,word2,rating,pos,kind,topic,answered_at\n'
    'r2,1,"dog","cat",4,N,,pets,2026-01-01T00:00:01Z\n'
    ' r1 ,1,dog,cat,5.0,N,unique,,2026-01-01T00:00:02Z\n'
    'r1,10,bread,toast,1,N,checkpoint,,2026-01-01T00:00:03Z\n'
    '"r,10",2,"run,fast",walk,3,V,consistency,"say\n""hi""",2026-01-01T00:00:04Z\n'
    '?7,2,café,naïve,2.50,A,consistency,,\n'
    '?7,2,東京,大阪,6,N,duplicate,cities,2026-01-01T00:00:06Z\n'
    'r2,2,run,walk, 2 ,V,calibration,,2026-01-01T00:00:07Z\n'
    'ζ,3,anno\u00a0domini,era,0,N,unique,,2026-01-01T00:00:08Z\n'
    'r1,3,aardvark,zebra,1e0,N,unique,,2026-01-01T00:00:09Z\n')


def at_once(path):
    """``read_ratings`` before issue 22's parts: the whole file as strings, then coded."""
    frame = read_text_table(path)
    for column in CODED:
        if column in frame.columns and column != "kind":
            frame[column] = pd.Categorical(frame[column])
    return coded(check_ratings(frame, source=path))


def assert_same_frame(got, want):
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    assert list(got.columns) == list(want.columns) and got.attrs == want.attrs
    for column in got.columns:
        assert got[column].dtype == want[column].dtype, column
        if isinstance(want[column].dtype, pd.CategoricalDtype):
            assert got[column].cat.categories.equals(want[column].cat.categories), column
            assert np.array_equal(got[column].cat.codes, want[column].cat.codes), column


@pytest.mark.parametrize("rows", [1, 2, 4, 100])
def test_read_in_parts_gives_the_frame_read_at_once(tmp_path, monkeypatch, rows):
    path = tmp_path / "ratings.csv"
    path.write_text(AWKWARD, encoding="utf-8")
    monkeypatch.setattr(ratings_module, "CHUNK_ROWS", rows)
    frame = read_ratings(path)
    assert_same_frame(frame, at_once(path))
    assert frame["rater_id"].tolist() == ["r2", "r1", "r1", "r,10", "?7", "?7", "r2", "ζ", "r1"]
    assert list(frame["rater_id"].cat.categories) == ["?7", "r,10", "r1", "r2", "ζ"]
    assert frame["word1"].iloc[3] == "run,fast" and frame["word1"].iloc[7] == "anno\u00a0domini"
    assert frame["topic"].tolist() == ["pets", "", "", 'say\n"hi"', "", "cities", "", "", ""]
    assert frame["rating"].tolist() == [4.0, 5.0, 1.0, 3.0, 2.5, 6.0, 2.0, 0.0, 1.0]
    assert frame["kind"].iloc[0] == "unique" and frame["answered_at"].iloc[4] == ""


def test_read_in_parts_gives_the_frame_read_at_once_on_a_simulated_study(tmp_path, monkeypatch):
    from lexgold.crowd.simulate import simulate_ratings, usf_pairs

    rng = np.random.default_rng(7)
    ratings, _ = simulate_ratings(usf_pairs(60, rng=rng), "simlex", rng=rng,
                                  raters_per_tranche=6)
    path = tmp_path / "ratings.csv.gz"                  # compressed files are read in parts too
    ratings.to_csv(path, index=False)
    monkeypatch.setattr(ratings_module, "CHUNK_ROWS", 97)
    assert_same_frame(read_ratings(path), at_once(path))


@pytest.mark.parametrize("rows", [2, 100])
def test_chosen_columns_are_the_whole_reads_columns_the_rest_dropped(tmp_path, monkeypatch,
                                                                     rows):
    path = tmp_path / "ratings.csv"
    path.write_text(AWKWARD.replace("answered_at\n", "answered_at,platform\n", 1)
                    .replace("Z\n", "Z,prolific\n"), encoding="utf-8")
    monkeypatch.setattr(ratings_module, "CHUNK_ROWS", rows)
    whole = read_ratings(path)
    some = read_ratings(path, columns=("kind", "answered_at", "platform", "absent"))
    assert list(some.columns) == ["rater_id", "tranche", "word1", "word2", "rating", "kind",
                                  "answered_at", "platform"]
    for column in ("answered_at", "platform"):          # held as codes, the same strings
        assert isinstance(some[column].dtype, pd.CategoricalDtype)
        assert some[column].astype(object).tolist() == whole[column].astype(object).tolist()
    assert_same_frame(some[list(some.columns[:6])], whole[list(some.columns[:6])])
    # kind is always there after the check (empty: unique)
    assert list(read_ratings(path, columns=()).columns) == [*ratings_module.REQUIRED, "kind"]


@pytest.mark.parametrize(("bad", "message"), [
    ("r9,1,dog,cat,high,N,x", r":6, field 'rating': expected a number, found 'high'"),
    ("r9,1,dog,cat,4,N,x,more", r":6: expected 7 comma-separated fields \(as the header has\), "
                                r"found 8"),
])
def test_a_dropped_column_leaves_the_errors_as_they_were(tmp_path, monkeypatch, bad, message):
    rows = [f"r{i},1,dog{i},cat,{i % 7},N,x" for i in range(2, 8)]
    rows[4] = bad
    path = tmp_path / "ratings.csv"
    path.write_text("rater_id,tranche,word1,word2,rating,pos,platform\n" + "\n".join(rows)
                    + "\n", encoding="utf-8")
    monkeypatch.setattr(ratings_module, "CHUNK_ROWS", 2)
    for columns in (None, ratings_module.COST_COLUMNS):
        with pytest.raises(InputError, match=r"ratings\.csv" + message):
            read_ratings(path, columns=columns)


@pytest.mark.parametrize(("line", "bad", "message"), [
    (2, "r9,1,dog,cat,high,N,", r":2, field 'rating': expected a number, found 'high'"),
    (9, "r9,1,dog,cat,high,N,", r":9, field 'rating': expected a number, found 'high'"),
    (10, "  ,1,dog,cat,4,N,", r":10, field 'rater_id': empty value"),
    (8, "r9,1,dog,,4,N,", r":8, field 'word2': empty value"),
    (7, "r9,1,dog,cat,inf,N,", r":7, field 'rating': expected a number, found 'inf'"),
    (11, "r9,1,dog,cat,4,N,sometimes", r":11, field 'kind': expected one of unique, "),
])
def test_bad_input_names_its_line_in_any_part(tmp_path, monkeypatch, line, bad, message):
    rows = [f"r{i},1,dog{i},cat,{i % 7},N," for i in range(2, 12)]      # lines 2-11
    rows[line - 2] = bad
    path = tmp_path / "ratings.csv"
    path.write_text("rater_id,tranche,word1,word2,rating,pos,kind\n" + "\n".join(rows) + "\n",
                    encoding="utf-8")
    monkeypatch.setattr(ratings_module, "CHUNK_ROWS", 3)
    with pytest.raises(InputError, match=r"ratings\.csv" + message) as err:
        read_ratings(path)
    assert "\n" not in str(err.value)


def test_a_ragged_row_in_a_late_part_is_one_line_naming_the_line(tmp_path, monkeypatch):
    path = tmp_path / "ratings.csv"
    path.write_text("rater_id,tranche,word1,word2,rating\n" + "r1,1,a,b,1\n" * 6
                    + "r1,1,a,b,1,extra\n", encoding="utf-8")
    monkeypatch.setattr(ratings_module, "CHUNK_ROWS", 2)
    with pytest.raises(InputError) as caught:
        read_ratings(path)
    assert str(caught.value) == (f"{path}:8: expected 5 comma-separated fields (as the header "
                                 f"has), found 6 (another delimiter, or a value with an "
                                 f"unquoted comma?)")


@pytest.mark.parametrize("text, line, message", [
    ("word1;word2;rating\nold;new;1\nx;y;2,5\n", 3, "expected 1 comma-separated field (as "
     "the header has), found 2"),
    ("rater_id,tranche,word1,word2,rating\nr1,1,a,\"b,1\nr1,1,c,d,2\n", 2,
     "a quoted value is never closed (a stray double quote?)"),
])
def test_pandas_parser_errors_are_said_in_lexgolds_words(tmp_path, text, line, message):
    path = tmp_path / "ratings.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_ratings(path)
    said = str(caught.value)
    assert said.startswith(f"{path}:{line}: {message}") and "\n" not in said
    assert "C error" not in said and "tokenizing" not in said


def test_no_rows_and_not_utf8_are_still_named(tmp_path, monkeypatch):
    monkeypatch.setattr(ratings_module, "CHUNK_ROWS", 2)
    path = tmp_path / "ratings.csv"
    path.write_text("rater_id,tranche,word1,word2,rating\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"ratings\.csv:2: no ratings"):
        read_ratings(path)
    path.write_bytes(b"rater_id,tranche,word1,word2,rating\n" + b"r1,1,a,b,1\n" * 5
                     + b"r1,1,\xff,b,1\n")
    with pytest.raises(InputError, match=r"ratings\.csv: not UTF-8 text"):
        read_ratings(path)
    path.write_text("", encoding="utf-8")
    with pytest.raises(InputError, match=r"ratings\.csv: empty file: expected a header line"):
        read_ratings(path)


def test_read_text_chunks_gives_the_table_in_parts(tmp_path):
    path = tmp_path / "table.csv"
    path.write_text(" a ,b\n1,\n2,x\n3,y\n", encoding="utf-8")
    parts = list(read_text_chunks(path, rows=2))
    assert [len(p) for p in parts] == [2, 1]
    assert [list(p.columns) for p in parts] == [["a", "b"]] * 2
    pd.testing.assert_frame_equal(pd.concat(parts), read_text_table(path))
    with pytest.raises(InputError, match="file not found"):
        list(read_text_chunks(tmp_path / "none.csv", rows=2))
