"""Security round 4 (issue 35), the inputs: protocol bounds, word length and characters,
finite numbers, bombs and special files, ``--out`` through symbolic links, ragged CSV rows
(docs/hardening.md, "Round 4: inputs"). Bombs are made lazily and small: gzip streams of
zeros, or a lowered limit (the documented ``LEXGOLD_MAX_*`` variables)."""

import gzip
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from lexgold.cli import cli
from test_annotate_app import simlex_pairs  # noqa: F401  (fixture)

pytestmark = pytest.mark.slow            # hardening: servers, faults and fuzzing of the site

#: 2-d vectors of a few words and a gold standard over them
VECTORS = "cat 1 0\ndog 0.9 0.1\ncar 0 1\nbus 0.1 0.9\ntree 0.7 0.7\nsun -1 0.2\n"
GOLD = "cat dog 9\ncar bus 8\ncat car 2\ntree sun 1\ndog bus 3\n"


#: the ``lexgold`` command in a subprocess of this Python
LEXGOLD = "from lexgold.cli import cli; cli(prog_name='lexgold')"
#: how long a command may take before it counts as waiting on the FIFO: the refusal itself takes
#: a second or two, far more on a loaded machine, while the old behaviour waited forever
HANG_S = 120


def run(*args, env=None):
    return CliRunner().invoke(cli, [str(a) for a in args], env=env)


def one_error(result) -> str:
    """The command failed with exit 1 and one line ``Error: ...`` (no traceback)."""
    assert result.exit_code == 1, (result.exit_code, result.output, result.exception)
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    return lines[0]


@pytest.fixture
def files(tmp_path):
    (tmp_path / "vectors.txt").write_text(VECTORS, encoding="utf-8")
    (tmp_path / "gold.txt").write_text(GOLD, encoding="utf-8")
    return tmp_path / "vectors.txt", tmp_path / "gold.txt"


def gzip_stream(path: Path, block: bytes, times: int) -> Path:
    """A gzip file holding ``block`` ``times`` times, written block by block."""
    with gzip.open(path, "wb", compresslevel=1) as out:
        for _ in range(times):
            out.write(block)
    return path


# -- item 8: finite numbers ---------------------------------------------------------------------

@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e39"])
def test_a_vector_row_with_nan_or_inf_is_an_error_naming_the_line(files, value):
    vectors, gold = files
    vectors.write_text(VECTORS.replace("car 0 1", f"car 0 {value}"), encoding="utf-8")
    line = one_error(run("evaluate", "--gold", gold, "--vectors", vectors, "--bootstrap", "0"))
    assert line.startswith(f"Error: {vectors}:3: value ") and "finite" in line, line


def test_a_binary_vector_row_with_nan_is_an_error_naming_the_word(tmp_path, files):
    import numpy as np
    _, gold = files
    path = tmp_path / "vectors.bin"
    rows = [(w, np.array(v, dtype="<f4")) for w, *v in map(str.split, VECTORS.splitlines())]
    rows[2] = ("car", np.array([0, np.nan], dtype="<f4"))
    path.write_bytes(b"6 2\n" + b"".join(w.encode() + b" " + v.tobytes() + b"\n"
                                         for w, v in rows))
    line = one_error(run("evaluate", "--gold", gold, "--vectors", path, "--bootstrap", "0"))
    assert "word 3 ('car')" in line and "nan" in line, line


@pytest.mark.parametrize("score", ["nan", "inf"])
def test_a_gold_score_nan_is_an_error_naming_the_line(files, score):
    vectors, gold = files
    gold.write_text(GOLD.replace("cat car 2", f"cat car {score}"), encoding="utf-8")
    line = one_error(run("evaluate", "--gold", gold, "--vectors", vectors, "--bootstrap", "0"))
    assert line == f"Error: {gold}:3, field 'score': score {score!r} is not a finite number"


# -- item 10: bombs and special files -----------------------------------------------------------

def test_a_fifo_as_gold_or_vectors_is_refused_without_waiting(files, tmp_path):
    """Before: opening the FIFO blocked until a writer came (forever); the subprocess bounds
    the wait so that the old behaviour fails instead of hanging the suite."""
    vectors, gold = files
    fifo = tmp_path / "pipe.txt"
    os.mkfifo(fifo)
    for args in (("--gold", fifo, "--vectors", vectors), ("--gold", gold, "--vectors", fifo)):
        done = subprocess.run([sys.executable, "-c", LEXGOLD, "evaluate", *map(str, args),
                               "--bootstrap", "0"], capture_output=True, text=True, timeout=HANG_S,
                              env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])})
        assert done.returncode == 1, done.stderr
        assert done.stderr.strip() == (f"Error: {fifo}: a named pipe (FIFO), not a regular "
                                       f"file: lexgold reads files only"), done.stderr


def test_dev_zero_as_gold_is_refused(files):
    vectors, _ = files
    line = one_error(run("evaluate", "--gold", "/dev/zero", "--vectors", vectors))
    assert line == "Error: /dev/zero: a device, not a regular file: lexgold reads files only"


def test_a_gold_bomb_stops_at_the_whole_file_limit(files, tmp_path):
    """A gzip of valid gold rows that decompresses past ``LEXGOLD_MAX_WHOLE_BYTES`` (lowered
    to 1 MB here; 256 MB by default): before, the whole text was read into memory first."""
    vectors, _ = files
    bomb = gzip_stream(tmp_path / "gold.txt.gz", GOLD.encode() * 2000, 40)      # 4 MB
    line = one_error(run("evaluate", "--gold", bomb, "--vectors", vectors,
                         env={"LEXGOLD_MAX_WHOLE_BYTES": "1000000"}))
    assert line.startswith(f"Error: {bomb}:") and "over the limit LEXGOLD_MAX_WHOLE_BYTES" in line


def test_an_endless_vector_line_stops_at_the_line_limit(files, tmp_path):
    """A vectors .gz whose first line never ends (8 MB of zeros, 8 kB compressed), at the
    default limits: before, the line was read whole, then parsed."""
    _, gold = files
    bomb = gzip_stream(tmp_path / "vectors.txt.gz", b"0" * (1 << 20), 8)
    line = one_error(run("evaluate", "--gold", gold, "--vectors", bomb,
                         "--vectors-format", "glove"))
    assert line == (f"Error: {bomb}:1: line longer than 1,048,576 characters (the limit "
                    f"LEXGOLD_MAX_LINE)")


def test_a_vector_header_announcing_a_billion_words_is_refused(files, tmp_path):
    _, gold = files
    path = tmp_path / "vectors.bin"
    path.write_bytes(b"1000000000 2\ncat " + b"\0" * 8)
    line = one_error(run("evaluate", "--gold", gold, "--vectors", path))
    assert "header announces 1,000,000,000 words: over the limit LEXGOLD_MAX_LINES" in line


def test_ratings_import_of_a_gzip_with_too_many_rows_stops_at_the_line_limit(tmp_path):
    """A gzip of valid long-format rows past ``LEXGOLD_MAX_LINES`` (lowered to 1,000 here;
    10 M by default; the probe's 7 MB file held 24 M rows): one line naming the limit, no
    output written."""
    rows = b"".join(b"r%d,1,cat,dog,%d\n" % (i, i % 7) for i in range(500))
    bomb = tmp_path / "ratings.csv.gz"
    with gzip.open(bomb, "wb") as out:
        out.write(b"rater_id,tranche,word1,word2,rating\n")
        for _ in range(6):
            out.write(rows)
    line = one_error(run("ratings", "import", bomb, "--out", tmp_path / "long.csv",
                         env={"LEXGOLD_MAX_LINES": "1000"}))
    assert line == f"Error: {bomb}:1001: more than 1,000 lines (the limit LEXGOLD_MAX_LINES)"
    assert not (tmp_path / "long.csv").exists()


def test_a_fifo_is_refused_by_ratings_import_and_process(tmp_path):
    fifo = tmp_path / "ratings.csv"
    os.mkfifo(fifo)
    for args in (("ratings", "import", fifo, "--out", tmp_path / "long.csv"),
                 ("process", fifo, "--protocol", "plain", "--out", tmp_path / "out")):
        done = subprocess.run([sys.executable, "-c", LEXGOLD, *map(str, args)],
                              capture_output=True, text=True, timeout=HANG_S,
                              env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])})
        assert done.returncode == 1 and "a named pipe (FIFO), not a regular file" in \
            done.stderr, done.stderr


# -- items 7 and 9: words -----------------------------------------------------------------------

LONG = "rater_id,tranche,word1,word2,rating\n" + "".join(
    f"{rater},1,{w1},{w2},{r}\n" for rater, shift in (("a", 0), ("b", 1), ("c", -1))
    for w1, w2, r in (("cat", "dog", 5 + shift), ("sun", "moon", 2 + shift),
                      ("car", "bus", 4 + shift)))

#: a word holding each refused character, and what the error says
BAD_WORDS = {"nul": ("ca\x00t", "holds U+0000"),
             "rlo": ("ca\u202et", "holds U+202E RIGHT-TO-LEFT OVERRIDE"),
             "zwsp": ("ca\u200bt", "holds U+200B ZERO WIDTH SPACE"),
             "long": ("w" * 500_000, "word longer than 300 characters (500,000)")}


@pytest.mark.parametrize("case", BAD_WORDS)
def test_ratings_import_and_process_refuse_bad_words_naming_the_line(tmp_path, case):
    word, message = BAD_WORDS[case]
    long = tmp_path / "long.csv"
    long.write_text(LONG.replace("b,1,sun,moon", f"b,1,sun,{word}"), encoding="utf-8")
    per_rater = tmp_path / "alice.txt"
    per_rater.write_text(f"cat\tdog\t5\nsun\t{word}\t3\n", encoding="utf-8")
    expected = {long: f"Error: {long}:6, field 'word2': {message}",
                per_rater: f"Error: {per_rater}:2, field 'word2': {message}"}
    for path in (long, per_rater):
        line = one_error(run("ratings", "import", path, "--out", tmp_path / "out.csv"))
        assert line.startswith(expected[path]), line
        assert not (tmp_path / "out.csv").exists()
    line = one_error(run("process", long, "--protocol", "plain", "--out", tmp_path / "rel"))
    assert line.startswith(expected[long]), line


@pytest.mark.parametrize("case", ["nul", "rlo", "zwsp"])
def test_pair_files_and_study_create_refuse_bad_words(tmp_path, case):
    from lexgold.errors import InputError
    from lexgold.pairfiles import read_pair_table

    word, message = BAD_WORDS[case]
    csv_pairs = tmp_path / "pairs.csv"
    csv_pairs.write_text(f"word1,word2,pos\ncat,dog,N\n{word},mouse,N\n", encoding="utf-8")
    published = tmp_path / "simverb.txt"
    published.write_text(f"cat\tdog\tN\t7\tSYNONYMS\n{word}\tmouse\tN\t2\tNONE\n",
                         encoding="utf-8")
    for path in (csv_pairs, published):
        with pytest.raises(InputError) as err:
            read_pair_table(path)
        assert str(err.value).startswith(f"{path}:3" if path == csv_pairs else f"{path}:2")
        assert message in str(err.value)
    study = tmp_path / "study.sqlite"
    line = one_error(run("study", "create", "--protocol", "simlex999", "--pairs", csv_pairs,
                         "--db", study))
    assert line.startswith(f"Error: {csv_pairs}:3, field 'word1': {message}"), line
    assert not study.exists()


def test_word_joiners_that_scripts_need_are_kept(tmp_path):
    """Persian writes ZWNJ (U+200C) inside words; emoji and Indic conjuncts use ZWJ."""
    from lexgold.pairfiles import read_pair_table

    persian = "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"
    path = tmp_path / "pairs.csv"
    path.write_text(f"word1,word2\n{persian},\u0622\u0628\n", encoding="utf-8")
    assert read_pair_table(path)["word1"].tolist() == [persian]


# -- item 4: protocol bounds --------------------------------------------------------------------

def protocol_with(tmp_path, **values):
    from test_annotate_app import protocol_variant
    return protocol_variant(tmp_path, "simlex", **values)


@pytest.mark.parametrize("key, value, allowed", [
    ("claim_timeout_s", 10 ** 15, "1 <= x <= 2,592,000"),
    ("tranches", 10 ** 9, "0 <= x <= 10,000"),
    ("raters_per_tranche", 2_000_000, "1 <= x <= 10,000"),
    ("unique_per_tranche", 10 ** 6, "1 <= x <= 10,000"),
])
def test_study_create_refuses_protocol_values_over_their_bound_and_writes_nothing(
        tmp_path, simlex_pairs, key, value, allowed):
    study = tmp_path / "study.sqlite"
    line = one_error(run("study", "create", "--protocol", protocol_with(tmp_path, **{key: value}),
                         "--pairs", simlex_pairs, "--db", study))
    assert line == (f"Error: {tmp_path / 'simlex-variant.toml'}: [study] {key}: allowed "
                    f"{allowed}, given {value}")
    assert not study.exists() and not (tmp_path / "study.sqlite.key").exists()


def test_study_create_refuses_more_places_than_its_bound(tmp_path, simlex_pairs):
    """Each key within its bound, the product not: 200 tranches x 10,000 raters."""
    study = tmp_path / "study.sqlite"
    line = one_error(run("study", "create", "--protocol",
                         protocol_with(tmp_path, tranches=200, raters_per_tranche=10_000),
                         "--pairs", simlex_pairs, "--db", study))
    assert "= 2,000,000 places: at most 1,000,000" in line and "raters_per_tranche" in line
    assert not study.exists()


def test_every_protocol_number_is_finite_and_bounded():
    """A number without a bound of its own (a [build] count, say) is at most CEILING; inf
    and nan are refused everywhere."""
    import dataclasses

    from lexgold.protocols.schema import CEILING, ProtocolError, parse_section

    @dataclasses.dataclass
    class Section:
        count: int = 1
        share: float = 0.5

    for key, value in (("count", CEILING + 1), ("share", float("inf")), ("share", 10 ** 400)):
        with pytest.raises(ProtocolError) as err:
            parse_section(Section, {"_path": "p.toml", "build": {key: value}}, "build")
        assert str(err.value).startswith(f"p.toml: [build] {key}: allowed ")
        assert "of size at most 1,000,000,000" in str(err.value)
    assert parse_section(Section, {"build": {"count": CEILING}}, "build").count == CEILING


# -- item 11: --out through a link, a ragged row ------------------------------------------------

def test_out_refuses_a_planted_symbolic_link_and_leaves_its_target(tmp_path):
    ratings = tmp_path / "long.csv"
    ratings.write_text(LONG, encoding="utf-8")
    target = tmp_path / "victim.txt"
    target.write_text("keep me\n", encoding="utf-8")
    link = tmp_path / "out.csv"
    link.symlink_to(target)
    result = run("ratings", "import", ratings, "--out", link)
    assert result.exit_code == 2 and "is a symbolic link" in result.output, result.output
    folder = tmp_path / "release"
    folder.mkdir()
    (folder / "gold.csv").symlink_to(target)
    result = run("process", ratings, "--protocol", "plain", "--out", folder)
    assert result.exit_code == 2 and f"{folder / 'gold.csv'} is a symbolic link" in \
        result.output, result.output
    assert target.read_text(encoding="utf-8") == "keep me\n"


def test_a_ragged_csv_row_is_one_line_without_a_pandas_series(tmp_path):
    """A first row with one field more than the header: pandas took the first column as the
    row index, and the error printed the column as a Series ('a    x', 'Name: rating')."""
    ratings = tmp_path / "ragged.csv"
    ratings.write_text("rater_id,tranche,word1,word2,rating\na,1,cat,dog,5,x\n"
                       "a,1,cat,cow,4,y\n", encoding="utf-8")
    for args in (("process", ratings, "--protocol", "plain", "--out", tmp_path / "out"),
                 ("ratings", "import", ratings, "--out", tmp_path / "long.csv")):
        line = one_error(run(*args))
        assert line == (f"Error: {ratings}:2: the first row has 6 fields under a header of 5: "
                        f"a field too many (a stray delimiter?)")
