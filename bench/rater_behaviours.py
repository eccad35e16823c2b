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

import numpy as np  # noqa: E402

from lexgold.crowd.simulate import exclusion_outcome, usf_pairs  # noqa: E402

BEHAVIOURS = [  # noise_sd, bias_sd, recall, quitters
    (0.5, 0.7, 0.995, 0.0), (1.0, 0.7, 0.995, 0.0), (1.0, 0.7, 0.0, 0.0),
    (1.0, 0.7, 0.5, 0.0), (1.2, 0.7, 0.0, 0.0), (1.5, 0.7, 0.0, 0.0), (1.0, 1.5, 0.5, 0.0),
    (1.0, 0.7, 0.5, 0.1),
]


def rates(protocol, pairs, behaviour, seed, rules=None, **keys):
    noise, bias, recall, quitters = behaviour
    if rules is not None:
        keys["rules"] = rules
    found = exclusion_outcome(pairs, protocol, noise_sd=noise, bias_sd=bias, recall=recall,
                              quitters=quitters, seed=seed, **keys)
    out = found["excluded"]
    share = lambda group: len(out & group) / len(group) if group else float("nan")  # noqa: E731
    return share(found["honest"]), share(found["spammers"]), share(found["quitters"])


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
