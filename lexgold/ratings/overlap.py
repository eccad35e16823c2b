"""Raters who should rate the same pairs but share few of them, and a map between spellings.

The raters of one tranche rate the same pairs (a rater who quits rates fewer of them, but no
others). When two files of one tranche list the same items in different spellings (MEN's two
agreement files: one rater's file in MEN's natural word forms, the other's in its lemma forms),
a pair spelled two ways becomes two pairs rated once each: IAA is computed on the pairs that
happen to be spelled alike, and ``lexgold process`` releases the others twice. Nothing in the
figures shows it, so ``lexgold ratings import``, ``lexgold agree`` and ``lexgold process`` say
it (:func:`overlap_warnings`), and ``lexgold ratings import --map FILE`` maps one spelling onto
the other (:func:`read_word_map`, :func:`map_words`) before anything is written.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pandas as pd

from lexgold.compression import read_input_text
from lexgold.errors import InputError
from lexgold.ratings import ANONYMOUS
from lexgold.tables import normalise_spaces

#: a rater sharing less than this share of their pairs with the tranche's largest rater is odd
MIN_SHARED = 0.9


def overlap_warnings(frame: pd.DataFrame, min_shared: float = MIN_SHARED) -> list[str]:
    """One message per tranche whose raters share too few pairs.

    In each tranche with two or more raters (anonymous ratings are skipped), every rater's
    pairs are compared with those of the rater who rated most: a rater sharing less than
    ``min_shared`` of their own pairs with them rated other items, or the same items spelled
    otherwise.

    Parameters
    ----------
    frame : pandas.DataFrame
        Long-format ratings (``rater_id, tranche, word1, word2``; checkpoint rows ignored).
    min_shared : float
        The share (0-1) below which a tranche is reported.

    Returns
    -------
    list of str
        Empty when every tranche's raters rate the same pairs.

    Examples
    --------
    >>> frame = pd.DataFrame({"rater_id": ["a"] * 4 + ["b"] * 4, "tranche": "men",
    ...     "word1": ["sun", "car", "dog", "cat"] * 2,
    ...     "word2": ["sunlight", "auto", "puppy", "kitten", "sunlight", "automobile",
    ...               "puppies", "kitten"]})
    >>> overlap_warnings(frame)[0][:73]
    "tranche men: rater 'b' shares 2 of its 4 pairs (50.0%) with rater 'a' (4 "
    """
    rated = frame if "kind" not in frame else frame[frame["kind"] != "checkpoint"]
    rater, names = _codes(rated["rater_id"])                # integer codes: fast on studies
    named = ~np.array([str(n).startswith(ANONYMOUS) for n in names], dtype=bool)[rater] \
        if len(names) else np.zeros(0, dtype=bool)
    tranche, tranches = _codes(rated["tranche"])
    word1 = _codes(rated["word1"])[0]
    word2 = _codes(rated["word2"])[0]
    pair = word1 * (word2.max(initial=0) + 1) + word2
    items = _distinct(tranche[named], rater[named], pair[named])
    sizes = items.groupby(["t", "r"], sort=False).size().rename("n").reset_index()
    sizes = sizes[sizes.groupby("t")["r"].transform("size") >= 2]
    if sizes.empty:
        return []
    sizes["name"] = names.to_numpy()[sizes["r"]].astype(str)
    largest = (sizes.sort_values(["t", "n", "name"], ascending=[True, False, True],
                                 kind="stable").drop_duplicates("t").set_index("t"))
    span = int(items["p"].max()) + 1
    key = items["t"].to_numpy(np.int64) * span + items["p"].to_numpy(np.int64)
    is_largest = items["r"].to_numpy() == largest["r"].reindex(items["t"]).to_numpy()
    items["shared"] = np.isin(key, key[is_largest])
    common = items.groupby(["t", "r"], sort=False)["shared"].sum()
    sizes = sizes.set_index(["t", "r"])
    sizes["shared"] = common.reindex(sizes.index).to_numpy().astype(int)
    sizes["share"] = sizes["shared"] / sizes["n"]
    union = items.drop_duplicates(["t", "p"]).groupby("t").size()
    sizes = sizes.reset_index()
    sizes["tranche"] = tranches.to_numpy()[sizes["t"]]
    sizes = sizes.sort_values(["tranche", "name"], kind="stable")
    messages = []
    for t, group in sizes.groupby("t", sort=False):
        top = largest.loc[t]
        others = group[group["r"] != top["r"]]
        if others["share"].min() >= min_shared:
            continue
        row = others.sort_values("share", kind="stable").iloc[0]
        messages.append(
            f"tranche {row['tranche']}: rater {row['name']!r} shares {int(row['shared'])} of its "
            f"{int(row['n'])} pairs ({row['share']:.1%}) with rater {top['name']!r} "
            f"({int(top['n'])} pairs); the tranche's {len(group)} raters list {union[t]} "
            f"different pairs. Raters of one tranche should rate the same pairs: are they "
            f"spelled differently in their files (natural vs lemma forms)? Map one spelling onto "
            f"the other with `lexgold ratings import --map FILE`")
    return messages


def _codes(column: pd.Series) -> tuple[np.ndarray, pd.Index]:
    """Integer codes of ``column`` and the values they stand for: a categorical's own codes,
    otherwise :func:`pandas.factorize`'s."""
    if isinstance(column.dtype, pd.CategoricalDtype) and not column.isna().any():
        return column.cat.codes.to_numpy().astype(np.int64), column.cat.categories
    codes, uniques = pd.factorize(column)
    return codes.astype(np.int64), pd.Index(uniques)


def _distinct(tranche: np.ndarray, rater: np.ndarray, pair: np.ndarray) -> pd.DataFrame:
    """``t, r, p``: each (tranche, rater, pair) once, in order of first appearance."""
    spans = [int(a.max(initial=0)) + 1 for a in (rater, pair)]
    if float(tranche.max(initial=0) + 1) * spans[0] * spans[1] >= 2.0 ** 62:
        return pd.DataFrame({"t": tranche, "r": rater, "p": pair}).drop_duplicates()
    key = pd.unique((tranche * spans[0] + rater) * spans[1] + pair)
    rest, p = np.divmod(key, spans[1])
    t, r = np.divmod(rest, spans[0])
    return pd.DataFrame({"t": t, "r": r, "p": p})


def read_word_map(path: str | Path) -> dict[str, str]:
    """A two-column mapping file, ``from`` -> ``to``, one word per line.

    TAB-, comma- or blank-separated (the first of TAB and comma on the first line decides;
    else blanks), UTF-8; an optional header ``from, to``; ``#`` comment lines and blank lines
    skipped. A word mapped twice to different words is an error naming the line.
    """
    path = Path(path)
    if not path.is_file():
        raise InputError("mapping file not found", path=path, field="--map")
    text = read_input_text(path)          # within lexgold.compression's limits
    lines = [(n, line.rstrip("\r")) for n, line in enumerate(text.split("\n"), start=1)
             if line.strip() and not line.lstrip().startswith("#")]
    if not lines:
        raise InputError("empty mapping file: expected lines 'from TAB to'", path=path)
    first = lines[0][1]
    delimiter = "\t" if "\t" in first else "," if "," in first else None
    mapping: dict[str, tuple[str, int]] = {}
    for number, line in lines:
        fields = (next(csv.reader([line], delimiter=delimiter)) if delimiter
                  else line.split())
        fields = [normalise_spaces(f) for f in fields]
        if len(fields) != 2 or not all(fields):
            raise InputError(f"expected two words (from, to), found {len(fields)} fields",
                             path=path, line=number)
        source, target = fields
        if number == lines[0][0] and [f.lower() for f in fields] == ["from", "to"]:
            continue
        if source in mapping and mapping[source][0] != target:
            raise InputError(f"{source!r} is mapped to {mapping[source][0]!r} on line "
                             f"{mapping[source][1]} and to {target!r} here", path=path,
                             line=number)
        mapping[source] = (target, number)
    return {source: target for source, (target, _) in mapping.items()}


def map_words(frame: pd.DataFrame, mapping: dict[str, str]) -> tuple[pd.DataFrame, int, int]:
    """``frame`` with its words mapped; the number of words changed and of rows touched."""
    out = frame.copy()
    changed = pd.Series(False, index=frame.index)
    words = 0
    for column in ("word1", "word2"):
        mapped = out[column].map(lambda w: mapping.get(w, w))
        differs = mapped != out[column]
        words += int(differs.sum())
        changed |= differs
        out[column] = mapped
    return out, words, int(changed.sum())
