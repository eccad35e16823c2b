"""Best-Worst Scaling tuples of word pairs and their tranches (``[study] task = "bws"``).

Kiritchenko & Mohammad (2016, section 3; 2017, section 3) annotate ``2N`` 4-tuples of ``N``
items, generated so that each item occurs in the same number of tuples (8 for 2N 4-tuples) and
no two items occur together in more than one tuple where possible: random tuples, then swaps
("random-with-swaps"). :func:`make_tuples` does that: it concatenates ``k`` random
permutations of the items (each item ``k`` times), cuts them into tuples, and swaps items
between tuples as long as a tuple holds an item twice or two items meet more than once.
:func:`tuple_balance` checks and reports the result, as ``report["balance"]`` of
:func:`design_bws`.

A tranche is a list of pages; a page holds ``tuples_per_page`` tuples (one per row) of one part
of speech, or one check tuple. The ``consistency_tuples`` are shown in every tranche (as the
slider studies' consistency set); the check tuples are spread evenly through every tranche.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
import pandas as pd

from lexgold.study.config import BwsStudy, StudyConfig
from lexgold.errors import InputError

#: penalty of an item twice in one tuple, against one repeated co-occurrence
DUPLICATE_COST = 1000


@dataclass
class BwsPage:
    """One page of a tranche: tuples (``(tuple id, kind)``, kind ``unique`` or
    ``consistency``) or one check tuple (``checkpoint``: index into ``bws.checkpoints``)."""

    kind: str                       # "tuples" or "checkpoint"
    batch: str                      # part of speech ("" when tuples are not POS-pure)
    tuples: list[tuple[int, str]] = field(default_factory=list)
    checkpoint: int | None = None


@dataclass
class BwsDesign:
    tuples: pd.DataFrame            # tuple_id, pos, p0..p{size-1} (pair rows)
    tranches: list[list[BwsPage]]
    consistency: list[int]          # tuple ids shown in every tranche
    report: dict


def make_tuples(items, n_tuples: int, size: int, rng: np.random.Generator, *,
                rounds: int = 200) -> np.ndarray:
    """``n_tuples`` tuples of ``size`` distinct items, each item in the same number of tuples.

    Parameters
    ----------
    items : sequence of int
        The items (pair rows); at least ``size``.
    n_tuples : int
        How many tuples (K&M: ``2 * len(items)``).
    size : int
        Items per tuple (K&M: 4).
    rng : numpy.random.Generator
        The only source of randomness.
    rounds : int
        Passes of swaps over the tuples that still hold an item twice or a repeated
        co-occurrence (0: the random tuples as drawn).

    Returns
    -------
    numpy.ndarray
        ``(n_tuples, size)`` item ids. Each item occurs ``n_tuples * size // len(items)`` or
        one more times (the extra occurrences, when ``n_tuples * size`` is not a multiple of
        the number of items, go to randomly chosen items).

    Notes
    -----
    With few items, some items must meet twice (``len(items) - 1`` partners are too few for
    ``k * (size - 1)`` places): the swaps then minimise the repeats. :func:`tuple_balance`
    reports what is left.

    References
    ----------
    Kiritchenko & Mohammad 2016, section 3 ("random-with-swaps"); 2017, section 3.
    """
    items = np.asarray(list(items))
    n = len(items)
    if n < size:
        raise InputError(f"a tuple of {size} distinct pairs needs at least {size} pairs, "
                         f"found {n}", field="tuple_size")
    total = n_tuples * size
    k, extra = divmod(total, n)
    sequence = [rng.permutation(items) for _ in range(k)]
    if extra:
        sequence.append(rng.choice(items, extra, replace=False))
    tuples = np.concatenate(sequence).reshape(n_tuples, size)
    _swap(tuples, rng, rounds)
    _repair(tuples, rng)
    return tuples


def _repair(tuples: np.ndarray, rng: np.random.Generator) -> None:
    """Remove any item left twice in a tuple by a swap with a tuple that lacks it (in place)."""
    n, size = tuples.shape
    for r in range(n):
        while len(set(tuples[r].tolist())) < size:
            seen, i = set(), 0
            for i, item in enumerate(tuples[r].tolist()):
                if item in seen:
                    break
                seen.add(item)
            for other in rng.permutation(n):
                if tuples[r, i] in tuples[other]:
                    continue
                fits = [j for j in range(size) if tuples[other, j] not in tuples[r]]
                if fits:
                    j = fits[int(rng.integers(0, len(fits)))]
                    tuples[r, i], tuples[other, j] = tuples[other, j], tuples[r, i]
                    break
            else:                     # cannot happen with more distinct items than size
                raise InputError(f"no tuple design without repeats for {size}-tuples",
                                 field="tuple_size")


def _pairs_of(row) -> list[tuple]:
    return [(a, b) if a < b else (b, a) for a, b in combinations(row, 2)]


def _bad(row, together: Counter) -> bool:
    """A tuple holding an item twice, or two items that also meet in another tuple."""
    return len(set(row)) < len(row) or any(together[p] > 1 for p in _pairs_of(row)
                                           if p[0] != p[1])


def _swap(tuples: np.ndarray, rng: np.random.Generator, rounds: int) -> None:
    """Swap an item of a bad tuple with one of a random other tuple when the cost (items twice
    in a tuple x DUPLICATE_COST + pairs of tuples sharing two items, ``sum(c (c - 1) / 2)``
    over co-occurrence counts ``c``: 0 when no two items meet twice, else lowest when the
    meetings are spread evenly) does not rise (in place)."""
    together = Counter(p for row in tuples.tolist() for p in _pairs_of(row) if p[0] != p[1])
    state = {"excess": sum(c * (c - 1) // 2 for c in together.values())}

    def move(rows, sign):
        for r in rows:
            for p in _pairs_of(tuples[r].tolist()):
                if p[0] == p[1]:
                    continue
                state["excess"] += together[p] if sign > 0 else -(together[p] - 1)
                together[p] += sign

    def cost(rows):
        dup = sum(len(set(tuples[r].tolist())) < tuples.shape[1] for r in rows)
        return DUPLICATE_COST * dup + state["excess"]

    n, size = tuples.shape
    for _ in range(rounds):
        bad = [r for r in range(n) if _bad(tuples[r].tolist(), together)]
        if not bad:
            return
        for r in rng.permutation(bad):
            other = int(rng.integers(0, n - 1))
            other += other >= r
            i, j = int(rng.integers(0, size)), int(rng.integers(0, size))
            if tuples[other, j] == tuples[r, i]:
                continue
            rows = (int(r), other)
            before = cost(rows)
            move(rows, -1)
            tuples[r, i], tuples[other, j] = tuples[other, j], tuples[r, i]
            move(rows, +1)
            if cost(rows) > before:
                move(rows, -1)
                tuples[r, i], tuples[other, j] = tuples[other, j], tuples[r, i]
                move(rows, +1)


def tuple_balance(tuples: np.ndarray, items=None, groups=None) -> dict:
    """The balance of a tuple design.

    Returns
    -------
    dict
        ``tuples``, ``items`` (distinct items used, or of ``items`` when given),
        ``occurrences_min``/``_max`` (tuples per item; equal is balanced),
        ``items_unused`` (of ``items``, in no tuple), ``repeated_in_tuple`` (tuples holding an
        item twice; 0 is required), ``cooccurrence_max`` (most tuples two items share) and
        ``pairs_together_more_than_once`` (item pairs in more than one tuple; 0 is best),
        ``cooccurrence_floor`` (the least ``cooccurrence_max`` possible: an item of ``k``
        tuples has ``k * (size - 1)`` partners' places for ``items - 1`` partners),
        ``balanced`` (equal occurrences, no item twice in a tuple, ``cooccurrence_max`` at the
        floor: no two items together more than once where possible).

    Examples
    --------
    >>> tuple_balance(np.array([[0, 1, 2, 3], [0, 1, 4, 5]]))["pairs_together_more_than_once"]
    1
    """
    tuples = np.asarray(tuples)
    counts = Counter(tuples.ravel().tolist())
    universe = sorted(counts) if items is None else list(items)
    per_item = [counts.get(i, 0) for i in universe]
    together = Counter(p for row in tuples.tolist() for p in set(_pairs_of(row))
                       if p[0] != p[1])
    repeated = int(sum(len(set(row)) < len(row) for row in tuples.tolist()))
    over = int(sum(c > 1 for c in together.values()))
    low, high = (min(per_item), max(per_item)) if per_item else (0, 0)
    size = tuples.shape[1] if tuples.ndim == 2 else 0
    members = Counter(groups[i] for i in universe) if groups is not None else None
    floor = max((math.ceil(counts.get(i, 0) * (size - 1) / (members[groups[i]] - 1))
                 for i in universe if members[groups[i]] > 1), default=0) \
        if members is not None else \
        (math.ceil(high * (size - 1) / (len(universe) - 1)) if len(universe) > 1 else 0)
    floor = max(floor, 1 if len(tuples) else 0)
    most = int(max(together.values(), default=0))
    return {"tuples": len(tuples), "items": len(universe),
            "occurrences_min": int(low), "occurrences_max": int(high),
            "items_unused": int(sum(c == 0 for c in per_item)),
            "repeated_in_tuple": repeated,
            "cooccurrence_max": most, "cooccurrence_floor": int(floor),
            "pairs_together_more_than_once": over,
            "balanced": low == high and repeated == 0 and most <= floor}


def bws_tuples(pairs: pd.DataFrame, bws: BwsStudy, rng: np.random.Generator) -> pd.DataFrame:
    """The tuples of a pair set: ``tuple_id, pos, p0 .. p{size-1}`` (rows of ``pairs``).

    With ``pos_pure`` each part of speech gets its own tuples, ``round(tuples_per_pair * N_pos)``
    of them; else one design over all pairs. Raises :class:`InputError` (naming the part of
    speech) when a group has fewer pairs than a tuple holds.
    """
    groups = ([(pos, pairs.index[pairs["pos"] == pos]) for pos in sorted(set(pairs["pos"]))]
              if bws.pos_pure else [("", pairs.index)])
    frames = []
    for pos, index in groups:
        if len(index) < bws.tuple_size:
            raise InputError(f"POS-pure tuples of {bws.tuple_size} pairs: part of speech "
                             f"{pos} has only {len(index)} pairs (set pos_pure = false, or "
                             f"add pairs)", field="pos")
        n_tuples = max(1, round(bws.tuples_per_pair * len(index)))
        rows = make_tuples(index.to_numpy(), n_tuples, bws.tuple_size, rng,
                           rounds=bws.swap_rounds)
        frame = pd.DataFrame(rows, columns=[f"p{i}" for i in range(bws.tuple_size)])
        frames.append(frame.assign(pos=pos))
    tuples = pd.concat(frames, ignore_index=True)
    tuples.insert(0, "tuple_id", np.arange(1, len(tuples) + 1))
    return tuples[["tuple_id", "pos"] + [f"p{i}" for i in range(bws.tuple_size)]]


def tuple_columns(tuples: pd.DataFrame) -> list[str]:
    """The pair-row columns ``p0, p1, ...`` of a tuple table."""
    return [c for c in tuples.columns if c[:1] == "p" and c[1:].isdigit()]


def design_bws(pairs: pd.DataFrame, config: StudyConfig, rng: np.random.Generator) -> BwsDesign:
    """Tuples, tranches and pages of a BWS study (module docstring).

    ``pairs`` is a checked pair frame (:func:`lexgold.study.pairs.check_pairs`); the design
    reads ``config.bws``, ``config.tranches``, ``config.pos_order``.
    """
    bws = config.bws
    tuples = bws_tuples(pairs, bws, rng)
    ids = tuples["tuple_id"].to_numpy()
    n_cons = min(bws.consistency_tuples, max(0, len(ids) - 1))
    consistency = sorted(int(i) for i in rng.choice(ids, n_cons, replace=False))
    rest = rng.permutation([int(i) for i in ids if i not in set(consistency)])
    n_tranches = config.tranches or max(1, math.ceil(len(rest) / bws.tuples_per_tranche))
    n_tranches = max(1, min(n_tranches, len(rest)))
    pos_of = dict(zip(tuples["tuple_id"], tuples["pos"]))
    order = {p: i for i, p in enumerate(config.pos_order)}
    tranches = []
    for share in np.array_split(rest, n_tranches):
        shown = [(int(t), "unique") for t in share] + [(t, "consistency") for t in consistency]
        shown = [shown[i] for i in rng.permutation(len(shown))]
        shown.sort(key=lambda item: order.get(pos_of[item[0]], len(order)))
        pages = []
        for pos in dict.fromkeys(pos_of[t] for t, _ in shown):
            batch = [item for item in shown if pos_of[item[0]] == pos]
            for start in range(0, len(batch), bws.tuples_per_page):
                pages.append(BwsPage("tuples", pos, batch[start:start + bws.tuples_per_page]))
        n_check = len(bws.checkpoints)
        for c in reversed(range(n_check)):            # evenly spread, from the back
            at = round((c + 1) * len(pages) / (n_check + 1))
            pages.insert(at, BwsPage("checkpoint", "", checkpoint=c))
        tranches.append(pages)
    report = {"balance": tuple_balance(tuples[tuple_columns(tuples)].to_numpy(), pairs.index,
                                       pairs["pos"] if bws.pos_pure else None),
              "tuple_size": bws.tuple_size, "tuples_per_pair": bws.tuples_per_pair,
              "pos_pure": bws.pos_pure, "tranches": len(tranches),
              "tuples_per_tranche": [sum(len(p.tuples) for p in pages) for pages in tranches],
              "pages_per_tranche": [len(pages) for pages in tranches],
              "consistency_tuples": consistency}
    return BwsDesign(tuples, tranches, consistency, report)
