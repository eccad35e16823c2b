"""Calibration of systematic rater bias on the consistency set (SimLex-999 section 3.6)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from lexgold.errors import InputError
from lexgold.ratings import ITEM
from lexgold.ratings.long import check_ratings, consistency_items


def calibration_shifts(ratings: pd.DataFrame, *, threshold: float = 1.0,
                       shift: float = 1.0) -> pd.DataFrame:
    """Each rater's mean on the consistency set and the shift the SimLex rule gives it.

    Parameters
    ----------
    ratings : pandas.DataFrame
        Long format (docs/contract.md). The consistency set is the items of ``kind ==
        "consistency"``, else the items rated in every tranche.
    threshold : float
        A rater is shifted when ``|rater mean - mean of all raters' means| > threshold``.
    shift : float
        Size of the shift, towards the population.

    Returns
    -------
    pandas.DataFrame
        ``rater_id, consistency_mean, population_mean, shift`` (``shift`` is +shift, -shift
        or 0). Raters with no consistency answer get shift 0 and a NaN mean.

    References
    ----------
    Hill, Reichart & Korhonen (2015), SimLex-999, section 3.6: 32 raters were more than 1 away
    from the mean of all averages and were shifted by one.
    """
    frame = check_ratings(ratings)
    frame = frame[frame["kind"] != "checkpoint"]
    items = consistency_items(frame)
    on_set = frame.merge(items, on=ITEM, how="inner")
    means = on_set.groupby("rater_id")["rating"].mean()
    raters = pd.Index(frame["rater_id"].unique(), name="rater_id")
    means = means.reindex(raters)
    population = float(means.mean()) if means.notna().any() else np.nan
    off = (means - population).abs() > threshold
    direction = np.sign(population - means).where(off, 0.0).fillna(0.0)
    return pd.DataFrame({"rater_id": raters, "consistency_mean": means.to_numpy(),
                         "population_mean": population,
                         "shift": (direction * shift).to_numpy()})


def calibrate(ratings: pd.DataFrame, *, threshold: float = 1.0, shift: float = 1.0,
              rating_min: float = 0.0, rating_max: float = 6.0) -> pd.DataFrame:
    """Apply the SimLex calibration: shift biased raters by one towards the population.

    Every rating of a shifted rater moves by ``shift`` towards the population, except ratings
    already at the end of the scale it moves to (6 when shifted up, 0 when shifted down);
    results are kept within ``[rating_min, rating_max]``. Checkpoint rows are unchanged.

    Returns
    -------
    pandas.DataFrame
        A copy of the checked ratings with ``rating`` calibrated and ``rating_raw`` holding the
        original value.

    Examples
    --------
    Consistency means: a 1, b 4, c 5; population 10/3. a is 2.33 below and moves up (its 6 on
    the unique pair stays 6); c is 1.67 above and moves down; b is within 1 and stays.

    >>> import pandas as pd
    >>> ratings = pd.DataFrame({"rater_id": list("aaaabbbccc"), "tranche": 1,
    ...     "word1": list("xyzu") + list("xyz") * 2, "word2": "w",
    ...     "kind": ["consistency"] * 3 + ["unique"] + ["consistency"] * 6,
    ...     "rating": [0, 1, 2, 6, 3, 4, 5, 4, 5, 6]})
    >>> calibrate(ratings)["rating"].tolist()
    [1.0, 2.0, 3.0, 6.0, 3.0, 4.0, 5.0, 3.0, 4.0, 5.0]
    """
    if rating_max <= rating_min:
        raise InputError(f"need rating_min < rating_max, found {rating_min}, {rating_max}",
                         field="rating_max")
    frame = check_ratings(ratings)
    shifts = calibration_shifts(frame, threshold=threshold, shift=shift)
    # astype: a categorical rater_id maps to a categorical when the raters' shifts all differ
    delta = frame["rater_id"].map(shifts.set_index("rater_id")["shift"]).astype(float).fillna(0.0)
    delta = delta.where(frame["kind"] != "checkpoint", 0.0)
    at_end = ((delta > 0) & (frame["rating"] >= rating_max)) | \
             ((delta < 0) & (frame["rating"] <= rating_min))
    moved = (frame["rating"] + delta.where(~at_end, 0.0)).clip(rating_min, rating_max)
    frame["rating_raw"] = frame["rating"]
    frame["rating"] = moved.where(frame["kind"] != "checkpoint", frame["rating"])
    return frame
