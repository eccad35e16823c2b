"""Reader for the USF free association norms, Appendix A, as distributed.

Nelson, McEvoy & Schreiber (2004). Appendix A holds one row per cue-target pair in eight
files (A-B.txt ... T-Z.txt). Each file is Latin-1 text wrapped in ``<HTML><BODY><PRE>``; fields
are separated by ``", "``; the missing value is the byte 0xA5; D-F.txt spells the TFR column
``TRF``; and one cue is the word ``CUE``, so the header row is recognised by its whole line.

Columns of the returned frame (original name in brackets):

======================  ======  ==========================================================
cue, target             str     [CUE], [TARGET], upper case as in the norms
normed                  bool    [NORMED?] target was also normed as a cue
n_group                 Int64   [#G] participants serving in the group norming the cue
n_participants          Int64   [#P] participants producing the target
fsg, bsg                float   [FSG], [BSG] forward / backward strength
msg, osg                float   [MSG], [OSG] mediated / overlapping strength
n_mediators             Int64   [#M] number of mediators
mmias                   Int64   [MMIAS] mediators missing in action
n_overlap               Int64   [#O] number of overlapping associates
omias                   float   [OMIAS] overlaps missing in action
qss, tss                Int64   [QSS], [TSS] cue / target set size
qfr, tfr                Int64   [QFR], [TFR] Kucera-Francis frequency ([TRF] in D-F.txt)
qcon, tcon              float   [QCON], [TCON] concreteness, 1-7
qh, th                  str     [QH], [TH] homograph code
qps, tps                str     [QPS], [TPS] part of speech (N, V, AJ, AD, P, PP, I, C, ...)
qmc, tmc                float   [QMC], [TMC] mean connectivity among associates
qpr, tpr                float   [QPR], [TPR] probability of a resonant connection
qrsg, trsg              float   [QRSG], [TRSG] resonant strength
quc, tuc                Int64   [QUC], [TUC] 1 if the word is in the USF set
======================  ======  ==========================================================

Missing values (0xA5 or an empty field) are NaN / <NA>.
"""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd

from lexgold.errors import InputError
from lexgold.resources._files import resource_files

#: original header -> lexgold column, in file order
USF_COLUMNS: dict[str, str] = {
    "CUE": "cue", "TARGET": "target", "NORMED?": "normed", "#G": "n_group",
    "#P": "n_participants", "FSG": "fsg", "BSG": "bsg", "MSG": "msg", "OSG": "osg",
    "#M": "n_mediators", "MMIAS": "mmias", "#O": "n_overlap", "OMIAS": "omias",
    "QSS": "qss", "QFR": "qfr", "QCON": "qcon", "QH": "qh", "QPS": "qps", "QMC": "qmc",
    "QPR": "qpr", "QRSG": "qrsg", "QUC": "quc", "TSS": "tss", "TFR": "tfr", "TCON": "tcon",
    "TH": "th", "TPS": "tps", "TMC": "tmc", "TPR": "tpr", "TRSG": "trsg", "TUC": "tuc",
}
_HEADERS = {
    ", ".join(USF_COLUMNS),
    ", ".join(USF_COLUMNS).replace("TFR", "TRF"),
}
_INT = ["n_group", "n_participants", "n_mediators", "mmias", "n_overlap", "qss", "qfr",
        "quc", "tss", "tfr", "tuc"]
_FLOAT = ["fsg", "bsg", "msg", "osg", "omias", "qcon", "qmc", "qpr", "qrsg", "tcon", "tmc",
          "tpr", "trsg"]
_STR = ["cue", "target", "qh", "qps", "th", "tps"]
_MARKUP = {"<html>", "</html>", "<body>", "</body>", "<pre>", "</pre>"}
MISSING = "\xa5"


def _data_lines(text: str, source: str) -> list[str]:
    """The data rows of one Appendix A file, checked for shape."""
    lines = text.splitlines()
    header_at = next((i for i, line in enumerate(lines) if line.strip() in _HEADERS), None)
    if header_at is None:
        raise InputError("no USF Appendix A header line (CUE, TARGET, NORMED?, ...)", path=source)
    rows = []
    for number, line in enumerate(lines[header_at + 1:], start=header_at + 2):
        stripped = line.strip()
        if not stripped or stripped.lower() in _MARKUP:
            continue
        n_fields = line.count(",") + 1
        if n_fields != len(USF_COLUMNS):
            raise InputError(f"expected {len(USF_COLUMNS)} comma-separated fields, found {n_fields}",
                             path=source, line=number)
        rows.append(line)
    return rows


def parse_usf(text: str, source: str = "<text>", columns: list[str] | None = None) -> pd.DataFrame:
    """Parse the decoded text of one Appendix A file into a typed frame (columns as above;
    only ``columns``, in file order, when given: the others are neither typed nor checked)."""
    rows = _data_lines(text, source)
    frame = pd.read_csv(
        io.StringIO("\n".join(rows)), sep=",", header=None, names=list(USF_COLUMNS.values()),
        usecols=_columns(columns), skipinitialspace=True, dtype=str, keep_default_na=False,
        na_filter=False, engine="c",
    )
    return _typed(frame, source)


def _columns(columns: list[str] | None) -> list[str]:
    """``columns`` in file order (all when None); an unknown name is an error."""
    if columns is None:
        return list(USF_COLUMNS.values())
    unknown = sorted(set(columns) - set(USF_COLUMNS.values()))
    if unknown:
        raise InputError(f"not a USF column: {', '.join(unknown)}", field="columns")
    return [c for c in USF_COLUMNS.values() if c in set(columns)]


def _typed(frame: pd.DataFrame, source: str) -> pd.DataFrame:
    frame = frame.replace({MISSING: None, "": None})
    out = pd.DataFrame(index=frame.index)
    for column in frame.columns:
        values = frame[column]
        if column == "normed":
            bad = ~values.isin(["YES", "NO"])
            if bad.any():
                _fail(bad, values, source, column, "expected YES or NO")
            out[column] = values.eq("YES")
        elif column in _STR:
            out[column] = values.astype("string")
        else:
            numbers = pd.to_numeric(values, errors="coerce")
            bad = numbers.isna() & values.notna()
            if bad.any():
                _fail(bad, values, source, column, "not a number")
            out[column] = numbers.astype("Int64" if column in _INT else "float64")
    return out


def _fail(bad: pd.Series, values: pd.Series, source: str, column: str, what: str) -> None:
    row = int(bad.to_numpy().nonzero()[0][0])
    raise InputError(f"{what}: {values.iloc[row]!r} (data row {row + 1})", path=source, field=column)


def read_usf(directory: str | Path | None = None, columns: list[str] | None = None
             ) -> pd.DataFrame:
    """Read all eight Appendix A files into one frame (72,171 rows, 5,018 cues as distributed).

    Parameters
    ----------
    directory : path, optional
        A folder holding ``A-B.txt`` ... ``T-Z.txt`` as distributed (plain or ``.gz``).
        Default: the copies vendored in the package.
    columns : list of str, optional
        Only these columns (in file order), e.g. ``["cue", "target", "fsg"]``: a third of the
        time of all 31 (``lexgold process``). The others are not checked.

    Returns
    -------
    pandas.DataFrame
        One row per cue-target pair; columns documented in this module's docstring.
    """
    frames = []
    for file in resource_files("usf_appendix_a", directory):
        frames.append(parse_usf(file.read_bytes().decode("latin-1"), file.location, columns))
    return pd.concat(frames, ignore_index=True)


def usf_concreteness(usf: pd.DataFrame) -> pd.Series:
    """Word -> USF concreteness (QCON for cues, TCON for targets; 1-7, 7 most concrete).

    The one normalisation of USF's words used by the builders and the release: stripped and
    lower-cased (USF spells words in capitals; the published data sets use lower case). Rows
    with no word or no rating are left out; a word rated both as a cue and as a target takes
    its first cue rating (QCON and TCON of one word are the same norm in USF).

    Parameters
    ----------
    usf : pandas.DataFrame
        :func:`read_usf`'s frame, or any frame with ``cue, target, qcon, tcon``.

    Returns
    -------
    pandas.Series
        Float ratings indexed by the lower-case word (string dtype), cue words first.

    References
    ----------
    Nelson, McEvoy & Schreiber (2004), Appendix A (QCON, TCON); Hill et al. (2015), SimLex-999,
    section 2.3; Vulic et al. (2017), HyperLex, section 5.

    Examples
    --------
    >>> frame = pd.DataFrame({"cue": ["DOG ", "IDEA"], "target": ["CAT", "dog"],
    ...                       "qcon": [6.5, 2.0], "tcon": [6.0, 1.0]})
    >>> usf_concreteness(frame).to_dict()
    {'dog': 6.5, 'idea': 2.0, 'cat': 6.0}
    """
    def lower(words: pd.Series) -> pd.Series:
        return words.astype("string").str.strip().str.lower()

    both = pd.concat([
        pd.DataFrame({"word": lower(usf["cue"]), "conc": usf["qcon"]}),
        pd.DataFrame({"word": lower(usf["target"]), "conc": usf["tcon"]}),
    ]).dropna()
    return both.drop_duplicates("word").set_index("word")["conc"].astype(float)
