"""Part-of-speech tendency sources: word -> counts per coarse POS (N, V, A, other).

SimLex-999 (Hill et al. 2015, section 3.1) keeps a word only if at least 75 % of its tags in a
POS-tagged corpus (the BNC) fall on one POS. The tag counts come from one of four adapters,
each returning the same frame: index ``word`` (lower case), integer columns ``N V A other``.
Frames of several sources add up (:func:`sum_counts`), as if their corpora were one.

- :func:`usf_pos_counts`: the POS columns of the USF norms (QPS/TPS), one tag per word. Every
  word then has a 100 % tendency, so the 75 % rule can never drop a pair with this source.
- :func:`penn_tag_counts`: per-word Penn Treebank tag counts of Lingua::EN::Tagger
  (Debian ``liblingua-en-tagger-perl``, ``words.yml``), counted on the Penn Treebank.
- :func:`semcor_tag_counts`: per-lemma tag counts of the SemCor sense-tagged part of the Brown
  corpus, as WordNet 3.0 ships them (``cntlist.rev``, Debian ``wordnet-base``).
- :func:`tagged_corpus_counts`: any corpus in ``word/TAG`` format (Penn, Brown or BNC C5 tags).

Proper-noun tags (Penn NNP/NNPS, C5 NP0) are not counted: they tag names, not uses of the
common word ("Will", "Palm Beach", "New York"), and SimLex-999 drops names by its own "capital
letter" rule. Counted as ``other`` they would outvote the noun of "beach" in the Penn Treebank.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from lexgold.compression import open_input, read_input_text
from lexgold.errors import InputError

COARSE = ("N", "V", "A", "other")
LINGUA_WORDS = Path("/usr/share/perl5/Lingua/EN/Tagger/words.yml")
#: USF's POS codes (QPS/TPS) -> coarse POS
USF_POS = {"N": "N", "V": "V", "AJ": "A"}
_PROPER = ("NNP", "NP0")
_LINGUA_LINE = re.compile(r'^(?:"(?P<q>(?:[^"\\]|\\.)*)"|(?P<w>[^:{"]+)):\s*\{(?P<tags>[^}]*)\}\s*$')


def coarse_pos(tag: str) -> str:
    """Map a Penn, Brown or BNC C5 tag to N, V, A, other, or ``proper`` for a proper-noun tag,
    which the counts leave out (ambiguity tags: the first)."""
    tag = tag.upper().split("-")[0]
    if tag.startswith(_PROPER):
        return "proper"
    if tag.startswith("NN"):
        return "N"
    if tag.startswith(("VB", "VV", "VD", "VH")):
        return "V"
    if tag.startswith(("JJ", "AJ")):
        return "A"
    return "other"


def _frame(counts: dict[str, Counter]) -> pd.DataFrame:
    frame = pd.DataFrame.from_dict(counts, orient="index", columns=list(COARSE)).fillna(0)
    frame = frame.astype("int64")
    frame.index.name = "word"
    return frame.sort_index()


def usf_pos_counts(usf: pd.DataFrame) -> pd.DataFrame:
    """One count per word for the POS the USF norms give it (cue QPS and target TPS)."""
    words = pd.concat([
        usf[["cue", "qps"]].set_axis(["word", "pos"], axis=1),
        usf[["target", "tps"]].set_axis(["word", "pos"], axis=1),
    ]).dropna().drop_duplicates("word")
    counts: dict[str, Counter] = defaultdict(Counter)
    for word, pos in zip(words["word"].str.lower(), words["pos"]):
        counts[word][USF_POS.get(pos, "other")] += 1
    return _frame(counts)


def penn_tag_counts(path: str | Path = LINGUA_WORDS) -> pd.DataFrame:
    """Per-word Penn tag counts from Lingua::EN::Tagger's ``words.yml`` (summed over case)."""
    counts: dict[str, Counter] = defaultdict(Counter)
    try:
        lines = read_input_text(path, encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise InputError("not found; install Debian's liblingua-en-tagger-perl", path=path) from None
    for number, line in enumerate(lines, start=1):
        if number == 1 and line.startswith("---") or not line.strip():
            continue
        match = _LINGUA_LINE.match(line)
        if match is None:
            raise InputError("not a `word: { tag: count, ... }` line", path=path, line=number)
        word = match["q"] if match["q"] is not None else match["w"].strip()
        for item in match["tags"].split(","):
            tag, _, count = item.partition(":")
            if not count.strip().isdigit():
                raise InputError(f"bad tag count {item.strip()!r}", path=path, line=number)
            coarse = coarse_pos(tag.strip())
            if coarse != "proper":
                counts[word.lower()][coarse] += int(count)
    return _frame(counts)


#: WordNet's synset type digit in a sense key -> coarse POS (5 is an adjective satellite)
SENSE_KEY_POS = {"1": "N", "2": "V", "3": "A", "4": "other", "5": "A"}


def semcor_tag_counts(path: str | Path) -> pd.DataFrame:
    """Per-lemma tag counts of SemCor from WordNet's ``cntlist.rev`` (summed over senses).

    Each line is ``sense_key sense_number tag_count``, the sense key ``lemma%type:...``: the
    number of times the lemma was tagged with that sense, and so with that POS, in the
    semantic concordance (Miller et al. 1993). Multi-word lemmas keep their underscores.
    """
    counts: dict[str, Counter] = defaultdict(Counter)
    try:
        lines = read_input_text(path, encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise InputError("not found; install Debian's wordnet-base (it ships cntlist.rev)",
                         path=path) from None
    for number, line in enumerate(lines, start=1):
        fields = line.split()
        if not fields:
            continue
        lemma, _, rest = fields[0].partition("%")
        if len(fields) != 3 or not lemma or rest[:1] not in SENSE_KEY_POS or not fields[2].isdigit():
            raise InputError("not a `lemma%type:... sense_number tag_count` line", path=path,
                             line=number)
        counts[lemma.lower()][SENSE_KEY_POS[rest[0]]] += int(fields[2])
    return _frame(counts)


def sum_counts(frames: Iterable[pd.DataFrame]) -> pd.DataFrame:
    """Tag counts of several sources added word by word (a word absent from one counts 0 there)."""
    total = None
    for frame in frames:
        frame = frame[list(COARSE)]
        total = frame if total is None else total.add(frame, fill_value=0)
    if total is None:
        raise ValueError("no tag counts to add up")
    total = total.fillna(0).astype("int64")
    total.index.name = "word"
    return total.sort_index()


def one_tag_per_word(counts: pd.DataFrame) -> bool:
    """True when no word has tags on two coarse POS: a tendency rule over such counts is a no-op."""
    counts = counts[list(COARSE)]
    return bool(((counts > 0).sum(axis=1) <= 1).all())


def tagged_corpus_counts(paths: str | Path | Iterable[str | Path]) -> pd.DataFrame:
    """Count coarse POS per word over corpus files of whitespace-separated ``word/TAG`` tokens.

    Files are streamed line by line, so memory grows with the vocabulary, not the corpus.
    """
    if isinstance(paths, (str, Path)):
        paths = [paths]
    counts: dict[str, Counter] = defaultdict(Counter)
    for path in paths:
        with open_input(path, encoding="utf-8") as lines:
            for number, line in enumerate(lines, start=1):
                for token in line.split():
                    word, slash, tag = token.rpartition("/")
                    if not slash or not word or not tag:
                        raise InputError(f"token {token!r} is not word/TAG", path=path, line=number)
                    coarse = coarse_pos(tag)
                    if coarse != "proper":
                        counts[word.lower()][coarse] += 1
    return _frame(counts)


def pos_tendency(counts: pd.DataFrame, share_among: Iterable[str] = COARSE) -> pd.DataFrame:
    """Each word's majority coarse POS and its tendency towards one POS (0-1).

    Returns a frame indexed by word with columns ``pos`` (the majority over all tags: N, V, A or
    other) and ``share``: the largest count among ``share_among`` over their sum. With
    ``share_among = ("N", "V", "A")`` the tendency is taken over "the three possible tags" of
    SimLex-999 (section 3.1), so proper-noun and function-word tags do not lower it (the Penn
    Treebank tags "new" NNP in New York, "cat" NNP in a ticker symbol); a word with none of
    them has a NaN share. Words with no tags at all are left out.
    """
    counts = counts[list(COARSE)]
    total = counts.sum(axis=1)
    counts = counts[total > 0]
    among = counts[list(share_among)]
    share = among.max(axis=1) / among.sum(axis=1).replace(0, float("nan"))
    return pd.DataFrame({"pos": counts.idxmax(axis=1), "share": share})
