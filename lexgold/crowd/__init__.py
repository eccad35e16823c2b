"""Real crowds (issue 33): the rater model behind every simulation, fitted to real rating logs,
and the replay of real logs that measures what allocation and stopping save.

:mod:`lexgold.crowd.model` holds the model, its fit and its draws; ``data/default.json`` is the
crowd fitted to the shipped logs (SimVerb-3500's raw ratings and WordSim-353 set 1), built by
``scripts/fit_default_crowd.py``. :mod:`lexgold.crowd.replay` replays a real log;
:mod:`lexgold.crowd.allocation` holds the adaptive criteria the site uses.
"""
