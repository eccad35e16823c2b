"""Candidate pools and sampling: SimLex-999 USF stratification, HyperLex WordNet relation pools,
TR9856 hypergeometric topic lexicons."""

from importlib import import_module

#: the package's Python API: each name and the module that defines it (imported on first use,
#: so importing the package costs nothing)
_API = {
    "build_simlex": "lexgold.builder.simlex",
    "build_hyperlex": "lexgold.builder.hyperlex",
    "build_tr9856": "lexgold.builder.tr9856",
    "label_relations": "lexgold.builder.relations",
    "RelationLabeller": "lexgold.builder.relations",
}
__all__ = sorted(_API)


def __getattr__(name: str):
    if name in _API:
        return getattr(import_module(_API[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
