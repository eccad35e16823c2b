"""Best-Worst Scaling studies on the site: a page's tuples, and a rater's answers to them checked
and turned into rows (the design is stored by :func:`lexgold.study.store.store_bws_design`, the
answers exported by :func:`lexgold.study.export.export_bws` in the long format ``lexgold
process`` reads).

The design (:func:`lexgold.study.bws.design_bws`: tranches of pages of tuples, the
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

from lexgold.annotate.forms import Rejected, parse_int
from lexgold.study import models as m

FIELD = re.compile(r"([bwt])(c|[0-9]+)")


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


def _choice(form, key: str, n: int) -> int:
    raw = form.get(key, "").strip()
    if raw == "":
        raise Rejected("error_incomplete")
    value = parse_int(raw)
    if value is None or not 0 <= value < n:
        raise Rejected("error_invalid", f"{key}: choice {raw!r} outside 0..{n - 1}")
    return value


def _check_fields(form, allowed: set[str]) -> None:
    """No answer field for a tuple not on this page (another page's, another rater's)."""
    for key in form:
        found = FIELD.fullmatch(key)
        if found and found.group(2) not in allowed:
            raise Rejected("error_invalid", f"answer for tuple {found.group(2)} not on this page")
        if re.fullmatch(r"r[0-9]+|choice", key):
            raise Rejected("error_invalid", f"field {key} on a Best-Worst page")


def tuple_answers(form, items, rater, slot, now, max_ms: int) -> list[m.Answer]:
    """The ``Answer`` rows of a page of tuples, after checking every tuple of the page has a
    most and a least pair, two different ones (:class:`Rejected` ``error_same_pair``), and that
    no field names a tuple that is not on the page (``error_invalid``)."""
    tuples = page_tuples(items)
    _check_fields(form, {str(t["tuple_id"]) for t in tuples})
    rows = []
    for entry in tuples:
        n, key = len(entry["items"]), entry["tuple_id"]
        best = _choice(form, f"b{key}", n)
        worst = _choice(form, f"w{key}", n)
        if best == worst:
            raise Rejected("error_same_pair", f"tuple {key}: the same pair as most and least")
        ms = parse_int(form.get(f"t{key}", ""))
        ms = ms if ms is not None and 0 <= ms <= max_ms else None
        rows.extend(m.Answer(rater_id=rater.id, item_id=item.id, slot_id=slot.id,
                             rating=int(k == best) - int(k == worst), response_ms=ms,
                             answered_at=now) for k, item in enumerate(entry["items"]))
    return rows


def check_tuple_answer(form, step, rater, slot, config, now,
                       max_ms: int) -> m.CheckpointAnswer:
    """The ``CheckpointAnswer`` of a check tuple's page (``bc``/``wc``: indices in the
    protocol's ``pairs``), checked as :func:`tuple_answers` checks a tuple."""
    check = config.bws.checkpoints[step.checkpoint]
    _check_fields(form, {"c"})
    best = _choice(form, "bc", len(check.pairs))
    worst = _choice(form, "wc", len(check.pairs))
    if best == worst:
        raise Rejected("error_same_pair", "check tuple: the same pair as most and least")
    ms = parse_int(form.get("tc", ""))
    return m.CheckpointAnswer(rater_id=rater.id, step_id=step.id, slot_id=slot.id, choice=best,
                              worst=worst, correct=best == check.best and worst == check.worst,
                              answered_at=now,
                              response_ms=ms if ms is not None and 0 <= ms <= max_ms else None)


