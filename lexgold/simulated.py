"""Simulated data told apart from people's: the one rule every reader of ratings and gold files
applies (docs/contract.md, "Simulated data").

Ratings are simulated when their ``platform`` is :data:`SIMULATED` (``lexgold simulate``, a
rehearsal's raters: :mod:`lexgold.crowd.simulate`); a gold file built from them is marked by a
``simulated`` column (``gold.csv``, ``SimLex-999.txt``, ``TR9856.txt``), or, where the layout
has no room for a column (``hyperlex-all.txt``, whose rows end in the ratings), by a first line
``# simulated ...``. Every command that reads ratings or a gold file prints :func:`note` when
the rule holds; the words a release writes are :mod:`lexgold.process.simulated_label`'s.

>>> import pandas as pd
>>> simulated_rows(pd.DataFrame({"platform": ["prolific", " Simulated"]})).tolist()
[False, True]
>>> gold_header_marked(["word1", "word2", "score", "simulated"]), gold_header_marked(["# note"])
(True, False)
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from lexgold.compression import open_input
from lexgold.errors import InputError

if TYPE_CHECKING:            # pandas is imported where rows are read, not by the command line
    import pandas as pd

#: the ``platform`` of a simulated rating, the column that marks a gold file built from them,
#: and the word a header comment opens with
SIMULATED = "simulated"
#: the first line of a gold file whose layout takes no extra column (HyperLex)
COMMENT = "# simulated ratings (lexgold), not people's: see README.md beside this file"


def simulated_rows(frame: pd.DataFrame) -> pd.Series:
    """Which rows are simulated: ``platform`` is ``simulated`` (case and spaces ignored), or a
    ``simulated`` column holds true (``True``, ``true``, 1)."""
    import pandas as pd

    mark = pd.Series(False, index=frame.index)
    if "platform" in frame.columns:
        mark |= frame["platform"].astype(str).str.strip().str.casefold() == SIMULATED
    if SIMULATED in frame.columns:
        mark |= frame[SIMULATED].astype(str).str.strip().str.casefold().isin(("true", "1"))
    return mark


def gold_header_marked(fields: list[str]) -> bool:
    """A gold file's first line marks it simulated: a header naming a ``simulated`` column, or
    a ``# simulated`` comment (:data:`COMMENT`)."""
    first = " ".join(fields).strip().casefold()
    return (any(field.strip().lstrip("#").strip().casefold() == SIMULATED for field in fields)
            or first.startswith("# " + SIMULATED) or first.startswith("#" + SIMULATED + " "))


def gold_file_simulated(path) -> bool:
    """A gold file marks itself simulated on its first non-blank line
    (:func:`gold_header_marked`: ``gold.csv``, the published layouts, compressed or not). A
    file that cannot be read is not marked: its reader names the problem."""
    if not Path(path).is_file():
        return False
    try:
        with open_input(Path(path)) as handle:
            for line in handle:
                if line.strip():
                    fields = [field for part in line.rstrip("\r\n").split("\t")
                              for field in part.split(",")]
                    return gold_header_marked(fields if len(fields) > 1 else line.split())
    except InputError:
        return False
    return False


def note(what: str) -> str:
    """The one line a command prints (stderr) when it reads simulated data."""
    return (f"Note: {what} simulated (platform or column 'simulated'): drawn from lexgold's "
            "rater model, not given by people; what follows describes the simulation")
