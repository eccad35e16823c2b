"""A machine rater in a release (lexgold.process.machine_mode): ``process --machine`` in the
declared modes, on real ratings (an excerpt of SimVerb-3500's raw log, shipped) and GPT-4's real
ratings of those pairs (Trott 2024, shipped); the release names the machine, keeps the
human-only scores and says how much the machine could flatter itself."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from lexgold.cli import cli
from lexgold.crowd.logs import shipped_log
from lexgold.machine.prior import machine_for
from lexgold.resources._files import resource_files
from lexgold.stats import spearman


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    """400 SimVerb pairs with their 10 real ratings each, GPT-4's ratings of the pairs it
    rated among them, with a provenance sidecar as `lexgold machine rate` writes one."""
    folder = tmp_path_factory.mktemp("machine")
    ratings, _ = shipped_log("simverb")
    pairs = ratings[["word1", "word2"]].drop_duplicates().head(400)
    ratings = ratings.merge(pairs, on=["word1", "word2"])
    ratings.to_csv(folder / "ratings.csv", index=False)
    gpt4 = gzip.decompress(open(resource_files("simverb3500_gpt4")[0].location, "rb").read())
    (folder / "gpt4.csv").write_bytes(gpt4)
    (folder / "gpt4.csv.json").write_text(json.dumps(
        {"model": "gpt-4", "prompt_sha256": "ab" * 32, "parameters": {"temperature": 0}}))
    return folder


def release(study, out, *extra):
    result = run("process", study / "ratings.csv", "--protocol", "plain", "--out", study / out,
                 "--no-plots", "--bootstrap", "0", "--scale", "0", "6", *extra)
    assert result.exit_code == 0, result.output
    return result


def test_prior_mode_releases_the_posterior_and_keeps_the_human_scores(study):
    plain = release(study, "plain")
    prior = release(study, "prior", "--machine", study / "gpt4.csv", "--machine-mode", "prior")
    human = pd.read_csv(study / "plain" / "gold.csv")
    gold = pd.read_csv(study / "prior" / "gold.csv")
    assert list(gold.columns) == ["word1", "word2", "score", "human_score", "human_low",
                                  "human_high"]
    # the human-only column is the plain release's score, pair by pair
    assert gold["human_score"].tolist() == human["score"].tolist()
    assert (gold["human_low"] <= gold["human_score"]).all()
    assert (gold["human_score"] <= gold["human_high"]).all()
    assert not np.allclose(gold["score"], gold["human_score"])
    report = json.loads((study / "prior" / "report.json").read_text())
    machine = report["machine"]
    assert machine["mode"] == "prior" and machine["model"] == "gpt-4"
    assert machine["prompt_sha256"] == "ab" * 32
    assert "machine" not in json.loads((study / "plain" / "report.json").read_text())
    # circularity as defined: Spearman(machine, released) - Spearman(machine, human-only),
    # on the pairs the machine covers, recomputed from the files at their printed decimals
    values = machine_for(gold, pd.read_csv(study / "gpt4.csv").rename(
        columns={"gpt4_rating": "machine"}))
    covered = np.isfinite(values)
    assert machine["pairs_covered"] == int(covered.sum()) > 100
    by_hand = (spearman(values[covered], gold["score"][covered])
               - spearman(values[covered], gold["human_score"][covered]))
    assert machine["circularity"] == pytest.approx(by_hand, abs=0.01)
    assert machine["circularity"] > 0            # a gold built with GPT-4 flatters GPT-4
    assert 0 < machine["weight_mean"] < 1
    assert "circularity" in prior.output and "gpt-4 (mode prior)" in prior.output
    card = (study / "prior" / "README.md").read_text()
    assert "## Machine rater" in card and "**gpt-4**" in card
    assert "Do not evaluate gpt-4, or models trained on its output, on `score`" in card
    croissant = json.loads((study / "prior" / "croissant.json").read_text())
    assert croissant["rai:machineAnnotationTools"][0].startswith("gpt-4 (lexgold machine mode "
                                                                 "prior")
    assert "## Machine rater" in (study / "prior" / "report.md").read_text()


def test_allocate_mode_releases_human_means_and_names_the_machine(study):
    release(study, "plain2")
    release(study, "allocate", "--machine", study / "gpt4.csv", "--machine-mode", "allocate")
    assert (study / "allocate" / "gold.csv").read_bytes() == \
        (study / "plain2" / "gold.csv").read_bytes()
    machine = json.loads((study / "allocate" / "report.json").read_text())["machine"]
    assert machine["mode"] == "allocate" and machine["circularity"] is None
    assert "every released score is a mean of human ratings" in \
        (study / "allocate" / "README.md").read_text()


def test_a_machine_needs_a_declared_mode(study):
    result = run("process", study / "ratings.csv", "--protocol", "plain", "--scale", "0", "6",
                 "--out", study / "none", "--machine", study / "gpt4.csv")
    assert result.exit_code != 0 and "Traceback" not in result.output
    assert "no mode is declared" in result.output
    assert not (study / "none").exists()
    result = run("process", study / "ratings.csv", "--protocol", "plain", "--scale", "0", "6",
                 "--out", study / "none", "--machine-mode", "prior")
    assert result.exit_code != 0 and "needs the machine's ratings" in result.output
    result = run("process", study / "ratings.csv", "--protocol", "plain", "--scale", "0", "6",
                 "--out", study / "none", "--machine", study / "gpt4.csv", "--machine-mode", "prior",
                 "--aggregate", "trimmed_1sd")
    assert result.exit_code != 0 and "shrinks the pairs' means" in result.output
