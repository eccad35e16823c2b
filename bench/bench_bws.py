"""Sliders vs Best-Worst Scaling at equal rater-seconds (issue 27, item 6).

The same pairs (``--pairs`` same-POS USF pairs) with the same latent scores (drawn from the
crowd's rater model) are rated by the same simulated crowd (``--crowd``: default, the rater
model fitted to SimVerb-3500's and WordSim-353's raw ratings, :mod:`lexgold.crowd.model`;
``invented``, lexgold's earlier crowd with uniform true scores; or a crowd JSON of ``lexgold
crowd fit``; 10 % spammers) twice. Every figure it prints is simulated:

- sliders: the SimLex-999 protocol (``simlex``: groups of 7, calibration repeats, consistency
  set, checkpoints), ``--slider-raters`` raters per tranche, processed by ``lexgold process``'s
  steps (calibration, exclusions, mean per pair);
- BWS: the ``simlex_bws`` protocol (2N 4-tuples, 8 per pair, check tuples), processed by
  :func:`lexgold.process.bws_release.process_bws` (exclusions, counting scores), with as many
  raters per tranche as give the sliders' rater-seconds.

Rater-seconds: every shown item (slider pair or checkpoint) costs ``--slider-s`` seconds, every
tuple (or check tuple) ``--bws-s``. Defaults: 7.05 s a slider pair (SimLex-999 section 3.5:
8-21 minutes for 124 items, the midpoint) and 11.5 s a tuple (the midpoint of simlex999_bws's
``seconds_per_item``, a Decision: a person's times, which a scripted browser does not measure;
``python tests/test_annotate_bws_browser.py`` prints the site's and browser's seconds per BWS
page and slider group in Chromium; pass measured times when there are some).

Printed per method: rater-seconds, answers, split-half reliability (random halves, Spearman,
mean of 100 splits, no Spearman-Brown; sliders: halves of each pair's ratings, BWS: halves of
each tuple's annotations, Kiritchenko & Mohammad 2017) and Spearman with the true scores of
the released scores (BWS: counting; Bradley-Terry on the same answers printed below). The two
split-halves differ in kind: BWS halves share their tuples (a pair's neighbours are in both),
slider halves share nothing but the pair.

Usage: python bench/bench_bws.py [--pairs 300] [--slider-raters 20] [--seeds 1 2 3]
       [--slider-s 7.05] [--bws-s 11.5] [--crowd default]
"""

from __future__ import annotations

import argparse
import copy
import warnings

import numpy as np
from scipy import stats

from lexgold.process.bws import check_bws
from lexgold.process.bws import bws_split_half
from lexgold.process.bws_release import process_bws
from lexgold.crowd.bws_simulate import bws_layout, simulate_bws
from lexgold.process.pipeline import process_ratings
from lexgold.crowd.simulate import Crowd, pair_truths, simulate_ratings, usf_pairs
from lexgold.process.splithalf import split_half_random
from lexgold.protocols import load_protocol


def one_seed(seed: int, args) -> dict:
    rng = np.random.default_rng(seed)
    pairs = usf_pairs(args.pairs, rng=rng)
    crowd = Crowd(model=args.crowd)
    truth, _ = pair_truths(crowd, len(pairs), rng, low=0, high=6)
    ratings, _ = simulate_ratings(pairs, "simlex", rng=np.random.default_rng(seed + 100),
                                  truth=truth, crowd=crowd, tranches=0,
                                  raters_per_tranche=args.slider_raters)
    budget = len(ratings) * args.slider_s
    slider = copy.deepcopy(load_protocol("simlex"))
    slider["process"]["release"].update(format="plain", min_raters_per_pair=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = process_ratings(ratings, slider, rng=np.random.default_rng(seed))
    final = ratings[~ratings["rater_id"].isin(
        result.exclusions.loc[result.exclusions["excluded"], "rater_id"])]
    sliders = {"rater_seconds": budget, "answers": len(ratings),
               "split_half": split_half_random(final[final["kind"] != "checkpoint"],
                                               rng=np.random.default_rng(seed))["rho"],
               "truth": _truth(result.scores, pairs, truth)}
    # BWS raters per tranche for the same rater-seconds
    _, _, design = bws_layout(pairs, "simlex_bws", np.random.default_rng(seed + 200))
    per_rater = sum(len(page.tuples) or 1 for pages in design.tranches for page in pages)
    per_rater /= len(design.tranches)
    raters = max(2, round(budget / args.bws_s / per_rater / len(design.tranches)))
    answers, _ = simulate_bws(pairs, "simlex_bws", rng=np.random.default_rng(seed + 200),
                              truth=truth, crowd=crowd, raters_per_tranche=raters)
    protocol = copy.deepcopy(load_protocol("simlex_bws"))
    protocol["process"]["bws"]["bootstrap"] = 0
    out = process_bws(answers, protocol, rng=np.random.default_rng(seed))
    shown = answers.groupby(["rater_id", "tuple_id"]).ngroups
    final = answers[~answers["rater_id"].isin(
        out["exclusions"].loc[out["exclusions"]["excluded"], "rater_id"])]
    best_worst = {"rater_seconds": shown * args.bws_s, "answers": shown,
                  "raters_per_tranche": raters,
                  "split_half": bws_split_half(check_bws(final),
                                               rng=np.random.default_rng(seed))["r"],
                  "truth": _truth(out["scores"], pairs, truth),
                  "truth_bt": _truth(out["scores"].drop(columns="score").rename(
                      columns={"bradley_terry": "score"}), pairs, truth)}
    return {"sliders": sliders, "bws": best_worst}


def _truth(scores, pairs, truth) -> float:
    merged = scores.merge(pairs.assign(truth=truth), on=["word1", "word2"])
    return float(stats.spearmanr(merged["score"], merged["truth"]).statistic)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=300)
    parser.add_argument("--slider-raters", type=int, default=20)
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--slider-s", type=float, default=7.05)
    parser.add_argument("--bws-s", type=float, default=11.5)
    parser.add_argument("--crowd", default="default",
                        help="default, invented or a crowd JSON (lexgold crowd fit)")
    args = parser.parse_args()
    rows = [one_seed(seed, args) for seed in args.seeds]
    print(f"simulated: {args.pairs} USF pairs, crowd {args.crowd}, seeds "
          f"{args.seeds}; {args.slider_s:g} s a slider item, {args.bws_s:g} s a tuple")
    for method in ("sliders", "bws"):
        r = [row[method] for row in rows]
        extra = (f", {r[0]['raters_per_tranche']} raters per tranche" if method == "bws"
                 else f", {args.slider_raters} raters per tranche")
        print(f"{method:8s} rater-hours {np.mean([x['rater_seconds'] for x in r]) / 3600:6.1f}"
              f"  answers {np.mean([x['answers'] for x in r]):8.0f}"
              f"  split-half {np.mean([x['split_half'] for x in r]):.3f}"
              f" (sd {np.std([x['split_half'] for x in r]):.3f})"
              f"  Spearman with truth {np.mean([x['truth'] for x in r]):.3f}"
              f" (sd {np.std([x['truth'] for x in r]):.3f}){extra}")
        if method == "bws":
            print(f"{'':8s} Bradley-Terry scores: Spearman with truth "
                  f"{np.mean([x['truth_bt'] for x in r]):.3f}")


if __name__ == "__main__":
    main()
