"""`study export` and the admin's ratings.csv stream a few raters at a time (issue 22): the same
bytes as the whole export built in memory, on SQLite and PostgreSQL."""

import hashlib
import io
import sqlite3
import subprocess
import sys

import numpy as np
import pytest
from click.testing import CliRunner
from sqlalchemy import select, text, update
from test_annotate_app import (
    make_app,
    protocol_variant,
    tr9856_pair_file,
    usf_pair_file,
)

from lexgold.study import models as m
from lexgold.study.db import (
    database_url,
    make_engine,
    postgres_schema,
    session_factory,
)
from lexgold.study.export_sql import (
    SQLITE_TABLES,
    export_sql,
    sqlite_export,
    sqlite_stamp,
)
from lexgold.annotate.rehearse import rehearse
from lexgold.study.store import create_study
from lexgold.study.export import escape_formulas, export_chunks, export_ratings, write_export
from lexgold.cli import cli
from lexgold.crowd.simulate import Crowd

#: rater ids whose order is easy to get wrong (case, a leading '-', a formula, non-ASCII) or
#: that the CSV must quote (comma, double quote)
AWKWARD = ["Zeta", "alpha", "-Xb3_k", "=cmd", "\u00c9mile", "10", "9", "a b", 'say "hi"',
           "x,y"]
#: pair words the CSV must quote (comma, quote, line feed) or keep as they are (CR, unicode)
AWKWARD_WORDS = ["a,b", 'q"uote', "line\nbreak", "cr\rword", "\u00e9t\u00e9 \u05e9"]


@pytest.fixture(scope="module")
def pairs(usf, tmp_path_factory):
    return usf_pair_file(usf, tmp_path_factory.mktemp("pairs") / "pairs.csv",
                         counts=(("N", "N", 30), ("V", "V", 10), ("A", "AJ", 6)))


def _rehearsed(url, folder, pairs):
    """A rehearsed two-tranche study (with quitters: --all-raters differs) whose first raters
    carry the awkward ids."""
    protocol = protocol_variant(folder, "simlex", tranches=2, raters_per_tranche=5)
    create_study(protocol, pairs, url, seed=1)
    rehearse(url, rng=np.random.default_rng(2), crowd=Crowd(spammers=0.0, quitters=0.3))
    engine = make_engine(url)
    with session_factory(engine)() as session, session.begin():
        ids = session.scalars(select(m.Rater.id).order_by(m.Rater.id)).all()
        for rater, name in zip(ids, AWKWARD):
            session.execute(update(m.Rater).where(m.Rater.id == rater).values(public_id=name))
        pair_ids = session.scalars(select(m.Pair.id).order_by(m.Pair.id)).all()
        for pair, word in zip(pair_ids, AWKWARD_WORDS):
            session.execute(update(m.Pair).where(m.Pair.id == pair).values(word2=word))
        session.execute(update(m.Pair).where(m.Pair.id == pair_ids[-1]).values(pos="N,V"))
        session.execute(update(m.Rater).where(m.Rater.id == ids[0]).values(confirmed=True,
                                                                           fast_pages=2))
    engine.dispose()


def _check_same_bytes(url):
    engine = make_engine(url)
    with session_factory(engine, write=False)() as session:
        for complete in (True, False):
            whole = export_ratings(session, complete_only=complete)
            assert len(whole) and set(AWKWARD) & set(whole["rater_id"])
            handle = io.StringIO()                   # the database writes the lines
            counts = write_export(session, handle, complete_only=complete)
            assert handle.getvalue() == whole.to_csv(index=False)
            assert counts == (len(whole), whole["rater_id"].nunique())
            for raters in (1, 3, 500):
                pieces = list(export_chunks(session, complete_only=complete, raters=raters))
                assert all(p["rater_id"].nunique() <= raters for p in pieces)
                for escape in (False, True):
                    handle = io.StringIO()
                    counts = write_export(session, handle, complete_only=complete,
                                          escape=escape, raters=raters)
                    expected = (escape_formulas(whole) if escape else whole).to_csv(index=False)
                    assert handle.getvalue() == expected
                    assert counts == (len(whole), whole["rater_id"].nunique())
    engine.dispose()


def test_the_streamed_export_is_the_bytes_of_the_whole_export(tmp_path, pairs):
    url = database_url(tmp_path / "study.sqlite")
    _rehearsed(url, tmp_path, pairs)
    _check_same_bytes(url)
    whole = io.StringIO()
    engine = make_engine(url)
    with session_factory(engine, write=False)() as session:
        export_ratings(session, complete_only=True).to_csv(whole, index=False)
        everyone = escape_formulas(export_ratings(session)).to_csv(index=False)
    engine.dispose()
    out = tmp_path / "ratings.csv"                   # the command line
    result = CliRunner().invoke(cli, ["study", "export", str(tmp_path / "study.sqlite"),
                                      "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert out.read_bytes() == whole.getvalue().encode("utf-8")   # a CR kept as it is
    admin = make_app(url).test_client()              # the admin's download
    admin.post("/admin/login", data={"password": "s3cret"})
    response = admin.get("/admin/ratings.csv")
    assert response.status_code == 200 and response.is_streamed
    assert response.get_data(as_text=True) == everyone


def test_study_export_of_a_slider_study_imports_no_pandas(tmp_path, pairs):
    """`lexgold study export` of a slider study has the database write the lines: it starts
    without pandas, numpy or Alembic's migration runner (issue 22 item 4), same bytes."""
    url = database_url(tmp_path / "study.sqlite")
    _rehearsed(url, tmp_path, pairs)
    out = tmp_path / "ratings.csv"
    code = ("import sys\nfrom lexgold.cli import cli\n"
            f"cli(['study', 'export', {str(tmp_path / 'study.sqlite')!r}, '--out', {str(out)!r}],"
            " standalone_mode=False)\n"
            "print('loaded:' + ','.join(m for m in ('pandas', 'numpy', 'alembic.command') "
            "if m in sys.modules))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True).stdout.strip().splitlines()[-1]
    assert loaded == "loaded:"
    engine = make_engine(url)
    with session_factory(engine, write=False)() as session:
        whole = export_ratings(session, complete_only=True).to_csv(index=False)
    engine.dispose()
    assert out.read_bytes() == whole.encode("utf-8")


def test_an_empty_study_exports_its_header(tmp_path, pairs):
    protocol = protocol_variant(tmp_path, "simlex", tranches=2, raters_per_tranche=5)
    url = database_url(tmp_path / "empty.sqlite")
    create_study(protocol, pairs, url, seed=1)
    engine = make_engine(url)
    with session_factory(engine, write=False)() as session:
        handle = io.StringIO()
        assert write_export(session, handle) == (0, 0)
        assert handle.getvalue() == export_ratings(session).to_csv(index=False)
    engine.dispose()


@pytest.mark.postgres
def test_the_streamed_export_on_postgresql(postgres_url, tmp_path, pairs):
    with postgres_schema(postgres_url, "export") as (_, url):
        _rehearsed(url, tmp_path, pairs)
        _check_same_bytes(url)


def test_a_topic_study_exports_its_topic_column_the_same(tmp_path, usf):
    """TR9856 (topics, binary answers): the database-written export keeps the ``topic`` column
    and its quoting (a topic with a comma and a quote), the bytes of the pandas export."""
    pairs = tr9856_pair_file(usf, tmp_path / "pairs.csv")
    url = database_url(tmp_path / "topics.sqlite")
    create_study("tr9856", pairs, url, seed=1)
    rehearse(url, rng=np.random.default_rng(2), crowd=Crowd(spammers=0.0, quitters=0.3))
    engine = make_engine(url)
    with session_factory(engine)() as session, session.begin():
        first = session.scalars(select(m.Pair.id).order_by(m.Pair.id)).first()
        session.execute(update(m.Pair).where(m.Pair.id == first)
                        .values(topic='war, "peace"'))
    with session_factory(engine, write=False)() as session:
        for complete in (True, False):
            whole = export_ratings(session, complete_only=complete)
            assert "topic" in whole and (whole["topic"] == 'war, "peace"').any()
            handle = io.StringIO()
            counts = write_export(session, handle, complete_only=complete)
            assert handle.getvalue() == whole.to_csv(index=False)
            assert counts == (len(whole), whole["rater_id"].nunique())
    engine.dispose()


@pytest.mark.parametrize("stored, written", [
    ("2026-01-01 00:10:05.123456", "2026-01-01T00:10:05Z"),   # SQLAlchemy's layout
    ("2026-01-01 00:10:05", "2026-01-01T00:10:05Z"),          # no fraction: the same cut
    ("2026-01-01T00:10:05", "2026-01-01T00:10:05Z"),          # ISO: through strftime
    ("2026-01-01 00:10 05 x", "2026-01-01T00:10 05Z"),        # a space at 11: cut as it is
    ("abcdefghij klmnopqrs", "abcdefghijTklmnopqrZ"),
    ("2026-01-01", "2026-01-01T00:00:00Z"),
    ("yesterday", None),
])
def test_the_sqlite_time_cut_takes_its_one_printf_only_on_the_layout(stored, written):
    """The SQLite export cuts a stored time to the second with one ``printf`` when the text has
    SQLAlchemy's digits and separators, and otherwise as before (the 11th character a space and
    19 characters: cut there; else ``strftime``) (issue 22 item 4; hand-written cases)."""
    db = sqlite3.connect(":memory:")
    assert db.execute(f"SELECT {sqlite_stamp('t')} FROM (SELECT ? AS t)",
                      (stored,)).fetchone()[0] == written


def test_the_sqlite_export_reads_each_answer_once_and_leaves_the_study_as_it_was(tmp_path,
                                                                                 pairs):
    """On SQLite the rater, item and option text sits in TEMP tables joined by integer keys:
    the stored answers are read once as they come (a co-routine, not copied into a table, no
    automatic index), and afterwards no TEMP table is left and the study file is the same
    bytes (issue 22 item 4). Times stored without their fraction export as pandas writes them."""
    path = tmp_path / "study.sqlite"
    url = database_url(path)
    _rehearsed(url, tmp_path, pairs)
    engine = make_engine(url)
    with session_factory(engine)() as session, session.begin():
        ids = session.scalars(select(m.Answer.id).order_by(m.Answer.id).limit(5)).all()
        for answer in ids:                           # the same second, stored without fraction
            session.execute(text("UPDATE answer SET answered_at = '2026-03-01 12:00:00' "
                                 "WHERE id = :id"), {"id": answer})
    engine.dispose()
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    _check_same_bytes(url)
    engine = make_engine(url)
    with session_factory(engine, write=False)() as session:
        raw = session.connection().connection.dbapi_connection
        fill, sql, drop = sqlite_export(1, True, False)
        params = {"i0": 0, "c0": 0, "w1_0": "a", "w2_0": "b"}
        for statement in drop + fill:
            raw.execute(statement, params)
        plan = " | ".join(row[3] for row in raw.execute(f"EXPLAIN QUERY PLAN {sql}", params))
        assert raw.execute(sql, params).fetchall() == raw.execute(   # the one-SELECT form
            export_sql("sqlite", 1, True, False), params).fetchall()
        for statement in drop:
            raw.execute(statement)
        assert "CO-ROUTINE" in plan and "MATERIALIZE" not in plan and "AUTOMATIC" not in plan
        assert "SEARCH r USING INTEGER PRIMARY KEY" in plan
        assert "SEARCH p USING INTEGER PRIMARY KEY" in plan
        handle = io.StringIO()
        write_export(session, handle, complete_only=False)
        left = raw.execute("SELECT name FROM sqlite_temp_master WHERE type = 'table'").fetchall()
        assert not {name for (name,) in left} & set(SQLITE_TABLES)
    engine.dispose()
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
