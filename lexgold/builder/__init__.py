"""Candidate pools and sampling: SimLex-999 USF stratification, HyperLex WordNet relation pools,
TR9856 hypergeometric topic lexicons."""

from lexgold import lazy_api

_HOMES = {
    "build_simlex": "simlex", "build_hyperlex": "hyperlex", "build_tr9856": "tr9856",
    "label_relations": "relations", "RelationLabeller": "relations"}
__all__ = ["build_simlex", "build_hyperlex", "build_tr9856", "label_relations",
           "RelationLabeller"]

__getattr__, __dir__ = lazy_api(__name__, _HOMES)
