"""lexgold.study.db.Prepared: a Core statement sent on the driver's cursor stores and reads the
same values as SQLAlchemy's own execution, and fails with SQLAlchemy's errors."""

import sqlite3
from datetime import datetime

import pytest
from sqlalchemy import (Column, DateTime, Integer, MetaData, String, Table, UniqueConstraint,
                        bindparam, insert, select, update)
from sqlalchemy.exc import IntegrityError, OperationalError

from lexgold.study.db import Prepared, make_engine, postgres_schema

metadata = MetaData()
thing = Table("thing", metadata, Column("id", Integer, primary_key=True),
              Column("name", String(20)), Column("n", Integer), Column("at", DateTime),
              UniqueConstraint("name"))
ROWS = [{"name": "a", "n": 1, "at": datetime(2026, 11, 1, 12, 0, 0)},
        {"name": "b<'>", "n": 2, "at": datetime(2026, 11, 1, 12, 0, 0, 250_000)}]
SELECT = select(thing.c.name, thing.c.n, thing.c.at).where(thing.c.n == bindparam("n"))
MOVE = update(thing).where(thing.c.n == bindparam("n")).values(at=bindparam("at"), name="moved")


def _same_as_sqlalchemy(engine):
    metadata.create_all(engine)
    with engine.connect() as connection:
        Prepared(insert(thing)).many(connection, ROWS)
        connection.commit()
        for row in ROWS:
            ours = Prepared(SELECT).first(connection, {"n": row["n"]})
            assert ours == tuple(connection.execute(SELECT, {"n": row["n"]}).one())
            assert ours == (row["name"], row["n"], row["at"])
        assert Prepared(SELECT).first(connection, {"n": 9}) is None
        moved = Prepared(MOVE).rowcount(connection, {"n": 2, "at": datetime(2026, 1, 2, 3)})
        assert moved == 1 and Prepared(MOVE).rowcount(connection, {"n": 9, "at": None}) == 0
        connection.commit()
        stored = connection.execute(select(thing.c.name, thing.c.at).where(thing.c.n == 2))
        assert tuple(stored.one()) == ("moved", datetime(2026, 1, 2, 3))
        with pytest.raises(IntegrityError):                 # SQLAlchemy's error, not the driver's
            Prepared(insert(thing)).many(connection, ROWS[:1])
        connection.rollback()
        assert connection.execute(select(thing.c.n)).scalars().all() == [1, 2]


def test_prepared_statements_on_sqlite(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'p.sqlite'}", busy_timeout_s=0.2)
    _same_as_sqlalchemy(engine)
    # a write lock held elsewhere: BEGIN IMMEDIATE fails with SQLAlchemy's error
    holder = sqlite3.connect(tmp_path / "p.sqlite", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    with engine.connect() as connection, pytest.raises(OperationalError):
        Prepared(MOVE).rowcount(connection, {"n": 1, "at": None})
    holder.execute("ROLLBACK")
    holder.close()
    engine.dispose()


@pytest.mark.postgres
def test_prepared_statements_on_postgres(postgres_url):
    with postgres_schema(postgres_url, prefix="prepared") as (_, url):
        engine = make_engine(url)
        try:
            _same_as_sqlalchemy(engine)
        finally:
            engine.dispose()


def test_a_prepared_insert_reads_back_what_it_returns(tmp_path):
    """An INSERT with RETURNING through :meth:`Prepared.first`: its row, through the columns'
    result processors (a DateTime comes back a datetime on SQLite too)."""
    engine = make_engine(f"sqlite:///{tmp_path / 'r.sqlite'}")
    metadata.create_all(engine)
    adding = Prepared(insert(thing).values(name=bindparam("v_name"), n=7, at=bindparam("v_at"))
                      .returning(thing.c.id, thing.c.n, thing.c.at))
    with engine.connect() as connection:
        first = adding.first(connection, {"v_name": "x", "v_at": ROWS[1]["at"]})
        second = adding.first(connection, {"v_name": "y", "v_at": None})
        connection.commit()
        stored = connection.execute(select(thing.c.id, thing.c.n, thing.c.at)
                                    .order_by(thing.c.id)).all()
    assert [first, second] == [tuple(row) for row in stored]
    assert first[1:] == (7, ROWS[1]["at"]) and second[1:] == (7, None)
    engine.dispose()
