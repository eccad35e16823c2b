"""`lexgold study export` with the database writing the CSV lines.

One SELECT (answers and checkpoint answers, joined and sorted as
:func:`lexgold.study.export.export_ratings` sorts them) returns each row as the finished CSV
line, quoted as pandas' ``to_csv`` quotes it (Python's ``csv`` module, ``QUOTE_MINIMAL``: a field
holding a comma, a double quote or a line feed is put in double quotes, its quotes doubled;
NULL and the empty string are written as nothing). Python only writes the strings, streamed
from the cursor (a server-side cursor on PostgreSQL), so memory stays flat and the time is
close to the database's own CSV export. The bytes are those of
``export_ratings(session, complete_only=...).to_csv(index=False)`` (tests/test_annotate_export_stream.py).

On SQLite the per-rater and per-item text is first put into TEMP tables of this connection
(:func:`sqlite_export`: dropped again, nothing of the study is written), so that each of the
1.39 M answers of a 10,000-rater study is joined by integer primary keys; the time is cut from
SQLAlchemy's layout with one ``printf`` when it has the layout's digits, and only the sort keys
and the line go through SQLite's sorter.

Every exported value is an integer or a text (``rating``, ``start_value``, ``response_ms``,
``server_ms``, ``fast_pages``, ``browsers`` are INTEGER columns; ``platform_confirmed`` a
boolean written 0/1); ``answered_at`` is written to the second (``%Y-%m-%dT%H:%M:%SZ``), and
rows of one rater with the same second keep the order answers (by id), then checkpoint
answers (by id), as the stable sort of the pandas export does.
"""

from __future__ import annotations

import re
import sqlite3
from operator import itemgetter

from sqlalchemy import select, text
from sqlalchemy.orm import Session

from lexgold.study import models as m

#: rows fetched from the cursor at a time
FETCH_ROWS = 20_000
#: the export's first columns (then ``topic`` when kept, timings and :data:`RATER_CHECKS`)
EXPORT_COLUMNS = ["rater_id", "tranche", "word1", "word2", "rating", "pos", "kind",
                  "answered_at"]
#: per-rater columns of the export the researcher checks before paying or keeping a rater
RATER_CHECKS = ["platform", "platform_confirmed", "fast_pages", "browsers"]
#: version of the study description (``lexgold study export`` writes it beside the ratings)
DESCRIPTION_VERSION = 1


def _dialect(session: Session) -> str:
    name = session.get_bind().dialect.name
    return "postgresql" if name == "postgresql" else "sqlite"


def _field(expression: str, dialect: str) -> str:
    """SQL for one CSV field of the text ``expression`` (NULL -> empty), quoted as Python's
    csv writer quotes with ``QUOTE_MINIMAL`` and ``\\n`` line ends."""
    find = "instr({x}, {c}) > 0" if dialect == "sqlite" else "strpos({x}, {c}) > 0"
    newline = "char(10)" if dialect == "sqlite" else "chr(10)"
    x = f"coalesce({expression}, '')"
    needs = " OR ".join(find.format(x=x, c=c) for c in ("','", "'\"'", newline))
    return f"(CASE WHEN {needs} THEN '\"' || replace({x}, '\"', '\"\"') || '\"' ELSE {x} END)"


def _number(expression: str) -> str:
    """SQL for one CSV field of the integer ``expression`` (NULL -> empty)."""
    return f"coalesce(CAST({expression} AS TEXT), '')"


def export_sql(dialect: str, checkpoints: int, complete_only: bool, topic: bool) -> str:
    """The SELECT of :func:`write_export_sql` on PostgreSQL (on SQLite it gives the same
    bytes, but the export runs :func:`sqlite_export`): one column, the CSV line (with its ``\\n``).
    ``checkpoints``: rows of the bound ``(:i{k}, :c{k}, :w1_{k}, :w2_{k})`` table of
    checkpoint options.

    The text fields are quoted once per rater, item and step (materialised tables), so an
    answer's line is a concatenation; its time is cut from the stored text when it has
    SQLAlchemy's SQLite layout (``YYYY-MM-DD HH:MM:SS.ffffff``), else formatted."""
    if dialect == "sqlite":       # text sorts as Python sorts str: by code point
        rater_order = "public_id"
        stamp = _sqlite_cut("{t}")
    else:
        stamp = "to_char({t}, 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"
        rater_order = 'public_id COLLATE "C"'
    done = " AND rf.done" if complete_only else ""
    options = " UNION ALL ".join(f"SELECT :i{k} AS idx, :c{k} AS choice, :w1_{k} AS word1, "
                                 f":w2_{k} AS word2" for k in range(checkpoints))
    if not options:
        options = "SELECT -1 AS idx, -1 AS choice, '' AS word1, '' AS word2"
    q = lambda x: _field(x, dialect)
    topic_field = f"',' || {q('p.topic')}" if topic else "''"
    no_topic = "','" if topic else "''"                 # a checkpoint's empty topic
    confirmed = "CASE WHEN confirmed THEN '1' ELSE '0' END"
    # SQLite before 3.35 (2021) has no MATERIALIZED: the same query, evaluated as it chooses
    mat = "MATERIALIZED " if dialect != "sqlite" or sqlite3.sqlite_version_info >= (3, 35) else ""
    tables = (
        f"options AS {mat}({options}), "
        f"rf AS {mat}(SELECT id, row_number() OVER (ORDER BY {rater_order}) AS rank, completed_at IS NOT NULL AS done, "
        f"{q('public_id')} || ',' AS head, ',' || {q('platform')} || ',' || {confirmed} || "
        f"',' || {_number('fast_pages')} || ',' || {_number('browsers')} AS tail FROM rater), "
        f"itf AS {mat}(SELECT i.id, t.number AS tranche, {_number('t.number')} || ',' "
        f"|| {q('p.word1')} || ',' || {q('p.word2')} || ',' AS head, ',' || {q('p.pos')} || "
        f"',' || {q('i.kind')} || ',' AS mid, {topic_field} AS topic "
        f"FROM item i JOIN tranche t ON i.tranche_id = t.id "
        f"JOIN pair p ON i.pair_id = p.id), "
        f"sf AS {mat}(SELECT s.id, s.checkpoint, t.number AS tranche, "
        f"{_number('t.number')} || ',' AS head, ',' || {q('s.batch')} || ',checkpoint,' AS mid "
        f"FROM step s JOIN tranche t ON s.tranche_id = t.id WHERE s.kind = 'checkpoint'), "
        f"cpf AS {mat}(SELECT idx, choice, {q('word1')} || ',' || {q('word2')} || ',' "
        f"AS words FROM options)")
    # the line is put together by one printf (format on PostgreSQL): %s writes NULL as
    # nothing and an integer as CAST(... AS TEXT) does, in one allocation per line where
    # a chain of || makes a string per piece
    answers = (f"SELECT rf.rank AS rater, itf.tranche AS tranche, "
               f"{stamp.format(t='a.answered_at')} AS at, 0 AS src, a.id AS id, "
               f"rf.head AS rhead, itf.head AS head, CAST(a.rating AS TEXT) AS v1, NULL AS v2, "
               f"itf.mid AS mid, itf.topic AS topic, a.start_value AS start_value, "
               f"a.response_ms AS response_ms, a.server_ms AS server_ms, rf.tail AS tail "
               f"FROM answer a JOIN rf ON a.rater_id = rf.id JOIN itf ON a.item_id = itf.id "
               f"WHERE 1 = 1{done}")
    points = (f"SELECT rf.rank, sf.tranche, {stamp.format(t='c.answered_at')}, 1, c.id, "
              f"rf.head, sf.head, coalesce(cpf.words, ',,'), "
              f"CASE WHEN c.correct THEN '1' ELSE '0' END, sf.mid, "
              f"{no_topic}, NULL, c.response_ms, c.server_ms, rf.tail "
              f"FROM checkpoint_answer c JOIN rf ON c.rater_id = rf.id "
              f"JOIN sf ON c.step_id = sf.id "
              f"LEFT JOIN cpf ON cpf.idx = sf.checkpoint AND cpf.choice = c.choice "
              f"WHERE 1 = 1{done}")
    printf = "printf" if dialect == "sqlite" else "format"
    newline = "char(10)" if dialect == "sqlite" else "chr(10)"
    line = (f"{printf}('%s%s%s%s%s%s%s,%s,%s,%s%s%s', x.rhead, x.head, x.v1, x.v2, x.mid, "
            f"x.at, x.topic, x.start_value, x.response_ms, x.server_ms, x.tail, {newline})")
    return (f"WITH {tables} SELECT {line} AS line FROM ({answers} UNION ALL {points}) x "
            f"ORDER BY x.tranche, x.rater, x.at, x.src, x.id")


#: SQLAlchemy's SQLite layout of a DateTime (``YYYY-MM-DD HH:MM:SS.ffffff``), as a GLOB
_SQLITE_LAYOUT = "'" + "[0-9]" * 4 + "-" + "[0-9]" * 2 + "-" + "[0-9]" * 2 + " " + \
    ":".join(["[0-9]" * 2] * 3) + "*'"
#: the TEMP tables of :func:`sqlite_export` (raters, items and checkpoint steps, options)
SQLITE_TABLES = ("lexgold_export_rater", "lexgold_export_part", "lexgold_export_option")


def sqlite_stamp(column: str) -> str:
    """SQL for ``answered_at`` cut to the second as :func:`export_sql` cuts it on SQLite: one
    ``printf`` when the text has SQLAlchemy's layout (digits where they belong: the first 19
    characters are ASCII and the only space is the 11th), else the same CASE as before."""
    return (f"(CASE WHEN {column} GLOB {_SQLITE_LAYOUT} THEN "
            f"printf('%.19sZ', replace({column}, ' ', 'T')) ELSE {_sqlite_cut(column)} END)")


def _sqlite_cut(column: str) -> str:
    """SQL for ``answered_at`` cut to the second on SQLite: the stored text when it has
    SQLAlchemy's layout at positions 11-19, else ``strftime`` of it."""
    return (f"(CASE WHEN substr({column}, 11, 1) = ' ' AND length({column}) >= 19 THEN "
            f"substr({column}, 1, 10) || 'T' || substr({column}, 12, 8) || 'Z' ELSE "
            f"strftime('%Y-%m-%dT%H:%M:%SZ', {column}) END)")


def sqlite_export(checkpoints: int, complete_only: bool,
                  topic: bool) -> tuple[list[str], str, list[str]]:
    """The statements of the SQLite export: (TEMP tables to fill, the SELECT, the DROPs).

    The SELECT returns the bytes of :func:`export_sql`'s (same quoting, sort and time), read
    from TEMP tables keyed by integers: one row per exported rater (its rank in ``public_id``
    order, its quoted first and last fields), one per item (key ``2 * id``) and checkpoint
    step (``2 * id + 1``) with their quoted fields, and the checkpoint options; answers and
    checkpoint answers are read once, as stored, and joined by primary key."""
    q = lambda x: _field(x, "sqlite")
    rater, part, option = SQLITE_TABLES
    done = " WHERE completed_at IS NOT NULL" if complete_only else ""
    topic_field = f"',' || {q('p.topic')}" if topic else "''"
    no_topic = "','" if topic else "''"
    options = " UNION ALL ".join(f"SELECT :i{k} AS idx, :c{k} AS choice, :w1_{k} AS word1, "
                                 f":w2_{k} AS word2" for k in range(checkpoints))
    create_rater = (f"CREATE TEMP TABLE {rater} (id INTEGER PRIMARY KEY, rank INTEGER "
                    "NOT NULL, head TEXT NOT NULL, tail TEXT NOT NULL)")
    fill_rater = (f"INSERT INTO {rater} SELECT id, row_number() OVER (ORDER BY public_id), "
                  f"{q('public_id')} || ',', ',' || {q('platform')} || ',' || "
                  f"CASE WHEN confirmed THEN '1' ELSE '0' END || ',' || "
                  f"{_number('fast_pages')} || ',' || {_number('browsers')} FROM rater{done}")
    create_part = (f"CREATE TEMP TABLE {part} (id INTEGER PRIMARY KEY, tranche, head TEXT "
                   "NOT NULL, mid TEXT NOT NULL, topic TEXT NOT NULL)")
    fill_items = (f"INSERT INTO {part} SELECT 2 * i.id, t.number, {_number('t.number')} || "
                  f"',' || {q('p.word1')} || ',' || {q('p.word2')} || ',', ',' || {q('p.pos')} "
                  f"|| ',' || {q('i.kind')} || ',', {topic_field} FROM item i "
                  "JOIN tranche t ON i.tranche_id = t.id JOIN pair p ON i.pair_id = p.id")
    fill_steps = (f"INSERT INTO {part} SELECT 2 * s.id + 1, t.number, {_number('t.number')} "
                  f"|| ',', ',' || {q('s.batch')} || ',checkpoint,', {no_topic} FROM step s "
                  "JOIN tranche t ON s.tranche_id = t.id WHERE s.kind = 'checkpoint'")
    create_option = (f"CREATE TEMP TABLE {option} (idx, choice, words TEXT NOT NULL, "
                     "PRIMARY KEY (idx, choice))")
    fill = [create_rater, fill_rater, create_part, fill_items, fill_steps, create_option]
    if options:                    # (checkpoint, choice) is unique: see _options
        fill.append(f"INSERT INTO {option} SELECT idx, choice, {q('word1')} || ',' || "
                    f"{q('word2')} || ',' FROM ({options})")
    rows = (f"SELECT a.rater_id AS rid, 2 * a.item_id AS ref, {sqlite_stamp('a.answered_at')} "
            "AS at, 0 AS src, a.id AS id, a.rating AS v1, NULL AS v2, a.start_value AS sv, "
            "a.response_ms AS rms, a.server_ms AS sms FROM answer a UNION ALL "
            f"SELECT c.rater_id, 2 * c.step_id + 1, {sqlite_stamp('c.answered_at')}, 1, c.id, "
            "coalesce(o.words, ',,'), CASE WHEN c.correct THEN '1' ELSE '0' END, NULL, "
            f"c.response_ms, c.server_ms FROM checkpoint_answer c JOIN step s "
            f"ON s.id = c.step_id LEFT JOIN {option} o ON o.idx = s.checkpoint "
            "AND o.choice = c.choice")
    select_ = (f"SELECT printf('%s%s%s%s%s%s%s,%s,%s,%s%s%s', r.head, p.head, x.v1, x.v2, "
               "p.mid, x.at, p.topic, x.sv, x.rms, x.sms, r.tail, char(10)) "
               f"FROM ({rows}) x CROSS JOIN {rater} r ON r.id = x.rid CROSS JOIN {part} p "
               "ON p.id = x.ref "
               "ORDER BY p.tranche, r.rank, x.at, x.src, x.id")
    return fill, select_, [f"DROP TABLE IF EXISTS temp.{name}" for name in SQLITE_TABLES]


def _options(config: dict) -> dict:
    """The bound checkpoint options table: index, choice, word1, word2 of every option."""
    params, k = {}, 0
    for index, checkpoint in enumerate(config.get("checkpoints") or []):
        for choice, (word1, word2) in enumerate(checkpoint["options"]):
            params |= {f"i{k}": index, f"c{k}": choice, f"w1_{k}": word1, f"w2_{k}": word2}
            k += 1
    return params


def write_export_sql(session: Session, handle, columns: list[str], config: dict, *,
                     complete_only: bool) -> tuple[int, int]:
    """Write the export's CSV (header ``columns``, then one line per answer) to the text
    ``handle`` with the database formatting each line (module docstring). Returns
    (answers, raters)."""
    dialect = _dialect(session)
    params = _options(config)
    handle.write(",".join(columns) + "\n")
    answers = 0
    # the driver's own cursor: SQLAlchemy rows would cost more than the database's work
    raw = session.connection().connection.dbapi_connection
    fill, drop = [], []
    if dialect == "sqlite":
        fill, sql, drop = sqlite_export(len(params) // 4, complete_only, "topic" in columns)
        cursor = raw.cursor()
    else:                         # a server-side cursor: the rows come FETCH_ROWS at a time
        sql = export_sql(dialect, len(params) // 4, complete_only, "topic" in columns)
        sql = re.sub(r":((?:i|c|w1_|w2_)\d+)\b", r"%(\1)s", sql.replace("%", "%%"))
        cursor = raw.cursor(name="lexgold_export")
    try:
        for statement in drop + fill:        # TEMP tables: nothing of the study is written
            cursor.execute(statement, params)
        cursor.execute(sql, params)
        while rows := cursor.fetchmany(FETCH_ROWS):
            handle.write("".join(map(itemgetter(0), rows)))
            answers += len(rows)
    finally:
        for statement in drop:
            cursor.execute(statement)
        cursor.close()
    done = "completed_at IS NOT NULL AND " if complete_only else ""
    raters = session.execute(text(   # a look-up per rater, not a scan of every answer
        f"SELECT count(*) FROM rater r WHERE {done}(EXISTS (SELECT 1 FROM answer "
        "WHERE rater_id = r.id) OR EXISTS (SELECT 1 FROM checkpoint_answer "
        "WHERE rater_id = r.id))")).scalar_one()
    return answers, int(raters)


def keeps_topic(session: Session, study, complete_only: bool) -> bool:
    """Does the export have a ``topic`` column (a topic study, or an exported answer to a pair
    with a topic)? The pairs are looked at first: without a pair with a topic no answer is
    read (a scan of every answer at 10,000 raters otherwise)."""
    if study.config["group_by"] == "topic":
        return True
    topical = "(p.topic != '' OR p.topic IS NULL)"
    if session.execute(text(f"SELECT 1 FROM pair p WHERE {topical} LIMIT 1")).first() is None:
        return False
    done = " AND r.completed_at IS NOT NULL" if complete_only else ""
    return session.execute(text(
        "SELECT 1 FROM answer a JOIN rater r ON a.rater_id = r.id JOIN item i ON a.item_id = i.id "
        f"JOIN pair p ON i.pair_id = p.id WHERE {topical}{done} LIMIT 1")).first() is not None


def write_study_export(session: Session, handle, *, complete_only: bool) -> tuple[int, int] | None:
    """:func:`write_export_sql` of a slider study with the export's columns; None (nothing
    written) for a Best-Worst study, whose export goes through pandas
    (:func:`lexgold.study.export.write_export`). Needs no pandas, so `lexgold study export`
    starts without importing it."""
    study = session.scalars(select(m.Study)).one()
    if study.config.get("task") == "bws":
        return None
    columns = (EXPORT_COLUMNS + ["topic"] * keeps_topic(session, study, complete_only)
               + ["start_value", "response_ms", "server_ms"] + RATER_CHECKS)
    return write_export_sql(session, handle, columns, study.config, complete_only=complete_only)


def study_description(session: Session) -> dict:
    """What a later step needs to know of the study, as stored at ``study create``.

    ``name``; ``protocol`` (``name``, ``sha256``, ``text``: the protocol file as it was);
    ``language`` and ``pack`` (see :func:`lexgold.languages.packs.pack_record`); ``scale``
    (the raters' scale, ``[min, max]``; ``[0, 1]`` for binary questions); ``pairs``, one dict per
    pair the study rates (``word1, word2, pos, topic, consistency`` and the pair file's other
    columns), in the pair file's order; ``builder_manifest``, the run manifest of the builder
    that wrote the pair file (:func:`lexgold.manifest.manifest_beside`; None when there was none);
    ``machine`` (:func:`machine_record`; None without a machine rater).
    """
    study = session.scalars(select(m.Study)).one()
    config = study.config
    pairs = [{"word1": p.word1, "word2": p.word2, "pos": p.pos, "topic": p.topic,
              "consistency": bool(p.consistency), **(p.extra or {})}
             for p in session.scalars(select(m.Pair).order_by(m.Pair.id))]
    scale = [0, 1] if config["task"] == "binary" else [config["scale_min"], config["scale_max"]]
    return {"lexgold_study": DESCRIPTION_VERSION, "name": study.name,
            "protocol": {"name": study.protocol_name, "sha256": study.protocol_sha256,
                         "text": study.protocol_text},
            "language": config.get("language") or "en", "pack": study.pack,
            "scale": scale, "pairs": pairs,
            "builder_manifest": (study.report or {}).get("builder_manifest"),
            "machine": machine_record(session)}


def machine_record(session: Session) -> dict | None:
    """The description's ``machine`` (docs/contract.md): the machine rater the study's
    allocator used (``study create --machine``, :mod:`lexgold.study.machine`) as ``mode``
    (``allocate``: every score a human mean), ``model``, ``prompt_sha256``, ``file``,
    ``file_sha256`` (of its ratings file, from its provenance) and ``pairs_covered``; None
    for a study without one."""
    machine = session.scalars(select(m.Machine).order_by(m.Machine.id)).first()
    if machine is None:
        return None
    provenance = machine.provenance or {}
    return {"mode": machine.mode, "model": machine.model,
            "prompt_sha256": provenance.get("prompt_sha256"), "file": provenance.get("file"),
            "file_sha256": provenance.get("file_sha256"), "pairs_covered": machine.pairs_covered}
