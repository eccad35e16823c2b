"""The crowds lexgold ships, by name, and the one fit that builds a crowd from a log.

``default`` is the crowd fitted to SimVerb-3500's and WordSim-353's raw ratings together
(``data/default.json``, ``scripts/fit_default_crowd.py``); each shipped real log
(:data:`lexgold.crowd.logs.SHIPPED`: ``simverb``, ``wordsim353``, ``danish``, ``card660``) has
its own crowd, ``data/<name>.json``, fitted to it alone by :func:`fit_crowd` (the fit of
``lexgold crowd fit``) and rebuilt by ``scripts/fit_shipped_crowds.py``. Real crowds differ
(docs/process.md, "The crowd model"), so ``lexgold study rehearse --across-crowds`` rehearses a
study once per crowd of :data:`ACROSS` and reports the range.
"""

from __future__ import annotations

from dataclasses import replace
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

from lexgold.crowd.logs import SHIPPED, log_record

#: the crowds fitted each to one shipped log, by the log's name
SHIPPED_CROWDS = tuple(SHIPPED)
#: the crowds a study is rehearsed with across crowds: the default, then each shipped log's
ACROSS = ("default", *SHIPPED_CROWDS)
#: every name ``--crowd`` takes (besides a crowd JSON's path)
NAMES = ("default", "invented", *SHIPPED_CROWDS)


def crowd_file(name: str) -> Path:
    """The JSON of a shipped crowd (a name of :data:`SHIPPED_CROWDS`)."""
    return Path(str(resources.files("lexgold.crowd") / "data" / f"{name}.json"))


def crowd_source(model):
    """What a ``--crowd`` value reads: a shipped crowd's JSON for its name, else ``model``
    itself (``default``, ``invented``, a path or a model)."""
    if isinstance(model, str) and model in SHIPPED_CROWDS:
        return crowd_file(model)
    return model


def fit_crowd(frame: pd.DataFrame, *, file: str, sha256: str, name: str, scale=None,
              step: float = 1.0, error: str = "t", replicates: int = 20, seed: int = 0,
              source=None, progress=None):
    """The crowd of ``lexgold crowd fit``: the rater model fitted to the log ``frame``
    (:func:`lexgold.crowd.model.fit`), its record of the log (``file``, ``sha256``: what the
    JSON names) with the per-pair SD quantiles of the log against ``replicates`` copies
    simulated from the fit (seed ``seed``).

    Returns
    -------
    tuple
        ``(model, record, real_sds, simulated_sds)``; ``model.fitted_to`` is ``[record]``.
    """
    from lexgold.crowd.model import (QUANTILES, anonymous_ids, code_log, fit, pair_sds,
                                     simulated_pair_sds)

    model = fit(frame, scale=tuple(scale) if scale else None, step=step, error=error,
                source=source, progress=progress)
    anonymous = model.raters is None
    record = log_record(frame, file=file, sha256=sha256, scale=model.scale[:2],
                        anonymous=anonymous)
    if not anonymous and bool(anonymous_ids(frame["rater_id"]).any()):
        record["raters"] = f"{record['raters']} identified, the rest anonymous"
    model = replace(model, fitted_to=[record], name=name)
    simulated = simulated_pair_sds(model, code_log(frame, scale=model.scale[:2],
                                                   step=model.scale[2]),
                                   np.random.default_rng(seed), replicates=replicates)
    real = pair_sds(frame).to_numpy()
    real_q, sim_q = ([float(v) for v in np.quantile(sds, QUANTILES)]
                     for sds in (real, simulated))
    record["sd_quantiles"] = {"quantiles": [0.1, 0.5, 0.9], "real": real_q,
                              "simulated": sim_q, "replicates": replicates, "seed": seed}
    return model, record, real, simulated
