"""Best-Worst Scaling studies on the site (issue 27): storing the tuple design, a page's tuples,
checking and storing the answers, and the export in the long format ``lexgold process`` reads.

The design (:func:`lexgold.annotate.bws.design_bws`: tranches of pages of tuples, the
consistency tuples in every tranche, the check tuples spread through each) is stored as the
slider designs are: a page is a ``Step`` (``kind`` ``tuples`` or ``checkpoint``, ``checkpoint``
indexing ``[[study.bws.checkpoints]]``), each pair of a tuple an ``Item`` with its design
``tuple_id`` and ``position = tuple's row on the page x tuple_size + pair's row in the tuple``.

An answer to a tuple is one ``Answer`` row per pair of it (``rating`` 1 most, -1 least, 0 the
others; Kiritchenko & Mohammad 2016, section 3), so nothing accepted is lost and the unique
(rater, item) constraint makes a repeated page store nothing. A check tuple's answer is one
``CheckpointAnswer`` (``choice`` the most, ``worst`` the least, ``correct`` both right).

Form fields of a page: ``b<tuple id>`` and ``w<tuple id>`` (the 0-based row of the most and
the least pair in the tuple; ``bc``/``wc`` on a check tuple's page, the pair's index in the
protocol's ``pairs``) and ``t<tuple id>`` (the browser's milliseconds, kept as ``response_ms``).
"""

from __future__ import annotations

import re

import pandas as pd
from sqlalchemy import select
from sqlalchemy.orm import Session

from lexgold.annotate import models as m

#: the columns of a BWS study's export (:mod:`lexgold.process.bws`' long format, then timing
#: and the rater checks of :func:`lexgold.annotate.study.export_ratings`)
BWS_EXPORT_COLUMNS = ["rater_id", "tranche", "tuple_id", "position", "word1", "word2", "pos",
                      "rating", "kind", "answered_at", "response_ms", "server_ms"]
FIELD = re.compile(r"([bwt])(c|[0-9]+)")


def store_bws_design(session: Session, frame: pd.DataFrame, design, raters_per_tranche: int):
    """Store the pairs, tranches, pages (``Step``), tuple items and slots of a BWS design
    (each tranche by :func:`lexgold.annotate.study.store_tranche`)."""
    from lexgold.annotate.bws import tuple_columns
    from lexgold.annotate.study import store_pairs, store_tranche

    columns = tuple_columns(design.tuples)
    members = dict(zip(design.tuples["tuple_id"].astype(int),
                       design.tuples[columns].to_numpy().tolist()))
    in_consistency = {int(i) for t in design.consistency for i in members[t]}
    pair_rows = store_pairs(session, frame, in_consistency)
    row_of = {label: k for k, label in enumerate(frame.index)}

    def tuple_items(page):      # a tuple's pairs in its order: position = row x size + k
        return ((label, kind, int(tuple_id)) for tuple_id, kind in page.tuples
                for label in members[int(tuple_id)])

    for number, pages in enumerate(design.tranches, start=1):
        store_tranche(session, number, pages, lambda label: pair_rows[row_of[label]].id,
                      raters_per_tranche, tuple_items)


def page_tuples(items) -> list[dict]:
    """The tuples of a page's ``(Item, Pair)`` rows, in order: ``tuple_id``, ``kind``,
    ``pairs`` (``(row, Pair)`` in the tuple's order)."""
    tuples: dict[int, dict] = {}
    for item, pair in items:
        entry = tuples.setdefault(item.tuple_id, {"tuple_id": item.tuple_id, "kind": item.kind,
                                                  "items": [], "pairs": []})
        entry["pairs"].append((len(entry["items"]), pair))
        entry["items"].append(item)
    return list(tuples.values())


def _choice(form, key: str, n: int, rejected) -> int:
    raw = form.get(key, "").strip()
    if raw == "":
        raise rejected("error_incomplete")
    from lexgold.annotate.flow import parse_int
    value = parse_int(raw)
    if value is None or not 0 <= value < n:
        raise rejected("error_invalid", f"{key}: choice {raw!r} outside 0..{n - 1}")
    return value


def _check_fields(form, allowed: set[str], rejected) -> None:
    """No answer field for a tuple not on this page (another page's, another rater's)."""
    for key in form:
        found = FIELD.fullmatch(key)
        if found and found.group(2) not in allowed:
            raise rejected("error_invalid", f"answer for tuple {found.group(2)} not on this page")
        if re.fullmatch(r"r[0-9]+|choice", key):
            raise rejected("error_invalid", f"field {key} on a Best-Worst page")


def tuple_answers(form, items, rater, slot, now, rejected, max_ms: int) -> list[m.Answer]:
    """The ``Answer`` rows of a page of tuples, after checking every tuple of the page has a
    most and a least pair, two different ones (:class:`Rejected` ``error_same_pair``), and that
    no field names a tuple that is not on the page (``error_invalid``)."""
    from lexgold.annotate.flow import parse_int

    tuples = page_tuples(items)
    _check_fields(form, {str(t["tuple_id"]) for t in tuples}, rejected)
    rows = []
    for entry in tuples:
        n, key = len(entry["items"]), entry["tuple_id"]
        best = _choice(form, f"b{key}", n, rejected)
        worst = _choice(form, f"w{key}", n, rejected)
        if best == worst:
            raise rejected("error_same_pair", f"tuple {key}: the same pair as most and least")
        ms = parse_int(form.get(f"t{key}", ""))
        ms = ms if ms is not None and 0 <= ms <= max_ms else None
        rows.extend(m.Answer(rater_id=rater.id, item_id=item.id, slot_id=slot.id,
                             rating=int(k == best) - int(k == worst), response_ms=ms,
                             answered_at=now) for k, item in enumerate(entry["items"]))
    return rows


def check_tuple_answer(form, step, rater, slot, config, now, rejected,
                       max_ms: int) -> m.CheckpointAnswer:
    """The ``CheckpointAnswer`` of a check tuple's page (``bc``/``wc``: indices in the
    protocol's ``pairs``), checked as :func:`tuple_answers` checks a tuple."""
    from lexgold.annotate.flow import parse_int

    check = config.bws.checkpoints[step.checkpoint]
    _check_fields(form, {"c"}, rejected)
    best = _choice(form, "bc", len(check.pairs), rejected)
    worst = _choice(form, "wc", len(check.pairs), rejected)
    if best == worst:
        raise rejected("error_same_pair", "check tuple: the same pair as most and least")
    ms = parse_int(form.get("tc", ""))
    return m.CheckpointAnswer(rater_id=rater.id, step_id=step.id, slot_id=slot.id, choice=best,
                              worst=worst, correct=best == check.best and worst == check.worst,
                              answered_at=now,
                              response_ms=ms if ms is not None and 0 <= ms <= max_ms else None)


def export_bws(session: Session, *, complete_only: bool = False) -> pd.DataFrame:
    """Every stored BWS answer in the long format of :mod:`lexgold.process.bws` (one row per
    pair of an answered tuple; check tuples as ``tuple_id`` ``check-<n>``, ``kind``
    ``checkpoint``, positions as the rater saw them), then ``response_ms``, ``server_ms`` and
    the rater checks (``platform``, ``platform_confirmed``, ``fast_pages``, ``browsers``).
    Sorted by tranche, rater, answer time, tuple and position."""
    from lexgold.annotate.flow import option_order
    from lexgold.annotate.study import _rater_checks

    study = session.scalars(select(m.Study)).one()
    size = int(study.config["bws"]["tuple_size"])
    done = m.Rater.completed_at.is_not(None)
    query = (select(m.Rater.public_id, m.Tranche.number, m.Item.tuple_id, m.Item.position,
                    m.Pair.word1, m.Pair.word2, m.Pair.pos, m.Answer.rating, m.Item.kind,
                    m.Answer.answered_at, m.Answer.response_ms, m.Answer.server_ms)
             .join(m.Rater, m.Answer.rater_id == m.Rater.id)
             .join(m.Item, m.Answer.item_id == m.Item.id)
             .join(m.Tranche, m.Item.tranche_id == m.Tranche.id)
             .join(m.Pair, m.Item.pair_id == m.Pair.id).order_by(m.Answer.id))
    rows = [(r, t, str(tid), pos % size, *rest)
            for r, t, tid, pos, *rest in session.execute(
                query.where(done) if complete_only else query).all()]
    checks = study.config["bws"]["checkpoints"]
    cquery = (select(m.Rater.public_id, m.Rater.id, m.Tranche.number, m.Step.id,
                     m.Step.checkpoint, m.CheckpointAnswer.choice, m.CheckpointAnswer.worst,
                     m.CheckpointAnswer.answered_at, m.CheckpointAnswer.response_ms,
                     m.CheckpointAnswer.server_ms)
              .join(m.Rater, m.CheckpointAnswer.rater_id == m.Rater.id)
              .join(m.Step, m.CheckpointAnswer.step_id == m.Step.id)
              .join(m.Tranche, m.Step.tranche_id == m.Tranche.id)
              .order_by(m.CheckpointAnswer.id))
    for public, rid, tranche, step_id, index, best, worst, at, ms, server in session.execute(
            cquery.where(done) if complete_only else cquery).all():
        pairs = checks[index]["pairs"]
        for shown, p in enumerate(option_order(len(pairs), rid, step_id)):
            rows.append((public, tranche, f"check-{index + 1}", shown, pairs[p][0], pairs[p][1],
                         "", int(p == best) - int(p == (worst if worst is not None else -1)),
                         "checkpoint", at, ms, server))
    frame = pd.DataFrame(rows, columns=BWS_EXPORT_COLUMNS)
    frame["answered_at"] = pd.to_datetime(frame["answered_at"]).dt.strftime(
        "%Y-%m-%dT%H:%M:%SZ")
    for column in ("response_ms", "server_ms"):
        frame[column] = frame[column].astype("Int64")
    frame["rating"] = frame["rating"].astype(int)
    frame = frame.merge(_rater_checks(session), on="rater_id", how="left")
    return frame.sort_values(["tranche", "rater_id", "answered_at", "tuple_id", "position"],
                             kind="stable", ignore_index=True)
