"""WordNet lexical relations of word pairs, as HyperLex labels its candidate pools.

Vulic et al. (2017), section 4.1 ("Lexical Relations"); docs/builders.md explains each rule.
Each (X, Y) pair of one POS gets one label:

==========  ================================================================================
hyp-N       X is a hyponym of Y (cathedral / building is hyp-3); N = the hypernym path length,
            measured as ``sense_policy`` says; N >= ``hyp_max`` is written ``hyp-{hyp_max}``
rhyp-N      the reverse: X is a hypernym of Y
syn         X and Y share a synset (author / writer)
ant         a WordNet antonym pointer joins a sense of X and a sense of Y, along the routes of
            ``antonyms`` (:func:`antonym_synsets`), looked for from both words (beginning /
            end, to unite / to divide, to depart / to arrive; friend / enemy both ways)
mero        X is a part of Y: one of Y's synsets is a holonym of one of X's (finger / hand,
            letter / alphabet); nouns only
cohyp       X and Y share a direct hypernym (peach / pear)
no-rel      none of these
==========  ================================================================================

``sense_policy`` decides hyp-N, rhyp-N and syn, the relations whose level depends on which
senses are compared:

``"first-sense"`` (the default)
    Each word's senses are walked in WordNet's order (sense frequency) to its first sense that
    shares a synset with the other word (distance 0) or lies below one of its senses (the
    shortest path from that sense). X's finding gives syn or hyp-N, Y's gives syn or rhyp-N;
    when both words find one, the earlier sense rank decides, then the shorter distance, then
    hyp. (Y, X) therefore always gets the mirror label of (X, Y), as the reversed rhyp-N pairs
    of section 4.2 carry the level of their hyp-N pair. Section 4.1 calls the level "the path
    length between the two concepts"; the released hyp-N levels follow the hyponym's frequent
    sense. car / vehicle is hyp-4 (car.n.01, the automobile), not hyp-2 (the railway car).
``"shortest-path"``
    The section's literal "shortest direct path" (section 5, "Hypernymy/LE Levels"): the
    shortest hypernym path over all sense pairs, hyp-N / rhyp-N before syn.

Precedence after those three: ant > mero > cohyp; these, like syn under ``"shortest-path"``,
hold when any sense pair holds them. ant and cohyp (and syn) are symmetric: (X, Y) and (Y, X)
get the same of these labels. Hypernym paths follow both ``hypernyms()`` and
``instance_hypernyms()``.

Speed: the hypernym closure of a synset (ancestor -> shortest distance) is computed once and
cached, as are each word's synsets, direct hypernyms, holonyms and antonyms; a pair is then a
few dictionary look-ups per sense of X. With NLTK's WordNet reader the synsets' relations come
from a compact graph extracted once per WordNet and cached on disk
(:mod:`lexgold.resources.wordnet_graph`), so a fresh process parses no synset; the labels are
the same as with ``cache=False``, which asks the reader. :func:`reference_relation` is the
straightforward per-pair NLTK version, kept to check the fast one (``bench/bench_relations.py``,
the tests).

The reader is NLTK's ``WordNetCorpusReader`` or anything that mimics the few methods used:

- ``reader.synsets(word, pos)`` with pos ``"n"`` or ``"v"``, in the wordnet's sense order
- ``Synset.hypernyms()``, ``Synset.instance_hypernyms()``
- ``Synset.part_holonyms()``, ``Synset.member_holonyms()``, ``Synset.substance_holonyms()``
  (those named in ``mero_holonyms``)
- ``Synset.lemmas()``, ``Lemma.name()``, ``Lemma.antonyms()``, ``Lemma.synset()``
- optionally ``Synset.verb_groups()`` and ``Lemma.derivationally_related_forms()`` (the
  ``verb-group`` and ``derivation`` antonym routes; a reader without them finds none there)

Synsets must be hashable and compare equal when they are the same synset.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from lexgold.errors import InputError
from lexgold.resources.wordnet_graph import load_graph
from lexgold.resources.wordnets import load_wordnet_adapter

#: relation names as written in files, in precedence order after hyp-N / rhyp-N
RELATIONS = ("hyp-1", "hyp-2", "hyp-3", "hyp-4", "rhyp-1", "rhyp-2", "rhyp-3", "rhyp-4",
             "syn", "ant", "mero", "cohyp", "no-rel")
HOLONYM_KINDS = ("part", "member", "substance")
WORDNET_POS = {"N": "n", "V": "v"}


def relation_names(hyp_max: int = 4) -> tuple[str, ...]:
    """All relation labels for a given hyp-N cap, in a fixed order (hyp, rhyp, syn ... no-rel)."""
    return (tuple(f"hyp-{n}" for n in range(1, hyp_max + 1))
            + tuple(f"rhyp-{n}" for n in range(1, hyp_max + 1))
            + ("syn", "ant", "mero", "cohyp", "no-rel"))


def _lemma_key(word: str) -> str:
    return word.strip().lower().replace(" ", "_")


SENSE_POLICIES = ("first-sense", "shortest-path")
ANTONYM_ROUTES = ("lemma", "synset", "verb-group", "derivation")
DEFAULT_ANTONYMS = ("lemma", "synset", "verb-group")


def antonym_synsets(name: str, senses: Iterable, routes: Sequence[str] = ("lemma",)) -> set:
    """Synsets opposed to the word ``name`` (whose synsets are ``senses``) along ``routes``.

    - ``lemma``: WordNet antonyms of the lemmas named ``name`` (of every lemma of its senses
      when none is named so: an inflected form such as "endings");
    - ``synset``: antonyms of every lemma of the word's senses (sickness / health through
      illness <-> wellness);
    - ``verb-group``: also of the lemmas of the senses' verb groups, WordNet's clusters of
      similar verb senses (to depart / to arrive through leave <-> arrive);
    - ``derivation``: also antonyms found through derivationally related forms, in any POS,
      then back (buyer / seller through buy <-> sell).
    """
    senses = list(senses)
    lemmas = [lemma for sense in senses for lemma in sense.lemmas()]
    own = [lemma for lemma in lemmas if lemma.name().lower() == name]
    start = []  # a list: NLTK's lemmas compare equal by name alone, across synsets
    if "synset" in routes:
        start += lemmas
    elif "lemma" in routes:
        start += own or lemmas
    if "verb-group" in routes:
        start += [lemma for sense in senses for group in getattr(sense, "verb_groups", list)()
                  for lemma in group.lemmas()]
    found = {antonym.synset() for lemma in start for antonym in lemma.antonyms()}
    if "derivation" in routes:
        for lemma in start:
            for form in getattr(lemma, "derivationally_related_forms", list)():
                found.update(back.synset() for antonym in form.antonyms()
                             for back in antonym.derivationally_related_forms())  # same reader
    return found


class RelationLabeller:
    """Label word pairs with their WordNet relation, caching per synset and per word.

    Parameters
    ----------
    reader : WordNet reader
        NLTK's ``WordNetCorpusReader`` or an adapter with the methods listed in the module
        docstring.
    hyp_max : int, default 4
        hyp-N / rhyp-N paths of this length or longer share one label (the paper's hyp>=4).
    mero_holonyms : sequence of str, default ("part", "member", "substance")
        Holonym pointers that count as X part of Y. letter / alphabet, the paper's example, is
        a *member* holonym in WordNet 3.0, finger / hand a *part* holonym.
    sense_policy : {"first-sense", "shortest-path"}, default "first-sense"
        How hyp-N, rhyp-N and syn are decided (module docstring).
    antonyms : sequence of str, default ("lemma", "synset", "verb-group")
        Routes along which X and Y count as antonyms (:func:`antonym_synsets`); checked from
        both words.
    cache : bool, default True
        With NLTK's WordNet reader, read the synsets' relations from the cached WordNet graph
        (:mod:`lexgold.resources.wordnet_graph`, built on first use) instead of the reader; the
        synsets are then graph node numbers. Other readers are always asked directly. A
        :class:`~lexgold.resources.wordnet_graph.WordNetGraph` passed as ``reader`` is always
        used (``lexgold relations`` and the HyperLex builder pass one: no NLTK at all).

    Examples
    --------
    >>> from lexgold.resources import load_wordnet
    >>> labeller = RelationLabeller(load_wordnet())          # doctest: +SKIP
    >>> labeller.relation("cathedral", "building", "N")     # doctest: +SKIP
    'hyp-3'
    """

    def __init__(self, reader, hyp_max: int = 4, mero_holonyms: Sequence[str] = HOLONYM_KINDS,
                 sense_policy: str = "first-sense", antonyms: Sequence[str] = DEFAULT_ANTONYMS,
                 cache: bool = True):
        if hyp_max < 1:
            raise InputError(f"hyp_max must be >= 1, found {hyp_max}", field="hyp_max")
        unknown = sorted(set(mero_holonyms) - set(HOLONYM_KINDS))
        if unknown:
            raise InputError(f"unknown holonym kind {unknown[0]!r}; allowed: "
                             f"{', '.join(HOLONYM_KINDS)}", field="mero_holonyms")
        if sense_policy not in SENSE_POLICIES:
            raise InputError(f"unknown sense policy {sense_policy!r}; allowed: "
                             f"{', '.join(SENSE_POLICIES)}", field="sense_policy")
        unknown = sorted(set(antonyms) - set(ANTONYM_ROUTES))
        if unknown:
            raise InputError(f"unknown antonym route {unknown[0]!r}; allowed: "
                             f"{', '.join(ANTONYM_ROUTES)}", field="antonyms")
        self.reader = reader
        self.hyp_max = hyp_max
        self.mero_holonyms = tuple(mero_holonyms)
        self.sense_policy = sense_policy
        self.antonyms = tuple(antonyms)
        self.graph = None
        from lexgold.resources import wordnet_graph
        if isinstance(reader, wordnet_graph.WordNetGraph):
            self.graph = reader
        elif cache and wordnet_graph.supports(reader):
            self.graph = wordnet_graph.graph_for(reader)
        self._synsets: dict[tuple[str, str], tuple] = {}
        self._ancestors: dict = {}
        self._parents: dict = {}
        self._word_facts: dict[tuple[str, str], tuple] = {}

    # -- cached WordNet facts ---------------------------------------------------------------
    def synsets(self, word: str, pos: str) -> tuple:
        """The word's synsets in the reader's (WordNet's) sense order (graph node numbers when
        the labeller reads the cached WordNet graph)."""
        key = (_lemma_key(word), pos)
        found = self._synsets.get(key)
        if found is None:
            if self.graph is None:
                found = tuple(self.reader.synsets(key[0], WORDNET_POS[pos]))
            else:
                found = self.graph.synsets(key[0], WORDNET_POS[pos])
            self._synsets[key] = found
        return found

    def parents(self, synset) -> tuple:
        found = self._parents.get(synset)
        if found is None:
            if self.graph is None:
                found = tuple(synset.hypernyms()) + tuple(synset.instance_hypernyms())
            else:
                found = self.graph.parents(synset)
            self._parents[synset] = found
        return found

    def ancestors(self, synset) -> dict:
        """Every hypernym of ``synset`` (transitively) -> its shortest distance; itself at 0."""
        found = self._ancestors.get(synset)
        if found is not None:
            return found
        distances, frontier = {synset: 0}, [synset]
        while frontier:  # breadth first: shortest distances, and a cycle cannot loop forever
            following = []
            for node in frontier:
                for parent in self.parents(node):
                    if parent not in distances:
                        distances[parent] = distances[node] + 1
                        following.append(parent)
            frontier = following
        self._ancestors[synset] = distances
        return self._ancestors[synset]

    def word_facts(self, word: str, pos: str) -> tuple:
        """Cached facts of a word: (synsets, hypernym distances, direct hypernyms, holonyms,
        antonym synsets). The hypernym distances merge the closures of all the word's senses:
        ancestor -> shortest distance >= 1 from any sense."""
        key = (_lemma_key(word), pos)
        found = self._word_facts.get(key)
        if found is None:
            senses = self.synsets(word, pos)
            above: dict = {}
            for sense in senses:
                for ancestor, distance in self.ancestors(sense).items():
                    if distance and distance < above.get(ancestor, 1 << 30):
                        above[ancestor] = distance
            hypernyms = {p for s in senses for p in self.parents(s)}
            holonyms = set()
            if pos == "N":
                for sense in senses:
                    for kind in self.mero_holonyms:
                        holonyms.update(getattr(sense, f"{kind}_holonyms")() if self.graph is None
                                        else self.graph.holonyms(sense, kind))
            opposed = (antonym_synsets if self.graph is None
                       else self.graph.antonym_synsets)(key[0], senses, self.antonyms)
            found = (frozenset(senses), above, frozenset(hypernyms), frozenset(holonyms),
                     frozenset(opposed))
            self._word_facts[key] = found
        return found

    # -- labelling -------------------------------------------------------------------------
    @staticmethod
    def _distance(above: dict, targets: frozenset) -> int | None:
        """Shortest distance from the word whose closure is ``above`` up to any of ``targets``."""
        found = [above[t] for t in targets if t in above]
        return min(found) if found else None

    def _hyp(self, down: int | None, up: int | None) -> str | None:
        """hyp-N / rhyp-N from the two path lengths (the shorter; hyp on a tie), or None."""
        if down is not None and (up is None or down <= up):
            return f"hyp-{min(down, self.hyp_max)}"
        if up is not None:
            return f"rhyp-{min(up, self.hyp_max)}"
        return None

    def _first_related_sense(self, word: str, pos: str, others: frozenset) -> tuple | None:
        """(rank, distance) of ``word``'s first sense, in WordNet's order, that is one of
        ``others`` (distance 0) or lies below one of them (the shortest path from it)."""
        for rank, sense in enumerate(self.synsets(word, pos)):
            if sense in others:
                return rank, 0
            closure = self.ancestors(sense)
            found = [closure[t] for t in others if t in closure]
            if found:
                return rank, min(found)
        return None

    def relation(self, word1: str, word2: str, pos: str) -> str:
        """The relation label of (word1, word2) with POS ``"N"`` or ``"V"``."""
        if pos not in WORDNET_POS:
            raise InputError(f"pos must be N or V, found {pos!r}", field="pos")
        set_x, above_x, hyper_x, holo_x, ant_x = self.word_facts(word1, pos)
        set_y, above_y, hyper_y, _, ant_y = self.word_facts(word2, pos)
        if not set_x or not set_y:
            return "no-rel"
        if self.sense_policy == "first-sense":
            # walk a word's senses only when the merged closures say a walk will find one
            shared = bool(set_x & set_y)
            down = shared or any(t in above_x for t in set_y)
            up = shared or any(t in above_y for t in set_x)
            label = _first_sense_label(
                self._first_related_sense(word1, pos, set_y) if down else None,
                self._first_related_sense(word2, pos, set_x) if up else None, self.hyp_max)
        else:
            label = self._hyp(self._distance(above_x, set_y), self._distance(above_y, set_x))
            if label is None and set_x & set_y:
                label = "syn"
        if label:
            return label
        if ant_x & set_y or ant_y & set_x:
            return "ant"
        if holo_x & set_y:
            return "mero"
        if hyper_x & hyper_y:
            return "cohyp"
        return "no-rel"


def _first_sense_label(down: tuple | None, up: tuple | None, hyp_max: int) -> str | None:
    """syn / hyp-N / rhyp-N from each word's first related sense, ``(rank, distance)``.

    ``down`` is word1's finding (word1 below word2: hyp-N), ``up`` word2's (rhyp-N). The
    earlier sense rank decides, then the shorter distance (a shared synset is 0: syn), then
    hyp. Swapping the words swaps the two findings, so (Y, X) gets the mirror label of (X, Y).
    """
    found = [key for key in ((*down, 0) if down else None, (*up, 1) if up else None) if key]
    if not found:
        return None
    _, distance, reverse = min(found)
    if distance == 0:
        return "syn"
    return f"{'rhyp' if reverse else 'hyp'}-{min(distance, hyp_max)}"


def label_relations(pairs: pd.DataFrame, reader=None, *, labeller: RelationLabeller | None = None,
                    hyp_max: int = 4, mero_holonyms: Sequence[str] = HOLONYM_KINDS,
                    sense_policy: str = "first-sense",
                    antonyms: Sequence[str] = DEFAULT_ANTONYMS) -> pd.Series:
    """WordNet relation of every row of a (word1, word2, pos) frame (HyperLex section 4.1).

    Parameters
    ----------
    pairs : pandas.DataFrame
        Columns ``word1``, ``word2``, ``pos`` (``N`` or ``V``; case-insensitive).
    reader : WordNet reader, optional
        See the module docstring for the methods used. Not needed when ``labeller`` is given.
    labeller : RelationLabeller, optional
        Reuse the caches of an earlier call.
    hyp_max, mero_holonyms, sense_policy, antonyms
        As :class:`RelationLabeller`.

    Returns
    -------
    pandas.Series
        One label per row (same index), from :func:`relation_names`.

    Raises
    ------
    InputError
        A missing column or a POS other than N / V (naming the row).
    """
    missing = [c for c in ("word1", "word2", "pos") if c not in pairs.columns]
    if missing:
        raise InputError(f"missing column {missing[0]!r}; need word1, word2, pos", field=missing[0])
    pos = pairs["pos"].astype(str).str.strip().str.upper()
    bad = ~pos.isin(list(WORDNET_POS))
    if bad.any():
        row = int(bad.to_numpy().nonzero()[0][0])
        raise InputError(f"pos must be N or V, found {pairs['pos'].iloc[row]!r} (data row {row + 1})",
                         field="pos")
    if labeller is None:
        labeller = RelationLabeller(reader, hyp_max=hyp_max, mero_holonyms=mero_holonyms,
                                    sense_policy=sense_policy, antonyms=antonyms)
    labels = [labeller.relation(str(a), str(b), p)
              for a, b, p in zip(pairs["word1"], pairs["word2"], pos)]
    return pd.Series(labels, index=pairs.index, name="relation", dtype="object")


def reference_relation(reader, word1: str, word2: str, pos: str, hyp_max: int = 4,
                       mero_holonyms: Sequence[str] = HOLONYM_KINDS,
                       sense_policy: str = "first-sense",
                       antonyms: Sequence[str] = DEFAULT_ANTONYMS) -> str:
    """The same label computed the straightforward way: NLTK calls per pair, nothing cached.

    Used to check :class:`RelationLabeller` and as the baseline of ``bench/bench_relations.py``.
    """
    tag = WORDNET_POS[pos]
    x = reader.synsets(_lemma_key(word1), tag)
    y = reader.synsets(_lemma_key(word2), tag)
    if not x or not y:
        return "no-rel"

    def shortest(lower, upper):
        found = [distance for low in lower for ancestor, distance in low.hypernym_distances()
                 if distance and ancestor in upper]
        return min(found) if found else None

    def hyp(down, up):
        if down is not None and (up is None or down <= up):
            return f"hyp-{min(down, hyp_max)}"
        return f"rhyp-{min(up, hyp_max)}" if up is not None else None

    def first_related(lower, upper):
        for rank, sense in enumerate(lower):
            distance = 0 if sense in upper else shortest([sense], upper)
            if distance is not None:
                return rank, distance
        return None

    if sense_policy == "first-sense":
        label = _first_sense_label(first_related(x, y), first_related(y, x), hyp_max)
    else:
        label = hyp(shortest(x, y), shortest(y, x)) or ("syn" if set(x) & set(y) else None)
    if label:
        return label

    if (antonym_synsets(_lemma_key(word1), x, antonyms) & set(y)
            or antonym_synsets(_lemma_key(word2), y, antonyms) & set(x)):
        return "ant"
    if pos == "N" and any(h in y for s in x for kind in mero_holonyms
                          for h in getattr(s, f"{kind}_holonyms")()):
        return "mero"
    if any(set(s.hypernyms() + s.instance_hypernyms())
           & set(t.hypernyms() + t.instance_hypernyms()) for s in x for t in y):
        return "cohyp"
    return "no-rel"


def hyperlex_type(relation) -> str:
    """A lexgold relation label in HyperLex's published TYPE names.

    ``rhyp-N`` becomes ``r-hyp-N``; a level of 4 or more is written 4 (hyp-4 holds every path of
    4 or more); other labels (cohyp, mero, syn, ant, no-rel) stay; an empty label stays empty.

    Examples
    --------
    >>> [hyperlex_type(r) for r in ["hyp-1", "hyp-6", "rhyp-2", "r-hyp-5", "cohyp", ""]]
    ['hyp-1', 'hyp-4', 'r-hyp-2', 'r-hyp-4', 'cohyp', '']
    """
    text = "" if relation is None or (isinstance(relation, float) and np.isnan(relation)) \
        else str(relation).strip()
    match = re.fullmatch(r"(r-?)?hyp-?(\d+)", text)
    if not match:
        return text
    return f"{'r-' if match.group(1) else ''}hyp-{min(int(match.group(2)), 4)}"


def _reader(wordnet):
    """Princeton WordNet from a folder, or another wordnet named ``multiwordnet:<lang>`` /
    ``lmf:<file>`` (adapters of :mod:`lexgold.resources.wordnets`)."""
    if wordnet and str(wordnet).partition(":")[0] in ("multiwordnet", "lmf", "princeton"):
        return load_wordnet_adapter(wordnet)
    return load_graph(wordnet)


def _is_hyperlex_file(path) -> bool:
    """A released HyperLex file: its first line is ``WORD1 WORD2 POS ...`` separated by blanks."""
    from lexgold.compression import open_input

    with open_input(path, "rb") as handle:
        first = handle.readline().decode("utf-8", errors="replace").lstrip("\ufeff")
    return first.lower().split()[:3] == ["word1", "word2", "pos"] and "," not in first


def read_pairs_to_label(in_csv) -> pd.DataFrame:
    """The pairs to label: a CSV with ``word1, word2, pos``, or a released HyperLex file
    (``WORD1 WORD2 POS TYPE ...``, whose TYPE is kept as ``published_type``), or any other
    pair file :func:`lexgold.pairfiles.read_pair_table` reads (SimVerb-3500 ...)."""
    if _is_hyperlex_file(in_csv):
        from lexgold.evaluate.gold import read_gold
        gold = read_gold(in_csv, format="hyperlex")
        frame = gold[["word1", "word2", "pos"]].astype(str)
        if "relation" in gold:
            frame["published_type"] = gold["relation"].astype(str)
        return frame
    from lexgold.pairfiles import PAIR_COLUMN_ALIASES, read_pair_table
    return read_pair_table(in_csv).rename(columns=PAIR_COLUMN_ALIASES)


def label_csv(in_csv, out_csv, *, wordnet_dir=None, hyp_max: int = 4,
              sense_policy: str = "first-sense",
              antonyms: Sequence[str] = DEFAULT_ANTONYMS, names: str = "lexgold") -> dict:
    """``lexgold relations``: read the pairs (:func:`read_pairs_to_label`), write them with ``relation``.

    ``names = "hyperlex"`` writes HyperLex's released names
    (:func:`hyperlex_type`: ``rhyp-2`` -> ``r-hyp-2``). Returns
    the number of pairs per relation, and, when the input is a HyperLex file with its TYPE
    column, ``agreement``: the share of pairs whose label equals the published TYPE (levels of 4
    or more compared as one). Bad input raises :class:`InputError` naming the file and the row
    (a data row's line number counts the header as line 1).
    """
    frame = read_pairs_to_label(in_csv)
    missing = [c for c in ("word1", "word2", "pos") if c not in frame.columns]
    if missing:
        raise InputError("missing column; need word1, word2, pos", path=in_csv, line=1,
                         field=missing[0])
    empty = (frame["word1"].str.strip() == "") | (frame["word2"].str.strip() == "")
    if empty.any():
        row = int(empty.to_numpy().nonzero()[0][0])
        raise InputError("empty word", path=in_csv, line=row + 2,
                         field="word1" if frame["word1"].iat[row].strip() == "" else "word2")
    try:
        labels = label_relations(frame, _reader(wordnet_dir), hyp_max=hyp_max,
                                 sense_policy=sense_policy, antonyms=antonyms)
    except InputError as err:
        line = None
        if err.field == "pos":
            bad = ~frame["pos"].str.strip().str.upper().isin(list(WORDNET_POS))
            line = int(bad.to_numpy().nonzero()[0][0]) + 2
            message = f"pos must be N or V, found {frame['pos'].iloc[line - 2]!r}"
        else:
            message = str(err)
        raise InputError(message, path=in_csv, line=line, field=err.field) from None
    written = labels.map(hyperlex_type) if names == "hyperlex" else labels
    frame["relation"] = written
    frame.to_csv(out_csv, index=False, lineterminator="\n", encoding="utf-8")
    order = relation_names(hyp_max)             # counts in the names written to the file
    if names == "hyperlex":
        order = tuple(dict.fromkeys(hyperlex_type(name) for name in order))
    counts = {name: int((written == name).sum()) for name in order if (written == name).any()}
    if "published_type" in frame:
        published = frame["published_type"].str.lower().map(hyperlex_type)
        counts["agreement"] = float((labels.map(hyperlex_type) == published).mean())
    return counts
