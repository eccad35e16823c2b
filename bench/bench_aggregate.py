"""Does ``[process] aggregate = "model"`` reach the mean's accuracy with fewer raters? Measured on
the real WordSim-353 set 1 log (Finkelstein et al. 2002; 13 identified raters on 0-10, 153
listed pairs, 152 distinct; vendored in lexgold/resources/data, SOURCES.toml).

Each split draws ``--reference`` raters as a held-out reference (their pair means) and ``k``
other raters, for ``k`` from 2 to ``13 - reference``; the pairs' scores from the ``k`` raters
by each rule (``mean``; ``model``, :func:`lexgold.process.aggregate.fit_rater_model`;
``trimmed_1sd``) are compared with the reference: Spearman's rho and the mean absolute error
(MAE, rating scale). The reference has the same size at every ``k``, so the curves over ``k``
can be compared: "equivalent raters" is the ``k`` at which the mean's curve (interpolated)
reaches the model's figure. ``--design incomplete`` draws each pair's ``k`` raters apart, so
that raters rate different pairs (as in tranches), the case where a rater's bias moves pairs
against each other.

Printed per ``k``: each rule's mean over ``--splits`` splits, and the model's difference from
the mean rule with the middle 95 % of its per-split values (splits share raters, so this is the
spread over splits, not a standard error of the mean difference). Figures are from real
raters; nothing is simulated.

    PYTHONPATH=. python bench/bench_aggregate.py --splits 300 --seed 0
    PYTHONPATH=. python bench/bench_aggregate.py --splits 300 --seed 0 --design incomplete
"""

from __future__ import annotations

import argparse
import gzip
import tempfile
import time
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from lexgold.process.aggregate import fit_rater_model, trimmed_1sd_scores
from lexgold.ratings.long import answers
from lexgold.ratings.layouts import read_layout

DATA = resources.files("lexgold.resources") / "data" / "wordsim353_set1_set1.csv.gz"
RULES = ("mean", "model", "trimmed_1sd")


def load() -> pd.DataFrame:
    """WordSim-353 set 1's answers (one per rater and pair; the pair listed twice averaged)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "set1.csv"
        path.write_bytes(gzip.decompress(DATA.read_bytes()))
        return answers(read_layout(path, "wide").frame)


def scores(part: pd.DataFrame, rule: str) -> pd.Series:
    """Each pair's score from ``part`` (the chosen raters' answers) by ``rule``."""
    if rule == "mean":
        return part.groupby(["word1", "word2"])["rating"].mean()
    if rule == "trimmed_1sd":
        return trimmed_1sd_scores(part).set_index(["word1", "word2"])["estimate"]
    fit = fit_rater_model(part).pairs.set_index(["word1", "word2"])["psi"]
    return fit.clip(0, 10)


def run(table: pd.DataFrame, reference: int, splits: int, seed: int,
        design: str = "complete") -> pd.DataFrame:
    """Per split, k and rule: Spearman and MAE against the held-out raters' pair means.
    ``design``: "complete" (the same k raters rate every pair) or "incomplete" (each pair's
    k raters drawn apart from the other raters, so raters rate different pairs)."""
    rng = np.random.default_rng(seed)
    draws = np.random.default_rng([seed, 1])    # the design's own stream: same splits either way
    raters = np.array(sorted(table["rater_id"].unique()))
    rows = []
    for split in range(splits):
        order = rng.permutation(raters)
        held, pool = order[:reference], order[reference:]
        truth = table[table["rater_id"].isin(held)].groupby(["word1", "word2"])["rating"].mean()
        rated = table[table["rater_id"].isin(pool)]
        if design == "incomplete":        # a random order of the pool's raters per pair
            place = rated.assign(key=draws.random(len(rated))).groupby(
                ["word1", "word2"])["key"].rank(method="first") - 1
        else:
            place = rated["rater_id"].map({r: i for i, r in enumerate(pool)})
        for k in range(2, len(pool) + 1):
            part = rated[(place < k).to_numpy()]
            for rule in RULES:
                got = scores(part, rule).reindex(truth.index)
                rows.append({"split": split, "k": k, "rule": rule,
                             "spearman": stats.spearmanr(got, truth).statistic,
                             "mae": float(np.abs(got - truth).mean())})
    return pd.DataFrame(rows)


def equivalent(k_values: np.ndarray, curve: np.ndarray, value: float) -> str:
    """The k at which ``curve`` (increasing in k, interpolated) reaches ``value``."""
    if value <= curve[0]:
        return f"<= {k_values[0]}" if value < curve[0] else f"{k_values[0]}"
    if value > curve[-1]:
        return f"> {k_values[-1]}"
    return f"{np.interp(value, curve, k_values):.2f}"


def report(results: pd.DataFrame) -> None:
    means = results.groupby(["k", "rule"])[["spearman", "mae"]].mean().unstack("rule")
    wide = results.pivot_table(index=["split", "k"], columns="rule", values=["spearman", "mae"])
    k_values = means.index.to_numpy()
    print("k | Spearman mean / model / trimmed | model - mean [middle 95 % of splits] | "
          "model better | MAE mean / model / trimmed | model - mean [middle 95 %] | "
          "model better | mean-rule raters for the model's Spearman / MAE")
    for k in k_values:
        line = [f"{k}"]
        for metric, better in (("spearman", np.greater), ("mae", np.less)):
            row = means.loc[k, metric]
            diff = (wide.loc[(slice(None), k), (metric, "model")]
                    - wide.loc[(slice(None), k), (metric, "mean")]).to_numpy()
            low, high = np.percentile(diff, [2.5, 97.5])
            share = float(np.mean(better(diff, 0)))
            line += [f"{row['mean']:.4f} / {row['model']:.4f} / {row['trimmed_1sd']:.4f}",
                     f"{diff.mean():+.4f} [{low:+.4f}, {high:+.4f}]", f"{share:.0%}"]
        curve_rho = means[("spearman", "mean")].to_numpy()
        curve_mae = -means[("mae", "mean")].to_numpy()
        line.append(equivalent(k_values, curve_rho, means.loc[k, ("spearman", "model")])
                    + " / " + equivalent(k_values, curve_mae, -means.loc[k, ("mae", "model")]))
        print(" | ".join(line))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--splits", type=int, default=300)
    parser.add_argument("--reference", type=int, default=5,
                        help="held-out raters whose pair means are the reference (default 5)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--design", choices=["complete", "incomplete"], default="complete",
                        help="complete: the same k raters on every pair; incomplete: each "
                             "pair's k raters drawn apart (raters rate different pairs)")
    args = parser.parse_args()
    table = load()
    print(f"WordSim-353 set 1: {table['rater_id'].nunique()} raters, "
          f"{len(table[['word1', 'word2']].drop_duplicates())} pairs, {len(table)} answers; "
          f"{args.splits} splits, reference {args.reference} raters, seed {args.seed}, "
          f"{args.design} design")
    start = time.perf_counter()
    results = run(table, args.reference, args.splits, args.seed, args.design)
    report(results)
    print(f"({time.perf_counter() - start:.1f} s)")


if __name__ == "__main__":
    main()
