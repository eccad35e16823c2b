"""Pairs kept by the lexical split (HyperLex section 5) on a builder's pairs, over 10 seeds.

Runs :func:`lexgold.process.splits.lexical_split` (the vocabulary partition that keeps the most
pairs with test at 25 % of the kept pairs) on the ``word1, word2, pos`` of a ``pairs.csv``
and prints, per seed, the pairs kept, the parts' sizes, test's share of the kept pairs and
each part's share of verbs, then the mean retention. It checks that no test word is in train
or dev. The split reads only the words, so the figures are those of ``lexgold process``'s
``splits.csv`` for the same pairs.

Usage::

    lexgold build hyperlex --seed 1 --no-check --out hl
    python bench/bench_lexical_split.py hl/pairs.csv [--mode strict]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from lexgold.process.splits import PARTS, lexical_split


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pairs")
    parser.add_argument("--mode", default="two-way", choices=["two-way", "strict"])
    parser.add_argument("--seeds", type=int, default=10)
    args = parser.parse_args()
    pairs = pd.read_csv(args.pairs, keep_default_na=False, dtype=str)
    kept_shares = []
    for seed in range(1, args.seeds + 1):
        start = time.process_time()
        labels = lexical_split(pairs, rng=np.random.default_rng(seed), mode=args.mode)
        seconds = time.process_time() - start
        words = {part: set(pairs["word1"][labels == part]) | set(pairs["word2"][labels == part])
                 for part in PARTS}
        assert not words["test"] & (words["train"] | words["dev"]), "a test word elsewhere"
        kept = labels != ""
        kept_shares.append(kept.mean())
        sizes = " / ".join(str(int((labels == part).sum())) for part in PARTS)
        verbs = " / ".join(f"{(pairs['pos'][labels == part] == 'V').mean():.1%}"
                           for part in PARTS)
        print(f"seed {seed:2d}: kept {kept.sum()} of {len(pairs)} ({kept.mean():.1%}), "
              f"train / dev / test {sizes}, test {(labels == 'test').sum() / kept.sum():.1%} "
              f"of kept, verbs {verbs}, {seconds:.1f} s CPU")
    print(f"mean over {args.seeds} seeds: {np.mean(kept_shares):.1%} kept "
          f"(min {min(kept_shares):.1%}); verbs overall {(pairs['pos'] == 'V').mean():.1%}")


if __name__ == "__main__":
    main()
