"""Word-pair evaluation: cosine of the two vectors against the gold score.

docs/evaluate.md; SimLex-999 (Hill et al. 2015, section 5: POS subsets, concreteness quartiles,
the 333 most associated pairs), HyperLex (Vulic et al. 2017, per relation; section 7.2's
directionality subset, Table 14), TR9856 (Levy et al.
2015, section 5.3: single- vs multi-word pairs, multi-word terms as the sum of their word
vectors). Model scores are cosines; Spearman's rho and Pearson's r are computed over the pairs
the out-of-vocabulary policy keeps, and ``pairs`` (total) and ``covered`` (pairs with every word
found) are always reported. Words find their rows under a case policy
(:mod:`lexgold.evaluate.vectors`; default ``exact-then-lower``).

Out-of-vocabulary policies (a missing word of a term, or a missing single-word term):

- ``drop`` (default): the pair is left out of the correlation;
- ``mean``: the missing word gets the mean vector of the vocabulary;
- ``zero``: the missing word gets the zero vector; a zero-length term vector has cosine 0.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd

from lexgold.evaluate.scores import score_pairs
from lexgold.evaluate.vectors import CASE_POLICIES, DEFAULT_CASE, Vectors, check_choice
from lexgold.stats import average_ranks, bootstrap_ci, pearson, rowwise_pearson, spearman

OOV_POLICIES = ("drop", "mean", "zero")


def lookup_words(terms) -> list[str]:
    """Every string :func:`term_vectors` may look up for ``terms``: the term, its ``_`` form
    and its words (what a streamed read of a vector file must keep)."""
    words: dict[str, None] = {}
    for term in terms:
        term = str(term)
        words.update(dict.fromkeys([term, term.replace(" ", "_"), *term.split()]))
    return list(words)


def term_vectors(terms, vectors: Vectors, case: str = DEFAULT_CASE, oov: str = "drop"):
    """Vectors of (possibly multi-word) terms, and whether every word of each was found.

    A term found as a whole (``new_york`` or ``new york`` in the vocabulary) uses its own row;
    otherwise a term of several space-separated words is the sum of its word vectors
    (TR9856 section 5). Missing words follow ``oov`` (module docstring).

    Returns
    -------
    matrix : numpy.ndarray, (len(terms), d) float64
    found : numpy.ndarray of bool
    """
    check_choice("oov", oov, OOV_POLICIES)
    check_choice("case", case, CASE_POLICIES)
    filler = vectors.mean_vector() if oov == "mean" else np.zeros(vectors.dim)
    out = np.zeros((len(terms), vectors.dim))
    found = np.ones(len(terms), dtype=bool)
    for i, term in enumerate(terms):
        key = str(term)
        row = vectors.find(key, case)
        if row is None:
            row = vectors.find(key.replace(" ", "_"), case)
        if row is not None:
            out[i] = vectors.matrix[row]
            continue
        for word in key.split():
            row = vectors.find(word, case)
            if row is None:
                found[i] = False
                out[i] += filler
            else:
                out[i] += vectors.matrix[row]
        if not key.split():
            found[i] = False
    return out, found


def cosine_rows(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Row-wise cosine; 0 where either vector has length 0."""
    norms = np.linalg.norm(left, axis=1) * np.linalg.norm(right, axis=1)
    dots = np.einsum("ij,ij->i", left, right)
    return np.divide(dots, norms, out=np.zeros_like(dots), where=norms > 0)


def pair_scores(gold: pd.DataFrame, vectors: Vectors | pd.DataFrame, case: str = DEFAULT_CASE,
                oov: str = "drop") -> pd.DataFrame:
    """Gold and model score per pair: columns ``word1, word2, gold, model, found, used``.

    ``found``: every word of both terms is in the vocabulary. ``used``: the pair enters the
    correlation (``found`` under 'drop', every pair otherwise). ``model`` is NaN when unused.
    A score file (``vectors`` a frame of :func:`lexgold.evaluate.scores.read_scores`) is a
    model too: its score for the pair (:func:`lexgold.evaluate.scores.score_pairs`; a pair it
    does not score is unused whatever ``oov``).
    """
    if isinstance(vectors, pd.DataFrame):
        check_choice("oov", oov, OOV_POLICIES)
        return score_pairs(gold, vectors, case)
    left, found1 = term_vectors(gold["word1"].tolist(), vectors, case, oov)
    right, found2 = term_vectors(gold["word2"].tolist(), vectors, case, oov)
    found = found1 & found2
    used = found if oov == "drop" else np.ones_like(found)
    model = np.where(used, cosine_rows(left, right), np.nan)
    return pd.DataFrame({"word1": gold["word1"].to_numpy(), "word2": gold["word2"].to_numpy(),
                         "gold": gold["score"].to_numpy(dtype=float), "model": model,
                         "found": found, "used": used}, index=gold.index)


def correlations(scores: pd.DataFrame) -> dict:
    """Spearman's rho and Pearson's r over the used pairs, with ``pairs`` and ``covered``.

    Returns
    -------
    dict
        ``spearman``, ``pearson`` (in [-1, 1], higher is better; NaN with a warning when fewer
        than 3 pairs are used or a score is constant), ``pairs`` (all pairs), ``covered``
        (pairs whose words were all found), ``used`` (pairs in the correlation).
    """
    used = scores[scores["used"]]
    result = {"pairs": int(len(scores)), "covered": int(scores["found"].sum()),
              "used": int(len(used)), "spearman": float("nan"), "pearson": float("nan")}
    if len(used) < 3 or used["gold"].nunique() < 2 or used["model"].nunique() < 2:
        warnings.warn(f"correlation undefined on {len(used)} pairs (too few or constant scores)",
                      RuntimeWarning, stacklevel=2)
        return result
    result["spearman"] = spearman(used["gold"], used["model"])
    result["pearson"] = pearson(used["gold"], used["model"])
    return result


def correlation_ci(scores: pd.DataFrame, *, rng: np.random.Generator, n_boot: int = 1000,
                   level: float = 0.95) -> dict:
    """Percentile bootstrap CIs of rho and r, resampling the used pairs with replacement.

    One paired bootstrap (:func:`lexgold.stats.bootstrap_ci`) gives both intervals from the
    same replicates. Returns ``{'spearman': [low, high], 'pearson': [low, high]}``; resamples
    with a constant score are skipped (NaN-safe percentiles).
    """
    used = scores[scores["used"]]
    if len(used) < 3:
        return {"spearman": [float("nan")] * 2, "pearson": [float("nan")] * 2}
    gold, model = used["gold"].to_numpy(dtype=float), used["model"].to_numpy(dtype=float)
    if np.isnan(gold).any() or np.isnan(model).any():
        (rho, r) = bootstrap_ci([gold, model], _rho_and_r, rng=rng, n_boot=n_boot, level=level)
    else:               # the same replicates, ranked by counting instead of sorting
        codes = [np.unique(x, return_inverse=True)[1].astype(float) for x in (gold, model)]
        (rho, r) = bootstrap_ci([gold, model, *codes], _rho_and_r_by_codes, rng=rng,
                                n_boot=n_boot, level=level)
    return {"spearman": [float(v) for v in rho], "pearson": [float(v) for v in r]}


def _rho_and_r(gold: np.ndarray, model: np.ndarray, axis: int = -1) -> np.ndarray:
    """Spearman's rho and Pearson's r of every replicate (rows), as a (2, replicates) array."""
    rho = rowwise_pearson(average_ranks(gold, axis=axis), average_ranks(model, axis=axis),
                          axis=axis)
    return np.stack([rho, rowwise_pearson(gold, model, axis=axis)])


def _rho_and_r_by_codes(gold, model, gold_codes, model_codes, axis: int = -1) -> np.ndarray:
    """:func:`_rho_and_r`, the ranks counted from each value's code (its rank among the
    distinct values of the sample): equal to :func:`lexgold.stats.average_ranks` of the
    replicate, without a sort."""
    rho = rowwise_pearson(_replicate_ranks(gold_codes), _replicate_ranks(model_codes))
    return np.stack([rho, rowwise_pearson(gold, model, axis=axis)])


def _replicate_ranks(codes: np.ndarray) -> np.ndarray:
    """Average ranks within each row of ``codes`` (whole numbers 0..m-1 as floats): a code
    seen c times after b smaller values has the rank b + (c + 1) / 2."""
    codes = codes.astype(np.intp)
    rows, size = codes.shape[0], int(codes.max()) + 1
    counts = np.bincount((codes + size * np.arange(rows)[:, None]).ravel(),
                         minlength=rows * size).reshape(rows, size)
    table = np.cumsum(counts, axis=1) - (counts - 1) / 2      # b + c - (c - 1) / 2
    return np.take_along_axis(table, codes, axis=1)


def directionality_subset(gold: pd.DataFrame, min_score: float = 7.0
                          ) -> tuple[np.ndarray, np.ndarray]:
    """HyperLex's directionality subset and the reversed pairs of the file that mirror it.

    Vulic et al. (2017), section 7.2, Experiment IV (Table 14): "retaining only hyp-N pairs
    from HyperLex (as indicated by WordNet) with the graded LE score >= 7.0" on 0-10 (940
    pairs in the release, 121 of them verbs), Y being the hypernym. The second mask marks the
    r-hyp-N pairs (Y, X) of the file whose (X, Y) is in the subset (293 of the release's 296
    reversed pairs mirror one of its hyp-N pairs); a symmetric measure such as the cosine gives
    both orders one score, so only the subset with its reversed pairs shows whether a model
    tells the direction. Needs the TYPE column and the 0-10 score (AVG_SCORE_0_10); otherwise
    both masks are empty.
    """
    none = np.zeros(len(gold), dtype=bool)
    if "relation" not in gold or "score_0_10" not in gold:
        return none, none
    relation = gold["relation"].astype(str).str.strip().str.lower()
    hyp = (relation.str.fullmatch(r"hyp-?\d+") & (gold["score_0_10"] >= min_score)).to_numpy()
    pos = gold["pos"].astype(str) if "pos" in gold else pd.Series("", index=gold.index)
    wanted = set(zip(gold["word2"][hyp], gold["word1"][hyp], pos[hyp]))
    reverse = relation.str.fullmatch(r"r-?hyp-?\d+").to_numpy() & np.array(
        [key in wanted for key in zip(gold["word1"], gold["word2"], pos)], dtype=bool)
    return hyp, reverse


def subsets(gold: pd.DataFrame) -> dict[str, np.ndarray]:
    """Boolean masks of the evaluation subsets the gold standard's columns allow.

    - ``pos=X`` per POS value (SimLex-999 section 5; HyperLex N/V);
    - ``conc_q1`` / ``conc_q4``: the least / most concrete quartile of pairs ranked by
      conc1 + conc2 (SimLex-999 section 5; ``n // 4`` pairs each, ties in file order);
    - ``assoc333``: the 333 most associated pairs (SimAssoc333 column, else the top 333 by
      Assoc(USF));
    - ``relation=X`` per HyperLex relation (TYPE column);
    - ``directionality`` / ``directionality+reversed``: HyperLex's directionality subset
      (:func:`directionality_subset`) without and with its reversed pairs;
    - ``single-word`` / ``multi-word``: both terms single words, or at least one multi-word
      term (TR9856 section 5.3), when the file has any multi-word term.
    """
    masks: dict[str, np.ndarray] = {}
    for column, prefix in (("pos", "pos"), ("relation", "relation")):
        if column in gold:
            for value in sorted(gold[column].dropna().astype(str).unique()):
                masks[f"{prefix}={value}"] = (gold[column].astype(str) == value).to_numpy()
    hyp, reverse = directionality_subset(gold)
    if hyp.any():
        masks["directionality"], masks["directionality+reversed"] = hyp, hyp | reverse
    if {"conc1", "conc2"} <= set(gold) and gold[["conc1", "conc2"]].notna().all(axis=None):
        order = np.argsort((gold["conc1"] + gold["conc2"]).to_numpy(), kind="stable")
        quarter = len(gold) // 4
        for name, rows in (("conc_q1", order[:quarter]), ("conc_q4", order[len(order) - quarter:])):
            mask = np.zeros(len(gold), dtype=bool)
            mask[rows] = True
            masks[name] = mask
    if "assoc333" in gold and gold["assoc333"].notna().any():
        masks["assoc333"] = (gold["assoc333"] == 1).to_numpy()
    elif "assoc" in gold and gold["assoc"].notna().any():
        top = np.argsort(-gold["assoc"].fillna(-np.inf).to_numpy(), kind="stable")[:333]
        masks["assoc333"] = np.isin(np.arange(len(gold)), top)
    multi = (gold["word1"].astype(str).str.strip().str.contains(r"\s")
             | gold["word2"].astype(str).str.strip().str.contains(r"\s")).to_numpy()
    if multi.any():
        masks["single-word"], masks["multi-word"] = ~multi, multi
    return masks


def evaluate_pairs(gold: pd.DataFrame, vectors: Vectors, *, case: str = DEFAULT_CASE,
                   oov: str = "drop", rng: np.random.Generator | None = None,
                   n_boot: int = 1000, level: float = 0.95) -> tuple[dict, pd.DataFrame]:
    """Correlations overall and per subset, with bootstrap CIs when ``rng`` is given.

    Returns
    -------
    result : dict
        ``spearman, pearson, pairs, covered, used`` (overall), ``ci`` (when ``rng``),
        ``subsets: {name: {spearman, pearson, pairs, covered, used, ci}}`` (``ci`` when
        ``rng``: every subset gets its interval, drawn after the overall one), ``oov``,
        ``case``.
    scores : pandas.DataFrame
        The per-pair frame of :func:`pair_scores`.
    """
    scores = pair_scores(gold, vectors, case, oov)
    result = {**correlations(scores), "oov": oov, "case": case}
    if rng is not None:
        result["ci"] = {"level": level,
                        **correlation_ci(scores, rng=rng, n_boot=n_boot, level=level)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        result["subsets"] = {name: correlations(scores[mask])
                             for name, mask in subsets(gold).items()}
        if rng is not None:
            for name, mask in subsets(gold).items():
                result["subsets"][name]["ci"] = {
                    "level": level, **correlation_ci(scores[mask], rng=rng, n_boot=n_boot,
                                                     level=level)}
    return result, scores


def worst_pairs(scores: pd.DataFrame) -> pd.DataFrame:
    """Per-pair table sorted worst first: rank of gold and model among the used pairs.

    ``rank_diff`` = model rank - gold rank (percentile ranks, 0-1): positive means the model
    finds the pair more similar than the raters did. Unused pairs come last.
    """
    out = scores.copy()
    used = out["used"]
    out["gold_rank"] = out.loc[used, "gold"].rank(pct=True)
    out["model_rank"] = out.loc[used, "model"].rank(pct=True)
    out["rank_diff"] = out["model_rank"] - out["gold_rank"]
    return (out.assign(_key=out["rank_diff"].abs()).sort_values("_key", ascending=False,
                                                                   na_position="last")
            .drop(columns="_key"))


def steiger_test(r_jk: float, r_jh: float, r_kh: float, n: int) -> dict:
    """Steiger's Z for two dependent correlations sharing variable j (gold).

    Tests H0: rho_jk = rho_jh, where k and h are two models scored on the same n pairs, with
    Fisher's z and the pooled estimate r_bar = (r_jk + r_jh) / 2 (Steiger 1980, eq. 14)::

        psi = r_kh (1 - 2 r_bar^2) - r_bar^2 (1 - 2 r_bar^2 - r_kh^2) / 2
        s   = psi / (1 - r_bar^2)^2
        Z   = (atanh r_jk - atanh r_jh) sqrt(n - 3) / sqrt(2 - 2 s)

    Returns
    -------
    dict
        ``z`` and the two-sided ``p`` (standard normal).

    References
    ----------
    Steiger, J. H. (1980). Tests for comparing elements of a correlation matrix.
    Psychological Bulletin, 87(2), 245-251.

    Examples
    --------
    >>> round(steiger_test(0.5, 0.3, 0.6, 100)["z"], 4)
    2.4674
    """
    if n <= 3:
        return {"z": float("nan"), "p": float("nan")}
    r_bar = (r_jk + r_jh) / 2
    psi = r_kh * (1 - 2 * r_bar ** 2) - 0.5 * r_bar ** 2 * (1 - 2 * r_bar ** 2 - r_kh ** 2)
    s = psi / (1 - r_bar ** 2) ** 2
    z = (np.arctanh(r_jk) - np.arctanh(r_jh)) * np.sqrt(n - 3) / np.sqrt(2 - 2 * s)
    return {"z": float(z), "p": math.erfc(abs(z) / math.sqrt(2))}    # 2 P(N(0, 1) > |z|)


def compare_models(gold: pd.DataFrame, first: Vectors, second: Vectors, *,
                   case: str = DEFAULT_CASE, oov: str = "drop") -> dict:
    """Steiger's test of Spearman (on ranks) and Pearson, on the pairs both models use."""
    out = compare_scores(pair_scores(gold, first, case, oov), pair_scores(gold, second, case, oov))
    return {"pairs": int(len(gold)), **out}


def compare_scores(a: pd.DataFrame, b: pd.DataFrame) -> dict:
    """Steiger's test between two models' per-pair frames (:func:`pair_scores`) of one gold.

    Only the pairs both models use enter (``used``). Spearman's rho is Pearson's r of the
    ranks, so its test is :func:`steiger_test` on the correlations of the ranks (gold, model 1
    and model 2 ranked over those pairs); Pearson's on the scores.

    Returns
    -------
    dict
        ``used`` (pairs both models use) and, for ``spearman`` and ``pearson``: ``first``,
        ``second`` (each model's correlation with gold), ``between`` (the models' correlation),
        ``z`` and ``p``; NaN throughout with fewer than 4 pairs.

    Examples
    --------
    >>> gold = pd.DataFrame({"gold": [1.0, 2, 3, 4, 5], "used": True})
    >>> out = compare_scores(gold.assign(model=[1.0, 2, 3, 5, 4]),
    ...                      gold.assign(model=[2.0, 1, 3, 4, 5]))
    >>> out["used"], round(out["spearman"]["first"], 6), round(out["spearman"]["between"], 6)
    (5, 0.9, 0.8)
    """
    both = (a["used"] & b["used"]).to_numpy()
    g, x, y = a["gold"][both].to_numpy(), a["model"][both].to_numpy(), b["model"][both].to_numpy()
    n = int(both.sum())
    out = {"used": n}
    for name, transform in (("spearman", average_ranks), ("pearson", np.asarray)):
        if n < 4:
            out[name] = {"first": float("nan"), "second": float("nan"), "z": float("nan"),
                         "p": float("nan")}
            continue
        tg, tx, ty = transform(g), transform(x), transform(y)
        r_jk, r_jh = np.corrcoef(tg, tx)[0, 1], np.corrcoef(tg, ty)[0, 1]
        r_kh = np.corrcoef(tx, ty)[0, 1]
        out[name] = {"first": float(r_jk), "second": float(r_jh), "between": float(r_kh),
                     **steiger_test(r_jk, r_jh, r_kh, n)}
    return out
