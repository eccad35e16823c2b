"""Evaluation of word vectors against gold standards; analogies; the pseudo-synonym test.

The names of :data:`__all__` are the Python API (docs/evaluate.md, "Python API"). They are
loaded on first use (PEP 562), so that importing this package, as the command line does to
offer :data:`CASE_POLICIES`, loads neither numpy nor pandas.

>>> from lexgold.evaluate import steiger_test
>>> round(steiger_test(0.5, 0.3, 0.6, 100)["z"], 4)
2.4674
"""

from lexgold.lazy import lazy_api

#: how words are matched against the vocabulary (``--case``); here, not in :mod:`.vectors`, so
#: that the command line offers them without importing numpy
CASE_POLICIES = ("exact-then-lower", "lower", "exact")
DEFAULT_CASE = "exact-then-lower"

#: name -> the module of this package that defines it
_API = {
    "Vectors": "vectors", "read_vectors": "vectors", "CaseVariantWarning": "vectors",
    "case_warning": "vectors",
    "read_gold": "gold", "read_scores": "scores",
    "evaluate_pairs": "wordpairs", "pair_scores": "wordpairs", "compare_models": "wordpairs",
    "compare_scores": "wordpairs", "steiger_test": "wordpairs", "worst_pairs": "wordpairs",
    "evaluate_golds": "report", "evaluate_files": "report", "evaluate_gold_files": "report",
    "evaluate_models": "models", "common_pairs": "models",
    "read_questions": "analogy", "solve": "analogy",
    "read_corpus": "sdt", "run_sdt": "sdt", "median_associate_rank": "sdt", "sdt_files": "sdt",
    "binary_task": "tr9856_binary",
    "load_catalogue": "catalogue", "scan_folder": "catalogue",
}

__all__ = ["CASE_POLICIES", "DEFAULT_CASE", *_API]

__getattr__, __dir__ = lazy_api(__name__, _API, globals())
