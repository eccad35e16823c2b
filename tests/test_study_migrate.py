"""``lexgold.study.migrate``: what ``study upgrade`` does beyond Alembic's revisions, on real
study databases taken back to an older revision (the key the study held before revision 0010;
the plain own-link session IDs revision 0014 hashes, or clears without a key)."""

from datetime import timedelta

import pytest
from sqlalchemy import text

from lexgold.study import models as m
from lexgold.study.db import database_url, downgrade, make_engine, session_factory
from lexgold.study.migrate import stored_key, stored_sessions, upgrade_study
from lexgold.study.secret import LEGACY_DAYS, write_key_file
from lexgold.study.store import create_study
from test_annotate_app import protocol_variant, usf_pair_file


@pytest.fixture(scope="module")
def pairs(usf, tmp_path_factory):
    return usf_pair_file(usf, tmp_path_factory.mktemp("migrate-pairs") / "pairs.csv")


@pytest.fixture(autouse=True)
def no_key_in_the_environment(monkeypatch):
    monkeypatch.delenv("LEXGOLD_SECRET_KEY", raising=False)
    monkeypatch.delenv("LEXGOLD_SECRET_KEY_FILE", raising=False)


def study_at(tmp_path, pairs, revision: str, sessions=()) -> str:
    """A small SimLex study taken back to ``revision``, with one rater per own-link session ID
    of ``sessions`` stored in plain text (as before revision 0014)."""
    protocol = protocol_variant(tmp_path, "simlex", tranches=2, raters_per_tranche=2)
    db = str(tmp_path / "old.sqlite")
    create_study(protocol, pairs, database_url(db), seed=5)
    engine = make_engine(database_url(db))
    with session_factory(engine)() as session:
        session.add_all(m.Rater(public_id=f"r{i}", platform="mturk", external_id=f"A{i:011d}")
                        for i, _ in enumerate(sessions))
        session.commit()
    downgrade(engine, revision)
    with engine.begin() as connection:
        for i, session_id in enumerate(sessions):
            connection.execute(text("UPDATE rater SET external_session = :s WHERE public_id = :p"),
                               {"s": session_id, "p": f"r{i}"})
    engine.dispose()
    return db


def test_plain_session_ids_are_counted_and_cleared_without_a_key(tmp_path, pairs):
    db = study_at(tmp_path, pairs, "0013_bws",
                  sessions=["3X9ABCDEF", "ASSIGNMENT_ID_NOT_AVAILABLE", ""])
    engine = make_engine(database_url(db))
    assert stored_sessions(engine) == 1          # MTurk's preview ID and no ID are no session
    assert stored_key(engine) is None            # revision 0010 already took the key out
    done = upgrade_study(db)
    assert (done.sessions_cleared, done.held_key, done.kept, done.key_found) == (1, False, None,
                                                                                 False)
    assert stored_sessions(engine) == 0
    engine.dispose()


def test_with_a_key_the_session_ids_are_hashed_not_cleared(tmp_path, pairs):
    db = study_at(tmp_path, pairs, "0013_bws", sessions=["3X9ABCDEF"])
    key_file = write_key_file(tmp_path / "serve.key")
    done = upgrade_study(db, str(key_file))
    assert (done.sessions_cleared, done.key_found) == (0, True)
    engine = make_engine(database_url(db))
    with engine.connect() as connection:
        stored = connection.execute(text("SELECT external_session FROM rater")).scalar()
    engine.dispose()
    assert stored not in ("", "3X9ABCDEF")


def test_the_key_a_study_held_is_kept_in_the_key_file(tmp_path, pairs):
    db = study_at(tmp_path, pairs, "0007")
    engine = make_engine(database_url(db))
    old_key = stored_key(engine)
    assert old_key
    key_file = tmp_path / "keys" / "serve.key"
    key_file.parent.mkdir()
    before = m.utcnow()
    done = upgrade_study(db, str(key_file))
    assert done.held_key and done.key_found and done.kept is not None
    assert done.kept.path == key_file and done.kept.made
    assert timedelta(days=LEGACY_DAYS) <= done.kept.until - before.replace(microsecond=0) \
        <= timedelta(days=LEGACY_DAYS, minutes=5)
    lines = key_file.read_text().splitlines()
    assert len(lines) == 2 and old_key not in lines[0] and lines[1].startswith(f"legacy {old_key}")
    assert stored_key(engine) is None            # the column is gone
    engine.dispose()


def test_a_current_study_is_left_as_it_is(tmp_path, pairs):
    db = study_at(tmp_path, pairs, "head")
    done = upgrade_study(db)
    assert (done.sessions_cleared, done.held_key, done.kept, done.key_found) == (0, False, None,
                                                                                 False)


def test_a_database_without_a_study_has_no_key_and_no_session(tmp_path):
    engine = make_engine(database_url(tmp_path / "empty.sqlite"))
    assert stored_key(engine) is None and stored_sessions(engine) == 0
    engine.dispose()
