"""SDT-rho: the pseudo-synonym same-different test of Fourtassi & Dupoux (2014).

Section 2: the corpus vocabulary is the words seen at least 10 times once a stop list of high
frequency words "with no conceptual content" is removed; the *overlap set* is the words of the
USF free association norms (Nelson et al. 1998; its 5,019 stimulus words, the cues) that are in
that vocabulary (1,093 words for the paper's smallest corpus).

Section 2.2, the main setup: in a copy of the corpus every occurrence of *each word of the
overlap set* is replaced at random by one of two variants (``w#1``, ``w#2``, probability 1/2
each); a model is trained on that corpus; SDT-rho is the ROC AUC of the cosine of variant pairs
against the cosine of all other pairs of the split words' variants (0.5 chance, 1 perfect).

Section 3, for corpora without norms: words drawn at random from a frequency band (the paper's
best: 40 < count < 400, 500 words); words occurring once cannot be split; "the random test sets
have no more than 10% of their words in the overlap". Section 4: the per-word variant, the AUC
of one word's variant pair against the other pairs containing either variant.

The behaviour-based counterpart (section 2.1, after Griffiths et al. 2007) is
:func:`median_associate_rank`: for each USF cue in the model's vocabulary, the rank of its first
three associates among the other overlap words by cosine; the Median Rank is the mean of the
three medians (lower is better).

The trainer is pluggable: any ``trainer(documents, rng, keep=...) -> Vectors``. The default,
:func:`lsa_trainer`, is LSA as in the paper: a term-document count matrix over documents of
``doc_size`` consecutive lines (sentences, for a one-sentence-per-line corpus), truncated by
sparse SVD (``scipy.sparse.linalg.svds``); word vectors are the rows of U S.
"""

from __future__ import annotations

import importlib
import re
from collections import Counter
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import sparse, stats
from scipy.sparse.linalg import svds

from lexgold.compression import open_input
from lexgold.errors import InputError
from lexgold.evaluate.vectors import Vectors
from lexgold.resources import read_usf
from lexgold.tables import read_stop_words

_TOKEN = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")


def variant(word: str, k: int) -> str:
    """The k-th pseudo-synonym of ``word`` (k = 1, 2); '#' never occurs in a token."""
    return f"{word}#{k}"


def read_corpus(path, doc_size: int = 1, stopwords=()) -> list[list[str]]:
    """Documents of ``doc_size`` consecutive non-empty lines, lower-cased letter tokens.

    Tokens are runs of letters (an inner apostrophe kept); ``stopwords`` are dropped.
    """
    if doc_size < 1:
        raise InputError(f"doc_size must be >= 1; got {doc_size}", field="doc_size")
    stop = {w.lower() for w in stopwords}
    with open_input(path) as handle:
        lines = [line.rstrip("\r\n") for line in handle if line.strip()]
    if not lines:
        raise InputError("empty corpus", path=path)
    documents = []
    for first in range(0, len(lines), doc_size):
        text = " ".join(lines[first:first + doc_size]).lower()
        documents.append([t for t in _TOKEN.findall(text) if t not in stop])
    return documents


def usf_words(usf: pd.DataFrame) -> set[str]:
    """The words of the norms: the USF cues (the normed stimulus words), lower-cased."""
    return {c.lower() for c in usf["cue"].dropna()}


def vocabulary(documents, min_count: int = 10) -> set[str]:
    """Words seen at least ``min_count`` times (stop words already dropped by the reader)."""
    counts = Counter(t for doc in documents for t in doc)
    return {w for w, c in counts.items() if c >= min_count}


def overlap_words(documents, norm_words, min_count: int = 10) -> list[str]:
    """The overlap set (section 2.1): words of the norms in the corpus vocabulary, sorted.

    Parameters
    ----------
    documents : list of list of str
        The corpus as read by :func:`read_corpus` (lower-cased, stop list removed).
    norm_words : iterable of str
        Lower-cased words of the norms, e.g. :func:`usf_words`.
    min_count : int
        Vocabulary threshold (the paper: 10).

    Examples
    --------
    >>> overlap_words([["cat", "dog", "cat"], ["dog", "zebu"]], {"cat", "dog", "yak"}, 2)
    ['cat', 'dog']
    """
    return sorted(vocabulary(documents, min_count) & set(norm_words))


def select_words(documents, rng: np.random.Generator, *, freq_min: int = 40,
                 freq_max: int = 400, n_words: int = 500, exclude=(), overlap=(),
                 max_overlap: float = 1.0) -> list[str]:
    """Draw up to ``n_words`` words with ``freq_min < count < freq_max`` (and count >= 2).

    Parameters
    ----------
    documents : list of list of str
        The corpus.
    rng : numpy.random.Generator
        Draws the words.
    freq_min, freq_max, n_words : int
        The band and the set size (section 3: 40 < count < 400, 500 words).
    exclude : iterable of str
        Words never drawn.
    overlap, max_overlap : iterable of str, float
        At most a share ``max_overlap`` of the drawn set may be overlap words (section 3: 0.10).
        The set is drawn uniformly from the band; overlap words beyond the quota are replaced by
        other band words drawn at random, and when the band has too few of those the set
        shrinks until the share holds.

    Returns
    -------
    list of str
        The sorted sample; fewer words than asked when the band is smaller.
    """
    if not 0 <= max_overlap <= 1:
        raise InputError(f"expected 0 <= max_overlap <= 1, found {max_overlap}",
                         field="max_overlap")
    counts = Counter(t for doc in documents for t in doc)
    exclude = set(exclude)
    band = sorted(w for w, c in counts.items()
                  if freq_min < c < freq_max and c >= 2 and w not in exclude)
    drawn = band if len(band) <= n_words else rng.choice(band, size=n_words,
                                                         replace=False).tolist()
    overlap = set(overlap)
    in_overlap = [w for w in drawn if w in overlap]
    if len(in_overlap) <= max_overlap * len(drawn):
        return sorted(drawn)
    return sorted(_cap_overlap(band, drawn, in_overlap, overlap, max_overlap, rng))


def _cap_overlap(band, drawn, in_overlap, overlap, max_overlap, rng) -> list[str]:
    """Replace overlap words beyond the quota by other band words; shrink if there are none."""
    others = [w for w in drawn if w not in overlap]
    quota = int(np.floor(max_overlap * len(drawn) + 1e-9))
    chosen = set(drawn)
    spare = [w for w in band if w not in overlap and w not in chosen]
    extra = len(in_overlap) - quota
    if spare:
        others += rng.choice(spare, size=min(extra, len(spare)), replace=False).tolist()
    kept = quota
    while kept > 0 and kept > max_overlap * (len(others) + kept) + 1e-9:
        kept -= 1
    if kept == 0:
        return others
    return others + rng.choice(in_overlap, size=kept, replace=False).tolist()


def pseudo_synonym_corpus(documents, words, rng: np.random.Generator) -> list[list[str]]:
    """Replace each occurrence of each chosen word by ``w#1`` or ``w#2`` at random."""
    chosen = set(words)
    out = []
    for doc in documents:
        coin = rng.integers(1, 3, size=len(doc))
        out.append([variant(t, k) if t in chosen else t for t, k in zip(doc, coin)])
    return out


def term_document_matrix(documents, min_count: int = 10, keep=()) -> tuple[list[str], sparse.csr_matrix]:
    """Terms (count >= min_count, plus ``keep``) x documents count matrix."""
    counts = Counter(t for doc in documents for t in doc)
    keep = set(keep)
    terms = sorted(t for t, c in counts.items() if c >= min_count or t in keep)
    column = {t: i for i, t in enumerate(terms)}
    rows, cols = [], []
    for j, doc in enumerate(documents):
        ids = [column[t] for t in doc if t in column]
        rows.extend(ids)
        cols.extend([j] * len(ids))
    data = np.ones(len(rows), dtype=np.float64)
    matrix = sparse.csr_matrix((data, (rows, cols)), shape=(len(terms), len(documents)))
    matrix.sum_duplicates()
    return terms, matrix


def lsa_trainer(documents, rng: np.random.Generator, *, keep=(), dim: int = 300,
                min_count: int = 10) -> Vectors:
    """LSA: truncated SVD of the term-document count matrix; vectors are rows of U S.

    ``dim`` is cut to min(matrix shape) - 1 when the corpus is too small for it.
    """
    terms, matrix = term_document_matrix(documents, min_count, keep)
    k = min(dim, min(matrix.shape) - 1)
    if k < 1:
        raise InputError(f"corpus too small for LSA ({matrix.shape[0]} terms x "
                         f"{matrix.shape[1]} documents)")
    v0 = rng.standard_normal(min(matrix.shape))
    u, s, _ = svds(matrix, k=k, v0=v0)
    return Vectors(terms, (u * s).astype(np.float32), source="lsa")


def random_trainer(documents, rng: np.random.Generator, *, keep=(), dim: int = 300,
                   min_count: int = 10) -> Vectors:
    """Chance baseline: a Gaussian random vector per term (SDT-rho about 0.5)."""
    counts = Counter(t for doc in documents for t in doc)
    keep = set(keep)
    terms = sorted(t for t, c in counts.items() if c >= min_count or t in keep)
    return Vectors(terms, rng.standard_normal((len(terms), dim)).astype(np.float32), "random")


TRAINERS = {"lsa": lsa_trainer, "random": random_trainer}


def get_trainer(name: str):
    """A trainer by name ('lsa', 'random') or as ``package.module:function``."""
    if name in TRAINERS:
        return TRAINERS[name]
    if ":" in name:
        module, _, attr = name.partition(":")
        try:
            return getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError) as err:
            raise InputError(f"cannot import trainer {name!r}: {err}", field="trainer") from None
    raise InputError(f"trainer must be one of {', '.join(TRAINERS)} or module:function; "
                     f"got {name!r}", field="trainer")


def roc_auc(positive: np.ndarray, negative: np.ndarray) -> float:
    """Area under the ROC curve: P(positive score > negative score), ties counting 1/2.

    Computed from ranks (Mann-Whitney U / (n_pos n_neg)). 0.5 is chance, 1 perfect.

    Examples
    --------
    >>> roc_auc(np.array([0.9, 0.4]), np.array([0.1, 0.4, 0.5]))
    0.75
    """
    positive, negative = np.asarray(positive, float), np.asarray(negative, float)
    if not len(positive) or not len(negative):
        return float("nan")
    ranks = stats.rankdata(np.concatenate([positive, negative]))
    u = ranks[:len(positive)].sum() - len(positive) * (len(positive) + 1) / 2
    return float(u / (len(positive) * len(negative)))


def sdt_rho(vectors: Vectors, words, chunk: int = 512) -> tuple[float, pd.DataFrame]:
    """SDT-rho over the chosen words, and the per-word AUC.

    Parameters
    ----------
    vectors : Vectors
        Trained on the pseudo-synonym corpus.
    words : list of str
        The split words; a word whose two variants are not both in the vocabulary is left out.
    chunk : int
        Words per block of cosines: memory grows with ``chunk`` x the number of variants, not
        with their square (the whole overlap set of a large corpus has thousands of words).

    Returns
    -------
    rho : float
        ROC AUC of variant-pair cosines against the cosines of every other pair of variants.
    per_word : pandas.DataFrame
        ``word, cosine, auc``: one word's pair against the other pairs holding either variant.

    Notes
    -----
    The AUC counts, for every negative pair, the variant pairs with a larger cosine (ties 1/2):
    the value of :func:`roc_auc` over all pairs, computed block by block.
    """
    index = vectors.key_index("exact")
    kept = [w for w in words if variant(w, 1) in index and variant(w, 2) in index]
    if len(kept) < 2:
        raise InputError(f"SDT needs at least 2 split words in the model; found {len(kept)}")
    rows = [index[variant(w, k)] for w in kept for k in (1, 2)]
    unit = vectors.unit()[rows].astype(np.float64)
    n = len(rows)
    positive = np.einsum("ij,ij->i", unit[0::2], unit[1::2])
    ordered = np.sort(positive)
    above, ties, negatives = 0, 0, 0
    per_word = []
    for first in range(0, n, 2 * max(chunk, 1)):
        block = np.arange(first, min(first + 2 * max(chunk, 1), n))
        sims = unit[block] @ unit.T
        later = np.arange(n)[None, :] > block[:, None]
        later[np.arange(0, len(block), 2), block[0::2] + 1] = False  # the variant pair
        values = sims[later]
        right = np.searchsorted(ordered, values, side="right")
        above += int((len(ordered) - right).sum())
        ties += int((right - np.searchsorted(ordered, values, side="left")).sum())
        negatives += len(values)
        per_word += _word_aucs(kept, block, sims)
    rho = (above + 0.5 * ties) / (len(positive) * negatives) if negatives else float("nan")
    return float(rho), pd.DataFrame(per_word, columns=["word", "cosine", "auc"])


def _word_aucs(kept, block, sims) -> list[tuple[str, float, float]]:
    """Per word of a block: its variant pair against the other pairs holding either variant."""
    out = []
    for local in range(0, len(block), 2):
        i, j = block[local], block[local] + 1
        others = np.ones(sims.shape[1], dtype=bool)
        others[[i, j]] = False
        negative = np.concatenate([sims[local, others], sims[local + 1, others]])
        cosine = sims[local, j]
        out.append((kept[i // 2], cosine, roc_auc(np.array([cosine]), negative)))
    return out


def run_sdt(documents, rng: np.random.Generator, trainer=lsa_trainer, *, words=None,
            freq_min: int = 40, freq_max: int = 400, n_words: int = 500, overlap=(),
            max_overlap: float = 1.0, **trainer_options) -> dict:
    """Choose the words, build the pseudo-synonym corpus, train, and score SDT-rho.

    Parameters
    ----------
    documents : list of list of str
        The corpus (:func:`read_corpus`).
    rng : numpy.random.Generator
        Word draws, variant coins and the trainer's randomness.
    trainer : callable
        ``trainer(documents, rng, keep=..., **trainer_options) -> Vectors``.
    words : list of str, optional
        Split exactly these words: the main setup of section 2.2 passes the overlap set
        (:func:`overlap_words`). None: draw them from a frequency band (section 3).
    freq_min, freq_max, n_words, overlap, max_overlap
        The band draw, see :func:`select_words`.

    Returns
    -------
    dict
        ``sdt_rho``, ``mode`` (``overlap`` or ``band``), ``words`` (split), ``scored`` (both
        variants in the model), ``band`` (band mode), ``in_overlap`` (split words that are in
        ``overlap``), ``vocabulary``, ``per_word`` (DataFrame).
    """
    mode = "band" if words is None else "overlap"
    if words is None:
        words = select_words(documents, rng, freq_min=freq_min, freq_max=freq_max,
                             n_words=n_words, overlap=overlap, max_overlap=max_overlap)
        if len(words) < 2:
            raise InputError(f"only {len(words)} words with {freq_min} < count < {freq_max}; "
                             "widen the frequency band", field="freq_min")
    elif len(words) < 2:
        raise InputError(f"only {len(words)} words of the norms in the corpus vocabulary; "
                         "lower the vocabulary threshold or draw words by frequency band",
                         field="words")
    corpus = pseudo_synonym_corpus(documents, words, rng)
    keep = [variant(w, k) for w in words for k in (1, 2)]
    vectors = trainer(corpus, rng, keep=keep, **trainer_options)
    rho, per_word = sdt_rho(vectors, words)
    result = {"sdt_rho": rho, "mode": mode, "words": len(words), "scored": len(per_word)}
    if mode == "band":
        result["band"] = [freq_min, freq_max]
    result["in_overlap"] = len(set(words) & set(overlap)) if mode == "band" else len(words)
    return {**result, "vocabulary": len(vectors), "per_word": per_word}


def median_associate_rank(vectors: Vectors, usf: pd.DataFrame, n_associates: int = 3,
                          chunk: int = 256) -> dict:
    """Median rank of the first associates of each cue (Fourtassi & Dupoux 2014, 2.1).

    Overlap set: USF cues (lower-cased) in the vocabulary. For each overlap cue, its
    associates in the overlap set are taken in order of forward strength (FSG); the first
    ``n_associates`` are ranked among all other overlap words by cosine with the cue (1 = most
    similar; ties count against the associate).

    Returns
    -------
    dict
        ``overlap`` (words), ``median_ranks`` (one per associate position), ``median_rank``
        (their mean, lower is better), ``cues`` (per position, cues with that many associates).
    """
    index = vectors.key_index("lower")
    cues = sorted({c.lower() for c in usf["cue"].dropna()} & set(index))
    if len(cues) < 2:
        raise InputError(f"only {len(cues)} USF cues in the model vocabulary")
    position = {w: i for i, w in enumerate(cues)}
    frame = usf.assign(cue=usf["cue"].str.lower(), target=usf["target"].str.lower())
    frame = frame[frame["cue"].isin(position) & frame["target"].isin(position)
                  & (frame["cue"] != frame["target"])]
    frame = frame.sort_values(["cue", "fsg"], ascending=[True, False], kind="stable")
    frame = frame.drop_duplicates(["cue", "target"])
    frame = frame.assign(order=frame.groupby("cue").cumcount())
    frame = frame[frame["order"] < n_associates]
    targets = np.full((len(cues), n_associates), -1, dtype=np.int64)
    targets[frame["cue"].map(position).to_numpy(dtype=np.int64),
            frame["order"].to_numpy(dtype=np.int64)] = \
        frame["target"].map(position).to_numpy(dtype=np.int64)
    unit = vectors.unit()[[index[w] for w in cues]]
    ranks = np.full(targets.shape, np.nan)
    for first in range(0, len(cues), chunk):
        rows = np.arange(first, min(first + chunk, len(cues)))
        sims = unit[rows] @ unit.T
        sims[np.arange(len(rows)), rows] = -np.inf
        has = targets[rows] >= 0
        target_sims = np.take_along_axis(sims, np.maximum(targets[rows], 0), axis=1)
        better = (sims[:, :, None] >= target_sims[:, None, :]).sum(axis=1)
        ranks[rows] = np.where(has, better, np.nan)
    medians = [float(np.nanmedian(ranks[:, k])) if np.isfinite(ranks[:, k]).any()
               else float("nan") for k in range(n_associates)]
    return {"overlap": len(cues), "median_ranks": medians,
            "median_rank": float(np.mean(medians)),
            "cues": [int(np.isfinite(ranks[:, k]).sum()) for k in range(n_associates)]}


#: the Snowball English stop list (Martin Porter, BSD), packaged among the protocol files
SNOWBALL = "tr9856_stopwords_snowball_english.txt"


def sdt_stop_words(stopwords: str | None) -> tuple[str, frozenset[str]]:
    """The stop list of ``lexgold sdt``: its name and words.

    ``"snowball"`` (the default) is the Snowball English list packaged with lexgold (127
    function words: "the, of, to, and ..."); ``"none"`` or None, no stop list; else a file, one
    word per line (``#`` comments).
    """
    if stopwords in (None, "", "none"):
        return "none", frozenset()
    if stopwords == "snowball":
        packaged = Path(str(resources.files("lexgold.protocols") / SNOWBALL))
        return stopwords, read_stop_words(packaged)
    if not Path(stopwords).is_file():
        raise InputError("stop list not found (a file, 'snowball' or 'none')", path=stopwords,
                         field="--stopwords")
    return str(stopwords), read_stop_words(stopwords)


def sdt_files(corpus, *, seed: int = 0, doc_size: int = 10, trainer: str = "lsa",
              dim: int = 300, min_count: int = 10, words: str = "overlap", freq_min: int = 40,
              freq_max: int = 400, n_words: int = 500, max_overlap: float = 0.10,
              stopwords: str | None = "snowball", median_rank: bool = False,
              usf_dir=None) -> dict:
    """``lexgold sdt``: SDT-rho on the pseudo-synonym corpus, optionally the Median Rank.

    ``words="overlap"`` splits every word of the overlap set (USF cues in the vocabulary of
    ``min_count``; Fourtassi & Dupoux 2014, section 2.2); ``words="band"`` draws ``n_words``
    from ``freq_min < count < freq_max`` with at most ``max_overlap`` of them in the overlap
    set (section 3). The stop list is removed before the vocabulary is counted (section 2).
    """
    if words not in ("overlap", "band"):
        raise InputError(f"expected overlap or band, found {words!r}", field="--words")
    stop_name, stop = sdt_stop_words(stopwords)
    documents = read_corpus(corpus, doc_size, stop)
    train = get_trainer(trainer)
    rng = np.random.default_rng(seed)
    usf = read_usf(usf_dir)
    overlap = overlap_words(documents, usf_words(usf), min_count)
    result = run_sdt(documents, rng, train, words=overlap if words == "overlap" else None,
                     freq_min=freq_min, freq_max=freq_max, n_words=n_words, overlap=overlap,
                     max_overlap=max_overlap, dim=dim, min_count=min_count)
    result = {"corpus": str(corpus), "documents": len(documents), "doc_size": doc_size,
              "trainer": trainer, "dim": dim, "min_count": min_count, "seed": seed,
              "stopwords": {"list": stop_name, "words": len(stop)},
              "overlap": len(overlap),
              **({"max_overlap": max_overlap} if words == "band" else {}), **result}
    if median_rank:
        original = train(documents, np.random.default_rng(seed), dim=dim, min_count=min_count)
        result["median_rank"] = median_associate_rank(original, usf)
    return result
