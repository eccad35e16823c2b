"""Orchestration at the edges: read the files, run the evaluations, gather one result dict."""

from __future__ import annotations

import warnings
from importlib import resources
from pathlib import Path
from typing import NamedTuple

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
from lexgold.evaluate.vectors import DEFAULT_CASE, case_warning, read_vectors
from lexgold.evaluate.wordpairs import compare_models, evaluate_pairs, lookup_words
from lexgold.tables import read_stop_words


class CaseVariantWarning(UserWarning):
    """File order chose among case variants in a vector file not sorted by frequency."""


def evaluate_golds(golds, vectors_path, *, vectors_format: str = "auto",
                   case: str = DEFAULT_CASE, oov: str = "drop", n_boot: int = 1000,
                   seed: int = 0, compare=None,
                   binary: bool | None = None) -> list[tuple[dict, pd.DataFrame]]:
    """``lexgold evaluate`` over several gold standards with one pass over each vector file.

    Parameters
    ----------
    golds : list of (pandas.DataFrame, path)
        Gold standards from :func:`lexgold.evaluate.gold.read_gold` and their files.
    vectors_path, compare
        The vector file, and optionally a second one for Steiger's test; each is streamed
        once, keeping only the rows of the gold standards' words (``read_vectors(keep=...)``).

    Returns
    -------
    list of (dict, pandas.DataFrame)
        Per gold standard, what :func:`evaluate_files` returns for it alone: each gets its own
        generator seeded with ``seed``, so its figures equal a run with that gold alone.

    Warns
    -----
    CaseVariantWarning
        A looked-up word has several case variants in a file not sorted by frequency
        (:func:`lexgold.evaluate.vectors.case_warning`).
    """
    words = lookup_words(term for gold, _ in golds for column in ("word1", "word2")
                         for term in gold[column])
    models = []
    for path in [vectors_path] + ([compare] if compare else []):
        model = read_vectors(path, vectors_format, keep=words, case=case, mean=(oov == "mean"))
        message = case_warning(model, words, case)
        if message:
            warnings.warn(message, CaseVariantWarning, stacklevel=2)
        models.append(model)
    return [_evaluate_one(gold, gold_path, models, vectors_path, compare, case=case, oov=oov,
                          n_boot=n_boot, seed=seed, binary=binary)
            for gold, gold_path in golds]


class GoldRun(NamedTuple):
    """One ``--gold`` of ``lexgold evaluate``: its result and per-pair frame, or its error."""
    path: str
    result: dict | None
    scores: pd.DataFrame | None
    error: str | None
    #: what reading the file normalised (Unicode spaces ...), one phrase each
    notes: list


def evaluate_gold_files(paths, vectors_path, *, gold_format: str = "auto",
                        language: str | None = None, strip_language_prefix: bool | None = None,
                        duplicates: str = "first", alternatives: str = "first",
                        **options) -> list[GoldRun]:
    """``lexgold evaluate`` over gold files: each file's result, or the error that stops it.

    One unreadable gold file, or one with no pair covered by the vectors, does not stop the
    others: its :class:`GoldRun` carries the one-line error and the command exits non-zero
    after printing the other results. ``options`` are those of :func:`evaluate_golds`; with a
    list of vector files, those of :func:`lexgold.evaluate.models.evaluate_models` (each run's
    ``result`` is then its several-model result and ``scores`` one frame per model).
    ``strip_language_prefix``, ``duplicates`` and ``alternatives`` are
    :func:`lexgold.evaluate.gold.read_gold`'s.
    """
    from lexgold.evaluate.gold import read_gold

    multisimlex = {path: _is_multisimlex_file(path) for path in paths}
    if language is not None and not any(multisimlex.values()):
        raise InputError("applies to Multi-SimLex files only (Concepticon's "
                         "Vulic-2020-2244.tsv); no --gold is one", field="--language")
    read, errors, notes = [], {}, {}
    for path in paths:
        try:
            gold = read_gold(path, gold_format, language if multisimlex[path] else None,
                             strip_language_prefix=strip_language_prefix,
                             duplicates=duplicates, alternatives=alternatives)
        except InputError as err:
            errors[path] = str(err)
            continue
        notes[path] = list(gold.attrs.get("notes", []))
        read.append((gold, path))
    several = isinstance(vectors_path, (list, tuple))
    if several:                       # lexgold.evaluate.models: several --vectors
        from lexgold.evaluate.models import evaluate_models
        evaluated = evaluate_models(read, vectors_path, **options) if read else []
    else:
        evaluated = evaluate_golds(read, vectors_path, **options) if read else []
    runs = dict(zip([p for _, p in read], evaluated))
    out = []
    for path in paths:
        if path in errors:
            out.append(GoldRun(str(path), None, None, errors[path], []))
            continue
        result, scores = runs[path]
        if several:
            if not any(model and model["covered"] for model in result["models"]):
                error = str(InputError(
                    f"no pair covered: none of the {result['pairs']} pairs has all its words "
                    + ("in every vector file (--common-vocabulary)"
                       if result["common_vocabulary"] else "in any of the vector files")
                    + "; check the spelling the file uses (case, POS suffixes such as '-n', "
                      "language prefixes such as 'en_': --strip-language-prefix) and --case",
                    path=path))
                out.append(GoldRun(str(path), None, None, error, notes[path]))
            else:
                out.append(GoldRun(str(path), result, scores, None, notes[path]))
            continue
        if result["covered"] == 0:
            first = scores.iloc[0]
            error = str(InputError(
                f"no pair covered: none of the {result['pairs']} pairs has all its words in "
                f"{vectors_path} (the first: {first['word1']!r}, {first['word2']!r}); check the "
                f"spelling the file uses (case, POS suffixes such as '-n', language prefixes "
                f"such as 'en_': --strip-language-prefix) and --case",
                path=path))
            out.append(GoldRun(str(path), None, None, error, notes[path]))
            continue
        out.append(GoldRun(str(path), result, scores, None, notes[path]))
    return out


def _is_multisimlex_file(path) -> bool:
    """Whether ``--language`` applies to ``path`` (with several --gold, only to Multi-SimLex)."""
    from lexgold.compression import open_input
    from lexgold.evaluate.multisimlex import is_multisimlex

    try:
        with open_input(Path(path), "rt", encoding="utf-8-sig") as handle:
            first = handle.readline()
    except (InputError, OSError, UnicodeDecodeError, EOFError):
        return False                  # read_gold reports it
    return is_multisimlex(first.split("\t"))


#: the Snowball English stop list (Martin Porter, BSD), packaged among the protocol files
SNOWBALL = "tr9856_stopwords_snowball_english.txt"


def evaluate_files(gold: pd.DataFrame, gold_path, vectors_path, *, vectors_format: str = "auto",
                   case: str = DEFAULT_CASE, oov: str = "drop", n_boot: int = 1000,
                   seed: int = 0, compare=None,
                   binary: bool | None = None) -> tuple[dict, pd.DataFrame]:
    """``lexgold evaluate``: correlations, subsets, CIs, binary task and model comparison.

    Returns the JSON-ready result (keys ``spearman``, ``pearson``, ``pairs``, ``covered``,
    plus ``used``, ``ci``, ``subsets``, ``binary``, ``compare``) and the per-pair frame.
    """
    return evaluate_golds([(gold, gold_path)], vectors_path, vectors_format=vectors_format,
                          case=case, oov=oov, n_boot=n_boot, seed=seed, compare=compare,
                          binary=binary)[0]


def _evaluate_one(gold, gold_path, models, vectors_path, compare, *, case, oov, n_boot, seed,
                  binary) -> tuple[dict, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    vectors = models[0]
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
        result["compare"] = {"vectors": str(compare),
                             **compare_models(gold, vectors, models[1], case=case, oov=oov)}
    return result, scores


def sdt_stop_words(stopwords: str | None) -> tuple[str, frozenset[str]]:
    """The stop list of ``lexgold sdt``: its name and words.

    ``"snowball"`` (the default) is the Snowball English list packaged with lexgold (127
    function words: "the, of, to, and ..."); ``"none"`` or None, no stop list; else a file, one
    word per line (``#`` comments).
    """
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
