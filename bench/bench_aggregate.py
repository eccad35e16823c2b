"""Does ``[process] aggregate = "model"`` reach the mean's accuracy with fewer raters? Measured on
every real log with rater identity given with ``--log`` (repeatable; default the three shipped:
WordSim-353 set 1, 13 raters on 0-10; the Danish similarity set, 38 judges on 0-6; Card-660,
8 annotators on 0-4; sources in lexgold/resources/data/SOURCES.toml), or a long-format CSV.

Each split draws ``--reference`` raters (5; 4 for Card-660) as a held-out reference (their pair
means) and ``k`` other raters, for ``k`` from 2 to the pool's size (at most ``--k-max``, 8); the
pairs' scores from the ``k`` raters by each rule (``mean``; ``model``,
:func:`lexgold.process.aggregate.fit_rater_model`; ``trimmed_1sd``) are compared with the
reference: Spearman's rho and the mean absolute error (MAE, rating scale). The reference has the
same size at every ``k``, so the curves over ``k`` can be compared: "equivalent raters" is the
``k`` at which the mean's curve (interpolated) reaches the model's figure. ``--design
incomplete`` draws each pair's ``k`` raters apart, so that raters rate different pairs (as in
tranches), the case where a rater's bias moves pairs against each other.

Printed per log and ``k``: each rule's mean over ``--splits`` splits, and the model's difference
from the mean rule with the middle 95 % of its per-split values (splits share raters, so this is
the spread over splits, not a standard error of the mean difference); with several logs, per k
the range across logs with each log's figure and saving (``1 - k / equivalent raters``).
Figures are from real raters; nothing is simulated.

    PYTHONPATH=. python bench/bench_aggregate.py --splits 100 --seed 0
    PYTHONPATH=. python bench/bench_aggregate.py --splits 100 --seed 0 --design incomplete
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd
from scipy import stats

from lexgold.process.aggregate import fit_rater_model, trimmed_1sd_scores
from lexgold.ratings.long import answers

RULES = ("mean", "model", "trimmed_1sd")
#: per shipped log with rater identity: raters held out as the reference; Card-660's 8
#: annotators leave a pool of 4 beside a reference of 4
REFERENCE = {"wordsim353": 5, "danish": 5, "card660": 4}


def load(name: str = "wordsim353") -> pd.DataFrame:
    """A log's answers (one per rater and pair; a pair a rater rated twice averaged): a shipped
    log (``lexgold.crowd.logs.SHIPPED``) or a long-format ratings CSV."""
    from lexgold.crowd.logs import SHIPPED, shipped_log

    if name in SHIPPED:
        frame = shipped_log(name)[0]
    else:
        from lexgold.ratings.long import read_ratings

        frame = read_ratings(name)
    return answers(frame)


def scores(part: pd.DataFrame, rule: str, scale: tuple[float, float] = (0, 10)) -> pd.Series:
    """Each pair's score from ``part`` (the chosen raters' answers) by ``rule``."""
    if rule == "mean":
        return part.groupby(["word1", "word2"])["rating"].mean()
    if rule == "trimmed_1sd":
        return trimmed_1sd_scores(part).set_index(["word1", "word2"])["estimate"]
    fit = fit_rater_model(part).pairs.set_index(["word1", "word2"])["psi"]
    return fit.clip(*scale)


def run(table: pd.DataFrame, reference: int, splits: int, seed: int,
        design: str = "complete", k_max: int | None = None) -> pd.DataFrame:
    """Per split, k and rule: Spearman and MAE against the held-out raters' pair means.
    ``design``: "complete" (the same k raters rate every pair) or "incomplete" (each pair's
    k raters drawn apart from the other raters, so raters rate different pairs)."""
    rng = np.random.default_rng(seed)
    draws = np.random.default_rng([seed, 1])    # the design's own stream: same splits either way
    raters = np.array(sorted(table["rater_id"].astype(str).unique()))
    table = table.assign(rater_id=table["rater_id"].astype(str))
    scale = (float(table["rating"].min()), float(table["rating"].max()))
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
        for k in range(2, min(len(pool), k_max or len(pool)) + 1):
            part = rated[(place < k).to_numpy()]
            for rule in RULES:
                got = scores(part, rule, scale).reindex(truth.index)
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


def savings(results: pd.DataFrame) -> pd.DataFrame:
    """Per k: the model's Spearman and MAE minus the mean rule's, the mean-rule raters matching
    the model's Spearman (interpolated; beyond the curve: NaN) and the saving ``1 - k / that``."""
    means = results.groupby(["k", "rule"])[["spearman", "mae"]].mean().unstack("rule")
    k_values = means.index.to_numpy()
    curve = means[("spearman", "mean")].to_numpy()
    rows = []
    for k in k_values:
        rho = means.loc[k, ("spearman", "model")]
        inside = curve[0] <= rho <= curve[-1]
        matching = float(np.interp(rho, np.maximum.accumulate(curve), k_values)) \
            if inside else np.nan
        rows.append({"k": k, "spearman": rho - means.loc[k, ("spearman", "mean")],
                     "mae": means.loc[k, ("mae", "model")] - means.loc[k, ("mae", "mean")],
                     "matching": matching, "saving": 1 - k / matching if inside else np.nan})
    return pd.DataFrame(rows)


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
    parser.add_argument("--log", action="append", default=None,
                        help="a shipped log with rater identity (wordsim353, danish, card660) "
                             "or a long-format ratings CSV; repeatable (default: the three)")
    parser.add_argument("--splits", type=int, default=300)
    parser.add_argument("--reference", type=int, default=None,
                        help="held-out raters whose pair means are the reference (default per "
                             "log: 5; 4 for Card-660's 8)")
    parser.add_argument("--k-max", type=int, default=8,
                        help="largest k scored (default 8)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--design", choices=["complete", "incomplete"], default="complete",
                        help="complete: the same k raters on every pair; incomplete: each "
                             "pair's k raters drawn apart (raters rate different pairs)")
    args = parser.parse_args()
    found = []
    for name in args.log or list(REFERENCE):
        table = load(name)
        if table["rater_id"].astype(str).str.startswith("?").any():
            print(f"{name}: no rater identity; aggregate = \"model\" falls back to the mean")
            continue
        reference = args.reference or REFERENCE.get(name, 5)
        print(f"{name}: {table['rater_id'].nunique()} raters, "
              f"{len(table[['word1', 'word2']].drop_duplicates())} pairs, {len(table)} answers; "
              f"{args.splits} splits, reference {reference} raters, seed {args.seed}, "
              f"{args.design} design")
        start = time.perf_counter()
        results = run(table, reference, args.splits, args.seed, args.design, args.k_max)
        report(results)
        print(f"({time.perf_counter() - start:.1f} s)")
        found.append(savings(results).assign(log=name))
    if len(found) > 1:
        every = pd.concat(found)
        print("across logs, model - mean (per log):")
        for k, part in every.groupby("k"):
            each = "; ".join(f"{r.log} {r.spearman:+.4f} / {r.mae:+.4f} / "
                             + ("n/a" if np.isnan(r.saving) else f"{r.saving:+.1%}")
                             for r in part.itertuples())
            print(f"k = {k}: Spearman {part['spearman'].min():+.4f} to "
                  f"{part['spearman'].max():+.4f}, MAE {part['mae'].min():+.4f} to "
                  f"{part['mae'].max():+.4f}, saving (mean-rule raters) "
                  + ("n/a " if part["saving"].isna().all() else
                     f"{part['saving'].min():+.1%} to {part['saving'].max():+.1%} ")
                  + f"(Spearman / MAE / saving: {each})")


if __name__ == "__main__":
    main()
