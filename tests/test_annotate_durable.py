"""A SQLite study is whole in its one file after a clean stop, and ``lexgold study backup``
copies it into one file while it is served.

SQLite in WAL mode writes committed transactions to ``study.sqlite-wal`` first. A server that is
stopped (SIGTERM from systemd or ``kill``, SIGINT from Ctrl-C) checkpoints the log into
``study.sqlite``, so copying that file alone, as a researcher would, keeps every answer. The
server runs as in production: ``lexgold serve`` in its own process (waitress, or gunicorn with
``--workers 2``), raters are HTTP clients (the helpers of tests/test_hardening_faults.py).
"""

import shutil
import signal
import sqlite3

import pytest
from click.testing import CliRunner

from lexgold.study.db import database_url
from lexgold.cli import cli
from test_annotate_app import usf_pair_file
from test_hardening_faults import HttpRater, load_test, sqlite_study

pytestmark = pytest.mark.slow            # servers started and killed mid-study


@pytest.fixture(scope="module")
def pairs(usf, tmp_path_factory):
    return usf_pair_file(usf, tmp_path_factory.mktemp("durable-pairs") / "pairs.csv")


def count_answers(path) -> int:
    """Answers in the SQLite file ``path`` opened alone, read-only (no -wal is created)."""
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return connection.execute("SELECT count(*) FROM answer").fetchone()[0]
    finally:
        connection.close()


def raters_through(server, n: int) -> list[HttpRater]:
    """``n`` raters, one after another, through their whole tranche (all told 'accepted')."""
    where = {"base": server.base}
    raters = [HttpRater(f"durable{k}", where, seed=k) for k in range(n)]
    for rater in raters:
        rater.enter()
        rater.finish()
    assert [r.run.outcome for r in raters] == ["done"] * n
    return raters


@pytest.mark.parametrize("stop", ["SIGTERM", "SIGINT"])
@pytest.mark.parametrize("workers", [1, 2], ids=["waitress", "gunicorn-2-workers"])
def test_a_stopped_server_leaves_every_answer_in_the_database_file(tmp_path, pairs, workers,
                                                                    stop):
    url = sqlite_study(tmp_path, pairs, tranches=3)
    study = tmp_path / "fault.sqlite"
    args = ("--workers", str(workers)) if workers > 1 else ()
    server = load_test.Server(url, tmp_path, threads=2, args=args)
    server.start(timeout_s=120)
    try:
        raters = raters_through(server, 3)
        wal = tmp_path / "fault.sqlite-wal"
        assert wal.stat().st_size > 0           # the answers are in the log so far
        server.process.send_signal(getattr(signal, stop))
        assert server.process.wait(60) == 0     # stopped, and cleanly
    finally:
        server.stop()
    accepted = sum(len(r.run.items) for r in raters)
    assert accepted > 0
    copy = tmp_path / "copied" / "study.sqlite"           # the file alone, no -wal, no -shm
    copy.parent.mkdir()
    shutil.copyfile(study, copy)
    assert count_answers(copy) == accepted
    assert load_test.check_database(database_url(copy), [r.run for r in raters]) == []
    assert not wal.exists() or wal.stat().st_size == 0
    assert "write-ahead log checkpointed, the file alone holds the study" in \
        server.log.read_text()


def test_backup_while_serving_holds_every_answer(tmp_path, pairs):
    url = sqlite_study(tmp_path, pairs, tranches=2)
    server = load_test.Server(url, tmp_path, threads=2)
    server.start()
    try:
        raters = raters_through(server, 2)
        out = tmp_path / "backups" / "study-copy.sqlite"
        result = CliRunner().invoke(cli, ["study", "backup", str(tmp_path / "fault.sqlite"),
                                          str(out)])
        assert result.exit_code == 0, result.output
        assert (tmp_path / "fault.sqlite-wal").stat().st_size > 0   # still served, WAL mode
    finally:
        server.stop()
    accepted = sum(len(r.run.items) for r in raters)
    assert count_answers(out) == accepted            # the copy opened alone
    assert f"-> {out}: {accepted} answers of 2 raters" in result.output
    assert sorted(p.name for p in out.parent.iterdir()) == ["study-copy.sqlite"]
    with sqlite3.connect(out) as connection:          # self-contained: no WAL mode
        assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    assert load_test.check_database(database_url(out), [r.run for r in raters]) == []


def test_backup_refuses_to_overwrite_and_bad_input_is_one_line(tmp_path, pairs):
    sqlite_study(tmp_path, pairs, tranches=2)
    study = tmp_path / "fault.sqlite"
    out = tmp_path / "copy.sqlite"
    out.write_text("an older copy")
    runner = CliRunner()
    result = runner.invoke(cli, ["study", "backup", str(study), str(out)])
    assert result.exit_code == 1
    assert result.output == f"Error: {out}: already exists (--force replaces it)\n"
    assert out.read_text() == "an older copy"
    result = runner.invoke(cli, ["study", "backup", str(study), str(out), "--force"])
    assert result.exit_code == 0, result.output
    assert count_answers(out) == 0                   # replaced by a copy of the study
    for args, message in [
            ([str(tmp_path / "none.sqlite"), str(tmp_path / "x.sqlite")],
             "no such study database (create it with `lexgold study create`)"),
            ([str(study), str(study), "--force"], "is the study itself; give another file"),
            ([str(study), str(tmp_path)], "is a folder; give the name of the backup file")]:
        result = runner.invoke(cli, ["study", "backup", *args])
        assert result.exit_code == 1 and len(result.output.splitlines()) == 1
        assert result.output.startswith("Error: ") and message in result.output
    foreign = tmp_path / "other.sqlite"
    sqlite3.connect(foreign).execute("CREATE TABLE t (x)").connection.commit()
    result = runner.invoke(cli, ["study", "backup", str(foreign), str(tmp_path / "y.sqlite")])
    assert result.output == f"Error: {foreign}: not a lexgold study database (no study " \
                            "tables)\n"
    assert not (tmp_path / "y.sqlite").exists()


def test_backup_of_a_postgresql_study_gives_the_pg_dump_line(tmp_path):
    url = "postgresql+psycopg://lexgold:s3cret-pw@127.0.0.1:5432/study"
    result = CliRunner().invoke(cli, ["study", "backup", url, str(tmp_path / "study.dump")])
    assert result.exit_code == 1
    assert result.output == (
        "Error: a PostgreSQL study is backed up with pg_dump (it asks for the password): "
        f"pg_dump --format=custom --file {tmp_path / 'study.dump'} "
        "postgresql://lexgold@127.0.0.1:5432/study\n")
    assert "s3cret-pw" not in result.output and not (tmp_path / "study.dump").exists()
