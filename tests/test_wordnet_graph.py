"""The cached WordNet graph answers every question the builders ask exactly like NLTK.

Real WordNet 3.0 (the session's ``wordnet`` fixture), real words: a random sample of USF's
cues and targets with inflected, capitalised and multiword forms added. LEXGOLD_CACHE is a
folder of the test session (conftest).
"""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from nltk.corpus.reader.wordnet import WordNetCorpusReader

from lexgold.builder import relations
from lexgold.builder.common import proper_noun_detector
from lexgold.resources import wordnet_graph

EXTRA = ["dog", "geese", "axes", "ran", "leaves", "endings", "better", "best", "happier",
         "ice_cream", "Ice Cream", "Car", "mexico", "Mexico", "europe", "christmas", "china",
         "turkey", "paris", "john", "god", "bible", "English", "quickly", "well", "fast",
         "abandoned", "cannonballs", "dies", "qwxz", "", "a", "s", "ss", "es", "men", "women",
         "good", "bad", "buyer", "seller", "hot", "cold", "alive", "afraid", "go_on", "u.s.",
         "rock_'n'_roll", "15", "self-service"]


@pytest.fixture(scope="module")
def graph(wordnet):
    return wordnet_graph.graph_for(wordnet)


@pytest.fixture(scope="module")
def words(usf):
    """1,500 USF words, a few inflected and capitalised forms of them, and EXTRA."""
    pool = sorted(set(usf["cue"].str.lower()) | set(usf["target"].dropna().str.lower()))
    rng = np.random.default_rng(22)
    sample = [pool[i] for i in rng.choice(len(pool), 1500, replace=False)]
    inflected = [w + suffix for w, suffix in zip(sample[:400], ["s", "es", "ed", "ing", "er",
                                                               "est", "ies", "men"] * 50)]
    return sample + inflected + [w.capitalize() for w in sample[:100]] + EXTRA


def _node(synset_or_node, graph):
    return graph.pos[synset_or_node], graph.offsets[synset_or_node]


def _nltk(synset):
    return synset.pos(), synset.offset()


def _nltk_records(reader) -> dict:
    """What :func:`lexgold.resources.wordnet_files.read_wordnet_files` returns, asked of NLTK's reader."""
    tags = wordnet_graph.FILE_POS
    synsets = [synset for tag in tags for synset in reader.all_synsets(tag)]
    number = {synset: i for i, synset in enumerate(synsets)}

    def nodes(found):
        return [number[synset] for synset in found]

    records = [{
        "pos": s.pos(), "offset": s.offset(), "names": [lemma.name() for lemma in s.lemmas()],
        "parents": nodes(s.hypernyms() + s.instance_hypernyms()),
        "part": nodes(s.part_holonyms()), "member": nodes(s.member_holonyms()),
        "substance": nodes(s.substance_holonyms()), "groups": nodes(s.verb_groups()),
        "antonyms": [nodes(a.synset() for a in lemma.antonyms()) for lemma in s.lemmas()],
        "derived": [nodes(back.synset() for form in lemma.derivationally_related_forms()
                          for antonym in form.antonyms()
                          for back in antonym.derivationally_related_forms())
                    for lemma in s.lemmas()],
    } for s in synsets]
    node_of = {("a" if s.pos() == "s" else s.pos(), s.offset()): i for s, i in number.items()}
    index = {word: {tag: [node_of["a" if tag == "s" else tag, offset] for offset in offsets]
                    for tag, offsets in entries.items()}
             for word, entries in reader._lemma_pos_offset_map.items() if entries}
    return {"synsets": records, "index": index, "version": reader.get_version(),
            "exceptions": {tag: dict(reader._exception_map[tag]) for tag in tags}}


@pytest.mark.slow                   # reads all of WordNet twice (20 CPU-s)
def test_the_files_read_as_nltk_reads_them(graph, wordnet):
    """Every array of the graph read from WordNet's files (lexgold.resources.wordnet_files)
    equals the one built from NLTK's answers for every synset, lemma, index and exception."""
    from_files = wordnet_graph.extract(wordnet)
    from_nltk = wordnet_graph.pack_graph(_nltk_records(wordnet))
    assert from_files.keys() == from_nltk.keys()
    for name in from_files:
        assert np.array_equal(from_files[name], from_nltk[name]), name
    assert from_files["offsets"].size == 117659


def test_substitution_rules_are_nltks():
    assert {tag: list(rules) for tag, rules in wordnet_graph.SUBSTITUTIONS.items()} == {
        tag: list(rules) for tag, rules in WordNetCorpusReader.MORPHOLOGICAL_SUBSTITUTIONS.items()}


@pytest.mark.parametrize("pos", [None, "n", "v", "a", "s", "r"])
def test_synsets_and_morphy_as_nltk(graph, wordnet, words, pos):
    for word in words:
        expected = [_nltk(s) for s in wordnet.synsets(word, pos)]
        assert [_node(n, graph) for n in graph.synsets(word, pos)] == expected, word
        for tag in [pos] if pos else wordnet_graph.FILE_POS:
            assert graph.morphy(word.lower(), tag) == wordnet._morphy(word.lower(), tag), word


def test_synset_facts_as_nltk(graph, wordnet, words):
    """Lemma names (capitalised), hypernyms, holonyms, verb groups, lemma antonyms and the
    derivation route, for every synset of the sampled words (all parts of speech)."""
    seen = set()
    for word in words:
        for synset, node in zip(wordnet.synsets(word), graph.synsets(word)):
            if node in seen:
                continue
            seen.add(node)
            assert _node(node, graph) == _nltk(synset)
            assert graph.lemma_names(node) == [lemma.name() for lemma in synset.lemmas()]
            # synset pointers are sets in WordNet (and in NLTK): compared as sets
            assert sorted(_node(p, graph) for p in graph.parents(node)) == sorted(
                _nltk(p) for p in synset.hypernyms() + synset.instance_hypernyms())
            for kind in wordnet_graph.HOLONYM_KINDS:
                assert sorted(_node(h, graph) for h in graph.holonyms(node, kind)) == sorted(
                    _nltk(h) for h in getattr(synset, f"{kind}_holonyms")())
            for routes in (["lemma"], ["synset"], ["lemma", "verb-group"],
                           ["synset", "verb-group", "derivation"]):
                name = word.lower().replace(" ", "_")
                assert {_node(a, graph) for a in graph.antonym_synsets(name, [node], routes)} == {
                    _nltk(a) for a in relations.antonym_synsets(name, [synset], routes)}
    assert len(seen) > 3000
    assert {graph.pos[n] for n in seen} == set(wordnet_graph.POS)


def test_is_proper_as_with_nltk(graph, wordnet, words):
    with_graph, with_nltk = proper_noun_detector(graph), proper_noun_detector(wordnet)
    found = [w for w in words if with_graph(w)]
    assert found == [w for w in words if with_nltk(w)]
    assert {"mexico", "europe", "christmas"} <= set(found)
    assert not {"china", "turkey", "dog"} & set(found)


def test_counts_and_version_as_nltk(graph, wordnet):
    for tag in wordnet_graph.FILE_POS:
        assert graph.count(tag) == sum(1 for _ in wordnet.all_synsets(tag))
    assert graph.version == wordnet.get_version() == "3.0"


def test_load_graph_is_the_readers_graph(graph, wordnet):
    loaded = wordnet_graph.load_graph()
    assert loaded.key == wordnet_graph.wordnet_key(wordnet)
    assert loaded.synsets("dog", "n") == graph.synsets("dog", "n")


def test_a_warm_cache_needs_no_nltk(graph):
    """A fresh process loads the cached graph and answers without importing NLTK."""
    code = ("import sys\n"
            "from lexgold.resources.wordnet_graph import load_graph\n"
            "from lexgold.builder.common import proper_noun_detector\n"
            "g = load_graph()\n"
            "assert proper_noun_detector(g)('mexico') and g.synsets('dogs', 'n')\n"
            "assert 'nltk' not in sys.modules, 'nltk imported'\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stderr


def test_an_older_format_is_rebuilt_not_read(graph, wordnet, tmp_path, monkeypatch):
    """A file of format 1 at the key's path (as if the key had not changed) is not read."""
    key = wordnet_graph.wordnet_key(wordnet)
    arrays = wordnet_graph.read_graph(_graph_file(key), key)
    monkeypatch.setenv("LEXGOLD_CACHE", str(tmp_path))
    path = wordnet_graph.graph_path(key)
    with monkeypatch.context() as patch:
        patch.setattr(wordnet_graph, "FORMAT", 1)
        wordnet_graph.write(path, key, {"offsets": arrays["offsets"]})
    with pytest.raises(wordnet_graph.CorruptGraph, match="another WordNet or format"):
        wordnet_graph.read_graph(path, key)
    built = []
    monkeypatch.setattr(wordnet_graph, "extract",
                        lambda reader, progress=False: built.append(progress) or dict(arrays))
    with pytest.warns(UserWarning, match="rebuilding the WordNet graph"):
        rebuilt = wordnet_graph.load_or_build(wordnet, key)
    assert built == [False] and rebuilt.synsets("dog") == graph.synsets("dog")
    assert wordnet_graph.read_graph(path, key).keys() == arrays.keys()


def test_a_missing_cache_is_built_with_progress(graph, wordnet, tmp_path, monkeypatch):
    """load_graph (the builders, ``lexgold relations``, ``lexgold resources``) builds a missing
    graph through NLTK with a progress bar, once per process."""
    key = wordnet_graph.wordnet_key(wordnet)
    arrays = wordnet_graph.read_graph(_graph_file(key), key)
    monkeypatch.setenv("LEXGOLD_CACHE", str(tmp_path))
    wordnet_graph.forget()
    built = []
    monkeypatch.setattr(wordnet_graph, "extract",
                        lambda reader, progress=False: built.append(progress) or dict(arrays))
    try:
        first = wordnet_graph.load_graph()
        assert wordnet_graph.load_graph() is first
        assert built == [True] and wordnet_graph.graph_path(key).is_file()
        assert first.synsets("geese") == graph.synsets("geese")
    finally:
        wordnet_graph.forget()


def _graph_file(key) -> Path:
    path = wordnet_graph.graph_path(key)
    assert path.is_file()
    return path
