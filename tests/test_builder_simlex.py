"""SimLex-999 builder (Hill et al. 2015, section 3.1) on the real USF norms."""

import json
import re

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from lexgold.builder import common
from lexgold.builder.simlex import (CLASSES, assign_classes, associated_pool,
                                    build_simlex, load_settings, run_simlex)
from lexgold.cli import cli
from lexgold.errors import InputError
from lexgold.protocols import load_protocol
from lexgold.resources import pos_tendency, usf_pos_counts


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
    """Recompute C1-C4 by hand from conc1, conc2 and the reported median of |c1 - c2|."""
    for cohort, rows in pairs.groupby("cohort"):
        medians = report["cohorts"][cohort]["median_conc_diff"]
        for row in rows.itertuples():
            c1, c2, m = row.conc1, row.conc2, medians[row.pos]
            d = round(abs(c1 - c2), 6)  # ratings have two decimals
            if c1 > 4:
                expected = "C1" if d <= m else "C2"
                assert expected == "C1" or c2 < c1
            else:
                expected = "C3" if d <= m else "C4"
                assert expected == "C3" or c2 > c1
            assert row.conc_class == expected, row


def test_associated_pairs_come_from_usf_same_pos(pairs, usf, usf_lower):
    tags = pos_tendency(usf_pos_counts(usf))["pos"]
    assoc = pairs[pairs["cohort"] == "associated"]
    assert all((a, b) in usf_lower for a, b in zip(assoc["word1"], assoc["word2"]))
    assert (assoc["word1"].map(tags) == assoc["pos"]).all()
    assert (assoc["word2"].map(tags) == assoc["pos"]).all()
    assert assoc["fsg"].notna().all()
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
    assert {"multi-word", "mixed-pos", "no-concreteness", "capital-letter"} <= set(reasons)
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


def test_another_seed_another_sample(built, usf):
    settings = load_settings(load_protocol("simlex"))
    pos = pos_tendency(usf_pos_counts(usf))
    conc = common.usf_concreteness(usf)
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
    # concrete c1 = 4.5 with a larger c2 = 7 and d = 2.5 > m = 2.25: in no class
    frame.loc[1, ["conc1", "conc2"]] = [4.5, 7.0]
    out, medians = assign_classes(frame, threshold=4.0)
    assert medians == {"N": 2.25}
    assert out.loc[1, "conc_class"] == "" and out.loc[1, "excluded"] == "no-class"


def test_split_quota_spreads_remainders_at_random():
    rng = np.random.default_rng(0)
    seen = set()
    for _ in range(20):
        split = common.split_quota(66, CLASSES, rng)
        assert sum(split.values()) == 66 and set(split.values()) == {16, 17}
        seen.add(tuple(split.values()))
    assert len(seen) > 1
    assert common.split_quota(600, CLASSES, rng) == dict.fromkeys(CLASSES, 150)


def test_brysbaert_concreteness_source(usf, brysbaert):
    settings = load_settings(load_protocol("simlex"), concreteness="brysbaert")
    assert settings.concreteness.active().threshold == 3.0
    conc = common.concreteness_table("brysbaert", usf, settings.concreteness.active())
    assert conc["sun"] == pytest.approx(float(brysbaert.loc[brysbaert["word"] == "sun", "conc_m"].iloc[0]))
    pos = pos_tendency(usf_pos_counts(usf))
    pool, pairs, report = build_simlex(usf, pos, conc, settings, np.random.default_rng(1))
    assert pairs[["conc1", "conc2"]].stack().between(1, 5).all()
    assert len(pairs) == 999 - report["quota_shortfall"]
    concrete = pairs["conc1"] > 3.0
    assert set(pairs.loc[concrete, "conc_class"]) <= {"C1", "C2"}
    assert set(pairs.loc[~concrete, "conc_class"]) <= {"C3", "C4"}


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
    ("[build]\nthreshold = 4\n", r"field 'build\.threshold': unknown key"),
    ("[build.associated]\nX = 3\n", r"field 'build\.associated\.X': expected a POS among N, V, A"),
    ("[build.pos]\nsource = \"bnc\"\n", r"field 'build\.pos\.source': expected one of usf, penn, corpus"),
    ("[build.concreteness.usf]\nscale = [1.0, 7.0]\nthreshold = \"4\"\n",
     r"field 'build\.concreteness\.usf\.threshold': expected float"),
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
        common.concreteness_table("usf", usf, common.Scale([1.0, 5.0], 3.0))


def test_help_has_an_example():
    result = CliRunner().invoke(cli, ["build", "simlex", "--help"])
    assert result.exit_code == 0 and "lexgold build simlex --seed 1 --out simlex-out" in result.output
    assert "--concreteness" in result.output and "--pos-source" in result.output
