"""WordNet 3.0 as a compact graph cached on disk: every question the builders ask, no NLTK.

NLTK's reader parses the index files when it is created (about two seconds) and each synset
the first time it is asked for; importing NLTK alone takes one to two seconds. The builders
(``lexgold build simlex`` / ``hyperlex``, ``lexgold relations``) ask WordNet few kinds of
questions, so this module reads the answers once per WordNet from its files
(:mod:`lexgold.resources.wordnet_files`, which reads them as NLTK does, in seconds) into
integer arrays, and answers them afterwards, all without NLTK:

- a word's synsets (:meth:`WordNetGraph.synsets`), as ``reader.synsets(word, pos)`` finds
  them: the index files and NLTK's morphology (its exception lists and suffix rules,
  :data:`SUBSTITUTIONS`), the same synsets in the same order, for nouns, verbs, adjectives
  (with their satellites) and adverbs;
- the lemma names of a synset with their capitalisation (:meth:`WordNetGraph.lemma_names`;
  the proper-noun test of :func:`lexgold.builder.common.proper_noun_detector`);
- per synset: hypernyms and instance hypernyms; part, member and substance holonyms; verb
  groups (sets in WordNet, stored sorted);
- per lemma: the synsets of its antonyms, and the synsets reached from it through a
  derivationally related form, its antonym and back (the ``derivation`` antonym route of
  :func:`lexgold.builder.relations.antonym_synsets`).

Synsets are numbered in file order: nouns, verbs, adjectives (head and satellite synsets, as in
``data.adj``), adverbs. The graph is stored as integer arrays in
``<cache>/wordnet-graph/<key>.npz`` (``LEXGOLD_CACHE`` or ``~/.cache/lexgold``, as
:func:`lexgold.resources.wordnet.cache_dir`). ``key`` is the SHA-256 of the WordNet files read
(``data.*``, ``index.*``, ``*.exc``), the NLTK version and this format's number
(:data:`FORMAT`; 2 added the index, the exception lists, adjectives, adverbs and the lemmas'
capitalisation), so another WordNet, the same one read by another NLTK, or a file of an older
format gets its own file and an old file is never read. The file is written to a temporary
name and renamed, so a parallel process sees either no file or a whole one. On loading, the
file's recorded key and the SHA-256 of its arrays are checked; a file that fails (truncated,
altered, from another format) is rebuilt, with a warning.

:func:`load_graph` finds WordNet as :func:`lexgold.resources.wordnet.load_wordnet` does and
builds the graph when it is missing (with a progress bar; ``lexgold resources`` does it at
set-up). tests/test_wordnet_graph.py checks every answer against NLTK on real words.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
import warnings
import weakref
from collections.abc import Callable, Iterable, Sequence
from importlib import metadata
from itertools import chain
from pathlib import Path

import numpy as np

from lexgold.resources.wordnet import cache_dir, load_wordnet, locate_wordnet

FORMAT = 2
DATA_FILES = ("data.noun", "data.verb", "data.adj", "data.adv")
INDEX_FILES = ("index.noun", "index.verb", "index.adj", "index.adv")
EXCEPTION_FILES = ("noun.exc", "verb.exc", "adj.exc", "adv.exc")
KEY_FILES = DATA_FILES + INDEX_FILES + EXCEPTION_FILES
#: NLTK's ``POS_LIST``: the parts of speech ``synsets(word)`` looks in, in this order
FILE_POS = ("n", "v", "a", "r")
#: a synset's POS as NLTK gives it (``s``: adjective satellite, read from ``data.adj``)
POS = ("n", "v", "a", "s", "r")
#: POS in the index: ``s`` lists the satellites among a word's adjective synsets
INDEX_POS = ("n", "v", "a", "s", "r")
#: NLTK's ``WordNetCorpusReader.MORPHOLOGICAL_SUBSTITUTIONS`` (tested to be equal)
SUBSTITUTIONS = {
    "n": (("s", ""), ("ses", "s"), ("ves", "f"), ("xes", "x"), ("zes", "z"), ("ches", "ch"),
          ("shes", "sh"), ("men", "man"), ("ies", "y")),
    "v": (("s", ""), ("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""),
          ("ing", "e"), ("ing", "")),
    "a": (("er", ""), ("est", ""), ("er", "e"), ("est", "e")),
    "r": (),
}
SUBSTITUTIONS["s"] = SUBSTITUTIONS["a"]
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
    if "nltk" not in sys.modules:   # no NLTK reader can exist: do not import it for nothing
        return False
    from nltk.corpus.reader.wordnet import WordNetCorpusReader
    return (isinstance(reader, WordNetCorpusReader)
            and type(reader).synsets is WordNetCorpusReader.synsets
            and hasattr(reader, "_morphy") and hasattr(reader, "_lemma_pos_offset_map")
            and hasattr(reader, "root"))


def _nltk_version() -> str:
    try:
        return metadata.version("nltk")
    except metadata.PackageNotFoundError:  # pragma: no cover - NLTK is a dependency
        import nltk
        return nltk.__version__


def _key(open_file: Callable[[str], object]) -> str:
    digest = hashlib.sha256(f"lexgold wordnet graph {FORMAT}; nltk {_nltk_version()}\n".encode())
    for name in KEY_FILES:
        content = hashlib.sha256()
        with open_file(name) as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                content.update(block)
        digest.update(f"{name} {content.hexdigest()}\n".encode())
    return digest.hexdigest()


def _open(root, name: str):
    """A WordNet file, in binary: read directly from a folder, else through NLTK (a zip)."""
    path = getattr(root, "path", None)
    if path is not None and Path(path).is_dir():
        return open(Path(path) / name, "rb")
    return root.join(name).open()


def wordnet_key(reader) -> str:
    """SHA-256 of the reader's WordNet files (:data:`KEY_FILES`), the NLTK version and the
    graph format."""
    return _key(lambda name: _open(reader.root, name))


def folder_key(folder: Path) -> str:
    """:func:`wordnet_key` of the WordNet files in ``folder``, without an NLTK reader."""
    return _key(lambda name: open(Path(folder) / name, "rb"))


def graph_path(key: str) -> Path:
    return cache_dir() / "wordnet-graph" / f"{key}.npz"


# -- building ------------------------------------------------------------------------------
def _csr(rows: Sequence[Sequence[int]]) -> tuple[np.ndarray, np.ndarray]:
    lengths = np.fromiter((len(row) for row in rows), np.int32, count=len(rows))
    ptr = np.zeros(len(rows) + 1, np.int32)
    np.cumsum(lengths, out=ptr[1:])
    idx = np.fromiter(chain.from_iterable(rows), np.int32, count=int(ptr[-1]))
    return ptr, idx


def _text(strings: Sequence[str]) -> np.ndarray:
    """Strings (without newlines) as one UTF-8 byte array, newline-separated."""
    return np.frombuffer("\n".join(strings).encode("utf-8"), np.uint8)


def _strings(array: np.ndarray, count: int) -> list[str]:
    found = array.tobytes().decode("utf-8").split("\n") if count else []
    if len(found) != count:
        raise CorruptGraph("its string tables disagree in size")
    return found


def _letters(codes: np.ndarray, letters: Sequence[str]) -> str:
    """Small integer codes as a string of one letter each (``letters[code]``)."""
    if codes.size and not 0 <= int(codes.min()) <= int(codes.max()) < len(letters):
        raise CorruptGraph("a POS code out of range")
    table = np.frombuffer("".join(letters).encode("ascii"), np.uint8)
    return table[codes.astype(np.intp)].tobytes().decode("ascii")


def extract(source, progress: bool = False) -> dict[str, np.ndarray]:
    """The graph's arrays, read from the WordNet files of ``source`` (a folder, or NLTK's
    reader: its ``root``, a folder or NLTK's zip) by :mod:`lexgold.resources.wordnet_files`,
    which answers as NLTK does without NLTK; ``progress`` shows a progress bar on stderr."""
    from lexgold.resources import wordnet_files
    if isinstance(source, (str, Path)):
        return pack_graph(wordnet_files.read_wordnet_files(
            lambda name: open(Path(source) / name, "rb"), progress))
    return pack_graph(wordnet_files.read_wordnet_files(lambda name: _open(source.root, name),
                                                       progress))


def pack_graph(records: dict) -> dict[str, np.ndarray]:
    """The graph's arrays from :func:`lexgold.resources.wordnet_files.read_wordnet_files`'s records: synsets
    in file order (each: ``pos``, ``offset``, lemma ``names``, the node lists ``parents``,
    ``part``, ``member``, ``substance``, ``groups``, and per lemma ``antonyms`` and
    ``derived``), ``index`` (word -> POS -> nodes), ``exceptions`` (POS -> form -> bases) and
    ``version``. Synset relations are sets in WordNet (NLTK returns them in no fixed order):
    they are stored sorted; the index is stored in word order."""
    synsets = records["synsets"]
    rows: dict[str, list] = {name: [] for name in NODE_RELATIONS + LEMMA_RELATIONS}
    lemma_rows, names = [], []
    for synset in synsets:
        for name in NODE_RELATIONS:
            rows[name].append(sorted(synset[name]))
        lemma_rows.append(len(names))
        names += synset["names"]
        for name in LEMMA_RELATIONS:
            rows[name] += synset[name]
    words, word_rows, word_pos, word_nodes = [], [], [], []   # a word's rows: one per POS
    for word in sorted(records["index"]):
        entries = records["index"][word]
        tags = [tag for tag in INDEX_POS if tag in entries]
        if tags:
            words.append(word)
            word_rows.append(range(len(word_pos), len(word_pos) + len(tags)))
        for tag in tags:
            word_pos.append(INDEX_POS.index(tag))
            word_nodes.append(entries[tag])
    forms, form_pos, targets = [], [], []
    for tag in FILE_POS:
        for form, bases in records["exceptions"][tag].items():
            forms.append(form)
            form_pos.append(FILE_POS.index(tag))
            targets.append(bases)
    arrays = {"offsets": np.array([s["offset"] for s in synsets], np.int32),
              "pos": np.array([POS.index(s["pos"]) for s in synsets], np.int8),
              "names": _text(names),
              "words": _text(words), "words_pos": np.array(word_pos, np.int8),
              "exceptions": _text(forms), "exceptions_pos": np.array(form_pos, np.int8),
              "exception_bases": _text(list(chain.from_iterable(targets)))}
    for name, table in rows.items():
        arrays[f"{name}_ptr"], arrays[f"{name}_idx"] = _csr(table)
    arrays["words_rows"] = _csr(word_rows)[0]
    arrays["words_ptr"], arrays["words_idx"] = _csr(word_nodes)
    arrays["exception_bases_ptr"] = _csr([range(len(t)) for t in targets])[0]
    arrays["lemmas_ptr"] = np.array(lemma_rows + [len(names)], np.int32)
    arrays["version"] = _text([records["version"] or ""])
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
    meta = {"format": FORMAT, "key": key, "nltk": _nltk_version(), "sha256": _digest(arrays)}
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


def read_graph(path: Path, key: str) -> dict[str, np.ndarray]:
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


def load_or_build(reader, key: str | None = None, progress: bool = False) -> WordNetGraph:
    """The graph of ``reader``'s WordNet from the cache, extracted and cached first if the
    file is missing or cannot be trusted. ``reader`` is NLTK's reader or a folder of WordNet
    files (``key`` is then required)."""
    if key is None:
        key = wordnet_key(reader)
    path = graph_path(key)
    if path.is_file():
        try:
            return WordNetGraph(read_graph(path, key), key)
        except (CorruptGraph, KeyError, IndexError, ValueError) as err:
            warnings.warn(f"{path}: {err}; rebuilding the WordNet graph", stacklevel=2)
    arrays = extract(reader, progress=progress)
    write(path, key, arrays)
    return WordNetGraph(arrays, key)


_BY_KEY: dict[str, WordNetGraph] = {}
_KEY_OF_READER: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_KEY_OF_FOLDER: dict[tuple, str] = {}


def graph_for(reader, progress: bool = False) -> WordNetGraph:
    """:func:`load_or_build`, kept in memory per WordNet (checksum) for the process."""
    key = _KEY_OF_READER.get(reader)
    if key is None:
        key = _KEY_OF_READER[reader] = wordnet_key(reader)
    if key not in _BY_KEY:
        _BY_KEY[key] = load_or_build(reader, key, progress)
    return _BY_KEY[key]


def load_graph(directory: str | Path | None = None, progress: bool = True) -> WordNetGraph:
    """The graph of the WordNet :func:`lexgold.resources.wordnet.load_wordnet` would load
    (``directory`` as there), built first when the cache has none (``progress``: a progress bar
    on stderr), kept in memory per WordNet for the process.

    NLTK is neither imported nor asked: the files are hashed to find the graph, and read to
    build it. WordNet inside a zip (NLTK's download) is read through NLTK's reader.
    """
    kind, where = locate_wordnet(directory)
    folder = Path(where) / "corpora" / "wordnet" if kind == "nltk" else Path(where)
    if not all((folder / name).is_file() for name in KEY_FILES):
        return graph_for(load_wordnet(directory), progress)
    stamp = tuple((name, (folder / name).stat().st_size, (folder / name).stat().st_mtime_ns)
                  for name in KEY_FILES)
    key = _KEY_OF_FOLDER.get((str(folder.resolve()), stamp))
    if key is None:
        key = _KEY_OF_FOLDER[str(folder.resolve()), stamp] = folder_key(folder)
    if key not in _BY_KEY:
        _BY_KEY[key] = load_or_build(folder, key, progress)
    return _BY_KEY[key]


def forget() -> None:
    """Drop the graphs kept in memory (as a fresh process would start)."""
    _BY_KEY.clear()
    _KEY_OF_READER.clear()
    _KEY_OF_FOLDER.clear()


# -- reading -------------------------------------------------------------------------------
class WordNetGraph:
    """WordNet's synsets as integers (graph nodes), with what the builders ask of them."""

    def __init__(self, arrays: dict[str, np.ndarray], key: str | None = None):
        self.key = key   # the cache key (:func:`graph_path`), when read from or written there
        self.size = len(arrays["offsets"])
        #: a synset's POS: ``pos[node]`` is one of :data:`POS` (a string, one letter a node)
        self.pos = _letters(arrays["pos"], POS)
        self.offsets = arrays["offsets"].tolist()
        if len(self.pos) != self.size:
            raise CorruptGraph("its synset tables disagree in size")
        self._arrays = {name: arrays[name] for name in arrays if name.startswith(
            NODE_RELATIONS + LEMMA_RELATIONS)}   # unpacked on first use (the labeller's)
        for name in NODE_RELATIONS + LEMMA_RELATIONS:
            if f"{name}_ptr" not in self._arrays or f"{name}_idx" not in self._arrays:
                raise CorruptGraph(f"it has no {name} table")
        self._relations: dict[str, tuple[list[int], list[int]]] = {}
        self._lemmas = arrays["lemmas_ptr"].tolist()
        if len(self._lemmas) != self.size + 1:
            raise CorruptGraph("its lemma tables disagree in size")
        self._cased = _strings(arrays["names"], self._lemmas[-1])
        self._lower: list[str] | None = None
        # the index: word -> its rows (one per POS) -> the rows' synsets; unpacked on demand
        self._word_rows = arrays["words_rows"].tolist()
        words = _strings(arrays["words"], len(self._word_rows) - 1)
        self._word = dict(zip(words, range(len(words))))
        self._row_pos = _letters(arrays["words_pos"], INDEX_POS)
        self._row_nodes = arrays["words_ptr"].tolist(), arrays["words_idx"].tolist()
        if len(self._row_pos) != self._word_rows[-1] or len(self._row_nodes[0]) != len(
                self._row_pos) + 1:
            raise CorruptGraph("its index tables disagree in size")
        tags = arrays["exceptions_pos"].tolist()
        bases_ptr = arrays["exception_bases_ptr"].tolist()
        bases = _strings(arrays["exception_bases"], bases_ptr[-1])
        self._exceptions: dict[str, dict[str, list[str]]] = {tag: {} for tag in FILE_POS}
        for i, form in enumerate(_strings(arrays["exceptions"], len(tags))):
            self._exceptions[FILE_POS[tags[i]]][form] = bases[bases_ptr[i]:bases_ptr[i + 1]]
        self._exceptions["s"] = self._exceptions["a"]
        self.version = _strings(arrays["version"], 1)[0]

    def _related(self, name: str, item: int) -> list[int]:
        table = self._relations.get(name)
        if table is None:
            table = self._relations[name] = (self._arrays[f"{name}_ptr"].tolist(),
                                             self._arrays[f"{name}_idx"].tolist())
        ptr, idx = table
        return idx[ptr[item]:ptr[item + 1]]

    @property
    def _names(self) -> list[str]:
        """Lemma names in lower case (antonym routes), made on first use."""
        if self._lower is None:
            self._lower = [name.lower() for name in self._cased]
        return self._lower

    def morphy(self, form: str, pos: str) -> list[str]:
        """NLTK's ``reader._morphy(form, pos)``: the base forms of ``form`` in the index (the
        form itself, then its exception-list bases or else its suffix-rule bases)."""
        exceptions = self._exceptions[pos]
        if form in exceptions:
            forms = exceptions[form]
        else:
            forms = [form[:-len(old)] + new for old, new in SUBSTITUTIONS[pos]
                     if form.endswith(old)]
        found = []
        for candidate in [form] + forms:
            if self._row(candidate, pos) is not None and candidate not in found:
                found.append(candidate)
        return found

    def _row(self, word: str, pos: str) -> int | None:
        """The index row of ``word`` as ``pos``, or None."""
        number = self._word.get(word)
        if number is not None:
            for row in range(self._word_rows[number], self._word_rows[number + 1]):
                if self._row_pos[row] == pos:
                    return row
        return None

    def synsets(self, lemma: str, pos: str | Iterable[str] | None = None) -> tuple[int, ...]:
        """``reader.synsets(lemma, pos)`` as graph nodes, in NLTK's order (all of
        :data:`FILE_POS` when ``pos`` is None)."""
        lemma = lemma.lower()
        tags = FILE_POS if pos is None else pos
        ptr, idx = self._row_nodes
        return tuple(node for tag in tags for form in self.morphy(lemma, tag)
                     for row in [self._row(form, tag)] for node in idx[ptr[row]:ptr[row + 1]])

    def senses(self, reader, lemma: str, tag: str) -> tuple[int, ...]:
        """:meth:`synsets` (``reader`` is not asked; kept for callers of format 1)."""
        return self.synsets(lemma, tag)

    def lemma_names(self, node: int) -> list[str]:
        """``[l.name() for l in synset.lemmas()]``: capitalised as in WordNet (Mexico)."""
        return self._cased[self._lemmas[node]:self._lemmas[node + 1]]

    def count(self, pos: str) -> int:
        """The number of synsets NLTK's ``all_synsets(pos)`` yields (``a`` with satellites)."""
        return sum(self.pos.count(tag) for tag in (("a", "s") if pos == "a" else (pos,)))

    def parents(self, node: int) -> tuple[int, ...]:
        """Hypernyms and instance hypernyms (sorted by node)."""
        return tuple(self._related("parents", node))

    def holonyms(self, node: int, kind: str) -> list[int]:
        return self._related(kind, node)

    def antonym_synsets(self, name: str, senses: Iterable[int], routes: Sequence[str]) -> set:
        """:func:`lexgold.builder.relations.antonym_synsets` over the graph."""
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
