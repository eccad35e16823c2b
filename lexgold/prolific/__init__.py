"""Prolific, end to end: its REST API (:mod:`.client`), the study's submissions reconciled,
reviewed and paid bonuses (:mod:`.review`, :mod:`.cli`), and its webhook (:mod:`.webhook`)."""

from lexgold import lazy_api

_HOMES = {
    "Client": "client", "ProlificError": "client", "sync": "review", "reconcile": "review",
    "apply_review": "review", "plan_bonuses": "review", "apply_bonuses": "review",
    "verify": "webhook", "parse_event": "webhook"}
__all__ = ["Client", "ProlificError", "sync", "reconcile", "apply_review", "plan_bonuses",
           "apply_bonuses", "verify", "parse_event"]

__getattr__, __dir__ = lazy_api(__name__, _HOMES)
