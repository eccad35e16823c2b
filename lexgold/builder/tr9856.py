"""TR9856 builder: topic lexicons and the pairs to annotate (Levy et al. 2015, section 3).

Steps, each in its own module:

1. topics, their articles and S_def (section 3.1, 3.3): :mod:`lexgold.builder.tr9856_topics`;
2. corpus reading (:mod:`lexgold.builder.corpus`), sentences and n-gram terms
   (:mod:`lexgold.builder.terms`), the hypergeometric test with Bonferroni correction
   (section 3.2), and the terms nearly always inside a longer lexicon term taken out
   (**Decision**): :mod:`lexgold.builder.tr9856_lexicon`;
3. pair selection (section 3.3), here: S_top,n = the 10 n-terms with the smallest p (ranked
   by log p, which does not underflow),
   S_misc,n = 10 other n-terms of the lexicon drawn at random, the pairs S_def x S_top,n and
   S_def x S_misc,n for n = 1..3, and 60 x |S_def| pairs drawn at random from
   (union of S_top,n) x (union of S_misc,m). Every pair carries its topic.

:func:`build_tr9856` runs them and writes ``lexicon.csv``, ``pairs.csv`` and ``report.json``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections import Counter
from importlib import resources
from pathlib import Path
from typing import Annotated, Literal

import numpy as np
import regex
import pandas as pd

from lexgold.compression import sha256_file
from lexgold.builder.corpus import TextFolder, WikiDump, gensim_wiki_sample
from lexgold.builder.multistream import open_corpus
from lexgold.builder.terms import TermOptions, normalise_terms
from lexgold.tables import read_stop_words
from lexgold.builder.tr9856_lexicon import (
    count_corpus,
    drop_fragments,
    hypergeometric_lexicon,
    proper_names,
    term_table,
)
from lexgold.builder.tr9856_topics import Topic, read_topics
from lexgold.errors import InputError
from lexgold.manifest import LIBRARIES, run_manifest
from lexgold.protocols import Check, between, load_protocol, parse_section

#: topics file grouping the articles of gensim's Wikipedia sample (the embedded default)
DEFAULT_TOPICS = "tr9856_enwiki_sample_topics.toml"
#: ``log_p`` last: the first seven columns are those of earlier releases
LEXICON_COLUMNS = ["topic", "term", "n", "x", "p", "p_bonferroni", "term_sentences", "log_p"]
PAIR_COLUMNS = ["topic", "term1", "term2", "source"]
#: Wikipedia's standard appendix sections (Manual of Style, "Layout"): lists of references and
#: links, not prose about the topic
APPENDIX_SECTIONS = ("See also", "Notes", "Notes and references", "References", "Citations",
                     "Sources", "Bibliography", "Further reading", "External links")


def _is_regex(text: str) -> bool:
    try:
        regex.compile(text)
    except regex.error:
        return False
    return True


Count = Annotated[int, between(0)]
NON_EMPTY = Check("one or more", lambda values: len(values) > 0)
REGEX = Check("a regular expression", _is_regex)


@dataclasses.dataclass
class TR9856Build:
    """The ``[build]`` table of ``protocols/tr9856.toml``; defaults are the paper's values."""

    ngram_sizes: Annotated[list[Annotated[int, between(1)]], NON_EMPTY] = dataclasses.field(
        default_factory=lambda: [1, 2, 3])
    alpha: Annotated[float, between(0, 1, low_open=True)] = 0.05
    fragment_share: Annotated[float, between(0, 1)] = 0.9
    top_terms_per_n: Count = 10
    misc_terms_per_n: Count = 10
    random_pairs_per_s_def: Count = 60
    exclude_s_def_terms: bool = True
    sentence_splitter: Literal["punkt-trained", "punkt-untrained", "blingfire"] = "punkt-trained"
    punkt_train_chars: Count = 10_000_000
    token_pattern: Annotated[str, REGEX] = r"\w+(?:[-.]\w+)*"
    lowercase: bool = True
    stop_words: str = "tr9856_stopwords_snowball_english.txt"
    skip_wiki_sections: list[str] = dataclasses.field(default_factory=lambda: list(
        APPENDIX_SECTIONS))
    skip_reference_like: bool = True


def load_build_config(protocol: dict) -> TR9856Build:
    """Check the ``[build]`` table; a bad value raises :class:`InputError` naming its key."""
    return parse_section(TR9856Build, protocol, "build")


def stop_words_path(config: TR9856Build, protocol: dict) -> Path | None:
    """The stop list file: relative names are looked up beside the protocol file, then among
    lexgold's packaged protocol files. ``""`` means no stop list."""
    if not config.stop_words:
        return None
    name = Path(config.stop_words)
    candidates = [name] if name.is_absolute() else [
        Path(protocol.get("_path", ".")).parent / name,
        Path(str(resources.files("lexgold.protocols") / str(name)))]
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    raise InputError(f"stop list {config.stop_words!r} not found", path=protocol.get("_path"),
                     field="build.stop_words")


def select_terms(lexicon: pd.DataFrame, n: int, top: int, misc: int,
                 rng: np.random.Generator) -> tuple[list[str], list[str]]:
    """S_top,n and S_misc,n of one topic (section 3.3).

    Parameters
    ----------
    lexicon : pandas.DataFrame
        The topic's lexicon (columns ``term``, ``n``, ``log_p``), S_def terms already removed.
    n : int
        Term length.
    top, misc : int
        Sizes of S_top,n and S_misc,n (the paper: 10 and 10).
    rng : numpy.random.Generator
        Breaks exact ties in log p (terms with the same counts x and n_t: equally topical, and
        the paper does not say how to order them) and draws S_misc,n; a seed gives one result.

    Returns
    -------
    (list of str, list of str)
        S_top,n by increasing p, and S_misc,n by increasing p. Either is shorter when the
        lexicon has too few n-terms.

    Notes
    -----
    Terms are ranked by log p, not p: p underflows to 0.0 for strongly topical terms (below
    about 1e-308), and a ranking by p would then pick S_top,n at random among all of them.
    """
    terms = lexicon[lexicon["n"] == n].sort_values("term", kind="stable")
    terms = terms.assign(tie=rng.permutation(len(terms))).sort_values(["log_p", "tie"],
                                                                      kind="stable")
    s_top = terms["term"].iloc[:top].tolist()
    rest = terms.iloc[top:]
    drawn = np.sort(rng.choice(len(rest), size=min(misc, len(rest)), replace=False))
    return s_top, rest["term"].iloc[drawn].tolist()


def topic_pairs(topic: str, s_def: list[str], s_top: dict[int, list[str]],
                s_misc: dict[int, list[str]], random_pairs_per_s_def: int,
                rng: np.random.Generator) -> pd.DataFrame:
    """The pairs of one topic (section 3.3), columns :data:`PAIR_COLUMNS`.

    ``source`` says which set a pair comes from: ``def-top-<n>`` (S_def x S_top,n),
    ``def-misc-<n>`` (S_def x S_misc,n), or ``top-misc`` (60 x |S_def| pairs drawn without
    replacement from the union of S_top,n times the union of S_misc,m; fewer when that product
    is smaller).
    """
    rows = []
    for n in sorted(s_top):
        rows += [(topic, d, t, f"def-top-{n}") for d in s_def for t in s_top[n]]
    for n in sorted(s_misc):
        rows += [(topic, d, t, f"def-misc-{n}") for d in s_def for t in s_misc[n]]
    tops = [t for n in sorted(s_top) for t in s_top[n]]
    miscs = [t for n in sorted(s_misc) for t in s_misc[n]]
    wanted = random_pairs_per_s_def * len(s_def)
    drawn = np.sort(rng.choice(len(tops) * len(miscs), size=min(wanted, len(tops) * len(miscs)),
                               replace=False))
    rows += [(topic, tops[i // len(miscs)], miscs[i % len(miscs)], "top-misc") for i in drawn]
    return pd.DataFrame(rows, columns=PAIR_COLUMNS)


def topic_rng(seed: int, topic: str) -> np.random.Generator:
    """A generator per topic, so adding or reordering topics leaves the others' draws alone."""
    if seed < 0:
        raise InputError(f"expected a seed >= 0, found {seed}", field="--seed")
    return np.random.default_rng([seed, int.from_bytes(hashlib.sha256(topic.encode()).digest()[:8],
                                                       "big")])


def topic_articles(topics: list[Topic], corpus: WikiDump | TextFolder, topics_path: Path
                   ) -> dict[str, list[str]]:
    """Title -> keys of the topics listing it; a folder topic without ``articles`` takes its
    sub-folder. A topic without any article is an :class:`InputError`."""
    topics_of: dict[str, list[str]] = {}
    for topic in topics:
        titles = list(topic.articles)
        if not titles and isinstance(corpus, TextFolder):
            titles = corpus.titles_under(topic.key)
        if not titles:
            hint = (f"list them, or put .txt files in {corpus.path / topic.key}"
                    if isinstance(corpus, TextFolder) else "list the article titles")
            raise InputError(f"topic has no articles: {hint}", path=topics_path,
                             field=f"topics.{topic.key}.articles")
        for title in titles:
            keys = topics_of.setdefault(title, [])
            if topic.key not in keys:  # "apollo 11" and "Apollo 11" are one article
                keys.append(topic.key)
    return topics_of


def check_found(topics: list[Topic], topics_of: dict[str, list[str]], found: set[str],
                corpus: WikiDump | TextFolder, topics_path: Path) -> None:
    """Every listed article must be in the corpus: a typo must not shrink a topic silently."""
    for title, keys in topics_of.items():
        if title not in found:
            redirect = corpus.redirects.get(title)
            hint = f" (it redirects to {redirect!r}: list that title)" if redirect else ""
            raise InputError(f"article {title!r} not found in {corpus.path}{hint}",
                             path=topics_path, field=f"topics.{keys[0]}.articles")


def sample_topic(topic: Topic, lexicon: pd.DataFrame, config: TR9856Build,
                 options: TermOptions, seed: int) -> tuple[pd.DataFrame, dict]:
    """Section 3.3 for one topic: S_top,n, S_misc,n and the pairs; also the topic's report."""
    s_def = list(dict.fromkeys(normalise_terms(topic.s_def, options)))
    if config.exclude_s_def_terms:
        lexicon = lexicon[~lexicon["term"].isin(s_def)]
    rng = topic_rng(seed, topic.key)
    s_top, s_misc, shortfalls = {}, {}, []
    for n in sorted(set(config.ngram_sizes)):
        s_top[n], s_misc[n] = select_terms(lexicon, n, config.top_terms_per_n,
                                           config.misc_terms_per_n, rng)
        for name, got, wanted in (("S_top", s_top[n], config.top_terms_per_n),
                                  ("S_misc", s_misc[n], config.misc_terms_per_n)):
            if len(got) < wanted:
                shortfalls.append(f"{name},{n}: {len(got)} of {wanted} terms")
    pairs = topic_pairs(topic.key, s_def, s_top, s_misc, config.random_pairs_per_s_def, rng)
    random_wanted = config.random_pairs_per_s_def * len(s_def)
    random_got = int((pairs["source"] == "top-misc").sum())
    if random_got < random_wanted:
        shortfalls.append(f"top-misc: {random_got} of {random_wanted} pairs")
    report = {"s_def": s_def, "s_top": {str(n): t for n, t in s_top.items()},
              "s_misc": {str(n): t for n, t in s_misc.items()},
              "pairs": {k: int(v) for k, v in Counter(pairs["source"]).items()},
              "shortfalls": shortfalls}
    return pairs, report


def tr9856_manifest(protocol: dict, config: TR9856Build, corpus: WikiDump | TextFolder,
                    topics_path: Path, stop_path: Path | None, seed: int) -> dict:
    """What a run depended on (:func:`lexgold.manifest.run_manifest`, the builders' one
    schema): the ``[build]`` settings, checksums of the corpus, topics and stop list, library
    versions, seed."""
    resources = {"corpus": [{"file": Path(corpus.path).name, "sha256": corpus.sha256}],
                 "topics": [{"file": topics_path.name, "sha256": sha256_file(topics_path)}]}
    if stop_path is not None:
        resources["stop_words"] = [{"file": stop_path.name, "sha256": sha256_file(stop_path)}]
    return run_manifest(protocol, seed, dataclasses.asdict(config), resources,
                        (*LIBRARIES, "mwparserfromhell"))


def build_tr9856(corpus: str | Path | None, topics: str | Path | None, out_dir: str | Path, *,
                 seed: int = 0, protocol: str | Path = "tr9856", all_terms: bool = False,
                 workers: int = 1, show_progress: bool | None = None) -> dict:
    """Build TR9856 topic lexicons and pairs; write ``lexicon.csv``, ``pairs.csv``, ``report.json``.

    Parameters
    ----------
    corpus : path-like or None
        A MediaWiki XML dump (``.xml``/``.bz2``) or a folder of ``<title>.txt`` articles.
        None: gensim's shortened English Wikipedia dump (needs gensim installed).
    topics : path-like or None
        Topics file (see :mod:`lexgold.builder.tr9856_topics`). None only with the default
        corpus: the packaged topics grouping that dump's articles.
    out_dir : path-like
        Output folder, created if missing.
    seed : int
        Seed of the draws of S_misc,n, of the random pairs and of ties in p.
    protocol : str or path-like
        Protocol file or packaged name; its ``[build]`` table sets every parameter.
    all_terms : bool
        Also write ``terms.csv``: every term tested, kept or not (columns of ``lexicon.csv``
        plus ``topic_sentences`` K, ``sentences`` N and ``in_lexicon``), to audit the lexicon.
    workers : int
        Processes that split and count the articles (the output does not depend on it).

    Returns
    -------
    dict
        The report written to ``report.json``.

    References
    ----------
    Levy, Ein-Dor, Hummel, Rinott & Slonim (2015), TR9856: A multi-word term relatedness
    benchmark, ACL, section 3.
    """
    if Path(out_dir).exists() and not Path(out_dir).is_dir():
        raise InputError("exists and is not a folder", path=out_dir, field="--out")
    topic_rng(seed, "")  # a bad seed fails before the corpus is read
    if corpus is None:
        corpus = gensim_wiki_sample()
        topics = DEFAULT_TOPICS if topics is None else topics
    if topics is None:
        raise InputError("a topics file is required with --corpus", field="--topics")
    protocol_data = load_protocol(protocol)
    config = load_build_config(protocol_data)
    stop_path = stop_words_path(config, protocol_data)
    options = TermOptions(tuple(sorted(set(config.ngram_sizes))), config.lowercase,
                          config.token_pattern,
                          read_stop_words(stop_path) if stop_path else frozenset())
    topics_path = Path(topics)
    if not topics_path.is_file() and str(topics) == DEFAULT_TOPICS:
        topics_path = Path(str(resources.files("lexgold.protocols") / DEFAULT_TOPICS))
    topic_list = read_topics(topics_path)
    reader = open_corpus(corpus, config.skip_wiki_sections, config.skip_reference_like)
    topics_of = topic_articles(topic_list, reader, topics_path)
    counts, found = count_corpus(reader, topics_of, options, show_progress=show_progress,
                                 splitter=config.sentence_splitter,
                                 punkt_train_chars=config.punkt_train_chars, workers=workers)
    check_found(topic_list, topics_of, found, reader, topics_path)
    names = proper_names(counts) if config.lowercase and config.fragment_share > 0 \
        else frozenset()
    tested = drop_fragments(hypergeometric_lexicon(term_table(counts), config.alpha,
                                                   config.ngram_sizes), config.fragment_share,
                            names)
    if all_terms:
        Path(out_dir).mkdir(parents=True, exist_ok=True)
        audit = ["topic_sentences", "sentences", "in_lexicon", "part_of"]
        tested[LEXICON_COLUMNS + audit].to_csv(
            Path(out_dir) / "terms.csv", index=False, lineterminator="\n")
    return _write(topic_list, tested, counts, config, options, seed, Path(out_dir),
                  tr9856_manifest(protocol_data, config, reader, topics_path, stop_path, seed))


def _write(topic_list, tested, counts, config, options, seed, out_dir: Path, run: dict) -> dict:
    lexicon = tested[tested["in_lexicon"]]
    order = {t.key: i for i, t in enumerate(topic_list)}
    lexicon = lexicon.assign(order=lexicon["topic"].map(order)).sort_values(
        ["order", "log_p", "n", "term"], kind="stable")
    pairs, topic_reports = [], {}
    for topic in topic_list:
        topic_lexicon = lexicon[lexicon["topic"] == topic.key]
        topic_pairs_frame, sampled = sample_topic(topic, topic_lexicon, config, options, seed)
        pairs.append(topic_pairs_frame)
        topic_tested = tested[tested["topic"] == topic.key]
        topic_reports[topic.key] = {
            "definition": topic.definition,
            "articles": counts.topic_articles.get(topic.key, 0),
            "sentences": counts.topic_sentences.get(topic.key, 0),
            "terms_tested": len(topic_tested),
            "fragments": dict(topic_tested.loc[topic_tested["part_of"] != "",
                                               ["term", "part_of"]].itertuples(index=False)),
            "lexicon": {str(n): int((topic_lexicon["n"] == n).sum())
                        for n in sorted(set(config.ngram_sizes))},
            **sampled}
    out_dir.mkdir(parents=True, exist_ok=True)
    lexicon[LEXICON_COLUMNS].to_csv(out_dir / "lexicon.csv", index=False, lineterminator="\n")
    pairs_frame = pd.concat(pairs, ignore_index=True) if pairs else pd.DataFrame(
        columns=PAIR_COLUMNS)
    pairs_frame.to_csv(out_dir / "pairs.csv", index=False, lineterminator="\n")
    report = {"builder": "tr9856", "paper": "Levy et al. 2015, section 3",
              "manifest": run, "config": dataclasses.asdict(config),
              "articles": counts.articles, "sentences": counts.sentences,
              "lexicon_terms": len(lexicon), "pairs": len(pairs_frame),
              "topics": topic_reports}
    (out_dir / "report.json").write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n",
                                         encoding="utf-8")
    return report
