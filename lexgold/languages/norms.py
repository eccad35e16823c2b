"""Association and concreteness norms of any language, from the files researchers have.

Association norms: any table with one row per (cue, response) and a count of participants who
gave that response, as the Small World of Words (De Deyne et al. 2019) distributes them, e.g.
``strength.SWOW-EN.R1.csv`` (tab-separated)::

    cue     response  R1  N    R1.Strength
    a       the       13  98   0.1327

:func:`read_association_norms` turns it into the columns of lexgold's USF frame
(:func:`lexgold.resources.read_usf`) that the builders use, so a SimLex- or HyperLex-style pool
can start from another language's norms:

==============  ==========================================================================
cue, target     the cue and the response, as written in the file
n_participants  participants who gave the response (USF's #P)
n_group         participants who saw the cue: the ``total`` column when the file has one
                (SWOW's ``N``), else the sum of the cue's counts (USF's #G)
fsg             forward strength, n_participants / n_group (USF's FSG)
bsg             backward strength: the fsg of (target, cue), 0 when the target was normed
                as a cue and did not give it, NaN when the target was never a cue (USF's BSG)
normed          the target was itself normed as a cue (USF's NORMED?)
==============  ==========================================================================

Concreteness norms: any table with a word column and a mean-rating column
(:func:`read_concreteness`), giving ``word, conc_m`` on the file's own scale; the scale is
stated by the user (Brysbaert et al. 2014: 1-5; USF: 1-7), because the SimLex classes and the
HyperLex groups are defined on a stated scale (SimLex-999 section 3.1, HyperLex section 5).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from lexgold.errors import InputError
from lexgold.tables import read_text_table

#: the Small World of Words strength file, the documented example
SWOW_COLUMNS = {"cue": "cue", "response": "response", "count": "R1", "total": "N"}


def _read(path, sep):
    path = Path(path)
    if not path.is_file():
        raise InputError("file not found", path=path)
    if sep is None:
        with open(path, encoding="utf-8-sig", errors="replace") as handle:
            header = handle.readline()
        sep = "\t" if "\t" in header else ";" if header.count(";") > header.count(",") else ","
    return read_text_table(path, sep=sep)


def _column(frame, name, path, role):
    if name not in frame.columns:
        raise InputError(f"no {role} column {name!r}; columns: {', '.join(frame.columns)}",
                         path=path, field=name)
    return frame[name]


def _numbers(values: pd.Series, path, name) -> pd.Series:
    numbers = pd.to_numeric(values.str.strip(), errors="coerce")
    bad = numbers.isna()
    if bad.any():
        row = int(bad.to_numpy().argmax())
        raise InputError(f"not a number: {values.iloc[row]!r}", path=path, line=row + 2,
                         field=name)
    return numbers


def association_strengths(table: pd.DataFrame) -> pd.DataFrame:
    """USF-style strengths from ``cue, target, n_participants`` (and optional ``n_group``).

    Pure function behind :func:`read_association_norms` (columns as in the module docstring).
    Repeated (cue, target) rows are summed.

    Examples
    --------
    >>> t = pd.DataFrame({"cue": ["dog", "dog", "cat"], "target": ["cat", "bone", "dog"],
    ...                   "n_participants": [6, 2, 5], "n_group": [10, 10, 10]})
    >>> association_strengths(t)[["cue", "target", "fsg", "bsg", "normed"]].values.tolist()
    [['cat', 'dog', 0.5, 0.6, True], ['dog', 'bone', 0.2, nan, False], ['dog', 'cat', 0.6, 0.5, True]]
    """
    group_given = "n_group" in table.columns
    keys = ["cue", "target"]
    summed = table.groupby(keys, sort=True, as_index=False).agg(
        n_participants=("n_participants", "sum"),
        **({"n_group": ("n_group", "max")} if group_given else {}))
    if not group_given:
        summed["n_group"] = summed.groupby("cue")["n_participants"].transform("sum")
    summed["fsg"] = summed["n_participants"] / summed["n_group"]
    cues = set(summed["cue"])
    reverse = summed.set_index(["cue", "target"])["fsg"]
    reverse.index = reverse.index.swaplevel()
    found = reverse.reindex(pd.MultiIndex.from_frame(summed[keys])).to_numpy()
    summed["normed"] = summed["target"].isin(cues)
    summed["bsg"] = np.where(np.isnan(found) & summed["normed"], 0.0, found)
    return summed[["cue", "target", "n_participants", "n_group", "fsg", "bsg", "normed"]]


def read_association_norms(path: str | Path, *, cue: str = "cue", response: str = "response",
                           count: str = "R1", total: str | None = "N", sep: str | None = None,
                           lowercase: bool = False) -> pd.DataFrame:
    """Association norms from a cue-response-count table (SWOW's column names by default).

    Parameters
    ----------
    path : path
        CSV or TSV (the separator is guessed from the header unless ``sep`` is given).
    cue, response, count : str
        Column names of the cue, the response and the number of participants giving it.
    total : str or None
        Column of the number of participants who saw the cue (SWOW ``N``); ``None``: the sum
        of the cue's counts. A named column that is missing is an error.
    lowercase : bool
        Lower-case cues and responses (SWOW is lower case; USF upper case).

    Returns
    -------
    DataFrame
        ``cue, target, n_participants, n_group, fsg, bsg, normed`` (module docstring).
    """
    frame = _read(path, sep)
    words = pd.DataFrame({"cue": _column(frame, cue, path, "cue").str.strip(),
                          "target": _column(frame, response, path, "response").str.strip()})
    blank = (words["cue"] == "") | (words["target"] == "")
    if blank.any():
        row = int(blank.to_numpy().argmax())
        raise InputError("empty cue or response", path=path, line=row + 2,
                         field=cue if words["cue"].iloc[row] == "" else response)
    if lowercase:
        words = words.apply(lambda column: column.str.lower())
    words["n_participants"] = _numbers(_column(frame, count, path, "count"), path, count)
    if total is not None:
        words["n_group"] = _numbers(_column(frame, total, path, "total"), path, total)
    return association_strengths(words)


def read_concreteness(path: str | Path, *, word: str = "Word", rating: str = "Conc.M",
                      scale: tuple[float, float] = (1.0, 5.0), sep: str | None = None,
                      lowercase: bool = True) -> pd.DataFrame:
    """Concreteness norms from any word-rating table (Brysbaert et al.'s names by default).

    Parameters
    ----------
    path : path
        CSV or TSV.
    word, rating : str
        Column names of the word and its mean concreteness rating.
    scale : (low, high)
        The rating scale; a rating outside it is an error naming the line.
    lowercase : bool
        Lower-case the words (lexgold compares words in lower case).

    Returns
    -------
    DataFrame
        ``word, conc_m``; a word rated twice keeps its first rating.
    """
    frame = _read(path, sep)
    words = _column(frame, word, path, "word").str.strip()
    values = _numbers(_column(frame, rating, path, "rating"), path, rating)
    outside = (values < scale[0]) | (values > scale[1])
    if outside.any():
        row = int(outside.to_numpy().argmax())
        raise InputError(f"rating {values.iloc[row]:g} outside the scale {scale[0]:g}-{scale[1]:g}",
                         path=path, line=row + 2, field=rating)
    out = pd.DataFrame({"word": words.str.lower() if lowercase else words, "conc_m": values})
    out = out[out["word"] != ""]
    return out.drop_duplicates("word").reset_index(drop=True)
