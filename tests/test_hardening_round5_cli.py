"""Security round 5 (issue 48), the command line: file inputs through the bounded opener
(item 5), one line instead of a traceback (item 6), sidecars beside ``--out`` refusing planted
symbolic links (item 7). A full disk is simulated, never made: SQLite's ``max_page_count`` set
on every connection of the study, or a writer that raises ``OSError(ENOSPC)``."""

import errno
import itertools
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from lexgold.cli import cli

pytestmark = pytest.mark.slow            # hardening: faults and fuzzing of the command line

#: the ``lexgold`` command in a subprocess of this Python (a FIFO would block one in-process)
LEXGOLD = "from lexgold.cli import cli; cli(prog_name='lexgold')"
WORDS = ["cat", "dog", "car", "bus", "tree", "sun", "moon", "star", "lake", "hill"]
#: 5,000 nested ``[``: Python's TOML and JSON parsers recurse once per bracket
NESTED = "[" * 5000


def run(*args, env=None):
    return CliRunner().invoke(cli, [str(a) for a in args], env=env)


def one_error(result, status: int = 1) -> str:
    """The command failed with ``status`` and one line ``Error: ...`` (no traceback)."""
    assert result.exit_code == status, (result.exit_code, result.output, result.exception)
    lines = result.output.strip().splitlines()
    assert lines[-1].startswith("Error: "), result.output
    assert "Traceback" not in result.output, result.output
    if status == 1:
        assert len(lines) == 1, result.output
    return lines[-1]


def in_subprocess(*args, timeout: float = 60):
    """``lexgold ARGS`` in a subprocess with a time limit: the old behaviour of a FIFO (waiting
    for a writer forever) fails the test instead of hanging the suite."""
    return subprocess.run([sys.executable, "-c", LEXGOLD, *map(str, args)], capture_output=True,
                          text=True, timeout=timeout,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])})


@pytest.fixture(scope="module")
def study_file(tmp_path_factory):
    """A small plain study (45 pairs), made once; tests copy it."""
    folder = tmp_path_factory.mktemp("study")
    pairs = folder / "pairs.csv"
    pairs.write_text("word1,word2,pos\n" + "".join(
        f"{a},{b},N\n" for a, b in itertools.combinations(WORDS, 2)), encoding="utf-8")
    result = run("study", "create", "--protocol", "plain", "--pairs", pairs,
                 "--db", folder / "study.sqlite")
    assert result.exit_code == 0, result.output
    return folder / "study.sqlite", pairs


@pytest.fixture
def study(study_file, tmp_path):
    path = tmp_path / "study.sqlite"
    shutil.copy(study_file[0], path)
    return path


def log_csv(path: Path, ratings: dict | None = None, *, scale: bool = False) -> Path:
    """A long-format log of 6 raters x 3 pairs on 0-6; ``ratings``: {line: value} replaced."""
    rows = ["rater_id,tranche,word1,word2,rating" + (",scale_min,scale_max" if scale else "")]
    for rater in range(6):
        for number, (a, b) in enumerate(itertools.combinations(WORDS[:3], 2)):
            rows.append(f"r{rater},1,{a},{b},{(rater + number) % 7}" + (",0,6" if scale else ""))
    for line, value in (ratings or {}).items():
        cells = rows[line - 1].split(",")
        cells[4] = value
        rows[line - 1] = ",".join(cells)
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


# -- item 5: --consent, --topics and the other file inputs through the bounded opener -----------

def test_consent_from_a_fifo_is_refused_without_waiting(study_file, tmp_path):
    fifo = tmp_path / "consent.toml"
    os.mkfifo(fifo)
    done = in_subprocess("study", "create", "--protocol", "plain", "--pairs", study_file[1],
                         "--db", tmp_path / "new.sqlite", "--consent", fifo)
    assert done.returncode == 1, done.stderr
    assert done.stderr.strip() == (f"Error: {fifo}: a named pipe (FIFO), not a regular file: "
                                   f"lexgold reads files only"), done.stderr


def test_consent_from_a_device_is_refused(study_file, tmp_path):
    line = one_error(run("study", "create", "--protocol", "plain", "--pairs", study_file[1],
                         "--db", tmp_path / "new.sqlite", "--consent", "/dev/zero"))
    assert line == "Error: /dev/zero: a device, not a regular file: lexgold reads files only"
    assert not (tmp_path / "new.sqlite").exists()


def test_consent_nested_5000_deep_is_one_line(study_file, tmp_path):
    consent = tmp_path / "consent.toml"
    consent.write_text(f"contact = {NESTED}\n", encoding="utf-8")
    line = one_error(run("study", "create", "--protocol", "plain", "--pairs", study_file[1],
                         "--db", tmp_path / "new.sqlite", "--consent", consent))
    assert line == (f"Error: {consent}: not a valid TOML consent file: arrays or tables nested "
                    f"too deeply")


def test_topics_nested_5000_deep_or_a_fifo_is_one_line(tmp_path):
    from lexgold.builder.tr9856_topics import read_topics
    from lexgold.errors import InputError

    topics = tmp_path / "topics.toml"
    topics.write_text(f"[topics.x]\ns_def = {NESTED}\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"topics\.toml: not a valid TOML topics file: arrays "
                                         r"or tables nested too deeply"):
        read_topics(topics)
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match=r"fifo\.toml: a named pipe \(FIFO\)"):
        read_topics(fifo)                  # the old read_text waited here for a writer


def test_a_protocol_file_nested_5000_deep_is_one_line(study_file, tmp_path):
    protocol = tmp_path / "deep.toml"
    protocol.write_text(f"name = {NESTED}\n", encoding="utf-8")
    line = one_error(run("study", "create", "--protocol", protocol, "--pairs", study_file[1],
                         "--db", tmp_path / "new.sqlite"))
    assert line == (f"Error: {protocol}: not a valid TOML protocol file: arrays or tables "
                    f"nested too deeply")


@pytest.mark.parametrize("reader", ["json", "toml"])
def test_the_bounded_readers_refuse_size_and_depth(tmp_path, monkeypatch, reader):
    from lexgold.compression import read_input_json, read_input_toml
    from lexgold.errors import InputError

    read = read_input_json if reader == "json" else read_input_toml
    path = tmp_path / f"f.{reader}"
    path.write_text(NESTED if reader == "json" else f"a = {NESTED}", encoding="utf-8")
    with pytest.raises(InputError, match="nested too deeply"):
        read(path)
    path.write_text('{"a": "' + "x" * 200 + '"}' if reader == "json" else
                    'a = "' + "x" * 200 + '"', encoding="utf-8")
    monkeypatch.setenv("LEXGOLD_MAX_WHOLE_BYTES", "100")
    with pytest.raises(InputError, match="over the limit LEXGOLD_MAX_WHOLE_BYTES"):
        read(path)


def test_a_key_file_that_is_a_fifo_is_refused_without_waiting(study, tmp_path):
    fifo = tmp_path / "key"
    os.mkfifo(fifo, 0o600)
    done = in_subprocess("study", "preview-link", study, "--secret-key-file", fifo)
    assert done.returncode == 1, done.stderr
    assert "a named pipe (FIFO), not a regular file" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


# -- item 6: one line instead of a traceback ---------------------------------------------------

@pytest.mark.parametrize("args, expected", [
    (("--scale", "0", "1e308"), "Invalid value for '--scale': MIN must be below MAX, both "
                                "finite and within -1,000,000..1,000,000; given 0 1e+308"),
    (("--step", "nan"), "Invalid value for '--step': 'nan' is not a finite number"),
    (("--step", "inf"), "Invalid value for '--step': 'inf' is not a finite number"),
    (("--replicates", "101"), "Invalid value for '--replicates': 101 is not in the range "
                              "1<=x<=100."),
])
def test_crowd_fit_refuses_absurd_numbers_as_usage_errors(tmp_path, args, expected):
    log = log_csv(tmp_path / "log.csv")
    line = one_error(run("crowd", "fit", log, "--out", tmp_path / "fit.json", *args), status=2)
    assert line == f"Error: {expected}"
    assert not (tmp_path / "fit.json").exists()


@pytest.mark.parametrize("scale", [(), ("--scale", "0", "6")])
def test_crowd_fit_refuses_a_step_that_makes_too_many_scale_points(tmp_path, scale):
    # --step 1e-9 tried to allocate 983 GiB (6e9 points); the scale is the declared or the
    # one read from the ratings (0-6 here)
    log = log_csv(tmp_path / "log.csv")
    line = one_error(run("crowd", "fit", log, "--out", tmp_path / "fit.json", "--step", "1e-9",
                         *scale))
    assert line == (f"Error: {log}, field '--step': the scale 0-6 in steps of 1e-09 has "
                    f"6,000,000,001 points, more than 1,001: give a larger --step (or --scale)")


def test_scale_points_counts_and_bounds():
    from lexgold.errors import InputError
    from lexgold.ratings.long import MAX_SCALE_POINTS, scale_points

    assert scale_points(1, 7, 1) == 7 and scale_points(0, 100, 0.1) == MAX_SCALE_POINTS == 1001
    with pytest.raises(InputError, match="1,002 points"):
        scale_points(0, 1001, 1)
    with pytest.raises(InputError, match="positive finite"):
        scale_points(0, 6, float("nan"))


@pytest.mark.parametrize("days", ["nan", "inf", "-inf", "-1", "0", "1e9"])
def test_preview_link_days_must_be_finite_and_in_range(study, days):
    line = one_error(run("study", "preview-link", study, "--days", days), status=2)
    assert line.startswith("Error: Invalid value for '--days': "), line
    assert "finite" in line or "0<x<=365" in line, line


def _commands(command, path=()):
    import click

    if isinstance(command, click.Group):
        for name in command.list_commands(None):
            yield from _commands(command.get_command(None, name), (*path, name))
    else:
        yield path, command


def test_every_number_range_option_refuses_nan():
    # nan passes every comparison of click.FloatRange: each range option is a FiniteRange
    import click

    from lexgold.cliutil import FiniteRange

    ranges = {(" ".join(path), param.name): param.type for path, command in _commands(cli)
              for param in command.params if isinstance(param.type, click.FloatRange)}
    assert len(ranges) > 20
    assert [name for name, kind in ranges.items() if not isinstance(kind, FiniteRange)] == []
    line = one_error(run("simulate", "--noise-sd", "nan", "--crowd", "invented", "--protocol",
                         "plain", "--out", "x.csv"), status=2)
    assert line == "Error: Invalid value for '--noise-sd': 'nan' is not a finite number"


def _full_disk(monkeypatch):
    """Every connection of a study opened from now on may not grow the file by one page: SQLite
    then answers "database or disk is full", as on a full disk."""
    from sqlalchemy import event

    import lexgold.study.db as db

    real = db.make_engine

    def full(url, *args, **options):
        engine = real(url, *args, **options)

        @event.listens_for(engine, "connect")
        def _cap(connection, _record):
            pages = connection.execute("PRAGMA page_count").fetchone()[0]
            connection.execute(f"PRAGMA max_page_count = {pages}")
        return engine

    monkeypatch.setattr(db, "make_engine", full)


def test_pause_on_a_full_disk_is_one_line_naming_the_study(study, monkeypatch):
    _full_disk(monkeypatch)
    line = one_error(run("study", "pause", study))
    assert line == (f"Error: {study}: the database failed, so the command stopped: database "
                    f"or disk is full")


def test_preview_link_on_a_full_disk_is_one_line_naming_the_study(study, monkeypatch):
    # the link's row fits in a page the study already has: the insert raises what SQLAlchemy
    # raises when SQLite cannot grow the file
    import sqlite3

    from sqlalchemy.exc import OperationalError

    import lexgold.study.preview_links as preview_links

    def disk_full(session, *args, **options):
        raise OperationalError("INSERT INTO preview_link ...", {},
                               sqlite3.OperationalError("database or disk is full"))

    assert run("study", "secret", study).exit_code == 0
    monkeypatch.setattr(preview_links, "make", disk_full)
    line = one_error(run("study", "preview-link", study))
    assert line == (f"Error: {study}: the database failed, so the command stopped: database "
                    f"or disk is full")


def test_export_on_a_full_disk_leaves_the_earlier_csv_whole(study, tmp_path, monkeypatch):
    import lexgold.study.export_sql as export_sql

    out = tmp_path / "ratings.csv"
    assert run("study", "export", study, "--out", out).exit_code == 0
    before = out.read_bytes(), (tmp_path / "ratings.study.json").read_bytes()

    def disk_full(session, handle, **options):
        handle.write("rater_id,tranche,word1,word2,rating\nr1,1,cat,d")
        handle.flush()
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(export_sql, "write_study_export", disk_full)
    line = one_error(run("study", "export", study, "--out", out))
    assert line == (f"Error: {out}: not written (No space left on device); an earlier file "
                    f"there is left as it was")
    assert (out.read_bytes(), (tmp_path / "ratings.study.json").read_bytes()) == before
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_export_on_a_full_disk_leaves_no_csv_where_there_was_none(study, tmp_path,
                                                                   monkeypatch):
    import lexgold.study.export_sql as export_sql

    def disk_full(session, handle, **options):
        handle.write("rater_id,tranche,word1,word2,rating\n")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(export_sql, "write_study_export", disk_full)
    out = tmp_path / "out" / "ratings.csv"
    one_error(run("study", "export", study, "--out", out))
    assert list(out.parent.iterdir()) == []


@pytest.mark.parametrize("url", ["postgresql+nosuch://u:pw@localhost/db", "nosuch://h/db"])
def test_report_of_an_unknown_database_driver_is_one_line(url):
    line = one_error(run("study", "report", url))
    assert "unknown database kind or driver" in line and "pw" not in line, line


def test_replay_refuses_a_rating_of_1e308_naming_the_line(tmp_path):
    log = log_csv(tmp_path / "log.csv", {5: "1e308"})
    line = one_error(run("replay", log, "--pool", "3", "--k", "2", "--splits", "2"))
    assert line == (f"Error: {log}:5, field 'rating': rating 1e+308 is outside the log's scale "
                    f"-1e+06..1e+06")


def test_replay_refuses_a_rating_outside_the_declared_scale(tmp_path):
    log = log_csv(tmp_path / "log.csv", {3: "7"}, scale=True)
    line = one_error(run("replay", log, "--pool", "3", "--k", "2", "--splits", "2"))
    assert line == f"Error: {log}:3, field 'rating': rating 7 is outside the log's scale 0..6"


@pytest.mark.parametrize("command, bound", [
    (("replay", "LOG", "--splits"), 10_000),
    (("agree", "LOG", "--split-half", "--splits"), 10_000),
    (("machine", "worth", "LOG", "--splits"), 10_000),
])
def test_splits_are_bounded_and_the_bound_is_in_the_help(tmp_path, command, bound):
    log = log_csv(tmp_path / "log.csv")
    args = [log if a == "LOG" else a for a in command]
    line = one_error(run(*args, bound + 1), status=2)
    assert f"{bound + 1} is not in the range 1<=x<={bound}" in line, line
    help_text = run(*[a for a in command if a not in ("LOG", "--split-half", "--splits")],
                    "--help").output
    assert f"1<=x<={bound}" in help_text


# -- item 7: sidecars beside --out refuse planted symbolic links -------------------------------

def _planted(path: Path, target: Path) -> Path:
    target.write_text("precious\n", encoding="utf-8")
    path.symlink_to(target)
    return path


def test_crowd_fit_refuses_a_link_planted_as_its_sd_plot(tmp_path):
    log = log_csv(tmp_path / "log.csv")
    plot = _planted(tmp_path / "fit.sd.png", tmp_path / "victim.txt")
    line = one_error(run("crowd", "fit", log, "--out", tmp_path / "fit.json"))
    assert line == (f"Error: {plot} is a symbolic link (to {tmp_path / 'victim.txt'}): lexgold "
                    f"does not write through links; remove it")
    assert (tmp_path / "victim.txt").read_text(encoding="utf-8") == "precious\n"
    assert not (tmp_path / "fit.json").exists()


def test_study_export_refuses_a_link_planted_as_its_description(study, tmp_path):
    side = _planted(tmp_path / "ratings.study.json", tmp_path / "victim.txt")
    line = one_error(run("study", "export", study, "--out", tmp_path / "ratings.csv"))
    assert line.startswith(f"Error: {side} is a symbolic link"), line
    assert (tmp_path / "victim.txt").read_text(encoding="utf-8") == "precious\n"
    assert not (tmp_path / "ratings.csv").exists()


def test_simulate_refuses_a_link_planted_as_its_raters_file(tmp_path, study_file):
    side = _planted(tmp_path / "truth.raters.csv", tmp_path / "victim.txt")
    line = one_error(run("simulate", "--protocol", "plain", "--pairs", study_file[1],
                         "--out", tmp_path / "ratings.csv", "--truth", tmp_path / "truth.csv"))
    assert line.startswith(f"Error: {side} is a symbolic link"), line
    assert (tmp_path / "victim.txt").read_text(encoding="utf-8") == "precious\n"


def test_beside_and_replacing(tmp_path):
    from lexgold.cliutil import beside, replacing
    from lexgold.errors import InputError

    out = tmp_path / "a.csv"
    assert beside(out, "a.sd.png") == tmp_path / "a.sd.png"
    _planted(tmp_path / "a.json", tmp_path / "victim.txt")
    with pytest.raises(InputError, match="a.json is a symbolic link"):
        beside(out, "a.json")
    with replacing(out, encoding="utf-8") as handle:
        handle.write("first\n")
    with pytest.raises(RuntimeError):
        with replacing(out, encoding="utf-8") as handle:
            handle.write("second, cut short")
            raise RuntimeError("stopped")
    assert out.read_text(encoding="utf-8") == "first\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.csv", "a.json", "victim.txt"]


def test_machine_ratings_refuse_a_link_planted_as_their_provenance(tmp_path):
    import pandas as pd

    from lexgold.errors import InputError
    from lexgold.machine.rate import write_ratings

    out = tmp_path / "machine.csv"
    side = _planted(tmp_path / "machine.csv.json", tmp_path / "victim.txt")
    frame = pd.DataFrame({"word1": ["cat"], "word2": ["dog"], "rating": [7.0]})
    with pytest.raises(InputError, match=f"{side.name} is a symbolic link"):
        write_ratings(out, frame, {"model": "m"})
    assert (tmp_path / "victim.txt").read_text(encoding="utf-8") == "precious\n"
    assert not out.exists()


def test_a_resource_file_in_a_users_folder_is_read_within_the_limits(tmp_path, monkeypatch):
    # a user's --usf folder: its .gz copies were decompressed whole, without a bound
    import gzip

    from lexgold.errors import InputError
    from lexgold.resources._files import ResourceFile

    path = tmp_path / "A-B.txt.gz"
    path.write_bytes(gzip.compress(b"0" * 1000))
    assert ResourceFile("A-B.txt", str(path), None).read_bytes() == b"0" * 1000
    monkeypatch.setenv("LEXGOLD_MAX_WHOLE_BYTES", "100")
    with pytest.raises(InputError, match=r"A-B\.txt\.gz:1: more than 100 bytes"):
        ResourceFile("A-B.txt", str(path), None).read_bytes()
