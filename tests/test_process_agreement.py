"""IAA-1 / IAA-2 against hand-computed cases and brute force with scipy (SimLex-999 section 4.1, HyperLex section 5)."""

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from lexgold.errors import InputError
from lexgold.process import agreement as agr
from lexgold.process.agreement import (AgreementWarning, agreement_by_subset, bootstrap_over_pairs,
                                       iaa_against_mean, iaa_pairwise, pairwise_correlations,
                                       rater_agreement)


def frame(table: dict, tranche=1) -> pd.DataFrame:
    """{rater: [ratings of items x0, x1, ...]} -> long format."""
    rows = [(r, tranche, f"x{i}", "w", v) for r, values in table.items()
            for i, v in enumerate(values) if v is not None]
    return pd.DataFrame(rows, columns=["rater_id", "tranche", "word1", "word2", "rating"])


def random_study(seed=0, tranches=3, raters=6, shared=5, unique=8, missing=0.0):
    """Ratings of a tranche design: shared consistency items + unique items per tranche."""
    rng = np.random.default_rng(seed)
    rows = []
    for t in range(tranches):
        items = [f"c{i}" for i in range(shared)] + [f"u{t}_{i}" for i in range(unique)]
        for r in range(raters):
            for item in items:
                if rng.random() >= missing:
                    rows.append((f"t{t}r{r}", t, item, "w", float(rng.integers(0, 7))))
    return pd.DataFrame(rows, columns=["rater_id", "tranche", "word1", "word2", "rating"])


def brute_pairwise(ratings, pool, min_overlap):
    """IAA-1 by loops and scipy.stats.spearmanr on each pair's shared items."""
    wide = ratings.groupby(["tranche" if pool == "tranche" else "word2", "rater_id",
                            "word1"])["rating"].mean()
    values = []
    for _, part in wide.groupby(level=0):
        table = part.droplevel(0).unstack("rater_id")
        for a, b in itertools.combinations(table.columns, 2):
            both = table[[a, b]].dropna()
            if len(both) >= min_overlap and both[a].nunique() > 1 and both[b].nunique() > 1:
                values.append(stats.spearmanr(both[a], both[b]).statistic)
    return np.mean(values)


def brute_against_mean(ratings, pool, min_overlap):
    key = "tranche" if pool == "tranche" else "word2"
    values = []
    for _, part in ratings.groupby(key):
        table = part.groupby(["word1", "rater_id"])["rating"].mean().unstack()
        for rater in table.columns:
            others = table.drop(columns=rater).mean(axis=1)
            both = pd.DataFrame({"x": table[rater], "o": others}).dropna()
            if len(both) >= min_overlap and both["x"].nunique() > 1 and both["o"].nunique() > 1:
                values.append(stats.spearmanr(both["x"], both["o"]).statistic)
    return np.mean(values)


def test_hand_computed_three_raters():
    ratings = frame({"a": [0, 3, 6], "b": [1, 4, 5], "c": [6, 3, 0]})
    # rho(a,b) = 1, rho(a,c) = -1, rho(b,c) = -1
    assert iaa_pairwise(ratings, min_overlap=3) == pytest.approx(-1 / 3)
    # a vs mean(b, c) = [3.5, 3.5, 2.5]; c vs mean(a, b) = [0.5, 3.5, 5.5]; b vs mean(a, c)
    # = [3, 3, 3] is constant: undefined, left out with a warning
    expected = np.mean([stats.spearmanr([0, 3, 6], [3.5, 3.5, 2.5]).statistic,
                        stats.spearmanr([6, 3, 0], [0.5, 3.5, 5.5]).statistic])
    assert expected == pytest.approx((-np.sqrt(3) / 2 - 1) / 2)
    with pytest.warns(AgreementWarning, match="1 of 3"):
        assert iaa_against_mean(ratings, min_overlap=3) == pytest.approx(expected)


@pytest.mark.parametrize("pool", ["tranche", "all"])
@pytest.mark.parametrize("missing", [0.0, 0.2])
def test_against_scipy_brute_force(pool, missing):
    ratings = random_study(seed=3, missing=missing)
    assert iaa_pairwise(ratings, pool=pool, min_overlap=4) == pytest.approx(
        brute_pairwise(ratings, pool, 4))
    assert iaa_against_mean(ratings, pool=pool, min_overlap=4) == pytest.approx(
        brute_against_mean(ratings, pool, 4))


def test_pool_all_compares_across_tranches_on_shared_items_only():
    ratings = random_study(seed=5, tranches=2, raters=2, shared=5, unique=6)
    table = pairwise_correlations(ratings, pool="all", min_overlap=5)
    cross = table[table["rater_a"].str[:2] != table["rater_b"].str[:2]]
    assert len(cross) == 4 and (cross["n"] == 5).all()
    # raising min_overlap above the shared set drops the cross-tranche pairs
    table = pairwise_correlations(ratings, pool="all", min_overlap=6)
    assert (table["rater_a"].str[:2] == table["rater_b"].str[:2]).all()


def test_row_and_rater_order_do_not_matter():
    ratings = random_study(seed=7, missing=0.1)
    shuffled = ratings.sample(frac=1.0, random_state=1)
    renamed = shuffled.assign(rater_id="z" + shuffled["rater_id"].str[::-1])
    for statistic in (iaa_pairwise, iaa_against_mean):
        base = statistic(ratings, min_overlap=4)
        assert statistic(shuffled, min_overlap=4) == pytest.approx(base)
        assert statistic(renamed, min_overlap=4) == pytest.approx(base)


@pytest.mark.parametrize("statistic", [iaa_pairwise, iaa_against_mean])
def test_perfect_agreement_is_one(statistic):
    values = [0, 2, 2, 5, 6, 1]
    ratings = frame({r: values for r in "abcd"})
    assert statistic(ratings, min_overlap=3) == pytest.approx(1.0)


@pytest.mark.parametrize("statistic", [iaa_pairwise, iaa_against_mean])
def test_one_rater_or_constant_ratings_warn_and_give_nan(statistic):
    with pytest.warns(AgreementWarning):
        assert np.isnan(statistic(frame({"a": [0, 3, 6, 2]}), min_overlap=3))
    with pytest.warns(AgreementWarning):
        assert np.isnan(statistic(frame({"a": [3, 3, 3], "b": [3, 3, 3]}), min_overlap=3))


@pytest.mark.parametrize("statistic", [iaa_pairwise, iaa_against_mean])
def test_undefined_within_tranches_says_why_and_suggests_pool_all(statistic):
    """One rater per tranche: nobody to compare within a tranche. The warning says raters
    are compared only within their tranche and names pool='all' (`lexgold agree --pool all`),
    which does give a figure on the shared pairs."""
    ratings = random_study(tranches=3, raters=1, shared=12)
    with pytest.warns(AgreementWarning) as caught:
        assert np.isnan(statistic(ratings))
    message = str(caught[-1].message)
    assert "is undefined" in message
    assert "raters are compared only within their tranche (pool='tranche'" in message
    assert "pool='all' (`lexgold agree --pool all`)" in message
    with warnings.catch_warnings():
        warnings.simplefilter("error", AgreementWarning)
        assert -1 <= statistic(ratings, pool="all") <= 1
    with pytest.warns(AgreementWarning) as caught:       # one tranche: pooling cannot help
        assert np.isnan(statistic(frame({"a": [0, 3, 6, 2]}), min_overlap=3))
    assert "within their tranche" not in str(caught[-1].message)


def test_agree_prints_the_tranche_hint(tmp_path):
    from click.testing import CliRunner

    from lexgold.cli import cli
    path = tmp_path / "ratings.csv"
    random_study(tranches=3, raters=1, shared=12).to_csv(path, index=False)
    result = CliRunner().invoke(cli, ["agree", str(path)])
    assert result.exit_code == 0, result.output
    warned = [line for line in result.stderr.splitlines() if line.startswith("Warning: IAA-")]
    assert len(warned) == 2
    assert all("compared only within their tranche" in line and "--pool all" in line
               for line in warned)
    pooled = CliRunner().invoke(cli, ["agree", str(path), "--pool", "all"])
    assert pooled.exit_code == 0 and "Warning: IAA-" not in pooled.stderr
    # one rater per tranche: the ICC, computed within tranches, is undefined and says so
    assert "Warning: ICC undefined" in pooled.stderr


def test_constant_rater_is_left_out_with_a_warning():
    ratings = frame({"a": [0, 3, 6], "b": [1, 4, 5], "c": [2, 2, 2]})
    with pytest.warns(AgreementWarning, match="undefined"):
        assert iaa_pairwise(ratings, min_overlap=3) == pytest.approx(1.0)


def test_min_overlap_leaves_out_pairs():
    ratings = frame({"a": [0, 3, 6, 1], "b": [1, 4, 5, None], "c": [6, 3, 0, 2]})
    table = pairwise_correlations(ratings, min_overlap=4)
    assert set(zip(table["rater_a"], table["rater_b"])) == {("a", "c")}


def test_checkpoints_and_repeats():
    ratings = frame({"a": [0, 3, 6], "b": [1, 4, 5]})
    extra = pd.DataFrame({"rater_id": ["a", "a"], "tranche": 1, "word1": ["x2", "check"],
                          "word2": ["w", ""], "rating": [2.0, 0.0],
                          "kind": ["calibration", "checkpoint"]})
    ratings = pd.concat([ratings.assign(kind="unique"), extra], ignore_index=True)
    # a's x2 becomes (6 + 2) / 2 = 4: still the largest, rho stays 1; the checkpoint is ignored
    assert iaa_pairwise(ratings, min_overlap=3) == pytest.approx(1.0)


def test_leave_one_out_gain_matches_recomputation():
    ratings = random_study(seed=11, tranches=2, raters=5, missing=0.1)
    table = rater_agreement(ratings, min_overlap=4)
    full = iaa_pairwise(ratings, min_overlap=4)
    for row in table.itertuples():
        without = iaa_pairwise(ratings[ratings["rater_id"] != row.rater_id], min_overlap=4)
        assert row.gain == pytest.approx(without - full)
    pairs = pairwise_correlations(ratings, min_overlap=4)
    a = pairs[(pairs["rater_a"] == "t0r0") | (pairs["rater_b"] == "t0r0")]["rho"].mean()
    assert table.set_index("rater_id").loc["t0r0", "mean_rho"] == pytest.approx(a)


def test_by_subset_equals_agreement_on_the_subset():
    ratings = random_study(seed=2)
    ratings["pos"] = np.where(ratings["word1"].str[-1].astype(int) % 2 == 0, "N", "V")
    checks = pd.DataFrame({"rater_id": ["t0r0"], "tranche": 0, "word1": ["chosen"],
                           "word2": ["pair"], "rating": [1.0], "pos": ["N"],
                           "kind": ["checkpoint"]})
    with_checks = pd.concat([ratings.assign(kind="unique"), checks], ignore_index=True)
    table = agreement_by_subset(with_checks, "pos", min_overlap=3).set_index("subset")
    assert table.loc["N", "pairs"] == ratings.loc[ratings["pos"] == "N", "word1"].nunique()
    for pos in ("N", "V"):
        part = ratings[ratings["pos"] == pos]
        assert table.loc[pos, "iaa1"] == pytest.approx(iaa_pairwise(part, min_overlap=3))
        assert table.loc[pos, "iaa2"] == pytest.approx(iaa_against_mean(part, min_overlap=3))
    boot = agreement_by_subset(ratings, "pos", min_overlap=3, rng=np.random.default_rng(0),
                               n_boot=30).set_index("subset")
    assert (boot["iaa1_low"] <= boot["iaa1_high"]).all()
    assert boot[["iaa1", "iaa2"]].equals(table[["iaa1", "iaa2"]])
    labels = pd.Series({("c0", "w"): "first", ("c1", "w"): "first", ("c2", "w"): "first"})
    table = agreement_by_subset(ratings, labels, min_overlap=3)
    assert table["subset"].tolist() == ["first"] and table["pairs"].tolist() == [3]


def test_by_subset_ignores_other_columns_and_names_them_all_when_one_is_missing():
    """Only the columns it uses are copied per subset (issue 22); the figures and intervals do
    not depend on the others, and a missing subset column is named with every column."""
    ratings = random_study(seed=2)
    ratings["pos"] = np.where(ratings["word1"].str[-1].astype(int) % 2 == 0, "N", "V")
    wide = ratings.assign(answered_at="2026-01-01T00:00:00Z", topic="", score_note="x")
    tables = [agreement_by_subset(frame, "pos", min_overlap=3, rng=np.random.default_rng(5),
                                  n_boot=20) for frame in (ratings, wide)]
    pd.testing.assert_frame_equal(tables[0], tables[1])
    with pytest.raises(InputError, match=r"field 'relation': no such column; columns: "
                                         r"rater_id, .*, pos, answered_at, topic, score_note"):
        agreement_by_subset(wide, "relation")

def test_bootstrap_is_seeded_and_matches_the_generic_path():
    ratings = random_study(seed=4, missing=0.1)
    first = bootstrap_over_pairs(ratings, iaa_pairwise, rng=np.random.default_rng(1), n_boot=60,
                         min_overlap=4)
    again = bootstrap_over_pairs(ratings, iaa_pairwise, rng=np.random.default_rng(1), n_boot=60,
                         min_overlap=4)
    generic = bootstrap_over_pairs(ratings, lambda f, **k: iaa_pairwise(f, **k),
                           rng=np.random.default_rng(1), n_boot=60, min_overlap=4)
    assert first == again
    assert first == pytest.approx(generic)
    two = bootstrap_over_pairs(ratings, iaa_against_mean, rng=np.random.default_rng(1), n_boot=60,
                       min_overlap=4)
    two_generic = bootstrap_over_pairs(ratings, lambda f, **k: iaa_against_mean(f, **k),
                               rng=np.random.default_rng(1), n_boot=60, min_overlap=4)
    assert two == pytest.approx(two_generic)
    assert first[0] < first[1]


def _recorded(statistic, seen):
    """``statistic`` through bootstrap_over_pairs's generic path, keeping every replicate's
    value."""
    def recording(sample, **kwargs):
        seen.append(statistic(sample, **kwargs))
        return seen[-1]
    return recording


def test_bootstrap_interval_is_the_central_95_percent_of_the_replicates():
    """The percentile interval (Efron & Tibshirani 1993, section 13.3) at the default level is
    the 2.5 % and 97.5 % quantiles of the replicates, on the generic and the fast path."""
    ratings = random_study(seed=4, missing=0.1)
    seen = []
    generic = bootstrap_over_pairs(ratings, _recorded(iaa_pairwise, seen),
                                   rng=np.random.default_rng(1), n_boot=80, min_overlap=4)
    values = np.array(seen)[~np.isnan(seen)]
    assert len(values) == 80
    expected = tuple(np.quantile(values, [0.025, 0.975]))
    assert generic == pytest.approx(expected, abs=1e-12)
    fast = bootstrap_over_pairs(ratings, iaa_pairwise, rng=np.random.default_rng(1), n_boot=80,
                        min_overlap=4)
    assert fast == pytest.approx(expected, abs=1e-12)
    # the 90 % interval is narrower: a level the tests can tell apart
    assert np.quantile(values, 0.05) > expected[0] or np.quantile(values, 0.95) < expected[1]
    level_80 = bootstrap_over_pairs(ratings, iaa_pairwise, rng=np.random.default_rng(1), n_boot=80,
                            min_overlap=4, level=0.8)
    assert level_80 == pytest.approx(tuple(np.quantile(values, [0.1, 0.9])), abs=1e-12)


def test_percentile_interval_by_hand():
    # np.quantile interpolates linearly: the 25 % point of (1, 3) is 1.5, the 75 % one 2.5
    assert agr._percentile_interval([1, 3], 0.5) == (1.5, 2.5)
    assert agr._percentile_interval([3, np.nan, 1, 2, 5], 0.5) == (1.75, 3.5)
    assert np.isnan(agr._percentile_interval([1, np.nan], 0.95)).all()


def test_stage_and_subset_intervals_default_to_95_percent():
    ratings = random_study(seed=4, missing=0.1)
    seen = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AgreementWarning)
        bootstrap_over_pairs(ratings, _recorded(iaa_pairwise, seen), rng=np.random.default_rng(2),
                     n_boot=80, min_overlap=4)
        expected = pytest.approx(list(np.nanquantile(seen, [0.025, 0.975])), abs=1e-12)
        stage = agr.stage_agreement(ratings, min_overlap=4, rng=np.random.default_rng(2),
                                    n_boot=80)
        one_subset = agreement_by_subset(ratings.assign(part="all"), "part", min_overlap=4,
                                         rng=np.random.default_rng(2), n_boot=80)
    assert stage["iaa1_ci"] == expected        # IAA-1 is drawn first from the generator
    assert one_subset[["iaa1_low", "iaa1_high"]].iloc[0].tolist() == expected


def test_bootstrap_needs_a_generator():
    with pytest.raises(InputError, match="Generator"):
        bootstrap_over_pairs(frame({"a": [1, 2, 3]}), iaa_pairwise, rng=1)


def test_bad_options_and_input():
    ratings = frame({"a": [0, 3, 6], "b": [1, 4, 5]})
    with pytest.raises(InputError, match="pool"):
        iaa_pairwise(ratings, pool="everything")
    with pytest.raises(InputError, match="min_overlap"):
        iaa_pairwise(ratings, min_overlap=1)
    with pytest.raises(InputError, match="rating"):
        iaa_pairwise(ratings.assign(rating=["x", 1, 2, 3, 4, 5]))
    with pytest.raises(InputError, match="tranche"):
        iaa_pairwise(ratings.drop(columns="tranche"))
    with pytest.raises(InputError, match="kind"):
        iaa_pairwise(ratings.assign(kind="bogus"))


def test_dense_helpers_equal_public_functions():
    ratings = random_study(seed=9, missing=0.15)
    matrices = [group.matrix for group in agr._matrices(ratings, "tranche")]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AgreementWarning)
        assert agr._iaa1_dense(matrices, 4) == pytest.approx(iaa_pairwise(ratings, min_overlap=4))
        assert agr._iaa2_dense(matrices, 4) == pytest.approx(
            iaa_against_mean(ratings, min_overlap=4))


def test_coded_frames_give_the_same_figures_as_plain_ones():
    """A frame read by ``read_ratings`` (key columns as categoricals) takes the integer-code
    routes (a rater's answers, the per-tranche listings, the subset labels); a plain frame
    takes pandas' groupby and join: the same tables, to the last bit, with a pair a rater
    rated twice (a calibration repeat, averaged) and non-integer repeats."""
    from lexgold.ratings.long import answers, check_ratings, coded

    ratings = random_study(seed=6, missing=0.1)
    repeats = ratings.groupby("rater_id").head(2).assign(kind="calibration")
    repeats["rating"] = repeats["rating"] + 0.3
    ratings = pd.concat([ratings.assign(kind="unique"), repeats], ignore_index=True)
    plain = check_ratings(ratings)
    fast = coded(plain)
    want, got = answers(plain), answers(fast)
    assert np.array_equal(got["rating"].to_numpy(), want["rating"].to_numpy())
    assert got[["rater_id", "word1"]].astype(str).equals(want[["rater_id", "word1"]].astype(str))
    labels = pd.Series({(w, "w"): ("c" if w.startswith("c") else "u")
                        for w in ratings["word1"].unique()})
    for figures in (lambda f: agreement_by_subset(f, labels, min_overlap=3),
                    lambda f: pd.DataFrame(agr.iaa_weighted_by_pairs(f, min_overlap=3)
                                           ["tranches"])):
        one, two = figures(plain), figures(fast)
        pd.testing.assert_frame_equal(one.astype({"subset": str} if "subset" in one else {}),
                                      two.astype({"subset": str} if "subset" in two else {}),
                                      check_exact=True, check_dtype=False)
