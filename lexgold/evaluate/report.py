"""Orchestration at the edges: read the files, run the evaluations, gather one result dict."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

from lexgold.errors import InputError
from lexgold.evaluate.sdt import (
    get_trainer,
    median_associate_rank,
    overlap_words,
    read_corpus,
    run_sdt,
    usf_words,
)
from lexgold.evaluate.tr9856_binary import binary_task
from lexgold.evaluate.vectors import read_vectors
from lexgold.evaluate.wordpairs import compare_models, evaluate_pairs

#: the Snowball English stop list (Martin Porter, BSD), packaged among the protocol files
SNOWBALL = "tr9856_stopwords_snowball_english.txt"


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


def sdt_stop_words(stopwords: str | None) -> tuple[str, frozenset[str]]:
    """The stop list of ``lexgold sdt``: its name and words.

    ``"snowball"`` (the default) is the Snowball English list packaged with lexgold (127
    function words: "the, of, to, and ..."); ``"none"`` or None, no stop list; else a file, one
    word per line (``#`` comments).
    """
    from lexgold.builder.terms import read_stop_words

    if stopwords in (None, "", "none"):
        return "none", frozenset()
    if stopwords == "snowball":
        packaged = Path(str(resources.files("lexgold.protocols") / SNOWBALL))
        return stopwords, read_stop_words(packaged)
    if not Path(stopwords).is_file():
        raise InputError("stop list not found (a file, 'snowball' or 'none')", path=stopwords,
                         field="--stopwords")
    return str(stopwords), read_stop_words(stopwords)


def sdt_files(corpus, *, seed: int = 0, doc_size: int = 10, trainer: str = "lsa",
              dim: int = 300, min_count: int = 10, words: str = "overlap", freq_min: int = 40,
              freq_max: int = 400, n_words: int = 500, max_overlap: float = 0.10,
              stopwords: str | None = "snowball", median_rank: bool = False,
              usf_dir=None) -> dict:
    """``lexgold sdt``: SDT-rho on the pseudo-synonym corpus, optionally the Median Rank.

    ``words="overlap"`` splits every word of the overlap set (USF cues in the vocabulary of
    ``min_count``; Fourtassi & Dupoux 2014, section 2.2); ``words="band"`` draws ``n_words``
    from ``freq_min < count < freq_max`` with at most ``max_overlap`` of them in the overlap
    set (section 3). The stop list is removed before the vocabulary is counted (section 2).
    """
    from lexgold.resources import read_usf

    if words not in ("overlap", "band"):
        raise InputError(f"expected overlap or band, found {words!r}", field="--words")
    stop_name, stop = sdt_stop_words(stopwords)
    documents = read_corpus(corpus, doc_size, stop)
    train = get_trainer(trainer)
    rng = np.random.default_rng(seed)
    usf = read_usf(usf_dir)
    overlap = overlap_words(documents, usf_words(usf), min_count)
    result = run_sdt(documents, rng, train, words=overlap if words == "overlap" else None,
                     freq_min=freq_min, freq_max=freq_max, n_words=n_words, overlap=overlap,
                     max_overlap=max_overlap, dim=dim, min_count=min_count)
    result = {"corpus": str(corpus), "documents": len(documents), "doc_size": doc_size,
              "trainer": trainer, "dim": dim, "min_count": min_count, "seed": seed,
              "stopwords": {"list": stop_name, "words": len(stop)},
              "overlap": len(overlap),
              **({"max_overlap": max_overlap} if words == "band" else {}), **result}
    if median_rank:
        original = train(documents, np.random.default_rng(seed), dim=dim, min_count=min_count)
        result["median_rank"] = median_associate_rank(original, usf)
    return result
