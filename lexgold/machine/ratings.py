"""A machine's ratings read in: a CSV of ``word1, word2`` and a number, or word vectors' cosines.

Any CSV with the two word columns (``word1, word2``, or the published spellings ``WORD1``,
``term1`` ... of :data:`lexgold.tables.PAIR_COLUMN_ALIASES`) and one numeric column is a
machine's ratings, on any scale and covering some or all pairs. The numeric column is named
with ``column`` or found: the one column other than the words whose every cell is a number (an
LLM's raw answer such as ``0 (not at all similar)`` beside the parsed number is not one), or
named by the sidecar's ``column`` (``lexgold machine rate``: ``rating``, beside ``samples``). A cell
that is not a finite number, and a pair given twice (in either order), stop the read with the
line named. The file is read by :func:`lexgold.evaluate.scores.read_scores`, the one reader of
pair-score files, so that ``lexgold evaluate --scores`` takes every file read here.

A ratings file carries its provenance in a sidecar JSON beside it, ``FILE.json`` (written by
``lexgold machine rate``): the model, the endpoint's host, the prompt and its SHA-256, the
parameters, the date and lexgold's version. A file without one is read with the provenance
``{"model": null}`` and the file's own checksum, so a release can say the model is unknown.

Word vectors are a machine too (:func:`vector_scores`): the cosine of the two words' vectors,
read by the streaming reader of ``lexgold evaluate`` (only the rows of the pairs' words are
kept); pairs with a word missing from the vocabulary get no machine score.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from lexgold.compression import sha256_file
from lexgold.evaluate.scores import SIDECAR_MAX_BYTES, read_provenance, read_scores, sidecar_path

#: columns of a machine's scores as lexgold hands them on
COLUMNS = ["word1", "word2", "machine"]
#: the provenance keys of a sidecar (docs/machine.md)
PROVENANCE_KEYS = ("model", "endpoint_host", "prompt", "prompt_sha256", "parameters", "date",
                   "lexgold_version")

__all__ = ["COLUMNS", "PROVENANCE_KEYS", "SIDECAR_MAX_BYTES", "read_machine", "read_provenance",
           "sidecar_path", "vector_scores"]


def read_machine(path: str | Path, *, column: str | None = None,
                 option: str = "--column") -> pd.DataFrame:
    """Read a machine's ratings of word pairs: :func:`lexgold.evaluate.scores.read_scores`
    (the one reader of pair-score files, which ``lexgold evaluate --scores`` uses too; same
    parameters, attrs and errors), the score named ``machine``: columns ``word1, word2,
    machine``, one row per pair, file order.
    """
    scores = read_scores(path, column=column, option=option)
    attrs = dict(scores.attrs)
    scores = scores.rename(columns={"score": "machine"})
    scores.attrs = attrs
    return scores


def vector_scores(path: str | Path, pairs: pd.DataFrame, *, vectors_format: str = "auto",
                  case: str | None = None) -> pd.DataFrame:
    """Word vectors as a machine: the cosine of each pair's two words.

    Parameters
    ----------
    path : str or Path
        A vector file in any layout ``lexgold evaluate`` reads (streamed: only the rows of the
        pairs' words are kept).
    pairs : pandas.DataFrame
        Columns ``word1, word2``.
    vectors_format, case
        As ``lexgold evaluate``'s ``--vectors-format`` and ``--case``.

    Returns
    -------
    pandas.DataFrame
        Columns ``word1, word2, machine`` for the pairs whose words are both found (partial
        coverage), ``attrs['provenance']`` naming the vectors file and its checksum, and
        ``attrs['coverage']`` the share of pairs scored.
    """
    from lexgold.evaluate.vectors import DEFAULT_CASE, read_vectors
    from lexgold.evaluate.wordpairs import cosine_rows, lookup_words, term_vectors

    case = case or DEFAULT_CASE
    path = Path(path)
    unique = pairs[["word1", "word2"]].drop_duplicates().reset_index(drop=True)
    words = lookup_words(unique["word1"].tolist() + unique["word2"].tolist())
    vectors = read_vectors(path, vectors_format, keep=words, case=case)
    left, found1 = term_vectors(unique["word1"].tolist(), vectors, case, "drop")
    right, found2 = term_vectors(unique["word2"].tolist(), vectors, case, "drop")
    found = found1 & found2
    cosines = cosine_rows(left, right)
    scores = pd.DataFrame({"word1": unique["word1"].to_numpy()[found],
                           "word2": unique["word2"].to_numpy()[found],
                           "machine": cosines[found].astype(float)})
    scores.attrs.update(column="cosine", coverage=float(found.mean()) if len(found) else 0.0,
                        provenance={"model": f"word vectors {path.name} (cosine)",
                                    "kind": "vectors", "file": path.name,
                                    "file_sha256": sha256_file(path)},
                        scale=(-1.0, 1.0))
    return scores
