"""Translation workflow: translator sheets, agreement, adjudication, concept-aligned pairs.

The published multilingual versions of SimLex-999 and HyperLex were made by translating the
English pairs (Leviant & Reichart 2015, multilingual SimLex/WordSim; Vulic et al. 2020,
Multi-SimLex, section 4; Vulic et al. 2019, cross-lingual HyperLex) with two independent
translators per language and an adjudicator for the pairs where they differ. This module
implements that step as pure functions over pandas frames; file I/O is in :mod:`.sheets`.

Steps
-----
1. :func:`assign_pair_ids` gives every English pair a stable id (shared by all languages).
2. :func:`translator_sheet` is the sheet one translator fills in (one per translator).
3. :func:`compare_translations` reads the filled sheets of one language back: per-word and
   per-pair agreement, flags, and which pairs go to adjudication.
4. :func:`apply_adjudication` merges the agreed pairs and the adjudicated ones into the
   concept-aligned pair set. Nothing is dropped without a row in the ``dropped`` frame.

Flags (never a silent drop): ``multiword1``/``multiword2`` a word translated by a multi-word
expression; ``collapsed`` both words of a pair translated into the same word; ``pos_changed``
the translation has another part of speech; ``untranslatable`` a translator wrote ``NONE``;
``duplicate_of`` two English pairs became the same target pair.
"""

from __future__ import annotations

import hashlib
import unicodedata

import pandas as pd

from lexgold.errors import InputError
from lexgold.languages import QUESTIONS

#: what a translator writes when a word has no translation
NONE_MARK = "NONE"
#: columns of a translator sheet; the translator fills the last four
SHEET_COLUMNS = ["pair_id", "lang", "translator", "word1", "word2", "pos", "question",
                 "translation1", "translation2", "pos_translated", "comment"]
VERB_PREFIX = {"hyperlex": "to "}
DECISIONS = ("keep", "drop")


def normalise(text: str) -> str:
    """The form translations are compared in: NFC, case-folded, ``_`` as space, one space."""
    text = unicodedata.normalize("NFC", str(text)).replace("_", " ")
    return " ".join(text.split()).casefold()


def is_multiword(text: str) -> bool:
    """True when ``text`` is a multi-word expression (two or more space-separated tokens)."""
    return len(normalise(text).split(" ")) > 1


def assign_pair_ids(pairs: pd.DataFrame, source: str = "<pairs>") -> pd.DataFrame:
    """Add a stable ``pair_id`` to English pairs (kept when the file already has one).

    The id is ``p`` + the first 10 hex digits of SHA-1 over ``word1<TAB>word2<TAB>pos``
    (lower case), so the same English pair gets the same id in every export, whatever the row
    order, and every target language shares it.

    Parameters
    ----------
    pairs : DataFrame
        Columns ``word1``, ``word2``, ``pos``; optional ``pair_id``.

    Returns
    -------
    DataFrame
        ``pair_id, word1, word2, pos`` plus the other columns of ``pairs``.

    Examples
    --------
    >>> frame = pd.DataFrame({"word1": ["cup"], "word2": ["mug"], "pos": ["N"]})
    >>> assign_pair_ids(frame)["pair_id"].iloc[0]
    'p4117c243ae'
    """
    missing = [c for c in ("word1", "word2", "pos") if c not in pairs.columns]
    if missing:
        raise InputError("missing column; pairs need word1, word2, pos (may be empty)",
                         path=source, field=missing[0])
    out = pairs.copy()
    out["pos"] = out["pos"].fillna("")
    for column in ("word1", "word2"):
        blank = out[column].isna() | (out[column].astype(str).str.strip() == "")
        if blank.any():
            raise InputError("empty value", path=source, line=int(blank.to_numpy().argmax()) + 2,
                             field=column)
    for column in ("word1", "word2", "pos"):
        out[column] = out[column].astype(str).str.strip()
    if "pair_id" not in out.columns:
        keys = (out["word1"].str.lower() + "\t" + out["word2"].str.lower() + "\t"
                + out["pos"].str.upper())
        out.insert(0, "pair_id", ["p" + hashlib.sha1(k.encode("utf-8")).hexdigest()[:10]
                                  for k in keys])
    else:
        out["pair_id"] = out["pair_id"].astype(str)
        out = out[["pair_id"] + [c for c in out.columns if c != "pair_id"]]
    repeated = out["pair_id"].duplicated()
    if repeated.any():
        raise InputError(f"pair {out['pair_id'][repeated].iloc[0]!r} occurs twice", path=source,
                         line=int(repeated.to_numpy().argmax()) + 2, field="pair_id")
    return out


def question(word1: str, word2: str, pos: str, protocol: str = "simlex") -> str:
    """The English rating's question for one pair, without context (verbs as ``to X``)."""
    if protocol not in QUESTIONS:
        raise InputError(f"unknown protocol {protocol!r}; allowed: {', '.join(QUESTIONS)}",
                         field="protocol")
    prefix = VERB_PREFIX.get(protocol, "") if str(pos).upper() == "V" else ""
    return QUESTIONS[protocol].format(word1=prefix + word1, word2=prefix + word2)


def question_protocol(protocol: str) -> str:
    """The key of :data:`lexgold.languages.QUESTIONS` whose question ``protocol`` asks.

    ``protocol`` is such a key, or any protocol ``--protocol`` takes (a packaged name, a
    pack's ``it/simlex``, a file) whose ``name`` is SimLex-999's, HyperLex's or TR9856's (a
    language suffix such as ``-it`` ignored): the English question translated is the paper's.

    >>> question_protocol("simlex"), question_protocol("simlex999"), question_protocol("it/hyperlex")
    ('simlex', 'simlex', 'hyperlex')
    """
    if protocol in QUESTIONS:
        return protocol
    from lexgold.protocols import NAMES, load_protocol

    loaded = load_protocol(protocol)
    name = str(loaded.get("name", "")).split("-")[0]
    for key in QUESTIONS:
        if name in NAMES and NAMES[name] == NAMES[key]:
            return key
    raise InputError(f"protocol {name!r} has no English question for translators; allowed: a "
                     f"protocol named {', '.join(QUESTIONS)} (or simlex999), with an optional "
                     "language suffix", path=loaded["_path"], field="name")


def translator_sheet(pairs: pd.DataFrame, lang: str, translator: str, protocol: str = "simlex",
                     rng=None) -> pd.DataFrame:
    """The sheet one translator fills in: one row per English pair, translation cells empty.

    Parameters
    ----------
    pairs : DataFrame
        Output of :func:`assign_pair_ids`.
    lang, translator : str
        Target language code and the translator's label (``A``, ``B``, ...).
    protocol : str
        Which question wording to show (the pair is translated as rated, not word by word):
        ``simlex``, ``hyperlex``, ``tr9856`` or a protocol (:func:`question_protocol`).
    rng : numpy.random.Generator, optional
        When given, rows are shuffled, so each translator sees the pairs in another order.
    """
    protocol = question_protocol(protocol)
    sheet = pd.DataFrame({
        "pair_id": pairs["pair_id"], "lang": lang, "translator": translator,
        "word1": pairs["word1"], "word2": pairs["word2"], "pos": pairs["pos"],
        "question": [question(a, b, p, protocol) for a, b, p in
                     zip(pairs["word1"], pairs["word2"], pairs["pos"])],
        "translation1": "", "translation2": "", "pos_translated": "", "comment": "",
    })
    if rng is not None:
        sheet = sheet.iloc[rng.permutation(len(sheet))]
    return sheet.reset_index(drop=True)[SHEET_COLUMNS]


def check_sheet(sheet: pd.DataFrame, source: str) -> pd.DataFrame:
    """Check one filled sheet; return it with string cells (``pos_translated`` filled in).

    Raises :class:`InputError` naming the file, line and field of the first missing column,
    empty translation, or mixed ``lang``/``translator`` value.
    """
    missing = [c for c in SHEET_COLUMNS if c not in sheet.columns and c != "comment"]
    if missing:
        raise InputError("missing column of a translator sheet", path=source, field=missing[0])
    sheet = sheet.fillna("").astype(str).apply(lambda col: col.str.strip())
    if "comment" not in sheet.columns:
        sheet["comment"] = ""
    for column in ("lang", "translator"):
        values = sheet[column].unique()
        if len(values) != 1 or not values[0]:
            bad = int((sheet[column] != sheet[column].iloc[0]).to_numpy().argmax()) + 2
            raise InputError("one sheet is one language and one translator", path=source,
                             line=bad, field=column)
    for column in ("translation1", "translation2"):
        empty = sheet[column] == ""
        if empty.any():
            raise InputError(f"translation missing (write {NONE_MARK} if the word has no "
                             "translation)", path=source, line=int(empty.to_numpy().argmax()) + 2,
                             field=column)
    repeated = sheet["pair_id"].duplicated()
    if repeated.any():
        raise InputError(f"pair {sheet['pair_id'][repeated].iloc[0]!r} occurs twice", path=source,
                         line=int(repeated.to_numpy().argmax()) + 2, field="pair_id")
    same = sheet["pos_translated"] == ""
    sheet.loc[same, "pos_translated"] = sheet.loc[same, "pos"]
    sheet["pos_translated"] = sheet["pos_translated"].str.upper()
    return sheet


def _flags(sheet: pd.DataFrame) -> pd.DataFrame:
    """Per-row flags of one translator's version of the pairs."""
    none1 = sheet["translation1"].str.upper() == NONE_MARK
    none2 = sheet["translation2"].str.upper() == NONE_MARK
    norm1 = sheet["translation1"].map(normalise)
    norm2 = sheet["translation2"].map(normalise)
    return pd.DataFrame({
        "multiword1": sheet["translation1"].map(is_multiword) & ~none1,
        "multiword2": sheet["translation2"].map(is_multiword) & ~none2,
        "collapsed": (norm1 == norm2) & ~none1 & ~none2,
        "pos_changed": sheet["pos_translated"] != sheet["pos"].str.upper(),
        "untranslatable": none1 | none2,
    }, index=sheet.index)


def compare_translations(sheets: dict[str, pd.DataFrame]) -> tuple[pd.DataFrame, dict]:
    """Compare two or more translators' checked sheets of one language.

    Parameters
    ----------
    sheets : dict
        ``{source name: checked sheet}`` (see :func:`check_sheet`), two or more, same pairs.

    Returns
    -------
    wide : DataFrame
        One row per pair: the English pair, each translator's ``<t>_translation1``,
        ``<t>_translation2``, ``<t>_pos``, ``<t>_comment``; ``agree1``, ``agree2``,
        ``agree_pos``, ``agree`` (the whole pair); the flags of any translator; and
        ``reasons``: why the pair goes to adjudication (empty: it does not).
    report : dict
        ``words`` (per word slot: n, agreed, rate), ``pairs`` (n, agreed, rate),
        ``word_types`` (per distinct English word and POS: n, agreed, rate: a word counts
        as agreed when every translator translated it the same way in every pair it occurs
        in), ``inconsistent`` (per translator: English word types translated in more than one
        way across pairs; a word may rightly change with its pair's sense), ``flags`` (pairs
        with each flag), ``to_adjudicate``.

    Notes
    -----
    Agreement is exact match after :func:`normalise`. With more than two translators a
    slot agrees only when all of them agree.
    """
    if len(sheets) < 2:
        raise InputError("need the sheets of at least two translators", field="sheets")
    checked = list(sheets.items())
    langs = {s["lang"].iloc[0] for _, s in checked}
    if len(langs) != 1:
        raise InputError(f"sheets of different languages: {', '.join(sorted(langs))}",
                         path=checked[1][0], field="lang")
    labels = [s["translator"].iloc[0] for _, s in checked]
    if len(set(labels)) != len(labels):
        raise InputError("two sheets by the same translator", path=checked[-1][0],
                         field="translator")
    base = checked[0][1].set_index("pair_id")
    wide = base[["word1", "word2", "pos", "question"]].copy()
    wide.insert(0, "lang", langs.pop())
    flags = None
    for (source, sheet), label in zip(checked, labels):
        sheet = sheet.set_index("pair_id")
        other = set(sheet.index) ^ set(base.index)
        if other:
            raise InputError(f"pair {sorted(other)[0]!r} is not in every sheet", path=source,
                             field="pair_id")
        sheet = sheet.loc[base.index]
        for column in ("word1", "word2", "pos"):
            if not sheet[column].equals(base[column]):
                raise InputError("English pair differs from the other sheets", path=source,
                                 field=column)
        for column, name in (("translation1", "translation1"), ("translation2", "translation2"),
                             ("pos_translated", "pos"), ("comment", "comment")):
            wide[f"{label}_{name}"] = sheet[column]
        these = _flags(sheet)
        flags = these if flags is None else flags | these
    wide = pd.concat([wide, flags], axis=1)
    for slot, column in (("1", "translation1"), ("2", "translation2"), ("_pos", "pos")):
        forms = pd.concat([wide[f"{t}_{column}"].map(normalise) for t in labels], axis=1)
        wide[f"agree{slot}"] = forms.nunique(axis=1) == 1
    wide["agree"] = wide["agree1"] & wide["agree2"] & wide["agree_pos"]
    wide["reasons"] = _reasons(wide)
    return wide.reset_index(), _agreement_report(wide, labels)


def _reasons(wide: pd.DataFrame) -> pd.Series:
    parts = [("disagree-word1", ~wide["agree1"]), ("disagree-word2", ~wide["agree2"]),
             ("disagree-pos", ~wide["agree_pos"]), ("collapsed", wide["collapsed"]),
             ("untranslatable", wide["untranslatable"])]
    return pd.Series([";".join(name for name, mask in parts if mask.iloc[i])
                      for i in range(len(wide))], index=wide.index, dtype=str)


def _rate(agreed: int, n: int) -> dict:
    return {"n": int(n), "agreed": int(agreed), "rate": (agreed / n) if n else float("nan")}


def _agreement_report(wide: pd.DataFrame, labels: list[str]) -> dict:
    slots = pd.concat([
        pd.DataFrame({"word": wide["word1"], "pos": wide["pos"], "agree": wide["agree1"]}),
        pd.DataFrame({"word": wide["word2"], "pos": wide["pos"], "agree": wide["agree2"]}),
    ])
    types = slots.groupby([slots["word"].str.lower(), "pos"])["agree"].all()
    return {
        "inconsistent": {t: _inconsistent(wide, t) for t in labels},
        "lang": wide["lang"].iloc[0] if len(wide) else None,
        "translators": labels,
        "words": _rate(int(slots["agree"].sum()), len(slots)),
        "word_types": _rate(int(types.sum()), len(types)),
        "pairs": _rate(int(wide["agree"].sum()), len(wide)),
        "flags": {name: int(wide[name].sum()) for name in
                  ("multiword1", "multiword2", "collapsed", "pos_changed", "untranslatable")},
        "to_adjudicate": int((wide["reasons"] != "").sum()),
    }


def _inconsistent(wide: pd.DataFrame, label: str) -> int:
    """English (word, POS) types this translator rendered in more than one way across pairs."""
    forms = pd.concat([
        pd.DataFrame({"word": wide["word1"], "pos": wide["pos"],
                      "form": wide[f"{label}_translation1"].map(normalise)}),
        pd.DataFrame({"word": wide["word2"], "pos": wide["pos"],
                      "form": wide[f"{label}_translation2"].map(normalise)}),
    ])
    return int((forms.groupby([forms["word"].str.lower(), "pos"])["form"].nunique() > 1).sum())


def adjudication_sheet(wide: pd.DataFrame) -> pd.DataFrame:
    """Rows for the adjudicator: every pair with a non-empty ``reasons``.

    The ``final_*`` cells are pre-filled where all translators agree; ``decision`` (``keep``
    or ``drop``) is left empty on purpose: the adjudicator must decide every row.
    """
    rows = wide[wide["reasons"] != ""].copy()
    labels = [c[:-len("_translation1")] for c in rows.columns if c.endswith("_translation1")]
    first = labels[0]
    rows["final_translation1"] = rows[f"{first}_translation1"].where(rows["agree1"], "")
    rows["final_translation2"] = rows[f"{first}_translation2"].where(rows["agree2"], "")
    rows["final_pos"] = rows[f"{first}_pos"].where(rows["agree_pos"], "")
    rows["decision"] = ""
    rows["adjudicator_comment"] = ""
    keep = (["pair_id", "lang", "word1", "word2", "pos", "question", "reasons"]
            + [f"{t}_{c}" for t in labels for c in ("translation1", "translation2", "pos",
                                                     "comment")]
            + ["final_translation1", "final_translation2", "final_pos", "decision",
               "adjudicator_comment"])
    return rows[keep].reset_index(drop=True)


def agreed_pairs(wide: pd.DataFrame) -> pd.DataFrame:
    """The pairs that need no adjudication, in the aligned-pair layout."""
    rows = wide[wide["reasons"] == ""]
    first = [c for c in wide.columns if c.endswith("_translation1")][0][:-len("_translation1")]
    return _aligned(rows, rows[f"{first}_translation1"], rows[f"{first}_translation2"],
                    rows[f"{first}_pos"], "agreed")


def _aligned(rows, target1, target2, target_pos, origin) -> pd.DataFrame:
    out = pd.DataFrame({
        "pair_id": rows["pair_id"], "lang": rows["lang"],
        "word1": target1.str.replace("_", " "), "word2": target2.str.replace("_", " "),
        "pos": target_pos.str.upper(),
        "source_word1": rows["word1"], "source_word2": rows["word2"],
        "source_pos": rows["pos"], "origin": origin,
    })
    out["multiword1"] = out["word1"].map(is_multiword)
    out["multiword2"] = out["word2"].map(is_multiword)
    out["collapsed"] = out["word1"].map(normalise) == out["word2"].map(normalise)
    out["pos_changed"] = out["pos"] != out["source_pos"].str.upper()
    return out.reset_index(drop=True)


def apply_adjudication(agreed: pd.DataFrame, adjudicated: pd.DataFrame,
                       source: str = "<adjudication>") -> tuple[pd.DataFrame, pd.DataFrame]:
    """Merge agreed pairs and the filled adjudication sheet into the concept-aligned set.

    Parameters
    ----------
    agreed : DataFrame
        Output of :func:`agreed_pairs`.
    adjudicated : DataFrame
        The adjudication sheet with ``decision`` (``keep``/``drop``) on every row and, for
        kept rows, ``final_translation1``, ``final_translation2`` (``final_pos`` empty
        means the English POS).
    source : str
        Name of the adjudication file, for error messages.

    Returns
    -------
    aligned : DataFrame
        ``pair_id, lang, word1, word2, pos, source_word1, source_word2, source_pos, origin,
        multiword1, multiword2, collapsed, pos_changed, duplicate_of``, ordered by pair id.
    dropped : DataFrame
        ``pair_id, lang, source_word1, source_word2, source_pos, reasons, adjudicator_comment``
        for every pair the adjudicator dropped.
    """
    sheet = adjudicated.fillna("").astype(str).apply(lambda col: col.str.strip())
    for column in ("pair_id", "decision", "final_translation1", "final_translation2",
                   "final_pos", "word1", "word2", "pos", "lang"):
        if column not in sheet.columns:
            raise InputError("missing column of the adjudication sheet", path=source,
                             field=column)
    sheet["decision"] = sheet["decision"].str.lower()
    for i, row in enumerate(sheet.itertuples(index=False), start=2):
        if row.decision not in DECISIONS:
            raise InputError(f"decision must be keep or drop, found {row.decision!r}",
                             path=source, line=i, field="decision")
        if row.decision == "keep":
            for column in ("final_translation1", "final_translation2"):
                value = getattr(row, column)
                if not value or value.upper() == NONE_MARK:
                    raise InputError("a kept pair needs both final translations", path=source,
                                     line=i, field=column)
    overlap = set(sheet["pair_id"]) & set(agreed["pair_id"])
    if overlap:
        raise InputError(f"pair {sorted(overlap)[0]!r} is both agreed and adjudicated",
                         path=source, field="pair_id")
    kept = sheet[sheet["decision"] == "keep"]
    pos = kept["final_pos"].where(kept["final_pos"] != "", kept["pos"])
    adjudicated_rows = _aligned(kept, kept["final_translation1"], kept["final_translation2"],
                                pos, "adjudicated")
    aligned = pd.concat([agreed, adjudicated_rows], ignore_index=True)
    aligned = aligned.sort_values("pair_id", kind="stable").reset_index(drop=True)
    aligned["duplicate_of"] = _duplicates(aligned)
    gone = sheet[sheet["decision"] == "drop"]
    dropped = pd.DataFrame({
        "pair_id": gone["pair_id"], "lang": gone["lang"], "source_word1": gone["word1"],
        "source_word2": gone["word2"], "source_pos": gone["pos"],
        "reasons": gone.get("reasons", ""), "adjudicator_comment": gone.get("adjudicator_comment", ""),
    }).reset_index(drop=True)
    return aligned, dropped


def _duplicates(aligned: pd.DataFrame) -> pd.Series:
    """For a target pair already produced by an earlier pair id, that id ("" otherwise)."""
    keys = aligned["word1"].map(normalise) + "\t" + aligned["word2"].map(normalise) + "\t" + aligned["pos"]
    first = {}
    out = []
    for pair_id, key in zip(aligned["pair_id"], keys):
        out.append(first.get(key, ""))
        first.setdefault(key, pair_id)
    return pd.Series(out, index=aligned.index, dtype=str)


def aligned_report(aligned: pd.DataFrame, dropped: pd.DataFrame) -> dict:
    """Counts of the aligned set: kept by origin, each flag, dropped."""
    return {
        "lang": aligned["lang"].iloc[0] if len(aligned) else None,
        "pairs": int(len(aligned)),
        "by_origin": {k: int(v) for k, v in aligned["origin"].value_counts().items()},
        "flags": {name: int(aligned[name].sum()) for name in
                  ("multiword1", "multiword2", "collapsed", "pos_changed")}
        | {"duplicate": int((aligned["duplicate_of"] != "").sum())},
        "dropped": int(len(dropped)),
    }
