"""SDT-rho: the pseudo-synonym same-different test of Fourtassi & Dupoux (2014).

Section 2.2: in a copy of the corpus every occurrence of each chosen word w is replaced at
random by one of two variants (``w#1``, ``w#2``, probability 1/2 each); a model is trained on
that corpus; SDT-rho is the ROC AUC of the cosine of variant pairs against the cosine of all
other pairs of the chosen words' variants (0.5 chance, 1 perfect). Section 3: words drawn at
random from a frequency band (the paper's best: 40 < count < 400, 500 words); words occurring
once cannot be split. Section 4: the per-word variant, the AUC of one word's variant pair
against the other pairs containing either variant.

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

import numpy as np
import pandas as pd
from scipy import sparse, stats
from scipy.sparse.linalg import svds

from lexgold.compression import open_input
from lexgold.errors import InputError
from lexgold.evaluate.vectors import Vectors

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


def select_words(documents, rng: np.random.Generator, *, freq_min: int = 40,
                 freq_max: int = 400, n_words: int = 500, exclude=()) -> list[str]:
    """Draw up to ``n_words`` words with ``freq_min < count < freq_max`` (and count >= 2).

    Returns the sorted sample; fewer words than asked when the band is smaller.
    """
    counts = Counter(t for doc in documents for t in doc)
    exclude = set(exclude)
    band = sorted(w for w, c in counts.items()
                  if freq_min < c < freq_max and c >= 2 and w not in exclude)
    if len(band) <= n_words:
        return band
    return sorted(rng.choice(band, size=n_words, replace=False).tolist())


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


def sdt_rho(vectors: Vectors, words) -> tuple[float, pd.DataFrame]:
    """SDT-rho over the chosen words, and the per-word AUC.

    Parameters
    ----------
    vectors : Vectors
        Trained on the pseudo-synonym corpus.
    words : list of str
        The split words; a word whose two variants are not both in the vocabulary is left out.

    Returns
    -------
    rho : float
        ROC AUC of variant-pair cosines against the cosines of every other pair of variants.
    per_word : pandas.DataFrame
        ``word, cosine, auc``: one word's pair against the other pairs holding either variant.
    """
    index = vectors.key_index("exact")
    kept = [w for w in words if variant(w, 1) in index and variant(w, 2) in index]
    if len(kept) < 2:
        raise InputError(f"SDT needs at least 2 split words in the model; found {len(kept)}")
    rows = [index[variant(w, k)] for w in kept for k in (1, 2)]
    unit = vectors.unit()[rows].astype(np.float64)
    sims = unit @ unit.T
    n = len(rows)
    upper_i, upper_j = np.triu_indices(n, k=1)
    is_pair = (upper_i % 2 == 0) & (upper_j == upper_i + 1)
    values = sims[upper_i, upper_j]
    rho = roc_auc(values[is_pair], values[~is_pair])
    per_word = []
    for k, word in enumerate(kept):
        i, j = 2 * k, 2 * k + 1
        others = np.ones(n, dtype=bool)
        others[[i, j]] = False
        negative = np.concatenate([sims[i, others], sims[j, others]])
        per_word.append((word, sims[i, j], roc_auc(np.array([sims[i, j]]), negative)))
    return rho, pd.DataFrame(per_word, columns=["word", "cosine", "auc"])


def run_sdt(documents, rng: np.random.Generator, trainer=lsa_trainer, *, freq_min: int = 40,
            freq_max: int = 400, n_words: int = 500, **trainer_options) -> dict:
    """Select words, build the pseudo-synonym corpus, train, and score SDT-rho.

    Returns
    -------
    dict
        ``sdt_rho``, ``words`` (drawn), ``scored`` (both variants in the model), ``band``,
        ``vocabulary``, ``per_word`` (DataFrame).
    """
    words = select_words(documents, rng, freq_min=freq_min, freq_max=freq_max, n_words=n_words)
    if len(words) < 2:
        raise InputError(f"only {len(words)} words with {freq_min} < count < {freq_max}; "
                         "widen the frequency band", field="freq_min")
    corpus = pseudo_synonym_corpus(documents, words, rng)
    keep = [variant(w, k) for w in words for k in (1, 2)]
    vectors = trainer(corpus, rng, keep=keep, **trainer_options)
    rho, per_word = sdt_rho(vectors, words)
    return {"sdt_rho": rho, "words": len(words), "scored": len(per_word),
            "band": [freq_min, freq_max], "vocabulary": len(vectors), "per_word": per_word}


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
