"""lexgold.crowd.allocation_criteria.misorderings: the banded sum against the full O(N^2) sum."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import ndtr

from lexgold.crowd import allocation_criteria as ac
from lexgold.crowd import replay as rp
from lexgold.crowd.logs import read_log
from lexgold.resources._files import resource_files

SIMVERB = resource_files("simverb3500_ratings")[0].location
RELATIVE = 1e-12


def full_sum(means, se2) -> np.ndarray:
    """``sum_{j != i} Phi(-|m_i - m_j| / sqrt(se2_i + se2_j))`` over every other pair, no
    grouping, no band (equal means with a zero scale: 1/2)."""
    means, se2 = np.asarray(means, float), np.asarray(se2, float)
    out = np.empty(len(means))
    for a in range(0, len(means), 256):
        rows = slice(a, a + 256)
        gap = np.abs(means[rows, None] - means[None, :])
        scale = np.sqrt(se2[rows, None] + se2[None, :])
        with np.errstate(divide="ignore", invalid="ignore"):
            x = np.where(scale > 0, gap / scale, np.where(gap > 0, np.inf, 0.0))
        terms = ndtr(-x)
        terms[np.arange(terms.shape[0]), np.arange(a, a + terms.shape[0])] = 0.0
        out[rows] = terms.sum(axis=1)
    return out


def assert_close(found, expected):
    np.testing.assert_allclose(found, expected, rtol=RELATIVE, atol=0)


def test_a_small_case_by_hand():
    # means 1, 1, 2 with se2 0.5 each: Phi(0) = 1/2 for the tie, Phi(-1/1) for the gap of 1
    found = ac.misorderings([1.0, 1.0, 2.0], [0.5, 0.5, 0.5])
    expected = [0.5 + ndtr(-1.0), 0.5 + ndtr(-1.0), 2 * ndtr(-1.0)]
    assert_close(found, expected)


@pytest.mark.parametrize("seed", range(6))
def test_random_ties_on_an_integer_scale_equal_the_full_sum(seed):
    rng = np.random.default_rng(seed)
    size = int(rng.integers(50, 1500))
    n = rng.integers(2, 9, size)
    means = rng.integers(0, 7 * 8, size) / n                  # few ratings of a 0-6 scale
    se2 = rng.choice(rng.uniform(0.05, 1.5, 40), size) / n    # few distinct variances
    for block in (7, 64, 256):                                # many strips, some partial
        assert_close(ac.misorderings(means, se2, block), full_sum(means, se2))


@pytest.mark.parametrize("seed", range(4))
def test_terms_beyond_the_band_are_left_out_and_the_sum_still_equals_the_full_one(seed):
    rng = np.random.default_rng(seed)
    means = np.round(rng.uniform(0, 1000, 2000), 1)          # a wide scale: most pairs far
    se2 = rng.uniform(0.01, 4.0, 2000)
    m_sorted = np.sort(means)
    z = -ac.ndtri(ac.MISORDERING_TOLERANCE / 2 / len(means))
    expected = full_sum(means, se2)
    for block in (4, 16, 64):
        _, skipped = ac._misordering_strips(m_sorted, np.full(2000, se2.max()), np.ones(2000),
                                           z, block)
        assert skipped                                        # the band leaves terms out
        assert_close(ac.misorderings(means, se2, block), expected)


def test_isolated_pairs_whose_sum_is_tiny_are_summed_in_full():
    # ten clusters 50 apart and two lone pairs between them: their few misorderings are tiny
    # terms from the pairs near them, and all of them count (relative accuracy, not absolute)
    rng = np.random.default_rng(3)
    means = np.concatenate([np.repeat(np.arange(10) * 50.0, 100) + rng.normal(0, 1, 1000),
                            [20.0, 470.0]])
    se2 = np.concatenate([np.full(1000, 0.5), [9.0, 25.0]])
    expected = full_sum(means, se2)
    assert expected[-2] < 0.5 and expected[-1] < 0.5
    assert_close(ac.misorderings(means, se2, 32), expected)


def test_zero_standard_errors_count_a_tie_half_and_a_gap_nothing():
    means = np.array([1.0, 1.0, 1.0, 2.0, 2.0, 3.0])
    se2 = np.array([0.0, 0.0, 0.5, 0.0, 0.0, 0.0])
    found = ac.misorderings(means, se2, 2)
    assert_close(found, full_sum(means, se2))
    assert found[0] == 1.0                      # its equal and (1, 0.5): a half each
    assert found[3] == pytest.approx(0.5 + ndtr(-1 / np.sqrt(0.5)))
    assert found[5] == pytest.approx(ndtr(-2 / np.sqrt(0.5)))


def test_no_pairs_and_one_pair():
    assert ac.misorderings([], []).shape == (0,)
    assert ac.misorderings([3.0], [0.2]).tolist() == [0.0]


@pytest.mark.parametrize("rule", ["misordering", "rank+error"])
def test_simverbs_real_states_through_a_replay_equal_the_full_sum(rule, monkeypatch):
    """The (mean, se2) of every round of a replayed SimVerb-3500 split, as the site's rounds
    leave them (3,500 pairs: several strips)."""
    log = rp.log_matrix(read_log(SIMVERB), 8)
    pool, _, _ = rp.split_log(log, 8, np.random.default_rng(0))
    states = []
    original = ac.misorderings

    def keep(means, se2, *args):
        states.append((np.array(means), np.array(se2)))
        return original(means, se2, *args)

    monkeypatch.setattr(ac, "misorderings", keep)
    rp.adaptive_counts(pool, [4.0, 6.0], rule)
    monkeypatch.undo()
    assert len(states) > 10
    for means, se2 in states[::5] + states[-1:]:
        assert_close(ac.misorderings(means, se2), full_sum(means, se2))


def test_rows_equal_as_numbers_are_one_row_whatever_their_sign_of_zero():
    # -0.0 and 0.0 are the same mean: with zero standard errors they tie (1/2 each), and a
    # zero scale between two rows kept apart would be 0 / 0
    means = np.array([0.0, -0.0, 0.0, 1.0])
    se2 = np.array([0.0, 0.0, -0.0, 0.0])
    found = ac.misorderings(means, se2)
    assert found.tolist() == [1.0, 1.0, 1.0, 0.0]
    assert_close(found, full_sum(means, se2))
