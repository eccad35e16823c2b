"""The WordNet relations the relation labeller follows, as a compact graph cached on disk.

With a fresh NLTK reader most of the time of labelling word pairs goes to NLTK parsing each
synset from the data files the first time it is asked for (``lexgold.builder.relations``).
This module reads, once per WordNet, what the labeller needs from every noun and verb synset:

- its hypernyms and instance hypernyms (in that order);
- its part, member and substance holonyms;
- its verb groups;
- its lemmas: the lower-case name, the synsets of the lemma's antonyms, and the synsets
  reached from the lemma through a derivationally related form, its antonym and back (the
  ``derivation`` antonym route of :func:`lexgold.builder.relations.antonym_synsets`).

Synsets are numbered in file order, nouns first; targets that are not nouns or verbs are left
out (the labeller compares only synsets of one POS, N or V). The graph is stored as integer
arrays in ``<cache>/wordnet-graph/<key>.npz`` (``LEXGOLD_CACHE`` or ``~/.cache/lexgold``,
as :func:`lexgold.resources.wordnet.cache_dir`). ``key`` is the SHA-256 of the four
``data.*`` files, the NLTK version and this format's number, so another WordNet, or the same
one read by another NLTK, gets its own file. The file is written to a temporary name and
renamed, so a parallel process sees either no file or a whole one. On loading, the file's
recorded key and the SHA-256 of its arrays are checked; a file that fails (truncated,
altered, from another format) is rebuilt, with a warning.

A word's senses are still found by NLTK's own index and morphology (``_morphy`` over the
index files, which the reader parses when it is created), so a word gets the same synsets, in
the same order, with and without the graph; only the synsets' relations come from the file.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import warnings
import weakref
from collections.abc import Iterable, Sequence
from itertools import chain
from pathlib import Path

import nltk
import numpy as np
from nltk.corpus.reader.wordnet import WordNetCorpusReader
from nltk.data import FileSystemPathPointer

from lexgold.resources.wordnet import cache_dir

FORMAT = 1
DATA_FILES = ("data.noun", "data.verb", "data.adj", "data.adv")
POS = ("n", "v")
HOLONYM_KINDS = ("part", "member", "substance")
#: node -> nodes relations, each stored as a CSR pair ``<name>_ptr``, ``<name>_idx``
NODE_RELATIONS = ("parents", "part", "member", "substance", "groups")
#: lemma -> nodes relations (``lemmas_ptr`` maps a node to its lemmas)
LEMMA_RELATIONS = ("antonyms", "derived")


class CorruptGraph(ValueError):
    """A cached graph file that cannot be trusted (the message says why)."""


def supports(reader) -> bool:
    """Whether the graph can stand in for ``reader``: NLTK's WordNet reader, whose
    ``synsets`` is NLTK's own (index + ``_morphy``), read from files lexgold can hash."""
    return (isinstance(reader, WordNetCorpusReader)
            and type(reader).synsets is WordNetCorpusReader.synsets
            and hasattr(reader, "_morphy") and hasattr(reader, "_lemma_pos_offset_map")
            and hasattr(reader, "root"))


def _open(root, name: str):
    """A WordNet file, in binary: read directly from a folder, else through NLTK (a zip)."""
    if isinstance(root, FileSystemPathPointer):
        return open(Path(root.path) / name, "rb")
    return root.join(name).open()


def wordnet_key(reader) -> str:
    """SHA-256 of the reader's ``data.*`` files, the NLTK version and the graph format."""
    digest = hashlib.sha256(f"lexgold wordnet graph {FORMAT}; nltk {nltk.__version__}\n".encode())
    for name in DATA_FILES:
        content = hashlib.sha256()
        with _open(reader.root, name) as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                content.update(block)
        digest.update(f"{name} {content.hexdigest()}\n".encode())
    return digest.hexdigest()


def graph_path(key: str) -> Path:
    return cache_dir() / "wordnet-graph" / f"{key}.npz"


# -- building ------------------------------------------------------------------------------
def _csr(rows: Sequence[Sequence[int]]) -> tuple[np.ndarray, np.ndarray]:
    lengths = np.fromiter((len(row) for row in rows), np.int32, count=len(rows))
    ptr = np.zeros(len(rows) + 1, np.int32)
    np.cumsum(lengths, out=ptr[1:])
    idx = np.fromiter(chain.from_iterable(rows), np.int32, count=int(ptr[-1]))
    return ptr, idx


def extract(reader) -> dict[str, np.ndarray]:
    """The graph's arrays, read from every noun and verb synset of ``reader`` through NLTK."""
    synsets = [synset for tag in POS for synset in reader.all_synsets(tag)]
    number = {synset: i for i, synset in enumerate(synsets)}

    def nodes(targets: Iterable, where) -> list[int]:
        found = []
        for target in targets:
            if target not in number:  # hypernyms, holonyms, verb groups stay within n / v
                raise ValueError(f"{where}: {target} is not a noun or verb synset")
            found.append(number[target])
        return found

    rows: dict[str, list] = {name: [] for name in NODE_RELATIONS + LEMMA_RELATIONS}
    lemma_rows, names = [], []
    for synset in synsets:
        rows["parents"].append(nodes(synset.hypernyms() + synset.instance_hypernyms(), synset))
        for kind in HOLONYM_KINDS:
            rows[kind].append(nodes(getattr(synset, f"{kind}_holonyms")(), synset))
        rows["groups"].append(nodes(synset.verb_groups(), synset))
        lemma_rows.append(range(len(names), len(names) + len(synset.lemmas())))
        for lemma in synset.lemmas():
            names.append(lemma.name().lower())
            # antonyms of another POS cannot meet a noun or verb sense: left out
            rows["antonyms"].append([number[a.synset()] for a in lemma.antonyms()
                                     if a.synset() in number])
            rows["derived"].append([number[back.synset()]
                                    for form in lemma.derivationally_related_forms()
                                    for antonym in form.antonyms()
                                    for back in antonym.derivationally_related_forms()
                                    if back.synset() in number])
    arrays = {"offsets": np.array([s.offset() for s in synsets], np.int32),
              "pos": np.array([POS.index(s.pos()) for s in synsets], np.int8),
              "names": np.frombuffer("\n".join(names).encode("utf-8"), np.uint8)}
    for name, table in rows.items():
        arrays[f"{name}_ptr"], arrays[f"{name}_idx"] = _csr(table)
    arrays["lemmas_ptr"] = np.array([r.start for r in lemma_rows] + [len(names)], np.int32)
    return arrays


def _digest(arrays: dict[str, np.ndarray]) -> str:
    digest = hashlib.sha256()
    for name in sorted(arrays):
        if name != "meta":
            digest.update(f"{name} {arrays[name].dtype.str} {arrays[name].shape}\n".encode())
            digest.update(np.ascontiguousarray(arrays[name]).tobytes())
    return digest.hexdigest()


def write(path: Path, key: str, arrays: dict[str, np.ndarray]) -> None:
    """Write the graph to ``path`` atomically: a temporary file in the same folder, renamed."""
    meta = {"format": FORMAT, "key": key, "nltk": nltk.__version__, "sha256": _digest(arrays)}
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = tempfile.NamedTemporaryFile(dir=path.parent, prefix=path.stem[:16] + ".",
                                         suffix=".part", delete=False)
    try:
        with handle:
            np.savez(handle, meta=np.frombuffer(json.dumps(meta).encode(), np.uint8), **arrays)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(handle.name, path)
    except BaseException:
        Path(handle.name).unlink(missing_ok=True)
        raise


def read(path: Path, key: str) -> dict[str, np.ndarray]:
    """The arrays of a graph file; :class:`CorruptGraph` unless it is whole and for ``key``."""
    try:
        with np.load(path, allow_pickle=False) as stored:
            arrays = {name: stored[name] for name in stored.files}
        meta = json.loads(arrays.pop("meta").tobytes())
    except Exception as err:  # a truncated or altered zip can fail in many ways
        raise CorruptGraph(f"unreadable ({type(err).__name__}: {err})") from None
    if meta.get("format") != FORMAT or meta.get("key") != key:
        raise CorruptGraph("written for another WordNet or format")
    if meta.get("sha256") != _digest(arrays):
        raise CorruptGraph("its arrays do not match their recorded SHA-256")
    return arrays


def load_or_build(reader, key: str | None = None) -> WordNetGraph:
    """The graph of ``reader``'s WordNet from the cache, extracted and cached first if the
    file is missing or cannot be trusted."""
    key = key or wordnet_key(reader)
    path = graph_path(key)
    if path.is_file():
        try:
            return WordNetGraph(read(path, key))
        except (CorruptGraph, KeyError, IndexError) as err:
            warnings.warn(f"{path}: {err}; rebuilding the WordNet graph", stacklevel=2)
    arrays = extract(reader)
    write(path, key, arrays)
    return WordNetGraph(arrays)


_BY_KEY: dict[str, WordNetGraph] = {}
_KEY_OF_READER: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def graph_for(reader) -> WordNetGraph:
    """:func:`load_or_build`, kept in memory per WordNet (checksum) for the process."""
    key = _KEY_OF_READER.get(reader)
    if key is None:
        key = _KEY_OF_READER[reader] = wordnet_key(reader)
    if key not in _BY_KEY:
        _BY_KEY[key] = load_or_build(reader, key)
    return _BY_KEY[key]


def forget() -> None:
    """Drop the graphs kept in memory (as a fresh process would start)."""
    _BY_KEY.clear()
    _KEY_OF_READER.clear()


# -- reading -------------------------------------------------------------------------------
class WordNetGraph:
    """Noun and verb synsets as integers, with the relations the labeller follows."""

    def __init__(self, arrays: dict[str, np.ndarray]):
        self.size = len(arrays["offsets"])
        pos, offsets = arrays["pos"].tolist(), arrays["offsets"].tolist()
        self._node = {tag: {} for tag in POS}
        for node, (p, offset) in enumerate(zip(pos, offsets)):
            self._node[POS[p]][offset] = node
        self._relations = {name: (arrays[f"{name}_ptr"].tolist(), arrays[f"{name}_idx"].tolist())
                           for name in NODE_RELATIONS + LEMMA_RELATIONS}
        self._lemmas = arrays["lemmas_ptr"].tolist()
        self._names = arrays["names"].tobytes().decode("utf-8").split("\n")
        if len(self._lemmas) != self.size + 1 or len(self._names) != self._lemmas[-1]:
            raise CorruptGraph("its lemma tables disagree in size")

    def _related(self, name: str, item: int) -> list[int]:
        ptr, idx = self._relations[name]
        return idx[ptr[item]:ptr[item + 1]]

    def senses(self, reader, lemma: str, tag: str) -> tuple[int, ...]:
        """``reader.synsets(lemma, tag)`` as graph nodes, found as NLTK finds them (its index
        and morphology), without parsing a synset."""
        lemma = lemma.lower()
        index = reader._lemma_pos_offset_map
        nodes = self._node[tag]
        return tuple(nodes[offset] for form in reader._morphy(lemma, tag)
                     for offset in index[form].get(tag, []))

    def parents(self, node: int) -> tuple[int, ...]:
        """Hypernyms, then instance hypernyms."""
        return tuple(self._related("parents", node))

    def holonyms(self, node: int, kind: str) -> list[int]:
        return self._related(kind, node)

    def antonym_synsets(self, name: str, senses: Iterable[int], routes: Sequence[str]) -> set:
        """:func:`lexgold.builder.relations.antonym_synsets` over the graph (noun and verb
        synsets only)."""
        senses = list(senses)
        lemmas = [lemma for sense in senses for lemma in range(self._lemmas[sense],
                                                                self._lemmas[sense + 1])]
        own = [lemma for lemma in lemmas if self._names[lemma] == name]
        start = []
        if "synset" in routes:
            start += lemmas
        elif "lemma" in routes:
            start += own or lemmas
        if "verb-group" in routes:
            start += [lemma for sense in senses for group in self._related("groups", sense)
                      for lemma in range(self._lemmas[group], self._lemmas[group + 1])]
        found = {node for lemma in start for node in self._related("antonyms", lemma)}
        if "derivation" in routes:
            found.update(node for lemma in start for node in self._related("derived", lemma))
        return found
