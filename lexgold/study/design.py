"""The tranche designer: a pair set and a ``[study]`` table in, tranches of groups out.

SimLex-999 (Hill et al. 2015, sections 3.2, 3.4): a consistency set (14 N, 4 V, 2 A) shown in
every tranche; groups of 7 (the last 6), POS-pure and batched by POS; from the second group on
the first pair repeats the previous group's last pair (calibration) and the second is a
consistency pair; the checkpoints with ``before = "start"`` (section 3.2: one with abstract and
one with concrete examples, "immediately following the instructions") open every tranche, and
a checkpoint comes before the first group of each POS. HyperLex (Vulic et al. 2017, section 4.4):
79 showings per tranche, 50 unique + 20 consistency + 9 duplicates, equal N/V counts per tranche.
TR9856 (Levy et al. 2015, section 3.4): binary labels, pairs grouped by topic.

The papers' own figures do not add up (999 - 20 = 979 unique pairs are not 10 x 99; 2,596 are
not 45 x 50), so the layout is generated from the parameters: unique pairs of each batch are
spread evenly over the tranches, each batch gets the fewest groups of at most
``group_size_max``, and every constraint the generator could not satisfy is listed in
``report["unmet"]``, and summed up by kind in ``report["unmet_summary"]`` (a few lines that say
what the misses mean and whether anything needs doing). The design is computed once and stored,
so every rater of a tranche sees the same groups in the same order.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from lexgold.study.config import START, StudyConfig


@dataclass
class PlannedStep:
    """One page of a tranche as designed, before :func:`lexgold.study.store.store_tranche` stores
    it as a :class:`lexgold.study.models.Step` row: a group of items or a checkpoint question."""

    kind: str                      # "group" or "checkpoint"
    batch: str                     # part of speech, topic, or "start" (after the instructions)
    items: list[tuple[int, str]] = field(default_factory=list)  # (pair row, item kind)
    checkpoint: int | None = None  # index into config.checkpoints


@dataclass
class Design:
    tranches: list[list[PlannedStep]]
    consistency: list[int]
    report: dict


@dataclass
class Unmet:
    """One constraint the designer could not satisfy: its kind (what the summary groups by),
    the tranche and batch it concerns (when one), a count (a group's size, duplicates not
    placed) and the message listed in ``report["unmet"]``."""

    kind: str
    message: str
    tranche: int | None = None
    batch: str | None = None
    count: int = 0


def design_study(pairs: pd.DataFrame, config: StudyConfig, rng: np.random.Generator) -> Design:
    """Lay out tranches, groups and checkpoints for a study.

    Parameters
    ----------
    pairs : pandas.DataFrame
        From :func:`lexgold.study.pairs.read_study_pairs` (``word1, word2, pos, topic,
        consistency``).
    config : StudyConfig
        The protocol's ``[study]`` table.
    rng : numpy.random.Generator
        The only source of randomness (choice of consistency pairs, order, duplicates).

    Returns
    -------
    Design
        ``tranches`` (list of steps per tranche), the consistency pair rows, and ``report``
        with per-tranche counts, ``unmet`` (every constraint that could not be met) and
        ``unmet_summary`` (the same grouped by kind; see :func:`summarise_unmet`).
    """
    unmet: list[Unmet] = []
    key = "pos" if config.group_by == "pos" else "topic"
    batches = _batch_order(pairs[key], config, unmet)
    consistency = _consistency(pairs, config, rng, unmet) if key == "pos" else []
    unique = pairs.index.difference(consistency)
    n_tranches = config.tranches or max(1, math.ceil(len(unique) / config.unique_per_tranche))
    shares = _spread(pairs.loc[unique, key], batches, n_tranches, rng)
    cons_by_batch = {b: [i for i in consistency if pairs.at[i, key] == b] for b in batches}
    dup_target = _split_duplicates(shares, config.duplicates_per_tranche)
    tranches = []
    opening = [i for i, check in enumerate(config.checkpoints) if check.before == START]
    for t in range(n_tranches):
        steps = [PlannedStep("checkpoint", START, checkpoint=i) for i in opening]
        previous_last = None
        for b_index, batch in enumerate(batches):
            if not shares[t][batch] and not cons_by_batch[batch]:
                continue
            cal_first = (config.calibration_repeat and config.calibration_across_batches
                         and previous_last is not None)
            groups = _batch_groups(shares[t][batch], list(cons_by_batch[batch]),
                                   dup_target[t][batch], config, rng, unmet, (t + 1, batch))
            if cal_first:
                groups[0].insert(0, (previous_last, "calibration"))
            check = _checkpoint_for(batch, config) if key == "pos" else None
            if check is not None:
                steps.append(PlannedStep("checkpoint", batch, checkpoint=check))
            steps.extend(PlannedStep("group", batch, items=g) for g in groups)
            previous_last = groups[-1][-1][0]
        if any(step.kind == "group" for step in steps):
            tranches.append(steps)
    if len(tranches) < n_tranches:
        unmet.append(Unmet("dropped_tranches", f"{n_tranches - len(tranches)} of {n_tranches} "
                           "tranches got no pairs and were dropped",
                           count=n_tranches - len(tranches)))
    report = _report(tranches, pairs, config, consistency, key, unmet)
    return Design(tranches, list(consistency), report)


def _batch_order(values: pd.Series, config: StudyConfig, unmet: list[str]) -> list[str]:
    present = sorted(set(values))
    if config.group_by == "topic":
        return present
    order = [p for p in config.pos_order if p in present]
    others = [p for p in present if p not in config.pos_order]
    if others:
        unmet.append(Unmet("pos_order", f"parts of speech {', '.join(others)} are not in "
                           "pos_order; shown after the others"))
    return order + others


def _consistency(pairs, config, rng, unmet) -> list[int]:
    flagged = list(pairs.index[pairs["consistency"]])
    if flagged:
        return flagged
    chosen = []
    for pos, wanted in config.consistency.items():
        pool = pairs.index[pairs["pos"] == pos].to_numpy()
        if len(pool) < wanted:
            unmet.append(Unmet("consistency_set", f"consistency set: {wanted} {pos} pairs "
                               f"wanted, only {len(pool)} exist", batch=pos))
        take = min(wanted, max(len(pool) - 1, 0))
        chosen.extend(int(i) for i in rng.choice(pool, size=take, replace=False))
    return sorted(chosen)


def _spread(keys: pd.Series, batches, n_tranches, rng) -> list[dict[str, list[int]]]:
    """Unique pairs of each batch shuffled and dealt into near-equal parts, one per tranche.

    The tranches that get one pair more rotate from batch to batch so tranche totals stay
    within one pair of each other per batch (HyperLex: equal N/V counts per tranche)."""
    shares = [{b: [] for b in batches} for _ in range(n_tranches)]
    offset = 0
    for batch in batches:
        rows = keys.index[keys == batch].to_numpy()
        rows = rows[rng.permutation(len(rows))]
        for j, part in enumerate(np.array_split(rows, n_tranches)):
            shares[(j + offset) % n_tranches][batch] = [int(i) for i in part]
        offset += len(rows) % n_tranches
    return shares


def _split_duplicates(shares, per_tranche: int) -> list[dict[str, int]]:
    """Duplicates of a tranche shared among its batches in proportion to their unique pairs."""
    out = []
    for share in shares:
        sizes = {b: len(v) for b, v in share.items()}
        total = sum(sizes.values()) or 1
        exact = {b: per_tranche * n / total for b, n in sizes.items()}
        counts = {b: int(math.floor(x)) for b, x in exact.items()}
        left = per_tranche - sum(counts.values())
        for b in sorted(exact, key=lambda b: counts[b] - exact[b])[:left]:
            counts[b] += 1
        out.append(counts)
    return out


def _batch_groups(unique, consistency, n_dup, config, rng, unmet, where):
    """Groups of one POS (or topic) batch of one tranche (``where``: tranche number, batch);
    see the module docstring."""
    cal = 1 if config.calibration_repeat else 0
    content = len(unique) + len(consistency) + n_dup
    n_groups = max(1, math.ceil((content - cal) / (config.group_size_max - cal)))
    total = content + cal * (n_groups - 1)
    sizes = [total // n_groups + (1 if g < total % n_groups else 0) for g in range(n_groups)]
    dup_slots = _dup_slots(n_groups, n_dup, unmet, where)
    order = [(i, "unique") for i in unique]
    second = []
    if config.consistency_second:
        second, extra = consistency[:n_groups], consistency[n_groups:]
        if len(second) < n_groups and consistency:
            unmet.append(_at(where, "no_consistency_second", f"{n_groups - len(second)} groups "
                             "have no consistency pair", n_groups - len(second)))
    else:
        extra = consistency
    for i in extra:
        order.insert(int(rng.integers(0, len(order) + 1)), (i, "consistency"))
    groups, cursor = [], 0
    for g in range(n_groups):
        items = [(groups[-1][-1][0], "calibration")] if cal and g else []
        if g < len(second):
            items.append((second[g], "consistency"))
        room = sizes[g] - len(items) - dup_slots[g]
        items.extend(order[cursor:cursor + room])
        cursor += room
        groups.append(items)
    _place_duplicates(groups, dup_slots, rng, unmet, where)
    for g, items in enumerate(groups):
        if not config.group_size_min <= len(items) <= config.group_size_max:
            unmet.append(_at(where, "group_size", f"group {g + 1} has {len(items)} pairs "
                             f"(wanted {config.group_size_min}-{config.group_size_max})",
                             len(items)))
    return groups


def _dup_slots(n_groups, n_dup, unmet, where) -> list[int]:
    """Duplicate showings go to groups 2.. (a duplicate must follow its first showing)."""
    slots = [0] * n_groups
    if n_dup and n_groups < 2:
        unmet.append(_at(where, "duplicates", f"{n_dup} duplicates need at least two groups; "
                         "none placed", n_dup))
        return slots
    for k in range(n_dup):
        slots[n_groups - 1 - k % (n_groups - 1)] += 1
    return slots


def _place_duplicates(groups, dup_slots, rng, unmet, where):
    used = set()
    for g, count in enumerate(dup_slots):
        for _ in range(count):
            candidates = [i for h in range(g) for i, kind in groups[h][:-1]
                          if kind == "unique" and i not in used]
            if not candidates:
                unmet.append(_at(where, "duplicates", "no earlier unique pair left to duplicate "
                                 f"in group {g + 1}", 1))
                continue
            pair = candidates[int(rng.integers(len(candidates)))]
            used.add(pair)
            low = 1 if groups[g] and groups[g][0][1] == "calibration" else 0
            position = int(rng.integers(low, max(low, len(groups[g]) - 1) + 1))
            groups[g].insert(min(position, max(len(groups[g]) - 1, low)), (pair, "duplicate"))


def _checkpoint_for(batch: str, config: StudyConfig) -> int | None:
    for index, check in enumerate(config.checkpoints):
        if check.before == batch:
            return index
    return None


def _report(tranches, pairs, config, consistency, key, unmet) -> dict:
    rows = []
    for t, steps in enumerate(tranches):
        kinds: dict[str, int] = {}
        per_batch: dict[str, int] = {}
        for step in steps:
            for i, kind in step.items:
                kinds[kind] = kinds.get(kind, 0) + 1
                per_batch[step.batch] = per_batch.get(step.batch, 0) + 1
        groups = [len(s.items) for s in steps if s.kind == "group"]
        rows.append({"tranche": t + 1, "showings": sum(groups), "groups": len(groups),
                     "checkpoints": sum(s.kind == "checkpoint" for s in steps),
                     "kinds": kinds, f"showings_per_{key}": per_batch,
                     "group_sizes": groups})
    counts = sorted({r["kinds"].get("unique", 0) for r in rows})
    if key == "pos" and counts and counts != [config.unique_per_tranche]:
        unmet.insert(0, Unmet("layout", f"unique pairs per tranche: {counts[0]}-{counts[-1]} "
                              f"(the paper's layout has {config.unique_per_tranche})"))
    if key == "pos" and config.checkpoints:
        missing = sorted(set(pairs["pos"]) - {c.before for c in config.checkpoints})
        if missing:
            unmet.append(Unmet("checkpoint", f"no checkpoint defined for {', '.join(missing)}"))
    n_groups = sum(r["groups"] for r in rows)
    return {"pairs": int(len(pairs)), "consistency": len(consistency),
            "tranches": len(tranches), "per_tranche": rows,
            "unmet": [u.message for u in unmet],
            "unmet_summary": summarise_unmet(unmet, config, unique_counts=counts,
                                             n_unique=len(pairs) - len(consistency),
                                             n_tranches=len(tranches), n_groups=n_groups)}


def _at(where: tuple[int, str], kind: str, message: str, count: int) -> Unmet:
    """A miss in batch ``where[1]`` of tranche ``where[0]`` ("tranche 2, batch V: ...")."""
    tranche, batch = where
    return Unmet(kind, f"tranche {tranche}, batch {batch}: {message}", tranche, batch, count)


# -- the summary printed by `lexgold study create` ----------------------------------------------

#: unique pairs per tranche within this share of the protocol's figure count as its layout
LAYOUT_TOLERANCE = 0.2


def summarise_unmet(unmet: list[Unmet], config: StudyConfig, *, unique_counts: list[int],
                    n_unique: int, n_tranches: int, n_groups: int) -> list[str]:
    """The misses of a design grouped by kind, one line per kind: how many, where, what they
    mean and whether anything needs doing. ``unique_counts`` are the distinct numbers of unique
    pairs per tranche; ``n_unique``, ``n_tranches``, ``n_groups`` the design's totals.

    >>> found = [_at((t, "V"), "group_size", "group 2 has 5 pairs (wanted 6-7)", 5)
    ...          for t in (10, 11, 12)]
    >>> print(summarise_unmet(found, StudyConfig(), unique_counts=[50], n_unique=500,
    ...                       n_tranches=10, n_groups=90)[0])  # doctest: +ELLIPSIS
    group sizes: 3 of 90 groups have 5 pairs, outside 6-7 (batch V in tranches 10-12): ...
    """
    by_kind: dict[str, list[Unmet]] = {}
    for miss in unmet:
        by_kind.setdefault(miss.kind, []).append(miss)
    lines = []
    for kind, found in by_kind.items():
        if kind == "layout":
            lines.append(_layout_line(config, unique_counts, n_unique, n_tranches))
        elif kind == "no_consistency_second":
            lines.append(f"consistency pair second in each group: {_count(found)} groups "
                         f"({_where(found)}) have none, as the batch has more groups than "
                         "consistency pairs; harmless (every consistency pair is still shown "
                         "in every tranche): nothing to do")
        elif kind == "group_size":
            sizes = " or ".join(str(n) for n in sorted({m.count for m in found}))
            lines.append(f"group sizes: {len(found)} of {n_groups} groups have {sizes} pairs, "
                         f"outside {config.group_size_min}-{config.group_size_max} "
                         f"({_where(found)}): the batch's pairs do not fill groups of that "
                         "size; harmless (a shorter page): nothing to do")
        elif kind == "duplicates":
            lines.append(f"duplicates: {_count(found)} not placed ({_where(found)}): a batch "
                         "needs two groups, and unique pairs in the earlier one, to repeat a "
                         "pair; those tranches check self-consistency on fewer pairs (fewer "
                         "[study] tranches, so more pairs per tranche, avoid it)")
        elif kind == "consistency_set":
            wanted = "; ".join(m.message.removeprefix("consistency set: ") for m in found)
            lines.append(f"consistency set: {wanted}: the pair set has too few pairs of that "
                         "part of speech; check the pair file or [study] consistency")
        else:
            advice = {"pos_order": "add them to [study] pos_order to choose their place",
                      "checkpoint": "their batches start without a checkpoint question; add "
                                    "[[study.checkpoints]] for them if there should be one",
                      "dropped_tranches": "too few pairs for [study] tranches: lower it"}
            lines.extend(f"{m.message}: {advice[kind]}" if kind in advice else m.message
                         for m in found)
    return lines


def _layout_line(config: StudyConfig, counts: list[int], n_unique: int, n_tranches: int) -> str:
    """Unique pairs per tranche against the protocol's figure: expected when close (the papers'
    figures do not add up: 979 SimLex pairs are not 10 x 99), else how to change it."""
    wanted, low, high = config.unique_per_tranche, counts[0], counts[-1]
    shown = f"{low}" if low == high else f"{low}-{high}"
    line = (f"layout: {shown} unique pairs per tranche where the protocol's figure is {wanted} "
            f"({n_unique} unique pairs spread evenly over {n_tranches} "
            f"tranche{'s' if n_tranches != 1 else ''})")
    if all(abs(n - wanted) <= LAYOUT_TOLERANCE * wanted for n in counts):
        return line + (": expected, the paper's own figures do not add up (docs/annotate.md, "
                       "\"The design\"); nothing to do")
    line += f": the pair set is {'smaller' if high < wanted else 'larger'} than the protocol's " \
            "layout is for"
    suggested = max(1, round(n_unique / wanted))
    if suggested == n_tranches:
        return line + "; nothing to do unless the pair set is not the one you meant"
    return line + (f"; for about {wanted} per tranche set [study] tranches = {suggested} in a "
                   "copy of the protocol")


def _count(found: list[Unmet]) -> int:
    return sum(m.count for m in found)


def _where(found: list[Unmet]) -> str:
    """Where misses are: ``batch V in tranches 2-9``."""
    batches = sorted({m.batch for m in found if m.batch is not None})
    tranches = sorted({m.tranche for m in found if m.tranche is not None})
    parts = []
    if batches:
        parts.append(f"batch{'es' if len(batches) > 1 else ''} {' and '.join(batches)}")
    if tranches:
        parts.append(f"tranche{'s' if len(tranches) > 1 else ''} {_ranges(tranches)}")
    return " in ".join(parts)


def _ranges(numbers: list[int]) -> str:
    """``[2, 3, 4, 9]`` -> ``"2-4, 9"``."""
    runs: list[list[int]] = []
    for n in numbers:
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    return ", ".join(f"{r[0]}-{r[-1]}" if len(r) > 1 else f"{r[0]}" for r in runs)


def option_order(n: int, rater_id: int, step_id: int) -> list[int]:
    """Checkpoint options in an order fixed per rater and step (the answer is not always first)."""
    return [int(i) for i in np.random.default_rng([rater_id, step_id]).permutation(n)]
