"""Real crowds: the rater model behind every simulation, fitted to real rating logs,
and the replay of real logs that measures what allocation and stopping save.

:mod:`lexgold.crowd.model` holds the model, its fit and its draws; ``data/default.json`` is the
crowd fitted to the shipped logs (SimVerb-3500's raw ratings and WordSim-353 set 1), built by
``scripts/fit_default_crowd.py``. :mod:`lexgold.crowd.replay` replays a real log;
:mod:`lexgold.crowd.allocation` holds the adaptive criteria the site uses.
"""

from importlib import import_module

#: the package's Python API: each name and the module that defines it (imported on first use,
#: so importing the package costs nothing)
_API = {
    "CrowdModel": "lexgold.crowd.model",
    "default_model": "lexgold.crowd.model",
    "read_model": "lexgold.crowd.model",
    "fit": "lexgold.crowd.model",
    "simulate_log": "lexgold.crowd.model",
    "simulate_like": "lexgold.crowd.model",
    "shipped_log": "lexgold.crowd.logs",
    "read_published": "lexgold.crowd.logs",
    "summarise": "lexgold.crowd.replay",
    "site_gain": "lexgold.crowd.allocation",
}
__all__ = sorted(_API)


def __getattr__(name: str):
    if name in _API:
        return getattr(import_module(_API[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
