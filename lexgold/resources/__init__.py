"""Real readers of the lexical resources lexgold builds from (USF, Brysbaert, WordNet, POS)."""

from lexgold.resources.concreteness import read_brysbaert
from lexgold.resources.pos import (pos_tendency, penn_tag_counts, tagged_corpus_counts,
                                   usf_pos_counts)
from lexgold.resources.usf import read_usf
from lexgold.resources.wordnet import load_wordnet

__all__ = ["read_usf", "read_brysbaert", "load_wordnet", "usf_pos_counts", "penn_tag_counts",
           "tagged_corpus_counts", "pos_tendency"]
