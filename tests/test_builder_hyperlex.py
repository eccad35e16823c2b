"""HyperLex builder (Vulic et al. 2017, sections 4.1-4.2, 5) on the real USF norms and WordNet."""

import dataclasses
import json
import re
from importlib import resources

import pandas as pd
import pytest
from click.testing import CliRunner

from lexgold.builder import checking, common
from lexgold.builder.hyperlex import (GroupScale, HyperLexBuild, NoRelPool, Resources,
                                      build_hyperlex, candidate_pool, concreteness_groups,
                                      labeller_for, load_settings, read_word_list, run_hyperlex)
from lexgold.cli import cli
from lexgold.errors import InputError
from lexgold.protocols import load_protocol

OFFENSIVE = str(resources.files("lexgold.protocols") / "offensive_en.txt")
TINY = f"""name = "tiny-hyperlex"
[build]
offensive_lists = ["{OFFENSIVE}"]
min_checkers = 3
[build.step1.N]
hyp-1 = 3
cohyp = 2
[build.step1.V]
syn = 2
[build.step2.N]
rhyp-1 = 2
no-rel = 2
"""


@pytest.fixture(scope="module")
def settings():
    return load_settings(load_protocol("hyperlex"))


@pytest.fixture(scope="module")
def res(usf, wordnet, settings):
    return Resources(usf, labeller_for(wordnet, settings), common.usf_concreteness(usf),
                     read_word_list(OFFENSIVE), common.proper_noun_detector(wordnet))


@pytest.fixture(scope="module")
def pool(res, settings):
    return candidate_pool(res.usf, settings, res.labeller, res.offensive, res.is_proper)


@pytest.fixture(scope="module")
def draft(tmp_path_factory):
    """A full build without the human check (every drawn pair accepted), through the CLI."""
    out = tmp_path_factory.mktemp("hyperlex") / "draft"
    result = CliRunner().invoke(cli, ["build", "hyperlex", "--seed", "5", "--no-check", "--out", str(out)])
    assert result.exit_code == 0, result.output
    (out.parent / "closing-note.txt").write_text(result.stdout, encoding="utf-8")
    return out


@pytest.fixture(scope="module")
def usf_pairs(usf):
    return set(zip(usf["cue"].str.lower(), usf["target"].str.lower()))


def test_packaged_quotas_are_the_schema_defaults(settings):
    assert dataclasses.asdict(settings) == dataclasses.asdict(HyperLexBuild())
    total = {pos: sum(settings.step1[pos].values()) + sum(settings.step2[pos].values())
             for pos in ("N", "V")}
    assert total == {"N": 2163, "V": 453}  # the paper's 2,616 pairs


#: hyperlex-all.txt counted per relation and POS (N, V), as hyperlex.toml's Decision says
RELEASED_CELLS = {"hyp-1": (287, 97), "hyp-2": (241, 49), "hyp-3": (254, 35), "hyp-4": (222, 20),
                  "cohyp": (242, 50), "mero": (241, 0), "syn": (165, 29), "ant": (68, 30),
                  "rhyp-1": (73, 25), "rhyp-2": (53, 20), "rhyp-3": (60, 15), "rhyp-4": (40, 10),
                  "no-rel": (217, 73)}


def test_quotas_per_relation_and_pos(settings):
    """The default quotas are the released cell counts; every cell, not only the totals."""
    quotas = {pos: {**settings.step1[pos], **settings.step2.get(pos, {})} for pos in ("N", "V")}
    assert settings.quotas == "release"
    assert {r: (quotas["N"].get(r, 0), quotas["V"].get(r, 0)) for r in RELEASED_CELLS} == RELEASED_CELLS
    assert "mero" not in quotas["V"]  # section 4.1: nouns only
    assert quotas["V"]["rhyp-4"] / 50 > 2 * quotas["V"]["hyp-4"] / 242  # not hyp-4's verb share


def test_derived_quotas_stay_a_key(tmp_path):
    """quotas = "derived": the totals split as rhyp-N keeping its hyp-N's verb share."""
    path = tmp_path / "derived.toml"
    path.write_text('name = "d"\n[build]\nquotas = "derived"\n', encoding="utf-8")
    settings = load_settings(load_protocol(path))
    quotas = {pos: {**settings.step1[pos], **settings.step2.get(pos, {})} for pos in ("N", "V")}
    totals = {r: sum(cell) for r, cell in RELEASED_CELLS.items()}
    assert {r: quotas["N"].get(r, 0) + quotas["V"].get(r, 0) for r in totals} == totals
    for n in (1, 2, 3, 4):
        share = quotas["V"][f"hyp-{n}"] / totals[f"hyp-{n}"]
        assert abs(quotas["V"][f"rhyp-{n}"] - share * totals[f"rhyp-{n}"]) < 1
    assert (quotas["V"]["rhyp-4"], quotas["V"]["hyp-3"]) == (4, 48)
    path.write_text('name = "d"\n[build]\nquotas = "paper"\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"\[build\] quotas: allowed 'release' \| 'derived', given 'paper'"):
        load_settings(load_protocol(path))
    # a table given in the protocol replaces that step of the named quotas
    path.write_text('name = "d"\n[build.step1.N]\nmero = 5\n', encoding="utf-8")
    settings = load_settings(load_protocol(path))
    assert settings.step1 == {"N": {"mero": 5}} and settings.step2["V"]["rhyp-4"] == 10


@pytest.mark.slow                   # a whole HyperLex build
def test_whole_part_usf_pairs_become_mero_part_whole(usf, res, settings):
    """Section 4.1: mero has X the part. USF cues often name the whole (ALPHABET -> LETTERS);
    such a pair, cohyp or no-rel in USF order, is a mero candidate part -> whole."""
    wanted = [("ALPHABET", "LETTERS"),   # no-rel in USF order; letter is a member of alphabet
              ("AIR", "OXYGEN"),         # cohyp in USF order; oxygen a substance of air
              ("FINGER", "HAND"), ("HAND", "FINGER"),  # both orders in USF: one kept
              ("CAR", "WHEEL")]          # cohyp both ways: stays cohyp
    rows = usf[[(c, t) in wanted for c, t in zip(usf["cue"], usf["target"])]]
    assert len(rows) == 5
    pool = candidate_pool(rows, settings, res.labeller, res.offensive, res.is_proper)
    cues = usf.loc[pool.index, "cue"].str.lower()
    got = {(cue, r.word1, r.word2): (r.relation, r.usf_relation, r.reversed, r.excluded)
           for cue, r in zip(cues, pool.itertuples())}
    assert got[("alphabet", "letters", "alphabet")] == ("mero", "rmero", True, "")
    assert got[("air", "oxygen", "air")] == ("mero", "rmero", True, "")
    assert got[("finger", "finger", "hand")] == ("mero", "mero", False, "")  # first in USF
    assert got[("hand", "finger", "hand")] == ("mero", "rmero", True, "duplicate")
    assert got[("car", "car", "wheel")] == ("cohyp", "cohyp", False, "")


def test_noun_mero_pool_reaches_its_quota(pool, settings):
    mero = pool[(pool["excluded"] == "") & (pool["relation"] == "mero")]
    assert len(mero) >= settings.step1["N"]["mero"] == 241
    # 138 kept rows are USF's whole -> part order; 88 pairs are new to the pool, the other 50
    # also have a part -> whole row in USF, later in USF order and now their duplicate
    assert (mero["usf_relation"] == "rmero").sum() == 138
    assert len(mero) == 234 + 88


def test_pool_labels_follow_the_protocol(pool, wordnet, tmp_path):
    """The packaged protocol: first-sense levels and antonyms from both words."""
    rows = pool.set_index(["word1", "word2"])
    # USF has enemy -> friend (62 participants) and friend -> enemy; only friend's lemma points
    # at its antonym, yet both orders are ant, so the first kept is an ant candidate
    assert rows.loc[("enemy", "friend"), "relation"] == "ant"
    assert rows.loc[("enemy", "friend"), "excluded"] == ""
    assert rows.loc[("friend", "enemy"), "excluded"] == "duplicate"
    # USF's vehicle -> car is rhyp-4 (from car.n.01, the first sense), reversed into hyp-4
    assert rows.loc[("car", "vehicle"), ["usf_relation", "relation"]].tolist() == ["rhyp-4", "hyp-4"]
    path = tmp_path / "literal.toml"
    path.write_text('name = "literal"\n[build]\nsense_policy = "shortest-path"\n'
                    'antonyms = ["lemma"]\n', encoding="utf-8")
    literal = labeller_for(wordnet, load_settings(load_protocol(path)))
    assert literal.relation("car", "vehicle", "N") == "hyp-2"
    assert literal.relation("depart", "arrive", "V") == "no-rel"
    assert labeller_for(wordnet, HyperLexBuild()).relation("depart", "arrive", "V") == "ant"


def test_pool_filters(pool, usf, res):
    candidates = pool[pool["excluded"] == ""]
    rows = usf.loc[candidates.index]
    assert (rows["qps"] == rows["tps"]).all() and set(rows["qps"]) == {"N", "V"}
    assert (rows["n_participants"] >= 3).all()  # "two or fewer participants" dropped
    words = pd.concat([candidates["word1"], candidates["word2"]])
    assert words.str.fullmatch("[a-z]+").all()
    assert not words.isin(res.offensive).any()
    assert not words.isin(["europe", "florida", "christmas"]).any()  # named entities
    assert "no-rel" not in set(candidates["relation"])
    assert not candidates["relation"].str.startswith("rhyp").any()
    keys = [frozenset(p) for p in zip(candidates["word1"], candidates["word2"])]
    assert len(set(keys)) == len(keys)  # one of (X, Y) / (Y, X)
    few = pool.loc[(usf["n_participants"] <= 2).fillna(False).astype(bool)]
    assert set(few["excluded"]) <= {"pos", "few-participants"}


def test_pool_relations_and_reversal(pool, res):
    candidates = pool[pool["excluded"] == ""]
    sample = candidates.sample(300, random_state=1)
    assert all(res.labeller.relation(a, b, p) == r for a, b, p, r in
               zip(sample["word1"], sample["word2"], sample["pos"], sample["relation"]))
    flipped = pool[pool["reversed"]]
    assert len(flipped) and flipped["usf_relation"].str.match("rhyp-|rmero$").all()
    assert (flipped["relation"] == flipped["usf_relation"].str[1:]).all()
    usf = res.usf.loc[flipped.index]
    assert (flipped["word1"] == usf["target"].str.lower()).all()
    # the reason order of the paper: pairs of other POS never reach the relation labeller
    assert (pool.loc[pool["excluded"] == "pos", "usf_relation"] == "").all()


def test_offensive_words_dropped_but_the_list_is_a_parameter(pool, usf, settings, res):
    offensive = pool[pool["excluded"] == "offensive"]
    assert len(offensive) > 0
    assert (offensive["word1"].isin(res.offensive) | offensive["word2"].isin(res.offensive)).all()
    kept = candidate_pool(usf, settings, res.labeller, set(), res.is_proper)
    assert "offensive" not in set(kept["excluded"])


def test_no_check_build_meets_quotas_where_pools_allow(draft, settings):
    report = json.loads((draft / "report.json").read_text())
    pairs = pd.read_csv(draft / "pairs.csv", keep_default_na=False)
    for record in report["step1"] + report["step2"]:
        pool_size = record["pool"] if isinstance(record["pool"], int) else 10 ** 9
        assert record["accepted"] == min(record["quota"], pool_size), record
        assert record["shortfall"] == record["quota"] - record["accepted"]
    counts = pairs.groupby(["pos", "relation"]).size()
    for step in (settings.step1, settings.step2):
        for pos, quotas in step.items():
            for relation, quota in quotas.items():
                assert counts.get((pos, relation), 0) <= quota
    assert report["quota_shortfall"] == sum(r["shortfall"] for r in report["step1"] + report["step2"])
    assert report["pairs"] == len(pairs) == 2616 - report["quota_shortfall"]
    assert (pairs["check"] == "unchecked").all()
    assert pairs[["word1", "word2"]].stack().str.fullmatch("[a-z]+").all()


def test_closing_note_counts_per_relation_and_pos(draft):
    """The released quotas met but for V hyp-4, whose pool has 18 pairs; the note says so."""
    lines = (draft.parent / "closing-note.txt").read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("2614 pairs accepted (N 2163, V 451); complete without")
    assert lines[1] == ("per relation (N / V): hyp-1 287/97, hyp-2 241/49, hyp-3 254/35, "
                        "hyp-4 222/18, rhyp-1 73/25, rhyp-2 53/20, rhyp-3 60/15, rhyp-4 40/10, "
                        "syn 165/29, ant 68/30, mero 241/0, cohyp 242/50, no-rel 217/73")
    assert lines[2] == "short: V hyp-4: short by 2 (quota 20, pool 18; 18 accepted)"
    report = json.loads((draft / "report.json").read_text())
    assert report["pairs_by_relation_and_pos"]["mero"] == {"N": 241, "V": 0}


def test_step2_pairs(draft, res, usf_pairs, settings):
    pairs = pd.read_csv(draft / "pairs.csv", keep_default_na=False)
    step1 = pairs[pairs["step"] == 1]
    hyp = set(zip(step1["word1"], step1["word2"], step1["pos"], step1["relation"]))
    for row in pairs[pairs["relation"].str.startswith("rhyp-")].itertuples():
        assert (row.word2, row.word1, row.pos, row.relation[1:]) in hyp
        # rhyp-N, or hyp-N when WordNet also has an equally short path the other way round
        assert res.labeller.relation(row.word1, row.word2, row.pos) in {row.relation, row.relation[1:]}
    cues = set(res.usf["cue"].str.lower())
    no_rel = pairs[pairs["relation"] == "no-rel"]
    assert len(no_rel) == sum(quotas.get("no-rel", 0) for quotas in settings.step2.values())
    for row in no_rel.itertuples():
        words = set(step1.loc[step1["pos"] == row.pos, "word1"]) | set(step1.loc[step1["pos"] == row.pos, "word2"])
        assert {row.word1, row.word2} <= words  # Cartesian product of step-1 words
        assert (row.word1, row.word2) not in usf_pairs and (row.word2, row.word1) not in usf_pairs
        assert row.word1 in cues and row.word2 in cues
        assert res.labeller.relation(row.word1, row.word2, row.pos) == "no-rel"


def test_same_seed_same_bytes(draft, tmp_path):
    run_hyperlex(tmp_path, seed=5, no_check=True)
    for name in ("pool.csv", "pairs.csv", "report.json"):
        assert (tmp_path / name).read_bytes() == (draft / name).read_bytes(), name
    manifest = json.loads((draft / "report.json").read_text())["manifest"]
    assert manifest["seed"] == 5 and manifest["protocol"]["file"] == "hyperlex.toml"
    assert {"usf_appendix_a", "wordnet", "offensive_lists"} <= set(manifest["resources"])
    assert manifest["resources"]["offensive_lists"][0]["file"] == "offensive_en.txt"


def test_concreteness_groups_by_hand():
    conc1 = pd.Series([5.0, 2.0, 4.5, 6.0, None, 4.0])
    conc2 = pd.Series([6.5, 3.9, 3.8, 2.0, 5.0, 3.0])
    groups = concreteness_groups(conc1, conc2, GroupScale([1.0, 7.0], 4.0, 1.0))
    # both >= 4 | both < 4 | mixed, 0.7 apart | mixed, 4 apart | missing | 4.0 counts as concrete
    assert list(groups) == ["G1", "G2", "G3", "G4", "", "G3"]


# -- the human check -----------------------------------------------------------------------------
def _tiny(tmp_path):
    path = tmp_path / "tiny.toml"
    path.write_text(TINY, encoding="utf-8")
    return path


def _fill(sheet: pd.DataFrame, path, checker, answers):
    filled = sheet.copy()
    filled["checker"], filled["agree"] = checker, answers
    filled.to_csv(path, index=False)
    return path


def test_check_rounds_replace_rejected_pairs(tmp_path, res, pool, usf_pairs):
    tiny = load_settings(load_protocol(_tiny(tmp_path)))
    empty = checking.read_sheets([])
    _, pairs, to_check, report = build_hyperlex(res, tiny, 9, empty, pool)
    assert len(pairs) == 0 and list(to_check["step"]) == [1] * 7
    assert report["status"].startswith("awaiting the human check of 7 pairs (step 1)")
    sheet = checking.sheet(to_check, 1, {})
    assert list(sheet.columns) == checking.SHEET_COLUMNS
    rejected = tuple(to_check.iloc[0][["word1", "word2", "pos", "relation"]])
    # pair 0: 2 of 3 say no -> rejected; pair 6: only 2 checkers so far -> still to check
    files = [_fill(sheet, tmp_path / "a.csv", "alice", ["no"] + ["yes"] * 6),
             _fill(sheet, tmp_path / "b.csv", "bob", ["no"] + ["yes"] * 6),
             _fill(sheet, tmp_path / "c.csv", "carol", ["yes"] * 6 + [""])]
    verdicts = checking.read_sheets(files)
    _, pairs, to_check, report = build_hyperlex(res, tiny, 9, verdicts, pool)
    assert len(pairs) == 5 and rejected not in set(zip(pairs.word1, pairs.word2, pairs.pos, pairs.relation))
    assert len(to_check) == 2 and set(to_check["step"]) == {1}
    waiting = tuple(sheet.iloc[6][["word1", "word2", "pos", "relation"]])
    keys = [tuple(k) for k in to_check[["word1", "word2", "pos", "relation"]].to_numpy()]
    assert waiting in keys  # judged by two checkers only: asked again
    (replacement,) = [k for k in keys if k != waiting]
    assert replacement[2:] == rejected[2:] and replacement != rejected  # same pool, new pair
    assert report["step2"] == "waits until every step-1 pair is checked"
    # round 2: everyone agrees with the rest -> step 1 settled, step 2 drawn
    sheet2 = checking.sheet(to_check, 2, checking.votes(verdicts))
    assert sorted(sheet2["votes_so_far"]) == ["", "2 of 2 agree"]
    new = sheet2["votes_so_far"] == ""
    more = [_fill(sheet2[new], tmp_path / f"{n}2.csv", n, ["yes"]) for n in ("alice", "bob")]
    more.append(_fill(sheet2, tmp_path / "carol2.csv", "carol", ["yes", "yes"]))
    verdicts = checking.merge_verdicts(verdicts, checking.read_sheets(more))
    _, pairs, to_check, report = build_hyperlex(res, tiny, 9, verdicts, pool)
    assert len(pairs) == 7 and set(to_check["step"]) == {2}
    assert sorted(to_check["relation"]) == ["no-rel", "no-rel", "rhyp-1", "rhyp-1"]
    hyp = set(zip(pairs.word1, pairs.word2))
    for row in to_check.itertuples():
        if row.relation == "rhyp-1":
            assert (row.word2, row.word1) in hyp
        else:
            assert (row.word1, row.word2) not in usf_pairs and (row.word2, row.word1) not in usf_pairs
    sheet3 = checking.sheet(to_check, 3, {})
    last = [_fill(sheet3, tmp_path / f"{n}3.csv", n, ["yes"] * 4) for n in ("alice", "bob", "carol")]
    verdicts = checking.merge_verdicts(verdicts, checking.read_sheets(last))
    _, pairs, to_check, report = build_hyperlex(res, tiny, 9, verdicts, pool)
    assert report["status"] == "complete" and len(to_check) == 0
    assert len(pairs) == 11 and (pairs["check"] == "3 of 3 agree").all()
    assert report["human_check"]["checkers"] == ["alice", "bob", "carol"]


def test_majority_rule():
    rows = [("x", "y", "N", "syn", c, a, 1, "s") for c, a in
            [("a", True), ("b", True), ("c", False), ("d", False)]]
    verdicts = pd.DataFrame(rows, columns=checking.VERDICT_COLUMNS)
    assert checking.tally_verdicts(verdicts, 4) == {("x", "y", "N", "syn"): "rejected"}  # a tie rejects
    assert checking.tally_verdicts(verdicts, 5) == {}  # not enough checkers yet
    assert checking.tally_verdicts(verdicts.iloc[:3], 3) == {("x", "y", "N", "syn"): "accepted"}


def test_sheet_errors_name_file_line_field(tmp_path):
    sheet = tmp_path / "s.csv"
    sheet.write_text("word1,word2,pos,relation,agree,checker\nx,y,N,syn,yes,a\nx,z,N,syn,maybe,a\n")
    with pytest.raises(InputError, match=r"s\.csv:3, field 'agree': expected yes or no, found 'maybe'"):
        checking.read_sheets([sheet])
    sheet.write_text("word1,word2,pos,agree\nx,y,N,yes\n")
    with pytest.raises(InputError, match=r"s\.csv:1, field 'relation': missing column"):
        checking.read_sheets([sheet])
    sheet.write_text("word1,word2,pos,relation,agree,checker\nx,y,N,syn,yes,a\n")
    with pytest.raises(InputError, match=r"s\.csv:2: x / y \(N, syn\) is not a pair this build drew"):
        checking.read_sheets([sheet], known=lambda *key: False)
    other = tmp_path / "t.csv"
    other.write_text("word1,word2,pos,relation,agree,checker\nx,y,N,syn,no,a\n")
    with pytest.raises(InputError, match=r"t\.csv:2, field 'agree': a judged x / y \(syn\) both ways"):
        checking.read_sheets([sheet, other])
    again = checking.read_sheets([sheet, sheet])  # the same verdict twice counts once
    assert len(again) == 1 and again["checker"].tolist() == ["a"]


def report_sheet(out):
    return json.loads((out / "report.json").read_text())["human_check"]["sheet"]


def test_check_workflow_through_the_command_line(tmp_path):
    protocol, out = _tiny(tmp_path), tmp_path / "out"
    runner = CliRunner()
    first = runner.invoke(cli, ["build", "hyperlex", "--protocol", str(protocol), "--seed", "2",
                                "--out", str(out)])
    assert first.exit_code == 0, first.output
    assert "next sheet: check-round-1.csv" in first.output
    sheet = pd.read_csv(out / "check-round-1.csv", dtype=str, keep_default_na=False)
    assert len(sheet) == 7 and sheet["question"].str.contains("is a type of|two kinds|mean the same").all()
    verb = sheet[sheet["pos"] == "V"].iloc[0]
    assert verb["question"].startswith(f"'to {verb['word1']}'")
    names = []
    for name in ("ann", "ben", "cy"):  # checker column left blank: the file name is used
        path = tmp_path / f"{name}.csv"
        sheet.assign(agree="yes").to_csv(path, index=False)
        names += ["--checked", str(path)]
    second = runner.invoke(cli, ["build", "hyperlex", "--protocol", str(protocol), "--seed", "2",
                                 "--out", str(out), *names])
    assert second.exit_code == 0, second.output
    assert (out / "check-round-2.csv").exists()
    assert report_sheet(out) == "check-round-2.csv"
    assert len(pd.read_csv(out / "checks.csv")) == 21
    assert len(pd.read_csv(out / "pairs.csv")) == 7
    step2 = pd.read_csv(out / "check-round-2.csv")
    assert set(step2["step"]) == {2} and set(step2["round"]) == {2}
    report = json.loads((out / "report.json").read_text())
    assert report["human_check"]["checkers"] == ["ann", "ben", "cy"]
    bad = tmp_path / "bad.csv"
    sheet.assign(agree="perhaps").to_csv(bad, index=False)
    third = runner.invoke(cli, ["build", "hyperlex", "--protocol", str(protocol), "--seed", "2",
                                "--out", str(out), "--checked", str(bad)])
    assert third.exit_code == 1
    assert re.match(r"Error: .*bad\.csv:2, field 'agree': expected yes or no", third.output)
    assert len(pd.read_csv(out / "checks.csv")) == 21  # nothing recorded lost


@pytest.mark.parametrize("table,message", [
    ("[build.step1.N]\nrhyp-1 = 3\n", r"\[build\.step1\.N\] rhyp-1: allowed relations .*hyp-1 .*, given 'rhyp-1'"),
    ("[build.step2.A]\nno-rel = 3\n", r"\[build\.step2\] A: allowed keys N \| V, given an unknown key"),
    ("[build]\nnamed_entities = \"spacy\"\n", r"\[build\] named_entities: allowed 'wordnet' \| 'none', given 'spacy'"),
    ("[build]\nmin_participant = 3\n", r"\[build\] min_participant: allowed keys .*, given an unknown key"),
    ("[build]\nsense_policy = \"longest\"\n", r"\[build\] sense_policy: allowed 'first-sense' \| 'shortest-path', given 'longest'"),
    ("[build]\nantonyms = [\"similar\"]\n", r"\[build\] antonyms\[0\]: allowed 'lemma' \| 'synset' \| 'verb-group' \| 'derivation', given 'similar'"),
])
def test_bad_protocol_keys(tmp_path, table, message):
    path = tmp_path / "p.toml"
    path.write_text('name = "p"\n' + table, encoding="utf-8")
    with pytest.raises(InputError, match=message):
        load_settings(load_protocol(path))


def test_no_rel_pool_reasons(res):
    pool = NoRelPool(res.usf, res.labeller)
    assert pool.reason("dog", "cat", "N") == "in-usf"
    assert pool.reason("cathedral", "building", "N") == "in-usf"
    assert pool.reason("church", "building", "N") == "wordnet-hyp-2"  # both USF cues, not a USF pair
    assert pool.reason("chimney", "swan", "N") == ""
    assert pool.reason("car", "window", "N") == "wordnet-rmero"  # window is part of car: not no-rel


def test_duplicates_are_judged_among_kept_pairs(pool, usf):
    """(X, Y) dropped for another reason leaves (Y, X) in; a kept pair's reverse is a duplicate."""
    kept = pool[pool["excluded"] == ""]
    kept_keys = {frozenset(p) for p in zip(kept["word1"], kept["word2"])}
    duplicates = pool[pool["excluded"] == "duplicate"]
    assert len(duplicates) > 0
    assert all(frozenset(p) in kept_keys for p in zip(duplicates["word1"], duplicates["word2"]))
    few = pool[pool["excluded"] == "few-participants"]
    few_keys = {frozenset(p) for p in zip(few["word1"], few["word2"])}
    rescued = [k for k in kept_keys if k in few_keys]
    assert rescued  # pairs whose other order had too few participants are still candidates


def test_closing_note_before_the_human_check():
    """Round 1 (every pair awaiting the check): no empty per-relation line, and a shortfall
    says what is short of what (issue 34 item 6)."""
    from lexgold.builder.hyperlex import closing_note

    report = {"pairs": 0, "pairs_by_pos": {"N": 0, "V": 0},
              "status": "awaiting the human check of 2616 pairs (step 1)",
              "pairs_by_relation_and_pos": {"hyp-1": {"N": 0, "V": 0}, "syn": {"N": 0, "V": 0}},
              "shortfalls": ["V hyp-4: short by 2 (quota 20, pool 18; 0 accepted)"]}
    lines = closing_note(report).splitlines()
    assert lines[1] == "per relation (N / V): none accepted yet"
    assert lines[2] == "short: V hyp-4: short by 2 (quota 20, pool 18; 0 accepted)"
