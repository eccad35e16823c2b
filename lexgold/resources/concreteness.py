"""Reader for the Brysbaert, Warriner & Kuperman (2014) concreteness ratings, as distributed.

A tab-separated file with CRLF line ends, no final newline, and ``#N/A`` in Dom_Pos.
39,954 rows: 37,058 words and 2,896 two-word expressions, rated 1 (abstract) to 5 (concrete).

Columns of the returned frame (original name in brackets):

=================  =======  ==============================================
word               str      [Word]
bigram             bool     [Bigram] two-word expression
conc_m             float    [Conc.M] mean concreteness, 1-5
conc_sd            float    [Conc.SD]
unknown            Int64    [Unknown] raters who did not know the word
total              Int64    [Total] raters
percent_known      float    [Percent_known], 0-1
subtlex            Int64    [SUBTLEX] SUBTLEX-US frequency
dom_pos            str      [Dom_Pos] dominant POS; <NA> for #N/A
=================  =======  ==============================================
"""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd

from lexgold.compression import read_input_bytes
from lexgold.errors import InputError
from lexgold.resources._files import resource_files

BRYSBAERT_COLUMNS = {
    "Word": "word", "Bigram": "bigram", "Conc.M": "conc_m", "Conc.SD": "conc_sd",
    "Unknown": "unknown", "Total": "total", "Percent_known": "percent_known",
    "SUBTLEX": "subtlex", "Dom_Pos": "dom_pos",
}


def parse_brysbaert(text: str, source: str = "<text>") -> pd.DataFrame:
    """Parse the decoded text of the concreteness file into a typed frame (columns as above)."""
    lines = text.splitlines()
    header = lines[0].split("\t") if lines else []
    if header != list(BRYSBAERT_COLUMNS):
        raise InputError(f"header {header!r} is not the Brysbaert et al. 2014 header", path=source, line=1)
    for number, line in enumerate(lines[1:], start=2):
        if line.count("\t") != len(BRYSBAERT_COLUMNS) - 1:
            raise InputError(f"expected {len(BRYSBAERT_COLUMNS)} tab-separated fields, "
                             f"found {line.count(chr(9)) + 1}", path=source, line=number)
    frame = pd.read_csv(io.StringIO("\n".join(lines)), sep="\t", dtype=str,
                        keep_default_na=False, na_values={"Dom_Pos": ["#N/A"]})
    frame = frame.rename(columns=BRYSBAERT_COLUMNS)
    out = pd.DataFrame({"word": frame["word"].astype("string")})
    for column, dtype in [("bigram", "Int64"), ("conc_m", "float64"), ("conc_sd", "float64"),
                          ("unknown", "Int64"), ("total", "Int64"), ("percent_known", "float64"),
                          ("subtlex", "Int64")]:
        numbers = pd.to_numeric(frame[column], errors="coerce")
        if numbers.isna().any():
            row = int(numbers.isna().to_numpy().nonzero()[0][0])
            raise InputError(f"not a number: {frame[column].iloc[row]!r}", path=source,
                             line=row + 2, field=column)
        out[column] = numbers.astype(dtype)
    out["bigram"] = out["bigram"].astype(bool)
    out["dom_pos"] = frame["dom_pos"].astype("string")
    return out


def read_brysbaert(path: str | Path | None = None) -> pd.DataFrame:
    """Read the concreteness ratings (39,954 rows as distributed).

    Parameters
    ----------
    path : path, optional
        The file ``Concreteness_ratings_Brysbaert_et_al_BRM.txt`` (or a folder holding it,
        plain or ``.gz``). Default: the copy vendored in the package.
    """
    if path is not None and Path(path).is_file():
        data = read_input_bytes(path)
        source = str(path)
    else:
        (file,) = resource_files("brysbaert_concreteness", path)
        data, source = file.read_bytes(), file.location
    return parse_brysbaert(data.decode("utf-8"), source)
