"""Evaluation of word vectors against gold standards; analogies; the pseudo-synonym test."""

#: how words are matched against the vocabulary (``--case``); here, not in :mod:`.vectors`, so
#: that the command line offers them without importing numpy
CASE_POLICIES = ("exact-then-lower", "lower", "exact")
DEFAULT_CASE = "exact-then-lower"
