"""Measurement: how many of SimLex-999's own associated pairs the SimLex builder keeps eligible.

    .venv/bin/python bench/bench_simlex_coverage.py [--simlex FILE]

The published pairs come from gensim's test data (``simlex999.txt``: word1, word2, score), so
gensim must be installed (``pip install -e .[test]``). A SimLex pair counts as associated when
USF holds it in either direction. For each configuration -- the old defaults, each rule change
in turn, the packaged defaults and a few alternatives -- the script prints the candidate pool,
how many associated SimLex pairs are eligible, how many more are lost only to the POS-tendency
rule, and the first exclusion reason of the others. It then counts the pool rows whose
concreteness class changes when word1 is the USF target instead of the cue.

This is a check of the rules as a whole, not a target to fit: the rules are not chosen pair by
pair (docs/builders.md).
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from pathlib import Path

import numpy as np
import pandas as pd

from lexgold.builder import common
from lexgold.builder.simlex import build_simlex, load_settings
from lexgold.protocols import load_protocol
from lexgold.resources import load_wordnet, read_usf


def simlex_pairs(path: Path | None) -> pd.DataFrame:
    if path is None:
        import gensim
        path = Path(gensim.__file__).parent / "test" / "test_data" / "simlex999.txt"
    return pd.read_csv(path, sep="\t", comment="#", header=None, names=["word1", "word2", "score"],
                       usecols=[0, 1], keep_default_na=False)


def configure(base, **changes):
    settings = dataclasses.replace(base, pos=dataclasses.replace(base.pos),
                                   concreteness=dataclasses.replace(base.concreteness))
    for key, value in changes.items():
        target, _, name = key.rpartition("__")
        setattr(getattr(settings, target) if target else settings, name, value)
    return settings


def pair_status(pool: pd.DataFrame, simlex: pd.DataFrame) -> pd.Series:
    """Per associated SimLex pair: "" when a USF row of the pair is eligible, else the reason of
    the row in SimLex's order (word1, word2) when the run's pool has it, else of the other row."""
    assoc = pool[pool["cohort"] == "associated"]
    by_pair = dict(zip(zip(assoc["word1"], assoc["word2"]), assoc["excluded"]))
    status = {}
    for a, b in zip(simlex["word1"], simlex["word2"]):
        rows = [by_pair[k] for k in ((a, b), (b, a)) if k in by_pair]
        if rows:
            status[(a, b)] = "" if "" in rows else rows[0]
    return pd.Series(status, dtype=object)


def run(usf, simlex, settings, is_proper, wordnet_dir=None):
    pos = common.pos_table(settings.pos, usf, None, wordnet_dir)
    scales = {"usf": settings.concreteness.usf, "brysbaert": settings.concreteness.brysbaert}
    conc, _ = common.concreteness_with_fallback(settings.concreteness.source,
                                                settings.concreteness.fallback, usf, scales)
    pool, _, report = build_simlex(usf, pos, conc, settings, np.random.default_rng(1), is_proper)
    return pool, report, pair_status(pool, simlex)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--simlex", type=Path, help="SimLex-999 pairs (default: gensim's copy)")
    args = parser.parse_args()
    start = time.perf_counter()
    usf, simlex = read_usf(), simlex_pairs(args.simlex)
    is_proper = common.proper_noun_detector(load_wordnet())
    default = load_settings(load_protocol("simlex"))
    old = configure(default, orientation="cue-target", pos__source="usf",
                    concreteness__source="usf", concreteness__fallback="none",
                    concreteness__class_direction="required")
    steps = [
        ("old defaults (cue-target, USF conc, USF POS, strict C2/C4)", old),
        ("+ orientation target-cue", configure(old, orientation="target-cue")),
        ("+ concreteness brysbaert, usf fallback",
         configure(old, orientation="target-cue", concreteness__source="brysbaert",
                   concreteness__fallback="usf")),
        ("+ POS penn+semcor counts",
         configure(default, concreteness__class_direction="required")),
        ("+ classes split by c1 and d only = packaged defaults", default),
        ("old defaults with only the POS source changed to penn+semcor",
         configure(old, pos__source=["penn", "semcor"])),
        ("alt: POS penn only", configure(default, pos__source="penn")),
        ("alt: POS share over all tags", configure(default, pos__share_among="all")),
        ("alt: POS semcor only", configure(default, pos__source="semcor")),
        ("alt: concreteness usf, brysbaert fallback",
         configure(default, concreteness__source="usf", concreteness__fallback="brysbaert")),
        ("alt: defaults but cue-target", configure(default, orientation="cue-target")),
    ]
    pools = {}
    print(f"SimLex-999 pairs: {len(simlex)}")
    for name, settings in steps:
        pool, report, status = run(usf, simlex, settings, is_proper)
        pools[name] = pool
        if "usf" in common.pos_sources(settings.pos):
            only_pos = 0
        else:  # the same run without the 75 % rule: pairs it alone excludes
            _, _, free = run(usf, simlex, configure(settings, pos__min_tendency=1e-9), is_proper)
            only_pos = int(((status == "pos-tendency") & (free == "")).sum())
        eligible = int((status == "").sum())
        candidates = report["cohorts"]["associated"]["candidates_by_pos"]
        reasons = status[status != ""].value_counts().to_dict()
        print(f"\n{name}\n  candidate pool: {sum(candidates.values())} {candidates}; "
              f"pos-tendency rows: {report['cohorts']['associated']['excluded'].get('pos-tendency', 0)}; "
              f"quota shortfall: {report['quota_shortfall']}")
        print(f"  SimLex pairs in USF: {len(status)}; eligible {eligible} ({eligible / len(status):.1%}); "
              f"+ lost only to POS tendency {only_pos} = {eligible + only_pos} "
              f"({(eligible + only_pos) / len(status):.1%})")
        print(f"  first exclusion reason of the others: {reasons}")
    a = pools["+ classes split by c1 and d only = packaged defaults"]
    b = pools["alt: defaults but cue-target"]
    rows = a.index[a["cohort"] == "associated"]  # USF rows, in the same order in both runs
    both = rows[(a.loc[rows, "excluded"] == "") & (b.loc[rows, "excluded"] == "")]
    changed = (a.loc[both, "conc_class"] != b.loc[both, "conc_class"])
    keys = set(zip(simlex["word1"], simlex["word2"]))
    in_simlex = pd.Series([(w1, w2) in keys for w1, w2 in zip(a.loc[both, "word1"], a.loc[both, "word2"])],
                          index=both)
    print(f"\norientation (packaged defaults): {len(both)} USF rows eligible in both orientations; "
          f"{int(changed.sum())} ({changed.mean():.1%}) change concreteness class; of the "
          f"{int(in_simlex.sum())} rows in SimLex's order, {int(changed[in_simlex].sum())} change class")
    print(f"\n{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
