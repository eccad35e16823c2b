"""How much can *any* allocation save under the rehearsal crowd? (issue 26, diagnosis)

Offline, in numpy, without the site: ``--pairs`` pairs with true scores uniform over 0..6, and
honest raters of :class:`lexgold.crowd.simulate.Crowd` (``round(truth + bias + noise)``
clipped to the scale, ``bias ~ N(0, 0.7)``, ``noise ~ N(0, 1)``; a rater's bias is drawn per
rating here, as pairs of an adaptive study are rated by different sets of raters; spammers are
left out, as if the exclusion rules caught every one). The uniform design gives every pair
``--raters`` ratings; its mean Spearman with the truth (over ``--reps`` repetitions) is the bar.
Each allocation below spends a share of that budget and the smallest share that reaches the bar
(within the grid) is its cost; the saving is ``1 - share``.

- ``oracle``: knows the truth. Ratings go one at a time (greedy) to the pair with the largest
  reduction of ``sum_j Phi(-|mu_i - mu_j| / sqrt(v_i / n_i + v_j / n_j))`` (expected misordered
  pairs, with ``mu`` and ``v`` the exact mean and variance of a rounded, clipped rating of the
  pair's true score): the best a fixed allocation can do for the ranking;
- ``widest``, ``gain``: what the site can do, from the ratings so far: a first round of
  ``--first`` ratings per pair, then top-ups of ``--topup`` ratings to the ``--batch`` pairs of
  highest :func:`lexgold.live.allocator.rank_uncertainty` (``widest``: the criterion up to
  issue 26's fix) or highest :func:`lexgold.live.allocator.misordering_gain` (``gain``).

``--pair-sd-spread S`` (default 0, the rehearsal crowd) scales each pair's noise by
``exp(N(0, S))``: a sensitivity figure for pairs that differ in how much raters disagree
(SimLex-999 section 4 reports per-pair SDs that differ by part of speech, adjectives lowest;
the spread is not taken from the published data and is reported separately).

Also printed: what the uniform design's shared raters are worth (a tranche's raters rate all
its pairs, so their bias does not reorder them; ``--tranches``), against a rater per rating.

Usage: python bench/oracle_adaptive.py [--pairs 300] [--raters 12] [--reps 200] [--seed 1]
[--pair-sd-spread 0] [--tranches 3]
"""

from __future__ import annotations

import os

for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import argparse

import numpy as np
import pandas as pd
from scipy.stats import norm, rankdata

from lexgold.live.allocator import misordering_gain, rank_uncertainty

LOW, HIGH = 0, 6


def moments(truth: np.ndarray, sd: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Exact probabilities of each scale point, mean and variance of ``clip(round(t + z))``,
    ``z ~ N(0, sd)``, per pair."""
    points = np.arange(LOW, HIGH + 1)
    upper = np.where(points == HIGH, np.inf, points + 0.5)
    lower = np.where(points == LOW, -np.inf, points - 0.5)
    probs = (norm.cdf((upper[None] - truth[:, None]) / sd[:, None])
             - norm.cdf((lower[None] - truth[:, None]) / sd[:, None]))
    mean = probs @ points
    return probs, mean, probs @ points ** 2 - mean ** 2


def draw_means(probs: np.ndarray, n: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    pair = np.repeat(np.arange(len(n)), n)
    value = (rng.random(len(pair))[:, None] > np.cumsum(probs, axis=1)[pair, :-1]).sum(axis=1)
    return np.bincount(pair, value + LOW, minlength=len(n)) / np.maximum(n, 1)


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.corrcoef(rankdata(a), rankdata(b))[0, 1])


def oracle(mean, var, total, minimum=1, step=None):
    """Greedy allocation (knowing the truth) of ``total`` ratings: ``step`` ratings at a time
    go to the pairs with the largest reduction of ``u_i^2``, ``u_i = sum_j Phi(-|mu_i - mu_j| /
    sqrt(v_i / n_i + v_j / n_j))`` (expected misordered neighbours; its square is proportional
    to the expected squared rank error Spearman's correlation loses by). Returns the ratings
    per pair after each step (greedy allocations are nested: a prefix is the allocation of a
    smaller budget)."""
    pairs = len(mean)
    step = step or max(1, pairs // 30)
    n = np.full(pairs, minimum, dtype=float)
    gap = np.abs(mean[:, None] - mean[None, :])
    np.fill_diagonal(gap, np.inf)
    out = [n.copy()]
    while n.sum() < total:
        now = norm.cdf(-gap / np.sqrt(var[:, None] / n[:, None] + var / n)).sum(axis=1)
        more = norm.cdf(-gap / np.sqrt(var[:, None] / (n[:, None] + 1) + var / n)).sum(axis=1)
        gain = now ** 2 - more ** 2
        chosen = np.argsort(-gain, kind="stable")[: int(min(step, total - n.sum()))]
        n[chosen] += 1
        out.append(n.copy())
    return out


def adaptive(probs, total, first, topup, batch, criterion, rng):
    """First round of ``first`` ratings per pair, then top-ups chosen from the ratings so far."""
    pairs = len(probs)
    ratings = [list(rng.choice(np.arange(LOW, HIGH + 1), size=first, p=p)) for p in probs]
    spent = first * pairs
    while spent + topup * batch <= total:
        table = pd.DataFrame({"n": [len(r) for r in ratings],
                              "mean": [np.mean(r) for r in ratings],
                              "var": [np.var(r, ddof=1) for r in ratings]})
        score = (rank_uncertainty(table) if criterion == "widest"
                 else misordering_gain(table, topup))
        for i in np.argsort(-score.to_numpy(), kind="stable")[:batch]:
            ratings[i].extend(rng.choice(np.arange(LOW, HIGH + 1), size=topup, p=probs[i]))
        spent += topup * batch
    return np.array([np.mean(r) for r in ratings]), spent


def shared_bias(pairs: int, raters: int, tranches: int, reps: int,
                rng: np.random.Generator) -> tuple[float, float]:
    """Mean Spearman with the truth of the uniform design when each tranche's ``raters`` rate
    all its pairs (a rater's bias shared by the pairs of a tranche, as in the site), and when
    every rating has its own rater (as a pair rated in several top-ups has a mix of raters)."""
    shared, own = [], []
    tranche = np.arange(pairs) % tranches
    for _ in range(reps):
        truth = rng.uniform(LOW, HIGH, pairs)
        bias = rng.normal(0, 0.7, (tranches, raters))[tranche]
        for out, b in ((shared, bias), (own, rng.normal(0, 0.7, (pairs, raters)))):
            noisy = truth[:, None] + b + rng.normal(0, 1.0, (pairs, raters))
            out.append(spearman(np.clip(np.round(noisy), LOW, HIGH).mean(axis=1), truth))
    return float(np.mean(shared)), float(np.mean(own))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=300)
    parser.add_argument("--raters", type=int, default=12)
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--first", type=int, default=4)
    parser.add_argument("--topup", type=int, default=2)
    parser.add_argument("--batch", type=int, default=99)
    parser.add_argument("--adaptive-reps", type=int, default=20)
    parser.add_argument("--pair-sd-spread", type=float, default=0.0)
    parser.add_argument("--tranches", type=int, default=3,
                        help="Tranches of the uniform design, for the shared-bias figure.")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    shares = np.round(np.arange(0.60, 1.0001, 0.025), 3)
    total = args.pairs * args.raters
    rows = {"uniform": [], "oracle": []}
    by_share = {s: {"uniform": [], "oracle": []} for s in shares}
    for _ in range(args.reps):
        truth = rng.uniform(LOW, HIGH, args.pairs)
        sd = np.sqrt(0.7 ** 2 + 1.0) * np.exp(rng.normal(0, args.pair_sd_spread, args.pairs))
        probs, mean, var = moments(truth, sd)
        rows["uniform"].append(spearman(draw_means(probs, np.full(args.pairs, args.raters),
                                                   rng), truth))
        for s in shares:
            budget = round(s * total)
            even = np.full(args.pairs, budget // args.pairs)
            even[: budget - even.sum()] += 1
            by_share[s]["uniform"].append(spearman(draw_means(probs, even, rng), truth))
        if len(by_share[shares[0]]["oracle"]) < args.adaptive_reps:
            path = oracle(mean, var, total)
            for s in shares:
                n = next(a for a in path if a.sum() >= round(s * total)).astype(int)
                by_share[s]["oracle"].append(spearman(draw_means(probs, n, rng), truth))
    bar = float(np.mean(rows["uniform"]))
    print(f"pairs {args.pairs}, {args.raters} ratings each ({total}), pair sd spread "
          f"{args.pair_sd_spread}: uniform Spearman with truth {bar:.4f} "
          f"(sd {np.std(rows['uniform']):.4f}, {args.reps} reps)")
    for name in ("uniform", "oracle"):
        curve = {s: float(np.mean(v[name])) for s, v in by_share.items()}
        reached = [s for s in shares if curve[s] >= bar]
        # 1 - rho falls as 1 / budget (uniform: the bar's loss at share 1): the share at which
        # this allocation would reach the bar
        share = (1 - curve[1.0]) / (1 - bar)
        print(f"  {name}: Spearman at 60/80/90/100 % of the budget: "
              + " / ".join(f"{curve[s]:.4f}" for s in (0.6, 0.8, 0.9, 1.0))
              + "; first share of the grid reaching the bar: "
              + (f"{reached[0]} (saving {1 - reached[0]:.1%})" if reached else "none")
              + f"; by 1 - rho ~ 1 / budget: saving {1 - share:.1%}")
    shared, own = shared_bias(args.pairs, args.raters, args.tranches, args.reps, rng)
    print(f"  uniform, {args.tranches} tranches of shared raters: Spearman {shared:.4f}; every "
          f"rating its own rater: {own:.4f}; shared raters are worth "
          f"{1 - (1 - shared) / (1 - own):.1%} of the budget")
    for criterion in ("widest", "gain"):
        found, losses = [], []
        for _ in range(args.adaptive_reps):
            truth = rng.uniform(LOW, HIGH, args.pairs)
            sd = np.sqrt(0.7 ** 2 + 1.0) * np.exp(rng.normal(0, args.pair_sd_spread, args.pairs))
            probs, _, _ = moments(truth, sd)
            means, spent = adaptive(probs, total, args.first, args.topup,
                                    min(args.batch, args.pairs), criterion, rng)
            even = np.full(args.pairs, spent // args.pairs)
            even[: spent - even.sum()] += 1
            uniform = spearman(draw_means(probs, even, rng), truth)
            found.append(spearman(means, truth) - uniform)
            losses.append((1 - spearman(means, truth), 1 - uniform))
        print(f"  {criterion} (first {args.first}, top-ups of {args.topup} to "
              f"{min(args.batch, args.pairs)} pairs): Spearman minus uniform's at the same "
              f"budget: mean {np.mean(found):+.4f} (se {np.std(found) / np.sqrt(len(found)):.4f},"
              f" {len(found)} reps); by 1 - rho ~ 1 / budget: saving "
              f"{1 - np.mean([a for a, _ in losses]) / np.mean([b for _, b in losses]):.1%}")


if __name__ == "__main__":
    main()
