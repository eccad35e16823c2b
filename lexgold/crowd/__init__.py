"""The rater model behind every simulation: fitted to real rating logs (issue 33).

:mod:`lexgold.crowd.model` holds the model, its fit and its draws; ``data/default.json`` is the
crowd fitted to the shipped logs (SimVerb-3500's raw ratings and WordSim-353 set 1), built by
``scripts/fit_default_crowd.py``.
"""
