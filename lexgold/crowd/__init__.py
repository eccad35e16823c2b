"""Crowds, real and simulated: the rater model behind every simulation, fitted to real rating
logs; simulated raters answering a study; and the replay of real logs that measures what
allocation and stopping save.

:mod:`lexgold.crowd.model` holds the model, its fit and its draws; ``data/default.json`` is the
crowd fitted to the shipped logs (SimVerb-3500's raw ratings and WordSim-353 set 1), built by
``scripts/fit_default_crowd.py``; ``data/<log>.json`` is the crowd fitted to each shipped log
alone (:mod:`lexgold.crowd.crowds`, the crowds by name, built by
``scripts/fit_shipped_crowds.py``); :mod:`lexgold.crowd.logs` reads rating logs.
:mod:`lexgold.crowd.simulate` and :mod:`lexgold.crowd.bws_simulate` are the simulated crowd (a
study laid out and answered, sliders and Best-Worst). :mod:`lexgold.crowd.replay` replays a
real log; :mod:`lexgold.crowd.allocation_criteria` holds the adaptive criteria the site uses.
:mod:`lexgold.crowd.cli` is ``lexgold crowd fit``, ``lexgold replay`` and ``lexgold simulate``.

The package sits above :mod:`lexgold.process` (README, "Layers"): the simulated crowd reports
which raters the exclusion rules of :mod:`lexgold.process.exclusions` catch.
"""

from lexgold.lazy import lazy_api

#: the package's Python API: each name and the submodule that defines it (imported on first use,
#: so importing the package costs nothing)
_API = {
    "CrowdModel": "model",
    "default_model": "model",
    "read_model": "model",
    "fit": "model",
    "simulate_log": "model",
    "simulate_like": "model",
    "shipped_log": "logs",
    "read_published": "logs",
    "simulate_ratings": "simulate",
    "summarise": "replay",
    "site_gain": "allocation_criteria",
}
__all__ = sorted(_API)

__getattr__, __dir__ = lazy_api(__name__, _API, globals())
