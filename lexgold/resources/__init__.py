"""Real readers of the lexical resources lexgold builds from (USF, Brysbaert, WordNet and
other languages' wordnets, POS).

The readers are imported on first use (PEP 562 ``__getattr__``): importing a submodule such as
``lexgold.resources.cli`` must not import NLTK and SciPy, which every command would otherwise
pay for at start-up.
"""

from importlib import import_module

_HOMES = {"read_brysbaert": "concreteness", "one_tag_per_word": "pos", "pos_tendency": "pos",
          "penn_tag_counts": "pos", "semcor_tag_counts": "pos", "sum_counts": "pos",
          "tagged_corpus_counts": "pos", "usf_pos_counts": "pos", "read_usf": "usf",
          "usf_concreteness": "usf", "load_wordnet": "wordnet",
          "load_multiwordnet": "wordnets", "load_lmf": "wordnets",
          "load_wordnet_adapter": "wordnets"}

__all__ = ["read_usf", "read_brysbaert", "load_wordnet", "usf_pos_counts", "penn_tag_counts",
           "semcor_tag_counts", "sum_counts", "one_tag_per_word", "tagged_corpus_counts",
           "pos_tendency", "usf_concreteness", "load_multiwordnet", "load_lmf",
           "load_wordnet_adapter"]


def __getattr__(name):
    if name in _HOMES:
        value = getattr(import_module(f"lexgold.resources.{_HOMES[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'lexgold.resources' has no attribute {name!r}")
