"""Multi-SimLex as Concepticon distributes it: one row per concept, pairs rebuilt per language.

Vulic et al. (2020), *Multi-SimLex*, Computational Linguistics 46(4), section 4 (the 1,888
pairs rated in 12 languages, 0-6 scale). Concepticon's concept list ``Vulic-2020-2244.tsv``
holds the dataset as 2,244 concept rows (TAB-separated, header):

- ``SIMLEX_IDS``: the pairs the concept belongs to, ``pairid:position`` (position 1 or 2),
  space-separated (``1:2 690:1 696:1``);
- ``POS``: ``nouns``, ``verbs``, ``adjectives``, ``adverbs``;
- per language a word column (``ENGLISH`` ... ``CANTONESE``, alternatives in parentheses),
  ``<LANGUAGE>_IN_SOURCE`` (the word as each pair's source spelled it) and
  ``<LANGUAGE>_SCORE`` (each pair's score), both space-separated lists aligned with
  ``SIMLEX_IDS``.

A pair's word1 is the ``_IN_SOURCE`` word of its position-1 concept, word2 that of its
position-2 concept, its score the position-1 concept's entry of ``_SCORE`` and its POS the
concept's (``N``, ``V``, ``A``, ``R``); ``pair_id`` is the pair's id in ``SIMLEX_IDS``, the same
in every language. A word of several words (``antaa lupa``, ``pojawić się``) makes the space-
separated lists ambiguous: they are split into as many words as the row has ids, each one of
the spellings the word column gives (``süüa tegema (küpsetama)``: ``süüa tegema`` or
``küpsetama``), and a list that cannot be split so is an error naming the line.
"""

from __future__ import annotations

import math

import re

import pandas as pd

from lexgold.errors import InputError

#: the languages of Multi-SimLex: ISO 639 code -> column stem
LANGUAGES = {"en": "ENGLISH", "ar": "ARABIC", "zh": "CHINESE", "cy": "WELSH", "et": "ESTONIAN",
             "fi": "FINNISH", "fr": "FRENCH", "he": "HEBREW", "pl": "POLISH", "ru": "RUSSIAN",
             "es": "SPANISH", "yue": "CANTONESE"}
#: the published scale of the scores (section 4: ratings 0-6, scores their means)
SCALE = (0.0, 6.0)
_POS = {"nouns": "N", "verbs": "V", "adjectives": "A", "adverbs": "R"}
_ID = re.compile(r"^(\d+):([12])$")


def is_multisimlex(header: list[str]) -> bool:
    """A header naming ``SIMLEX_IDS`` and ``ENGLISH_IN_SOURCE``: Concepticon's Multi-SimLex."""
    names = {h.strip().upper() for h in header}
    return {"SIMLEX_IDS", "ENGLISH_IN_SOURCE"} <= names


def language_column(language: str | None, header: list[str], path=None) -> str:
    """The column stem of ``language``: an ISO code (``fr``), a name (``french``) or None
    (English)."""
    text = (language or "en").strip()
    stem = LANGUAGES.get(text.lower(), text.upper())
    if f"{stem}_IN_SOURCE" not in {h.strip().upper() for h in header}:
        known = ", ".join(f"{code} ({name.lower()})" for code, name in LANGUAGES.items())
        raise InputError(f"no language {language!r} in this Multi-SimLex file (known: {known})",
                         path=path, field="--language")
    return stem


def multisimlex_pairs(header: list[str], rows, language: str | None = None,
                      path=None) -> pd.DataFrame:
    """The pairs of one language from Concepticon's concept rows.

    Parameters
    ----------
    header : list of str
        The file's header fields.
    rows : list of (line number, fields)
        The concept rows.
    language : str, optional
        ISO code or name (:data:`LANGUAGES`); default English.

    Returns
    -------
    pandas.DataFrame
        ``pair_id, word1, word2, pos, score``, ordered by pair id; ``attrs['language']`` the
        column stem, ``attrs['scale']`` :data:`SCALE`.

    Raises
    ------
    InputError
        A malformed id, lists not aligned with ``SIMLEX_IDS``, a pair without both positions or
        with a non-numeric score, naming the line.
    """
    stem = language_column(language, header, path)
    at = {h.strip().upper(): i for i, h in enumerate(header)}
    concepts: dict[int, dict[int, tuple]] = {}
    for number, fields in rows:
        def get(name: str, fields=fields) -> str:
            return fields[at[name]] if at[name] < len(fields) else ""

        ids = get("SIMLEX_IDS").split()
        if not ids:
            continue
        words = _split_words(get(f"{stem}_IN_SOURCE"), len(ids), get(stem), path, number,
                             f"{stem}_IN_SOURCE")
        scores = get(f"{stem}_SCORE").split()
        if len(scores) != len(ids):
            raise InputError(f"{len(scores)} scores for {len(ids)} SIMLEX_IDS", path=path,
                             line=number, field=f"{stem}_SCORE")
        pos = _POS.get(get("POS").strip().lower(), get("POS").strip())
        for item, word, score in zip(ids, words, scores):
            match = _ID.match(item)
            if not match:
                raise InputError(f"expected pairid:position (1 or 2), found {item!r}",
                                 path=path, line=number, field="SIMLEX_IDS")
            pair, position = int(match[1]), int(match[2])
            if position in concepts.setdefault(pair, {}):
                raise InputError(f"pair {pair} has two concepts at position {position}",
                                 path=path, line=number, field="SIMLEX_IDS")
            concepts[pair][position] = (word, score, pos, number)
    records = []
    for pair in sorted(concepts):
        sides = concepts[pair]
        if set(sides) != {1, 2}:
            line = next(iter(sides.values()))[3]
            raise InputError(f"pair {pair} has no concept at position {3 - next(iter(sides))}",
                             path=path, line=line, field="SIMLEX_IDS")
        (word1, score, pos, line), (word2, *_) = sides[1], sides[2]
        try:
            value = float(score)
        except ValueError:
            raise InputError(f"score {score!r} is not a number", path=path, line=line,
                             field=f"{stem}_SCORE") from None
        if not math.isfinite(value):
            raise InputError(f"score {score!r} is not a finite number", path=path, line=line,
                             field=f"{stem}_SCORE")
        records.append((str(pair), word1, word2, pos, value))
    frame = pd.DataFrame(records, columns=["pair_id", "word1", "word2", "pos", "score"])
    frame.attrs.update(language=stem, scale=SCALE)
    return frame


def _split_words(text: str, n: int, spellings: str, path, line: int, field: str) -> list[str]:
    """``n`` words from a space-separated list whose words may hold spaces (module doc)."""
    tokens = text.split()
    if len(tokens) == n:
        return tokens
    known = {" ".join(s.split()) for s in re.split(r"[()]", spellings) if s.strip()}
    found = _parse(tokens, n, {tuple(k.split()) for k in known})
    if found is None:
        raise InputError(f"cannot split {text!r} into {n} words (one per SIMLEX_IDS entry) "
                         f"of the spellings {sorted(known)}", path=path, line=line, field=field)
    return found


def _parse(tokens: list[str], n: int, known: set[tuple]) -> list[str] | None:
    """``tokens`` cut into ``n`` consecutive known words, or None."""
    if n == 0:
        return [] if not tokens else None
    for size in sorted({len(k) for k in known}, reverse=True):
        head = tuple(tokens[:size])
        if len(head) == size and head in known:
            rest = _parse(tokens[size:], n - 1, known)
            if rest is not None:
                return [" ".join(head)] + rest
    return None
