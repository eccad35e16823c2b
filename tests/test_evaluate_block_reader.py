"""Text vector files read in blocks and parsed in batches (lexgold.evaluate.vectors): the rows,
words and numbers of a line-by-line reading, whatever the block and batch sizes; odd but valid
rows; bad rows named by their line."""

import numpy as np
import pytest

from lexgold.errors import InputError
from lexgold.evaluate import vectors as vectors_module
from lexgold.evaluate.vectors import read_vectors

#: (block bytes, batch bytes): lines across blocks, one row per batch, and the defaults
SIZES = [(7, 1), (64, 40), (1 << 20, 8 << 20)]

ODD = (b"6 3\n"
       b"a 1 2 3\r\n"                 # Windows line end
       b"b 4 5 6 \n"                  # fastText's trailing space
       b"c d 7 8 9\n"                 # a word holding a space (GloVe 840B's '. . .')
       b"\n"                          # a blank line: not a row
       b"Ee 1.5 -2 3e-1\n"
       b"f 0.1 0.2 0.3")              # no line end at the end of the file
ODD_WORDS = ["a", "b", "c d", "Ee", "f"]
ODD_ROWS = [[1, 2, 3], [4, 5, 6], [7, 8, 9], [1.5, -2, 0.3], [0.1, 0.2, 0.3]]


@pytest.fixture(params=SIZES, ids=lambda size: f"block{size[0]}-batch{size[1]}")
def sizes(request, monkeypatch):
    block, batch = request.param
    monkeypatch.setattr(vectors_module, "_READ_BLOCK", block)
    monkeypatch.setattr(vectors_module, "_PARSE_BATCH", batch)
    return request.param


def _write(path, data: bytes):
    path.write_bytes(data)
    return path


def test_odd_but_valid_rows_whole_and_streamed(tmp_path, sizes):
    path = _write(tmp_path / "odd.vec", ODD)
    whole = read_vectors(path)
    assert whole.words == ODD_WORDS and whole.file_rows == 5
    np.testing.assert_array_equal(whole.matrix, np.asarray(ODD_ROWS, dtype=np.float32))
    streamed = read_vectors(path, keep=["c d", "ee", "f"], case="lower", mean=True)
    assert streamed.words == ["c d", "Ee", "f"] and streamed.rows.tolist() == [2, 3, 4]
    np.testing.assert_array_equal(streamed.matrix, whole.matrix[2:])
    np.testing.assert_allclose(streamed.mean_vector(),
                               np.asarray(ODD_ROWS, dtype=np.float32).mean(axis=0), rtol=1e-6)
    glove = read_vectors(_write(tmp_path / "odd.glove", ODD.split(b"\n", 1)[1]))
    assert glove.words == ODD_WORDS and glove.dim == 3


def test_numbers_are_numpys_float32_of_each_string(tmp_path, sizes):
    rng = np.random.default_rng(0)
    values = rng.normal(0, 1, size=(40, 5)) * 10.0 ** rng.integers(-6, 6, size=(40, 5))
    texts = [[f"{v:.17g}" if i % 2 else f"{v:.6f}" for v in row] for i, row in enumerate(values)]
    lines = [f"w{i} " + " ".join(row) for i, row in enumerate(texts)]
    path = _write(tmp_path / "v.vec", ("40 5\n" + "\n".join(lines) + "\n").encode())
    expected = np.asarray(texts, dtype=np.float32)          # numpy's rounding of each string
    np.testing.assert_array_equal(read_vectors(path).matrix, expected)
    streamed = read_vectors(path, keep=["w3", "w39"])
    np.testing.assert_array_equal(streamed.matrix, expected[[3, 39]])


@pytest.mark.parametrize("bad,message", [("1 x 3", "non-numeric vector value"),
                                         ("1 nan 3", "value nan in the vector"),
                                         ("1 1e39 3", "value inf in the vector"),
                                         ("1 2", "expected a word and 3 values")])
def test_a_bad_row_among_good_ones_is_named_by_its_line(tmp_path, sizes, bad, message):
    lines = [f"w{i} {i} {i + 1} {i + 2}" for i in range(60)]
    lines[30] = f"w30 {bad}"
    path = _write(tmp_path / "bad.vec", ("60 3\n" + "\n".join(lines) + "\n").encode())
    with pytest.raises(InputError, match=rf"bad.vec:32: {message}"):
        read_vectors(path)
    with pytest.raises(InputError, match=rf"bad.vec:32: {message}"):
        read_vectors(path, keep=["w30"])
    assert read_vectors(path, keep=["w29", "w31"]).words == ["w29", "w31"]   # not parsed


def test_the_first_bad_row_is_named_first(tmp_path, sizes):
    lines = [f"w{i} {i} {i + 1} {i + 2}" for i in range(20)]
    lines[5] = "w5 1 x 3"                  # a bad value, then a bad layout further on
    lines[12] = "w12 1 2"
    path = _write(tmp_path / "bad.vec", ("20 3\n" + "\n".join(lines) + "\n").encode())
    with pytest.raises(InputError, match=r"bad.vec:7: non-numeric"):
        read_vectors(path)


def test_a_word_that_is_not_utf8_is_named_also_when_skipped(tmp_path, sizes):
    lines = [f"w{i} 1 2".encode() for i in range(30)]
    lines[20] = b"\xffw 1 2"
    path = _write(tmp_path / "bad.vec", b"30 2\n" + b"\n".join(lines) + b"\n")
    for keep in (None, ["w1"]):
        with pytest.raises(InputError, match=r"bad.vec:22: word is not UTF-8"):
            read_vectors(path, keep=keep)


def test_limit_counts_rows_across_blocks(tmp_path, sizes):
    lines = [f"w{i} {i} 0" for i in range(50)]
    path = _write(tmp_path / "v.vec", ("50 2\n" + "\n".join(lines) + "\n").encode())
    assert read_vectors(path, limit=33).words == [f"w{i}" for i in range(33)]
    streamed = read_vectors(path, limit=33, keep=["w1", "w32", "w33"])
    assert streamed.words == ["w1", "w32"] and streamed.file_rows == 33


def test_the_input_limits_hold_for_blocks(tmp_path, sizes, monkeypatch):
    lines = [f"w{i} {i} 0" for i in range(30)]
    lines[11] = "w11 " + " ".join(["1"] * 40)           # 83 characters
    path = _write(tmp_path / "v.vec", ("30 2\n" + "\n".join(lines) + "\n").encode())
    monkeypatch.setenv("LEXGOLD_MAX_LINE", "80")
    for keep in (None, ["w1"]):
        with pytest.raises(InputError, match=r"v.vec:13: line longer than 80 characters"):
            read_vectors(path, keep=keep)
    monkeypatch.setenv("LEXGOLD_MAX_LINE", "100000")
    monkeypatch.setenv("LEXGOLD_MAX_LINES", "20")
    for keep in (None, ["w1"]):
        with pytest.raises(InputError, match=r"v.vec:21: more than 20 lines \(the limit "
                                             r"LEXGOLD_MAX_LINES\)"):
            read_vectors(path, keep=keep, format="glove")
