"""Krippendorff's alpha and ICC(2,1)/ICC(2,k) (lexgold.process.reliability, issue 26) against
the published worked examples and the reference libraries (krippendorff, pingouin)."""

import json
import math

import krippendorff
import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from lexgold.cli import cli
from lexgold.process.agreement import AgreementWarning
from lexgold.process.reliability import icc, icc_matrix, krippendorff_alpha

# Krippendorff (2011), "Computing Krippendorff's alpha-reliability", section C: 4 observers,
# 12 units, with missing values; alpha interval 0.849, ordinal 0.815.
KRIPPENDORFF_2011 = {"A": "1 2 3 3 2 1 4 1 2 . . .", "B": "1 2 3 3 2 2 4 1 2 5 . 3",
                     "C": ". 3 3 3 2 3 4 2 2 5 1 .", "D": "1 2 3 3 2 4 4 1 2 5 1 ."}
# Shrout & Fleiss (1979), Table 2: 6 targets x 4 judges; ICC(2,1) .29, ICC(2,4) .62.
SHROUT_FLEISS = [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9],
                 [6, 2, 4, 7]]


def long_frame(matrix, tranche=1, prefix="r"):
    """Long format of a targets x raters matrix (NaN: not rated)."""
    return pd.DataFrame([{"rater_id": f"{prefix}{j}", "tranche": tranche, "word1": f"w{i}",
                          "word2": "x", "rating": float(v)}
                         for i, row in enumerate(matrix) for j, v in enumerate(row)
                         if not np.isnan(v)])


def krippendorff_frame():
    return long_frame(np.array([[np.nan if v == "." else float(v) for v in text.split()]
                                for text in KRIPPENDORFF_2011.values()]).T)


def test_alpha_reproduces_krippendorff_2011():
    frame = krippendorff_frame()
    assert krippendorff_alpha(frame, "interval") == pytest.approx(0.849, abs=5e-4)
    assert krippendorff_alpha(frame, "ordinal") == pytest.approx(0.815, abs=5e-4)


@pytest.mark.parametrize("level", ["interval", "ordinal"])
def test_alpha_equals_the_package_on_random_data_with_gaps(level):
    rng = np.random.default_rng(4)
    truth = rng.uniform(0, 6, 40)
    matrix = np.clip(np.round(truth[:, None] + rng.normal(0, 1, (40, 7))), 0, 6)
    matrix[rng.random(matrix.shape) < 0.3] = np.nan
    expected = krippendorff.alpha(reliability_data=matrix.T, level_of_measurement=level)
    assert krippendorff_alpha(long_frame(matrix), level) == pytest.approx(expected, abs=1e-12)


def test_alpha_needs_no_rater_identity():
    frame = krippendorff_frame()
    anonymous = frame.assign(rater_id=[f"?{i}" for i in range(len(frame))])
    assert krippendorff_alpha(anonymous) == krippendorff_alpha(frame)


def test_alpha_counts_a_raters_repeat_once_and_ignores_checkpoints():
    frame = krippendorff_frame().assign(kind="unique")
    repeat = frame.iloc[[0]].assign(kind="calibration")
    check = frame.iloc[[0]].assign(kind="checkpoint", word1="cp", rating=0.0)
    assert krippendorff_alpha(pd.concat([frame, repeat, check])) == krippendorff_alpha(frame)


def test_alpha_undefined_is_nan_with_a_warning():
    frame = long_frame(np.array([[1.0, np.nan], [np.nan, 2.0]]))
    with pytest.warns(AgreementWarning):
        assert math.isnan(krippendorff_alpha(frame))


def test_alpha_refuses_an_unknown_level():
    with pytest.raises(ValueError, match="level must be one of interval, ordinal; got 'ratio'"):
        krippendorff_alpha(krippendorff_frame(), "ratio")


def test_icc_reproduces_shrout_fleiss_1979():
    found = icc_matrix(np.array(SHROUT_FLEISS, dtype=float))
    assert round(found["icc1"], 2) == 0.29 and round(found["icck"], 2) == 0.62


def pingouin_icc(matrix):
    import pingouin

    frame = pd.DataFrame([(i, j, v) for i, row in enumerate(matrix) for j, v in enumerate(row)],
                         columns=["target", "rater", "rating"])
    table = pingouin.intraclass_corr(frame, targets="target", raters="rater",
                                     ratings="rating").set_index("Type")
    ci = "CI95" if "CI95" in table.columns else "CI95%"
    table = table.rename(columns={ci: "CI95"}, index={"ICC2": "ICC(A,1)", "ICC2k": "ICC(A,k)"})
    return table.loc["ICC(A,1)"], table.loc["ICC(A,k)"]      # pingouin >= 0.7 / older names


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_icc_and_its_intervals_equal_pingouin(seed):
    rng = np.random.default_rng(seed)
    matrix = (rng.normal(3, 1, (25, 1)) + rng.normal(0, 0.5, (1, 5))
              + rng.normal(0, 1, (25, 5)))
    if seed == 0:
        matrix = np.array(SHROUT_FLEISS, dtype=float)
    single, average = pingouin_icc(matrix)
    found = icc_matrix(matrix)
    assert found["icc1"] == pytest.approx(single["ICC"], abs=1e-12)
    assert found["icck"] == pytest.approx(average["ICC"], abs=1e-12)
    # pingouin rounds its intervals to 2 decimals
    assert [found["icc1_low"], found["icc1_high"]] == pytest.approx(list(single["CI95"]),
                                                                    abs=0.005)
    assert [found["icck_low"], found["icck_high"]] == pytest.approx(list(average["CI95"]),
                                                                    abs=0.005)


def test_icc_pools_tranches_weighted_by_their_complete_pairs():
    rng = np.random.default_rng(7)
    first = rng.normal(0, 1, (10, 1)) + rng.normal(0, 1, (10, 4))
    second = rng.normal(0, 1, (20, 1)) + rng.normal(0, 1, (20, 3))
    frame = pd.concat([long_frame(first, 1, "a"), long_frame(second, 2, "b")
                       .assign(word1=lambda f: "t2" + f["word1"])])
    one, two = icc_matrix(first), icc_matrix(second)
    found = icc(frame)
    assert found["icc1"] == pytest.approx((10 * one["icc1"] + 20 * two["icc1"]) / 30)
    assert found["icck"] == pytest.approx((10 * one["icck"] + 20 * two["icck"]) / 30)
    assert found["pairs"] == 30 and found["raters"] == pytest.approx((10 * 4 + 20 * 3) / 30)


def test_icc_drops_a_quitter_and_the_pairs_someone_missed():
    rng = np.random.default_rng(8)
    matrix = rng.normal(0, 1, (12, 1)) + rng.normal(0, 1, (12, 5))
    gappy = matrix.copy()
    gappy[6:, 4] = np.nan          # rater 4 quit half way: below the median rater, dropped
    gappy[0, 1] = np.nan           # one missing answer: pair 0 leaves the block
    found = icc(long_frame(gappy))
    expected = icc_matrix(matrix[1:, :4])
    assert found["icc1"] == pytest.approx(expected["icc1"]) and found["pairs"] == 11


def test_icc_undefined_is_nan_with_a_warning():
    with pytest.warns(AgreementWarning):
        assert math.isnan(icc(long_frame(np.array([[1.0], [2.0], [3.0]])))["icc1"])


def test_perfect_agreement_gives_one():
    matrix = np.repeat(np.arange(6, dtype=float)[:, None], 4, axis=1)
    frame = long_frame(matrix)
    assert krippendorff_alpha(frame) == pytest.approx(1.0)
    assert icc(frame)["icc1"] == pytest.approx(1.0) and icc(frame)["icck"] == pytest.approx(1.0)


def test_row_and_rater_order_do_not_matter():
    frame = krippendorff_frame()
    shuffled = frame.sample(frac=1, random_state=3).replace({"rater_id": {"A": "Z"}})
    assert krippendorff_alpha(shuffled, "ordinal") == pytest.approx(
        krippendorff_alpha(frame, "ordinal"))
    rng = np.random.default_rng(1)
    matrix = rng.normal(0, 1, (10, 1)) + rng.normal(0, 1, (10, 4))
    assert icc(long_frame(matrix[:, ::-1]))["icc1"] == pytest.approx(icc(long_frame(matrix))["icc1"])


def test_agree_json_has_the_new_keys_equal_to_the_libraries(tmp_path):
    matrix = np.array(SHROUT_FLEISS, dtype=float)
    path = tmp_path / "ratings.csv"
    long_frame(matrix).to_csv(path, index=False)
    result = CliRunner().invoke(cli, ["agree", str(path), "--json", "--min-overlap", "2"])
    assert result.exit_code == 0, result.output
    figures = json.loads(result.output)
    single, average = pingouin_icc(matrix)
    assert figures["icc1"] == pytest.approx(single["ICC"], abs=1e-12)
    assert figures["icck"] == pytest.approx(average["ICC"], abs=1e-12)
    for level in ("interval", "ordinal"):
        assert figures[f"alpha_{level}"] == pytest.approx(
            krippendorff.alpha(reliability_data=matrix.T, level_of_measurement=level), abs=1e-12)
    assert figures["icc"]["raters"] == 4 and figures["icc"]["pairs"] == 6
    text = CliRunner().invoke(cli, ["agree", str(path), "--min-overlap", "2"])
    assert f"ICC(2,1) {single['ICC']:.3f}" in text.output
    assert "Krippendorff's alpha: interval" in text.output


def test_agree_without_rater_identity_gives_alpha_only(tmp_path):
    frame = krippendorff_frame()
    frame = frame.assign(rater_id=[f"?{i}" for i in range(len(frame))])
    path = tmp_path / "anonymous.csv"
    frame.to_csv(path, index=False)
    result = CliRunner().invoke(cli, ["agree", str(path), "--json", "--split-half",
                                      "--splits", "5"])
    assert result.exit_code == 0, result.output
    figures = json.loads(result.output)
    assert figures["alpha_interval"] == pytest.approx(0.849, abs=5e-4)
    assert figures["icc1"] is None and figures["icck"] is None


def test_admin_figures_give_alpha_and_icck_per_tranche():
    from lexgold.live.figures import agreement

    rng = np.random.default_rng(9)
    first = np.round(rng.normal(3, 1, (15, 1)) + rng.normal(0, 0.7, (15, 4)))
    second = np.round(rng.normal(3, 1, (15, 1)) + rng.normal(0, 0.7, (15, 3)))
    frame = pd.concat([long_frame(first, 1, "a"), long_frame(second, 2, "b")]).assign(
        kind="unique")
    table = agreement(frame).set_index("tranche")
    for tranche, matrix in ((1, first), (2, second)):
        part = frame[frame["tranche"] == tranche]
        assert table.loc[tranche, "alpha_interval"] == pytest.approx(
            krippendorff.alpha(reliability_data=matrix.T, level_of_measurement="interval"))
        assert table.loc[tranche, "icck"] == pytest.approx(icc_matrix(matrix)["icck"])
        assert table.loc[tranche, "icck"] == pytest.approx(icc(part)["icck"])
