"""Agreement beyond IAA-1/IAA-2: Krippendorff's alpha and the intraclass correlation (ICC).

Both are pure functions of a long-format ratings frame (docs/contract.md); checkpoint rows are
left out and a rater's repeated answers to a pair (calibration repeats, duplicates) count once,
as their mean (:func:`lexgold.ratings.long.answers`).

**Missing ratings.** A study's tranches give each pair a subset of the crowd:

- alpha needs no rater identity and no complete design: it compares the ratings *within* each
  pair (its coincidence matrix counts every pairable value of a unit), so all pairs with two or
  more ratings count, pooled over tranches, and ratings without rater identity (SimVerb-3500)
  have an alpha too;
- the ICC is a two-way ANOVA and needs every rater to rate every pair: per tranche, the raters
  who rated at least 80 % as many of its pairs as its most complete rater are kept (a rater
  who quit half way is not), on the pairs they all rated (listwise deletion), and the per-tranche figures are averaged weighted by those pairs.
  The confidence bounds are averaged the same way (conservative: as wide as one tranche's).

**Which ICC.** ICC(2,1) and ICC(2,k) of Shrout & Fleiss (1979), McGraw & Wong's ICC(A,1) and
ICC(A,k): two-way random effects, absolute agreement. The raters are a random sample of a crowd
(not the fixed judges of ICC(3,.)), and a pair's gold score is the mean of the raters its tranche
happened to get, so a rater's bias is error, not something a consistency ICC may ignore.
``icc1`` is the reliability of one rater's rating, ``icck`` that of the mean of the tranche's k
raters (the gold score of that tranche).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd

from lexgold.errors import InputError
from lexgold.process.agreement import AgreementWarning
from lexgold.ratings import ITEM
from lexgold.ratings.long import answers, check_ratings, is_anonymous

LEVELS = ("interval", "ordinal")
#: the ICC reported (module docstring)
ICC_FORM = "ICC(2,1) and ICC(2,k): two-way random, absolute agreement"


def krippendorff_alpha(ratings: pd.DataFrame, level: str = "interval", *,
                       answered: pd.DataFrame | None = None) -> float:
    """Krippendorff's alpha of a long-format ratings frame, with the ``krippendorff`` package.

    Parameters
    ----------
    ratings : pandas.DataFrame
        Long format; rater identity is not needed (alpha compares ratings within a pair).
    level : {"interval", "ordinal"}
        Level of measurement: interval (squared differences) or ordinal (ranks of the values
        used, Krippendorff 2011 section C).
    answered : pandas.DataFrame, optional
        ``answers(check_ratings(ratings))`` when the caller has it already.

    Returns
    -------
    float
        Alpha in [-1, 1] (1: perfect agreement, 0: chance); NaN with an
        :class:`~lexgold.process.agreement.AgreementWarning` when no pair has two ratings or
        only one value is used.

    References
    ----------
    Krippendorff, K. (2011). Computing Krippendorff's alpha-reliability. Annenberg School for
    Communication Departmental Papers 43.

    Examples
    --------
    Krippendorff (2011), section C's example: 4 observers, 12 units, missing values.

    >>> import pandas as pd
    >>> rows = {"A": "1 2 3 3 2 1 4 1 2 . . .", "B": "1 2 3 3 2 2 4 1 2 5 . 3",
    ...         "C": ". 3 3 3 2 3 4 2 2 5 1 .", "D": "1 2 3 3 2 4 4 1 2 5 1 ."}
    >>> frame = pd.DataFrame([{"rater_id": r, "tranche": 1, "word1": f"u{u}", "word2": "x",
    ...                        "rating": float(v)} for r, text in rows.items()
    ...                       for u, v in enumerate(text.split()) if v != "."])
    >>> round(krippendorff_alpha(frame, "interval"), 3), round(krippendorff_alpha(frame, "ordinal"), 3)
    (0.849, 0.815)
    """
    if level not in LEVELS:
        raise InputError(f"level must be one of {', '.join(LEVELS)}; got {level!r}",
                         field="level")
    import krippendorff

    rated = answers(check_ratings(ratings)) if answered is None else answered
    domain = np.sort(rated["rating"].unique())
    counts = rated.groupby([*ITEM, "rating"]).size().unstack(fill_value=0)
    counts = counts.reindex(columns=domain, fill_value=0)
    counts = counts[counts.sum(axis=1) > 1]
    if counts.empty or len(domain) < 2:
        warnings.warn("Krippendorff's alpha undefined: no pair with two ratings, or one value "
                      "throughout", AgreementWarning, stacklevel=2)
        return math.nan
    return float(krippendorff.alpha(value_counts=counts.to_numpy(), value_domain=domain,
                                    level_of_measurement=level))


def icc_matrix(matrix: np.ndarray, *, confidence: float = 0.95) -> dict:
    """ICC(2,1) and ICC(2,k) of a complete targets x raters matrix, with F-based intervals.

    Parameters
    ----------
    matrix : array, shape (n targets, k raters)
        No missing value.
    confidence : float
        Coverage of the intervals (McGraw & Wong 1996, Table 7, case 2A).

    Returns
    -------
    dict
        ``icc1``, ``icc1_low``, ``icc1_high``, ``icck``, ``icck_low``, ``icck_high``,
        ``pairs`` (n) and ``raters`` (k). Best 1; NaN when n < 2 or k < 2 or without variance.

    References
    ----------
    Shrout, P. E. & Fleiss, J. L. (1979). Intraclass correlations: uses in assessing rater
    reliability. Psychological Bulletin 86(2), 420-428, case 2. McGraw, K. O. & Wong, S. P.
    (1996), Psychological Methods 1(1), 30-46.

    Examples
    --------
    Shrout & Fleiss (1979), Table 2: 6 targets, 4 judges; ICC(2,1) = .29, ICC(2,4) = .62.

    >>> table = [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9],
    ...          [6, 2, 4, 7]]
    >>> found = icc_matrix(np.array(table, dtype=float))
    >>> round(found["icc1"], 2), round(found["icck"], 2)
    (0.29, 0.62)
    """
    # the F quantile from scipy.special: importing scipy.stats costs `agree` ~1.8 s
    from scipy.special import fdtri

    x = np.asarray(matrix, dtype=float)
    n, k = x.shape
    empty = {"icc1": math.nan, "icc1_low": math.nan, "icc1_high": math.nan, "icck": math.nan,
             "icck_low": math.nan, "icck_high": math.nan, "pairs": n, "raters": k}
    if n < 2 or k < 2 or np.isnan(x).any():
        return empty
    grand = x.mean()
    ms_rows = k * ((x.mean(axis=1) - grand) ** 2).sum() / (n - 1)          # targets (MSR)
    ms_cols = n * ((x.mean(axis=0) - grand) ** 2).sum() / (k - 1)          # raters (MSC)
    residual = x - x.mean(axis=1, keepdims=True) - x.mean(axis=0) + grand
    ms_err = (residual ** 2).sum() / ((n - 1) * (k - 1))                    # MSE
    denominator = ms_rows + (k - 1) * ms_err + k * (ms_cols - ms_err) / n
    if denominator <= 0 or ms_rows <= 0:
        return empty
    icc1 = (ms_rows - ms_err) / denominator
    icck = (ms_rows - ms_err) / (ms_rows + (ms_cols - ms_err) / n)
    alpha = 1 - confidence
    df_err = (n - 1) * (k - 1)
    fj = ms_cols / ms_err if ms_err > 0 else math.inf
    vn = df_err * (k * icc1 * fj + n * (1 + (k - 1) * icc1) - k * icc1) ** 2
    vd = (n - 1) * k ** 2 * icc1 ** 2 * fj ** 2 + (n * (1 + (k - 1) * icc1) - k * icc1) ** 2
    v = vn / vd if vd > 0 and math.isfinite(vn) else float(df_err)
    f_up = fdtri(n - 1, v, 1 - alpha / 2)        # scipy.stats.f.ppf(1 - alpha / 2, n - 1, v)
    f_low = fdtri(v, n - 1, 1 - alpha / 2)
    spread = k * ms_cols + (k * n - k - n) * ms_err
    low = n * (ms_rows - f_up * ms_err) / (f_up * spread + n * ms_rows)
    high = n * (f_low * ms_rows - ms_err) / (spread + n * f_low * ms_rows)
    return {"icc1": float(icc1), "icc1_low": float(low), "icc1_high": float(high),
            "icck": float(icck), "icck_low": float(k * low / (1 + low * (k - 1))),
            "icck_high": float(k * high / (1 + high * (k - 1))), "pairs": n, "raters": k}


def _complete_blocks(rated: pd.DataFrame) -> list[np.ndarray]:
    """Per tranche (in sorted order), its pairs x raters matrix, listwise complete (module
    docstring): pairs in the order of their words, raters in the order of their ids (as
    ``pivot_table`` lays them out), raters with fewer than 80 % of the most complete rater's
    pairs dropped, then every pair a kept rater did not rate. ``rated``: one rating per rater
    and pair (:func:`~lexgold.ratings.long.answers`)."""
    tranche = _sorted_codes(rated["tranche"])
    second = _sorted_codes(rated["word2"])
    item = _sorted_codes(rated["word1"]) * (int(second.max(initial=0)) + 1) + second
    rater = _sorted_codes(rated["rater_id"])
    rating = rated["rating"].to_numpy(dtype=float)
    order = np.argsort(tranche, kind="stable")
    blocks = []
    for rows in np.split(order, np.flatnonzero(np.diff(tranche[order])) + 1) if len(order) \
            else []:
        items, row = np.unique(item[rows], return_inverse=True)
        raters, column = np.unique(rater[rows], return_inverse=True)
        matrix = np.full((len(items), len(raters)), np.nan)
        matrix[row, column] = rating[rows]
        counts = np.bincount(column, minlength=len(raters))
        matrix = matrix[:, counts >= 0.8 * counts.max()]
        blocks.append(matrix[~np.isnan(matrix).any(axis=1)])
    return blocks


def _sorted_codes(column: pd.Series) -> np.ndarray:
    """Integer codes of ``column`` that order as its values sort (a categorical's own codes
    when its categories are sorted)."""
    if isinstance(column.dtype, pd.CategoricalDtype) \
            and column.cat.categories.is_monotonic_increasing:
        return column.cat.codes.to_numpy().astype(np.int64)
    return np.unique(column.to_numpy(dtype=str), return_inverse=True)[1].astype(np.int64)


def icc(ratings: pd.DataFrame, *, confidence: float = 0.95,
        answered: pd.DataFrame | None = None) -> dict:
    """ICC(2,1) and ICC(2,k) of a long-format ratings frame, per tranche and pooled.

    Parameters
    ----------
    ratings : pandas.DataFrame
        Long format with rater identity.
    confidence : float
        Coverage of the intervals.
    answered : pandas.DataFrame, optional
        ``answers(check_ratings(ratings))`` when the caller has it already.

    Returns
    -------
    dict
        The keys of :func:`icc_matrix`, each the mean over tranches weighted by the pairs of
        the tranche's complete block (module docstring); ``pairs`` is their total and
        ``raters`` the weighted mean k (the k of ``icck``). NaN figures with an
        :class:`~lexgold.process.agreement.AgreementWarning` when no tranche has a complete
        block of 2 raters and 2 pairs.
    """
    rated = answers(check_ratings(ratings)) if answered is None else answered
    blocks = [icc_matrix(block, confidence=confidence) for block in _complete_blocks(rated)]
    blocks = [b for b in blocks if not math.isnan(b["icc1"])]
    keys = ("icc1", "icc1_low", "icc1_high", "icck", "icck_low", "icck_high")
    if not blocks:
        warnings.warn("ICC undefined: no tranche has two raters who rated the same two pairs "
                      "(or the ratings do not vary)", AgreementWarning, stacklevel=2)
        return {**dict.fromkeys(keys, math.nan), "pairs": 0, "raters": math.nan}
    weights = np.array([b["pairs"] for b in blocks], dtype=float)
    result = {key: float(np.average([b[key] for b in blocks], weights=weights)) for key in keys}
    result["pairs"] = int(weights.sum())
    result["raters"] = float(np.average([b["raters"] for b in blocks], weights=weights))
    return result


def reliability_figures(ratings: pd.DataFrame) -> dict:
    """Alpha and ICC as ``report.json`` and ``agree --json`` give them (NaN as None):
    ``alpha_interval``, ``alpha_ordinal``, ``icc1``, ``icck`` and ``icc`` (the form, 95 %
    intervals, the k of ``icck`` and the pairs of the complete blocks); the ICC is None for
    ratings without rater identity."""
    def number(value):
        return None if value is None or math.isnan(value) else float(value)

    answered = answers(check_ratings(ratings))            # once for the three figures
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AgreementWarning)
        out = {"alpha_interval": number(krippendorff_alpha(ratings, "interval",
                                                           answered=answered)),
               "alpha_ordinal": number(krippendorff_alpha(ratings, "ordinal",
                                                          answered=answered)),
               "icc1": None, "icck": None}
        if is_anonymous(ratings):
            return out
        found = icc(ratings, answered=answered)
    out.update(icc1=number(found["icc1"]), icck=number(found["icck"]),
               icc={"form": ICC_FORM,
                    "icc1_ci95": [number(found["icc1_low"]), number(found["icc1_high"])],
                    "icck_ci95": [number(found["icck_low"]), number(found["icck_high"])],
                    "raters": number(found["raters"]), "pairs": found["pairs"]})
    return out
