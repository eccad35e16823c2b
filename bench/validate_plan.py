"""Validate ``lexgold plan`` on real rating logs: predictions from small pilots against the
reliability the full log shows, per log and across logs.

Data: any log given with ``--log`` (repeatable): a shipped one (``lexgold.crowd.logs.SHIPPED``:
simverb, wordsim353, danish, card660; sources in ``lexgold/resources/data/SOURCES.toml``) or a
long-format ratings CSV; default all four shipped. Per log (``POOLS``): pilots of 4 raters (of
4 ratings per pair without rater identity) and the k it predicts (Card-660's 8 annotators allow
k = 4 at most).

- **Pilot.** ``--pilot`` raters drawn without replacement, all their ratings; without rater
  identity (SimVerb), per pair ``--pilot`` of its ratings drawn at random.
- **Observed.** The reliability at ``k``: the expected Spearman between the pair means of two
  disjoint groups of ``k`` raters (``k`` ratings per pair without identity) drawn from the whole
  log, averaged over ``--splits`` random draws. A **held-out** check is printed beside it: the
  same figure from only the raters not in the pilot, at the largest k they allow.
- **Methods.** ``plan``: what ``lexgold plan`` prints (``lexgold.process.plan.choose_method``:
  the model or Spearman-Brown, chosen by cross-validation inside the pilot, with its jackknife
  interval). ``model``: ``reliability_curve`` alone with its bootstrap interval
  (``--replicates``). ``spearman-brown``: the pilot's mean Pearson between raters stepped up to
  k. ``split-half``: the pilot's split-half Spearman stepped up from half the pilot to k. The
  two baselines' intervals are percentile bootstraps over pairs.

Printed per log: per pilot and method the prediction and interval; the whole log's Spearman
and Pearson reliability at the largest k and its median pair mean; per method and k the mean
absolute error, the bias, the intervals covering the observed value, the mean width, the MAE
against the held-out raters and the pilots where the model was chosen. With several logs, each
claim at each log's largest k as a range across the logs with every log's figure.

    PYTHONPATH=. python bench/validate_plan.py --log wordsim353 --pilots 10 --replicates 100 \
        --splits 300 --seed 0
    PYTHONPATH=. python bench/validate_plan.py --pilots 10 --seed 0     # all four shipped logs
"""

from __future__ import annotations

import argparse
import itertools
import time

import numpy as np
import pandas as pd

from lexgold.process.plan import choose_method, reliability_curve

def load_log(name: str) -> pd.DataFrame:
    """A shipped log (``lexgold.crowd.logs.SHIPPED``: simverb, wordsim353, danish, card660) or
    a long-format ratings CSV, as ``rater_id, tranche, word1, word2, rating``."""
    from lexgold.crowd.logs import SHIPPED, shipped_log

    if name in SHIPPED:
        frame = shipped_log(name)[0]
    else:
        from lexgold.ratings.long import read_ratings

        frame = read_ratings(name)
    frame = frame[frame["kind"] != "checkpoint"] if "kind" in frame else frame
    return frame[["rater_id", "tranche", "word1", "word2", "rating"]]


def matrix(ratings: pd.DataFrame, anonymous: bool) -> np.ndarray:
    """Pairs x raters (identified) or pairs x slots (anonymous, in file order); NaN: missing."""
    if anonymous:
        slot = ratings.groupby(["word1", "word2"], sort=False).cumcount()
        wide = ratings.assign(slot=slot).pivot_table(index=["word1", "word2"], columns="slot",
                                                     values="rating", sort=False)
    else:
        wide = ratings.pivot_table(index=["word1", "word2"], columns="rater_id",
                                   values="rating", sort=False)
    return wide.to_numpy(dtype=float)


def _shuffled(values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Each row's ratings in random order, missing ones last."""
    key = rng.random(values.shape)
    key[np.isnan(values)] = 2.0
    return np.take_along_axis(values, np.argsort(key, axis=1), axis=1)


def _spearman(a: np.ndarray, b: np.ndarray) -> float:
    from scipy import stats

    return float(stats.spearmanr(a, b)[0])


def observed(values: np.ndarray, k: int, anonymous: bool, rng: np.random.Generator,
             splits: int, *, pearson: bool = False) -> float:
    """Expected Spearman (``pearson``: Pearson) between the pair means of two disjoint groups
    of k raters (k ratings of each pair without rater identity), over ``splits`` draws."""
    found = []
    for _ in range(splits):
        if anonymous:
            rows = _shuffled(values, rng)
            a, b = rows[:, :k], rows[:, k:2 * k]
        else:
            order = rng.permutation(values.shape[1])
            a, b = values[:, order[:k]], values[:, order[k:2 * k]]
        keep = ~np.isnan(a).any(axis=1) & ~np.isnan(b).any(axis=1)
        x, y = a[keep].mean(axis=1), b[keep].mean(axis=1)
        found.append(float(np.corrcoef(x, y)[0, 1]) if pearson else _spearman(x, y))
    return float(np.mean(found))


def spearman_brown(pilot: np.ndarray, k: int) -> float:
    """The pilot's mean Pearson between raters (columns), stepped up to k raters."""
    r = pd.DataFrame(pilot).corr(min_periods=3).to_numpy()
    r1 = float(np.nanmean(r[~np.eye(len(r), dtype=bool)]))
    return k * r1 / (1 + (k - 1) * r1)


def split_half(pilot: np.ndarray, k: int, rng: np.random.Generator | None = None) -> float:
    """The pilot's split-half Spearman (halves of its columns; every split, or 20 random ones
    when ``rng`` is given: rows reshuffled for ratings without identity), stepped up from
    half the pilot to k by Spearman-Brown."""
    m = pilot.shape[1]
    half = m // 2
    found = []
    if rng is None:
        for group in itertools.combinations(range(1, m), half - 1):
            a = [0, *group]
            b = [j for j in range(m) if j not in a][:half]
            found.append(_spearman(pilot[:, a].mean(axis=1), pilot[:, b].mean(axis=1)))
    else:
        for _ in range(20):
            rows = _shuffled(pilot, rng)
            found.append(_spearman(rows[:, :half].mean(axis=1),
                                   rows[:, half:2 * half].mean(axis=1)))
    rho = float(np.mean(found))
    step = k / half
    return step * rho / (1 + (step - 1) * rho)


def _interval(method, pilot: np.ndarray, k: int, rng: np.random.Generator, replicates: int,
              level: float) -> tuple[float, float]:
    boot = [method(pilot[rng.integers(0, len(pilot), len(pilot))], k)
            for _ in range(replicates)]
    alpha = (1 - level) / 2
    return float(np.quantile(boot, alpha)), float(np.quantile(boot, 1 - alpha))


def long_of(values: np.ndarray, anonymous: bool) -> pd.DataFrame:
    """A pilot matrix as long-format ratings (identified raters ``r<j>``; ``?`` ids else)."""
    pair, column = np.nonzero(~np.isnan(values))
    raters = ([f"?{i}" for i in range(len(pair))] if anonymous
              else [f"r{j}" for j in column])
    return pd.DataFrame({"rater_id": raters, "tranche": 1, "word1": [f"w{i}" for i in pair],
                         "word2": "x", "rating": values[pair, column]})


def validate(values: np.ndarray, *, anonymous: bool, pilots: int, pilot_size: int,
             ks: list[int], rng: np.random.Generator, replicates: int, splits: int,
             level: float = 0.9, simulations: int = 20, show=print) -> pd.DataFrame:
    """One row per (pilot, method, k): ``predicted, low, high, observed, held_out`` (NaN
    beyond the held-out raters' reach)."""
    truth = {k: observed(values, k, anonymous, rng, splits) for k in ks}
    rows = []
    for p in range(pilots):
        if anonymous:
            shuffled = _shuffled(values, rng)
            pilot, rest = shuffled[:, :pilot_size], shuffled[:, pilot_size:]
        else:
            chosen = rng.choice(values.shape[1], pilot_size, replace=False)
            pilot = values[:, np.sort(chosen)]
            rest = np.delete(values, chosen, axis=1)
        reach = (np.sum(~np.isnan(rest), axis=1).min() if anonymous else rest.shape[1]) // 2
        held = {k: observed(rest, k, anonymous, rng, splits) for k in ks if k <= reach}
        # a generator of the model's own: the pilots drawn do not depend on the version run
        own = np.random.default_rng(rng.integers(2 ** 32))
        ratings = long_of(pilot, anonymous)
        curve = reliability_curve(ratings, max(ks), rng=own, replicates=replicates,
                                  level=level, simulations=simulations).set_index("raters")
        choice = choose_method(ratings, max(ks), rng=own, level=level,
                               simulations=simulations,
                               model_curve=curve["reliability"].to_numpy())
        chosen = choice["curves"][choice["chosen"]]
        for k in ks:
            found = {"plan": (chosen[k - 1], choice["low"][k - 1], choice["high"][k - 1]),
                     "model": (curve.loc[k, "reliability"], curve.loc[k, "low"],
                               curve.loc[k, "high"])}
            sb = spearman_brown(pilot, k)
            found["spearman-brown"] = (sb, *_interval(spearman_brown, pilot, k, rng,
                                                      replicates, level))
            shr = (lambda m, kk: split_half(m, kk, rng)) if anonymous else split_half
            found["split-half"] = (shr(pilot, k), *_interval(shr, pilot, k, rng,
                                                             min(replicates, 50), level))
            for method, (value, low, high) in found.items():
                rows.append({"pilot": p, "method": method, "k": k, "predicted": value,
                             "chosen": choice["chosen"],
                             "low": low, "high": high, "observed": truth[k],
                             "held_out": held.get(k, np.nan)})
        six = [r for r in rows if r["pilot"] == p and r["k"] == max(ks)]
        show(f"pilot {p}: observed k={max(ks)} {truth[max(ks)]:.3f}; " + "; ".join(
            f"{r['method']} {r['predicted']:.3f} [{r['low']:.3f}, {r['high']:.3f}]"
            for r in six))
    return pd.DataFrame(rows)


def summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per method and k: MAE and bias against the observed value, intervals covering it, mean
    width, and the MAE against the held-out value where there is one."""
    table = table.assign(error=table["predicted"] - table["observed"],
                         covers=(table["low"] <= table["observed"])
                         & (table["observed"] <= table["high"]),
                         width=table["high"] - table["low"],
                         held_error=(table["predicted"] - table["held_out"]).abs())
    return table.groupby(["method", "k"]).agg(
        pilots=("error", "size"), mae=("error", lambda e: e.abs().mean()),
        bias=("error", "mean"), covered=("covers", "sum"), width=("width", "mean"),
        held_out_mae=("held_error", "mean"),
        model_chosen=("chosen", lambda c: int((c == "model").sum()))).reset_index()


#: per shipped log: pilot size (raters, or ratings per pair) and the k predicted; Card-660's
#: 8 annotators leave k = 4 at most for two disjoint groups of the whole log
POOLS = {"wordsim353": (4, [2, 4, 6]), "simverb": (4, [2, 3, 5]),
         "danish": (4, [2, 5, 8]), "card660": (4, [2, 3, 4])}


def run_log(name: str, args) -> pd.DataFrame:
    """Validate on one log and print its table; returns the summary with the log's name."""
    started = time.perf_counter()
    frame = load_log(name)
    anonymous = frame["rater_id"].astype(str).str.startswith("?").any()
    values = matrix(frame, anonymous)
    pilot_size, ks = POOLS.get(name, (args.pilot, None))
    pilot_size = args.pilot or pilot_size
    reach = (np.sum(~np.isnan(values), axis=1).min() if anonymous else values.shape[1]) // 2
    ks = args.k or ks or sorted({2, (2 + min(reach, 8)) // 2, min(reach, 8)})
    table = validate(values, anonymous=anonymous, pilots=args.pilots, pilot_size=pilot_size,
                     ks=ks, rng=np.random.default_rng(args.seed), replicates=args.replicates,
                     splits=args.splits, level=args.level)
    print(f"{name}: {values.shape[0]} pairs, pilots of {pilot_size}, "
          f"{args.level:.0%} intervals, seed {args.seed}")
    k, check = max(ks), np.random.default_rng(args.seed + 1)
    print(f"whole log, k = {k}: Spearman {observed(values, k, anonymous, check, args.splits):.3f},"
          f" Pearson {observed(values, k, anonymous, check, args.splits, pearson=True):.3f}; "
          f"pair means: median {np.nanmedian(np.nanmean(values, axis=1)):.2f}")
    found = summary(table)
    print(found.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    print(f"{time.perf_counter() - started:.0f} s")
    return found.assign(log=name, largest=found["k"] == max(ks))


def across(found: pd.DataFrame) -> list[str]:
    """The claims at each log's largest k as ranges across the logs, every log's figure."""
    top = found[found["largest"]]
    lines = ["across logs, at each log's largest k (per log):"]
    for method, part in top.groupby("method", sort=False):
        each = "; ".join(f"{r.log} k={r.k}: MAE {r.mae:.4f}, covered {r.covered}/{r.pilots}, "
                         f"width {r.width:.4f}" for r in part.itertuples())
        lines.append(f"{method}: MAE {part['mae'].min():.4f}-{part['mae'].max():.4f}, covered "
                     f"{part['covered'].sum()}/{part['pilots'].sum()}, width "
                     f"{part['width'].min():.4f}-{part['width'].max():.4f} ({each})")
    every = found[found["method"] == "plan"]
    lines.append(f"plan, every k: covered {every['covered'].sum()}/{every['pilots'].sum()}; "
                 "model chosen in " + ", ".join(
                     f"{r.log} {r.model_chosen}/{r.pilots}"
                     for r in every[every["largest"]].itertuples()))
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log", action="append", default=None,
                        help="a shipped log (simverb, wordsim353, danish, card660) or a "
                             "long-format ratings CSV; repeatable (default: all four shipped)")
    parser.add_argument("--pilots", type=int, default=10)
    parser.add_argument("--pilot", type=int, default=None,
                        help="raters (ratings per pair) of a pilot (default 4)")
    parser.add_argument("--k", type=int, nargs="+", default=None,
                        help="group sizes (default per log: POOLS; else 2, the middle and "
                             "the largest the log allows, at most 8)")
    parser.add_argument("--replicates", type=int, default=200)
    parser.add_argument("--splits", type=int, default=1000)
    parser.add_argument("--level", type=float, default=0.9)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    logs = args.log or ["wordsim353", "simverb", "danish", "card660"]
    found = pd.concat([run_log(name, args) for name in logs], ignore_index=True)
    if len(logs) > 1:
        print("\n".join(across(found)))


if __name__ == "__main__":
    main()
