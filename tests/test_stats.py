"""The statistics toolbox (lexgold.stats), the builders' one manifest schema (lexgold.manifest)
and USF concreteness (lexgold.resources.usf_concreteness): hand cases and scipy comparisons."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats as scipy_stats

from lexgold.errors import InputError
from lexgold.manifest import read_manifest, run_manifest
from lexgold.resources import usf_concreteness
from lexgold.stats import (
    least_squares_line,
    bootstrap_ci,
    check_bootstrap,
    percentile_interval,
    rescale,
    rowwise_pearson,
)


# -- rescale ---------------------------------------------------------------------------------
def test_rescale_hand_cases_keep_both_offsets():
    assert rescale([0, 3, 6], (0, 6), (0, 10)).tolist() == [0.0, 5.0, 10.0]
    assert rescale([1, 4, 7], (1, 7), (1, 5)).tolist() == [1.0, 3.0, 5.0]   # USF -> Brysbaert
    assert rescale([1, 2.5, 7], (1, 7), (2, 4)).tolist() == [2.0, 2.5, 4.0]
    assert float(rescale(8.0, (1, 7), (0, 6))) == 7.0          # outside: the same line


def test_rescale_keeps_a_series_index_and_name():
    values = pd.Series([1.0, 7.0], index=["cat", "idea"], name="conc")
    out = rescale(values, (1, 7), (1, 5))
    pd.testing.assert_series_equal(out, pd.Series([1.0, 5.0], index=["cat", "idea"],
                                                  name="conc"))


@pytest.mark.parametrize("source,target", [((6, 0), (0, 10)), ((0, 6), (0, 0)),
                                           ((1, 1), (0, 1))])
def test_rescale_refuses_an_empty_or_reversed_interval(source, target):
    with pytest.raises(InputError, match="increasing intervals"):
        rescale([1.0], source, target)


# -- rowwise_pearson -------------------------------------------------------------------------
def test_least_squares_line_matches_scipy_linregress():
    rng = np.random.default_rng(0)
    x = rng.integers(0, 11, size=200).astype(float)          # a machine's 0-10 answers
    y = 0.56 * x - 0.41 + rng.normal(scale=0.8, size=200)
    fit = scipy_stats.linregress(x, y)
    slope, intercept = least_squares_line(x, y)
    assert slope == pytest.approx(fit.slope, rel=1e-12)
    assert intercept == pytest.approx(fit.intercept, rel=1e-12)
    assert least_squares_line([0, 5, 10], [0.0, 3.0, 6.0]) == (0.6, 0.0)


def test_least_squares_line_of_a_constant_machine_is_the_flat_mean():
    assert least_squares_line([4, 4, 4, 4], [1.0, 2.0, 3.0, 6.0]) == (0.0, 3.0)
    assert least_squares_line([7], [5.0]) == (0.0, 5.0)


def test_rowwise_pearson_matches_scipy_by_rows_and_columns():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(6, 20)), rng.normal(size=(6, 20))
    expected = [scipy_stats.pearsonr(a, b).statistic for a, b in zip(x, y)]
    np.testing.assert_allclose(rowwise_pearson(x, y), expected, rtol=1e-12)
    np.testing.assert_allclose(rowwise_pearson(x.T, y.T, axis=0), expected, rtol=1e-12)


def test_rowwise_pearson_hand_case_and_constant_row():
    # x = 1, 2, 3; y = 2, 4, 7: sxy = 5, sxx = 2, syy = 12.667 -> r = 5 / sqrt(25.333)
    r = rowwise_pearson([[1, 2, 3], [1, 1, 1]], [[2, 4, 7], [1, 2, 3]])
    assert r[0] == pytest.approx(5 / np.sqrt(2 * 38 / 3))
    assert np.isnan(r[1])


# -- bootstrap_ci ----------------------------------------------------------------------------
def _mean_difference(x, y, axis=-1):
    return (x - y).mean(axis=axis)


def test_bootstrap_percentile_is_the_central_level_of_the_paired_replicates():
    rng = np.random.default_rng(1)
    x = rng.normal(size=30)
    y = x + rng.normal(scale=0.5, size=30)
    draws = np.random.default_rng(7).integers(0, 30, size=(400, 30))   # the documented draws
    replicates = (x[draws] - y[draws]).mean(axis=1)
    for level in (0.95, 0.9, 0.8):
        got = bootstrap_ci([x, y], _mean_difference, rng=np.random.default_rng(7), n_boot=400,
                           level=level)
        tail = 100 * (1 - level) / 2
        np.testing.assert_allclose(got, np.percentile(replicates, [tail, 100 - tail]),
                                   rtol=1e-12)


def test_bootstrap_matches_scipy_percentile_and_bca():
    rng = np.random.default_rng(2)
    x = rng.normal(size=25)
    y = 0.6 * x + rng.normal(size=25)
    for method, scipy_method in (("percentile", "percentile"), ("bca", "BCa")):
        got = bootstrap_ci([x, y], rowwise_pearson, rng=np.random.default_rng(3), n_boot=500,
                           method=method)
        want = scipy_stats.bootstrap((x, y), rowwise_pearson, paired=True, vectorized=True,
                                     n_resamples=500, method=scipy_method,
                                     rng=np.random.default_rng(3)).confidence_interval
        np.testing.assert_allclose(got, [want.low, want.high], rtol=1e-12)


def test_bootstrap_several_statistics_share_the_replicates():
    x = np.arange(12.0)
    y = x ** 2

    def both(a, b, axis=-1):
        return np.stack([rowwise_pearson(a, b, axis=axis), (a - b).mean(axis=axis)])

    got = bootstrap_ci([x, y], both, rng=np.random.default_rng(4), n_boot=200)
    assert got.shape == (2, 2)
    np.testing.assert_allclose(got[1], bootstrap_ci([x, y], _mean_difference,
                                                    rng=np.random.default_rng(4), n_boot=200))


def test_bootstrap_percentile_leaves_out_undefined_replicates():
    # three pairs, two equal gold values: some replicates are constant (r undefined)
    x, y = np.array([1.0, 1.0, 2.0]), np.array([3.0, 1.0, 2.0])
    draws = np.random.default_rng(5).integers(0, 3, size=(300, 3))
    with np.errstate(invalid="ignore", divide="ignore"):
        replicates = rowwise_pearson(x[draws], y[draws])
    assert np.isnan(replicates).any() and not np.isnan(replicates).all()
    got = bootstrap_ci([x, y], rowwise_pearson, rng=np.random.default_rng(5), n_boot=300)
    np.testing.assert_allclose(got, np.nanpercentile(replicates, [2.5, 97.5]))


def test_percentile_interval_by_hand_and_against_numpy():
    """The one percentile interval (Efron & Tibshirani 1993, 13.3): linear interpolation
    between order statistics, NaN replicates left out, fewer than two defined: NaN."""
    assert percentile_interval([1.0, 3.0], 0.5).tolist() == [1.5, 2.5]
    assert percentile_interval([3.0, np.nan, 1.0, 2.0, 5.0], 0.5).tolist() == [1.75, 3.5]
    assert np.isnan(percentile_interval([1.0, np.nan], 0.95)).all()
    rows = np.random.default_rng(2).normal(size=(3, 200))
    rows[1, :150] = np.nan
    rows[2, 1:] = np.nan
    got = percentile_interval(rows, 0.9)
    assert got.shape == (3, 2)
    np.testing.assert_allclose(got[0], np.percentile(rows[0], [5, 95]), rtol=1e-14)
    np.testing.assert_allclose(got[1], np.nanpercentile(rows[1], [5, 95]), rtol=1e-14)
    assert np.isnan(got[2]).all()


def test_both_bootstraps_give_the_same_interval_of_their_replicates():
    """The paired bootstrap of evaluate and the bootstrap over pairs of the agreement figures
    draw differently but take one interval: percentile_interval of their replicates."""
    from lexgold.process import agreement

    x = np.arange(12.0)
    y = x + np.random.default_rng(1).normal(size=12)
    draws = np.random.default_rng(3).integers(0, 12, size=(150, 12))
    replicates = rowwise_pearson(x[draws], y[draws])
    got = bootstrap_ci([x, y], rowwise_pearson, rng=np.random.default_rng(3), n_boot=150)
    np.testing.assert_array_equal(got, percentile_interval(replicates, 0.95))
    assert agreement._percentile_interval(replicates, 0.95) == tuple(
        percentile_interval(replicates, 0.95))


def test_bootstrap_all_undefined_is_nan():
    x, y = np.ones(5), np.arange(5.0)
    assert np.isnan(bootstrap_ci([x, y], rowwise_pearson, rng=np.random.default_rng(0),
                                 n_boot=20)).all()


@pytest.mark.parametrize("kwargs,field", [
    ({"rng": 3}, "rng"), ({"n_boot": 0}, "n_boot"), ({"n_boot": 2.5}, "n_boot"),
    ({"level": 1.0}, "level"), ({"level": 0}, "level"), ({"method": "basic"}, "method")])
def test_check_bootstrap_names_the_field(kwargs, field):
    args = {"rng": np.random.default_rng(0), "n_boot": 10, "level": 0.95,
            "method": "percentile"} | kwargs
    with pytest.raises(InputError) as error:
        check_bootstrap(**args)
    assert error.value.field == field


# -- manifest --------------------------------------------------------------------------------
def test_run_manifest_schema():
    protocol = {"name": "simlex", "_path": "/home/a/simlex.toml", "_sha256": "ab"}
    got = run_manifest(protocol, 7, {"k": 1}, {"usf": [{"file": "A-B.txt", "sha256": "cd"}]},
                       libraries=("numpy",))
    assert got["protocol"] == {"name": "simlex", "file": "simlex.toml", "sha256": "ab"}
    assert got["seed"] == 7 and got["settings"] == {"k": 1}
    assert got["resources"]["usf"][0]["file"] == "A-B.txt"
    assert got["libraries"] == {"numpy": np.__version__}
    assert read_manifest(got) == got


def test_read_manifest_converts_the_old_tr9856_layout():
    old = {"lexgold_version": "0.9", "seed": 1,
           "protocol": {"path": "tr9856.toml", "sha256": "ab"},
           "inputs": {"corpus": {"path": "/data/enwiki.xml.bz2", "sha256": "c1"},
                      "topics": {"path": "C:\\data\\topics.txt", "sha256": "c2"}},
           "libraries": {"nltk": "3.9"}}
    assert read_manifest(old) == {
        "lexgold_version": "0.9", "seed": 1,
        "protocol": {"name": None, "file": "tr9856.toml", "sha256": "ab"},
        "resources": {"corpus": [{"file": "enwiki.xml.bz2", "sha256": "c1"}],
                      "topics": [{"file": "topics.txt", "sha256": "c2"}]},
        "settings": {}, "libraries": {"nltk": "3.9"}}
    assert read_manifest(None) is None and read_manifest([1]) is None


# -- USF concreteness ------------------------------------------------------------------------
def test_usf_concreteness_one_normalisation():
    frame = pd.DataFrame({"cue": [" Dog", "IDEA", None], "target": ["CAT", "dog", "SUN"],
                          "qcon": [6.5, np.nan, 5.0], "tcon": [6.0, 1.0, np.nan]})
    got = usf_concreteness(frame)
    # cues first; a missing rating or word is left out; the first rating of a word wins
    assert got.to_dict() == {"dog": 6.5, "cat": 6.0}
    assert got.dtype == float


def test_usf_concreteness_on_the_real_norms_equals_the_old_release_reading(usf):
    """The release used to lower-case without stripping; on the real USF files both agree."""
    got = usf_concreteness(usf)
    cues = pd.Series(usf["qcon"].to_numpy(dtype=float), index=usf["cue"].str.lower())
    targets = pd.Series(usf["tcon"].to_numpy(dtype=float), index=usf["target"].str.lower())
    old = pd.concat([cues, targets]).dropna()
    old = old[~old.index.duplicated()]
    assert len(got) == len(old) == 3260
    assert got.index.astype(object).tolist() == old.index.tolist()
    np.testing.assert_array_equal(got.to_numpy(), old.to_numpy())
