"""Candidate pools and sampling: SimLex-999 USF stratification, HyperLex WordNet relation pools,
TR9856 hypergeometric topic lexicons."""

from lexgold.lazy import lazy_api

#: the package's Python API: each name and the submodule that defines it (imported on first use,
#: so importing the package costs nothing)
_API = {
    "build_simlex": "simlex",
    "build_hyperlex": "hyperlex",
    "build_tr9856": "tr9856",
    "label_relations": "relations",
    "RelationLabeller": "relations",
}
__all__ = sorted(_API)

__getattr__, __dir__ = lazy_api(__name__, _API, globals())
