"""The cached WordNet graph (lexgold.resources.wordnet_graph) behind the relation labeller.

LEXGOLD_CACHE points at a folder of the test session (conftest) or of the test (tmp_path).
"""

import shutil
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from nltk.data import FileSystemPathPointer

from lexgold.builder.relations import RelationLabeller, label_relations
from lexgold.resources import wordnet_graph
from lexgold.resources.wordnet import _reader_from_root


@pytest.fixture(scope="module")
def usf_pairs(usf):
    """3,000 USF cue-target pairs of one POS, N or V, drawn at random."""
    same = (usf["qps"] == usf["tps"]) & usf["qps"].isin(["N", "V"])
    pairs = pd.DataFrame({"word1": usf["cue"][same].str.lower(),
                          "word2": usf["target"][same].str.lower(), "pos": usf["qps"][same]})
    return pairs.iloc[np.random.default_rng(11).choice(len(pairs), 3000, replace=False)]


@pytest.fixture(scope="module")
def graph_file(wordnet):
    """The graph file of the session's WordNet (built on first use)."""
    wordnet_graph.graph_for(wordnet)
    path = wordnet_graph.graph_path(wordnet_graph.wordnet_key(wordnet))
    assert path.is_file()
    return path


@pytest.mark.parametrize("policy", ["first-sense", "shortest-path"])
@pytest.mark.parametrize("settings", [
    {},
    {"antonyms": ["lemma"]},
    {"antonyms": ["synset"]},
    {"antonyms": ["lemma", "verb-group"]},
    {"antonyms": ["lemma", "synset", "verb-group", "derivation"]},
    {"antonyms": [], "hyp_max": 2, "mero_holonyms": ["member"]},
])
def test_cached_labels_equal_the_readers(usf_pairs, wordnet, graph_file, policy, settings):
    cached = RelationLabeller(wordnet, sense_policy=policy, **settings)
    direct = RelationLabeller(wordnet, sense_policy=policy, cache=False, **settings)
    assert cached.graph is not None and direct.graph is None
    labels = label_relations(usf_pairs, labeller=cached)
    assert labels.tolist() == label_relations(usf_pairs, labeller=direct).tolist()
    assert labels.nunique() >= 8


def test_words_get_the_readers_senses_in_order(wordnet, graph_file):
    """Inflected forms, exceptions and multiword lemmas map to the same synsets, in order."""
    graph = wordnet_graph.graph_for(wordnet)
    offsets = dict(enumerate(zip(graph.pos, graph.offsets)))
    for word, tag in [("dog", "n"), ("endings", "n"), ("geese", "n"), ("axes", "n"),
                      ("ran", "v"), ("leaves", "v"), ("ice_cream", "n"), ("Car", "n"),
                      ("qwxz", "v")]:
        expected = [(s.pos(), s.offset()) for s in wordnet.synsets(word.lower(), tag)]
        assert [offsets[node] for node in graph.synsets(word, tag)] == expected


def test_a_fresh_reader_parses_no_synset(wordnet, graph_file, usf_pairs):
    fresh = _reader_from_root(Path(wordnet.root.path).parent.parent)
    labels = label_relations(usf_pairs, labeller=RelationLabeller(fresh))
    assert all(not parsed for parsed in fresh._synset_offset_cache.values())
    assert labels.tolist() == label_relations(usf_pairs, labeller=RelationLabeller(wordnet)).tolist()


def _wordnet_copy(source: Path, target: Path) -> Path:
    target.mkdir()
    for name in wordnet_graph.KEY_FILES:
        shutil.copyfile(source / name, target / name)
    return target


def test_the_cache_is_keyed_by_the_wordnet_files(wordnet, tmp_path):
    source = Path(wordnet.root.path)
    copy = _wordnet_copy(source, tmp_path / "copy")
    changed = _wordnet_copy(source, tmp_path / "changed")
    noun = bytearray((changed / "data.noun").read_bytes())
    at = noun.index(b"Princeton")  # one letter of the licence header, the offsets unchanged
    noun[at] = ord("p")
    (changed / "data.noun").write_bytes(bytes(noun))

    def key(folder):
        return wordnet_graph.wordnet_key(SimpleNamespace(root=FileSystemPathPointer(str(folder))))

    assert key(copy) == wordnet_graph.wordnet_key(wordnet)  # the same files elsewhere
    assert key(changed) != key(copy)
    assert wordnet_graph.graph_path(key(changed)) != wordnet_graph.graph_path(key(copy))


@pytest.mark.parametrize("damage", ["truncated", "flipped byte", "other key", "empty"])
def test_a_damaged_file_is_not_read(graph_file, tmp_path, damage):
    key = graph_file.stem
    data = bytearray(graph_file.read_bytes())
    path = tmp_path / graph_file.name
    if damage == "truncated":
        data = data[: len(data) // 2]
    elif damage == "flipped byte":
        data[len(data) // 2] ^= 0xFF
    elif damage == "empty":
        data = b""
    path.write_bytes(bytes(data))
    with pytest.raises(wordnet_graph.CorruptGraph):
        wordnet_graph.read_graph(path, "0" * 64 if damage == "other key" else key)
    assert wordnet_graph.read_graph(graph_file, key)["offsets"].size > 80000


@pytest.mark.slow                   # rebuilds the WordNet cache
def test_a_corrupt_cache_is_rebuilt(wordnet, graph_file, tmp_path, monkeypatch):
    monkeypatch.setenv("LEXGOLD_CACHE", str(tmp_path))
    key = graph_file.stem
    path = wordnet_graph.graph_path(key)
    assert path.parent.parent == tmp_path
    path.parent.mkdir(parents=True)
    data = bytearray(graph_file.read_bytes())
    data[len(data) // 3] ^= 0x01
    path.write_bytes(bytes(data))
    with pytest.warns(UserWarning, match="rebuilding the WordNet graph"):
        rebuilt = wordnet_graph.load_or_build(wordnet, key)
    original, again = wordnet_graph.read_graph(graph_file, key), wordnet_graph.read_graph(path, key)
    assert original.keys() == again.keys()
    assert all(np.array_equal(original[name], again[name]) for name in original)
    assert rebuilt.parents(3) == wordnet_graph.WordNetGraph(original).parents(3)
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temporary file left


def test_only_nltk_readers_use_the_graph(wordnet):
    class StandIn:
        def synsets(self, word, pos):
            return []

    assert wordnet_graph.supports(wordnet)
    assert not wordnet_graph.supports(StandIn())
    assert RelationLabeller(StandIn()).graph is None
    assert RelationLabeller(StandIn()).relation("dog", "cat", "N") == "no-rel"
