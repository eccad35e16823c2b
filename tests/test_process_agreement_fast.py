"""The fast IAA-1, IAA-2 and bootstrap of issue 22 against hand cases, a plain reference
(scipy.stats.spearmanr over every rater pair) and the figures of the code before them."""

import hashlib
import json
import warnings
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from conftest import examples
from lexgold.process import agreement as agr
from lexgold.process import replicates
from lexgold.stats import average_ranks
from lexgold.process.agreement import (AgreementWarning, bootstrap_over_pairs, iaa_against_mean,
                                       iaa_pairwise)

BASE = Path(__file__).parent / "data" / "issue22_base_process.json"


def _long(matrix, tranche_of=None):
    """Long format from an items x raters matrix (NaN = not rated)."""
    items, raters = np.nonzero(~np.isnan(matrix))
    tranche = np.zeros(matrix.shape[1], int) if tranche_of is None else np.asarray(tranche_of)
    return pd.DataFrame({"rater_id": [f"r{r}" for r in raters], "tranche": tranche[raters],
                         "word1": [f"w{i}" for i in items], "word2": "x",
                         "rating": matrix[items, raters]})


def _reference_iaa1(matrix, groups, min_overlap):
    """Mean scipy.stats.spearmanr over every rater pair of a group, on their shared items."""
    values = []
    for a, b in combinations(range(matrix.shape[1]), 2):
        if groups[a] != groups[b]:
            continue
        shared = ~np.isnan(matrix[:, a]) & ~np.isnan(matrix[:, b])
        if shared.sum() < min_overlap:
            continue
        x, y = matrix[shared, a], matrix[shared, b]
        if np.ptp(x) == 0 or np.ptp(y) == 0:
            continue
        values.append(stats.spearmanr(x, y)[0])
    return float(np.mean(values)) if values else np.nan


def _reference_iaa2(matrix, groups, min_overlap):
    """Mean over raters of spearmanr(rater, mean of the other raters of its group)."""
    values = []
    for r in range(matrix.shape[1]):
        mates = [c for c in range(matrix.shape[1]) if groups[c] == groups[r] and c != r]
        if not mates:
            continue
        others = matrix[:, mates]
        used = ~np.isnan(matrix[:, r]) & (~np.isnan(others)).any(axis=1)
        if used.sum() < min_overlap:
            continue
        x = matrix[used, r]
        y = np.nanmean(others[used], axis=1)
        if np.ptp(x) == 0 or np.ptp(y) == 0:
            continue
        values.append(stats.spearmanr(x, y)[0])
    return float(np.mean(values)) if values else np.nan


def _quiet(function, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AgreementWarning)
        return function(*args, **kwargs)


# -- hand cases ------------------------------------------------------------------------------

def test_closed_form_on_a_hand_case():
    # ranks of a: 1 2 3, b: 1 2 3, c: 3 2 1 -> rho ab 1, ac -1, bc -1: sum -1 over 3 pairs
    ranks = np.array([[1, 1, 3], [2, 2, 2], [3, 3, 1]], dtype=float)
    total, k = agr._dense_rho_sum(ranks)
    assert (round(float(total), 12), int(k)) == (-1.0, 3)
    ratings = _long(np.array([[0, 1, 6], [3, 4, 3], [6, 5, 0]], dtype=float))
    assert iaa_pairwise(ratings, min_overlap=3) == pytest.approx(-1 / 3, abs=1e-12)


def test_a_constant_rater_is_left_out_with_a_warning():
    matrix = np.array([[0, 1, 2], [3, 4, 2], [6, 5, 2], [1, 2, 2]], dtype=float)
    with pytest.warns(AgreementWarning, match="2 of 3 rater pair"):
        value = iaa_pairwise(_long(matrix), min_overlap=4)
    assert value == pytest.approx(1.0)
    assert np.isnan(_quiet(iaa_pairwise, _long(matrix), min_overlap=5))   # too little overlap


def _weights(rows, items):
    """items x replicates: how often each replicate (a row of ``rows``) drew each item."""
    return np.stack([np.bincount(r, minlength=items) for r in rows], axis=1).astype(float)


def test_ties_and_repeated_rows_rank_as_scipy_does():
    rng = np.random.default_rng(0)
    matrix = rng.integers(0, 3, (12, 6)).astype(float)
    rows = rng.integers(0, 12, (5, 12))
    counts, average = replicates._Levels(matrix).ranks(_weights(rows, 12))
    codes, _ = replicates.level_codes(matrix)
    for b in range(5):
        got = average[np.arange(6), codes[rows[b]], b]        # drawn rows x raters
        np.testing.assert_array_equal(got, stats.rankdata(matrix[rows[b]], axis=0))
    assert (counts.sum(axis=1) == 12).all()


def _iaa2_terms_by_ranking(matrix, rows, min_overlap):
    """IAA-2 terms of each replicate, ranking every drawn row with scipy (the code before)."""
    return [agr._against_mean_columns(matrix[r], min_overlap) for r in rows]


@pytest.mark.parametrize("raters, levels", [(40, 7), (400, 7), (5, 7), (60, 3), (30, 100)])
def test_iaa2_replicates_are_the_bytes_of_ranking_every_row(raters, levels):
    rng = np.random.default_rng(raters + levels)
    matrix = rng.integers(0, levels, (25, raters)).astype(float)
    matrix += np.linspace(0, levels, 25)[:, None] // 2          # items of different means
    rows = rng.integers(0, 25, (30, 25))
    terms = replicates.ReplicateTerms(matrix, "iaa2")
    got = terms.terms(rows, 4)
    for (rho, n), (want_rho, want_n) in zip(got, _iaa2_terms_by_ranking(matrix, rows, 4)):
        np.testing.assert_array_equal(n, want_n)
        assert rho.tobytes() == want_rho.tobytes()


def test_the_near_order_route_is_taken_with_many_raters_and_not_with_few():
    rng = np.random.default_rng(1)
    spread = np.linspace(0, 6, 30)[:, None]
    many = np.clip(np.round(spread + rng.normal(0, 1, (30, 300))), 0, 6)
    assert replicates.ReplicateTerms(many, "iaa2").near is not None
    few = rng.integers(0, 7, (30, 3)).astype(float)
    assert replicates.ReplicateTerms(few, "iaa2").near is None


def test_iaa1_replicates_match_ranking_every_row():
    rng = np.random.default_rng(3)
    matrix = rng.integers(0, 7, (20, 9)).astype(float)
    matrix[:, 4] = 2.0                                        # a constant rater
    rows = rng.integers(0, 20, (12, 20))
    got = replicates.ReplicateTerms(matrix, "iaa1").terms(rows, 4)
    for (total, pairs), r in zip(got, rows):
        want, k = agr._dense_rho_sum(stats.rankdata(matrix[r], axis=0))
        assert pairs == int(k) * (int(k) - 1) // 2
        assert total == pytest.approx(float(want), abs=1e-12)


# -- against the reference -------------------------------------------------------------------

@st.composite
def studies(draw, sparse):
    tranches = draw(st.integers(1, 3))
    raters = draw(st.integers(2, 7))
    items = draw(st.integers(6, 14))
    levels = draw(st.sampled_from([3, 7, 100]))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    matrix = np.full((tranches * items, tranches * raters), np.nan)
    groups = np.repeat(np.arange(tranches), raters)
    for t in range(tranches):
        block = rng.integers(0, levels, (items, raters)).astype(float)
        if sparse:
            block[rng.random(block.shape) < 0.3] = np.nan
        matrix[t * items:(t + 1) * items, t * raters:(t + 1) * raters] = block
    return matrix, groups, draw(st.integers(2, 6))


@settings(max_examples=examples(40), deadline=None)
@given(studies(sparse=False))
def test_dense_iaa_matches_pairwise_spearman(case):
    matrix, groups, min_overlap = case
    ratings = _long(matrix, groups)
    expected1 = _reference_iaa1(matrix, groups, min_overlap)
    expected2 = _reference_iaa2(matrix, groups, min_overlap)
    got1 = _quiet(iaa_pairwise, ratings, min_overlap=min_overlap)
    got2 = _quiet(iaa_against_mean, ratings, min_overlap=min_overlap)
    assert np.isnan(got1) == np.isnan(expected1) and np.isnan(got2) == np.isnan(expected2)
    if not np.isnan(expected1):
        assert got1 == pytest.approx(expected1, abs=1e-10)
    if not np.isnan(expected2):
        assert got2 == pytest.approx(expected2, abs=1e-10)


@settings(max_examples=examples(40), deadline=None)
@given(studies(sparse=True))
def test_sparse_iaa_matches_pairwise_spearman(case):
    matrix, groups, min_overlap = case
    ratings = _long(matrix, groups)
    expected = _reference_iaa1(matrix, groups, min_overlap)
    got = _quiet(iaa_pairwise, ratings, min_overlap=min_overlap)
    assert np.isnan(got) == np.isnan(expected)
    if not np.isnan(expected):
        assert got == pytest.approx(expected, abs=1e-10)
    expected = _reference_iaa2(matrix, groups, min_overlap)
    got = _quiet(iaa_against_mean, ratings, min_overlap=min_overlap)
    assert np.isnan(got) == np.isnan(expected)
    if not np.isnan(expected):
        assert got == pytest.approx(expected, abs=1e-10)


def _bootstrap_one_by_one(ratings, statistic, seed, n_boot, min_overlap):
    """The bootstrap as it was: one replicate at a time, the same draws."""
    matrices = agr._matrices(ratings, "tranche")
    n_items = max(int(g.items.max()) + 1 for g in matrices)
    draw = agr._stratified_draw(np.concatenate([g.items for g in matrices]),
                                np.concatenate([[str(g.key)] * len(g.items) for g in matrices]),
                                n_items)
    rng, values = np.random.default_rng(seed), []
    for _ in range(n_boot):
        draws = draw(rng)
        sample = []
        for group in matrices:
            where = np.full(n_items, -1)
            where[group.items] = np.arange(len(group.items))
            rows = where[draws]
            sample.append(group.matrix[rows[rows >= 0]])
        if statistic is iaa_pairwise:
            values.append(_reference_iaa1(_block_diagonal(sample), _block_groups(sample),
                                          min_overlap))
        else:
            values.append(agr._iaa2_dense(sample, min_overlap))
    return agr._percentile_interval(values, 0.95)


def _block_diagonal(blocks):
    out = np.full((sum(len(b) for b in blocks), sum(b.shape[1] for b in blocks)), np.nan)
    row = column = 0
    for block in blocks:
        out[row:row + len(block), column:column + block.shape[1]] = block
        row, column = row + len(block), column + block.shape[1]
    return out


def _block_groups(blocks):
    return np.repeat(np.arange(len(blocks)), [b.shape[1] for b in blocks])


@pytest.mark.parametrize("sparse", [False, True])
def test_bootstrap_same_draws_same_figures(sparse):
    rng = np.random.default_rng(5)
    matrix = _block_diagonal([rng.integers(0, 7, (15, 6)).astype(float) for _ in range(3)])
    if sparse:
        matrix[(rng.random(matrix.shape) < 0.2) & ~np.isnan(matrix)] = np.nan
    ratings = _long(matrix, np.repeat(np.arange(3), 6))
    for statistic in (iaa_pairwise, iaa_against_mean):
        got = _quiet(bootstrap_over_pairs, ratings, statistic, rng=np.random.default_rng(9),
                     n_boot=60, min_overlap=4)
        expected = _quiet(_bootstrap_one_by_one, ratings, statistic, 9, 60, 4)
        if statistic is iaa_against_mean:
            assert got == expected                       # same bytes
        else:
            assert got == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("cells", [700, 3000, 10**9])
def test_bootstrap_figures_do_not_depend_on_the_batch(monkeypatch, cells):
    """Replicates are computed in batches of at most BATCH_CELLS cells (lowered to 1,000,000
    for memory, issue 22): batches of 3, 14 or all 50 replicates give the same bytes. (A batch
    of one replicate sums IAA-1 in another order: the same figure to ~1e-17, not bit for bit.)"""
    rng = np.random.default_rng(6)
    matrix = _block_diagonal([rng.integers(0, 7, (15, 30)).astype(float) for _ in range(2)])
    ratings = _long(matrix, np.repeat(np.arange(2), 30))
    want = [_quiet(bootstrap_over_pairs, ratings, statistic, rng=np.random.default_rng(3),
                   n_boot=50, min_overlap=4) for statistic in (iaa_pairwise, iaa_against_mean)]
    monkeypatch.setattr(replicates, "BATCH_CELLS", cells)
    got = [_quiet(bootstrap_over_pairs, ratings, statistic, rng=np.random.default_rng(3),
                  n_boot=50, min_overlap=4) for statistic in (iaa_pairwise, iaa_against_mean)]
    assert got == want

def test_bootstrap_leaves_the_generator_where_it_was():
    rng = np.random.default_rng(2)
    ratings = _long(rng.integers(0, 7, (20, 5)).astype(float))
    first, second = np.random.default_rng(4), np.random.default_rng(4)
    _quiet(bootstrap_over_pairs, ratings, iaa_pairwise, rng=first, n_boot=30, min_overlap=4)
    draw = agr._stratified_draw(np.arange(20), np.zeros(20, str), 20)
    for _ in range(30):
        draw(second)
    assert first.integers(0, 10**9) == second.integers(0, 10**9)


# -- the process before and after ------------------------------------------------------------

def _seeded_study(folder: Path):
    from lexgold.crowd.simulate import Crowd, simulate_ratings, usf_pairs

    rng = np.random.default_rng(7)
    pairs = usf_pairs(240, rng=rng)
    # the figures recorded before were drawn from the invented crowd
    ratings, _ = simulate_ratings(pairs, "simlex", rng=rng, raters_per_tranche=12,
                                  crowd=Crowd(model="invented"))
    pairs.to_csv(folder / "pairs.csv", index=False)
    ratings.to_csv(folder / "ratings.csv", index=False)


def _compare(now, before, path=""):
    """Equal, except IAA-1 figures: within 1e-12 (the closed form sums in another order)."""
    if isinstance(before, dict):
        assert set(now) == set(before), path
        for key in before:
            _compare(now[key], before[key], f"{path}/{key}")
    elif isinstance(before, list):
        assert len(now) == len(before), path
        for i, (a, b) in enumerate(zip(now, before)):
            _compare(a, b, f"{path}[{i}]")
    elif "iaa1" in path and isinstance(before, float):
        assert now == pytest.approx(before, abs=1e-12), path
    else:
        assert now == before, path


def test_process_gives_the_figures_of_the_code_before(tmp_path):
    from lexgold.process.pipeline import run

    base = json.loads(BASE.read_text())
    _seeded_study(tmp_path)
    ratings = pd.read_csv(tmp_path / "ratings.csv")    # people's, as before the simulated mark
    ratings.drop(columns="platform").to_csv(tmp_path / "ratings.csv", index=False)
    report = run(tmp_path / "ratings.csv", "simlex", tmp_path / "gold",
                 pairs_path=tmp_path / "pairs.csv", seed=3, plots=False, bootstrap=40,
                 allow_incomplete=True)
    for name, digest in base["sha256"].items():
        assert hashlib.sha256((tmp_path / "gold" / name).read_bytes()).hexdigest() == digest
    now = json.loads(json.dumps(report.agreement))
    # issue 26 added Krippendorff's alpha and the ICC beside the figures that were there before
    assert {"alpha_interval", "alpha_ordinal", "icc1", "icck"} <= set(now.pop("beyond_iaa"))
    _compare(now, base["agreement"])


@settings(max_examples=examples(60), deadline=None)
@given(st.integers(1, 9), st.integers(1, 7), st.sampled_from([2, 5, 50]), st.booleans(),
       st.integers(0, 2**32 - 1))
def test_average_ranks_are_scipy_rankdata(rows, columns, levels, holes, seed):
    rng = np.random.default_rng(seed)
    values = rng.integers(0, levels, (rows, columns)).astype(float) / 2
    if holes:
        values[rng.random(values.shape) < 0.3] = np.nan
    for axis in (0, 1, -1):
        got = average_ranks(values, axis=axis)
        np.testing.assert_array_equal(got, stats.rankdata(values, axis=axis))
        got = average_ranks(values, axis=axis, omit_nan=True)
        np.testing.assert_array_equal(got, stats.rankdata(values, axis=axis, nan_policy="omit"))


def test_agree_and_process_do_not_import_scipy_stats():
    import subprocess
    import sys

    code = ("import sys; from lexgold.process.agreement import iaa_pairwise, stage_agreement; "
            "import lexgold.process.cli, lexgold.process.pipeline; "
            "print('scipy.stats' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={**__import__("os").environ,
                                          "PYTHONPATH": str(Path(__file__).parents[1])})
    assert out.stdout.strip() == "False"
