"""Real readers of the lexical resources lexgold builds from (USF, Brysbaert, WordNet, POS)."""

from lexgold.resources.concreteness import read_brysbaert
from lexgold.resources.pos import (one_tag_per_word, pos_tendency, penn_tag_counts,
                                   semcor_tag_counts, sum_counts, tagged_corpus_counts,
                                   usf_pos_counts)
from lexgold.resources.usf import read_usf
from lexgold.resources.wordnet import load_wordnet

__all__ = ["read_usf", "read_brysbaert", "load_wordnet", "usf_pos_counts", "penn_tag_counts",
           "semcor_tag_counts", "sum_counts", "one_tag_per_word", "tagged_corpus_counts",
           "pos_tendency"]
