"""`lexgold crowd fit` at research scale (issues 48 and 49): a compressed log streamed within
bounds (a decompression bomb ends in one line, memory bounded), the fit's work by blocks giving
the numbers of the whole, the rater step at once agreeing with the one-by-one optimiser, and
one-line errors for logs a crowd cannot be fitted to."""

from __future__ import annotations

import gzip
import tracemalloc

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from lexgold.cli import cli
from lexgold.crowd import model as cm
from lexgold.crowd.logs import read_log
from lexgold.errors import InputError

HEADER = b"rater_id,tranche,word1,word2,rating\n"


def bomb(path, line: bytes, count: int, header: bytes = HEADER):
    """A small .gz that expands to ``count`` copies of ``line`` under ``header``."""
    with gzip.open(path, "wb", compresslevel=9) as out:
        out.write(header)
        for _ in range(count):
            out.write(line)
    return path


def peak_of(call) -> tuple[int, BaseException | None]:
    """Peak traced memory (bytes) of ``call()`` and what it raised."""
    tracemalloc.start()
    try:
        call()
        raised = None
    except InputError as err:
        raised = err
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return peak, raised


def test_a_gzip_bomb_of_long_words_is_refused_at_its_first_part_within_bounded_memory(
        tmp_path):
    # 200 lines of a 1,000,000-letter word: 200 MB from a ~0.2 MB file
    path = bomb(tmp_path / "ratings.csv.gz", b"a,1," + b"x" * 1_000_000 + b",y,1\n", 200)
    assert path.stat().st_size < 1 << 20
    peak, raised = peak_of(lambda: read_log(path))
    assert str(raised) == (f"{path}:2, field 'word1': word longer than 300 characters "
                           "(1,000,000)")
    assert peak < 80 << 20          # a part of the text, not the 200 MB


def test_a_gzip_bomb_of_long_cells_stops_at_the_text_limit(tmp_path, monkeypatch):
    monkeypatch.setenv("LEXGOLD_MAX_WHOLE_BYTES", str(8 << 20))
    header = b"rater_id,tranche,word1,word2,rating,note\n"
    path = bomb(tmp_path / "ratings.csv.gz", b"a,1,x,y,1," + b"n" * 500_000 + b"\n", 400,
                header)                                          # 200 MB of notes
    peak, raised = peak_of(lambda: read_log(path))
    assert raised is not None and str(raised).startswith(f"{path}:")
    assert "over the limit LEXGOLD_MAX_WHOLE_BYTES" in str(raised)
    assert peak < 80 << 20


def test_an_endless_line_is_refused_at_the_line_limit(tmp_path):
    path = bomb(tmp_path / "ratings.csv.gz", b"\0" * (1 << 20), 200)
    with pytest.raises(InputError, match=r"ratings\.csv\.gz:2: line longer than 1,048,576"):
        read_log(path)


def test_a_compressed_published_layout_is_copied_within_the_whole_file_limit(tmp_path,
                                                                               monkeypatch):
    monkeypatch.setenv("LEXGOLD_MAX_WHOLE_BYTES", str(1 << 20))
    rows = "".join(f"w{i},v{i},{i % 10},{(i + 1) % 10}\n" for i in range(200_000))
    path = tmp_path / "set1.csv.gz"
    path.write_bytes(gzip.compress(("Word 1,Word 2,r1,r2\n" + rows).encode()))
    with pytest.raises(InputError, match=r"set1\.csv\.gz.*LEXGOLD_MAX_WHOLE_BYTES"):
        read_log(path, "wide")


def test_a_long_log_is_read_in_parts_of_bounded_text_with_the_same_frame(tmp_path,
                                                                        monkeypatch):
    from lexgold.ratings import long as long_module

    lines = [f"r{i % 7},1,w{i % 13},v,{i % 7}\n" for i in range(500)]
    path = tmp_path / "ratings.csv"
    path.write_text(HEADER.decode() + "".join(lines), encoding="utf-8")
    whole = read_log(path)
    monkeypatch.setattr(long_module, "CHUNK_CHARS", 100)          # parts of ~6 lines
    pd.testing.assert_frame_equal(read_log(path), whole)
    path.write_text(HEADER.decode() + "".join(lines[:300]) + "r1,1,a,b,1,extra\n",
                    encoding="utf-8")
    with pytest.raises(InputError, match=r"ratings\.csv:302: expected 5 comma-separated "
                                         r"fields \(as the header has\), found 6 "):
        read_log(path)


def drawn(n_pairs: int, per_pair: int, n_raters: int, seed: int) -> pd.DataFrame:
    """A log drawn from the default crowd: ``per_pair`` distinct raters on each pair."""
    rng = np.random.default_rng(seed)
    model = cm.default_model()
    pair = np.repeat(np.arange(n_pairs), per_pair)
    rater = (np.arange(len(pair)) + pair) % n_raters
    scores, spreads = cm.draw_pairs(model, n_pairs, rng)
    people = cm.draw_raters(model, n_raters, rng)
    values = cm.draw_ratings(model, scores[pair], spreads[pair], rng,
                             bias=people["bias"].to_numpy()[rater],
                             noise=people["noise"].to_numpy()[rater])
    return pd.DataFrame({"rater_id": [f"r{r}" for r in rater], "word1": [f"w{p}" for p in pair],
                         "word2": "x", "rating": values})


@pytest.fixture(scope="module")
def state():
    """A fit's state after one E-step on a log of 80 identified raters."""
    log = cm.code_log(drawn(60, 8, 80, 1), scale=(0, 6))
    fitted = cm._Fit(log, True)
    fitted.spam[1:] = np.linspace(0.0, 0.3, fitted.g - 1)      # some ratings weighted down
    return log, fitted


def test_grid_probabilities_of_the_filled_cells_are_the_rows_of_the_whole(state):
    log, fitted = state
    whole = fitted.log_probs(0.03, 7.0).reshape(fitted.g * fitted.q, -1)
    assert np.array_equal(fitted.cell_logp(0.03, 7.0, fitted.filled), whole[fitted.filled])
    # the pairs' likelihoods: each rating's cell, weighted by its rater's honesty
    honest = 1 - fitted.spam[fitted.rater]
    cell = fitted.rater * fitted.q + log.code
    expected = np.zeros((fitted.n, whole.shape[1]))
    np.add.at(expected, log.pair, honest[:, None] * whole[cell])
    assert np.allclose(fitted.pair_loglik(0.03, 7.0), expected, rtol=1e-12, atol=1e-9)


def test_grid_probabilities_at_some_columns_are_those_columns_of_the_whole(state):
    _, fitted = state
    columns = np.array([3, 40, 41, 300, 674])
    whole = fitted.cell_logp(0.03, 7.0, fitted.filled)
    part = fitted.cell_logp(0.03, 7.0, fitted.filled, columns)
    assert np.array_equal(part, whole[:, columns])


def test_the_cells_pass_at_the_cells_of_positive_weight_is_the_pass_over_all(state):
    # grid cells of weight 0 (and posterior 0) contribute nothing: the pass over the others
    # gives the same spammer posteriors and the same likelihoods at the cells that count
    log, fitted = state
    saved = fitted.weights.copy(), fitted.spam.copy()
    try:
        live = np.array([100, 101, 250, 251, 400, 401, 402])
        weights = np.zeros_like(saved[0])
        weights[live] = np.linspace(1, 2, len(live)) / np.linspace(1, 2, len(live)).sum()
        fitted.weights = weights
        post = fitted.posterior(cm._cells_pass(fitted, None, log))   # as the fit's E-step
        assert (post[:, np.setdiff1d(np.arange(post.shape[1]), live)] == 0).all()
        fitted.spam = saved[1].copy()
        some = cm._cells_pass(fitted, post, log)
        spam = fitted.spam.copy()
        assert np.isneginf(np.delete(some, live, axis=1)).all()
        fitted.weights = np.where(weights > 0, weights, 1e-300)       # every cell counted
        fitted.spam = saved[1].copy()
        every = cm._cells_pass(fitted, post, log)
        assert np.isfinite(every).all()
        assert np.allclose(spam, fitted.spam, rtol=1e-12, atol=1e-12)
        assert np.allclose(some[:, live], every[:, live], rtol=1e-12, atol=1e-9)
        assert not np.allclose(spam, saved[1])                       # the step did move them
    finally:
        fitted.weights, fitted.spam = saved


def test_the_pairs_likelihoods_by_blocks_of_cells_are_those_of_one_block(state, monkeypatch):
    _, fitted = state
    one = fitted.pair_loglik(0.03, 7.0)
    monkeypatch.setattr(cm, "CELL_BLOCK", 5)
    assert len(fitted.cell_blocks()) > 10
    assert np.allclose(fitted.pair_loglik(0.03, 7.0), one, rtol=1e-12, atol=1e-9)


def copy_of(fitted):
    import copy

    return copy.deepcopy(fitted)


def test_spammer_posteriors_by_blocks_of_ratings_are_the_same_numbers(state, monkeypatch):
    log, fitted = state
    post = fitted.posterior(fitted.pair_loglik(fitted.lapse, fitted.df))
    monkeypatch.setattr(cm, "ONE_BY_ONE", 0)
    whole, parts = copy_of(fitted), copy_of(fitted)
    cm._raters_step(whole, post, log)
    monkeypatch.setattr(cm, "RATING_BLOCK", 7)
    monkeypatch.setattr(cm, "CELL_BLOCK", 11)
    cm._raters_step(parts, post, log)
    assert np.array_equal(whole.spam, parts.spam)


def rater_losses(fitted, post) -> np.ndarray:
    """Each rater's negative expected log-likelihood at its current bias, scale and noise
    (the objective of the rater step)."""
    expected = fitted.cells.T.tocsr() @ (post * fitted.mult[:, None])
    logp = fitted.log_probs(fitted.lapse, fitted.df).reshape(fitted.g * fitted.q, -1)
    return -np.bincount(np.arange(fitted.g * fitted.q) // fitted.q,
                        (expected * logp).sum(axis=1), fitted.g)[1:]


def test_the_rater_step_at_once_does_as_well_as_the_one_by_one_optimiser(state, monkeypatch):
    _, fitted = state
    post = fitted.posterior(fitted.pair_loglik(fitted.lapse, fitted.df))
    found = {}
    for name, one_by_one in (("scipy", 10_000), ("at once", 0)):
        monkeypatch.setattr(cm, "ONE_BY_ONE", one_by_one)
        found[name] = copy_of(fitted)
        cm._rater_parameters(found[name], fitted.cells.T.tocsr(), post * fitted.mult[:, None])
    start = rater_losses(fitted, post)
    ours, scipy_ = rater_losses(found["at once"], post), rater_losses(found["scipy"], post)
    assert (ours < start - 1e-6).all()          # every rater's objective improved
    # as good as scipy's L-BFGS-B to within 0.01 nats per rater (6 ratings each)
    assert np.quantile(ours - scipy_, 0.9) < 0.01
    for name in ("bias", "log_scale", "log_noise"):
        a, b = getattr(found["scipy"], name)[1:], getattr(found["at once"], name)[1:]
        assert np.corrcoef(a, b)[0, 1] > 0.9, name


@pytest.mark.parametrize("rows, found", [
    ([("r1", f"a{i}", i % 7) for i in range(20)], "(20 pairs, 1 identified rater)"),
    ([(f"r{i % 5}", f"a{i}", i % 7) for i in range(20)], "(20 pairs, 5 identified raters)"),
])
def test_crowd_fit_with_one_rating_per_pair_is_one_line(tmp_path, rows, found):
    path = tmp_path / "ratings.csv"
    pd.DataFrame(rows, columns=["rater_id", "word1", "rating"]).assign(
        tranche=1, word2="x").to_csv(path, index=False)
    result = CliRunner().invoke(cli, ["crowd", "fit", str(path), "--scale", "0", "6",
                                      "--out", str(tmp_path / "crowd.json")])
    assert result.exit_code == 1 and not isinstance(result.exception, IndexError)
    line = result.output.strip()
    assert "\n" not in line and found in line
    assert line.startswith(f"Error: {path}, field 'rating': every pair has one rating")


def test_simulated_sds_are_those_of_the_simulated_log_without_its_text():
    frame = drawn(40, 6, 30, 2)
    model = cm.default_model()
    log = cm.code_log(frame, scale=model.scale[:2], step=model.scale[2])
    lean = cm.simulated_pair_sds(model, log, np.random.default_rng(3), replicates=3)
    full = cm.pair_sds(cm.simulate_like(model, frame, np.random.default_rng(3), replicates=3))
    assert len(lean) == 3 * 40
    assert np.array_equal(np.sort(lean), np.sort(full.to_numpy()))


def exact_cdf(z, df, many=None):
    """The error's CDF without the table of :func:`lexgold.crowd.model._cdf`."""
    from scipy import special

    return special.ndtr(z) if df is None else special.stdtr(df, z)


@pytest.mark.parametrize("df", [7.0, None])
def test_the_rater_steps_gradient_and_curvature_are_those_of_central_differences(
        state, monkeypatch, df):
    _, fitted = state
    monkeypatch.setattr(cm, "_cdf", exact_cdf)
    rng = np.random.default_rng(4)
    x = np.column_stack([rng.normal(0, 0.05, fitted.g), rng.normal(0, 0.2, fitted.g),
                         rng.normal(0, 0.2, fitted.g)])
    post = fitted.posterior(fitted.pair_loglik(fitted.lapse, df))
    entries = cm._expected_entries(fitted, fitted.cells.T.tocsr(), post)
    loss, grad, curve = cm._entry_derivatives(fitted, x, entries, 0.03, df)
    assert np.array_equal(loss, cm._entry_losses(fitted, x, entries, 0.03, df))
    eps = 1e-5
    for i in range(3):
        unit = np.eye(3)[i] * eps
        slope = (cm._entry_losses(fitted, x + unit, entries, 0.03, df)
                 - cm._entry_losses(fitted, x - unit, entries, 0.03, df)) / (2 * eps)
        assert np.allclose(grad[:, i], slope, rtol=1e-5, atol=1e-5 * np.abs(slope).max())
        bend = (cm._entry_derivatives(fitted, x + unit, entries, 0.03, df)[1]
                - cm._entry_derivatives(fitted, x - unit, entries, 0.03, df)[1]) / (2 * eps)
        assert np.allclose(curve[:, :, i], bend, rtol=1e-5, atol=1e-5 * np.abs(bend).max())


def expected_loglik(fitted, post, lapse, df) -> float:
    """The expected log-likelihood of the pairs' ratings under ``post``, each rater's ratings
    weighted by its honesty, from the whole [groups, codes, grid] probabilities."""
    expected = fitted.cells.T.tocsr() @ (post * fitted.mult[:, None])
    logp = fitted.log_probs(lapse, df).reshape(fitted.g * fitted.q, -1)
    honest = np.repeat(1 - fitted.spam, fitted.q)
    return float((honest[:, None] * expected * logp).sum())


def test_the_lapse_and_df_step_finds_the_maximum_of_the_expected_log_likelihood(state):
    from scipy import optimize

    _, fitted = state
    fitted = copy_of(fitted)
    post = fitted.posterior(fitted.pair_loglik(fitted.lapse, fitted.df))
    entries = cm._expected_entries(fitted, fitted.cells.T.tocsr(), post)
    start = expected_loglik(fitted, post, fitted.lapse, fitted.df)
    cm._lapse_df_step(fitted, entries)
    assert expected_loglik(fitted, post, fitted.lapse, fitted.df) > start
    cm._lapse_df_step(fitted, entries)            # from near the maximum: stays there
    best = optimize.minimize(
        lambda v: -expected_loglik(fitted, post, 1 / (1 + np.exp(-v[0])), float(np.exp(v[1]))),
        [np.log(0.02 / 0.98), np.log(10.0)], method="Nelder-Mead",
        options={"xatol": 1e-7, "fatol": 1e-9, "maxiter": 2000})
    lapse, df = 1 / (1 + np.exp(-best.x[0])), float(np.exp(best.x[1]))
    assert fitted.lapse == pytest.approx(lapse, rel=1e-3)
    assert fitted.df == pytest.approx(df, rel=1e-2)
    assert expected_loglik(fitted, post, fitted.lapse, fitted.df) >= -best.fun - 1e-6


def test_posterior_means_over_the_nonzero_terms_are_those_of_the_dense_sum():
    from scipy import sparse

    rng = np.random.default_rng(5)
    post = rng.random((6, 9)) * (rng.random((6, 9)) < 0.4)
    post[2] = 0.0                                   # a row of no nonzero term
    values = rng.random((4, 9))
    rows, local = np.array([0, 2, 5, 5, 1, 3]), np.array([3, 0, 1, 2, 2, 0])
    found = cm._posterior_means(sparse.csr_matrix(post), rows, values, local)
    expected = [sum(post[r, z] * values[c, z] for z in range(9)) for r, c in zip(rows, local)]
    assert np.allclose(found, expected, rtol=1e-14, atol=0)
    assert found[1] == 0.0


def bounds_of_fit(frame, monkeypatch, **kwargs) -> tuple[list[float], object]:
    """The variational bound after each iteration of a fit with raters at once (the point
    an iteration kept: an extrapolation it undid is left out) and the fitted crowd."""
    monkeypatch.setattr(cm, "ONE_BY_ONE", 0)
    totals, extras, marks = [], [], []
    npmle, terms = cm._Fit.npmle, cm._spammer_terms

    def recorded_npmle(self, loglik, iterations):
        totals.append(npmle(self, loglik, iterations))
        return totals[-1]

    def recorded_terms(state):
        extras.append(terms(state))
        return extras[-1]

    monkeypatch.setattr(cm._Fit, "npmle", recorded_npmle)
    monkeypatch.setattr(cm, "_spammer_terms", recorded_terms)
    model = cm.fit(frame, scale=(0, 6), progress=lambda _: marks.append(len(totals)),
                   **kwargs)
    assert len(totals) == len(extras)
    return [totals[m - 1] + extras[m - 1] for m in marks], model


@pytest.fixture(scope="module")
def spammy():
    """A drawn log of 90 raters of 12 ratings each, 4 of them answering uniformly."""
    frame = drawn(120, 9, 90, 6)
    rng = np.random.default_rng(7)
    spammer = frame["rater_id"].isin([f"r{r}" for r in (3, 17, 40, 77)])
    frame.loc[spammer, "rating"] = rng.integers(0, 7, int(spammer.sum()))
    return frame


def test_the_fit_at_once_raises_its_bound_every_iteration_and_stops_on_a_small_gain(
        spammy, monkeypatch):
    bounds, model = bounds_of_fit(spammy, monkeypatch, max_iterations=60, tolerance=1e-7)
    gains = np.diff(bounds)
    # rises but for the centring of biases and log scales (the model's constraint, not a
    # step of EM; a rater held at a bound does not take its shift): falls of at most 5e-4
    # nats a rating here (1,080 ratings; the largest is 3e-4)
    assert gains[:5].min() > 0 and gains.sum() > 50
    assert (gains >= -5e-4 * len(spammy)).all(), gains
    iterations = int(model.notes[0].split(" iterations")[0].rsplit(" ", 1)[1])
    assert iterations == len(bounds) < 60            # stopped by the gain, not the count
    assert gains[-1] < 1e-7 * abs(bounds[-1])
    assert f"{bounds[-1]:.2f})" in model.notes[0]    # the bound the crowd's notes quote


def test_squarem_reaches_the_maximum_of_plain_em(monkeypatch):
    frame = drawn(150, 8, 12, 6)                      # 100 ratings a rater: a clear maximum
    fast, model = bounds_of_fit(frame, monkeypatch, max_iterations=400, tolerance=1e-8)
    monkeypatch.setattr(cm, "_extrapolated", lambda first, second, third: third)  # plain EM
    plain, slow = bounds_of_fit(frame, monkeypatch, max_iterations=400, tolerance=1e-8)
    assert len(fast) <= len(plain) < 400
    assert fast[-1] == pytest.approx(plain[-1], abs=1e-6 * abs(plain[-1]))
    for name in ("lapse", "df", "sigma"):
        assert getattr(model, name) == pytest.approx(getattr(slow, name), rel=1e-3), name
    for name in ("bias_sd", "scale_sd", "noise_sd"):
        assert getattr(model.raters, name) == pytest.approx(getattr(slow.raters, name),
                                                            rel=1e-3), name


def test_the_centring_shift_is_the_mean_unless_a_rater_would_cross_a_bound():
    inside = np.array([-1.0, 0.5, 0.8])
    assert cm._centring_shift(inside, np.ones(3), -1.5, 1.5) == np.average(inside)
    # the mean, 0.15, would take the first rater to -1.65: it stays at -1.5 and the others
    # take the shift, (-1.5 + 0.5 + 0.7 + 0.9 - 3 c) / 4 = 0
    values = np.array([-1.5, 0.5, 0.7, 0.9])
    assert cm._centring_shift(values, np.ones(4), -1.5, 1.5) == pytest.approx(0.2, abs=1e-12)
    # weighted (the second rater twice): (-1.5 + 2 (0.5 - c) + 0.7 - c + 0.9 - c) / 5 = 0
    weights = np.array([1.0, 2.0, 1.0, 1.0])
    assert cm._centring_shift(values, weights, -1.5, 1.5) == pytest.approx(0.275, abs=1e-12)


def test_raters_at_a_bound_stay_within_it_however_long_the_fit(spammy, monkeypatch):
    """Raters who answer one end of the scale push their bias and scale to a bound; the
    centring after each rater step keeps every rater within the bounds and the honest raters'
    means at 0 (to the spammer step after it), however many iterations the fit runs (it used
    to move a rater at a bound beyond it, further each iteration)."""
    frame = spammy.copy()
    frame.loc[frame["rater_id"].isin(["r5", "r22"]), "rating"] = 6.0
    frame.loc[frame["rater_id"] == "r50", "rating"] = 0.0
    monkeypatch.setattr(cm, "ONE_BY_ONE", 0)
    states, model_of = [], cm._model
    monkeypatch.setattr(cm, "_model", lambda state, *rest: states.append(state)
                        or model_of(state, *rest))
    cm.fit(frame, scale=(0, 6), max_iterations=30, tolerance=0.0)
    (state,) = states
    honest = 1 - state.spam[1:]
    held = 0
    for name, (low, high) in zip(("bias", "log_scale", "log_noise"), cm.RATER_BOUNDS):
        values = getattr(state, name)[1:]
        assert values.min() >= low and values.max() <= high, name
        assert abs(np.average(values, weights=honest)) < 1e-4, name
        held += int(((values == low) | (values == high)).sum())
    assert held >= 3


def test_posterior_terms_too_small_to_count_change_no_predictive_sum():
    """The spammer step's predictive sums over a posterior's significant terms
    (:func:`lexgold.crowd.model._significant`) are those over all its nonzero terms to double
    precision: posteriors spread over 700 nats, the inverse probabilities up to ``k / lapse``."""
    from scipy import sparse

    rng = np.random.default_rng(5)
    lapse, k = 0.01, 7
    post = np.exp(-rng.uniform(0, 700, (40, 60)))
    post[rng.random(post.shape) < 0.2] = 0.0
    post /= post.sum(axis=1, keepdims=True)
    inverse = rng.uniform(1.0, k / lapse, (25, 60))
    rows, local = rng.integers(0, 40, 500), rng.integers(0, 25, 500)
    kept = cm._significant(post, lapse, k)
    assert (kept > 0).sum() < (post > 0).sum() / 4            # most terms are dropped
    full = cm._posterior_means(sparse.csr_matrix(post), rows, inverse, local)
    found = cm._posterior_means(sparse.csr_matrix(kept), rows, inverse, local)
    assert np.allclose(found, full, rtol=4e-16, atol=0)
