"""Ranks, Pearson and Spearman of lexgold.stats against hand cases and SciPy (the numpy versions
``lexgold evaluate`` uses so that it starts without loading scipy.stats)."""

import warnings

import numpy as np
import pytest
from scipy import stats as scipy_stats

from lexgold.stats import average_ranks, pearson, spearman


def test_average_ranks_by_hand_ties_share_the_mean_rank():
    assert average_ranks([3.0, 1.0, 2.0]).tolist() == [3.0, 1.0, 2.0]
    assert average_ranks([5, 5, 5]).tolist() == [2.0, 2.0, 2.0]
    assert average_ranks([2, 1, 2, 1, 3]).tolist() == [3.5, 1.5, 3.5, 1.5, 5.0]
    assert average_ranks([[1, 2], [2, 2]]).tolist() == [[1.0, 2.0], [1.5, 1.5]]
    assert average_ranks([[1, 2], [2, 2]], axis=0).tolist() == [[1.0, 1.5], [2.0, 1.5]]


def test_average_ranks_a_nan_makes_its_slice_nan_as_scipy_propagates():
    got = average_ranks([[1.0, np.nan, 0.0], [2.0, 2.0, 1.0]])
    assert np.isnan(got[0]).all() and got[1].tolist() == [2.5, 2.5, 1.0]
    want = scipy_stats.rankdata([[1.0, np.nan, 0.0], [2.0, 2.0, 1.0]], axis=-1)
    np.testing.assert_array_equal(got, want)


def test_average_ranks_equal_scipy_rankdata_on_many_tied_samples():
    rng = np.random.default_rng(0)
    for n in (1, 2, 3, 7, 50, 999):
        values = rng.integers(0, 6, size=(20, n)).astype(float)
        values[3, 0] = np.nan
        for axis, data in ((-1, values), (0, values.T)):
            np.testing.assert_array_equal(average_ranks(data, axis=axis),
                                          scipy_stats.rankdata(data, axis=axis))


def test_average_ranks_omit_nan_ranks_the_rest_as_scipy_omits():
    # [3, nan, 1, 3]: 1 is first, the two 3s share places 2 and 3, the NaN is left out
    assert np.array_equal(average_ranks([3.0, np.nan, 1.0, 3.0], omit_nan=True),
                          [2.5, np.nan, 1.0, 2.5], equal_nan=True)
    rng = np.random.default_rng(2)
    for levels in (2, 5, 50):
        values = rng.integers(0, levels, size=(9, 7)).astype(float) / 2
        values[rng.random(values.shape) < 0.3] = np.nan
        for axis in (0, 1, -1):
            np.testing.assert_array_equal(
                average_ranks(values, axis=axis, omit_nan=True),
                scipy_stats.rankdata(values, axis=axis, nan_policy="omit"))


def test_average_ranks_of_untied_and_three_axis_samples_equal_scipy():
    rng = np.random.default_rng(1)
    tied = rng.integers(0, 5, size=(7, 3, 11)).astype(float)
    untied = rng.random((4, 50))
    for data in (tied, untied):
        for axis in range(-1, data.ndim):
            np.testing.assert_array_equal(average_ranks(data, axis=axis),
                                          scipy_stats.rankdata(data, axis=axis))


def test_pearson_and_spearman_by_hand():
    # x = 1..4, y = 2, 4, 5, 9: deviations -1.5 -0.5 0.5 1.5 and -3 -1 0 4; r = 11 / sqrt(5 * 26)
    assert pearson([1, 2, 3, 4], [2, 4, 5, 9]) == pytest.approx(11 / np.sqrt(130), rel=1e-14)
    # ranks of y = 5, 6, 7, 8, 7 are 1, 2, 3.5, 5, 3.5 (deviations -2 -1 0.5 2 0.5, x's -2..2):
    # rho = 8 / sqrt(10 * 9.5)
    assert spearman([1, 2, 3, 4, 5], [5, 6, 7, 8, 7]) == pytest.approx(8 / np.sqrt(95),
                                                                       rel=1e-14)
    assert spearman([1, 2, 3], [30, 20, 10]) == -1.0
    assert pearson([0, 1], [5, 1]) == -1.0


def test_constant_or_nan_samples_are_nan_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for x, y in (([1, 1, 1], [1, 2, 3]), ([1, 2, 3], [2, 2, 2]), ([1, np.nan, 3], [1, 2, 3])):
            assert np.isnan(pearson(x, y)) and np.isnan(spearman(x, y))


def test_unequal_or_too_short_samples_are_refused():
    for x, y in (([1, 2], [1, 2, 3]), ([1], [1])):
        with pytest.raises(ValueError):
            pearson(x, y)
        with pytest.raises(ValueError):
            spearman(x, y)


def test_pearson_and_spearman_equal_scipy_to_the_last_bit():
    rng = np.random.default_rng(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i in range(600):
            n = int(rng.integers(2, 400))
            x = rng.integers(0, 5, n).astype(float) if i % 2 else rng.normal(size=n)
            y = rng.normal(size=n) * 10.0 ** rng.integers(-5, 5)
            if i % 7 == 0:
                y[rng.integers(0, n)] = np.nan
            if i % 11 == 0:
                y = np.round(y, 1)                    # ties in both samples
            for ours, theirs in ((pearson, scipy_stats.pearsonr),
                                 (spearman, scipy_stats.spearmanr)):
                want = float(theirs(x, y).statistic)
                got = ours(x, y)
                assert got == want or (np.isnan(got) and np.isnan(want)), (ours, n, got, want)


def test_average_ranks_of_one_sample_equal_scipy_tied_untied_or_with_a_nan():
    rng = np.random.default_rng(3)
    for n in (1, 2, 3, 40, 3500):
        for values in (rng.integers(0, 9, n) / 7, rng.random(n), np.full(n, 2.0)):
            np.testing.assert_array_equal(average_ranks(values), scipy_stats.rankdata(values))
            with_nan = values.copy()
            with_nan[n // 2] = np.nan
            np.testing.assert_array_equal(average_ranks(with_nan),
                                          scipy_stats.rankdata(with_nan))
            np.testing.assert_array_equal(average_ranks(list(values)),
                                          average_ranks(values[None, :])[0])
