"""Several models against the same gold standards: ``lexgold evaluate --vectors A --vectors B``.

Every vector file is streamed once for all the gold files (keeping only their words); each
model is then scored on each gold file as a single-model run would score it. With
``common_vocabulary`` every model is scored on the pairs that all of them cover (every word
of both terms in every vocabulary), so the correlations compare like with like; without it,
each model keeps its own coverage (as a run with that model alone).

:func:`evaluate_one` scores one model (and a ``--compare`` model) on one gold standard: the
single-model run of :func:`lexgold.evaluate.report.evaluate_golds` and each model here.

A model is a vector file (the cosine of each pair) or a pair-score file
(:mod:`lexgold.evaluate.scores`: a machine's ratings, another model's scores), scored alike;
Steiger's test runs across both kinds.

Between each two models, Steiger's (1980) test of two dependent correlations with one variable
in common (the gold scores), on the pairs both models use: Pearson on the scores, and for
Spearman the same test on the correlations of the ranks (Spearman's rho is Pearson's r of the
ranks) (:func:`lexgold.evaluate.wordpairs.compare_scores`).
"""

from __future__ import annotations

import warnings
from itertools import combinations

import numpy as np
import pandas as pd

from lexgold.evaluate.scores import read_scores
from lexgold.evaluate.tr9856_binary import binary_task
from lexgold.evaluate.vectors import DEFAULT_CASE, CaseVariantWarning, case_warning, read_vectors
from lexgold.evaluate.wordpairs import (
    compare_models,
    compare_scores,
    evaluate_pairs,
    lookup_words,
    pair_scores,
)


def read_models(paths, words, *, vectors_format: str = "auto", case: str = DEFAULT_CASE,
                oov: str = "drop", scores=(), scores_column: str | None = None) -> list:
    """Each vector file streamed once, keeping the rows of ``words`` (the mean of every row
    too under ``oov="mean"``); then each score file of ``scores``
    (:func:`lexgold.evaluate.scores.read_scores`, its number in ``scores_column`` or found).

    Warns
    -----
    CaseVariantWarning
        A looked-up word has several case variants in a file not sorted by frequency
        (:func:`lexgold.evaluate.vectors.case_warning`).
    """
    models = []
    for path in paths:
        model = read_vectors(path, vectors_format, keep=words, case=case, mean=(oov == "mean"))
        message = case_warning(model, words, case)
        if message:
            warnings.warn(message, CaseVariantWarning, stacklevel=3)
        models.append(model)
    return models + [read_scores(path, column=scores_column, option="--scores-column")
                     for path in scores]


def model_kind(model) -> str:
    """``"scores"`` for a score file's frame, ``"vectors"`` for word vectors."""
    return "scores" if isinstance(model, pd.DataFrame) else "vectors"


def evaluate_one(gold: pd.DataFrame, gold_path, models, vectors_path, compare=None, *,
                 case: str = DEFAULT_CASE, oov: str = "drop", n_boot: int = 1000,
                 seed: int = 0, binary: bool | None = None) -> tuple[dict, pd.DataFrame]:
    """One model (``models[0]``, read from ``vectors_path``: word vectors or a score file) on
    one gold standard.

    Correlations overall and per subset with bootstrap CIs drawn from a generator seeded with
    ``seed`` (:func:`lexgold.evaluate.wordpairs.evaluate_pairs`; none when ``n_boot`` is 0),
    TR9856's binary task (default: for TR9856 files), and with ``compare`` Steiger's test
    against ``models[1]``.

    Returns
    -------
    (dict, pandas.DataFrame)
        The JSON-ready result and the per-pair frame.
    """
    rng = np.random.default_rng(seed)
    vectors = models[0]
    result, scores = evaluate_pairs(gold, vectors, case=case, oov=oov,
                                    rng=rng if n_boot > 0 else None, n_boot=max(n_boot, 1))
    kind = model_kind(vectors)
    result = {"gold": str(gold_path), "format": gold.attrs.get("format", "plain"),
              kind: str(vectors_path), "kind": kind, **result,
              "seed": seed}
    if kind == "scores":
        del result["oov"]                         # a score file has no word to fill
        result.update(scores_column=vectors.attrs["column"],
                      provenance=vectors.attrs["provenance"])
    if binary is None:
        binary = result["format"] == "tr9856"
    if binary:
        used = scores[scores["used"]]
        result["binary"] = binary_task(used["gold"].to_numpy(), used["model"].to_numpy(), rng)
    if compare:
        result["compare"] = {"vectors": str(compare),
                             **compare_models(gold, vectors, models[1], case=case, oov=oov)}
    return result, scores


def common_pairs(gold: pd.DataFrame, models, case: str = DEFAULT_CASE) -> np.ndarray:
    """Boolean mask of the gold pairs whose words every model covers.

    Parameters
    ----------
    gold : pandas.DataFrame
        ``word1, word2, score`` (:func:`lexgold.evaluate.gold.read_gold`).
    models : list of Vectors
    case : str
        The lookup's case policy.

    Returns
    -------
    numpy.ndarray of bool
        True where every word of both terms is found in every model (``found`` of
        :func:`lexgold.evaluate.wordpairs.pair_scores`, whatever the OOV policy).
    """
    mask = np.ones(len(gold), dtype=bool)
    for model in models:
        mask &= pair_scores(gold, model, case, "drop")["found"].to_numpy()
    return mask


def evaluate_models(golds, vector_paths, *, vectors_format: str = "auto",
                    case: str = DEFAULT_CASE, oov: str = "drop", n_boot: int = 1000,
                    seed: int = 0, binary: bool | None = None,
                    common_vocabulary: bool = False, scores=(),
                    scores_column: str | None = None) -> list[tuple[dict, list[pd.DataFrame]]]:
    """Every model on every gold standard, and Steiger's test between each two models.

    Parameters
    ----------
    golds : list of (pandas.DataFrame, path)
        Gold standards and their files.
    vector_paths : list of str
        Vector files, each read once.
    common_vocabulary : bool
        Score every model on the pairs all of them cover.
    scores : list of str
        Score files (:mod:`lexgold.evaluate.scores`), models after the vector files; two or
        more models in all.
    scores_column : str, optional
        The score files' numeric column (found in each when not given).

    Returns
    -------
    list of (dict, list of pandas.DataFrame)
        Per gold standard: ``{"gold", "format", "pairs", "covered_by_all",
        "common_vocabulary", "models": [one single-model result per vector file],
        "steiger": [{"first", "second", "used", "spearman", "pearson"} per two models]}`` and
        the per-pair frames of the models.
    """
    words = lookup_words(term for gold, _ in golds for column in ("word1", "word2")
                         for term in gold[column])
    models = read_models(vector_paths, words, vectors_format=vectors_format, case=case, oov=oov,
                         scores=scores, scores_column=scores_column)
    paths = [*vector_paths, *scores]
    out = []
    for gold, gold_path in golds:
        common = common_pairs(gold, models, case)
        scored = gold[common] if common_vocabulary else gold
        scored.attrs = dict(gold.attrs)
        results, frames = [], []
        for model, path in zip(models, paths):
            if len(scored) == 0:
                results.append(None)
                frames.append(None)
                continue
            result, scores = evaluate_one(scored, gold_path, [model], path, case=case,
                                          oov=oov, n_boot=n_boot, seed=seed, binary=binary)
            results.append(result)
            frames.append(scores)
        steiger = []
        for (i, a), (j, b) in combinations(enumerate(frames), 2):
            if a is None or b is None:
                continue
            steiger.append({"first": str(paths[i]), "second": str(paths[j]),
                            **compare_scores(a, b)})
        out.append(({"gold": str(gold_path), "format": gold.attrs.get("format", "plain"),
                     "pairs": len(gold), "covered_by_all": int(common.sum()),
                     "common_vocabulary": common_vocabulary, "models": results,
                     "steiger": steiger}, frames))
    return out
