"""The anchor of ``lexgold agree``: IAA-1 and IAA-2 of a long ratings file in plain pandas/numpy.

What a researcher would write without lexgold (SimLex-999 section 4.1, HyperLex section 5):
``pandas.read_csv``, checkpoint rows dropped, a rater's repeated answers to a pair averaged,
one pairs x raters table per tranche, ranks per rater, ``numpy.corrcoef`` of the ranks
(IAA-1: mean over every within-tranche rater pair) and each rater against the mean of the
others (IAA-2). Complete tranches only (every rater rated every pair, as in a SimLex
study); prints ``iaa1 iaa2`` so that a bench can check it against ``lexgold agree``.

Usage: python bench/plain_iaa.py RATINGS.csv
"""

import sys
import warnings

import numpy as np
import pandas as pd


def ranks(table: np.ndarray) -> np.ndarray:
    """Average ranks of each column (ties share the mean rank), as pandas ranks them."""
    return pd.DataFrame(table).rank(method="average").to_numpy()


def main(path: str) -> None:
    warnings.simplefilter("ignore", RuntimeWarning)       # constant raters: NaN, left out
    frame = pd.read_csv(path)
    frame = frame[frame["kind"] != "checkpoint"]
    means = frame.groupby(["tranche", "rater_id", "word1", "word2"])["rating"].mean()
    pairwise, against = [], []
    for _, part in means.groupby(level="tranche"):
        table = part.unstack("rater_id").to_numpy()             # pairs x raters
        x = ranks(table)
        rho = np.corrcoef(x, rowvar=False)
        upper = rho[np.triu_indices(len(rho), k=1)]
        pairwise.append(upper[~np.isnan(upper)])
        others = (table.sum(axis=1, keepdims=True) - table) / (table.shape[1] - 1)
        y = ranks(others)
        xc, yc = x - x.mean(axis=0), y - y.mean(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            r = (xc * yc).sum(axis=0) / np.sqrt((xc * xc).sum(axis=0) * (yc * yc).sum(axis=0))
        against.append(r[~np.isnan(r)])
    print(f"{np.concatenate(pairwise).mean()} {np.concatenate(against).mean()}")


if __name__ == "__main__":
    main(sys.argv[1])
