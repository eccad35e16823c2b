"""Adaptive allocation against the uniform design: ratings needed for the same gold standard.

Issue 26 ("Adaptive allocation in the real site"). For each protocol (default simlex and
hyperlex) the builder's pair set is built (`lexgold build ... --seed 1`, HyperLex as a draft
with `--no-check`); per seed, the pairs get latent scores drawn from the crowd's rater model
(``--crowd``: default, fitted to SimVerb-3500's and WordSim-353's raw ratings; ``invented``,
lexgold's earlier crowd with uniform true scores; or a crowd JSON of ``lexgold crowd fit``),
and two studies of the same pairs are rehearsed through their own site
(`lexgold.annotate.rehearse`, that crowd with 10 % spammers; the same crowd seed for both).
Every figure it prints is simulated:

- *uniform*: the packaged protocol (``raters_per_tranche`` slots per tranche, HyperLex topped
  up to 10 accepted raters), ``--raters-per-tranche`` overriding the slots to keep the run
  short;
- *adaptive*: the same with ``allocation = "adaptive"``, ``first_round_raters``,
  ``topup_raters``, ``budget_ratings`` = what the uniform study spent, ``target_reliability =
  1`` (spend it all) and ``min_accepted_raters = 0`` (the budget replaces the minimum).

The gold score of a pair is the mean of the raters the protocol's exclusion rules keep
(``[process.exclusions]`` over the study's final ratings). The uniform study's Spearman with the
true scores at its full budget is the bar; for the adaptive study, raters are taken in the order
they completed and the ratings (pair showings of completed raters) at which its Spearman first
reaches the bar are "ratings needed". Printed per protocol and seed, then the mean and spread
(standard deviation, min-max) of the saving ``1 - needed / uniform budget``. Goal: >= 25 %.

Usage: python bench/bench_adaptive.py [--protocol simlex] [--seeds 3] [--pairs N]
[--raters-per-tranche N] [--first-round-raters 4] [--topup-raters 2] [--out DIR]
[--crowd default]
"""

from __future__ import annotations

import os

for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from lexgold.study.db import database_url, make_engine, session_factory
from lexgold.annotate.rehearse import rehearse
from lexgold.study.store import create_study
from lexgold.study.export import export_ratings
from lexgold.process.exclusions import excluded_raters, exclusion_table
from lexgold.crowd.simulate import Crowd, pair_truths
from lexgold.protocols import load_protocol, protocol_path

BUILD = {"simlex": ["build", "simlex", "--seed", "1"],
         "hyperlex": ["build", "hyperlex", "--seed", "1", "--no-check"]}
#: the adaptive settings measured (not tuned to the simulator: the first round and top-ups of
#: two raters are the smallest that give every pair a variance and a split half)
ADAPTIVE = {"first_round_raters": 4, "topup_raters": 2}


def lexgold(*args: str) -> None:
    subprocess.run([sys.executable, "-c", "from lexgold.cli import main; main()", *args],
                   check=True, stdout=subprocess.DEVNULL)


def variant(protocol: str, folder: Path, name: str, replace: dict, add: dict) -> Path:
    """The packaged protocol with ``[study]`` keys replaced (present) or added."""
    text = protocol_path(protocol).read_text(encoding="utf-8")
    head, rest = text.split("[study]\n", 1)
    for key, value in replace.items():
        rest, n = re.subn(rf"^{key} = [^\n#]*", f"{key} = {value}", rest, count=1, flags=re.MULTILINE)
        if not n:
            add = {**add, key: value}
    lines = "".join(f"{k} = {json.dumps(v)}\n" for k, v in add.items())
    path = folder / f"{protocol}-{name}.toml"
    path.write_text(head + "[study]\n" + lines + rest, encoding="utf-8")
    return path


def gold_path(url: str, protocol_file: Path, truth: pd.DataFrame, points: int = 60):
    """Ratings spent and Spearman with the truth, raters in completion order (excluded raters
    left out), at ``points`` prefixes and at the end."""
    engine = make_engine(url)
    with session_factory(engine, write=False)() as session:
        ratings = export_ratings(session, complete_only=True)
    engine.dispose()
    protocol = load_protocol(protocol_file)
    excluded = set(excluded_raters(exclusion_table(ratings, protocol)))
    rated = ratings[ratings["kind"] != "checkpoint"]
    spent = rated.groupby("rater_id").size()
    kept = rated[~rated["rater_id"].isin(excluded)]
    order = rated.groupby("rater_id")["answered_at"].max().sort_values(kind="stable").index
    cumulative = spent.reindex(order).cumsum()
    true = truth.set_index(["word1", "word2"])["truth"]
    rows = []
    for k in sorted({round(x) for x in np.linspace(1, len(order), points)} | {len(order)}):
        part = kept[kept["rater_id"].isin(order[:k])]
        per = part.groupby(["word1", "word2", "rater_id"])["rating"].mean()
        means = per.groupby(level=["word1", "word2"]).mean()
        both = pd.concat([means.rename("mean"), true], axis=1, join="inner")
        rows.append({"ratings": int(cumulative.iloc[k - 1]),
                     "spearman": float(spearmanr(both["mean"], both["truth"]).statistic)
                     if len(both) > 2 else float("nan"),
                     "coverage": len(both) / len(true)})
    return pd.DataFrame(rows)


def one(protocol: str, folder: Path, seed: int, raters: int | None,
        sample: int | None = None, settings: dict | None = None,
        crowd: str = "default") -> dict:
    pairs = folder / protocol / "pairs.csv"
    if sample is not None:           # a random sample of the built pairs (a shorter run)
        built = pd.read_csv(pairs)
        pairs = folder / f"{protocol}-pairs-{sample}.csv"
        built.sample(min(sample, len(built)), random_state=1).to_csv(pairs, index=False)
    replace = {} if raters is None else {"raters_per_tranche": raters}
    if sample is not None:           # tranches of the protocol's size, not its count
        replace["tranches"] = 0
    uniform = variant(protocol, folder, "uniform", replace, {})
    frame = pd.read_csv(pairs)
    config = load_protocol(uniform)["study"]
    low, high = config.get("scale_min", 0), config.get("scale_max", 6)
    people = Crowd(model=crowd)
    truth = frame[["word1", "word2"]].assign(truth=pair_truths(
        people, len(frame), np.random.default_rng(1000 + seed), low=low, high=high)[0])
    results = {}
    for name in ("uniform", "adaptive"):
        if name == "adaptive":
            budget = int(results["uniform"]["path"]["ratings"].iloc[-1])
            spec = variant(protocol, folder, "adaptive", {**replace, "min_accepted_raters": 0},
                           {"allocation": "adaptive", **(settings or ADAPTIVE), "budget_ratings": budget,
                            "target_reliability": 1.0})
        else:
            spec = uniform
        db = folder / f"{protocol}-{name}-{seed}.sqlite"
        for suffix in ("", "-wal", "-shm"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)
        create_study(spec, pairs, database_url(db), seed=seed)
        started = time.perf_counter()
        rehearse(database_url(db), rng=np.random.default_rng(seed), truth=truth, crowd=people)
        results[name] = {"path": gold_path(database_url(db), spec, truth),
                         "seconds": time.perf_counter() - started}
    bar = results["uniform"]["path"].iloc[-1]
    path = results["adaptive"]["path"]
    reached = path[(path["spearman"] >= bar["spearman"]) & (path["coverage"] >= 1)]
    needed = int(reached["ratings"].iloc[0]) if len(reached) else None
    return {"protocol": protocol, "seed": seed, "uniform_ratings": int(bar["ratings"]),
            "uniform_spearman": round(float(bar["spearman"]), 4),
            "adaptive_ratings_spent": int(path["ratings"].iloc[-1]),
            "adaptive_spearman_at_end": round(float(path["spearman"].iloc[-1]), 4),
            "adaptive_ratings_needed": needed,
            "saving": None if needed is None else round(1 - needed / bar["ratings"], 4),
            "seconds": round(sum(r["seconds"] for r in results.values()), 1)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--protocol", action="append", choices=sorted(BUILD))
    parser.add_argument("--seeds", type=int, default=3, help="Seeds per protocol.")
    parser.add_argument("--raters-per-tranche", type=int, default=None,
                        help="Override the protocol's raters_per_tranche (a shorter run).")
    parser.add_argument("--pairs", type=int, default=None,
                        help="Rehearse a random sample of this many of the built pairs.")
    parser.add_argument("--first-round-raters", type=int, default=ADAPTIVE["first_round_raters"])
    parser.add_argument("--topup-raters", type=int, default=ADAPTIVE["topup_raters"])
    parser.add_argument("--out", type=Path, help="Work folder (kept); default: a temporary one.")
    parser.add_argument("--crowd", default="default",
                        help="default, invented or a crowd JSON (lexgold crowd fit)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temporary:
        folder = args.out or Path(temporary)
        folder.mkdir(parents=True, exist_ok=True)
        for protocol in args.protocol or ["simlex", "hyperlex"]:
            if not (folder / protocol / "pairs.csv").is_file():
                lexgold(*BUILD[protocol], "--out", str(folder / protocol))
            rows = []
            for seed in range(1, args.seeds + 1):
                rows.append(one(protocol, folder, seed, args.raters_per_tranche, args.pairs,
                                {"first_round_raters": args.first_round_raters,
                                 "topup_raters": args.topup_raters}, args.crowd))
                print(json.dumps(rows[-1]), flush=True)
            print(summary(protocol, rows), flush=True)


def summary(protocol: str, rows: list[dict]) -> str:
    """Mean and spread of the savings over the seeds, and of the Spearman gap at the end (a
    seed whose adaptive study never reaches the uniform Spearman saves nothing: 0, listed)."""
    savings = np.array([r["saving"] if r["saving"] is not None else 0.0 for r in rows])
    gap = np.array([r["adaptive_spearman_at_end"] - r["uniform_spearman"] for r in rows])
    missed = sum(r["saving"] is None for r in rows)
    return (f"{protocol}: ratings saved for the uniform design's Spearman with the truth: mean "
            f"{savings.mean():.1%}, sd {savings.std():.1%}, min {savings.min():.1%}, max "
            f"{savings.max():.1%} over {len(rows)} seeds ({missed} never reached it: counted "
            f"0); adaptive minus uniform Spearman at the same budget: mean {gap.mean():+.4f}, "
            f"min {gap.min():+.4f}, max {gap.max():+.4f}")


if __name__ == "__main__":
    main()
