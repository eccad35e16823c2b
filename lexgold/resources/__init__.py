"""Real readers of the lexical resources lexgold builds from (USF, Brysbaert, WordNet and
other languages' wordnets, POS).

The readers are imported on first use (PEP 562 ``__getattr__``): importing a submodule such as
``lexgold.resources.cli`` must not import NLTK and SciPy, which every command would otherwise
pay for at start-up.
"""

from importlib import import_module

#: the package's Python API: each name and the module that defines it (imported on first use,
#: so importing the package costs nothing)
_API = {
    "read_brysbaert": "lexgold.resources.concreteness",
    "one_tag_per_word": "lexgold.resources.pos",
    "pos_tendency": "lexgold.resources.pos",
    "penn_tag_counts": "lexgold.resources.pos",
    "semcor_tag_counts": "lexgold.resources.pos",
    "sum_counts": "lexgold.resources.pos",
    "tagged_corpus_counts": "lexgold.resources.pos",
    "usf_pos_counts": "lexgold.resources.pos",
    "read_usf": "lexgold.resources.usf",
    "usf_concreteness": "lexgold.resources.usf",
    "load_wordnet": "lexgold.resources.wordnet",
    "load_multiwordnet": "lexgold.resources.wordnets",
    "load_lmf": "lexgold.resources.wordnets",
    "load_wordnet_adapter": "lexgold.resources.wordnets",
}
__all__ = sorted(_API)


def __getattr__(name: str):
    if name in _API:
        return getattr(import_module(_API[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
