"""Prolific, end to end: its REST API (:mod:`.client`), the study's submissions reconciled,
reviewed and paid bonuses (:mod:`.review`, :mod:`.cli`), and its webhook (:mod:`.webhook`)."""

from lexgold.lazy import lazy_api

#: the package's Python API: each name and the submodule that defines it (imported on first use,
#: so importing the package costs nothing)
_API = {
    "Client": "client",
    "ProlificError": "client",
    "sync": "review",
    "reconcile": "review",
    "apply_review": "review",
    "plan_bonuses": "review",
    "apply_bonuses": "review",
    "verify": "webhook",
    "parse_event": "webhook",
}
__all__ = sorted(_API)

__getattr__, __dir__ = lazy_api(__name__, _API, globals())
