"""A machine is a rater: an LLM's or a model's ratings of word pairs, read with their provenance,
their worth measured against human ratings, and spent in a declared mode (``machine-allocate``:
the machine decides where human ratings go, every released score stays a human mean;
``machine-prior``: each released score is the empirical-Bayes posterior of the pair's human
ratings and the calibrated machine score, the human-only mean kept beside it).

``lexgold machine rate`` (:mod:`.cli`) writes a model's ratings: :mod:`.prompt` (the protocol's
rater texts as a prompt, the number read back), :mod:`.client` (an OpenAI-compatible
chat-completions client), :mod:`.cache` (the answers kept, so a rerun resumes) and :mod:`.rate`
(the run). The Python API below lists what is public.
"""

from lexgold.lazy import lazy_api

#: the package's Python API: each name and the submodule that defines it (imported on first use)
_API = {
    "alternative_annotator_test": "alttest",
    "benjamini_yekutieli": "alttest",
    "machine_worth": "worth",
    "calibrate_machine": "prior",
    "machine_gain": "allocate",
    "machine_worth": "worth",
    "posterior": "prior",
    "prior_scores": "prior",
    "prior_table": "prior",
    "read_machine": "ratings",
    "read_provenance": "ratings",
    "vector_scores": "ratings",
}
__all__ = sorted(_API)

__getattr__, __dir__ = lazy_api(__name__, _API, globals())
