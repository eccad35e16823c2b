"""``lexgold plan --machine``: the curve with a machine rater as a prior, from its worth on the
pilot (lexgold.process.plan_machine), on a real pilot (4 of SimVerb-3500's real ratings of 300
pairs) and GPT-4's real ratings of them (Trott 2024; both shipped)."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pandas as pd
from click.testing import CliRunner

from lexgold.cli import cli
from lexgold.crowd.logs import shipped_log
from lexgold.resources._files import resource_files


def test_plan_draws_the_curve_with_the_machine(tmp_path):
    ratings, _ = shipped_log("simverb")
    ratings = ratings.assign(n=ratings.groupby(["word1", "word2"]).cumcount())
    pilot = ratings[ratings["n"] < 4].drop(columns="n")
    pilot = pilot.merge(pilot[["word1", "word2"]].drop_duplicates().head(300))
    pilot.to_csv(tmp_path / "pilot.csv", index=False)
    (tmp_path / "gpt4.csv").write_bytes(
        gzip.decompress(open(resource_files("simverb3500_gpt4")[0].location, "rb").read()))
    args = ["plan", str(tmp_path / "pilot.csv"), "--max-raters", "12", "--quiet"]
    result = CliRunner().invoke(cli, args + ["--machine", str(tmp_path / "gpt4.csv"),
                                             "--json"])
    assert result.exit_code == 0, result.output
    found = json.loads(result.stdout)
    machine = found["machine"]
    assert 0 < machine["pairs_covered"] < 300 and machine["pool"] == 3
    worth = machine["worth"]
    assert worth["low"] <= worth["median"] <= worth["high"] and worth["median"] > 0.5
    human = pd.DataFrame(found["curve"]).set_index("raters")["reliability"]
    with_machine = pd.DataFrame(machine["curve"]).dropna().set_index("raters")["reliability"]
    # the curve read worth ratings further on: above the human one, equal to it shifted
    assert (with_machine > human.loc[with_machine.index]).all()
    k = with_machine.index[0]
    assert with_machine.iloc[0] == np.interp(k + worth["median"], human.index, human.values)
    if found["raters_needed"] is not None and machine["raters_needed"] is not None:
        assert machine["raters_needed"] <= found["raters_needed"]
    text = CliRunner().invoke(cli, args + ["--machine", str(tmp_path / "gpt4.csv")])
    assert "as a prior (approximate" in text.output and "circularity" in text.output
    other = tmp_path / "other.csv"
    other.write_text("word1,word2,score\nzebra,yak,3\nquark,gluon,4\n")
    bad = CliRunner().invoke(cli, args + ["--machine", str(other)])
    assert bad.exit_code != 0 and "Traceback" not in bad.output
    assert "the machine covers 0 of the pilot's pairs" in bad.output
