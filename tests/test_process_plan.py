"""``lexgold plan`` (lexgold.process.plan, issue 26): the reliability curve against simulated
studies whose reliability is known, the command's JSON, cost and plot."""

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from scipy import stats

from lexgold.cli import cli
from lexgold.errors import InputError
from lexgold.process.plan import (
    CURVE_COLUMNS,
    plan_study,
    raters_needed,
    reliability_curve,
    seconds_per_pair,
)


def study(n_pairs, n_raters, *, seed, noise=1.2, bias=0.5, tranches=1, spread=1.3):
    """A study on a 1..7 scale: true score + rater bias + noise, rounded and clipped; every
    rater of a tranche rates its pairs. Returns the long frame."""
    rng = np.random.default_rng(seed)
    truth = 4 + rng.normal(0, spread, n_pairs)
    rows = []
    for t in range(tranches):
        pairs = range(t, n_pairs, tranches)
        for r in range(n_raters):
            b = rng.normal(0, bias)
            for i in pairs:
                value = np.clip(np.round(truth[i] + b + rng.normal(0, noise)), 1, 7)
                rows.append((f"t{t}r{r}", t, f"w{i}", "x", float(value)))
    return pd.DataFrame(rows, columns=["rater_id", "tranche", "word1", "word2", "rating"])


def observed(frame, k, rng, splits=60):
    """Mean Spearman between the pair means of two disjoint groups of k raters per tranche."""
    wide = {t: part.pivot_table(index="word1", columns="rater_id", values="rating")
            for t, part in frame.groupby("tranche")}
    values = []
    for _ in range(splits):
        a, b = [], []
        for table in wide.values():
            order = rng.permutation(table.shape[1])
            a.append(table.iloc[:, order[:k]].mean(axis=1))
            b.append(table.iloc[:, order[k:2 * k]].mean(axis=1))
        values.append(stats.spearmanr(pd.concat(a), pd.concat(b).loc[pd.concat(a).index])[0])
    return float(np.mean(values))


@pytest.fixture(scope="module")
def full_study():
    return study(160, 24, seed=11, tranches=2)


def test_curve_columns_and_shape(full_study):
    pilot = full_study[full_study["rater_id"].str[-1].isin(list("0123"))]
    curve = reliability_curve(pilot, 6, rng=np.random.default_rng(0), replicates=20,
                              simulations=5)
    assert tuple(curve.columns) == CURVE_COLUMNS
    assert curve["raters"].tolist() == [1, 2, 3, 4, 5, 6]
    assert (np.diff(curve["reliability"]) > 0).all()       # common draws: a smooth curve
    assert (curve["low"] <= curve["reliability"]).all()
    assert (curve["reliability"] <= curve["high"]).all()
    assert np.isnan(curve.loc[0, "ci_width"]) and np.isnan(curve.loc[0, "iaa2"])
    assert (np.diff(curve["ci_width"].iloc[1:]) < 0).all()


def test_a_full_study_predicts_its_own_two_group_reliability(full_study):
    rng = np.random.default_rng(1)
    truth = {k: observed(full_study, k, rng) for k in (2, 6, 12)}
    curve = reliability_curve(full_study, 12, rng=np.random.default_rng(2), replicates=0,
                              simulations=30).set_index("raters")
    for k, value in truth.items():
        assert curve.loc[k, "reliability"] == pytest.approx(value, abs=0.015)


@pytest.mark.parametrize("seed", [3, 4, 5])
def test_a_four_rater_pilot_predicts_eight_and_its_interval_covers(full_study, seed):
    rng = np.random.default_rng(seed)
    truth = observed(full_study, 8, np.random.default_rng(0))
    chosen = [r for t in (0, 1) for r in
              rng.choice(sorted(full_study.loc[full_study["tranche"] == t, "rater_id"].unique()),
                         4, replace=False)]
    pilot = full_study[full_study["rater_id"].isin(chosen)]
    row = reliability_curve(pilot, 8, rng=rng, replicates=60, simulations=10).iloc[7]
    assert row["reliability"] == pytest.approx(truth, abs=0.04)
    assert row["low"] <= truth <= row["high"]
    assert row["high"] - row["low"] < 0.15


def test_an_iaa2_and_ci_width_as_the_study_has_them(full_study):
    rated = full_study[full_study["tranche"] == 0]
    wide = rated.pivot_table(index="word1", columns="rater_id", values="rating").iloc[:, :6]
    sd = wide.std(axis=1, ddof=1)
    width = float(np.mean(2 * stats.t.ppf(0.975, 5) * sd / np.sqrt(6)))
    iaa2 = np.mean([stats.spearmanr(wide.iloc[:, j], wide.drop(columns=wide.columns[j])
                                    .mean(axis=1))[0] for j in range(6)])
    curve = reliability_curve(full_study, 6, rng=np.random.default_rng(3), replicates=0,
                              simulations=20).set_index("raters")
    assert curve.loc[6, "ci_width"] == pytest.approx(width, rel=0.1)
    assert curve.loc[6, "iaa2"] == pytest.approx(iaa2, abs=0.05)


def test_ratings_without_rater_identity(full_study):
    anonymous = full_study.assign(rater_id=[f"?{i}" for i in range(len(full_study))])
    truth = observed(full_study, 4, np.random.default_rng(0))
    curve = reliability_curve(anonymous, 4, rng=np.random.default_rng(5), replicates=30,
                              simulations=10)
    # no rater identity: each rater's bias counts as noise, so the prediction is lower
    assert truth - 0.06 < curve.loc[3, "reliability"] <= truth + 0.01
    assert curve.loc[3, "low"] < curve.loc[3, "reliability"] < curve.loc[3, "high"]


def test_raters_needed_reads_the_curve():
    curve = pd.DataFrame({"raters": [1, 2, 3], "reliability": [0.5, 0.8, 0.91],
                          "low": [0.3, 0.7, 0.85]})
    assert raters_needed(curve, 0.9) == 3
    assert raters_needed(curve, 0.95) is None
    assert raters_needed(curve, 0.8, column="low") == 3


def test_seconds_per_pair_from_answered_at():
    frame = pd.DataFrame({"rater_id": ["a"] * 4 + ["b"] * 4, "tranche": 1,
                          "word1": list("wxyz") * 2, "word2": "v", "rating": 1.0,
                          "kind": "unique",
                          "answered_at": ["2026-01-01T10:00:00Z"] * 2
                          + ["2026-01-01T10:00:10Z"] * 2            # a: 5 s a pair
                          + ["2026-01-01T10:00:00Z"] * 2
                          + ["2026-01-01T10:00:14Z"] * 2})          # b: 7 s a pair
    assert seconds_per_pair(frame) == pytest.approx(6.0)
    assert np.isnan(seconds_per_pair(frame.drop(columns="answered_at")))


def test_plan_study_cost(full_study):
    result = plan_study(full_study, rng=np.random.default_rng(0), max_raters=10, target=0.85,
                        replicates=5, seconds=9.0, pay_per_hour=12.0, pairs=1000)
    needed = result["raters_needed"]
    assert needed == raters_needed(pd.DataFrame(result["curve"]), 0.85)
    assert result["cost"]["hours"] == pytest.approx(1000 * needed * 9 / 3600)
    assert result["cost"]["amount"] == pytest.approx(1000 * needed * 9 / 3600 * 12)
    assert result["pilot"] == {"raters": 48, "pairs": 160, "ratings_per_pair": 24.0,
                               "pairs_rated_twice": 160, "scale": [1.0, 7.0]}


def test_a_plan_needs_raters_who_share_pairs():
    frame = pd.DataFrame({"rater_id": ["a", "b", "c", "d"], "tranche": 1,
                          "word1": ["w", "x", "y", "z"], "word2": "v",
                          "rating": [1.0, 2.0, 3.0, 4.0]})
    with pytest.raises(InputError, match="no two raters share 3 or more pairs"):
        reliability_curve(frame, 3, rng=np.random.default_rng(0), replicates=0)


def test_the_command(tmp_path, full_study):
    path = tmp_path / "pilot.csv"
    full_study[full_study["rater_id"].str[-1].isin(list("0123"))].to_csv(path, index=False)
    plot = tmp_path / "curve.png"
    result = CliRunner().invoke(cli, ["plan", str(path), "--json", "--max-raters", "5",
                                      "--bootstrap", "10", "--target", "0.8",
                                      "--seconds-per-pair", "6", "--pay-per-hour", "10",
                                      "--plot", str(plot)])
    assert result.exit_code == 0, result.output
    figures = json.loads(result.output)
    assert [set(row) for row in figures["curve"]] == [{"raters", "reliability", "low",
                                                       "high"}] * 5
    assert [row["raters"] for row in figures["curve"]] == [1, 2, 3, 4, 5]
    assert figures["raters_needed"] == raters_needed(pd.DataFrame(figures["curve"]), 0.8)
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = CliRunner().invoke(cli, ["plan", str(path), "--max-raters", "3", "--bootstrap", "5"])
    assert text.exit_code == 0, text.output
    assert "raters per pair for reliability 0.9" in text.output
    assert "no times in the ratings; give --seconds-per-pair" in text.output or \
        "more than 3" in text.output


def test_the_command_reports_bad_input_in_one_line(tmp_path):
    path = tmp_path / "one.csv"
    path.write_text("rater_id,tranche,word1,word2,rating\na,1,w,x,1\na,1,y,x,2\na,1,z,x,3\n")
    result = CliRunner().invoke(cli, ["plan", str(path), "--bootstrap", "0"])
    assert result.exit_code == 1
    assert result.output.startswith("Error: ") and len(result.output.strip().splitlines()) == 1
    assert "no two raters share 3 or more pairs" in result.output


def test_plan_reads_an_imported_wordsim353_layout(tmp_path):
    """The wide one-column-per-rater layout of WordSim-353's set1/set2, through `ratings
    import`, then `plan` (a known reliability: truth + N(0, 1.5) on 0..10, 13 raters)."""
    rng = np.random.default_rng(21)
    truth = rng.uniform(0, 10, 60)
    lines = ["Word 1,Word 2,Human (mean)," + ",".join(str(j) for j in range(1, 14))]
    matrix = np.clip(np.round(truth[:, None] + rng.normal(0, 1.5, (60, 13))), 0, 10)
    for i, row in enumerate(matrix.astype(int)):
        lines.append(f"a{i},b{i},{row.mean():.2f}," + ",".join(map(str, row)))
    (tmp_path / "set1.csv").write_text("\n".join(lines) + "\n")
    runner = CliRunner()
    imported = runner.invoke(cli, ["ratings", "import", str(tmp_path / "set1.csv"),
                                   "--scale", "0", "10", "--out", str(tmp_path / "long.csv")])
    assert imported.exit_code == 0, imported.output
    result = runner.invoke(cli, ["plan", str(tmp_path / "long.csv"), "--json",
                                 "--max-raters", "6", "--bootstrap", "20"])
    assert result.exit_code == 0, result.output
    curve = pd.DataFrame(json.loads(result.output)["curve"]).set_index("raters")
    frame = pd.DataFrame([{"rater_id": f"r{j}", "tranche": 1, "word1": f"a{i}",
                           "rating": matrix[i, j]} for i in range(60) for j in range(13)])
    assert curve.loc[6, "reliability"] == pytest.approx(
        observed(frame, 6, np.random.default_rng(0)), abs=0.03)


def test_the_text_names_the_ci_width_unit_and_marks_widths_beyond_the_scale(tmp_path,
                                                                            full_study):
    path = tmp_path / "pilot.csv"
    full_study[full_study["rater_id"].str[-1].isin(list("0123"))].to_csv(path, index=False)
    result = CliRunner().invoke(cli, ["plan", str(path), "--max-raters", "4", "--bootstrap",
                                      "10", "--seconds-per-pair", "5"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert "pair-mean 95% CI width (1-7 scale)" in lines[0]
    # k = 2: t(0.975, 1) = 12.71, so the expected width is about 2 * 12.71 * SD / sqrt(2),
    # beyond the 6-point scale for any SD of ratings above 0.34
    two = lines[2].split()
    assert two[0] == "2" and two[6].endswith("*") and float(two[6][:-1]) > 6
    assert not lines[4].split()[6].endswith("*")                 # k = 4: t = 3.18
    assert any(line.startswith("* wider than the whole 1-7 scale") for line in lines)
    assert "plan: bootstrap" not in result.output                # no progress off a terminal


def test_a_pilot_too_small_to_tell_says_so(tmp_path, full_study):
    path = tmp_path / "pilot.csv"
    few = full_study["word1"].isin([f"w{i}" for i in range(0, 40, 2)])
    full_study[few & full_study["rater_id"].isin(["t0r0", "t0r1", "t0r2"])].to_csv(
        path, index=False)
    result = CliRunner().invoke(cli, ["plan", str(path), "--max-raters", "4", "--bootstrap",
                                      "10", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["too_small"] == (
        "only 20 pairs have two or more ratings (at least 30 needed)")
    text = CliRunner().invoke(cli, ["plan", str(path), "--max-raters", "4", "--bootstrap", "10",
                                    "--quiet"])
    assert text.exit_code == 0, text.output
    assert text.output.splitlines()[-1].startswith("too small to tell: only 20 pairs")


def test_progress_goes_to_stderr_when_asked(capsys, monkeypatch, full_study):
    """The bar shows once the bootstrap has run PROGRESS_DELAY seconds (here none)."""
    from lexgold.process import plan

    monkeypatch.setattr(plan, "PROGRESS_DELAY", 0)
    pilot = full_study[full_study["rater_id"].str[-1].isin(list("0123"))]
    reliability_curve(pilot, 3, rng=np.random.default_rng(0), replicates=5, progress=True)
    captured = capsys.readouterr()
    assert "plan: bootstrap" in captured.err and captured.out == ""
    reliability_curve(pilot, 3, rng=np.random.default_rng(0), replicates=5)
    assert capsys.readouterr().err == ""


def test_the_plot_has_whole_raters_on_its_axis(full_study):
    from lexgold.process.plan import curve_figure

    pilot = full_study[full_study["rater_id"].str[-1].isin(list("0123"))]
    result = plan_study(pilot, rng=np.random.default_rng(0), max_raters=5, replicates=5)
    figure = curve_figure(result)
    ticks = [t for t in figure.axes[0].get_xticks() if 1 <= t <= 5]
    assert ticks and all(float(t).is_integer() for t in ticks)
