"""Evaluation of word vectors against gold standards; analogies; the pseudo-synonym test."""
