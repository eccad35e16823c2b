"""Speed of the WordNet relation labeller on the full USF N/V pool, against a per-pair NLTK loop.

Every USF cue-target pair whose two words carry the same USF POS tag N or V (35,975 pairs) is
labelled twice, side by side:

- ``RelationLabeller`` (lexgold.builder.relations): hypernym closures cached per synset,
  word facts cached per word, a pair is a few set / dict look-ups;
- ``reference_relation``: the straightforward loop, NLTK calls per pair
  (``Synset.hypernym_distances()`` for every sense pair), nothing cached.

Each is timed on a fresh NLTK reader ("cold": NLTK parses each synset from the data files the
first time it is asked for, a cost both share) and again once that reader has every synset
parsed ("warm"). Both must give the same labels.

Usage::

    python bench/bench_relations.py            # the full pool, default rules (first-sense)
    python bench/bench_relations.py --pairs 5000
    python bench/bench_relations.py --sense-policy shortest-path
"""

from __future__ import annotations

import argparse
import time

import pandas as pd

from lexgold.builder.relations import (SENSE_POLICIES, RelationLabeller, label_relations,
                                       reference_relation)
from lexgold.resources import read_usf
from lexgold.resources.wordnet import _reader_from_root, locate_wordnet, nltk_layout


def usf_nv_pool(limit: int | None = None) -> pd.DataFrame:
    usf = read_usf()
    same = (usf["qps"] == usf["tps"]).fillna(False) & usf["qps"].isin(["N", "V"]).fillna(False)
    pairs = pd.DataFrame({"word1": usf.loc[same, "cue"].str.lower(),
                          "word2": usf.loc[same, "target"].str.lower(),
                          "pos": usf.loc[same, "qps"]}).reset_index(drop=True)
    return pairs.head(limit) if limit else pairs


def fresh_reader():
    kind, path = locate_wordnet()
    return _reader_from_root(nltk_layout(path) if kind == "dict" else path)


def timed(function, *args):
    start = time.perf_counter()
    result = function(*args)
    return result, time.perf_counter() - start


def fast(pairs, reader, policy):
    return list(label_relations(pairs, labeller=RelationLabeller(reader, sense_policy=policy)))


def loop(pairs, reader, policy):
    return [reference_relation(reader, a, b, p, sense_policy=policy)
            for a, b, p in pairs.itertuples(index=False)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, help="only the first N pairs of the pool")
    parser.add_argument("--sense-policy", choices=SENSE_POLICIES, default="first-sense")
    args = parser.parse_args()
    pairs = usf_nv_pool(args.pairs)
    print(f"USF N/V pool: {len(pairs)} pairs ({(pairs['pos'] == 'N').sum()} N, "
          f"{(pairs['pos'] == 'V').sum()} V); sense policy {args.sense_policy}")
    rows = []
    for state in ("cold", "warm"):
        reader_fast, reader_loop = fresh_reader(), fresh_reader()
        if state == "warm":  # let NLTK parse every synset both will ask for, then time again
            fast(pairs, reader_fast, args.sense_policy), loop(pairs, reader_loop, args.sense_policy)
        labels_fast, t_fast = timed(fast, pairs, reader_fast, args.sense_policy)
        labels_loop, t_loop = timed(loop, pairs, reader_loop, args.sense_policy)
        assert labels_fast == labels_loop, "the two labellers disagree"
        rows.append((state, t_fast, t_loop))
    print(f"{'reader':<6} {'RelationLabeller':>17} {'per-pair NLTK loop':>19} {'speed-up':>9}")
    for state, t_fast, t_loop in rows:
        print(f"{state:<6} {t_fast:>16.2f}s {t_loop:>18.2f}s {t_loop / t_fast:>8.1f}x")
    print("labels identical: yes;", ", ".join(f"{k} {v}" for k, v in
                                            pd.Series(labels_fast).value_counts().items()))


if __name__ == "__main__":
    main()
