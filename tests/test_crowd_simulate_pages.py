"""A simulated rater's page of pairs, drawn pair by pair and answered at once, gives the answers
of one ``draw_ratings`` call per pair (the stored answers of a seeded rehearsal rest on it)."""

import copy
import dataclasses

import numpy as np
import pytest

from lexgold.crowd.model import draw_ratings, lapse_draws, latent_errors
from lexgold.crowd.simulate import Crowd, SimulatedRater


def _one_call_per_pair(rater: SimulatedRater, keys, truths, spreads) -> list[int]:
    """A page answered as a rater of the rater model answered before pages were drawn at
    once: a pair seen before recalled with chance ``recall``, else one draw_ratings call."""
    answers = []
    for key, truth, spread in zip(keys, truths, spreads):
        if key in rater.given and rater.rng.random() < rater.crowd.recall:
            answers.append(rater.given[key])
            continue
        value = int(draw_ratings(rater.model, np.array([truth]), np.array([spread]), rater.rng,
                                 bias=rater.bias, scale=rater.scale, noise=rater.noise)[0])
        rater.given.setdefault(key, value)
        answers.append(value)
    return answers


def _twins(seed: int, low: int = 0, high: int = 6) -> tuple[SimulatedRater, SimulatedRater]:
    """The same honest rater twice, on generators in the same state."""
    rng = np.random.default_rng(seed)
    rater = SimulatedRater(Crowd(), rng, low=low, high=high)
    while not rater.honest:
        rater = SimulatedRater(Crowd(), rng, low=low, high=high)
    twin = copy.copy(rater)
    twin.rng, twin.given = copy.deepcopy(rng), {}
    return rater, twin


def _pages(seed: int, low: int, high: int, n: int = 12):
    """Pages of 1-8 pairs out of 20, so that some pairs come again (the rater may recall
    them), some within one page, with true scores beyond both ends of the scale too."""
    rng = np.random.default_rng(1000 + seed)
    for _ in range(n):
        size = int(rng.integers(1, 9))
        yield ([int(k) for k in rng.integers(0, 20, size)],
               [float(x) for x in rng.uniform(low - 0.5, high + 0.5, size)],
               [float(x) for x in rng.uniform(0.5, 2.0, size)])


@pytest.mark.parametrize("seed", range(30))
@pytest.mark.parametrize("scale", [(0, 6), (-3, 3)])      # recalled answers below zero too
def test_a_page_answers_as_one_draw_ratings_call_per_pair(seed, scale):
    rater, twin = _twins(seed, *scale)
    if seed % 3 == 0:                   # normal latent errors: standard_normal's draws
        rater.model = twin.model = dataclasses.replace(rater.model, df=None)
    recalled = 0
    for keys, truths, spreads in _pages(seed, *scale):
        assert rater.rate(keys, truths, spreads) == _one_call_per_pair(twin, keys, truths,
                                                                       spreads)
        assert rater.given == twin.given
        assert rater.rng.bit_generator.state == twin.rng.bit_generator.state
        recalled += sum(key in twin.given for key in keys)
    assert recalled                     # the pages did come back to pairs seen before


@pytest.mark.parametrize("df", [None, 7.5])
def test_one_cells_draws_take_the_bits_of_draws_of_shape_one(df):
    """A page's draws are scalars; draw_ratings draws arrays of the cells' shape: for one cell
    the same numbers and the same stream."""
    model = dataclasses.replace(Crowd().rater_model(0, 6), df=df)
    for seed in range(20):
        scalar, one = np.random.default_rng(seed), np.random.default_rng(seed)
        for _ in range(50):
            drawn = (latent_errors(model, scalar), *lapse_draws(model, scalar))
            shaped = (latent_errors(model, one, (1,)), *lapse_draws(model, one, (1,)))
            assert all(np.shape(a) == () and b.shape == (1,) and a == b[0]
                       for a, b in zip(drawn, shaped))
        assert scalar.bit_generator.state == one.bit_generator.state
