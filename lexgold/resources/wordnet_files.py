"""WordNet 3.0's database files read directly, for :mod:`lexgold.resources.wordnet_graph`.

The WordNet graph is built from what NLTK's reader would answer; reading the files here gives
the same answers in seconds, where NLTK parses every synset in about a minute and needs a
second or two to import. The files are those of wndb(5WN): ``data.*`` (one synset a line:
offset, lexicographer file, type, lemmas with their lex ids, pointers), ``index.*`` (one
lemma and POS a line: its synsets' offsets, in sense order) and ``*.exc`` (inflected form,
base forms). Each step follows NLTK 3.10's ``WordNetCorpusReader`` and is cited there:

- a lemma's syntactic marker, ``(a)``, ``(p)``, ``(ip)``, is dropped from its name
  (``_synset_from_pos_and_line``);
- a pointer whose source/target field is ``0000`` is the synset's (a set: hypernyms,
  holonyms, verb groups); any other is its source lemma's, kept in file order (antonyms,
  derivationally related forms), and lemma pointers are keyed by the lemma's name;
- ``index.adj`` also lists, as POS ``s``, the offsets among a lemma's adjective synsets that
  are satellites, in index order (``_load_lemma_pos_offset_map``);
- a later line of the same lemma and POS (index) or form (exceptions) replaces an earlier.

tests/test_wordnet_graph.py checks that the arrays equal those extracted through NLTK.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable

#: data file -> the POS letters NLTK reads from it, in NLTK's ``POS_LIST`` order
FILES = (("noun", "n"), ("verb", "v"), ("adj", "a"), ("adv", "r"))
SYNSET_POINTERS = {"@": "hypernym", "@i": "instance", "#p": "part", "#m": "member",
                   "#s": "substance", "$": "groups"}
LEMMA_POINTERS = ("!", "+")
_MARKER = re.compile(r"\([^()]*\)$")
_VERSION = re.compile(r"Word[nN]et (\d+\+?|\d+\.\d+) Copyright")


def _lines(open_file: Callable[[str], object], name: str):
    with open_file(name) as handle:
        for raw in handle:
            yield raw.decode("utf-8") if isinstance(raw, bytes) else raw


def read_wordnet_files(open_file: Callable[[str], object], progress: bool = False) -> dict:
    """Synsets, index and exception lists of the WordNet whose files ``open_file(name)``
    opens (binary). Returns ``{"synsets": [...], "index": {...}, "exceptions": {...},
    "version": str}``, the records :func:`lexgold.resources.wordnet_graph.pack_graph` takes."""
    steps = [f"data.{name}" for name, _ in FILES] + [f"index.{name}" for name, _ in FILES] + [
        f"{name}.exc" for name, _ in FILES]
    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(total=len(steps), desc="WordNet graph (once per WordNet)", unit=" files",
                   file=sys.stderr, disable=None)          # only on a terminal
    synsets, node_of, version = [], {}, None
    for name, tag in FILES:
        for line in _lines(open_file, f"data.{name}"):
            if not line or line[0].isspace():
                if version is None and name == "adj":
                    found = _VERSION.search(line)
                    version = found.group(1) if found else None
                continue
            fields = line.split("|", 1)[0].split()
            offset, pos, count = int(fields[0]), fields[2], int(fields[3], 16)
            names = [_MARKER.sub("", fields[4 + 2 * i], count=1) for i in range(count)]
            at = 4 + 2 * count
            pointers = {kind: set() for kind in SYNSET_POINTERS.values()}
            lemma_pointers: dict[tuple[str, str], list] = {}
            for i in range(int(fields[at])):
                symbol, target, target_pos, ends = fields[at + 1 + 4 * i: at + 5 + 4 * i]
                if ends == "0000":
                    if symbol in SYNSET_POINTERS:
                        pointers[SYNSET_POINTERS[symbol]].add((target_pos, int(target)))
                elif symbol in LEMMA_POINTERS:   # ends: source and target lemma, 2 hex digits
                    source, target_lemma = divmod(int(ends, 16), 256)
                    lemma_pointers.setdefault((names[source - 1], symbol), []).append(
                        (target_pos, int(target), target_lemma - 1))
            node_of[tag, offset] = len(synsets)
            synsets.append({"pos": pos, "offset": offset, "names": names,
                            "pointers": pointers, "lemma_pointers": lemma_pointers})
        if bar is not None:
            bar.update()

    def node(target_pos, offset):
        return node_of["a" if target_pos == "s" else target_pos, offset]

    def lemma_related(target_pos, offset, index, symbol):
        synset = synsets[node(target_pos, offset)]
        return synset["lemma_pointers"].get((synset["names"][index], symbol), [])

    records = []
    for synset in synsets:
        pointers, own = synset["pointers"], synset["lemma_pointers"]
        records.append({
            "pos": synset["pos"], "offset": synset["offset"], "names": synset["names"],
            "parents": [node(*p) for p in pointers["hypernym"]]
            + [node(*p) for p in pointers["instance"]],
            **{kind: [node(*p) for p in pointers[kind]] for kind in ("part", "member",
                                                                     "substance", "groups")},
            "antonyms": [[node(p, o) for p, o, _ in own.get((name, "!"), [])]
                         for name in synset["names"]],
            "derived": [[node(bp, bo)
                         for fp, fo, fi in own.get((name, "+"), [])
                         for ap, ao, ai in lemma_related(fp, fo, fi, "!")
                         for bp, bo, _ in lemma_related(ap, ao, ai, "+")]
                        for name in synset["names"]],
        })

    satellites = {s["offset"] for s in synsets if s["pos"] == "s"}
    index: dict[str, dict[str, list[int]]] = {}
    for name, tag in FILES:
        for line in _lines(open_file, f"index.{name}"):
            if line.startswith(" "):
                continue
            fields = line.split()
            lemma, pos, count = fields[0], fields[1], int(fields[2])
            offsets = [int(o) for o in fields[len(fields) - count:]]
            entry = index.setdefault(lemma, {})
            entry[pos] = [node(tag, o) for o in offsets]
            if pos == "a":
                entry["s"] = [node(tag, o) for o in offsets if o in satellites]
        if bar is not None:
            bar.update()
    exceptions: dict[str, dict[str, list[str]]] = {}
    for name, tag in FILES:
        table = exceptions[tag] = {}
        for line in _lines(open_file, f"{name}.exc"):
            terms = line.split()
            if terms:
                table[terms[0]] = terms[1:]
        if bar is not None:
            bar.update()
    if bar is not None:
        bar.close()
    return {"synsets": records, "index": index, "exceptions": exceptions, "version": version}
