"""``lexgold agree``'s figures as a library function (lexgold.process.agree_figures), against
scipy."""

import json

import numpy as np
import pytest
from click.testing import CliRunner
from scipy import stats

from lexgold.cli import cli
from lexgold.process.agree_figures import agree_file, agree_summary_lines

RATINGS = {"a": [1, 2, 3, 4, 5], "b": [1, 2, 3, 5, 4], "c": [2, 1, 3, 4, 5]}


@pytest.fixture
def ratings_file(tmp_path):
    path = tmp_path / "ratings.csv"
    rows = ["rater_id,tranche,word1,word2,rating"]
    for rater, values in RATINGS.items():
        rows += [f"{rater},1,w{i},v{i},{value}" for i, value in enumerate(values)]
    path.write_text("\n".join(rows) + "\n")
    return path


def test_agree_file_is_the_mean_spearman_of_scipy(ratings_file):
    result, anonymous, messages = agree_file(ratings_file, min_overlap=2)
    values = {r: np.array(v, float) for r, v in RATINGS.items()}
    pairwise = [stats.spearmanr(values[x], values[y])[0] for x, y in (("a", "b"), ("a", "c"),
                                                                         ("b", "c"))]
    against_rest = [stats.spearmanr(values[r], np.mean([values[o] for o in values if o != r],
                                                       axis=0))[0] for r in values]
    assert not anonymous and messages == []
    assert result["iaa1"] == pytest.approx(np.mean(pairwise))          # 0.9 + 0.9 + 0.8 over 3
    assert result["iaa1"] == pytest.approx(2.6 / 3)
    assert result["iaa2"] == pytest.approx(np.mean(against_rest))
    assert (result["raters"], result["pairs"], result["shared_pairs"]) == (3, 5, 5)


def test_the_command_prints_the_library_figures(ratings_file):
    result, anonymous, _ = agree_file(ratings_file, min_overlap=2)
    shown = CliRunner().invoke(cli, ["agree", str(ratings_file), "--min-overlap", "2"])
    assert shown.exit_code == 0, shown.output
    assert shown.output.splitlines() == agree_summary_lines(result, anonymous)
    as_json = CliRunner().invoke(cli, ["agree", str(ratings_file), "--min-overlap", "2",
                                       "--json"])
    assert json.loads(as_json.output) == {k: result[k] for k in (
        "iaa1", "iaa2", "raters", "pairs", "alpha_interval", "alpha_ordinal", "icc1", "icck",
        "icc", "aggregate_model")}
