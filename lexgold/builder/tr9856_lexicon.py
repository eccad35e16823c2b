"""TR9856 topic lexicons: hypergeometric test per topic and term (Levy et al. 2015, section 3.2).

"Given the number of sentences in the union of articles identified for all topics [N]; the number
of sentences in the articles identified for a specific topic [K]; the total number of sentences
that include a particular term, t [n_t]; and the number of sentences within the topic articles,
that include t, denoted x; we use the HG test to assess the probability p, to observe >= x
occurrences of t within sentences selected at random out of the total population of sentences."
Terms with n = 1, 2, 3 whose Bonferroni-corrected p is <= 0.05 form the topic lexicon.

**Decision** (not in the paper; :func:`drop_fragments`): a lexicon term is dropped when nearly
all the corpus sentences that contain it contain one longer term kept in the same topic's
lexicon (``fragment_share`` of ``[build]``, default 0.9). Without it, the words of a name
(``ayn``, ``rand`` of ``ayn rand``) pass the test on the name's sentences and are shown to
raters as terms of their own. A surname that also stands alone ("rand": the article calls her
"Rand") passes the share; it goes with its name when the name's given name is a fragment and
both words are names in the corpus (:func:`proper_names`: capitalised inside sentences).

Counting streams over the corpus: memory holds one counter per topic over the terms seen, so it
is bounded by the vocabulary of n-gram terms, not by the size of the corpus. Articles are read
once from the corpus; their plain text is spooled to a temporary file while Punkt learns the
corpus' abbreviations, then split into sentences and counted, in several processes if asked
(the counts are sums over articles, so the lexicon does not depend on the number of processes).
"""

from __future__ import annotations

import dataclasses
import json
import multiprocessing
import tempfile
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from collections.abc import Iterable, Iterator
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import hypergeom
from tqdm.auto import tqdm

from lexgold.builder.corpus import Article, TextFolder, WikiDump
from lexgold.builder.terms import SentenceSplitter, TermOptions, sentence_terms

#: columns of a term table, one row per (topic, term) with x >= 1
TERM_COLUMNS = ["topic", "term", "n", "x", "term_sentences", "topic_sentences", "sentences"]


@dataclasses.dataclass
class SentenceCounts:
    """Sentence-level document frequencies (section 3.2).

    Attributes
    ----------
    sentences : int
        N, sentences in the union of all topics' articles (an article counted once).
    topic_sentences : dict
        K per topic: sentences in the topic's articles.
    term_sentences : Counter
        n_t per term: sentences of the union containing the term.
    topic_term_sentences : dict of Counter
        x per topic and term: sentences of the topic's articles containing the term.
    articles : int
        Articles counted.
    topic_articles : dict
        Articles counted per topic.
    inside : Counter
        Per word (as terms spell it): its occurrences after a sentence's first token.
    capitalised : Counter
        Of those, the occurrences written with a capital first letter ("Rand" in "as Rand
        wrote"): a word nearly always capitalised there is a name (:func:`proper_names`).
    """

    sentences: int = 0
    topic_sentences: dict[str, int] = dataclasses.field(default_factory=dict)
    term_sentences: Counter = dataclasses.field(default_factory=Counter)
    topic_term_sentences: dict[str, Counter] = dataclasses.field(default_factory=dict)
    articles: int = 0
    topic_articles: dict[str, int] = dataclasses.field(default_factory=dict)
    inside: Counter = dataclasses.field(default_factory=Counter)
    capitalised: Counter = dataclasses.field(default_factory=Counter)


def count_sentences(articles: Iterable[Article], topics_of: dict[str, list[str]],
                    splitter: SentenceSplitter, options: TermOptions, *,
                    progress: tqdm | None = None) -> SentenceCounts:
    """Count N, K, n_t and x over already-read articles (each title at most once).

    Parameters
    ----------
    articles : iterable of Article
        The topic articles; an article whose title is in no topic is ignored.
    topics_of : dict
        Title -> keys of the topics that list the article.
    splitter : SentenceSplitter
        Trained (or untrained) Punkt splitter.
    options : TermOptions
        Tokenisation and term extraction.
    """
    counts = SentenceCounts()
    keys = sorted({k for ks in topics_of.values() for k in ks})
    counts.topic_sentences = dict.fromkeys(keys, 0)
    counts.topic_articles = dict.fromkeys(keys, 0)
    counts.topic_term_sentences = {k: Counter() for k in keys}
    tokenizer = options.tokenizer()
    for article in articles:
        topic_keys = topics_of.get(article.title, [])
        if not topic_keys:
            continue
        counts.articles += 1
        for key in topic_keys:
            counts.topic_articles[key] += 1
        for sentence in splitter.split(article.text):
            raw = tokenizer.findall(sentence)
            words = [t.lower() for t in raw] if options.lowercase else raw
            terms = sentence_terms(words, options)
            counts.inside.update(words[1:])
            counts.capitalised.update(w for w, t in zip(words[1:], raw[1:]) if t[:1].isupper())
            counts.sentences += 1
            counts.term_sentences.update(terms)
            for key in topic_keys:
                counts.topic_sentences[key] += 1
                counts.topic_term_sentences[key].update(terms)
        if progress is not None:
            progress.update(1)
    return counts


def merge_counts(total: SentenceCounts, part: SentenceCounts) -> SentenceCounts:
    """Add the counts of ``part`` (another set of articles) into ``total``; returns ``total``.

    Every count is a sum over articles, so counting batches apart and merging them gives exactly
    the counts of one pass, in any order.
    """
    total.sentences += part.sentences
    total.articles += part.articles
    total.term_sentences.update(part.term_sentences)
    total.inside.update(part.inside)
    total.capitalised.update(part.capitalised)
    for key, value in part.topic_sentences.items():
        total.topic_sentences[key] = total.topic_sentences.get(key, 0) + value
    for key, value in part.topic_articles.items():
        total.topic_articles[key] = total.topic_articles.get(key, 0) + value
    for key, counter in part.topic_term_sentences.items():
        total.topic_term_sentences.setdefault(key, Counter()).update(counter)
    return total


def count_corpus(corpus: WikiDump | TextFolder, topics_of: dict[str, list[str]],
                 options: TermOptions, *, splitter: str = "punkt-trained",
                 punkt_train_chars: int = 0, workers: int = 1,
                 show_progress: bool | None = None) -> tuple[SentenceCounts, set[str]]:
    """Read the topic articles from ``corpus`` once and count their sentences and terms.

    Returns the counts and the set of titles found. Pass 1 streams the corpus, strips markup,
    trains Punkt (``splitter = "punkt-trained"``, on the first ``punkt_train_chars`` characters
    of the articles, in corpus order; 0 = all) and spools the text to a temporary file; pass 2
    reads the spool and counts, in ``workers`` processes when more than 1: each counts every
    ``workers``-th article of the spool (memory per process is bounded by the vocabulary, as in
    one process) and their counts are added (:func:`merge_counts`); the counts, and so the
    lexicon, are the same whatever the number of workers. ``show_progress=None`` shows tqdm bars only on a terminal.
    """
    sentence_splitter = SentenceSplitter(splitter)
    found: set[str] = set()
    train_budget = punkt_train_chars if punkt_train_chars > 0 else float("inf")
    with tempfile.TemporaryDirectory(prefix="lexgold-tr9856-") as folder:
        spool_path = Path(folder) / "articles.jsonl"
        with open(spool_path, "w", encoding="utf-8") as spool, \
                tqdm(total=corpus.size, unit=corpus.unit, unit_scale=corpus.unit == "B",
                     desc="reading corpus", disable=_disable(show_progress)) as bar:
            for article in corpus.articles(set(topics_of), on_read=bar.update):
                if article.title in found:
                    continue  # a dump may repeat a page; count the first copy only
                found.add(article.title)
                if splitter == "punkt-trained" and train_budget > 0:
                    sentence_splitter.train(
                        article.text[:int(min(train_budget, len(article.text)))])
                    train_budget -= len(article.text)
                spool.write(json.dumps([article.title, article.text]) + "\n")
        with tqdm(total=len(found), unit="article", desc="counting terms",
                  disable=_disable(show_progress)) as bar:
            if workers <= 1:
                counts = count_sentences(_spooled(spool_path), topics_of, sentence_splitter,
                                         options, progress=bar)
            else:
                counts = _count_in_processes(spool_path, topics_of, sentence_splitter, options,
                                             workers, bar)
    return counts, found


def _spooled(path: Path, shard: int = 0, shards: int = 1) -> Iterator[Article]:
    """The spooled articles whose line number is ``shard`` modulo ``shards``."""
    with open(path, encoding="utf-8") as spool:
        for number, line in enumerate(spool):
            if number % shards == shard:
                yield Article(*json.loads(line))


def _count_in_processes(spool_path: Path, topics_of, splitter: SentenceSplitter,
                        options: TermOptions, workers: int, progress: tqdm) -> SentenceCounts:
    """Each of ``workers`` processes counts every ``workers``-th spooled article and returns
    its counts once; the totals are their sum (:func:`merge_counts`)."""
    keys = sorted({k for ks in topics_of.values() for k in ks})
    total = SentenceCounts(topic_sentences=dict.fromkeys(keys, 0),
                           topic_articles=dict.fromkeys(keys, 0),
                           topic_term_sentences={k: Counter() for k in keys})
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(workers, mp_context=context) as pool:
        shards = [pool.submit(_count_shard, spool_path, shard, workers, topics_of, splitter.kind,
                              splitter.parameters(), options) for shard in range(workers)]
        for future in shards:
            part = future.result()
            merge_counts(total, part)
            progress.update(part.articles)
    return total


def _count_shard(spool_path: Path, shard: int, shards: int, topics_of, kind: str, parameters,
                 options: TermOptions) -> SentenceCounts:
    return count_sentences(_spooled(spool_path, shard, shards), topics_of,
                           SentenceSplitter(kind, parameters), options)


def _disable(show_progress: bool | None) -> bool | None:
    return None if show_progress is None else not show_progress


def term_table(counts: SentenceCounts) -> pd.DataFrame:
    """One row per topic and term occurring in the topic (x >= 1), columns :data:`TERM_COLUMNS`.

    Rows are in topic key order, then term order, so the table does not depend on the corpus
    order or on hash seeds.
    """
    frames = []
    for key in sorted(counts.topic_term_sentences):
        x = counts.topic_term_sentences[key]
        terms = sorted(x)
        frames.append(pd.DataFrame({
            "topic": key, "term": terms,
            "n": np.array([t.count(" ") + 1 for t in terms], dtype=np.int64),
            "x": np.array([x[t] for t in terms], dtype=np.int64),
            "term_sentences": np.array([counts.term_sentences[t] for t in terms], dtype=np.int64),
            "topic_sentences": counts.topic_sentences[key], "sentences": counts.sentences}))
    if not frames:
        return pd.DataFrame({c: pd.Series(dtype=object if c in ("topic", "term") else np.int64)
                             for c in TERM_COLUMNS})
    return pd.concat(frames, ignore_index=True)[TERM_COLUMNS]


def _distinct_cases(x, term_sentences, topic_sentences, sentences):
    """The distinct (x, n_t, K, N) rows and the index of each input row among them."""
    cases = np.broadcast_arrays(*(np.atleast_1d(np.asarray(v, dtype=np.int64))
                                  for v in (x, term_sentences, topic_sentences, sentences)))
    if cases[0].size == 0:
        return np.zeros((0, 4), dtype=np.int64), np.zeros(0, dtype=np.int64)
    # many terms share (x, n_t, K, N), e.g. x = n_t = 1: compute each distinct case once
    unique, inverse = np.unique(np.stack(cases, axis=1), axis=0, return_inverse=True)
    return unique, inverse.reshape(-1)


def hypergeometric_p(x, term_sentences, topic_sentences, sentences) -> np.ndarray:
    """p = P(X >= x), X ~ Hypergeometric(N sentences, K topic sentences, n_t draws).

    The chance of seeing at least ``x`` topic sentences among ``n_t`` sentences containing the
    term, were the term spread at random over all ``N`` sentences (section 3.2).

    Parameters
    ----------
    x, term_sentences, topic_sentences, sentences : array-like of int
        x, n_t, K and N as in the paper.

    Returns
    -------
    numpy.ndarray
        p in [0, 1]; smaller means more topical.

    Notes
    -----
    p underflows to 0.0 below about 1e-308, which a strongly topical term reaches (x = n_t =
    300, K = 5,000, N = 100,000 gives p = e^-907): rank by :func:`hypergeometric_log_p`.

    Examples
    --------
    A term in 2 of 4 sentences, both in a topic of 2 sentences: p = 1 / C(4, 2).

    >>> float(hypergeometric_p(2, 2, 2, 4)[0]) == 1 / 6
    True
    """
    unique, inverse = _distinct_cases(x, term_sentences, topic_sentences, sentences)
    if len(unique) == 0:
        return np.zeros(0)
    x_u, n_u, k_u, total_u = unique.T
    p = hypergeom.sf(x_u - 1, total_u, k_u, n_u)
    return np.clip(p, 0.0, 1.0)[inverse]


#: below this p, log(p) is taken from ``hypergeom.logsf`` (p is subnormal or 0.0 there)
LOG_SF_BELOW = 1e-300


def hypergeometric_log_p(x, term_sentences, topic_sentences, sentences) -> np.ndarray:
    """log p (natural logarithm), p as in :func:`hypergeometric_p`, without underflow.

    Parameters
    ----------
    x, term_sentences, topic_sentences, sentences : array-like of int
        x, n_t, K and N as in the paper (section 3.2).

    Returns
    -------
    numpy.ndarray
        log p in (-inf, 0]; smaller means more topical. Finite wherever p > 0 mathematically
        (x <= min(K, n_t)), also where p itself underflows to 0.0.

    Notes
    -----
    ``log(hypergeom.sf)`` where p >= :data:`LOG_SF_BELOW` (accurate and fast);
    ``hypergeom.logsf`` elsewhere (a sum of pmf terms in log space, slower, so only where
    needed). Equal counts give equal values, so ties are exact.

    Examples
    --------
    x = n_t: p = C(K, n_t) / C(N, n_t). For x = n_t = 300, K = 5,000, N = 100,000, p underflows
    but log p does not:

    >>> float(hypergeometric_p(300, 300, 5000, 100000)[0])
    0.0
    >>> round(float(hypergeometric_log_p(300, 300, 5000, 100000)[0]), 6)
    -907.4254
    """
    unique, inverse = _distinct_cases(x, term_sentences, topic_sentences, sentences)
    if len(unique) == 0:
        return np.zeros(0)
    x_u, n_u, k_u, total_u = unique.T
    p = np.clip(hypergeom.sf(x_u - 1, total_u, k_u, n_u), 0.0, 1.0)
    with np.errstate(divide="ignore"):
        log_p = np.log(p)
    tiny = p < LOG_SF_BELOW
    if tiny.any():
        log_p[tiny] = hypergeom.logsf(x_u[tiny] - 1, total_u[tiny], k_u[tiny], n_u[tiny])
    return np.minimum(log_p, 0.0)[inverse]


def hypergeometric_lexicon(terms: pd.DataFrame, alpha: float = 0.05,
                           ngram_sizes: Iterable[int] = (1, 2, 3)) -> pd.DataFrame:
    """The HG test for every row of a term table, Bonferroni-corrected within each topic.

    Parameters
    ----------
    terms : pandas.DataFrame
        A :func:`term_table` (columns :data:`TERM_COLUMNS`).
    alpha : float
        Keep terms with corrected p <= alpha (the paper: 0.05).
    ngram_sizes : iterable of int
        Term lengths tested (the paper: 1, 2, 3); other rows are dropped first.

    Returns
    -------
    pandas.DataFrame
        The input rows tested, plus ``p``, ``log_p`` (natural log of p, finite where p
        underflows to 0.0: rank by it), ``p_bonferroni`` = min(1, p * m) where m is the
        number of terms tested for that topic (all lengths together), and ``in_lexicon``.

    Notes
    -----
    A term is tested for a topic when it occurs in at least one of the topic's sentences
    (x >= 1): for x = 0, p = 1 and the test is not informative (**Decision**).
    """
    tested = terms[terms["n"].isin(list(ngram_sizes)) & (terms["x"] >= 1)].copy()
    counts = (tested["x"], tested["term_sentences"], tested["topic_sentences"],
              tested["sentences"])
    tested["p"] = hypergeometric_p(*counts)
    tested["log_p"] = hypergeometric_log_p(*counts)
    m = tested.groupby("topic")["term"].transform("size").to_numpy()
    tested["p_bonferroni"] = np.minimum(1.0, tested["p"].to_numpy() * m)
    tested["in_lexicon"] = tested["p_bonferroni"] <= alpha
    return tested.reset_index(drop=True)


def proper_names(counts: SentenceCounts, share: float = 0.9, least: int = 3) -> set[str]:
    """Words written with a capital first letter in at least ``share`` of their ``least`` or
    more occurrences after a sentence's first token: names ("rand", "schopenhauer"), not the
    words a sentence merely starts with.

    >>> counts = SentenceCounts(inside=Counter({"rand": 10, "state": 40, "moon": 2}),
    ...                         capitalised=Counter({"rand": 10, "state": 3, "moon": 2}))
    >>> sorted(proper_names(counts))
    ['rand']
    """
    return {word for word, n in counts.inside.items()
            if n >= least and counts.capitalised[word] >= share * n}


def drop_fragments(tested: pd.DataFrame, share: float = 0.9,
                   names: set[str] | frozenset[str] = frozenset()) -> pd.DataFrame:
    """Take out of the lexicon the terms that are, in the corpus, nearly always part of one
    longer lexicon term of the same topic (module docstring, **Decision**).

    A lexicon term t (``in_lexicon``) is a fragment of a longer kept lexicon term T of its topic
    when T contains t as consecutive words and ``n_T / n_t >= share``: at least that share of
    the corpus sentences containing t contain T (every sentence containing T contains t, so
    ``n_T / n_t`` is the share of t's sentences inside T). Longer terms are decided first, so T
    is itself kept. ``share = 0`` keeps every term (the paper's lexicon).

    Parameters
    ----------
    tested : pandas.DataFrame
        :func:`hypergeometric_lexicon`'s table (``topic, term, n, term_sentences, in_lexicon``).
    share : float
        0 < share <= 1, or 0 for no rule.
    names : set of str
        :func:`proper_names`: with them, a surname goes with its name. When the first word of
        a kept name of several words is dropped as a fragment of it (a given name seen only in
        the name: "ayn" of "ayn rand"), the name's last word, itself a name ("rand"), is
        dropped too, as part of it: alone, lower-cased, "rand" reads as the currency or a
        typo, and the lexicon keeps "ayn rand".

    Returns
    -------
    pandas.DataFrame
        ``tested`` with ``in_lexicon`` false for the fragments and a column ``part_of``: the
        longer term a fragment belongs to ("" for the others).

    Examples
    --------
    "ayn" is in 4 sentences, all inside "ayn rand"; "rand" in 5, 4 of them inside it; "state"
    in 40, 1 inside "state of nature":

    >>> tested = pd.DataFrame({"topic": "a", "term": ["ayn", "rand", "ayn rand", "state",
    ...                        "state of nature"], "n": [1, 1, 2, 1, 3],
    ...                        "term_sentences": [4, 5, 4, 40, 1], "in_lexicon": True})
    >>> out = drop_fragments(tested, 0.8)
    >>> out.loc[~out["in_lexicon"], ["term", "part_of"]].values.tolist()
    [['ayn', 'ayn rand'], ['rand', 'ayn rand']]
    """
    out = tested.assign(part_of="")
    if share <= 0 or out.empty:
        return out
    kept = out["in_lexicon"].to_numpy().copy()
    part_of = [""] * len(out)
    sentences = out["term_sentences"].to_numpy()
    for _, rows in out[out["in_lexicon"]].groupby("topic", sort=False):
        longer: dict[str, list[int]] = {}      # word sequence -> rows of kept terms holding it
        for length in sorted(rows["n"].unique(), reverse=True):
            for i in rows.index[rows["n"] == length]:
                term = out.at[i, "term"]
                inside = [j for j in longer.get(term, []) if sentences[j] >= share * sentences[i]]
                if inside:
                    j = max(inside, key=lambda k: (sentences[k], out.at[k, "term"]))
                    kept[i], part_of[i] = False, out.at[j, "term"]
                    continue
                words = term.split(" ")
                for size in range(1, len(words)):
                    for start in range(len(words) - size + 1):
                        longer.setdefault(" ".join(words[start:start + size]), []).append(i)
    if names:
        _drop_surnames(out, kept, part_of, names)
    out["in_lexicon"], out["part_of"] = kept, part_of
    return out


def _drop_surnames(out: pd.DataFrame, kept, part_of: list[str], names) -> None:
    """:func:`drop_fragments`' rule for the surname of a kept name whose given name is a
    fragment of it (in place on ``kept`` and ``part_of``)."""
    for _, rows in out.groupby("topic", sort=False):
        row_of = {out.at[i, "term"]: i for i in rows.index}
        for i in rows.index:
            name = out.at[i, "term"]
            words = name.split(" ")
            if len(words) < 2 or not kept[i] or words[0] not in names \
                    or words[-1] not in names:
                continue
            first, last = row_of.get(words[0]), row_of.get(words[-1])
            if first is not None and part_of[first] == name and last is not None and kept[last]:
                kept[last], part_of[last] = False, name
