"""`lexgold simulate` and `lexgold process` with a Best-Worst Scaling protocol: the release."""

import json

import pandas as pd
import pytest
from click.testing import CliRunner
from frictionless import validate
from scipy import stats

from lexgold.cli import cli
from lexgold.crowd.cli import simulate
from lexgold.process.cli import process


@pytest.fixture(scope="module")
def bws_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("bws")
    pairs = pd.DataFrame({"word1": [f"w{i}a" for i in range(60)],
                          "word2": [f"w{i}b" for i in range(60)],
                          "pos": ["N"] * 40 + ["V"] * 20})
    pairs.to_csv(folder / "pairs.csv", index=False)
    runner = CliRunner()
    result = runner.invoke(simulate, ["--protocol", "simlex_bws", "--pairs",
                                      str(folder / "pairs.csv"), "--out",
                                      str(folder / "answers.csv"), "--truth",
                                      str(folder / "truth.csv"), "--seed", "3"])
    assert result.exit_code == 0, result.output
    assert "Best-Worst answers" in result.output and "on 60 pairs" in result.output
    assert (folder / "truth.tuples.csv").is_file()
    result = runner.invoke(process, [str(folder / "answers.csv"), "--protocol", "simlex_bws",
                                     "--pairs", str(folder / "pairs.csv"), "--out",
                                     str(folder / "gold"), "--bootstrap", "50"])
    assert result.exit_code == 0, result.output
    return folder, result.output


def test_release_folder(bws_run):
    folder, output = bws_run
    assert "60 pairs released from" in output and "split-half r" in output
    gold = pd.read_csv(folder / "gold" / "gold.csv")
    # lexgold simulate's answers: the simulated mark travels as a last column
    assert list(gold.columns) == ["word1", "word2", "score", "simulated"]
    assert gold["simulated"].all()
    assert gold["score"].between(0, 10).all() and len(gold) == 60
    pairs = pd.read_csv(folder / "pairs.csv")
    assert gold[["word1", "word2"]].equals(pairs[["word1", "word2"]])     # pairs file order
    truth = pd.read_csv(folder / "truth.csv").merge(gold, on=["word1", "word2"])
    assert stats.spearmanr(truth["truth"], truth["score"]).statistic > 0.9
    report = json.loads((folder / "gold" / "report.json").read_text())
    assert report["split_half"]["spearman_brown_applied"] is False
    assert report["split_half"]["splits"] == 100
    for name in ("README.md", "CITATION.cff", "datapackage.json", "SHA256SUMS", "tuples.csv",
                 "scores.csv", "exclusions.csv"):
        assert (folder / "gold" / name).is_file(), name
    assert "Best-Worst" in (folder / "gold" / "README.md").read_text()
    assert validate(str(folder / "gold" / "datapackage.json")).valid


def test_tuples_file_rescores_to_the_released_counts(bws_run):
    folder, _ = bws_run
    tuples = pd.read_csv(folder / "gold" / "tuples.csv")
    tuples = tuples[tuples["kind"] != "checkpoint"]
    shown, net = {}, {}
    for _, row in tuples.iterrows():
        for p in range(4):
            pair = row[f"pair{p}"]
            shown[pair] = shown.get(pair, 0) + 1
            net[pair] = net.get(pair, 0) + (p == row["best"]) - (p == row["worst"])
    scores = pd.read_csv(folder / "gold" / "scores.csv")
    for _, row in scores.iterrows():
        pair = f"{row['word1']} / {row['word2']}"
        assert row["n"] == shown[pair]
        assert row["counting"] == pytest.approx(net[pair] / shown[pair])
        assert row["score"] == pytest.approx(5 + 5 * row["counting"])
        assert row["low"] <= row["score"] + 1e-9 <= row["high"] + 2e-9


def test_incomplete_release_writes_nothing(bws_run, tmp_path):
    folder, _ = bws_run
    pairs = pd.read_csv(folder / "pairs.csv")
    extra = pd.concat([pairs, pd.DataFrame([{"word1": "cup", "word2": "mug", "pos": "N"}])])
    extra.to_csv(tmp_path / "pairs.csv", index=False)
    result = CliRunner().invoke(cli, ["process", str(folder / "answers.csv"), "--protocol",
                                          "simlex_bws", "--pairs", str(tmp_path / "pairs.csv"),
                                          "--out", str(tmp_path / "gold"), "--bootstrap", "0"])
    assert result.exit_code != 0
    assert "1 of the 61 pairs of the pairs file have no accepted answer (e.g. cup / mug)" \
        in result.output
    assert not (tmp_path / "gold").exists()


def test_bad_answers_file_is_one_line(tmp_path):
    (tmp_path / "a.csv").write_text("rater_id,tranche,word1,word2,rating\nr,1,a,b,1\n")
    result = CliRunner().invoke(cli, ["process", str(tmp_path / "a.csv"), "--protocol",
                                      "simlex_bws",
                                          "--out", str(tmp_path / "gold")])
    assert result.exit_code != 0
    assert "missing column" in result.output and "tuple_id" in result.output


def test_a_best_worst_release_has_a_croissant_that_mlcroissant_reads(bws_run, monkeypatch):
    import mlcroissant as mlc
    import socket

    def refuse(*args, **kwargs):
        raise AssertionError(f"network access during validation: {args}")
    monkeypatch.setattr(socket.socket, "connect", refuse)
    folder, _ = bws_run
    gold_dir = folder / "gold"
    dataset = mlc.Dataset(jsonld=gold_dir / "croissant.json")
    issues = dataset.metadata.ctx.issues
    # no datePublished without [process.release] date_published: mlcroissant's one warning
    assert not issues.errors, issues.errors
    assert {s.name for s in dataset.metadata.record_sets} == {"gold", "scores", "tuples",
                                                              "exclusions"}
    gold = pd.read_csv(gold_dir / "gold.csv", keep_default_na=False)
    assert [r["gold/word1"].decode() for r in dataset.records("gold")] == gold["word1"].tolist()
    document = json.loads((gold_dir / "croissant.json").read_text())
    report = json.loads((gold_dir / "report.json").read_text())
    assert document["rai:hasSyntheticData"] is True          # lexgold simulate's answers
    assert document["rai:dataCollectionType"] == ["Simulation"]
    assert f"{report['split_half']['r']:.3f}" in document["rai:dataAnnotationAnalysis"][0]
    assert "tuples of 4 pairs" in document["rai:dataCollection"]
    listed = {f["contentUrl"] for f in document["distribution"]}
    assert listed == {p.name for p in gold_dir.iterdir()} - {"croissant.json", "SHA256SUMS"}
    assert "croissant.json" in (gold_dir / "SHA256SUMS").read_text()
