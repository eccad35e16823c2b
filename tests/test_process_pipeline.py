"""Simulated raters through the whole pipeline, and the three commands."""

import copy
import json
import warnings

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from scipy import stats

from lexgold.cli import cli
from lexgold.process.agreement import AgreementWarning
from lexgold.crowd.cli import simulate
from lexgold.process.cli import agree, process
from lexgold.process.pipeline import process_ratings
from lexgold.crowd.simulate import Crowd, simulate_ratings, study_layout, usf_pairs
from lexgold.protocols import load_protocol


@pytest.fixture(scope="module")
def pairs(usf):
    return usf_pairs(300, rng=np.random.default_rng(0), usf=usf)


def simulated(pairs, protocol, seed, **study):
    """A study of ``pairs`` laid out by the protocol (tranches of ``unique_per_tranche`` pairs,
    not the paper's fixed number: the test sets are small)."""
    rng = np.random.default_rng(seed)
    ratings, raters = simulate_ratings(pairs, protocol, rng=rng, tranches=0,
                                       crowd=Crowd(model="invented", bias_sd=0.9, spammers=0.15), **study)
    truth = pairs[["word1", "word2"]].assign(truth=raters.attrs["truth"])
    return ratings, raters, truth


def pairs_of(ratings):
    rated = ratings[ratings["kind"] != "checkpoint"]
    return rated[["word1", "word2", "pos"]].drop_duplicates(["word1", "word2"])


def error_against_truth(ratings, truth):
    means = ratings[ratings["kind"] != "checkpoint"].groupby(["word1", "word2"])["rating"].mean()
    joined = truth.join(means, on=["word1", "word2"])
    return np.sqrt(np.mean((joined["rating"] - joined["truth"]) ** 2)), \
        stats.spearmanr(joined["rating"], joined["truth"]).statistic


@pytest.fixture(scope="module")
def simlex_run(pairs):
    ratings, raters, truth = simulated(pairs, "simlex", 1, unique_per_tranche=70, raters_per_tranche=30)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AgreementWarning)
        result = process_ratings(ratings, "simlex", rng=np.random.default_rng(0), pairs=pairs)
    return ratings, raters, truth, result


def test_simulated_design_layout(simlex_run):
    ratings, raters, _, _ = simlex_run
    kinds = ratings[ratings["rater_id"] == "t01r000"]["kind"].value_counts()
    assert kinds["consistency"] == 20 and kinds["unique"] == 70
    assert kinds["checkpoint"] == 5                  # two after the instructions, N, A, V
    _, _, design = study_layout(pairs_of(ratings), "simlex", np.random.default_rng(0),
                                tranches=0, unique_per_tranche=70)
    assert kinds["calibration"] == design.report["per_tranche"][0]["kinds"]["calibration"]
    rows = ratings[(ratings["rater_id"] == "t01r000") & (ratings["kind"] != "checkpoint")]
    words = list(zip(rows["word1"], rows["word2"]))
    for i in np.flatnonzero(rows["kind"].to_numpy() == "calibration"):
        assert words[i] == words[i - 1]     # the previous group's last pair, shown again
    assert ratings["tranche"].nunique() == 4 and raters["rater_id"].nunique() == 120
    assert set(ratings.columns) >= {"rater_id", "tranche", "word1", "word2", "rating", "kind"}


def test_spammers_are_the_ones_excluded(simlex_run):
    _, raters, _, result = simlex_run
    excluded = set(result.exclusions.loc[result.exclusions["excluded"], "rater_id"])
    spam = set(raters.loc[raters["spammer"], "rater_id"])
    honest = set(raters["rater_id"]) - spam
    assert len(spam) > 5
    assert len(excluded & spam) / len(spam) >= 0.9
    # honest raters go out only by rule (b)'s fixed 10 % or a rare checkpoint slip
    assert len(excluded & honest) / len(honest) < 0.15


def test_calibration_and_exclusions_beat_raw_means(simlex_run):
    ratings, _, truth, result = simlex_run
    raw_rmse, raw_rho = error_against_truth(ratings, truth)
    gold = result.scores.merge(truth, on=["word1", "word2"])
    rmse = np.sqrt(np.mean((gold["mean"] - gold["truth"]) ** 2))
    rho = stats.spearmanr(gold["mean"], gold["truth"]).statistic
    assert rmse < raw_rmse and rho > raw_rho
    report = result.report
    assert report.agreement["final"]["iaa1"] > report.agreement["raw"]["iaa1"]


def test_pipeline_calibrates_before_scoring():
    """SimLex-999 section 3.6 through process_ratings, on the worked example of
    lexgold.process.calibration: consistency means a 1, b 4, c 5, population 10/3; a is
    shifted up by one (its 6 stays 6), c down by one, b stays. No exclusion rule, so the
    released scores are the calibrated ratings' means."""
    protocol = copy.deepcopy(load_protocol("simlex"))
    protocol["process"]["exclusions"]["rules"] = []
    protocol["process"]["agreement"]["bootstrap"] = 0
    ratings = pd.DataFrame({
        "rater_id": list("aaaabbbbcccc"), "tranche": 1, "word1": list("xyzu") * 3,
        "word2": "w", "kind": (["consistency"] * 3 + ["unique"]) * 3,
        "rating": [0, 1, 2, 6, 3, 4, 5, 3, 4, 5, 6, 2]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AgreementWarning)
        result = process_ratings(ratings, protocol, rng=np.random.default_rng(0))
    assert result.report.counts.calibrated_raters == 2
    scores = result.scores.set_index("word1")
    # raters in order a, b, c: a +1, b unchanged, c -1
    assert scores["scores"].to_dict() == {"x": [1.0, 3.0, 3.0], "y": [2.0, 4.0, 4.0],
                                          "z": [3.0, 5.0, 5.0], "u": [6.0, 3.0, 1.0]}
    assert scores.loc["u", "mean"] == pytest.approx(10 / 3)       # raw mean 11/3
    assert scores.loc["u", "score"] == pytest.approx(10 / 3 / 6 * 10)


def test_report_counts_and_gold_layout(simlex_run):
    _, raters, _, result = simlex_run
    counts = result.report.counts
    assert counts.stages["raw"].raters == len(raters)
    assert counts.stages["final"].raters == len(raters) - counts.excluded_raters
    assert counts.released_pairs == len(result.gold) == 300
    assert result.gold.columns[3] == "SimLex999"
    low, high = result.report.agreement["final"]["iaa1_ci"]
    assert low <= result.report.agreement["final"]["iaa1"] <= high
    assert {r["subset"] for r in result.report.agreement["by_subset"]["pos"]} <= {"N", "V", "A"}


def test_hyperlex_spammers_excluded(pairs, usf):
    ratings, raters, _ = simulated(pairs, "hyperlex", 2, raters_per_tranche=12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AgreementWarning)
        result = process_ratings(ratings, "hyperlex", rng=np.random.default_rng(0), usf=usf)
    excluded = set(result.exclusions.loc[result.exclusions["excluded"], "rater_id"])
    spam = set(raters.loc[raters["spammer"], "rater_id"])
    assert len(excluded & spam) / len(spam) >= 0.8
    assert len(excluded - spam) <= 0.1 * len(raters)
    assert set(result.splits["random"]) == {"train", "dev", "test"}
    assert list(result.gold.columns[:4]) == ["WORD1", "WORD2", "POS", "TYPE"]
    groups = {r["subset"] for r in result.report.agreement["by_subset"]["conc_group"]}
    assert groups <= {"G1", "G2", "G3", "G4"} and "G1" in groups


# -- commands ----------------------------------------------------------------------------------

def invoke(*args):
    group = cli
    if "simulate" not in group.commands:      # until lexgold/cli.py registers it
        group.add_command(simulate)
    return CliRunner().invoke(group, list(args))


def test_simulate_agree_process_commands(tmp_path, pairs):
    pairs.to_csv(tmp_path / "pairs.csv", index=False)
    ratings = tmp_path / "ratings.csv"
    result = invoke("simulate", "--pairs", str(tmp_path / "pairs.csv"), "--protocol", "simlex",
                    "--out", str(ratings), "--seed", "1", "--raters-per-tranche", "12")
    assert result.exit_code == 0, result.output
    assert "ratings by 120 raters" in result.output   # the protocol's 10 tranches x 12
    again = tmp_path / "again.csv"
    invoke("simulate", "--pairs", str(tmp_path / "pairs.csv"), "--protocol", "simlex",
           "--out", str(again), "--seed", "1", "--raters-per-tranche", "12")
    assert ratings.read_bytes() == again.read_bytes()

    result = invoke("agree", str(ratings), "--json")
    assert result.exit_code == 0, result.output
    figures = json.loads(result.output.strip().splitlines()[-1])
    assert set(figures) == {"iaa1", "iaa2", "raters", "pairs", "alpha_interval",
                            "alpha_ordinal", "icc1", "icck", "icc", "aggregate_model",
                            "simulated"}            # lexgold simulate's rows say so
    assert figures["simulated"]["share"] == 1.0
    assert figures["raters"] == 120 and figures["pairs"] == 300
    assert figures["aggregate_model"]["k"] == 6       # half of the 12 raters most pairs have
    assert 0 < figures["iaa1"] < figures["iaa2"] < 1
    text = invoke("agree", str(ratings))
    assert "IAA-1" in text.output and f"{figures['iaa1']:.3f}" in text.output

    out = tmp_path / "gold"
    args = ["process", str(ratings), "--protocol", "simlex", "--out", str(out),
            "--pairs", str(tmp_path / "pairs.csv"), "--seed", "3"]
    result = invoke(*args)            # 12 raters per tranche: the unique pairs are below SimLex's 36 per pair
    assert result.exit_code == 1 and not out.exists()
    assert result.output.strip().splitlines()[-1].startswith(
        f"Error: {ratings}: incomplete release: 280 of 300 pairs have fewer than 36 accepted")
    result = invoke(*args, "--allow-incomplete")
    assert result.exit_code == 0, result.output
    assert "Warning: incomplete release: 280 of 300 pairs" in result.output
    for name in ("gold.csv", "SimLex-999.txt", "exclusions.csv", "report.json", "report.md",
                 "README.md", "CITATION.cff", "datapackage.json", "croissant.json", "SHA256SUMS",
                 "rater_agreement.png", "ratings_by_subset.png"):
        assert (out / name).is_file(), name
    gold = pd.read_csv(out / "gold.csv")
    assert list(gold.columns)[:4] == ["word1", "word2", "POS", "SimLex999"]
    assert gold["SimLex999"].between(0, 10).all()
    report = json.loads((out / "report.json").read_text())
    assert report["seed"] == 3 and report["counts"]["released_pairs"] == 300
    assert report["release_file"] == "SimLex-999.txt" and len(report["warnings"]) == 1
    exclusions = pd.read_csv(out / "exclusions.csv")
    assert list(exclusions.columns[:3]) == ["rater", "rule", "detail"]


def test_agree_bad_file_is_one_line_error(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("rater_id,tranche,word1,word2,rating\na,1,x,y,high\n")
    result = invoke("agree", str(path))
    assert result.exit_code == 1
    assert result.output.strip().splitlines()[-1] == \
        f"Error: {path}:2, field 'rating': expected a number, found 'high'"
    path.write_text("rater,word1\n")
    result = invoke("agree", str(path))
    assert result.exit_code == 1 and "field 'rater_id'" in result.output


def test_agree_undefined_prints_na(tmp_path):
    path = tmp_path / "one.csv"
    path.write_text("rater_id,tranche,word1,word2,rating\na,1,x,y,1\na,1,z,y,2\n")
    result = invoke("agree", str(path), "--json")
    assert json.loads(result.output.strip().splitlines()[-1])["iaa1"] is None


@pytest.mark.parametrize("command", [agree, process, simulate])
def test_commands_have_help_with_an_example(command):
    assert "Example:" in command.help


def test_process_hyperlex_writes_splits_and_rejects_unknown_protocol(tmp_path, pairs):
    ratings, _, _ = simulated(pairs, "hyperlex", 4, raters_per_tranche=12)
    ratings.to_csv(tmp_path / "ratings.csv", index=False)
    out = tmp_path / "gold"
    # 12 raters per tranche, 15 % spammers: some pairs fall below HyperLex's 10 accepted raters
    result = invoke("process", str(tmp_path / "ratings.csv"), "--protocol", "hyperlex",
                    "--out", str(out), "--no-plots", "--bootstrap", "0", "--allow-incomplete")
    assert result.exit_code == 0, result.output
    splits = pd.read_csv(out / "splits.csv", keep_default_na=False)
    assert list(splits.columns) == ["word1", "word2", "random", "lexical"]
    assert len(splits) == 300 and set(splits["random"]) == {"train", "dev", "test"}
    report = (out / "report.md").read_text()
    assert "| final |" in report and "IAA-1" in report
    figures = json.loads((out / "report.json").read_text())
    assert figures["config"]["agreement"]["bootstrap"] == 0
    assert "iaa1_ci" not in figures["agreement"]["final"]
    # HyperLex section 5 as released: random split by interval and POS, lexical split two-way
    assert figures["splits"]["random_strata"] == ["interval", "pos"]
    assert figures["splits"]["lexical_mode"] == "two-way"
    lexical = splits[splits["lexical"] != ""]
    test_words = set(lexical.loc[lexical["lexical"] == "test", ["word1", "word2"]].stack())
    rest = set(lexical.loc[lexical["lexical"] != "test", ["word1", "word2"]].stack())
    assert test_words and rest and not test_words & rest
    # issue 36: report.json states the retention and each part's POS share
    summary = figures["splits"]["lexical"]
    assert summary["kept_share"] == pytest.approx(len(lexical) / len(splits))
    gold = pd.read_csv(out / "gold.csv", keep_default_na=False)
    pos = splits.merge(gold, left_on=["word1", "word2"], right_on=["WORD1", "WORD2"])
    for part in ("train", "dev", "test"):
        expected = pos.loc[pos["lexical"] == part, "POS"].value_counts(normalize=True)
        assert summary[part]["pos_share"] == pytest.approx(expected.round(4).to_dict())
    result = invoke("process", str(tmp_path / "ratings.csv"), "--protocol", "nosuch",
                    "--out", str(out))
    assert result.exit_code == 2 and "protocol file not found" in result.output   # usage error
    assert "Invalid value for '--protocol'" in result.output


def test_tr9856_pipeline_split_half_and_topics(pairs):
    topics = pairs.assign(topic=np.where(np.arange(len(pairs)) % 2, "pets", "music"))
    ratings, raters, _ = simulated(topics, "tr9856", 5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AgreementWarning)
        result = process_ratings(ratings, "tr9856", rng=np.random.default_rng(0))
    assert list(result.gold.columns) == ["term1", "term2", "score", "topic"]
    assert set(result.gold["topic"]) == {"pets", "music"}
    assert result.gold["score"].between(0, 1).all()
    half = result.report.split_half
    assert half["splits"] == 126 and half["pairs"] == 100 and 0 < half["r"] < 1
    assert result.report.counts.excluded_raters == 0
    assert {r["subset"] for r in result.report.agreement["by_subset"]["topic"]} == \
        {"pets", "music"}


def test_simulate_without_pairs_samples_usf(tmp_path):
    out = tmp_path / "r.csv"
    result = invoke("simulate", "--protocol", "tr9856", "--n-pairs", "120", "--out", str(out),
                    "--seed", "2", "--truth", str(tmp_path / "truth.csv"))
    assert result.exit_code == 0, result.output
    ratings = pd.read_csv(out)
    assert ratings["rating"].isin([0, 1]).all()
    assert ratings.groupby(["word1", "word2"])["rater_id"].nunique().eq(10).all()
    truth = pd.read_csv(tmp_path / "truth.csv")
    assert len(truth) == 120 and truth["truth"].between(0, 1).all()
    assert (tmp_path / "truth.raters.csv").is_file()


def test_process_parses_the_protocols_process_section_once(tmp_path, pairs, monkeypatch):
    """One `lexgold process` run reads ``[process]`` once: the pipeline, the exclusions and
    the plots take the parsed config."""
    from lexgold.process import config as config_module
    from lexgold.process.pipeline import run

    ratings, _, _ = simulated(pairs.head(40), "simlex", 2, unique_per_tranche=20,
                              raters_per_tranche=8)
    ratings.to_csv(tmp_path / "ratings.csv", index=False)
    parsed = []
    real = config_module.parse_section

    def counting(cls, *args, **kwargs):
        parsed.append(cls.__name__)
        return real(cls, *args, **kwargs)

    monkeypatch.setattr(config_module, "parse_section", counting)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AgreementWarning)
        report = run(tmp_path / "ratings.csv", "simlex", tmp_path / "gold", seed=1,
                     bootstrap=0, allow_incomplete=True)
    assert (tmp_path / "gold" / "rater_agreement.png").is_file()   # the plots ran
    assert report.counts.released_pairs == 40
    assert parsed.count("ProcessConfig") == 1
