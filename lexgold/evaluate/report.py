"""Orchestration at the edges: read the files, run the evaluations, gather one result dict."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import pandas as pd

from lexgold.compression import open_input, sha256_file
from lexgold.errors import InputError
from lexgold.evaluate.circularity import circularity_warning, release_machine
from lexgold.evaluate.gold import read_gold
from lexgold.evaluate.models import evaluate_models, evaluate_one, read_models
from lexgold.evaluate.multisimlex import is_multisimlex
from lexgold.evaluate.scores import read_provenance
from lexgold.evaluate.vectors import DEFAULT_CASE
from lexgold.evaluate.wordpairs import lookup_words


def evaluate_golds(golds, vectors_path, *, vectors_format: str = "auto",
                   case: str = DEFAULT_CASE, oov: str = "drop", n_boot: int = 1000,
                   seed: int = 0, compare=None, binary: bool | None = None,
                   scores=None, scores_column: str | None = None
                   ) -> list[tuple[dict, pd.DataFrame]]:
    """``lexgold evaluate`` over several gold standards with one pass over each vector file.

    Parameters
    ----------
    golds : list of (pandas.DataFrame, path)
        Gold standards from :func:`lexgold.evaluate.gold.read_gold` and their files.
    vectors_path, compare
        The vector file, and optionally a second one for Steiger's test; each is streamed
        once, keeping only the rows of the gold standards' words (``read_vectors(keep=...)``).
    scores, scores_column
        Instead of ``vectors_path`` (None): a score file, the model
        (:mod:`lexgold.evaluate.scores`), and its numeric column (found when not given).

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
    vector_files = ([] if scores is not None else [vectors_path]) + ([compare] if compare else [])
    models = read_models(vector_files, words, vectors_format=vectors_format, case=case, oov=oov,
                         scores=[] if scores is None else [scores], scores_column=scores_column)
    if scores is not None:                    # the score file first, the --compare vectors next
        models, vectors_path = models[-1:] + models[:-1], scores
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
                        gold_column: str | None = None, **options) -> list[GoldRun]:
    """``lexgold evaluate`` over gold files: each file's result, or the error that stops it.

    One unreadable gold file, or one with no pair covered by the vectors, does not stop the
    others: its :class:`GoldRun` carries the one-line error and the command exits non-zero
    after printing the other results. ``options`` are those of :func:`evaluate_golds`; with a
    list of vector files, those of :func:`lexgold.evaluate.models.evaluate_models` (each run's
    ``result`` is then its several-model result and ``scores`` one frame per model).
    ``strip_language_prefix``, ``duplicates``, ``alternatives`` and ``gold_column`` (its
    ``score_column``) are :func:`lexgold.evaluate.gold.read_gold`'s. A score file is a model
    through ``options``: ``scores`` (one file, ``vectors_path`` None; a list beside the list
    of vector files) and ``scores_column``.

    A gold file whose release was built with a model evaluated here (its ``report.json``'s
    ``machine``: :mod:`lexgold.evaluate.circularity`) gets the one-line warning in its
    result's ``warnings``.
    """
    multisimlex = {path: _is_multisimlex_file(path) for path in paths}
    if language is not None and not any(multisimlex.values()):
        raise InputError("applies to Multi-SimLex files only (Concepticon's "
                         "Vulic-2020-2244.tsv); no --gold is one", field="--language")
    read, errors, notes, machines = [], {}, {}, {}
    for path in paths:
        try:
            gold = read_gold(path, gold_format, language if multisimlex[path] else None,
                             strip_language_prefix=strip_language_prefix,
                             duplicates=duplicates, alternatives=alternatives,
                             score_column=gold_column)
            machines[path] = release_machine(path)
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
    if several:
        models = [(path, "vectors") for path in vectors_path] + [
            (path, "scores") for path in options.get("scores", ())]
    else:
        models = [(options["scores"], "scores") if options.get("scores")
                  else (vectors_path, "vectors")]
        models += [(options["compare"], "vectors")] if options.get("compare") else []
    provenances: dict = {}
    for path, machine in machines.items():
        if machine is not None and path in runs:
            runs[path][0]["warnings"] = _machine_warnings(machine, path, models, gold_column,
                                                          provenances)
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
                f"{options.get('scores') or vectors_path} (the first: {first['word1']!r}, "
                f"{first['word2']!r}); check the spelling the file uses (case, POS suffixes "
                f"such as '-n', language prefixes such as 'en_': --strip-language-prefix) and "
                f"--case",
                path=path))
            out.append(GoldRun(str(path), None, None, error, notes[path]))
            continue
        out.append(GoldRun(str(path), result, scores, None, notes[path]))
    return out


def _machine_warnings(machine: dict, gold_path, models, gold_column, provenances: dict) -> list:
    """The warnings of :func:`lexgold.evaluate.circularity.circularity_warning` for each model
    file, ``(path, "vectors" | "scores")``; ``provenances`` caches each file's provenance (a
    score file's sidecar record; a vector file's checksum, read once and only for a gold built
    with a machine)."""
    out = []
    for model, kind in models:
        if model not in provenances:
            provenances[model] = (read_provenance(model) if kind == "scores"
                                  else {"model": None, "file_sha256": sha256_file(model)})
        message = circularity_warning(machine, provenances[model], model_path=model,
                                      gold_path=gold_path, gold_column=gold_column)
        if message:
            out.append(message)
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
