"""Speed of the WordNet relation labeller on the full USF N/V pool, against a per-pair NLTK loop.

Every USF cue-target pair whose two words carry the same USF POS tag N or V (35,975 pairs) is
labelled by:

- ``RelationLabeller`` (lexgold.builder.relations): hypernym closures cached per synset, word
  facts cached per word, a pair is a few set / dict look-ups; the synsets' relations come from
  the WordNet graph cached on disk (lexgold.resources.wordnet_graph);
- the same labeller with ``cache=False``, asking NLTK's reader for every synset's relations;
- ``reference_relation``: the straightforward loop, NLTK calls per pair
  (``Synset.hypernym_distances()`` for every sense pair), nothing cached.

"cold" means a freshly loaded NLTK reader: NLTK parses each synset from the data files the
first time it is asked for. The cached labeller is timed cold twice: with an empty cache
folder (the graph is extracted from every noun and verb synset and written; a one-time cost
per WordNet), and in a fresh process (spawned) with the graph file present (hashing the data
files, loading the graph, labelling). "warm" is a reader whose synsets NLTK has all parsed, and
for the cached labeller the graph already in memory. Creating the reader (NLTK reads the index
files) is not timed. All must give the same labels.

The cache folder is a temporary one unless ``--cache DIR`` is given (``LEXGOLD_CACHE``).

Usage::

    python bench/bench_relations.py            # the full pool, default rules (first-sense)
    python bench/bench_relations.py --pairs 5000
    python bench/bench_relations.py --sense-policy shortest-path
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import shutil
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

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


def fast(pairs, reader, policy, cache=True):
    labeller = RelationLabeller(reader, sense_policy=policy, cache=cache)
    return list(label_relations(pairs, labeller=labeller))


def uncached(pairs, reader, policy):
    return fast(pairs, reader, policy, cache=False)


def loop(pairs, reader, policy):
    return [reference_relation(reader, a, b, p, sense_policy=policy)
            for a, b, p in pairs.itertuples(index=False)]


def fresh_process(pairs, policy):
    """Run in a spawned process: a fresh reader (not timed), then the cached labeller."""
    reader = fresh_reader()
    return timed(fast, pairs, reader, policy)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, help="only the first N pairs of the pool")
    parser.add_argument("--sense-policy", choices=SENSE_POLICIES, default="first-sense")
    parser.add_argument("--cache", help="lexgold's cache folder (default: a temporary one)")
    args = parser.parse_args()
    folder = args.cache or tempfile.mkdtemp(prefix="lexgold-bench-")
    os.environ["LEXGOLD_CACHE"] = folder  # the spawned process inherits it
    try:
        run(args, folder)
    finally:
        if not args.cache:
            shutil.rmtree(folder, ignore_errors=True)


def run(args, folder):
    pairs, policy = usf_nv_pool(args.pairs), args.sense_policy
    print(f"USF N/V pool: {len(pairs)} pairs ({(pairs['pos'] == 'N').sum()} N, "
          f"{(pairs['pos'] == 'V').sum()} V); sense policy {policy}; cache {folder}")
    shutil.rmtree(os.path.join(folder, "wordnet-graph"), ignore_errors=True)
    results = {}
    results["cold", "RelationLabeller, cache built"] = timed(fast, pairs, fresh_reader(), policy)
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        results["cold", "RelationLabeller, cache present, fresh process"] = pool.submit(
            fresh_process, pairs, policy).result()
    results["cold", "RelationLabeller, cache=False"] = timed(uncached, pairs, fresh_reader(), policy)
    results["cold", "per-pair NLTK loop"] = timed(loop, pairs, fresh_reader(), policy)
    parsed = fresh_reader()
    uncached(pairs, parsed, policy), loop(pairs, parsed, policy)  # NLTK parses every synset used
    results["warm", "RelationLabeller, graph in memory"] = timed(fast, pairs, parsed, policy)
    results["warm", "RelationLabeller, cache=False"] = timed(uncached, pairs, parsed, policy)
    results["warm", "per-pair NLTK loop"] = timed(loop, pairs, parsed, policy)
    labels = results["cold", "per-pair NLTK loop"][0]
    assert all(found == labels for found, _ in results.values()), "the labellers disagree"
    print(f"{'reader':<6} {'labeller':<48} {'time':>8} {'vs loop':>8}")
    for (state, name), (_, seconds) in results.items():
        base = results[state, "per-pair NLTK loop"][1]
        print(f"{state:<6} {name:<48} {seconds:>7.2f}s {base / seconds:>7.1f}x")
    print("labels identical: yes;", ", ".join(f"{k} {v}" for k, v in
                                            pd.Series(labels).value_counts().items()))
    graphs = list(Path(folder, "wordnet-graph").glob("*.npz"))
    print(f"graph file: {graphs[0].stat().st_size / 1e6:.1f} MB" if graphs else "no graph file")
    print("load average (1, 5, 15 min):", " ".join(f"{x:.2f}" for x in os.getloadavg()))


if __name__ == "__main__":
    main()
