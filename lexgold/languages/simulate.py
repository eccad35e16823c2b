"""Simulated translators and adjudicator, for trying the translation workflow end to end.

Not a substitute for people: these exist so that the round trip (export, two independent
translations, import, adjudication, aligned set) can be run and tested on real English pairs
without translators. A simulated translator looks each English word up in MultiWordNet's
English wordnet (WordNet 1.6) and takes a lemma of the aligned synset in the target language
(MultiWordNet synsets share ids across languages), so its disagreements, multi-word
translations, collapsed pairs and untranslatable words are those real lexicons produce.

Styles
------
``first``    the first target lemma of the first English sense that has one.
``sampled``  a sense drawn from the first two senses that have target lemmas, then one of its
             lemmas at random (through ``rng``): a second, independent translator.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from lexgold.errors import InputError
from lexgold.languages.translation import NONE_MARK

STYLES = ("first", "sampled")


def _candidates(word: str, pos: str, english, target) -> list[list[str]]:
    """Target lemmas per English sense of ``word`` (senses without a target lemma left out)."""
    senses = english.synsets(word.lower(), pos[0].lower()) if pos[0].upper() in "NVAR" else []
    out = []
    for synset in senses:
        try:
            names = target.synset(synset.name()).lemma_names()
        except InputError:
            continue
        if names:
            out.append(names)
    return out


def translate_word(word: str, pos: str, english, target, style: str = "first",
                   rng: np.random.Generator | None = None) -> str:
    """One simulated translation of ``word`` (``NONE`` when the target has no lemma)."""
    if style not in STYLES:
        raise InputError(f"unknown style {style!r}; allowed: {', '.join(STYLES)}", field="style")
    senses = _candidates(word, pos, english, target)
    if not senses:
        return NONE_MARK
    if style == "first":
        return senses[0][0].replace("_", " ")
    if rng is None:
        raise InputError("the sampled style needs a random generator (seed)", field="seed")
    sense = senses[int(rng.integers(min(2, len(senses))))]
    return sense[int(rng.integers(len(sense)))].replace("_", " ")


def fill_sheet(sheet: pd.DataFrame, english, target, style: str = "first",
               rng: np.random.Generator | None = None) -> pd.DataFrame:
    """A translator sheet filled in by a simulated translator."""
    filled = sheet.copy()
    for slot in ("1", "2"):
        filled[f"translation{slot}"] = [
            translate_word(w, p, english, target, style, rng)
            for w, p in zip(sheet[f"word{slot}"], sheet["pos"])]
    filled["comment"] = f"simulated translator ({style})"
    return filled


def adjudicate_sheet(sheet: pd.DataFrame, prefer: str) -> pd.DataFrame:
    """An adjudication sheet filled in by rule, standing in for a person.

    Each empty ``final_*`` cell takes translator ``prefer``'s version, or another translator's
    when that one wrote ``NONE``; a pair still lacking a translation is dropped; every other
    pair (collapsed pairs included, they stay flagged) is kept.
    """
    labels = [c[:-len("_translation1")] for c in sheet.columns if c.endswith("_translation1")]
    if prefer not in labels:
        raise InputError(f"no translator {prefer!r}; found: {', '.join(labels)}",
                         field="prefer")
    order = [prefer] + [t for t in labels if t != prefer]
    out = sheet.fillna("").astype(str).copy()
    for i in out.index:
        for column, source in (("final_translation1", "translation1"),
                               ("final_translation2", "translation2"), ("final_pos", "pos")):
            if out.at[i, column]:
                continue
            choices = [out.at[i, f"{t}_{source}"] for t in order
                       if out.at[i, f"{t}_{source}"].upper() != NONE_MARK]
            out.at[i, column] = choices[0] if choices else ""
        usable = all(out.at[i, c] and out.at[i, c].upper() != NONE_MARK
                     for c in ("final_translation1", "final_translation2"))
        out.at[i, "decision"] = "keep" if usable else "drop"
        out.at[i, "adjudicator_comment"] = (f"simulated: preferred translator {prefer}"
                                            if usable else "simulated: no translation")
    return out
