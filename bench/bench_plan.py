"""Validate ``lexgold plan`` (issue 26): predictions from 4-rater pilots against the observed
two-group reliability of the full study.

A study is simulated with lexgold's crowd (:mod:`lexgold.process.simulate`: rater bias, noise,
10 % spammers, ordinal rounding) with ``--raters`` raters per tranche. The **observed**
reliability for groups of ``k`` raters is the mean, over ``--splits`` random splits, of the
Spearman between the pair means of two disjoint groups of ``k`` of the study's raters (per
tranche). Each pilot is ``--pilot`` raters drawn per tranche from the same study; the planner
predicts the reliability at ``k`` from it. Printed: mean absolute error, coverage of
``[low, high]`` and mean interval width, and the same for Spearman-Brown on the pilot's
split-half Pearson (the textbook answer), for comparison.

    PYTHONPATH=. python bench/bench_plan.py --studies 2 --pilots 5
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from lexgold.process.plan import reliability_curve
from lexgold.process.simulate import Crowd, simulate_ratings, usf_pairs


def observed(ratings: pd.DataFrame, k: int, rng: np.random.Generator, splits: int) -> float:
    """Mean Spearman between the pair means of two disjoint groups of k raters per tranche."""
    rated = ratings[ratings["kind"] != "checkpoint"]
    rated = rated.groupby(["tranche", "rater_id", "word1", "word2"], as_index=False)["rating"].mean()
    raters = rated.groupby("tranche")["rater_id"].unique()
    values = []
    for _ in range(splits):
        a, b = [], []
        for ids in raters:
            chosen = rng.permutation(ids)
            a.extend(chosen[:k])
            b.extend(chosen[k:2 * k])
        mean_a = rated[rated["rater_id"].isin(a)].groupby(["word1", "word2"])["rating"].mean()
        mean_b = rated[rated["rater_id"].isin(b)].groupby(["word1", "word2"])["rating"].mean()
        both = pd.concat([mean_a, mean_b], axis=1, join="inner")
        values.append(both.iloc[:, 0].corr(both.iloc[:, 1], method="spearman"))
    return float(np.mean(values))


def pilot_of(ratings: pd.DataFrame, n: int, rng: np.random.Generator) -> pd.DataFrame:
    """``n`` raters drawn per tranche."""
    raters = ratings.groupby("tranche")["rater_id"].unique()
    keep = [r for ids in raters for r in rng.choice(ids, size=n, replace=False)]
    return ratings[ratings["rater_id"].isin(keep)]


def spearman_brown(pilot: pd.DataFrame, k: int) -> float:
    """Textbook prediction: the pilot's mean pairwise-rater Pearson, stepped up to k raters."""
    from lexgold.process.ratings import answers

    wide = answers(pilot).pivot_table(index=["word1", "word2"], columns="rater_id",
                                      values="rating")
    r = wide.corr(min_periods=3).to_numpy()
    r1 = np.nanmean(r[~np.eye(len(r), dtype=bool)])
    return k * r1 / (1 + (k - 1) * r1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--studies", type=int, default=2)
    parser.add_argument("--pilots", type=int, default=5, help="pilots per study")
    parser.add_argument("--pairs", type=int, default=300)
    parser.add_argument("--raters", type=int, default=16, help="raters per tranche in a study")
    parser.add_argument("--pilot", type=int, default=4, help="raters per tranche in a pilot")
    parser.add_argument("--k", type=int, default=8, help="group size predicted")
    parser.add_argument("--noise", type=float, default=1.0, help="crowd noise_sd")
    parser.add_argument("--spammers", type=float, default=0.1)
    parser.add_argument("--replicates", type=int, default=200)
    parser.add_argument("--splits", type=int, default=50)
    parser.add_argument("--protocol", default="simlex")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    errors, covered, widths, sb_errors = [], [], [], []
    started = time.perf_counter()
    for s in range(args.studies):
        pairs = usf_pairs(args.pairs, rng=rng)
        ratings, _ = simulate_ratings(pairs, args.protocol, rng=rng,
                                      crowd=Crowd(model="invented", noise_sd=args.noise, spammers=args.spammers),
                                      raters_per_tranche=args.raters)
        truth = observed(ratings, args.k, rng, args.splits)
        for p in range(args.pilots):
            pilot = pilot_of(ratings, args.pilot, rng)
            curve = reliability_curve(pilot, args.k, rng=rng, replicates=args.replicates)
            row = curve.iloc[args.k - 1]
            sb = spearman_brown(pilot, args.k)
            errors.append(abs(row["reliability"] - truth))
            sb_errors.append(abs(sb - truth))
            covered.append(row["low"] <= truth <= row["high"])
            widths.append(row["high"] - row["low"])
            print(f"study {s} pilot {p}: observed {truth:.3f}  predicted "
                  f"{row['reliability']:.3f} [{row['low']:.3f}, {row['high']:.3f}]  "
                  f"Spearman-Brown {sb:.3f}", flush=True)
    n = len(errors)
    print(f"{n} pilots of {args.pilot} raters, k={args.k}: MAE {np.mean(errors):.4f}  "
          f"coverage {sum(covered)}/{n} ({np.mean(covered):.0%})  mean width "
          f"{np.mean(widths):.4f}  (Spearman-Brown MAE {np.mean(sb_errors):.4f})  "
          f"{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
