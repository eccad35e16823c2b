"""The [study] schema, the pair-set reader and the tranche designer (docs/annotate.md)."""

import re

import numpy as np
import pandas as pd
import pytest

from lexgold.study.design import design_study
from lexgold.study.pairs import check_pairs, read_study_pairs
from lexgold.study.config import Checkpoint, StudyConfig, load_study_config
from lexgold.errors import InputError
from lexgold.protocols import load_protocol


def frame(counts: dict[str, int]) -> pd.DataFrame:
    rows = [{"word1": f"{pos.lower()}{i}a", "word2": f"{pos.lower()}{i}b", "pos": pos}
            for pos, n in counts.items() for i in range(n)]
    return check_pairs(pd.DataFrame(rows))


# -- schema -----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["simlex", "hyperlex", "tr9856"])
def test_packaged_protocols_parse(name):
    config = load_study_config(name)
    assert config.language == "en" and config.direction == "ltr"
    assert config.texts.instructions and all(config.texts.instructions)


def test_paper_values():
    simlex, hyperlex = load_study_config("simlex"), load_study_config("hyperlex")
    assert simlex.consistency == {"N": 14, "V": 4, "A": 2} and simlex.tranches == 10
    assert [(c.before, c.options[c.answer]) for c in simlex.checkpoints] == [
        ("start", ["problem", "difficulty"]), ("start", ["boat", "ship"]),
        ("N", ["bread", "toast"]), ("A", ["cold", "chilly"]), ("V", ["buy", "purchase"])]
    assert hyperlex.duplicates_per_tranche == 9 and hyperlex.qualification is not None
    assert hyperlex.texts.question_by_pos["V"].format(word1="RUN", word2="MOVE") == \
        "Is TO RUN a type of TO MOVE?"
    assert load_study_config("tr9856").task == "binary"


def test_unknown_key_and_bad_value_name_the_key(tmp_path):
    path = tmp_path / "p.toml"
    path.write_text('name = "x"\n[study]\ngroup_size = 7\n')
    with pytest.raises(InputError, match=r"p\.toml: \[study\] group_size: allowed keys .*, given an unknown key"):
        load_study_config(load_protocol(path))
    path.write_text('name = "x"\n[study]\nslider_start = 9\n')
    with pytest.raises(InputError, match=r"\[study\] slider_start: allowed 'random' or an integer on the scale 0\.\.6, given 9"):
        load_study_config(load_protocol(path))
    path.write_text('name = "x"\n[study]\ndirection = "down"\n')
    with pytest.raises(InputError, match=r"\[study\] direction: allowed 'ltr' \| 'rtl', given 'down'"):
        load_study_config(load_protocol(path))
    path.write_text('name = "x"\n[study.texts]\nquestion = "{word3}"\n')
    with pytest.raises(InputError, match=r"\[study\.texts\] question: allowed the placeholders .*, given '\{word3\}'"):
        load_study_config(load_protocol(path))


def test_rtl_language_file(tmp_path):
    path = tmp_path / "he.toml"
    path.write_text('name = "x"\nlanguage = "he"\n[study]\ndirection = "rtl"\n'
                    '[study.texts]\nquestion = "עד כמה דומות {word1} ו-{word2}?"\n')
    config = load_study_config(load_protocol(path))
    assert (config.language, config.direction) == ("he", "rtl")
    assert config.texts.question.format(word1="כלב", word2="חתול").startswith("עד כמה")


# -- pair sets --------------------------------------------------------------------------------

def test_reads_builder_files(tmp_path):
    simlex = tmp_path / "s.csv"
    simlex.write_text("word1,word2,pos,cohort,conc1,conc2,conc_class,fsg\n"
                      "old,new,a,associated,2.1,2.0,C3,0.5\n")
    got = read_study_pairs(simlex)
    assert got.loc[0, ["word1", "word2", "pos"]].tolist() == ["old", "new", "A"]
    assert got.loc[0, "extra"]["conc_class"] == "C3"
    tr = tmp_path / "t.csv"
    tr.write_text("topic,term1,term2,source\nSport,doping,performance enhancing drugs,top\n")
    got = read_study_pairs(tr, group_by="topic")
    assert got.loc[0, ["topic", "word1", "word2"]].tolist() == [
        "Sport", "doping", "performance enhancing drugs"]


@pytest.mark.parametrize("text, message", [
    ("word1,word2\ncat,dog\n", r"field 'pos': missing column"),
    ("word1,word2,pos\ncat,dog,N\n,dog,N\n", r":3, field 'word1': empty value"),
    ("word1,word2,pos\ncat,dog,N\ncat,dog,N\n", r":3, field 'word1': pair listed twice"),
    ("word1,word2,pos,consistency\ncat,dog,N,maybe\n", r":2, field 'consistency'"),
    ("", r"empty file"),
])
def test_bad_pair_files_one_line_errors(tmp_path, text, message):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(InputError, match=message) as err:
        read_study_pairs(path)
    assert "\n" not in str(err.value) and str(path) in str(err.value)


# -- designer ---------------------------------------------------------------------------------

def test_simlex_group_layout_hand_computed():
    """3 N consistency + 11 N unique, one tranche, groups of at most 7 with a calibration
    repeat: 14 pairs + 2 repeats = 16 showings in ceil(13 / 6) = 3 groups of 6, 5, 5."""
    config = StudyConfig(tranches=1, consistency={"N": 3}, checkpoints=[])
    design = design_study(frame({"N": 14}), config, np.random.default_rng(0))
    groups = [s.items for s in design.tranches[0]]
    assert [len(g) for g in groups] == [6, 5, 5]
    assert groups[0][0][1] == "consistency"
    for previous, group in zip(groups, groups[1:]):
        assert group[0] == (previous[-1][0], "calibration")
        assert group[1][1] == "consistency"
    kinds = [k for g in groups for _, k in g]
    assert kinds.count("unique") == 11 and kinds.count("calibration") == 2


def test_simlex_paper_sized_layout():
    """999 pairs, 10 tranches: every tranche has the 20 consistency pairs once, 19-21 POS-pure
    groups of 6-7 (65-66 N, 21-22 V, 10-11 A unique pairs in the fewest groups of at most 7),
    and the 979 unique pairs are all shown exactly once."""
    pairs = frame({"N": 666, "V": 222, "A": 111})
    config = load_study_config("simlex")
    design = design_study(pairs, config, np.random.default_rng(1))
    seen = []
    for steps in design.tranches:
        groups = [s for s in steps if s.kind == "group"]
        assert 19 <= len(groups) <= 21
        assert all(6 <= len(g.items) <= 7 for g in groups)
        assert all(len({pairs.at[i, "pos"] for i, _ in g.items}) == 1 for g in groups)
        cons = [i for g in groups for i, k in g.items if k == "consistency"]
        assert sorted(cons) == sorted(design.consistency)
        # section 3.2: the abstract and the concrete check right after the instructions, then
        # the noun check before the first (noun) group; A and V before their first groups
        assert [s.batch for s in steps if s.kind == "checkpoint"] == ["start", "start", "N",
                                                                      "A", "V"]
        assert [(s.kind, s.checkpoint) for s in steps[:4]] == [
            ("checkpoint", 0), ("checkpoint", 1), ("checkpoint", 2), ("group", None)]
        first = {b: next(k for k, s in enumerate(steps) if s.kind == "group" and s.batch == b)
                 for b in "NAV"}
        assert all(steps[first[b] - 1].batch == b and steps[first[b] - 1].kind == "checkpoint"
                   for b in "NAV")
        seen += [i for g in groups for i, k in g.items if k == "unique"]
    assert sorted(seen) == sorted(set(range(999)) - set(design.consistency))
    assert any("unique pairs per tranche: 97-98" in m for m in design.report["unmet"])


def test_start_checkpoints_open_every_tranche_in_listed_order():
    """Checks with ``before = "start"`` come first in every tranche, in the order listed, wherever
    they stand in the list; the per-POS checks stay before their batch's first group; the
    report counts them all."""
    item = [["a", "b"], ["a", "c"], ["a", "d"]]
    checks = [Checkpoint("V", item, 1), Checkpoint("start", item, 2), Checkpoint("N", item, 0),
              Checkpoint("start", item, 0)]
    config = StudyConfig(tranches=2, consistency={"N": 2, "V": 2}, checkpoints=checks,
                         pos_order=["N", "V"])
    design = design_study(frame({"N": 20, "V": 12}), config, np.random.default_rng(0))
    for steps, row in zip(design.tranches, design.report["per_tranche"]):
        marks = [(s.batch, s.checkpoint) for s in steps if s.kind == "checkpoint"]
        assert marks == [("start", 1), ("start", 3), ("N", 2), ("V", 0)]
        assert [s.kind for s in steps[:4]] == ["checkpoint"] * 3 + ["group"]
        assert row["checkpoints"] == 4
    assert not any("checkpoint" in m for m in design.report["unmet"])


def test_checkpoint_needs_a_place(tmp_path):
    path = tmp_path / "p.toml"
    path.write_text('name = "x"\n[[study.checkpoints]]\nbefore = " "\n'
                    'options = [["a", "b"], ["a", "c"]]\nanswer = 0\n')
    with pytest.raises(InputError, match=r"\[study\.checkpoints\[0\]\] before: allowed 'start' or a part of speech, given ' '"):
        load_study_config(load_protocol(path))


def test_same_seed_same_design_and_other_seed_differs():
    pairs, config = frame({"N": 80, "V": 30}), StudyConfig(tranches=2, checkpoints=[],
                                                           consistency={"N": 4, "V": 2})
    a = design_study(pairs, config, np.random.default_rng(5))
    b = design_study(pairs, config, np.random.default_rng(5))
    c = design_study(pairs, config, np.random.default_rng(6))
    assert a.tranches == b.tranches and a.tranches != c.tranches


def test_hyperlex_duplicates_and_pos_balance():
    pairs = frame({"N": 2163, "V": 453})
    config = load_study_config("hyperlex")
    design = design_study(pairs, config, np.random.default_rng(2))
    n_counts, v_counts = set(), set()
    for steps in design.tranches:
        shown = [(i, k, g) for g, s in enumerate(steps) for i, k in s.items]
        dups = [(i, g) for i, k, g in shown if k == "duplicate"]
        assert len(dups) == 9
        for pair, group in dups:   # first shown as a unique pair in an earlier group
            assert any(i == pair and k == "unique" and g < group for i, k, g in shown)
        assert all(s.items[-1][1] != "duplicate" for s in steps)
        unique = [i for i, k, _ in shown if k == "unique"]
        n_counts.add(sum(pairs.at[i, "pos"] == "N" for i in unique))
        v_counts.add(sum(pairs.at[i, "pos"] == "V" for i in unique))
    assert max(n_counts) - min(n_counts) <= 1 and max(v_counts) - min(v_counts) <= 1
    assert any("(the paper's layout has 50)" in m for m in design.report["unmet"])


def test_topic_layout_groups_by_topic():
    rows = [{"topic": f"T{t}", "word1": f"a{t}{i}", "word2": f"b{t}{i}"}
            for t in range(3) for i in range(25)]
    pairs = check_pairs(pd.DataFrame(rows), group_by="topic")
    design = design_study(pairs, load_study_config("tr9856"), np.random.default_rng(0))
    assert len(design.tranches) == 1 and design.consistency == []
    for step in design.tranches[0]:
        assert len({pairs.at[i, "topic"] for i, _ in step.items}) == 1
        assert len(step.items) <= 10 and {k for _, k in step.items} == {"unique"}


def test_reports_what_it_cannot_satisfy():
    config = StudyConfig(tranches=1, consistency={"N": 14, "V": 4}, checkpoints=[],
                         duplicates_per_tranche=2)
    design = design_study(frame({"N": 10, "V": 3}), config, np.random.default_rng(0))
    unmet = " | ".join(design.report["unmet"])
    assert re.search(r"consistency set: 4 V pairs wanted, only 3 exist", unmet)
    assert re.search(r"14 N pairs wanted, only 10", unmet)


def test_empty_tranches_are_dropped_and_reported():
    config = StudyConfig(tranches=5, consistency={}, checkpoints=[])
    design = design_study(frame({"N": 3}), config, np.random.default_rng(0))
    assert len(design.tranches) == 3
    assert "2 of 5 tranches got no pairs and were dropped" in design.report["unmet"]


# -- the summary of what could not be met (printed by `lexgold study create`) -----------------

def test_unmet_summary_of_the_simlex_paper_layout():
    """The 9 misses of SimLex-999's own pair set are two lines that say nothing needs doing."""
    design = design_study(frame({"N": 666, "V": 222, "A": 111}), load_study_config("simlex"),
                          np.random.default_rng(1))
    assert len(design.report["unmet"]) == 9                  # the full list is kept
    assert design.report["unmet_summary"] == [
        ("layout: 97-98 unique pairs per tranche where the protocol's figure is 99 (979 unique "
         "pairs spread evenly over 10 tranches): expected, the paper's own figures do not add up "
         "(docs/annotate.md, \"The design\"); nothing to do"),
        ("consistency pair second in each group: 8 groups (batch V in tranches 2-9) have none, "
         "as the batch has more groups than consistency pairs; harmless (every consistency pair "
         "is still shown in every tranche): nothing to do")]


def test_unmet_summary_of_the_hyperlex_paper_layout():
    design = design_study(frame({"N": 2163, "V": 453}), load_study_config("hyperlex"),
                          np.random.default_rng(2))
    summary = design.report["unmet_summary"]
    assert len(summary) == 2 and summary[0].startswith(
        "layout: 57-58 unique pairs per tranche where the protocol's figure is 50 (2596 unique "
        "pairs spread evenly over 45 tranches): expected")
    groups = [m for m in design.report["unmet"] if "wanted 6-7" in m]
    assert groups and summary[1].startswith(
        f"group sizes: {len(groups)} of 675 groups have 5 pairs, outside 6-7 (batch V in ")
    assert summary[1].endswith("harmless (a shorter page): nothing to do")


def test_unmet_summary_says_what_to_do():
    """A pair set far smaller than the layout, too few pairs for the consistency set and for
    duplicates: each kind is one line, with the fix."""
    config = StudyConfig(tranches=1, consistency={"N": 14, "V": 4}, checkpoints=[],
                         duplicates_per_tranche=2)
    design = design_study(frame({"N": 10, "V": 3}), config, np.random.default_rng(0))
    summary = design.report["unmet_summary"]
    assert [line.split(":")[0] for line in summary] == [
        "layout", "consistency set", "duplicates", "group sizes"]
    assert summary[1] == ("consistency set: 14 N pairs wanted, only 10 exist; 4 V pairs wanted, "
                          "only 3 exist: the pair set has too few pairs of that part of speech; "
                          "check the pair file or [study] consistency")
    assert summary[2].startswith("duplicates: 1 not placed (batch V in tranche 1): ")
    small = design_study(frame({"N": 144, "V": 44, "A": 22}), load_study_config("simlex"),
                         np.random.default_rng(0)).report["unmet_summary"]
    assert small[0] == ("layout: 19 unique pairs per tranche where the protocol's figure is 99 "
                        "(190 unique pairs spread evenly over 10 tranches): the pair set is "
                        "smaller than the protocol's layout is for; for about 99 per tranche set "
                        "[study] tranches = 2 in a copy of the protocol")
    dropped = design_study(frame({"N": 3}), StudyConfig(tranches=5, consistency={},
                                                        checkpoints=[]),
                           np.random.default_rng(0)).report["unmet_summary"]
    assert "2 of 5 tranches got no pairs and were dropped: too few pairs for [study] " \
           "tranches: lower it" in dropped
