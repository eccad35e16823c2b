"""Real readers of the lexical resources lexgold builds from (USF, Brysbaert, WordNet and
other languages' wordnets, POS).

The readers are imported on first use (PEP 562 ``__getattr__``): importing a submodule such as
``lexgold.resources.cli`` must not import NLTK and SciPy, which every command would otherwise
pay for at start-up.
"""

from lexgold.lazy import lazy_api

#: the package's Python API: each name and the submodule that defines it (imported on first use,
#: so importing the package costs nothing)
_API = {
    "read_brysbaert": "concreteness",
    "one_tag_per_word": "pos",
    "pos_tendency": "pos",
    "penn_tag_counts": "pos",
    "semcor_tag_counts": "pos",
    "sum_counts": "pos",
    "tagged_corpus_counts": "pos",
    "usf_pos_counts": "pos",
    "read_usf": "usf",
    "usf_concreteness": "usf",
    "load_wordnet": "wordnet",
    "load_multiwordnet": "wordnets",
    "load_lmf": "wordnets",
    "load_wordnet_adapter": "wordnets",
}
__all__ = sorted(_API)

__getattr__, __dir__ = lazy_api(__name__, _API, globals())
