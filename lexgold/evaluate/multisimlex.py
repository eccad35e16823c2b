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
separated lists ambiguous: they are split into as many words as the row has ids
(:func:`split_words`), a parenthesised part staying with the word before it. The split chosen
is the one with the most words that are spellings the word column gives (its parts outside and
inside parentheses, each alternative of ``x/y`` and the whole: ``süüa tegema (küpsetama)``:
``süüa tegema`` or ``küpsetama``), or, failing that, one word repeated for every id; a list
with no single best split is an error naming the line.

Each word is then cleaned: a parenthesised part (a gloss or a variant, ``кошка (кот)``) is
dropped from it, and an alternative ``x/y`` is handled by the ``alternatives`` policy:
``"first"`` keeps ``x``, ``"each"`` makes a pair for every combination of the two words'
alternatives (same ``pair_id`` and score), ``"skip"`` drops the pair. ``attrs['notes']`` counts
the pairs each affected (:func:`multisimlex_pairs`).
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
#: policies for a word given as alternatives ``x/y``
ALTERNATIVES = ("first", "each", "skip")
_TOKEN = re.compile(r"\([^)]*\)|[^\s()]+")
_GLOSS = re.compile(r"\s*\([^)]*\)")


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
                      path=None, alternatives: str = "first") -> pd.DataFrame:
    """The pairs of one language from Concepticon's concept rows.

    Parameters
    ----------
    header : list of str
        The file's header fields.
    rows : list of (line number, fields)
        The concept rows.
    language : str, optional
        ISO code or name (:data:`LANGUAGES`); default English.
    alternatives : {"first", "each", "skip"}
        What a word given as ``x/y`` becomes (module doc).

    Returns
    -------
    pandas.DataFrame
        ``pair_id, word1, word2, pos, score``, ordered by pair id; ``attrs['language']`` the
        column stem, ``attrs['scale']`` :data:`SCALE`, ``attrs['notes']`` the pairs whose
        lists were split along spellings, whose words lost a parenthesised part and whose
        words had alternatives (and what the policy did with them).

    Raises
    ------
    InputError
        A malformed id, lists not aligned with ``SIMLEX_IDS``, a pair without both positions or
        with a non-numeric score, naming the line.
    """
    if alternatives not in ALTERNATIVES:
        raise InputError(f"expected one of {', '.join(ALTERNATIVES)}, found {alternatives!r}",
                         field="--alternatives")
    stem = language_column(language, header, path)
    at = {h.strip().upper(): i for i, h in enumerate(header)}
    counts = {"split": 0, "gloss": 0, "alternatives": 0, "expanded": 0}
    concepts: dict[int, dict[int, tuple]] = {}
    for number, fields in rows:
        def get(name: str, fields=fields) -> str:
            return fields[at[name]] if at[name] < len(fields) else ""

        ids = get("SIMLEX_IDS").split()
        if not ids:
            continue
        words, along = split_words(get(f"{stem}_IN_SOURCE"), len(ids), get(stem), path,
                                   number, f"{stem}_IN_SOURCE")
        counts["split"] += along
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
        cleaned = [_GLOSS.sub("", word).strip() for word in (word1, word2)]
        counts["gloss"] += cleaned != [word1, word2]
        options = [[w.strip() for w in word.split("/") if w.strip()] or [word]
                   for word in cleaned]
        if len(options[0]) > 1 or len(options[1]) > 1:
            counts["alternatives"] += 1
            if alternatives == "skip":
                continue
            if alternatives == "first":
                options = [o[:1] for o in options]
        combinations = [(a, b) for a in options[0] for b in options[1]]
        counts["expanded"] += len(combinations) - 1
        records += [(str(pair), a, b, pos, value) for a, b in combinations]
    frame = pd.DataFrame(records, columns=["pair_id", "word1", "word2", "pos", "score"])
    notes = []
    if counts["split"]:
        notes.append(f"{stem}: {counts['split']} lists of words of several words split along "
                     f"the word column's spellings")
    if counts["gloss"]:
        notes.append(f"{stem}: {counts['gloss']} pairs with a parenthesised part dropped from "
                     f"a word")
    if counts["alternatives"]:
        did = {"first": "the first alternative kept",
               "each": f"a pair for every combination ({counts['expanded']} pairs added)",
               "skip": "the pairs dropped"}[alternatives]
        notes.append(f"{stem}: {counts['alternatives']} pairs with alternatives (x/y): {did} "
                     f"(--alternatives {alternatives})")
    frame.attrs.update(language=stem, scale=SCALE, notes=notes)
    return frame


def split_words(text: str, n: int, spellings: str, path=None, line: int = 0,
                field: str = "") -> tuple[list[str], int]:
    """``n`` words from a space-separated list whose words may hold spaces (module doc), and
    whether the list needed the spellings (0 or 1).

    Examples
    --------
    >>> split_words("süüa tegema küpsetama", 2, "süüa tegema (küpsetama)")
    (['süüa tegema', 'küpsetama'], 1)
    >>> split_words("pomme de terre pomme de terre", 2, "patate")
    (['pomme de terre', 'pomme de terre'], 1)
    >>> split_words("chat (félin) chat", 2, "chat")
    (['chat (félin)', 'chat'], 1)
    """
    tokens = []
    for token in _TOKEN.findall(text):
        if token.startswith("(") and tokens:
            tokens[-1] = f"{tokens[-1]} {token}"      # a parenthesised part: the word before
        else:
            tokens.append(token)
    if len(tokens) == n and len(text.split()) == n:
        return tokens, 0
    known = set()
    for part in re.split(r"[()]", spellings):
        for spelling in [part, *part.split("/")]:
            if spelling.strip():
                known.add(tuple(spelling.split()))
    found = _best_split(tokens, n, known)
    if found is None and n and len(tokens) % n == 0:
        size = len(tokens) // n
        if all(tokens[i * size:(i + 1) * size] == tokens[:size] for i in range(n)):
            found = [" ".join(tokens[:size])] * n
    if found is None:
        shown = sorted(" ".join(k) for k in known)
        raise InputError(f"cannot split {text!r} into {n} words (one per SIMLEX_IDS entry): "
                         f"no single split has the most of the spellings {shown}", path=path,
                         line=line, field=field)
    return found, 1


def _best_split(tokens: list[str], n: int, known: set[tuple]) -> list[str] | None:
    """``tokens`` cut into ``n`` consecutive non-empty words, the most of them in ``known``
    (a word's parenthesised part ignored); None when no cut or several cuts are best."""
    def bare(group):
        return tuple(_GLOSS.sub("", " ".join(group)).split())

    size = len(tokens)
    # best[i][j] = (score, ways, cut) for the first i tokens in j words
    best = [[None] * (n + 1) for _ in range(size + 1)]
    best[0][0] = (0, 1, None)
    for i in range(1, size + 1):
        for j in range(1, min(i, n) + 1):
            top = None
            for k in range(j - 1, i):
                if best[k][j - 1] is None:
                    continue
                score = best[k][j - 1][0] + (bare(tokens[k:i]) in known)
                ways = best[k][j - 1][1]
                if top is None or score > top[0]:
                    top = (score, ways, k)
                elif score == top[0]:
                    top = (score, top[1] + ways, top[2])
            best[i][j] = top
    end = best[size][n] if n <= size else None
    if end is None or end[1] != 1 or end[0] == 0:
        return None
    words, i = [], size
    for j in range(n, 0, -1):
        k = best[i][j][2]
        words.append(" ".join(tokens[k:i]))
        i = k
    return words[::-1]
