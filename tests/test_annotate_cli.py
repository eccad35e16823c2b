"""``lexgold study create|report|export`` and ``lexgold serve`` through click's CliRunner."""

import json
import re

import pandas as pd
import pytest
from click.testing import CliRunner

from lexgold.cli import cli
from test_annotate_app import enter, make_app, rate_all, usf_pair_file


@pytest.fixture(scope="module")
def pairs(usf, tmp_path_factory):
    return usf_pair_file(usf, tmp_path_factory.mktemp("cli") / "pairs.csv")


def test_create_report_export_serve(tmp_path, pairs):
    runner = CliRunner()
    db = tmp_path / "study.sqlite"
    result = runner.invoke(cli, ["study", "create", "--protocol", "simlex", "--pairs",
                                 str(pairs), "--db", str(db), "--seed", "4",
                                 "--completion-code", "CLI-OK"])
    assert result.exit_code == 0, result.output
    assert re.search(r"210 pairs, 10 tranches .* 20 consistency pairs, 500 rater slots",
                     result.output)
    assert "not satisfied: unique pairs per tranche" in result.output

    report = runner.invoke(cli, ["study", "report", str(db)])
    assert report.exit_code == 0
    data = json.loads(report.output)
    assert data["design"]["tranches"] == 10 and len(data["progress"]) == 10
    assert {row["target"] for row in data["progress"]} == {50}

    app = make_app(f"sqlite:///{db}")
    client = app.test_client()
    enter(client)
    posted, _, _ = rate_all(client)
    out = tmp_path / "ratings.csv"
    result = runner.invoke(cli, ["study", "export", str(db), "--out", str(out)])
    assert result.exit_code == 0 and f"-> {out}" in result.output
    frame = pd.read_csv(out)
    assert (frame["kind"] != "checkpoint").sum() == len(posted)

    served = runner.invoke(cli, ["serve", str(db), "--port", "0", "--check"],
                           env={"LEXGOLD_ADMIN_PASSWORD": "x"})
    assert served.exit_code == 0, served.output
    assert re.search(r"serving .* at http://127\.0\.0\.1:\d+/", served.output)
    assert "entry page OK (HTTP 200)" in served.output


def test_create_errors_are_one_line(tmp_path, pairs):
    runner = CliRunner()
    bad = tmp_path / "bad.csv"
    bad.write_text("word1,word2\ncat,dog\n")
    result = runner.invoke(cli, ["study", "create", "--protocol", "simlex", "--pairs", str(bad),
                                 "--db", str(tmp_path / "x.sqlite")])
    assert result.exit_code == 1
    assert result.output.strip() == f"Error: {bad}, field 'pos': missing column; the header " \
                                    "needs word1, word2, pos"
    db = tmp_path / "y.sqlite"
    args = ["study", "create", "--protocol", "simlex", "--pairs", str(pairs), "--db", str(db)]
    assert runner.invoke(cli, args).exit_code == 0
    again = runner.invoke(cli, args)
    assert again.exit_code == 1 and "already holds a study" in again.output


def test_serve_refuses_a_non_study_database(tmp_path):
    result = CliRunner().invoke(cli, ["serve", str(tmp_path / "none.sqlite"), "--check"])
    assert result.exit_code == 1 and "not a lexgold study database" in result.output


@pytest.mark.parametrize("command", [["study", "create"], ["study", "report"],
                                     ["study", "export"], ["serve"]])
def test_help_has_an_example(command):
    result = CliRunner().invoke(cli, [*command, "--help"])
    assert result.exit_code == 0 and "Example:" in result.output
