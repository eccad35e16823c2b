"""``lexgold plan --machine FILE``: the planner's curve with a machine rater beside it.

A machine spent as a prior (``[process] machine = "prior"``, :mod:`lexgold.machine.prior`) is
worth some number ``w`` of human ratings on this pilot: the ``k`` at which the mean of ``k``
random human ratings matches the machine's Spearman against the held-out mean of the pair's
other ratings (:func:`lexgold.machine.worth.worth_curves`, the figure of ``lexgold machine
worth``). The curve with the machine is the human curve read ``w`` ratings further on,
``r_machine(k) = r(k + w)``, linear between whole ``k``; the raters it needs for the target
follow. It is an approximation, and labelled so: worth is measured as accuracy against human
means, and a gold built on the machine flatters that machine (its circularity), which
``lexgold replay --machine`` measures on a real log.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from lexgold.errors import InputError

#: most human ratings per pair the worth is measured up to
POOL = 5


def machine_curve(result: dict, ratings: pd.DataFrame, machine: pd.DataFrame, *,
                  rng: np.random.Generator, splits: int = 40) -> dict:
    """The curve of :func:`lexgold.process.plan.plan_study`'s ``result`` with the machine.

    Returns
    -------
    dict
        ``worth`` (median and the spread of 90 % of the splits, in human ratings),
        ``pairs_covered``, ``pool`` (human ratings the worth was measured up to), ``curve``
        (``raters, reliability`` with the machine; None beyond the human curve's end),
        ``raters_needed`` (None beyond ``max_raters``).

    Raises
    ------
    InputError
        The machine covers fewer than 3 of the pilot's pairs with two ratings or more.
    """
    from lexgold.machine.prior import machine_for
    from lexgold.machine.worth import rating_matrix, summarise_curves, worth_curves

    pairs, matrix = rating_matrix(ratings)
    values = machine_for(pairs, machine)
    counts = np.isfinite(matrix).sum(axis=1)
    pool = int(min(POOL, max(int(counts.max()) - 1, 0)))
    usable = int((np.isfinite(values) & (counts > pool)).sum()) if pool else 0
    if usable < 3:
        raise InputError(f"the machine covers {usable} of the pilot's pairs with more than one "
                         "rating; its worth needs 3 or more", field="--machine")
    found = summarise_curves(worth_curves(matrix, values, pool=pool, splits=splits, rng=rng))
    worth = found["ratings_spearman"]
    curve = pd.DataFrame(result["curve"])
    raters = curve["raters"].to_numpy(float)
    human = curve["reliability"].to_numpy(float)
    rows = []
    for k in raters:
        at = k + worth["median"]
        value = float(np.interp(at, raters, human)) if at <= raters[-1] else None
        rows.append({"raters": int(k), "reliability": value})
    needed = next((row["raters"] for row in rows if row["reliability"] is not None
                   and row["reliability"] >= result["target"]), None)
    return {"worth": worth, "pairs_covered": int(np.isfinite(values).sum()),
            "pairs": int(len(pairs)), "pool": pool,
            "model": machine.attrs.get("provenance", {}).get("model"),
            "curve": rows, "raters_needed": needed}


def machine_lines(found: dict, target: float) -> list[str]:
    """What ``lexgold plan --machine`` adds to the summary."""
    worth = found["worth"]
    needed = found["raters_needed"]
    model = found.get("model") or "the machine"
    return [f"with {model} as a prior (approximate: the human curve read {worth['median']:.2f} "
            f"ratings further on, its worth on this pilot [{worth['low']:.2f}, "
            f"{worth['high']:.2f}] over {found['pool']} held-out human ratings, "
            f"{found['pairs_covered']} of {found['pairs']} pairs covered, for which the curve "
            f"holds): "
            + (f"{needed} raters per pair reach {target:g}" if needed is not None
               else f"{target:g} not reached on the curve"),
            "  a gold built on the machine flatters it (circularity): `lexgold replay "
            "--machine` measures by how much on a real log"]
