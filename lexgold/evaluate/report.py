"""Orchestration at the edges: read the files, run the evaluations, gather one result dict."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from lexgold.compression import read_input_text
from lexgold.evaluate.sdt import (get_trainer, median_associate_rank, read_corpus, run_sdt)
from lexgold.evaluate.tr9856_binary import binary_task
from lexgold.evaluate.vectors import read_vectors
from lexgold.evaluate.wordpairs import compare_models, evaluate_pairs


def evaluate_files(gold: pd.DataFrame, gold_path, vectors_path, *, vectors_format: str = "auto",
                   case: str = "lower", oov: str = "drop", n_boot: int = 1000, seed: int = 0,
                   compare=None, binary: bool | None = None) -> tuple[dict, pd.DataFrame]:
    """``lexgold evaluate``: correlations, subsets, CIs, binary task and model comparison.

    Returns the JSON-ready result (keys ``spearman``, ``pearson``, ``pairs``, ``covered`` as
    in SPEC section 5, plus ``used``, ``ci``, ``subsets``, ``binary``, ``compare``) and the
    per-pair frame.
    """
    rng = np.random.default_rng(seed)
    vectors = read_vectors(vectors_path, vectors_format)
    result, scores = evaluate_pairs(gold, vectors, case=case, oov=oov,
                                    rng=rng if n_boot > 0 else None, n_boot=max(n_boot, 1))
    result = {"gold": str(gold_path), "format": gold.attrs.get("format", "plain"),
              "vectors": str(vectors_path), **result, "seed": seed}
    if binary is None:
        binary = result["format"] == "tr9856"
    if binary:
        used = scores[scores["used"]]
        result["binary"] = binary_task(used["gold"].to_numpy(), used["model"].to_numpy(), rng)
    if compare:
        second = read_vectors(compare, vectors_format)
        result["compare"] = {"vectors": str(compare),
                             **compare_models(gold, vectors, second, case=case, oov=oov)}
    return result, scores


def sdt_files(corpus, *, seed: int = 0, doc_size: int = 10, trainer: str = "lsa",
              dim: int = 300, min_count: int = 10, freq_min: int = 40, freq_max: int = 400,
              n_words: int = 500, stopwords=None, median_rank: bool = False,
              usf_dir=None) -> dict:
    """``lexgold sdt``: SDT-rho on the pseudo-synonym corpus, optionally the Median Rank."""
    stop = read_input_text(stopwords).split() if stopwords else ()
    documents = read_corpus(corpus, doc_size, stop)
    train = get_trainer(trainer)
    rng = np.random.default_rng(seed)
    result = run_sdt(documents, rng, train, freq_min=freq_min, freq_max=freq_max,
                     n_words=n_words, dim=dim, min_count=min_count)
    result = {"corpus": str(corpus), "documents": len(documents), "doc_size": doc_size,
              "trainer": trainer, "dim": dim, "seed": seed, **result}
    if median_rank:
        from lexgold.resources import read_usf
        original = train(documents, np.random.default_rng(seed), dim=dim, min_count=min_count)
        result["median_rank"] = median_associate_rank(original, read_usf(usf_dir))
    return result
