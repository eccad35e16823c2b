"""Compressed inputs (.gz, .bz2, .xz) read as the plain files by every reader; bad bytes and
damaged archives are one-line errors."""

import bz2
import gzip
import json
import lzma
from pathlib import Path

import gensim
import numpy as np
import pytest
from click.testing import CliRunner
from gensim.models import Word2Vec

from lexgold.cli import cli
from lexgold.compression import open_input
from lexgold.errors import InputError
from lexgold.evaluate.analogy import read_questions
from lexgold.evaluate.gold import read_gold
from lexgold.evaluate.sdt import read_corpus
from lexgold.evaluate.vectors import read_vectors
from lexgold.tables import read_text_table

DATA = Path(gensim.__file__).parent / "test" / "test_data"
COMPRESS = {".gz": gzip.compress, ".bz2": bz2.compress, ".xz": lzma.compress}


def _compressed(source: Path, folder: Path, suffix: str) -> Path:
    target = folder / (source.name + suffix)
    target.write_bytes(COMPRESS[suffix](source.read_bytes()))
    return target


@pytest.fixture(scope="module")
def lee_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("compressed")
    sentences = [line.lower().split() for line in (DATA / "lee_background.cor").open()]
    kv = Word2Vec(sentences, vector_size=12, min_count=5, seed=2, workers=1, epochs=1).wv
    text, binary = folder / "lee.vec", folder / "lee.bin"
    kv.save_word2vec_format(str(text))
    kv.save_word2vec_format(str(binary), binary=True)
    return folder, text, binary


@pytest.mark.parametrize("suffix", list(COMPRESS))
@pytest.mark.parametrize("kind", ["text", "binary"])
def test_compressed_vectors_read_as_plain(lee_files, suffix, kind):
    folder, text, binary = lee_files
    plain = text if kind == "text" else binary
    packed = _compressed(plain, folder, suffix)
    expected, got = read_vectors(plain), read_vectors(packed)
    assert got.words == expected.words
    np.testing.assert_array_equal(got.matrix, expected.matrix)
    streamed = read_vectors(packed, keep=["the", "government"])
    np.testing.assert_array_equal(streamed.matrix, expected.matrix[[expected.find("the"),
                                                                    expected.find("government")]])


def test_gold_questions_ratings_and_corpus_compressed(tmp_path):
    gold = _compressed(DATA / "simlex999.txt", tmp_path, ".gz")
    assert read_gold(gold).equals(read_gold(DATA / "simlex999.txt"))
    questions = _compressed(DATA / "questions-words.txt", tmp_path, ".xz")
    assert read_questions(questions).equals(read_questions(DATA / "questions-words.txt"))
    ratings = tmp_path / "ratings.csv"
    ratings.write_text("rater_id,tranche,word1,word2,rating\nr1,1,old,new,1.5\nr2,1,old,new,2\n",
                       encoding="utf-8-sig")
    packed = _compressed(ratings, tmp_path, ".bz2")
    assert read_text_table(packed).equals(read_text_table(ratings))
    # the corpus exactly as gensim ships it, next to its uncompressed copy
    assert (read_corpus(DATA / "head500.noblanks.cor.bz2", 2)
            == read_corpus(DATA / "head500.noblanks.cor", 2))


def test_cli_evaluate_compressed_gold_and_vectors_same_json(lee_files, tmp_path):
    folder, text, _ = lee_files
    args = ["--json", "--bootstrap", "50"]
    plain = CliRunner().invoke(cli, ["evaluate", "--gold", str(DATA / "wordsim353.tsv"),
                                     "--vectors", str(text), *args])
    packed = CliRunner().invoke(cli, [
        "evaluate", "--gold", str(_compressed(DATA / "wordsim353.tsv", tmp_path, ".bz2")),
        "--vectors", str(_compressed(text, tmp_path, ".gz")), *args])
    assert plain.exit_code == 0 and packed.exit_code == 0, packed.output
    first, second = json.loads(plain.stdout), json.loads(packed.stdout)   # warnings: stderr
    for result in (first, second):
        del result["gold"], result["vectors"]
    assert first == second


def test_not_utf8_gold_is_one_line_error(lee_files, tmp_path):
    gold = tmp_path / "latin1.txt.gz"
    gold.write_bytes(gzip.compress("caf\u00e9 bar 3\ncat dog 4\n".encode("latin-1")))
    out = CliRunner().invoke(cli, ["evaluate", "--gold", str(gold), "--vectors",
                                   str(lee_files[1])])
    assert out.exit_code == 1
    lines = out.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"Error: {gold}: not UTF-8 text")


def test_truncated_archive_is_an_input_error(lee_files, tmp_path):
    _, text, _ = lee_files
    data = gzip.compress(text.read_bytes())
    broken = tmp_path / "broken.vec.gz"
    broken.write_bytes(data[:len(data) // 2])
    with pytest.raises(InputError, match=r"broken.vec.gz: damaged or truncated gzip file"):
        read_vectors(broken, keep=["the"])
    garbage = tmp_path / "garbage.txt.bz2"
    garbage.write_bytes(b"not bzip2 at all")
    with pytest.raises(InputError, match=r"garbage.txt.bz2: damaged or truncated bzip2 file"):
        read_gold(garbage)


def test_missing_file_is_still_a_file_error(tmp_path):
    with pytest.raises(FileNotFoundError):
        with open_input(tmp_path / "absent.txt.gz"):
            pass
