"""Orchestration at the edges: read the files, run the evaluations, gather one result dict."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import pandas as pd

from lexgold.compression import open_input
from lexgold.errors import InputError
from lexgold.evaluate.gold import read_gold
from lexgold.evaluate.models import evaluate_models, evaluate_one, read_models
from lexgold.evaluate.multisimlex import is_multisimlex
from lexgold.evaluate.vectors import DEFAULT_CASE
from lexgold.evaluate.wordpairs import lookup_words


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
    models = read_models([vectors_path] + ([compare] if compare else []), words,
                         vectors_format=vectors_format, case=case, oov=oov)
    return [evaluate_one(gold, gold_path, models, vectors_path, compare, case=case, oov=oov,
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
    try:
        with open_input(Path(path), "rt", encoding="utf-8-sig") as handle:
            first = handle.readline()
    except (InputError, OSError, UnicodeDecodeError, EOFError):
        return False                  # read_gold reports it
    return is_multisimlex(first.split("\t"))


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
