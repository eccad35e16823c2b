"""Timing of the agreement statistics and the leave-one-out agreement gain (targets).

Targets: 500 raters x 10 tranches of 119 pairs in under 2 s; 10,000 raters over 50,000 pairs in
under 60 s. "Processed" = ``rater_agreement`` (every rater's mean pairwise Spearman, Spearman
against the mean of the others, and leave-one-out IAA-1 gain), plus IAA-1 and IAA-2, and the
SimLex ``exclusion_table`` for the first case.

BLAS is limited to one thread (OPENBLAS_NUM_THREADS etc., unless already set): the
correlation matrices are small (50 x 50) and multi-threaded BLAS only adds contention.

Usage: python bench/bench_agreement.py [--quick]
"""

from __future__ import annotations

import os

for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import argparse  # noqa: E402
import time
import warnings

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from lexgold.process.agreement import (AgreementWarning, iaa_against_mean,  # noqa: E402
                                       iaa_pairwise, rater_agreement)
from lexgold.process.exclusions import exclusion_table  # noqa: E402


def study(tranches: int, raters_per_tranche: int, unique: int, consistency: int = 20,
          seed: int = 0) -> pd.DataFrame:
    """Vectorised synthetic tranche study: true scores + rater bias + noise, 0-6 integers."""
    rng = np.random.default_rng(seed)
    n_pairs = consistency + tranches * unique
    truth = rng.uniform(0, 6, n_pairs)
    per_rater = consistency + unique
    tranche = np.repeat(np.arange(tranches), raters_per_tranche)
    rater = np.arange(tranches * raters_per_tranche)
    items = np.concatenate([np.broadcast_to(np.arange(consistency), (len(rater), consistency)),
                            consistency + tranche[:, None] * unique + np.arange(unique)], axis=1)
    bias = rng.normal(0, 0.7, len(rater))[:, None]
    ratings = np.clip(np.round(truth[items] + bias + rng.normal(0, 1, items.shape)), 0, 6)
    kind = np.where(np.arange(per_rater) < consistency, "consistency", "unique")
    return pd.DataFrame({
        "rater_id": np.repeat([f"r{i:05d}" for i in rater], per_rater),
        "tranche": np.repeat(tranche, per_rater),
        "word1": np.char.add("w", items.ravel().astype(str)), "word2": "x",
        "rating": ratings.ravel(), "kind": np.tile(kind, len(rater))})


def timed(label, function, *args, **kwargs):
    start = time.perf_counter()
    value = function(*args, **kwargs)
    seconds = time.perf_counter() - start
    print(f"  {label:<44s} {seconds:7.2f} s")
    return value, seconds


def case(title, tranches, raters_per_tranche, unique, target_s, exclusions):
    ratings = study(tranches, raters_per_tranche, unique)
    n_pairs = ratings[["word1", "word2"]].drop_duplicates().shape[0]
    print(f"{title}: {ratings['rater_id'].nunique()} raters, {n_pairs} pairs, "
          f"{len(ratings)} ratings (target {target_s:g} s)")
    total = 0.0
    table, seconds = timed("rater_agreement (incl. leave-one-out gain)", rater_agreement, ratings)
    total += seconds
    iaa1, seconds = timed("iaa_pairwise (IAA-1)", iaa_pairwise, ratings)
    total += seconds
    iaa2, seconds = timed("iaa_against_mean (IAA-2)", iaa_against_mean, ratings)
    total += seconds
    if exclusions:
        _, seconds = timed("exclusion_table(simlex)", exclusion_table, ratings, "simlex")
        total += seconds
    print(f"  IAA-1 {iaa1:.3f}  IAA-2 {iaa2:.3f}  raters with a gain: "
          f"{table['gain'].notna().sum()}")
    print(f"  total {total:.2f} s -> {'OK' if total < target_s else 'OVER TARGET'}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="only the 500-rater case")
    args = parser.parse_args()
    warnings.simplefilter("ignore", AgreementWarning)
    case("SimLex-size", 10, 50, 99, 2.0, exclusions=True)
    if not args.quick:
        case("Large", 200, 50, 250, 60.0, exclusions=False)


if __name__ == "__main__":
    main()
