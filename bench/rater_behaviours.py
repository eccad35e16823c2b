"""Who the exclusion rules catch, over simulated rater behaviours they were not designed around.

For each protocol (SimLex, HyperLex) and each behaviour of the honest raters (noise, bias, the
chance of repeating an earlier answer to a pair shown again, quitting early), a study of 300
USF pairs is simulated (15 % spammers: random, one value, two values) and the protocol's rules
are applied. Printed: the share of honest raters who finished and were excluded, of spammers
excluded, and of quitters excluded (all by min_answers), and the share of honest finishers the
HyperLex duplicate rule alone excludes under the protocol's criterion and under the strict
reading (any difference on any duplicate: duplicate_max_ratio = 0).

Usage: python bench/rater_behaviours.py [--seed N]
"""

from __future__ import annotations

import os

for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import argparse  # noqa: E402
import copy  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402

from lexgold.process.exclusions import exclusion_table, excluded_raters  # noqa: E402
from lexgold.process.simulate import design_for, simulate_ratings, usf_pairs  # noqa: E402
from lexgold.protocols import load_protocol  # noqa: E402

BEHAVIOURS = [  # noise_sd, bias_sd, recall, quitters
    (0.5, 0.7, 0.995, 0.0), (1.0, 0.7, 0.995, 0.0), (1.0, 0.7, 0.0, 0.0),
    (1.0, 0.7, 0.5, 0.0), (1.2, 0.7, 0.0, 0.0), (1.5, 0.7, 0.0, 0.0), (1.0, 1.5, 0.5, 0.0),
    (1.0, 0.7, 0.5, 0.1),
]


def rates(protocol, pairs, behaviour, seed, rules=None, **keys):
    noise, bias, recall, quitters = behaviour
    ratings, raters = simulate_ratings(pairs, design_for(protocol), rng=np.random.default_rng(seed),
                                       noise_sd=noise, bias_sd=bias, recall=recall,
                                       quitters=quitters, spammers=0.15)
    loaded = copy.deepcopy(load_protocol(protocol))
    if rules is not None:
        loaded["process"]["exclusions"].update(rules=rules, **keys)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = set(excluded_raters(exclusion_table(ratings, loaded)))
    spam = set(raters.loc[raters["spammer"], "rater_id"])
    quit = set(raters.loc[raters["quit"], "rater_id"])
    honest = set(raters["rater_id"]) - spam - quit
    share = lambda group: len(out & group) / len(group) if group else float("nan")  # noqa: E731
    return share(honest), share(spam), share(quit)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    seed = parser.parse_args().seed
    pairs = usf_pairs(300, rng=np.random.default_rng(0))
    print("protocol  noise bias recall quit | honest spammers quitters | dup rule: "
          "protocol strict")
    for protocol in ("simlex", "hyperlex"):
        for behaviour in BEHAVIOURS:
            honest, spam, quit = rates(protocol, pairs, behaviour, seed)
            line = (f"{protocol:9} {behaviour[0]:5.1f} {behaviour[1]:4.1f} {behaviour[2]:6.3f} "
                    f"{behaviour[3]:4.1f} | {honest:6.0%} {spam:8.0%} {quit:8.0%}")
            if protocol == "hyperlex":
                dup = rates(protocol, pairs, behaviour, seed, rules=["duplicate_inconsistency"])
                strict = rates(protocol, pairs, behaviour, seed,
                               rules=["duplicate_inconsistency"], duplicate_max_ratio=0.0)
                line += f" | {dup[0]:8.0%} {strict[0]:6.0%}"
            print(line, flush=True)


if __name__ == "__main__":
    main()
