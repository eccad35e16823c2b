"""Prolific, end to end: its REST API (:mod:`.client`), the study's submissions reconciled,
reviewed and paid bonuses (:mod:`.review`, :mod:`.cli`), and its webhook (:mod:`.webhook`)."""

from importlib import import_module

#: the package's Python API: each name and the module that defines it (imported on first use,
#: so importing the package costs nothing)
_API = {
    "Client": "lexgold.prolific.client",
    "ProlificError": "lexgold.prolific.client",
    "sync": "lexgold.prolific.review",
    "reconcile": "lexgold.prolific.review",
    "apply_review": "lexgold.prolific.review",
    "plan_bonuses": "lexgold.prolific.review",
    "apply_bonuses": "lexgold.prolific.review",
    "verify": "lexgold.prolific.webhook",
    "parse_event": "lexgold.prolific.webhook",
}
__all__ = sorted(_API)


def __getattr__(name: str):
    if name in _API:
        return getattr(import_module(_API[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
