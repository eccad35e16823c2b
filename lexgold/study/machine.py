"""A study's machine rater (issue 45, ``machine-allocate``): ``lexgold study create --machine
FILE`` stores the machine's number for each of the study's pairs (``Pair.machine_score``) and
its provenance (the ``Machine`` row), and the study's allocator spends it
(:mod:`lexgold.live.allocator`): top-up raters go to the pairs whose human means the machine
says more ratings would improve most, and a pair it says they would not improve gets no more.
Every released score stays a human mean; the machine is named in the export's description
(``RATINGS.study.json``'s ``machine``, :func:`lexgold.study.export_sql.machine_record`) so that the release can name it.

The machine's file is any ratings file :func:`lexgold.machine.ratings.read_machine` reads, on
any scale; its pairs are matched to the study's in either word order
(:func:`lexgold.machine.prior.machine_for`). A file that covers none of the study's pairs is
refused; one that covers some is used for those (the others are allocated as without a
machine, by their noise alone; :func:`lexgold.machine.allocate.machine_gain`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from sqlalchemy import select
from sqlalchemy.orm import Session

from lexgold.errors import InputError
from lexgold.machine.prior import machine_for
from lexgold.machine.ratings import read_machine
from lexgold.study import models as m

#: the one mode a live study spends a machine in: it allocates, every released score is a
#: human mean (``machine-prior`` is a release's choice, ``lexgold process``)
MODE = "allocate"
#: the longest model name the ``machine`` table holds
MODEL_LENGTH = 300


def read_study_machine(path: str | Path, pairs: pd.DataFrame,
                       column: str | None = None) -> tuple[np.ndarray, pd.DataFrame]:
    """The machine's number for each row of the study's pair frame ``pairs`` (``word1,
    word2``; NaN where the file has none) and the file's scores as read.

    Raises
    ------
    InputError
        The file is not a machine's ratings file (:func:`read_machine`'s errors, naming file,
        line and field), covers none of the study's pairs, or names a model longer than
        :data:`MODEL_LENGTH` characters.

    >>> import tempfile, os
    >>> folder = tempfile.mkdtemp()
    >>> path = os.path.join(folder, "m.csv")
    >>> _ = open(path, "w").write("word1,word2,score\\ndog,cat,7\\nsun,moon,2\\n")
    >>> pairs = pd.DataFrame({"word1": ["cat", "old", "sun"], "word2": ["dog", "new", "moon"]})
    >>> read_study_machine(path, pairs)[0].tolist()
    [7.0, nan, 2.0]
    """
    scores = read_machine(path, column=column, option="--machine-column")
    found = machine_for(pairs, scores)
    covered = int(np.isfinite(found).sum())
    if covered == 0:
        example = ", ".join(f"({w1}, {w2})" for w1, w2 in
                            zip(scores["word1"].head(2), scores["word2"].head(2)))
        raise InputError(f"covers 0 of the study's {len(pairs):,} pairs (its {len(scores):,} "
                         f"pairs, e.g. {example or 'none'}, are not the study's): a machine "
                         "must rate some of the study's pairs", path=path, field="word1, word2")
    model = scores.attrs["provenance"].get("model")
    if model is not None and len(str(model)) > MODEL_LENGTH:
        raise InputError(f"the model's name is longer than {MODEL_LENGTH} characters",
                         path=f"{path}.json", field="model")
    return found, scores


def store_machine(session: Session, pair_rows: list, found: np.ndarray,
                  scores: pd.DataFrame) -> m.Machine:
    """Put the machine's numbers on the stored pairs (``pair_rows`` in the order of ``found``)
    and its ``Machine`` row (mode :data:`MODE`); flushed, not committed."""
    for row, value in zip(pair_rows, found):
        row.machine_score = float(value) if np.isfinite(value) else None
    provenance = scores.attrs["provenance"]
    model = provenance.get("model")
    machine = m.Machine(mode=MODE, model=None if model is None else str(model),
                        column=str(scores.attrs["column"]), provenance=provenance,
                        pairs_covered=int(np.isfinite(found).sum()))
    session.add(machine)
    session.flush()
    return machine


def study_machine(session: Session) -> m.Machine | None:
    """The study's ``Machine`` row, or None (a study without a machine, or made before
    lexgold had them)."""
    return session.scalars(select(m.Machine).order_by(m.Machine.id)).first()


def machine_scores(session: Session) -> pd.Series | None:
    """The machine's number per pair id (NaN: not covered), or None when the study has no
    machine."""
    if study_machine(session) is None:
        return None
    rows = session.execute(select(m.Pair.id, m.Pair.machine_score)).all()
    return pd.Series([np.nan if x is None else float(x) for _, x in rows],
                     index=[i for i, _ in rows], dtype=float)
