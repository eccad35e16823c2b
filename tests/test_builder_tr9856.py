"""TR9856 builder (Levy et al. 2015, section 3): lexicons, pairs, readers, CLI."""

import bz2
import hashlib
import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from scipy.stats import hypergeom

from lexgold.builder.corpus import (IDENTIFIERS, TextFolder, WikiDump, gensim_wiki_sample,
                                    is_reference_heading, strip_wiki)
from lexgold.builder.terms import SentenceSplitter, TermOptions, tokens
from lexgold.tables import read_stop_words
from lexgold.builder.tr9856 import (
    build_tr9856,
    load_build_config,
    select_terms,
    stop_words_path,
    topic_pairs,
)
from lexgold.builder.tr9856_lexicon import (
    count_sentences,
    drop_fragments,
    hypergeometric_lexicon,
    hypergeometric_log_p,
    hypergeometric_p,
    proper_names,
)
from lexgold.builder.corpus import Article
from lexgold.cli import cli
from lexgold.errors import InputError
from lexgold.protocols import load_protocol

# --------------------------------------------------------------------------- the HG test


def random_hg_cases(seed, size):
    """``size`` random (x, n_t, K, N) of the hypergeometric test, 1 <= x <= min(K, n_t)."""
    rng = np.random.default_rng(seed)
    N = rng.integers(50, 2000, size=size)
    K = (N * rng.uniform(0.05, 0.6, size=size)).astype(int) + 1
    n_t = (N * rng.uniform(0.001, 0.3, size=size)).astype(int) + 1
    x = np.array([rng.integers(1, min(k, n) + 1) for k, n in zip(K, n_t)])
    return x, n_t, K, N


def test_p_value_equals_direct_scipy_sum_and_exact_fraction():
    x, n_t, K, N = random_hg_cases(seed=0, size=200)
    got = hypergeometric_p(x, n_t, K, N)
    direct = [hypergeom.pmf(np.arange(xi, min(ki, ni) + 1), Ni, ki, ni).sum()
              for xi, ni, ki, Ni in zip(x, n_t, K, N)]
    np.testing.assert_allclose(got, direct, rtol=1e-9, atol=1e-300)
    # by hand: a term in 3 of 10 sentences, all 3 in a topic of 4 sentences:
    # P(X >= 3) = C(4,3) C(6,0) / C(10,3) = 4 / 120
    assert hypergeometric_p(3, 3, 4, 10)[0] == pytest.approx(4 / 120, rel=1e-12)
    assert hypergeometric_p(1, 5, 5, 10)[0] == pytest.approx(1 - math.comb(5, 5) / math.comb(10, 5))


def test_bonferroni_counts_the_terms_tested_per_topic():
    terms = pd.DataFrame({
        "topic": ["a", "a", "a", "a", "b", "b"],
        "term": ["t1", "t2", "t3 x", "t4 x y z", "t1", "t5"],
        "n": [1, 1, 2, 4, 1, 1], "x": [5, 1, 3, 2, 1, 4],
        "term_sentences": [5, 8, 3, 2, 5, 4], "topic_sentences": [10, 10, 10, 10, 20, 20],
        "sentences": [100] * 6})
    tested = hypergeometric_lexicon(terms, alpha=0.05, ngram_sizes=(1, 2, 3))
    assert "t4 x y z" not in set(tested["term"])  # n = 4 is not tested: m(a) = 3
    for _, row in tested.iterrows():
        m = 3 if row["topic"] == "a" else 2
        p = hypergeom.sf(row["x"] - 1, row["sentences"], row["topic_sentences"],
                         row["term_sentences"])
        assert row["p"] == pytest.approx(p, rel=1e-12)
        assert row["p_bonferroni"] == pytest.approx(min(1.0, p * m), rel=1e-12)
        assert row["in_lexicon"] == (min(1.0, p * m) <= 0.05)
        assert row["log_p"] == pytest.approx(math.log(p), rel=1e-9)
    t1a = tested[(tested["topic"] == "a") & (tested["term"] == "t1")].iloc[0]
    assert t1a["p"] == pytest.approx(math.comb(10, 5) / math.comb(100, 5), rel=1e-12)
    assert bool(t1a["in_lexicon"])


def _exact_log_p(x, n_t, K, N):
    """log P(X >= x) from exact integer binomials (Python's math.log takes big integers)."""
    tail = sum(math.comb(K, k) * math.comb(N - K, n_t - k) for k in range(x, min(K, n_t) + 1))
    return math.log(tail) - math.log(math.comb(N, n_t))


def test_log_p_survives_where_p_underflows():
    # x = n_t = 300, K = 5,000, N = 100,000: p = C(K, 300) / C(N, 300) = prod (K - i) / (N - i)
    by_hand = math.fsum(math.log((5000 - i) / (100000 - i)) for i in range(300))
    assert by_hand < -900
    assert hypergeometric_p(300, 300, 5000, 100000)[0] == 0.0  # sf underflows
    assert hypergeom.sf(299, 100000, 5000, 300) == 0.0
    got = hypergeometric_log_p(300, 300, 5000, 100000)[0]
    assert got == pytest.approx(by_hand, rel=1e-12)
    assert got == pytest.approx(hypergeom.logsf(299, 100000, 5000, 300), rel=1e-12)
    # a tail of several terms, also below the smallest double
    x, n_t = np.array([250, 200, 40, 2]), np.array([300, 400, 300, 3])
    got = hypergeometric_log_p(x, n_t, 5000, 100000)
    for g, xi, ni in zip(got, x, n_t):
        assert g == pytest.approx(_exact_log_p(int(xi), int(ni), 5000, 100000), rel=1e-10)
    # where p is a normal double, log_p is log(p)
    x, n_t, K, N = random_hg_cases(seed=2, size=100)
    p = hypergeometric_p(x, n_t, K, N)
    np.testing.assert_allclose(hypergeometric_log_p(x, n_t, K, N), np.log(p), rtol=1e-12)


def test_s_top_ranks_by_log_p_when_p_underflows():
    # 12 terms of topic "a" with x = n_t = 250..261 (every p underflows to 0.0, log p differs)
    # and 5 ordinary terms: S_top,1 is the 10 most topical, in order, whatever the seed
    x = list(range(250, 262)) + [3, 4, 5, 6, 7]
    terms = pd.DataFrame({"topic": "a", "term": [f"t{i:02d}" for i in range(len(x))], "n": 1,
                          "x": x, "term_sentences": x, "topic_sentences": 5000,
                          "sentences": 100000})
    lexicon = hypergeometric_lexicon(terms)
    assert (lexicon["p"].iloc[:12] == 0.0).all() and lexicon["in_lexicon"].all()
    assert np.isfinite(lexicon["log_p"]).all()
    expected = [f"t{i:02d}" for i in range(11, 1, -1)]  # x = 261 first
    for seed in range(5):
        top, misc = select_terms(lexicon, 1, 10, 10, np.random.default_rng(seed))
        assert top == expected
        assert set(misc) == set(lexicon["term"]) - set(expected)


# --------------------------------------------------------------------------- hand corpus


def _hand_corpus(tmp_path: Path) -> tuple[Path, Path]:
    """Topic physics: 10 x "The quark is small."; topic pets: 10 x "The cat is small."."""
    corpus = tmp_path / "corpus"
    (corpus / "physics").mkdir(parents=True)
    (corpus / "other").mkdir()
    (corpus / "physics" / "Quarks.txt").write_text("The quark is small.\n" * 6, encoding="utf-8")
    (corpus / "physics" / "Hadrons.txt").write_text("The quark is small.\n" * 4, encoding="utf-8")
    (corpus / "other" / "Cats.txt").write_text("The cat is small.\n" * 10, encoding="utf-8")
    topics = tmp_path / "topics.toml"
    topics.write_text('[topics.physics]\ns_def = ["Particle physics"]\n\n'
                      '[topics.pets]\ns_def = ["Pets", "Cat"]\narticles = ["Cats"]\n',
                      encoding="utf-8")
    return corpus, topics


def _paper_protocol(tmp_path: Path) -> Path:
    """The packaged tr9856 protocol with ``fragment_share = 0``: the paper's lexicon."""
    text = Path(load_protocol("tr9856")["_path"]).read_text(encoding="utf-8")
    assert "fragment_share = 0.9\n" in text
    protocol = tmp_path / "paper.toml"
    protocol.write_text(text.replace("fragment_share = 0.9\n", "fragment_share = 0\n"),
                        encoding="utf-8")
    return protocol


def test_hand_made_corpus_gives_the_lexicon_computed_by_hand(tmp_path):
    """The paper's test (fragment_share = 0); with the default protocol "quark", whose every
    sentence holds "quark is small", leaves the lexicon (test_cli_builds_and_prints_a_summary)."""
    corpus, topics = _hand_corpus(tmp_path)
    report = build_tr9856(corpus, topics, tmp_path / "out", seed=3,
                          protocol=_paper_protocol(tmp_path))
    lexicon = pd.read_csv(tmp_path / "out" / "lexicon.csv")
    # N = 20 sentences, K = 10 per topic. Terms of "the quark is small" (the/is are stop words):
    # quark, small, "quark is small" -> m = 3. quark: x = n_t = 10, p = 1 / C(20, 10);
    # small: n_t = 20, p = 1 (not kept).
    assert report["sentences"] == 20
    assert report["topics"]["physics"]["sentences"] == 10
    assert report["topics"]["physics"]["articles"] == 2
    assert report["topics"]["physics"]["terms_tested"] == 3
    physics = lexicon[lexicon["topic"] == "physics"].set_index("term")
    assert sorted(physics.index) == ["quark", "quark is small"]
    p = 1 / math.comb(20, 10)
    assert physics.loc["quark", "p"] == pytest.approx(p, rel=1e-9)
    assert physics.loc["quark", "p_bonferroni"] == pytest.approx(3 * p, rel=1e-9)
    assert physics.loc["quark", "log_p"] == pytest.approx(-math.log(math.comb(20, 10)), rel=1e-9)
    assert physics.loc["quark is small", "n"] == 3
    assert list(physics["x"]) == [10, 10]
    # pets: S_def "cat" is in the lexicon but not paired with itself (exclude_s_def_terms)
    pets = lexicon[lexicon["topic"] == "pets"]
    assert sorted(pets["term"]) == ["cat", "cat is small"]
    pairs = pd.read_csv(tmp_path / "out" / "pairs.csv")
    assert pairs.values.tolist() == [
        ["physics", "particle physics", "quark", "def-top-1"],
        ["physics", "particle physics", "quark is small", "def-top-3"],
        ["pets", "pets", "cat is small", "def-top-3"],
        ["pets", "cat", "cat is small", "def-top-3"]]
    assert "S_top,1: 1 of 10 terms" in report["topics"]["physics"]["shortfalls"]
    assert "top-misc: 0 of 60 pairs" in report["topics"]["physics"]["shortfalls"]


def test_stop_words_and_numbers_never_start_or_end_a_term():
    from lexgold.builder.terms import sentence_terms
    options = TermOptions(stop_words=read_stop_words(
        stop_words_path(load_build_config(load_protocol("tr9856")), load_protocol("tr9856"))))
    words = tokens("The Nation of Islam met in 1965, and Kennedy's speech.", options)
    assert words == ["the", "nation", "of", "islam", "met", "in", "1965", "and", "kennedy", "s",
                     "speech"]
    terms = sentence_terms(words, options)
    assert {"nation", "nation of islam", "islam met", "kennedy", "speech"} <= terms
    assert not any(t.split()[0] in {"the", "of", "in", "and", "s", "1965"} for t in terms)
    assert not any(t.split()[-1] in {"the", "of", "in", "and", "s", "1965"} for t in terms)
    assert "in 1965" not in terms and "met in 1965" not in terms


# --------------------------------------------------------------------------- section 3.3


def _lexicon(sizes: dict[int, int], p=None) -> pd.DataFrame:
    rows = []
    for n, count in sizes.items():
        for i in range(count):
            rows.append({"term": " ".join([f"w{n}{i:02d}"] * n), "n": n,
                         "log_p": math.log((i + 1) * 1e-6 if p is None else p)})
    return pd.DataFrame(rows)


def test_s_top_is_smallest_p_and_s_misc_is_drawn_from_the_rest():
    lexicon = _lexicon({1: 25, 2: 12, 3: 3}).sample(frac=1, random_state=1)
    rng = np.random.default_rng(5)
    top1, misc1 = select_terms(lexicon, 1, 10, 10, rng)
    assert top1 == [f"w1{i:02d}" for i in range(10)]
    assert len(misc1) == 10 and set(misc1) <= {f"w1{i:02d}" for i in range(10, 25)}
    top2, misc2 = select_terms(lexicon, 2, 10, 10, rng)
    assert len(top2) == 10 and len(misc2) == 2 and not set(top2) & set(misc2)
    top3, misc3 = select_terms(lexicon, 3, 10, 10, rng)
    assert len(top3) == 3 and misc3 == []
    # S_misc is random: different seeds give different draws from the same 15 terms
    draws = {tuple(select_terms(lexicon, 1, 10, 10, np.random.default_rng(s))[1]) for s in range(8)}
    assert len(draws) > 1


def test_exact_ties_in_log_p_are_broken_by_the_seed():
    lexicon = _lexicon({1: 30}, p=0.001)
    first = select_terms(lexicon, 1, 10, 10, np.random.default_rng(1))
    assert first == select_terms(lexicon, 1, 10, 10, np.random.default_rng(1))
    others = {tuple(select_terms(lexicon, 1, 10, 10, np.random.default_rng(s))[0])
              for s in range(2, 6)}
    assert len(others | {tuple(first[0])}) > 1


def test_pairs_follow_section_3_3():
    s_def = ["doping", "professional sports"]
    s_top = {1: [f"t{i}" for i in range(10)], 2: [f"t {i}" for i in range(10)], 3: ["a b c"]}
    s_misc = {1: [f"m{i}" for i in range(10)], 2: ["m x"], 3: []}
    pairs = topic_pairs("doping", s_def, s_top, s_misc, 60, np.random.default_rng(0))
    counts = pairs["source"].value_counts()
    assert counts["def-top-1"] == 20 and counts["def-top-2"] == 20 and counts["def-top-3"] == 2
    assert counts["def-misc-1"] == 20 and counts["def-misc-2"] == 2 and "def-misc-3" not in counts
    randoms = pairs[pairs["source"] == "top-misc"]
    assert len(randoms) == 60 * len(s_def)  # 120 of the 21 x 11 = 231 possible
    tops = {t for ts in s_top.values() for t in ts}
    miscs = {t for ts in s_misc.values() for t in ts}
    assert set(randoms["term1"]) <= tops and set(randoms["term2"]) <= miscs
    assert not randoms.duplicated(["term1", "term2"]).any()
    assert (pairs["topic"] == "doping").all()
    small = topic_pairs("t", s_def, {1: ["a", "b"]}, {1: ["c"]}, 60, np.random.default_rng(0))
    assert (small["source"] == "top-misc").sum() == 2  # product smaller than 120: all of it


# --------------------------------------------------------------------------- readers


def test_strip_wiki_keeps_prose_only():
    text = ("'''Apollo 11''' was the first [[spaceflight]] that landed [[human]]s on the "
            "[[Moon|moon]].<ref name=a>{{cite web|title=NASA}}</ref>\n== Crew ==\n"
            "{{Infobox|name=x}}Armstrong<!-- hidden --> walked.\n[[File:A.jpg|thumb|Caption]]\n"
            "[[Category:Apollo program]]\n[[de:Apollo 11]]")
    assert strip_wiki(text) == ("Apollo 11 was the first spaceflight that landed humans on the "
                                "moon.\nArmstrong walked.")
    # appendix sections go, with their sub-sections, even when markup nests them in a tag
    text = ("<div>Prose about it.\n== References ==\nSmith, Oxford University Press.\n"
            "=== Books ===\nISBN 1\n== Legacy ==\nMore prose.</div>")
    assert strip_wiki(text, ["References"]) == "Prose about it.\nMore prose."
    assert "Oxford University Press" in strip_wiki(text)


REAL_MARKUP = Path(__file__).parent / "data" / "enwiki_reference_sections.wiki"


def test_reference_like_sections_and_identifiers_dropped_from_real_markup():
    """Real markup of gensim's Wikipedia sample (source in the file's first comment): the
    Editions list of "Animal Farm" and the Selected bibliography of "Arthur Schopenhauer" are
    dropped by heading rule; identifiers with their numbers go from any text left."""
    text = REAL_MARKUP.read_text(encoding="utf-8")
    appendix = load_build_config(load_protocol("tr9856")).skip_wiki_sections
    before = strip_wiki(text, appendix)                    # the appendix titles only
    assert "ISBN 0-451-51679-6 (paperback, 1956, Signet Classic)" in before.splitlines()
    assert "1816 ISBN 978-0-85496-988-3" in before and "LCCN 46006290" in before
    after = strip_wiki(text, appendix, reference_like=True)
    assert after.startswith("In The Daleks' Master Plan, a 1966 episode") and "\n" not in after
    assert not re.search(r"isbn|lccn|\d{3}-\d", after, re.IGNORECASE)
    # the identifier rule alone, on the real lines it meets when a heading escapes the rule
    lines = IDENTIFIERS.sub("", before).splitlines()
    assert "(paperback, 1956, Signet Classic)" in [line.strip() for line in lines]
    assert "On Vision and Colors (Ueber das Sehn und die Farben), 1816" in [line.strip() for line in lines]
    assert not re.search(r"ISBN|LCCN|0-451", "\n".join(lines))
    assert [is_reference_heading(t) for t in ("Editions", "Selected bibliography", "Online",
                                              "Notes and references", "Works cited",
                                              "Life", "Influence", "Literature")] == [
        True, True, False, True, True, False, False, False]
    assert load_build_config(load_protocol("tr9856")).skip_reference_like is True


_XML = """<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/">
<siteinfo><sitename>Test</sitename></siteinfo>
<page><title>Moon</title><ns>0</ns><id>1</id><revision><text>The [[Moon]] orbits [[Earth]].
It is bright.</text></revision></page>
<page><title>Luna</title><ns>0</ns><id>2</id><redirect title="Moon" /><revision>
<text>#REDIRECT [[Moon]]</text></revision></page>
<page><title>Talk:Moon</title><ns>1</ns><id>3</id><revision><text>chat</text></revision></page>
<page><title>Sun</title><ns>0</ns><id>4</id><revision><text>The Sun shines.</text></revision></page>
</mediawiki>"""


@pytest.mark.parametrize("name", ["dump.xml", "dump.xml.bz2"])
def test_wiki_dump_reader_streams_wanted_articles_and_hashes_the_file(tmp_path, name):
    path = tmp_path / name
    data = _XML.encode() if name.endswith(".xml") else bz2.compress(_XML.encode())
    path.write_bytes(data)
    dump = WikiDump(path)
    articles = list(dump.articles({"Moon", "Luna", "Talk:Moon"}))
    assert [(a.title, a.text) for a in articles] == [
        ("Moon", "The Moon orbits Earth.\nIt is bright.")]
    assert dump.redirects == {"Luna": "Moon"}
    assert dump.sha256 == hashlib.sha256(data).hexdigest()


def test_listed_redirect_is_named_in_the_error(tmp_path):
    (tmp_path / "dump.xml").write_text(_XML, encoding="utf-8")
    topics = tmp_path / "topics.toml"
    topics.write_text('[topics.moon]\ns_def = ["moon"]\narticles = ["Luna", "Sun"]\n')
    with pytest.raises(InputError,
                       match=r"topics\.moon\.articles.*'Luna' not found.*redirects to 'Moon'"):
        build_tr9856(tmp_path / "dump.xml", topics, tmp_path / "out")


def test_text_folder_rejects_duplicate_titles(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "Moon.txt").write_text("x")
    (tmp_path / "b" / "moon.txt").write_text("y")
    with pytest.raises(InputError, match="two articles titled 'Moon'"):
        TextFolder(tmp_path)


def test_trained_punkt_keeps_abbreviations_learnt_from_the_corpus():
    splitter = SentenceSplitter("punkt-trained")
    text = " ".join(f"The U.S. Army met the U.S. Navy in round {i}. Then they left." for i in
                    range(60))
    splitter.train(text)
    assert list(splitter.split("The U.S. Navy sailed. The army stayed.")) == [
        "The U.S. Navy sailed.", "The army stayed."]


# --------------------------------------------------------------------------- the wiki sample


@pytest.fixture(scope="module")
def wiki_runs(tmp_path_factory):
    base = tmp_path_factory.mktemp("tr9856")
    reports = {}
    for name, seed in (("a", 1), ("b", 1), ("c", 2)):
        reports[name] = build_tr9856(None, None, base / name, seed=seed, show_progress=False)
    return base, reports


@pytest.mark.slow                   # the whole builder on the Wikipedia sample
def test_wiki_sample_end_to_end(wiki_runs):
    base, reports = wiki_runs
    report = reports["a"]
    lexicon = pd.read_csv(base / "a" / "lexicon.csv", keep_default_na=False)
    pairs = pd.read_csv(base / "a" / "pairs.csv", keep_default_na=False)
    assert list(lexicon.columns) == ["topic", "term", "n", "x", "p", "p_bonferroni",
                                     "term_sentences", "log_p"]
    assert list(pairs.columns) == ["topic", "term1", "term2", "source"]
    assert set(report["topics"]) == {"space", "foreign_aid", "anarchism", "appeals", "zoos"}
    assert report["topics"]["space"]["definition"].startswith("Governments should fund")
    N = report["sentences"]
    sizes = [t["sentences"] for t in report["topics"].values()]
    assert max(sizes) < N < sum(sizes)  # "Agriculture" is in two topics, counted once in N
    for key, topic in report["topics"].items():
        rows = lexicon[lexicon["topic"] == key]
        assert len(rows) == sum(topic["lexicon"].values()) > 10
        K = topic["sentences"]
        p = hypergeom.sf(rows["x"] - 1, N, K, rows["term_sentences"])
        np.testing.assert_allclose(rows["p"], p, rtol=1e-9)
        np.testing.assert_allclose(
            rows["log_p"], hypergeom.logsf(rows["x"] - 1, N, K, rows["term_sentences"]),
            rtol=1e-8)
        for n in (1, 2, 3):  # by topic and increasing log p
            assert rows[rows["n"] == n]["log_p"].is_monotonic_increasing
        np.testing.assert_allclose(rows["p_bonferroni"],
                                   np.minimum(1, p * topic["terms_tested"]), rtol=1e-9)
        assert (rows["p_bonferroni"] <= 0.05).all() and rows["n"].isin([1, 2, 3]).all()
        _check_topic_pairs(key, topic, rows, pairs[pairs["topic"] == key])
    manifest = report["manifest"]
    assert manifest["resources"]["corpus"][0]["sha256"] == hashlib.sha256(
        gensim_wiki_sample().read_bytes()).hexdigest()
    assert manifest["protocol"]["sha256"] == load_protocol("tr9856")["_sha256"]
    assert manifest["seed"] == 1


def _check_topic_pairs(key, topic, rows, pairs):
    s_def = topic["s_def"]
    for n in ("1", "2", "3"):
        top, misc = topic["s_top"][n], topic["s_misc"][n]
        by_term = rows.set_index("term")["log_p"]
        if top and misc:
            assert by_term[top].max() <= by_term[misc].min()
        candidates = rows[(rows["n"] == int(n)) & ~rows["term"].isin(s_def)]
        assert len(top) == min(10, len(candidates))
        assert len(misc) == min(10, len(candidates) - len(top))
        assert sorted(pairs[pairs["source"] == f"def-top-{n}"]["term2"]) == sorted(top * len(s_def))
    randoms = pairs[pairs["source"] == "top-misc"]
    n_top = sum(len(v) for v in topic["s_top"].values())
    n_misc = sum(len(v) for v in topic["s_misc"].values())
    assert len(randoms) == min(60 * len(s_def), n_top * n_misc)
    assert set(pairs["term2"]) <= set(rows["term"])


def test_wiki_sample_counts_agree_with_a_naive_recount(wiki_runs):
    base, _ = wiki_runs
    lexicon = pd.read_csv(base / "a" / "lexicon.csv", keep_default_na=False)
    space = lexicon[lexicon["topic"] == "space"]
    probe = pd.concat([space[space["n"] == n].head(3) for n in (1, 2, 3)])
    topics = ["Apollo 11", "Apollo 8", "Astronaut", "Astronomer", "Amateur astronomy"]
    config = load_build_config(load_protocol("tr9856"))
    dump = WikiDump(gensim_wiki_sample(), config.skip_wiki_sections, config.skip_reference_like)
    texts = [a.text for a in dump.articles(set(topics))]
    splitter = SentenceSplitter("punkt-trained")
    for text in texts:
        splitter.train(text)
    options = TermOptions()
    joined = [" " + " ".join(tokens(s, options)) + " " for t in texts for s in splitter.split(t)]
    for term, x in zip(probe["term"], probe["x"]):
        assert sum(f" {term} " in s for s in joined) == x, term


def test_same_seed_same_bytes_other_seed_other_pairs(wiki_runs):
    base, _ = wiki_runs
    for name in ("lexicon.csv", "pairs.csv", "report.json"):
        assert (base / "a" / name).read_bytes() == (base / "b" / name).read_bytes(), name
    assert (base / "a" / "lexicon.csv").read_bytes() == (base / "c" / "lexicon.csv").read_bytes()
    assert (base / "a" / "pairs.csv").read_bytes() != (base / "c" / "pairs.csv").read_bytes()


@pytest.mark.slow                   # builds on the Wikipedia sample
def test_name_fragments_leave_the_lexicon_and_the_name_stays(wiki_runs, tmp_path):
    """Issue 34: the default build showed raters "napoleon / ayn". On gensim's sample "ayn" is
    in 13 sentences, 12 of them inside "ayn rand" (12/13 >= 0.9): with the fragment rule it
    leaves the lexicon and the pairs, "ayn rand" stays. Issue 47: raters still saw "state /
    rand": "rand" (147 sentences, 12 inside the name: the article calls her "Rand") passes the
    share rule, but it is the surname of a kept name whose given name is a fragment, so it
    goes with its name; "napoleon", "schopenhauer" (no such name kept) stay terms of their
    own. With fragment_share = 0 (the paper) "ayn" passes the test on the name's sentences."""
    base, reports = wiki_runs
    lexicon = pd.read_csv(base / "a" / "lexicon.csv", keep_default_na=False)
    pairs = pd.read_csv(base / "a" / "pairs.csv", keep_default_na=False)
    anarchism = set(lexicon.loc[lexicon["topic"] == "anarchism", "term"])
    assert {"ayn rand", "atlas shrugged", "napoleon", "schopenhauer"} <= anarchism
    assert not {"ayn", "shrugged", "rand"} & anarchism
    shown = set(pairs["term1"]) | set(pairs["term2"])
    assert "ayn rand" in shown and not {"ayn", "rand"} & shown
    fragments = reports["a"]["topics"]["anarchism"]["fragments"]
    assert fragments["ayn"] == "ayn rand" and fragments["shrugged"] == "atlas shrugged"
    assert fragments["rand"] == "ayn rand"
    assert reports["a"]["config"]["fragment_share"] == 0.9

    report = build_tr9856(None, None, tmp_path / "paper", seed=1,
                          protocol=_paper_protocol(tmp_path),
                          all_terms=True, show_progress=False)
    terms = pd.read_csv(tmp_path / "paper" / "terms.csv", keep_default_na=False)
    terms = terms[terms["topic"] == "anarchism"].set_index("term")
    assert terms.loc["ayn", "in_lexicon"] and terms.loc["ayn rand", "in_lexicon"]
    assert (terms.loc["ayn rand", "term_sentences"], terms.loc["ayn", "term_sentences"]) == (12, 13)
    assert terms.loc["rand", "term_sentences"] == 147
    assert report["topics"]["anarchism"]["fragments"] == {}
    assert report["lexicon_terms"] - reports["a"]["lexicon_terms"] == sum(
        len(t["fragments"]) for t in reports["a"]["topics"].values())


def test_a_surname_goes_with_its_name_by_hand():
    """"ayn" (4 sentences, all inside "ayn rand") is a fragment; "rand" (20 sentences, 4 inside)
    passes the share rule, but as the last word of a kept name whose given name is a fragment
    it goes too: raters see "ayn rand", never "rand". Not for words that are no names
    ("amateur astronomy": "astronomy" stays) nor for a name whose first word stands alone
    ("nation of islam": "islam" stays), nor without the rule (share 0, the paper)."""
    tested = pd.DataFrame({
        "topic": "t",
        "term": ["ayn", "rand", "ayn rand", "amateur", "astronomy", "amateur astronomy",
                 "nation", "islam", "nation of islam"],
        "n": [1, 1, 2, 1, 1, 2, 1, 1, 3],
        "term_sentences": [4, 20, 4, 5, 30, 5, 40, 50, 3], "in_lexicon": True})
    names = {"ayn", "rand", "nation", "islam"}
    out = drop_fragments(tested, 0.9, names).set_index("term")
    dropped = out.loc[~out["in_lexicon"], "part_of"].to_dict()
    assert dropped == {"ayn": "ayn rand", "rand": "ayn rand", "amateur": "amateur astronomy"}
    assert out.loc["ayn rand", "in_lexicon"] and out.loc["islam", "in_lexicon"]
    assert out.loc["astronomy", "in_lexicon"]
    assert drop_fragments(tested, 0.9).set_index("term").loc["rand", "in_lexicon"]
    assert drop_fragments(tested, 0, names)["in_lexicon"].all()


def test_names_are_the_words_written_with_a_capital_inside_sentences():
    text = ("Ayn Rand wrote novels. Later Rand wrote essays, and Ayn Rand spoke. Critics read "
            "Rand closely. Rand is read. The state, said Rand, is force. States differ.\n"
            "Amateur astronomy is a hobby. An amateur sees the Moon. The moon rose.")
    counts = count_sentences([Article("A", text)], {"A": ["t"]},
                             SentenceSplitter("punkt-untrained"), TermOptions())
    assert counts.inside["rand"] == 5 and counts.capitalised["rand"] == 5   # "Rand is": first
    assert counts.inside["state"] == 1 and counts.capitalised["state"] == 0
    assert proper_names(counts) == {"rand"}               # "ayn": once; "moon": 1 of 2
    assert proper_names(counts, least=1) == {"rand", "ayn"}


def test_fragment_rule_by_hand():
    """Longer terms first. Topic t: "b c" is in 10 sentences, 9 inside "a b c" (0.9): it goes.
    "b" (20 sentences) is inside the kept "a b c" in 9 (0.45): it stays, and the dropped "b c"
    does not count. "c" (30) is inside "c d" in 28 (0.93): it goes. Topic u's "c" stays: "c d"
    is topic t's term. A longer term that is not in the lexicon never counts."""
    tested = pd.DataFrame({
        "topic": ["t"] * 5 + ["u"],
        "term": ["a b c", "b c", "b", "c", "c d", "c"],
        "n": [3, 2, 1, 1, 2, 1],
        "term_sentences": [9, 10, 20, 30, 28, 30],
        "in_lexicon": True})
    out = drop_fragments(tested, 0.9).set_index(["topic", "term"])
    assert out["part_of"].to_dict() == {("t", "a b c"): "", ("t", "b c"): "a b c",
                                        ("t", "b"): "", ("t", "c"): "c d", ("t", "c d"): "",
                                        ("u", "c"): ""}
    assert out["in_lexicon"].tolist() == [True, False, True, False, True, True]
    assert drop_fragments(tested, 0)["in_lexicon"].all()
    assert drop_fragments(tested, 0.95).set_index(["topic", "term"]).loc[("t", "c"),
                                                                         "in_lexicon"]
    not_kept = tested.assign(in_lexicon=[True, True, True, True, False, True])
    assert drop_fragments(not_kept, 0.9)["in_lexicon"].tolist() == [True, False, True, True,
                                                                    False, True]


# --------------------------------------------------------------------------- CLI and errors


def _run(args):
    return CliRunner().invoke(cli, args)


def test_cli_builds_and_prints_a_summary(tmp_path):
    corpus, topics = _hand_corpus(tmp_path)
    result = _run(["build", "tr9856", "--corpus", str(corpus), "--topics", str(topics),
                   "--seed", "4", "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    # "quark" and "cat" are in no sentence without "quark is small", "cat is small": fragments
    # (the paper's lexicon has 4 terms and 4 pairs: test_hand_made_corpus_...)
    assert "2 topics, 3 articles, 20 sentences: 2 lexicon terms, 3 pairs" in result.output
    assert json.loads((tmp_path / "out" / "report.json").read_text())["manifest"]["seed"] == 4
    assert not (tmp_path / "out" / "terms.csv").exists()
    result = _run(["build", "tr9856", "--corpus", str(corpus), "--topics", str(topics),
                   "--all-terms", "--out", str(tmp_path / "all")])
    terms = pd.read_csv(tmp_path / "all" / "terms.csv")
    physics = terms[terms["topic"] == "physics"].set_index("term")
    assert sorted(physics.index) == ["quark", "quark is small", "small"]
    assert physics.loc["small", "p"] == 1.0 and not physics.loc["small", "in_lexicon"]
    assert physics.loc["quark", "part_of"] == "quark is small"
    assert not physics.loc["quark", "in_lexicon"] and physics.loc["quark", "p_bonferroni"] < 0.05
    assert terms["in_lexicon"].sum() == 2
    assert (tmp_path / "all" / "lexicon.csv").read_bytes() == (
        tmp_path / "out" / "lexicon.csv").read_bytes()
    help_text = _run(["build", "tr9856", "--help"]).output
    assert "Example" in help_text and "--topics" in help_text


@pytest.mark.parametrize("topics_text, field, message", [
    ('[topics.space]\ns_def = "moon"\narticles = ["Moon"]\n', "topics.space.s_def",
     "expected a list of non-empty strings"),
    ('[topics.space]\nsdef = ["moon"]\n', "topics.space.sdef", "unknown key"),
    ('[topics.space]\narticles = ["Moon"]\n', "topics.space.s_def", "missing"),
    ('[topics.space]\ns_def = []\n', "topics.space.s_def", "at least one term"),
    ('[topics.space]\ns_def = ["moon"]\narticles = ["Moon", "Moon"]\n', "topics.space.articles",
     "listed twice"),
    ('[topics.space]\ns_def = ["moon"]\narticles = ["Mars"]\n', "topics.space.articles",
     "'Mars' not found"),
    ('[topics.space]\ns_def = ["moon"]\n', "topics.space.articles", "topic has no articles"),
    ('title = "x"\n', "title", "unknown key"),
    ('[topics]\n', "topics", "no topics"),
    ('[topics.space\n', None, "not a valid TOML topics file"),
])
def test_bad_topics_file_gives_one_line_error_naming_file_and_key(tmp_path, topics_text, field,
                                                                  message):
    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus" / "Moon.txt").write_text("The Moon shines.")
    topics = tmp_path / "topics.toml"
    topics.write_text(topics_text, encoding="utf-8")
    result = _run(["build", "tr9856", "--corpus", str(tmp_path / "corpus"), "--topics",
                   str(topics), "--out", str(tmp_path / "out")])
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"Error: {topics}")
    if field:
        assert f"field '{field}'" in lines[0]
    assert message in lines[0]
    assert not (tmp_path / "out").exists()


def test_bad_protocol_value_names_the_key(tmp_path):
    corpus, topics = _hand_corpus(tmp_path)
    protocol = tmp_path / "p.toml"
    protocol.write_text('name = "x"\n[build]\nalpha = 2\n')
    result = _run(["build", "tr9856", "--corpus", str(corpus), "--topics", str(topics),
                   "--protocol", str(protocol), "--out", str(tmp_path / "out")])
    assert result.exit_code == 1
    assert f"Error: {protocol}: [build] alpha: allowed 0 < x <= 1, given 2" in result.output
    protocol.write_text('name = "x"\n[build]\nstop_word = ""\n')
    result = _run(["build", "tr9856", "--corpus", str(corpus), "--topics", str(topics),
                   "--protocol", str(protocol), "--out", str(tmp_path / "out")])
    assert "[build] stop_word: allowed keys" in result.output and result.exit_code == 1


def test_out_must_be_a_folder(tmp_path):
    corpus, topics = _hand_corpus(tmp_path)
    (tmp_path / "out").write_text("")
    result = _run(["build", "tr9856", "--corpus", str(corpus), "--topics", str(topics),
                   "--out", str(tmp_path / "out")])
    assert result.exit_code == 2 and "is a file" in result.output  # click's check
    with pytest.raises(InputError, match="field '--out': exists and is not a folder"):
        build_tr9856(corpus, topics, tmp_path / "out")  # the library's own check


def test_protocol_keys_change_the_build(tmp_path):
    corpus, topics = _hand_corpus(tmp_path)
    protocol = tmp_path / "p.toml"
    protocol.write_text('name = "x"\n[build]\nstop_words = ""\nngram_sizes = [1]\n'
                        'punkt_train_chars = 30\n')
    build_tr9856(corpus, topics, tmp_path / "out", protocol=protocol)
    lexicon = pd.read_csv(tmp_path / "out" / "lexicon.csv")
    # no stop list: "the" and "is" are terms now, but in every sentence (p = 1)
    assert sorted(lexicon[lexicon["topic"] == "physics"]["term"]) == ["quark"]


def test_negative_seed_is_refused_before_reading(tmp_path):
    corpus, topics = _hand_corpus(tmp_path)
    result = _run(["build", "tr9856", "--corpus", str(corpus), "--topics", str(topics),
                   "--seed", "-1", "--out", str(tmp_path / "out")])
    assert result.exit_code == 2 and not (tmp_path / "out").exists()
    assert "Invalid value for '--seed': -1 is not in the range x>=0" in result.output


def test_default_corpus_without_gensim_says_what_to_do(tmp_path, monkeypatch):
    import importlib.util
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "gensim" else find_spec(name, *a))
    result = _run(["build", "tr9856", "--out", str(tmp_path / "out")])
    assert result.exit_code == 1
    assert "install gensim (pip install -e '.[gensim]' in the lexgold clone) or pass " \
        "--corpus" in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_a_stop_list_keeps_its_words_in_nfc(tmp_path):
    # a stop list saved decomposed (e + U+0301) stops the composed word the corpus reader keeps
    stop = tmp_path / "stop.txt"
    stop.write_text("# comment\ncafe\u0301\n\nthe\n", encoding="utf-8")
    assert read_stop_words(stop) == {"caf\u00e9", "the"}
