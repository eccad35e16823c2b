"""SimLex-999 builder (Hill et al. 2015, section 3.1) on the real USF norms."""

import dataclasses
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from lexgold.builder import common
from lexgold.builder.simlex import (CLASSES, assign_classes, associated_pool,
                                    build_simlex, load_settings, run_simlex, sample_cohort)
from lexgold.cli import cli
from lexgold.errors import InputError
from lexgold.protocols import load_protocol
from lexgold.resources import (one_tag_per_word, penn_tag_counts, semcor_tag_counts, sum_counts,
                               usf_pos_counts)
from lexgold.resources.wordnet import wordnet_file


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """One full build through the command line (seed 3)."""
    out = tmp_path_factory.mktemp("simlex") / "out"
    result = CliRunner().invoke(cli, ["build", "simlex", "--seed", "3", "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture(scope="module")
def pairs(built):
    return pd.read_csv(built / "pairs.csv", keep_default_na=False, na_values=[""])


@pytest.fixture(scope="module")
def report(built):
    return json.loads((built / "report.json").read_text())


@pytest.fixture(scope="module")
def usf_lower(usf):
    return set(zip(usf["cue"].str.lower(), usf["target"].str.lower()))


@pytest.fixture(scope="module")
def defaults(usf):
    """The packaged settings and the resources they select (Penn + SemCor tags, Brysbaert)."""
    settings = load_settings(load_protocol("simlex"))
    pos = common.pos_table(settings.pos, usf, base=None)
    conc, _ = common.concreteness_with_fallback(
        "brysbaert", "usf", usf, {"usf": settings.concreteness.usf,
                                  "brysbaert": settings.concreteness.brysbaert})
    return settings, pos, conc


def test_quotas_met(pairs, report):
    counts = pairs.groupby(["cohort", "pos"]).size().to_dict()
    assert counts == {("associated", "N"): 600, ("associated", "V"): 200, ("associated", "A"): 100,
                      ("unassociated", "N"): 66, ("unassociated", "V"): 22, ("unassociated", "A"): 11}
    assert len(pairs) == 999 and report["pairs"] == 999
    assert report["quota_shortfall"] == 0
    assert report["cohorts"]["associated"]["shortfalls"] == "none: every quota met"


def test_classes_balanced(pairs):
    per_class = pairs.groupby(["cohort", "pos", "conc_class"]).size()
    for pos, quota in {"N": 600, "V": 200, "A": 100}.items():
        assert [per_class[("associated", pos, c)] for c in CLASSES] == [quota // 4] * 4
    for pos, quota in {"N": 66, "V": 22, "A": 11}.items():
        sizes = [per_class[("unassociated", pos, c)] for c in CLASSES]
        assert sum(sizes) == quota and max(sizes) - min(sizes) <= 1


def test_classes_follow_the_paper(pairs, report):
    """Recompute C1-C4 by hand from conc1 (the first item), conc2 and the reported median of
    |c1 - c2|, on Brysbaert's 1-5 scale with the threshold 3."""
    assert report["concreteness"]["scale"] == [1.0, 5.0]
    for cohort, rows in pairs.groupby("cohort"):
        medians = report["cohorts"][cohort]["median_conc_diff"]
        for row in rows.itertuples():
            c1, c2, m = row.conc1, row.conc2, medians[row.pos]
            d = round(abs(c1 - c2), 6)
            if c1 > 3:
                expected = "C1" if d <= m else "C2"
            else:
                expected = "C3" if d <= m else "C4"
            assert row.conc_class == expected, row


def test_associated_pairs_come_from_usf_same_pos(pairs, usf, usf_lower, defaults):
    """Sampled pairs are written as SimLex-999 writes them: word1 = USF target, word2 = cue,
    fsg = FSG(word2 -> word1); both words lean >= 75 % to the pair's POS."""
    _, pos, _ = defaults
    assoc = pairs[pairs["cohort"] == "associated"]
    assert all((cue, target) in usf_lower for target, cue in zip(assoc["word1"], assoc["word2"]))
    fsg = usf.assign(key=list(zip(usf["target"].str.lower(), usf["cue"].str.lower())))
    fsg = fsg.drop_duplicates("key").set_index("key")["fsg"]
    assert assoc["fsg"].tolist() == [fsg[k] for k in zip(assoc["word1"], assoc["word2"])]
    for column in ("word1", "word2"):
        assert (assoc[column].map(pos["pos"]) == assoc["pos"]).all()
        assert (assoc[column].map(pos["share"]) >= 0.75).all()
    keys = {frozenset(p) for p in zip(pairs["word1"], pairs["word2"])}
    assert len(keys) == len(pairs)  # no pair twice, in either order


def test_unassociated_pairs_absent_from_usf_and_normed(pairs, usf, usf_lower):
    cues = set(usf["cue"].str.lower())
    sampled_words = {pos: set(rows["word1"]) | set(rows["word2"])
                     for pos, rows in pairs[pairs["cohort"] == "associated"].groupby("pos")}
    unassoc = pairs[pairs["cohort"] == "unassociated"]
    for row in unassoc.itertuples():
        assert (row.word1, row.word2) not in usf_lower and (row.word2, row.word1) not in usf_lower
        assert row.word1 in cues and row.word2 in cues
        assert {row.word1, row.word2} <= sampled_words[row.pos]
    assert unassoc["fsg"].isna().all()


def test_words_lower_case_single_and_not_capitalised(pairs, built):
    words = pd.concat([pairs["word1"], pairs["word2"]])
    assert words.str.fullmatch("[a-z]+").all()
    pool = pd.read_csv(built / "pool.csv", keep_default_na=False, low_memory=False)
    # USF prints FLORIDA in capitals like every word; WordNet knows it only as "Florida"
    florida = pool[(pool["word1"] == "florida") | (pool["word2"] == "florida")]
    assert "capital-letter" in set(florida["excluded"])
    assert "" not in set(florida["excluded"])
    assert not words.isin(["florida", "africa", "christmas"]).any()


def test_pool_is_an_audit_trail(built, report, usf):
    pool = pd.read_csv(built / "pool.csv", keep_default_na=False, low_memory=False)
    for column in ["word1", "word2", "pos", "cohort", "conc1", "conc2", "conc_class", "fsg"]:
        assert column in pool.columns
    assoc = pool[pool["cohort"] == "associated"]
    assert len(assoc) == len(usf)  # every USF pair, eligible or not
    reasons = report["cohorts"]["associated"]["excluded"]
    assert {"multi-word", "mixed-pos", "no-concreteness", "capital-letter", "pos-tendency"} <= set(reasons)
    assert "no-class" not in reasons  # the four classes split the candidates
    assert reasons == assoc.loc[assoc["excluded"] != "", "excluded"].value_counts().to_dict()
    candidates = assoc[assoc["excluded"] == ""]
    classes = report["cohorts"]["associated"]["classes"]
    assert {p: {c: int(((candidates["pos"] == p) & (candidates["conc_class"] == c)).sum())
                for c in CLASSES} for p in "NVA"} == classes
    assert pool["sampled"].sum() == 999


def test_same_seed_same_bytes_and_manifest(built, tmp_path):
    run_simlex(tmp_path, seed=3)
    for name in ("pool.csv", "pairs.csv", "report.json"):
        assert (tmp_path / name).read_bytes() == (built / name).read_bytes(), name
    manifest = json.loads((built / "report.json").read_text())["manifest"]
    assert manifest["seed"] == 3
    assert manifest["protocol"]["sha256"] == load_protocol("simlex")["_sha256"]
    assert len(manifest["resources"]["usf_appendix_a"]) == 8
    assert all(f["sha256"] == f["expected_sha256"] for f in manifest["resources"]["usf_appendix_a"])
    assert manifest["resources"]["wordnet"][0]["file"] == "data.noun"
    assert manifest["settings"]["associated"] == {"N": 600, "V": 200, "A": 100}


def test_another_seed_another_sample(built, usf, defaults):
    settings, pos, conc = defaults
    _, other, _ = build_simlex(usf, pos, conc, settings, np.random.default_rng(4))
    first = pd.read_csv(built / "pairs.csv", keep_default_na=False)
    assert len(other) == 999
    assert set(zip(other["word1"], other["word2"])) != set(zip(first["word1"], first["word2"]))


def test_assign_classes_by_hand():
    """Median of d over (0.5, 1, 2, 3, 0.2, 2.5) is 1.5."""
    frame = pd.DataFrame({
        "conc1": [6.0, 6.0, 3.0, 2.0, 5.0, 3.5],
        "conc2": [5.5, 5.0, 5.0, 5.0, 5.2, 6.0],
        "pos": ["N"] * 6, "excluded": [""] * 6})
    out, medians = assign_classes(frame, threshold=4.0)
    assert medians == {"N": 1.5}
    # d = .5 C1 | 1 C1 | 2 > m, abstract c1, c2 > c1: C4 | 3: C4 | .2: C1 |
    # 2.5 > m, abstract, c2 > c1: C4
    assert list(out["conc_class"]) == ["C1", "C1", "C4", "C4", "C1", "C4"]
    # concrete c1 = 4.5 with a larger c2 = 7 and d = 2.5 > m = 2.25: C2 by c1 and d alone,
    # in no class when C2 requires c2 < c1 (the paper's wording read literally)
    frame.loc[1, ["conc1", "conc2"]] = [4.5, 7.0]
    out, medians = assign_classes(frame, threshold=4.0)
    assert medians == {"N": 2.25}
    assert out.loc[1, "conc_class"] == "C2" and (out["excluded"] == "").all()
    out, _ = assign_classes(frame, threshold=4.0, direction="required")
    assert out.loc[1, "conc_class"] == "" and out.loc[1, "excluded"] == "no-class"
    assert list(out["conc_class"].drop(1)) == ["C1", "C3", "C4", "C1", "C4"]  # m = 2.25 now


def test_split_quota_spreads_remainders_at_random():
    rng = np.random.default_rng(0)
    seen = set()
    for _ in range(20):
        split = common.split_quota(66, CLASSES, rng)
        assert sum(split.values()) == 66 and set(split.values()) == {16, 17}
        seen.add(tuple(split.values()))
    assert len(seen) > 1
    assert common.split_quota(600, CLASSES, rng) == dict.fromkeys(CLASSES, 150)


def test_proportional_quota_by_hand():
    """Largest remainder: 4 x (6, 3, 2, 1) / 12 = 2, 1, 0.67, 0.33 -> 2, 1, 1, 0."""
    sizes = dict(zip(CLASSES, (6, 3, 2, 1)))
    assert common.proportional_quota(4, sizes) == {"C1": 2, "C2": 1, "C3": 1, "C4": 0}
    assert common.proportional_quota(12, sizes) == sizes
    # an empty pool draws nothing: the quota is spread equally so that the shortfall shows
    assert common.proportional_quota(6, dict.fromkeys(CLASSES, 0)) == {"C1": 2, "C2": 2,
                                                                     "C3": 1, "C4": 1}


def _class_pool(sizes: dict[str, int]) -> pd.DataFrame:
    rows = [(f"{c.lower()}a{i}", f"{c.lower()}b{i}", "N", c) for c, n in sizes.items()
            for i in range(n)]
    frame = pd.DataFrame(rows, columns=["word1", "word2", "pos", "conc_class"])
    return frame.assign(excluded="", cohort="associated")


def test_class_allocation_equal_or_proportional():
    """Four candidates N per class 6/3/2/1 and a quota of 4: the paper's equal allocation
    draws one of each; proportional draws 2/1/1/0, as the pool's shares 50/25/17/8 %."""
    pool = _class_pool(dict(zip(CLASSES, (6, 3, 2, 1))))
    quotas = {"N": 4}
    equal, records = sample_cohort(pool, quotas, np.random.default_rng(0))
    assert equal["conc_class"].value_counts().to_dict() == dict.fromkeys(CLASSES, 1)
    assert [r["quota"] for r in records if r["pos"] == "N"] == [1, 1, 1, 1]
    prop, records = sample_cohort(pool, quotas, np.random.default_rng(0), allocation="proportional")
    assert prop["conc_class"].value_counts().to_dict() == {"C1": 2, "C2": 1, "C3": 1}
    assert [(r["pool"], r["quota"], r["shortfall"]) for r in records if r["pos"] == "N"] == [
        (6, 2, 0), (3, 1, 0), (2, 1, 0), (1, 0, 0)]
    # equal allocation of 8 needs 2 from C4, which has 1: the shortfall is reported, not moved
    _, records = sample_cohort(pool, {"N": 8}, np.random.default_rng(0))
    assert [r["shortfall"] for r in records if r["pos"] == "N"] == [0, 0, 0, 1]
    with pytest.raises(InputError, match="class_allocation"):
        sample_cohort(pool, quotas, np.random.default_rng(0), allocation="pool")


def test_class_allocation_proportional_on_usf(usf, defaults):
    """On the real USF pool the proportional quotas follow each POS's class shares (nouns are
    mostly C1/C2, adjectives mostly C3/C4) and sum to the paper's 600 / 200 / 100."""
    settings, pos, conc = defaults
    pool = associated_pool(usf, pos, conc, settings)
    pool, _ = assign_classes(pool, threshold=3.0)
    sample, records = sample_cohort(pool, settings.associated, np.random.default_rng(1),
                                    allocation="proportional")
    candidates = pool[pool["excluded"] == ""]
    for p, quota in settings.associated.items():
        rows = [r for r in records if r["pos"] == p]
        total = sum(r["pool"] for r in rows)
        assert sum(r["quota"] for r in rows) == quota == (sample["pos"] == p).sum()
        for r in rows:
            assert abs(r["quota"] - quota * r["pool"] / total) < 1
            assert r["pool"] == ((candidates["pos"] == p)
                                 & (candidates["conc_class"] == r["conc_class"])).sum()
    by = {(r["pos"], r["conc_class"]): r["quota"] for r in records}
    assert by[("N", "C1")] > by[("N", "C3")] and by[("A", "C3")] > by[("A", "C1")]


@pytest.mark.slow                   # a whole SimLex build
def test_simlex_own_pairs_outside_the_literal_direction(built):
    """docs/builders.md and the protocol's class_direction comment: of SimLex-999's associated
    pairs that are candidates in lexgold's pool, one in seven (117 of 837) lie the other way
    from the paper's literal C2 (c2 < c1) / C4 (c2 > c1); the pool as a whole: 3,901 of 27,676."""
    gensim = pytest.importorskip("gensim")
    path = Path(gensim.__file__).parent / "test" / "test_data" / "simlex999.txt"
    simlex = pd.read_csv(path, sep="\t", comment="#", header=None, usecols=[0, 1],
                         names=["word1", "word2"], keep_default_na=False)
    pool = pd.read_csv(built / "pool.csv", keep_default_na=False, low_memory=False)
    cand = pool[(pool["cohort"] == "associated") & (pool["excluded"] == "")]
    c1, c2 = cand["conc1"].astype(float), cand["conc2"].astype(float)
    other_way = (((cand["conc_class"] == "C2") & ~(c2 < c1))
                 | ((cand["conc_class"] == "C4") & ~(c2 > c1)))
    assert (other_way.sum(), len(cand)) == (3901, 27676)
    own = pd.Series([k in set(zip(simlex["word1"], simlex["word2"]))
                     for k in zip(cand["word1"], cand["word2"])], index=cand.index)
    assert (other_way[own].sum(), own.sum()) == (117, 837)
    classes = cand[own].groupby(["pos", "conc_class"]).size()
    assert [classes[("N", c)] for c in CLASSES] == [322, 135, 31, 51]
    assert [classes[("V", c)] for c in CLASSES] == [20, 28, 85, 65]
    assert [classes[("A", c)] for c in CLASSES] == [5, 17, 45, 33]


def test_usf_concreteness_source_as_the_paper_words_it(usf):
    """--concreteness usf --concreteness-fallback none: USF's 1-7 ratings, threshold 4, and a
    pair with an unrated word is excluded (section 3.1)."""
    settings = load_settings(load_protocol("simlex"), concreteness="usf", concreteness_fallback="none")
    assert settings.concreteness.active().threshold == 4.0
    conc, origin = common.concreteness_with_fallback(
        "usf", "none", usf, {"usf": settings.concreteness.usf, "brysbaert": settings.concreteness.brysbaert})
    assert set(origin) == {"usf"}
    cue = usf[usf["cue"] == "SUN"].iloc[0]
    assert conc["sun"] == cue["qcon"]
    pool, pairs, report = build_simlex(usf, common.pos_table(settings.pos, usf, None), conc, settings,
                                       np.random.default_rng(1))
    assert pairs[["conc1", "conc2"]].stack().between(1, 7).all()
    assert report["cohorts"]["associated"]["excluded"]["no-concreteness"] > 0
    concrete = pairs["conc1"] > 4.0
    assert set(pairs.loc[concrete, "conc_class"]) <= {"C1", "C2"}
    assert set(pairs.loc[~concrete, "conc_class"]) <= {"C3", "C4"}


def test_brysbaert_with_usf_fallback(usf, brysbaert, defaults):
    """A word Brysbaert et al. lack takes its USF rating mapped linearly onto 1-5; the paper's
    threshold 4 on 1-7 maps onto the protocol's 3 on 1-5."""
    settings, _, conc = defaults
    usf_conc, brys = common.usf_concreteness(usf), common.brysbaert_concreteness()
    assert conc["sun"] == pytest.approx(float(brysbaert.loc[brysbaert["word"] == "sun", "conc_m"].iloc[0]))
    lacking = usf_conc.index.difference(brys.index)
    assert len(lacking) > 0
    for word in lacking:
        assert conc[word] == pytest.approx(1 + (usf_conc[word] - 1) * 4 / 6, abs=1e-6)
    assert common.rescale_concreteness(pd.Series([1.0, 4.0, 7.0]), settings.concreteness.usf,
                                       settings.concreteness.brysbaert).tolist() == [1.0, 3.0, 5.0]
    assert settings.concreteness.brysbaert.threshold == 3.0
    assert set(conc.index) == set(usf_conc.index) | set(brys.index)


def test_penn_tag_counts_apply_the_75_percent_rule(usf):
    settings = load_settings(load_protocol("simlex"), pos_source="penn")
    pos = common.pos_table(settings.pos, usf, base=None)
    assert pos.loc["light", "share"] < 0.75  # "light" is split between noun, adjective, verb
    pool = associated_pool(usf, pos, common.usf_concreteness(usf), settings)
    assert (pool["excluded"] == "pos-tendency").sum() > 0
    light = pool[(pool["word1"] == "light") & (pool["excluded"] != "")]
    assert len(light) and (light["excluded"].isin(["pos-tendency", "multi-word", "pattern",
                                                   "same-word", "no-pos"])).all()


def test_tagged_corpus_source(tmp_path, usf):
    corpus = tmp_path / "tagged.txt"
    corpus.write_text("The/DT dog/NN chased/VBD a/DT cat/NN ./. \nDogs/NNS bark/VBP ./.\n"
                      "dog/NN cat/NN cat/VB\n", encoding="utf-8")
    settings = load_settings(load_protocol("simlex"), tagged_corpus=(str(corpus),))
    assert settings.pos.source == "corpus"
    pos = common.pos_table(settings.pos, usf, base=None)
    assert pos.loc["dog", "pos"] == "N" and pos.loc["cat", "share"] == pytest.approx(2 / 3)
    pool = associated_pool(usf, pos, common.usf_concreteness(usf), settings)
    dog_cat = pool[(pool["word1"] == "dog") & (pool["word2"] == "cat")]
    assert list(dog_cat["excluded"]) == ["pos-tendency"]  # cat is only 67 % noun here
    assert (pool["excluded"] == "no-pos").sum() > 60000  # words the tiny corpus never saw


@pytest.mark.parametrize("table,message", [
    ("[build]\nthreshold = 4\n", r"\[build\] threshold: allowed keys .*, given an unknown key"),
    ("[build.associated]\nX = 3\n", r"\[build\.associated\] X: allowed keys N \| V \| A, given an unknown key"),
    ("[build.pos]\nsource = \"bnc\"\n", r"\[build\.pos\] source: allowed 'usf' \| 'penn' \| 'semcor' \| 'corpus' or a list of .*, given 'bnc'"),
    ("[build.pos]\nsource = [\"penn\", \"penn\"]\n", r"\[build\.pos\] source: allowed one or more different sources, given \['penn', 'penn'\]"),
    ("[build]\norientation = \"left\"\n", r"\[build\] orientation: allowed 'target-cue' \| 'cue-target', given 'left'"),
    ("[build.concreteness]\nclass_direction = \"down\"\n", r"\[build\.concreteness\] class_direction: allowed 'any' \| 'required', given 'down'"),
    ("[build.concreteness]\nclass_allocation = \"pool\"\n",
     r"\[build\.concreteness\] class_allocation: allowed 'equal' \| 'proportional', given 'pool'"),
    ("[build.concreteness.usf]\nscale = [1.0, 7.0]\nthreshold = \"4\"\n",
     r"\[build\.concreteness\.usf\] threshold: allowed a number, given '4'"),
])
def test_bad_protocol_is_one_line_error(tmp_path, table, message):
    protocol = tmp_path / "mine.toml"
    protocol.write_text('name = "mine"\n' + table, encoding="utf-8")
    result = CliRunner().invoke(cli, ["build", "simlex", "--protocol", str(protocol),
                                      "--out", str(tmp_path / "out")])
    assert result.exit_code == 1
    assert len(result.output.strip().splitlines()) == 1
    assert re.search(r"^Error: .*mine\.toml.*" + message, result.output), result.output
    assert not (tmp_path / "out").exists()


def test_scale_violations_are_named(usf):
    with pytest.raises(InputError, match=r"outside the protocol's scale \[1\.0, 5\.0\]"):
        common.concreteness_table("usf", usf, common.ConcretenessScale([1.0, 5.0], 3.0))


def test_help_has_an_example():
    result = CliRunner().invoke(cli, ["build", "simlex", "--help"])
    assert result.exit_code == 0 and "lexgold build simlex --seed 1 --out simlex-out" in result.output
    assert "--concreteness" in result.output and "--pos-source" in result.output
    assert "--concreteness-fallback" in result.output


# -- the rules on small real USF cases -------------------------------------------------------------
def _usf_rows(usf, pairs):
    """The USF rows of the given (cue, target) pairs, upper case as in the norms."""
    keys = {(c.upper(), t.upper()) for c, t in pairs}
    return usf[[k in keys for k in zip(usf["cue"], usf["target"])]].reset_index(drop=True)


def test_orientation_word1_is_the_usf_target(usf, defaults):
    """SimLex-999 prints `old, new` with Assoc(USF) 7.25 = 10 x FSG(new -> old): USF's row
    NEW -> OLD becomes word1 = old (the target), word2 = new (the cue), fsg its FSG."""
    settings, pos, conc = defaults
    rows = _usf_rows(usf, [("new", "old"), ("old", "new")])
    pool = associated_pool(rows, pos, conc, settings)
    new_old = rows.index[(rows["cue"] == "NEW") & (rows["target"] == "OLD")][0]
    assert (pool.loc[new_old, "word1"], pool.loc[new_old, "word2"]) == ("old", "new")
    assert pool.loc[new_old, "fsg"] == rows.loc[new_old, "fsg"]
    assert round(10 * pool.loc[new_old, "fsg"], 2) == 7.25
    assert pool.loc[new_old, "conc1"] == conc["old"] and pool.loc[new_old, "conc2"] == conc["new"]
    cue_first = associated_pool(rows, pos, conc, dataclasses.replace(settings, orientation="cue-target"))
    assert (cue_first.loc[new_old, "word1"], cue_first.loc[new_old, "word2"]) == ("new", "old")


def test_orientation_decides_the_class(usf, defaults):
    """COURAGE -> LION: the target lion is concrete, the cue courage abstract. With word1 = target
    the first item is concrete (C1/C2); with word1 = cue it is abstract (C3/C4)."""
    settings, pos, conc = defaults
    assert conc["lion"] > 3 >= conc["courage"]
    rows = _usf_rows(usf, [("courage", "lion"), ("compassion", "heart"), ("idea", "brain")])
    for orientation, family in (("target-cue", {"C1", "C2"}), ("cue-target", {"C3", "C4"})):
        pool = associated_pool(rows, pos, conc, dataclasses.replace(settings, orientation=orientation))
        pool, _ = assign_classes(pool, 3.0)
        assert (pool["excluded"] == "").all(), pool
        assert set(pool["conc_class"]) <= family


def test_semcor_tag_counts_by_hand(tmp_path):
    """cntlist.rev lines `sense_key sense_number tag_count`; the sense key's type digit is the POS
    (1 noun, 2 verb, 3 adjective, 4 adverb, 5 adjective satellite)."""
    path = tmp_path / "cntlist.rev"
    path.write_text("light%1:19:00:: 1 12\nlight%3:00:01:: 1 8\nlight%5:00:00:pale:00 2 3\n"
                    "light%2:43:00:: 1 2\nlight%4:02:00:: 1 1\nhot_dog%1:13:01:: 1 1\n", encoding="utf-8")
    counts = semcor_tag_counts(path)
    assert counts.loc["light"].tolist() == [12, 2, 11, 1]
    assert counts.loc["hot_dog"].tolist() == [1, 0, 0, 0]
    total = sum_counts([counts, counts.loc[["light"]] * 2])
    assert total.loc["light"].tolist() == [36, 6, 33, 3] and total.loc["hot_dog", "N"] == 1
    path.write_text("light 1\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"cntlist\.rev:1: not a `lemma%type"):
        semcor_tag_counts(path)


def test_pos_tendency_rule_is_real_by_default(usf, defaults):
    """Penn Treebank + SemCor tag counts: `light` (noun, adjective and verb) is below 75 % and its
    pairs go as pos-tendency; `dog` and `cat` lean to the noun; the one-tag USF source would
    let every word through, so the builder warns about it."""
    settings, pos, conc = defaults
    assert common.pos_sources(settings.pos) == ["penn", "semcor"]
    penn = penn_tag_counts()
    semcor = semcor_tag_counts(wordnet_file("cntlist.rev"))
    light = penn.loc["light"] + semcor.loc["light"]
    assert pos.loc["light", "share"] == pytest.approx(light.max() / light.sum()) and light.max() / light.sum() < 0.75
    assert pos.loc["dog", "pos"] == pos.loc["cat", "pos"] == "N"
    rows = _usf_rows(usf, [("dog", "cat"), ("dark", "light"), ("lamp", "light")])
    pool = associated_pool(rows, pos, conc, settings)
    by_pair = dict(zip(zip(pool["word1"], pool["word2"]), pool["excluded"]))
    assert by_pair == {("cat", "dog"): "", ("light", "dark"): "pos-tendency",
                       ("light", "lamp"): "pos-tendency"}
    assert one_tag_per_word(usf_pos_counts(usf)) and not one_tag_per_word(penn)
    usf_only = load_settings(load_protocol("simlex"), pos_source=("usf",))
    assert "drops nothing" in common.one_tag_warning(usf_pos_counts(usf), usf_only.pos)
    assert common.one_tag_warning(sum_counts([penn, semcor]), settings.pos) is None


def test_one_tag_source_is_warned_about(tmp_path):
    result = CliRunner().invoke(cli, ["build", "simlex", "--pos-source", "usf", "--seed", "1",
                                      "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert result.stderr.startswith("Warning: POS source usf gives every word a single tag")
    report = json.loads((tmp_path / "report.json").read_text())
    assert len(report["warnings"]) == 1 and "pos-tendency" not in report["cohorts"]["associated"]["excluded"]


def test_simlex_own_pairs_survive_the_rules(built, usf):
    """The published SimLex-999 pairs (gensim's copy) that USF holds: none is lost to a missing
    concreteness rating or to the classes, and at least 85 % are eligible or excluded only by the
    POS-tendency rule (the tag source being a stand-in for the BNC)."""
    gensim = pytest.importorskip("gensim")
    path = Path(gensim.__file__).parent / "test" / "test_data" / "simlex999.txt"
    simlex = pd.read_csv(path, sep="\t", comment="#", header=None, usecols=[0, 1],
                         names=["word1", "word2"], keep_default_na=False)
    pool = pd.read_csv(built / "pool.csv", keep_default_na=False, low_memory=False)
    pool = pool[pool["cohort"] == "associated"]
    reason = dict(zip(zip(pool["word1"], pool["word2"]), pool["excluded"]))
    found = [(a, b) for a, b in zip(simlex["word1"], simlex["word2"]) if (a, b) in reason or (b, a) in reason]
    in_order = [k for k in found if k in reason]
    assert len(in_order) >= 0.97 * len(found)  # SimLex's order is USF's target -> cue
    status = ["" if "" in (reason.get(k), reason.get(k[::-1])) else reason.get(k, reason.get(k[::-1]))
              for k in found]
    assert not {"no-concreteness", "no-class"} & set(status)
    kept = sum(s in ("", "pos-tendency") for s in status)
    assert kept >= 0.85 * len(found)


def test_pos_sources_from_the_command_line(tmp_path):
    protocol = load_protocol("simlex")
    assert load_settings(protocol, pos_source=("semcor", "penn")).pos.source == ["semcor", "penn"]
    assert load_settings(protocol, pos_source=("penn",)).pos.source == "penn"
    assert load_settings(protocol, concreteness_fallback="none").concreteness.fallback == "none"
    # any source in which no word has two tags makes the rule void, not only USF's columns
    corpus = tmp_path / "one-tag.txt"
    corpus.write_text("dog/NN cat/NN runs/VBZ dog/NNS\n", encoding="utf-8")
    settings = load_settings(protocol, tagged_corpus=(str(corpus),))
    counts = common.pos_counts(settings.pos, None, None)
    assert "corpus gives every word a single tag" in common.one_tag_warning(counts, settings.pos)
    corpus.write_text("dog/NN cat/NN runs/VBZ dog/VB\n", encoding="utf-8")
    assert common.one_tag_warning(common.pos_counts(settings.pos, None, None), settings.pos) is None
