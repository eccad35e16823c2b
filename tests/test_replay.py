"""lexgold replay (lexgold.crowd.replay): splits, policies, accuracy, savings, the command."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from scipy.stats import spearmanr

from lexgold.cli import cli
from lexgold.crowd import replay as rp
from lexgold.crowd.logs import read_log
from lexgold.errors import InputError
from lexgold.resources._files import resource_files

SIMVERB = resource_files("simverb3500_ratings")[0].location
WORDSIM = resource_files("wordsim353_set1")[0].location


def long_log(rows: list[list[float]], anonymous: bool = True) -> pd.DataFrame:
    """Pair ``p<i>`` with the ratings of row ``i``; rater ids ``?i:j`` (anonymous) or ``r<j>``."""
    return pd.DataFrame([{"rater_id": (f"?{i}:{j}" if anonymous else f"r{j}"), "tranche": "1",
                          "word1": f"p{i}", "word2": "x", "rating": float(v)}
                         for i, row in enumerate(rows) for j, v in enumerate(row)])


def two_kinds(constant: int = 10, noisy: int = 10) -> pd.DataFrame:
    """Pairs whose 7 ratings all agree (SD 0) and pairs rated 0..6 (7 distinct ratings)."""
    return long_log([[i % 7] * 7 for i in range(constant)] + [list(range(7))] * noisy)


# -- the split discipline ------------------------------------------------------------------------

def test_pool_and_reference_are_disjoint_and_use_every_rating_once():
    rows = [list(np.arange(10) + 100 * i) for i in range(6)] + [list(np.arange(12) + 1000)]
    log = rp.log_matrix(long_log(rows), pool=8)
    for seed in range(5):
        pool, raters, reference = rp.split_log(log, 8, np.random.default_rng(seed))
        assert raters is None and pool.shape == (7, 8)
        for i, row in enumerate(rows):
            drawn = np.concatenate([pool[i], reference[i]])
            drawn = drawn[~np.isnan(drawn)]
            assert sorted(drawn) == sorted(row)               # every rating once
            assert not set(pool[i]) & set(reference[i][~np.isnan(reference[i])])
            assert (~np.isnan(reference[i])).sum() == len(row) - 8


def test_splits_draw_the_pool_at_random_and_the_seed_repeats_them():
    log = rp.log_matrix(long_log([list(range(10))] * 4), pool=3)
    pools = {tuple(rp.split_log(log, 3, np.random.default_rng(s))[0][0]) for s in range(20)}
    assert len(pools) > 10
    a = rp.split_log(log, 3, np.random.default_rng(7))[0]
    np.testing.assert_array_equal(a, rp.split_log(log, 3, np.random.default_rng(7))[0])


def test_pairs_without_a_reference_are_left_out_and_raters_are_kept():
    frame = long_log([[1, 2, 3, 4], [1, 2, 3, 4], [1, 2, 3, 4], [1, 2]], anonymous=False)
    log = rp.log_matrix(frame, pool=3)
    assert len(log.pairs) == 3 and log.dropped == 1 and log.raters is not None
    assert set(log.raters.ravel()) == {0, 1, 2, 3}
    with pytest.raises(InputError, match="--pool"):
        rp.log_matrix(frame, pool=4)


def test_the_log_is_held_without_padding_and_gives_the_padded_rows():
    """Pairs interleaved in the file, raters in their order of first rating: the rows come
    out as the padded matrix written by hand, by blocks of any size, with each pair's SD."""
    frame = pd.DataFrame({"rater_id": ["a", "b", "a", "c", "b", "d", "c", "d", "a", "e"],
                          "tranche": "1", "word2": "x",
                          "word1": ["p", "p", "q", "p", "q", "p", "q", "r", "r", "r"],
                          "rating": [1.0, 2.0, 5.0, 4.0, 6.5, 0.5, 3.0, 2.0, 1.0, 6.0]})
    log = rp.log_matrix(frame, pool=2)
    ratings = np.array([[1.0, 2.0, 4.0, 0.5], [5.0, 6.5, 3.0, np.nan],
                        [2.0, 1.0, 6.0, np.nan]])
    a, b, c, d, e = range(5)                     # codes in the order of first rating
    raters = np.array([[a, b, c, d], [a, b, c, -1], [d, a, e, -1]])
    np.testing.assert_array_equal(log.ratings, ratings)
    np.testing.assert_array_equal(log.raters, raters)
    assert log.counts.tolist() == [4, 3, 3] and log.width == 4 and len(log.values) == 10
    for first in range(3):
        block, codes = log.rows(first, first + 1)
        np.testing.assert_array_equal(block, ratings[first:first + 1])
        np.testing.assert_array_equal(codes, raters[first:first + 1])
    np.testing.assert_array_equal(log.sds(rows=1), np.nanstd(ratings, axis=1, ddof=1))


# -- accuracy and savings by hand ----------------------------------------------------------------

def test_accuracy_by_hand():
    est, ref = np.array([1.0, 2.0, 4.0, 3.0]), np.array([1.5, 2.0, 3.0, 5.0])
    sd, n = np.array([1.0, 2.0, 0.5, 1.0]), np.array([4, 1, 1, 4])
    found = rp.accuracy(est, n, ref, sd)
    assert found["spearman"] == pytest.approx(spearmanr(est, ref).statistic)
    assert found["mae"] == pytest.approx((0.5 + 0 + 1 + 2) / 4)
    widths = rp.Z95 * sd / np.sqrt(n)
    assert found["halfwidth"] == pytest.approx(np.percentile(widths, 95))


def test_equivalent_k_reads_uniform_backwards_and_extends_its_ends():
    k = [1, 2, 3, 4]
    assert rp.equivalent_k(k, [0.5, 0.6, 0.7, 0.8], 0.7, True) == pytest.approx(3.0)
    assert rp.equivalent_k(k, [4.0, 3.0, 2.0, 1.0], 2.5, False) == pytest.approx(2.5)
    assert rp.equivalent_k(k, [0.5, 0.6, 0.7, 0.8], 0.9, True) == pytest.approx(5.0)
    assert rp.equivalent_k(k, [0.5, 0.6, 0.7, 0.8], 0.4, True) == pytest.approx(0.0)
    assert rp.saving(3.0, 4.0) == pytest.approx(0.25)


def test_the_error_rule_saves_a_quarter_at_equal_half_width_on_two_kinds_of_pairs():
    """10 pairs whose ratings all agree, 10 rated 0..6: after a first round of 2, the error
    gain of a noisy pair (sample variance > 0) beats every constant pair's, so a budget of 3
    per pair puts 2 more on each noisy pair. The 95th-percentile half-width is the noisy
    pairs' 1.96 sd / sqrt(4), uniform's at k = 4: the saving is 1 - 3/4, on every split."""
    log = rp.log_matrix(two_kinds(), pool=6)
    for seed in range(3):
        records = rp.replay_split(log, 6, [3], np.random.default_rng(seed),
                                  policies=("error",), first_round=2, round_share=0.5)
        row = next(r for r in records if r["policy"] == "error")
        assert row["spent"] == 3
        assert row["saving_halfwidth"] == pytest.approx(0.25)
        uniform = {r["k"]: r for r in records if r["policy"] == "uniform"}
        assert row["halfwidth"] == pytest.approx(uniform[4]["halfwidth"])


def test_uniform_policies_save_nothing_and_the_oracle_spends_where_the_variance_is():
    log = rp.log_matrix(two_kinds(), pool=6)
    pool, _, _ = rp.split_log(log, 6, np.random.default_rng(0))
    counts = rp.adaptive_counts(pool, [3, 4], "error", first_round=2, round_share=0.5,
                                known_var=np.nanvar(log.ratings, axis=1, ddof=1))
    assert counts[3].tolist() == [2] * 10 + [4] * 10
    assert counts[4].tolist() == [2] * 10 + [6] * 10
    uniform = rp.uniform_counts(pool, [2, 5])
    assert uniform[5].tolist() == [5] * 20


def test_stopping_spends_the_budget_on_wide_pairs():
    log = rp.log_matrix(two_kinds(), pool=6)
    pool, _, _ = rp.split_log(log, 6, np.random.default_rng(0))
    n = rp.stopping_counts(pool, [4], first_round=2)[4]
    assert 2 < n.mean() <= 4
    assert n[:10].max() <= n[10:].min()               # constant pairs stop first


def test_replay_is_determined_by_its_seed():
    log = rp.log_matrix(two_kinds(), pool=6)
    a = rp.replay(log, pool=6, ks=[3, 4], splits=2, seed=3, first_round=2)
    b = rp.replay(log, pool=6, ks=[3, 4], splits=2, seed=3, first_round=2)
    pd.testing.assert_frame_equal(a, b)
    c = rp.replay(log, pool=6, ks=[3, 4], splits=2, seed=4, first_round=2)
    assert not a.equals(c)


def test_the_estimator_is_pluggable(monkeypatch):
    log = rp.log_matrix(two_kinds(), pool=6)
    seen = []

    def first_rating(values, raters):
        seen.append(values.shape)
        return values[:, 0]

    monkeypatch.setitem(rp.ESTIMATORS, "first", first_rating)
    records = rp.replay(log, pool=6, ks=[3], splits=1, seed=0, policies=("error",),
                        estimator="first", first_round=2)
    assert seen and all(shape == (20, 6) for shape in seen)
    assert records["mae"].notna().all()
    with pytest.raises(InputError, match="estimator"):
        rp.replay(log, pool=6, ks=[3], splits=1, estimator="nope")


# -- the command ---------------------------------------------------------------------------------

KEYS = {"policy", "k", "spent", "saving_spearman", "saving_spearman_low", "saving_spearman_high",
        "saving_mae", "saving_mae_low", "saving_mae_high", "saving_halfwidth",
        "saving_halfwidth_low", "saving_halfwidth_high", "spearman", "mae", "halfwidth"}


def test_replay_on_the_vendored_simverb_log_json():
    result = CliRunner().invoke(cli, ["replay", SIMVERB, "--splits", "2", "--k", "4,6",
                                      "--policy", "error", "--policy", "stopping", "--json"])
    assert result.exit_code == 0, result.output
    found = json.loads(result.stdout)
    assert found["pairs"] == 3500 and found["pool"] == 8 and found["splits"] == 2
    rows = found["policies"]
    uniform = [r for r in rows if r["policy"] == "uniform"]
    rows = [r for r in rows if r["policy"] != "uniform"]
    assert [(r["policy"], r["k"]) for r in rows] == [("error", 4), ("error", 6),
                                                     ("stopping", 4), ("stopping", 6)]
    # uniform's own rows (k = 1 .. pool), the site's default, savings 0 by definition
    assert [r["k"] for r in uniform] == list(range(1, 9))
    assert found["site_default"] == "uniform" and found["site_adaptive_rule"] == "error"
    assert all(r["site_default"] and r["saving_spearman"] == 0 for r in uniform)
    assert not any(r["site_default"] for r in rows)
    assert [r["site_adaptive_rule"] for r in rows] == [True, True, False, False]
    assert uniform[3]["spearman"] < uniform[5]["spearman"]     # more ratings, closer
    for row in rows:
        assert KEYS <= set(row)
        for name in ("spearman", "mae", "halfwidth"):
            assert row[f"saving_{name}_low"] <= row[f"saving_{name}"] \
                <= row[f"saving_{name}_high"]
            assert -1 < row[f"saving_{name}"] < 1
        assert 0.6 < row["spearman"] < 0.9
    again = CliRunner().invoke(cli, ["replay", SIMVERB, "--splits", "2", "--k", "4,6",
                                     "--policy", "error", "--policy", "stopping", "--json"])
    assert again.stdout == result.stdout


def test_replay_on_wordsim_with_rater_identity_prints_a_table():
    result = CliRunner().invoke(cli, ["replay", WORDSIM, "--splits", "2", "--k", "5",
                                      "--policy", "error"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("wordsim353_set1_set1.csv.gz: 152 pairs")
    assert lines[-1].split()[:2] == ["error", "5"]
    assert lines[-1].count("%") == 3


@pytest.mark.parametrize("args,message", [
    (["--k", "9"], "field '--k': k = 9 is above --pool 8"),
    (["--k", "x"], "Invalid value for '--k'"),
    (["--pool", "12"], "field '--pool': 0 pairs have more than --pool 12 ratings"),
])
def test_bad_options_are_one_line_errors(args, message):
    result = CliRunner().invoke(cli, ["replay", SIMVERB, "--splits", "1", *args])
    assert result.exit_code != 0
    assert message in result.output and "Traceback" not in result.output


def test_a_file_of_no_rating_layout_is_a_one_line_error(tmp_path):
    bad = tmp_path / "notes.txt"
    bad.write_text("# nothing here\n")
    result = CliRunner().invoke(cli, ["replay", str(bad)])
    assert result.exit_code != 0 and "notes.txt:1: cannot recognise the layout" in result.output
    assert len(result.output.strip().splitlines()) == 1
    wide = tmp_path / "set9.csv"
    wide.write_text("Word 1,Word 2,Human (mean),1,2\nlove,sex,6,7,x\n")
    result = CliRunner().invoke(cli, ["replay", str(wide)])
    assert result.exit_code != 0 and "set9.csv:2" in result.output
    assert len(result.output.strip().splitlines()) == 1


# -- the figures of docs/process.md --------------------------------------------------------------

def doc_runs() -> list[tuple[str, str]]:
    """(command, output) of each ``console`` block of docs/process.md's section "What lexgold
    saves, measured on real logs"."""
    from pathlib import Path

    text = (Path(__file__).parents[1] / "docs" / "process.md").read_text()
    section = text.split("## What lexgold saves, measured on real logs", 1)[1].split("\n## ")[0]
    # a ```bash block holding the command, then (markers between) the ```text block it prints
    found = re.findall(r"```bash\n(lexgold replay [^\n]+)\n```\n+(?:<!--[^>]*-->\n)?```text\n"
                       r"(.*?)\n```", section, flags=re.S)
    return [(command, printed) for command, printed in found]


@pytest.mark.slow                   # the documented replay commands (20 CPU-s)
def test_the_docs_figures_are_what_the_documented_commands_print(tmp_path, monkeypatch):
    """Each command of the section is run as written, on the vendored logs under their
    distributed names, and prints exactly the table the docs quote."""
    import gzip
    import shlex

    for name, location in (("SimVerb-3500-ratings.txt", SIMVERB), ("set1.csv", WORDSIM)):
        (tmp_path / name).write_bytes(gzip.decompress(open(location, "rb").read()))
    monkeypatch.chdir(tmp_path)
    runs = doc_runs()
    assert len(runs) >= 3
    for command, printed in runs:
        result = CliRunner().invoke(cli, shlex.split(command)[1:])
        assert result.exit_code == 0, (command, result.output)
        assert result.stdout.rstrip("\n") == printed, command


def test_a_log_too_large_for_the_replay_is_refused_before_it_is_built(monkeypatch):
    monkeypatch.setattr(rp, "MAX_CELLS", 30)
    with pytest.raises(InputError, match=r"a pair has 10 ratings: 4 pairs x 10 is more than"):
        rp.log_matrix(long_log([list(range(10))] * 4), pool=3)


def test_a_first_round_of_one_or_of_the_whole_pool_is_replayed():
    log = rp.log_matrix(two_kinds(), pool=4)
    for first in (1, 4):
        records = rp.replay(log, pool=4, ks=[2, 4], splits=1, first_round=first)
        assert records["spent"].notna().all() and records["spearman"].notna().all()
        stop = records[records["policy"] == "stopping"]
        assert (stop["spent"] >= first).all()


def test_the_site_default_is_what_a_study_does_unless_told():
    """replay --json's site_default is the [study] table's default allocation."""
    from lexgold.study.config import StudyConfig

    assert StudyConfig().allocation == rp.SITE_DEFAULT == "uniform"


@pytest.mark.parametrize("start_methods", [None, ["spawn"]], ids=["processes", "threads"])
def test_workers_give_the_records_of_one_split_after_another(start_methods, monkeypatch):
    """Splits measured by several workers at once (forked processes, or threads where the
    system cannot fork) are the splits drawn one after another from the one generator: the
    same records, in the same order, as replay_split in turn."""
    if start_methods is not None:
        monkeypatch.setattr(rp.multiprocessing, "get_all_start_methods", lambda: start_methods)
    executor = rp._executor(2)
    executor.shutdown()
    assert isinstance(executor, rp.ThreadPoolExecutor if start_methods else
                      rp.ProcessPoolExecutor)
    rng = np.random.default_rng(5)
    log = rp.log_matrix(long_log([list(rng.integers(0, 7, 10)) for _ in range(40)]), pool=8)
    done = []
    frames = {workers: rp.replay(log, pool=8, ks=[4, 6], splits=7, seed=3, workers=workers,
                                 policies=("misordering", "stopping"),
                                 progress=lambda: done.append(1))
              for workers in (1, 3)}
    pd.testing.assert_frame_equal(frames[1], frames[3])
    assert len(done) == 14
    draws = np.random.default_rng(3)
    by_hand = [pd.DataFrame(rp.replay_split(log, 8, [4, 6], draws,
                                            policies=("misordering", "stopping"))).assign(split=s)
               for s in range(7)]
    pd.testing.assert_frame_equal(frames[3], pd.concat(by_hand, ignore_index=True))


@pytest.mark.parametrize("step,exact", [(1.0, True), (0.5, True), (1 / 3, False), (0.1, False)])
def test_pool_draws_are_split_logs_pool_and_its_references_mean_to_the_last_bit(step, exact):
    """On a grid where sums are exact the reference's mean comes from the pair's total; off it
    the reference is summed in the order drawn: either way the bits of split_log's (a mean
    one bit off breaks ties between pairs' reference means, and so moves Spearman)."""
    rng = np.random.default_rng(2)
    rows = [list(rng.integers(0, 31, int(rng.integers(9, 40))) * step) for _ in range(70)]
    log = rp.log_matrix(long_log(rows, anonymous=False), pool=8)
    draws = rp.PoolDraws(log, 8, rows=16)
    assert draws.exact is exact
    a, b = np.random.default_rng(9), np.random.default_rng(9)
    for _ in range(3):                                   # the buffer reused split after split
        pool, raters, reference = rp.split_log(log, 8, a)
        drawn = draws.draw(b)
        np.testing.assert_array_equal(drawn[0], pool)
        np.testing.assert_array_equal(drawn[1], raters)
        np.testing.assert_array_equal(drawn[2], np.nanmean(reference, axis=1))
    assert a.random() == b.random()                      # the same numbers drawn


@pytest.mark.parametrize("source", ["random", "simverb"])
def test_adaptive_rounds_see_every_pairs_moments_as_a_full_recount_gives_them(source,
                                                                              monkeypatch):
    """Between rounds only the topped-up pairs' means and variances are computed again: every
    round's gains must still get, to the last bit, the moments of every pair at its count."""
    if source == "random":                    # ratings off any grid, pools of several widths
        rng = np.random.default_rng(4)
        pools = [rng.integers(0, 61, (300, 8)) / 7, rng.normal(3, 2, (200, 6))]
    else:                                     # real splits of SimVerb-3500
        log = rp.log_matrix(read_log(SIMVERB), 8)
        pools = [rp.split_log(log, 8, np.random.default_rng(s))[0] for s in range(2)]
    seen = []
    original = rp.gains

    def keep(rule, n, means, var, extra, *args, **kwargs):
        seen.append((np.array(n), np.array(means), np.array(var)))
        return original(rule, n, means, var, extra, *args, **kwargs)

    monkeypatch.setattr(rp, "gains", keep)
    for pool in pools:
        s1, s2 = rp._moments(pool)
        for rule in ("error", "halfwidth", "misordering"):
            seen.clear()
            counts = rp.adaptive_counts(pool, [4.0, pool.shape[1] - 1.5], rule)
            assert len(seen) > 5 and len({tuple(n) for n, _, _ in seen}) == len(seen)
            for n, means, var in seen:
                full_mean, full_var = rp._mean_var(s1, s2, n)
                np.testing.assert_array_equal(means, full_mean)
                np.testing.assert_array_equal(var, full_var)
            assert 0 <= counts[4.0].sum() - 4 * len(pool) < rp.STEP    # the budget, spent


# -- the shortcuts of a split's measures, against what they stand for ---------------------------

def _pools(source: str) -> list[np.ndarray]:
    """Pools of random ratings off any grid (several widths) or of real SimVerb-3500 splits."""
    if source == "random":
        rng = np.random.default_rng(11)
        return [rng.integers(0, 61, (300, 8)) / 7, rng.normal(3, 2, (200, 6))]
    log = rp.log_matrix(read_log(SIMVERB), 8)
    return [rp.split_log(log, 8, np.random.default_rng(s))[0] for s in range(2)]


@pytest.mark.parametrize("source", ["random", "simverb"])
def test_the_rank_rules_sharing_their_first_round_choose_the_pairs_they_choose_alone(source,
                                                                                     monkeypatch):
    """The first round's rank uncertainties, computed once for both rank rules, are the ones
    each rule computes alone, and every round chooses exactly the same pairs."""
    chosen = []
    original = np.argpartition

    def keep(values, kth, *args, **kwargs):
        found = original(values, kth, *args, **kwargs)
        chosen.append(np.sort(found[:kth + 1]))
        return found

    for pool in _pools(source):
        shared: dict = {}
        for rule in ("misordering", "rank+error"):
            monkeypatch.setattr(rp.np, "argpartition", keep)
            chosen.clear()
            alone = rp.adaptive_counts(pool, [4.0, 6.0], rule)
            rounds_alone = list(chosen)
            chosen.clear()
            together = rp.adaptive_counts(pool, [4.0, 6.0], rule, shared=shared)
            monkeypatch.undo()
            assert len(rounds_alone) > 5 and len(chosen) == len(rounds_alone)
            for a, b in zip(rounds_alone, chosen):
                np.testing.assert_array_equal(a, b)
            for k in alone:
                np.testing.assert_array_equal(alone[k], together[k])
        start = np.full(len(pool), rp.FIRST_ROUND)
        mean, var = rp._mean_var(*rp._moments(pool), start)
        (u,) = shared.values()
        np.testing.assert_array_equal(u, rp.uncertainties(start, mean, var))


@pytest.mark.parametrize("source", ["random", "simverb"])
def test_measures_read_from_the_table_of_counts_are_the_direct_ones(source, monkeypatch):
    """A split's measures gather each pair's mean and SD at its count from a table made once a
    split: every figure must be what the direct computation gives, to the last bit."""
    direct = []
    original = rp.accuracy

    def keep(estimates, n, *args, **kwargs):
        direct.append((np.array(estimates), np.array(n)))
        return original(estimates, n, *args, **kwargs)

    for pool in _pools(source):
        reference = pool.mean(axis=1) + 0.1
        sd_all = pool.std(axis=1, ddof=1) + 0.5
        monkeypatch.setattr(rp, "accuracy", keep)
        direct.clear()
        rp._replay_drawn((pool, None, reference), [3, 4], sd_all)
        monkeypatch.undo()
        assert len(direct) > 10
        for estimates, n in direct:
            means, _ = rp._used_moments(pool, n)
            np.testing.assert_array_equal(estimates, means)
            columns = np.arange(pool.shape[1])[None, :] < n[:, None]
            np.testing.assert_allclose(estimates, np.where(columns, pool, 0).sum(axis=1) / n,
                                       rtol=1e-15)


def test_upper_variances_from_a_table_of_counts_are_the_direct_quantiles():
    from scipy.special import chdtri

    from lexgold.crowd.allocation_criteria import shrunk_variances, upper_variances

    rng = np.random.default_rng(6)
    n = rng.integers(1, 12, 500)
    var = np.where(n > 1, rng.uniform(0, 3, 500), np.nan)
    d = np.clip(n - 1.0, 0, None) + 2.0
    expected = shrunk_variances(n, var, 2.0) * d / chdtri(d, 0.95)
    np.testing.assert_array_equal(upper_variances(n, var, 2.0), expected)
    np.testing.assert_array_equal(upper_variances(n + 0.5, var, 2.0),       # not counts
                                  shrunk_variances(n + 0.5, var, 2.0) * (d + 0.5)
                                  / chdtri(d + 0.5, 0.95))
