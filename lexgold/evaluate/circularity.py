"""A gold standard built with the model being evaluated: the warning ``lexgold evaluate`` gives.

A release of ``lexgold process`` made with a machine rater says so in the ``report.json`` beside
its ``gold.csv``: an object ``machine`` with the ``mode`` (``prior``: each released score is the
empirical-Bayes posterior of the pair's human ratings and the machine's calibrated score;
``allocate``: the machine chose where the human ratings went, every score a human mean), the
``model``, the ``prompt_sha256`` and ``file_sha256`` of its ratings, and the ``circularity``
figure (the machine's Spearman against the gold the mode built minus its Spearman against a
human-only gold of the same accuracy: issue 45). Such a gold flatters that machine: GPT-4's
Spearman against the empirical-Bayes SimVerb gold at 4 ratings a pair is 0.895, against the
10-rating human gold 0.807 (issue 45, measured on SimVerb's real log).

A model evaluated on such a gold is the release's machine when its score file's provenance
(:func:`lexgold.evaluate.scores.read_provenance`) names the same ``model`` or has the same
``file_sha256``, or, for word vectors, when the vector file's SHA-256 is the release's
``file_sha256``. Then ``lexgold evaluate`` warns, once per model and gold file: a prior-mode
gold is to be evaluated on its human-only column, ``human_score`` (``--gold-column
human_score``, which then draws no warning); an allocate-mode gold has no such column (its
scores are human means, but the machine chose which pairs got more ratings), so the warning
stays, with the release's circularity figure.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from lexgold.compression import read_input_text
from lexgold.errors import InputError

#: the modes a release's ``machine`` object may name (``none``: no machine)
MODES = ("prior", "allocate")
#: the human-only score column a machine-prior release keeps beside its score
HUMAN_COLUMN = "human_score"
#: the report a release keeps beside its gold file
REPORT = "report.json"


def release_machine(gold_path: str | Path) -> dict | None:
    """The ``machine`` object of the ``report.json`` beside ``gold_path``, or None.

    None too when there is no report, when it is not a JSON object (the folder may hold
    another tool's ``report.json``), or when its ``machine`` is absent, null or of mode
    ``none``. ``mode`` is returned without a ``machine-`` prefix.

    Raises
    ------
    InputError
        A ``machine`` that is not an object, or whose ``mode`` is not one of :data:`MODES`,
        naming the report and the field.
    """
    report = Path(gold_path).parent / REPORT
    if not report.is_file():
        return None
    try:
        record = json.loads(read_input_text(report))
    except (InputError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(record, dict) or record.get("machine") is None:
        return None
    machine = record["machine"]
    if not isinstance(machine, dict):
        raise InputError(f"not an object: {machine!r}", path=report, field="machine")
    mode = str(machine.get("mode", "")).removeprefix("machine-")
    if mode == "none":
        return None
    if mode not in MODES:
        raise InputError(f"mode {machine.get('mode')!r} is none of {', '.join(MODES)}",
                         path=report, field="machine.mode")
    return {**machine, "mode": mode}


def built_with(machine: dict, provenance: dict) -> str | None:
    """How a model is the release's machine: ``"model"`` (the same model name, compared
    without case), ``"file_sha256"`` (the same ratings or vector file), or None.

    Examples
    --------
    >>> built_with({"mode": "prior", "model": "GPT-4"}, {"model": "gpt-4"})
    'model'
    >>> built_with({"mode": "prior", "model": "gpt-4", "file_sha256": "ab"},
    ...            {"model": None, "file_sha256": "ab"})
    'file_sha256'
    >>> built_with({"mode": "allocate", "model": None}, {"model": None}) is None
    True
    """
    theirs, ours = machine.get("model"), provenance.get("model")
    if isinstance(theirs, str) and isinstance(ours, str) and theirs.strip() \
            and theirs.strip().casefold() == ours.strip().casefold():
        return "model"
    sha = machine.get("file_sha256")
    if isinstance(sha, str) and sha and sha.lower() == str(provenance.get("file_sha256", "")
                                                            ).lower():
        return "file_sha256"
    return None


def circularity_warning(machine: dict, provenance: dict, *, model_path, gold_path,
                        gold_column: str | None = None) -> str | None:
    """The one-line warning for a model evaluated on a gold built with it, or None.

    Parameters
    ----------
    machine : dict
        The release's ``machine`` object (:func:`release_machine`).
    provenance : dict
        The model's: a score file's sidecar record with ``file_sha256``, or a vector file's
        ``{"model": None, "file_sha256": ...}``.
    model_path, gold_path
        The files, as the output names them.
    gold_column : str, optional
        The gold column evaluated (``--gold-column``); a prior-mode gold read on
        :data:`HUMAN_COLUMN` draws no warning.
    """
    how = built_with(machine, provenance)
    if how is None:
        return None
    mode = machine["mode"]
    if mode == "prior" and gold_column is not None \
            and gold_column.strip().lower() == HUMAN_COLUMN:
        return None
    who = (f"model {machine['model']!r}" if how == "model"
           else f"the file with sha256 {str(machine['file_sha256'])[:12]}")
    figure = machine.get("circularity")
    circularity = (f", circularity {figure:+.3f}" if isinstance(figure, (int, float))
                   and not isinstance(figure, bool) and math.isfinite(figure) else "")
    head = (f"{gold_path} was built with {model_path} ({who}) in machine-{mode} mode "
            f"({REPORT}{circularity})")
    if mode == "prior":
        return (f"{head}: its scores lean toward this model, which it flatters; evaluate the "
                f"model on the human-only column: --gold-column {HUMAN_COLUMN}")
    return (f"{head}: the model chose which pairs got more human ratings, so its figure here "
            "may be flattered; quote it with the circularity figure, or evaluate it on a gold "
            "built without it")
