"""A simulated rater's page of pairs drawn at once gives the answers of one draw per pair."""

import copy
import dataclasses

import numpy as np
import pytest

import lexgold.crowd.simulate as simulate
from lexgold.crowd.simulate import Crowd, SimulatedRater


def _twins(seed: int) -> tuple[SimulatedRater, SimulatedRater]:
    """The same honest rater twice, on generators in the same state; the second draws pair by
    pair (the way a page was drawn before pages were drawn at once)."""
    rng = np.random.default_rng(seed)
    rater = SimulatedRater(Crowd(), rng, low=0, high=6)
    while not rater.honest:
        rater = SimulatedRater(Crowd(), rng, low=0, high=6)
    twin = copy.copy(rater)
    twin.rng, twin.given, twin._draws = copy.deepcopy(rng), {}, False
    return rater, twin


def _pages(seed: int, n: int = 12):
    """Pages of 1-8 pairs out of 20, so that some pairs come again (the rater may recall
    them), some within one page, with true scores beyond both ends of the scale too."""
    rng = np.random.default_rng(1000 + seed)
    for _ in range(n):
        size = int(rng.integers(1, 9))
        yield ([int(k) for k in rng.integers(0, 20, size)],
               [float(x) for x in rng.uniform(-0.5, 6.5, size)],
               [float(x) for x in rng.uniform(0.5, 2.0, size)])


@pytest.mark.parametrize("seed", range(40))
def test_a_page_at_once_answers_as_pair_by_pair(seed):
    rater, twin = _twins(seed)
    for keys, truths, spreads in _pages(seed):
        assert rater.rate(keys, truths, spreads) == twin.rate(keys, truths, spreads)
        assert rater.given == twin.given
        assert rater.rng.bit_generator.state == twin.rng.bit_generator.state
    assert isinstance(rater._draws, simulate._CellDraws)        # drawn at once indeed


def test_a_scalar_draw_takes_the_bits_of_a_draw_of_one():
    """What _CellDraws.cell relies on, for the generator's methods draw_ratings calls."""
    model = Crowd().rater_model(0, 6)
    learning = simulate._Recording(np.random.default_rng(0))
    simulate.draw_ratings(model, np.array([3.0]), np.array([1.0]), learning)
    assert {name for name, _, _ in learning.calls} >= {"random", "integers"}
    for seed in range(20):
        one, scalar = np.random.default_rng(seed), np.random.default_rng(seed)
        for _ in range(50):
            for name, args, kwargs in learning.calls:
                drawn = getattr(one, name)(*args, **kwargs)
                assert drawn.shape == (1,)
                assert drawn[0] == getattr(scalar, name)(*args[:-1], **kwargs)
        assert one.bit_generator.state == scalar.bit_generator.state


def test_draws_unlike_one_cells_are_drawn_pair_by_pair(monkeypatch):
    """A draw_ratings whose draws depend on the cells (an extra draw for a page of more than
    one pair) is not served from the kept draws: the page is drawn again pair by pair, from
    the generator's state before it."""
    draw = simulate.draw_ratings

    def uneven(model, scores, spreads, rng, **rater):
        if len(scores) > 1:
            rng.standard_normal(len(scores))
        return draw(model, scores, spreads, rng, **rater)

    monkeypatch.setattr(simulate, "draw_ratings", uneven)
    unlike = []
    monkeypatch.setattr(simulate._CellDraws, "Unlike", type(
        "Unlike", (Exception,), {"__init__": lambda self, why: unlike.append(why)}))
    for seed in (7, 8):
        rater, twin = _twins(seed)
        if seed == 8:                   # normal latent errors: standard_normal's draws
            rater.model = twin.model = dataclasses.replace(rater.model, df=None)
        for keys, truths, spreads in _pages(seed):
            assert rater.rate(keys, truths, spreads) == twin.rate(keys, truths, spreads)
            assert rater.rng.bit_generator.state == twin.rng.bit_generator.state
    assert unlike                       # the pages of several pairs were drawn again
