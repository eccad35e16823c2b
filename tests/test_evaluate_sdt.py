"""SDT-rho (Fourtassi & Dupoux 2014) on the real Lee corpus; AUC against scipy's Mann-Whitney
U; the median rank of USF associates by hand and on real norms."""

from collections import Counter
from pathlib import Path

import gensim
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from lexgold.errors import InputError
from lexgold.evaluate.sdt import (get_trainer, lsa_trainer, median_associate_rank,
                                  pseudo_synonym_corpus, random_trainer, read_corpus, roc_auc,
                                  run_sdt, sdt_rho, select_words, variant)
from lexgold.evaluate.vectors import Vectors

LEE = Path(gensim.__file__).parent / "test" / "test_data" / "lee_background.cor"
SMALL = dict(freq_min=10, freq_max=400, n_words=150, dim=60, min_count=3)


@pytest.fixture(scope="module")
def lee_docs():
    return read_corpus(LEE, doc_size=1)


def test_roc_auc_equals_mann_whitney_u():
    rng = np.random.default_rng(0)
    pos = rng.integers(0, 20, 50).astype(float)          # many ties
    neg = rng.integers(0, 15, 80).astype(float)
    u = stats.mannwhitneyu(pos, neg).statistic
    assert roc_auc(pos, neg) == pytest.approx(u / (50 * 80))
    assert roc_auc(np.array([2.0]), np.array([1.0, 2.0, 3.0])) == pytest.approx(0.5)


def test_pseudo_synonym_corpus_splits_only_chosen_words(lee_docs):
    rng = np.random.default_rng(1)
    words = select_words(lee_docs, rng, freq_min=40, freq_max=400, n_words=20)
    counts = Counter(t for d in lee_docs for t in d)
    assert len(words) == 20 and all(40 < counts[w] < 400 for w in words)
    split = pseudo_synonym_corpus(lee_docs, words, rng)
    after = Counter(t for d in split for t in d)
    for w in words:
        assert after[w] == 0
        assert after[variant(w, 1)] + after[variant(w, 2)] == counts[w]
        # each occurrence is a fair coin: within 4.5 SD of half
        assert abs(after[variant(w, 1)] - counts[w] / 2) < 4.5 * np.sqrt(counts[w] / 4)
    unchanged = [t for t in counts if t not in words]
    assert all(after[t] == counts[t] for t in unchanged)
    assert [len(d) for d in split] == [len(d) for d in lee_docs]


def test_lsa_well_above_chance_random_at_chance(lee_docs):
    lsa = run_sdt(lee_docs, np.random.default_rng(2), lsa_trainer, **SMALL)
    rand = run_sdt(lee_docs, np.random.default_rng(2), random_trainer, **SMALL)
    assert lsa["words"] == 150 and lsa["scored"] == 150
    assert lsa["sdt_rho"] > 0.75
    assert abs(rand["sdt_rho"] - 0.5) < 0.07
    assert lsa["per_word"]["auc"].between(0, 1).all()
    assert lsa["per_word"]["auc"].mean() > rand["per_word"]["auc"].mean() + 0.15


def test_sdt_rho_hand_case():
    # x#1 and x#2 identical, y#1 and y#2 orthogonal: of the 6 pairs, the 2 variant pairs
    # have cosines 1 and 0; the 4 others cos in {1/sqrt2, ...}
    words = [variant("x", 1), variant("x", 2), variant("y", 1), variant("y", 2)]
    matrix = np.array([[1, 0, 0], [1, 0, 0], [1, 1, 0], [0, 0, 1]], dtype=np.float32)
    rho, per_word = sdt_rho(Vectors(words, matrix), ["x", "y"])
    # negatives: x1-y1 .707, x1-y2 0, x2-y1 .707, x2-y2 0; positives 1 (beats all 4),
    # 0 (ties two zeros, below two): AUC = (4 + 1) / 8
    assert rho == pytest.approx(5 / 8)
    assert per_word.set_index("word")["auc"].to_dict() == pytest.approx({"x": 1.0, "y": 0.25})


def test_median_associate_rank_hand_case():
    words = ["cat", "dog", "mouse", "car", "bus"]
    matrix = np.array([[1, 0], [0.9, 0.1], [0.8, 0.3], [0, 1], [0.1, 1]], dtype=np.float32)
    usf = pd.DataFrame({"cue": ["CAT", "CAT", "CAT", "CAR", "CAR", "ZEBRA"],
                        "target": ["MOUSE", "DOG", "BUS", "BUS", "TRAIN", "CAT"],
                        "fsg": [0.5, 0.3, 0.01, 0.6, 0.2, 0.9]})
    result = median_associate_rank(Vectors(words, matrix), usf)
    # overlap: cat, car (the cues in the vocabulary); no associate of either is in it
    assert result["overlap"] == 2 and result["cues"] == [0, 0, 0]
    usf = pd.concat([usf, pd.DataFrame({"cue": ["DOG", "MOUSE", "BUS"],
                                        "target": ["CAT", "CAT", "CAR"], "fsg": 0.4})])
    result = median_associate_rank(Vectors(words, matrix), usf)
    # overlap: cat car dog mouse bus. From cat (1, 0): dog .994, mouse .937, bus .100, car 0,
    # so its associates mouse, dog, bus rank 2, 1, 3. car: bus (rank 1); dog: cat (1);
    # mouse: cat (rank 2, behind dog .970); bus: car (1).
    assert result["overlap"] == 5
    assert result["cues"] == [5, 1, 1]
    assert result["median_ranks"] == [1.0, 1.0, 3.0]      # median of 2, 1, 1, 2, 1
    assert result["median_rank"] == pytest.approx(5 / 3)


def test_median_rank_on_real_norms_lsa_beats_random(lee_docs, usf):
    rng = np.random.default_rng(3)
    lsa = median_associate_rank(lsa_trainer(lee_docs, rng, dim=60, min_count=3), usf)
    rand = median_associate_rank(random_trainer(lee_docs, rng, dim=60, min_count=3), usf)
    assert lsa["overlap"] == rand["overlap"] > 500
    assert lsa["median_rank"] < 0.8 * rand["median_rank"]


def test_trainer_lookup_and_errors(lee_docs):
    assert get_trainer("lsa") is lsa_trainer
    assert get_trainer("lexgold.evaluate.sdt:random_trainer") is random_trainer
    with pytest.raises(InputError, match="trainer must be one of lsa, random"):
        get_trainer("word2vec")
    with pytest.raises(InputError, match="cannot import trainer"):
        get_trainer("no.such.module:f")
    with pytest.raises(InputError, match="widen the frequency band"):
        run_sdt(lee_docs, np.random.default_rng(0), freq_min=100000, freq_max=200000)


def test_doc_size_groups_lines(tmp_path):
    path = tmp_path / "c.txt"
    path.write_text("The cat sat.\nA dog ran!\n\nBirds fly 3 times\n")
    assert read_corpus(path, doc_size=2) == [["the", "cat", "sat", "a", "dog", "ran"],
                                             ["birds", "fly", "times"]]
    assert read_corpus(path, doc_size=1, stopwords=["the", "a"])[0] == ["cat", "sat"]


# --------------------------------------------------------------------------- section 2: overlap


def test_overlap_set_is_usf_cues_in_the_vocabulary_after_the_stop_list(tmp_path, usf):
    from lexgold.evaluate.sdt import sdt_stop_words
    from lexgold.evaluate.sdt import overlap_words, usf_words
    path = tmp_path / "c.txt"
    path.write_text("The cat sat above the mat.\n" * 3 + "A dog ran above.\n")
    cues = usf_words(usf)
    assert {"cat", "dog", "above", "mat"} <= cues and "the" not in cues  # real norms
    plain = read_corpus(path, doc_size=1)
    # vocabulary of count >= 3: the(6) cat sat mat(3) above(4); cues among them
    assert overlap_words(plain, cues, min_count=3) == ["above", "cat", "mat"]
    name, stop = sdt_stop_words("snowball")
    assert name == "snowball" and {"the", "of", "to", "and", "above"} <= stop
    stopped = read_corpus(path, doc_size=1, stopwords=stop)
    assert overlap_words(stopped, cues, min_count=3) == ["cat", "mat"]
    assert sdt_stop_words("none") == ("none", frozenset())
    with pytest.raises(InputError, match="stop list not found"):
        sdt_stop_words(str(tmp_path / "missing.txt"))


def test_main_setup_splits_every_overlap_word(lee_docs, usf):
    from lexgold.evaluate.sdt import overlap_words, usf_words
    overlap = overlap_words(lee_docs, usf_words(usf), min_count=3)
    counts = Counter(t for d in lee_docs for t in d)
    assert len(overlap) > 500 and all(counts[w] >= 3 for w in overlap)
    result = run_sdt(lee_docs, np.random.default_rng(4), lsa_trainer, words=overlap, dim=60,
                     min_count=3)
    assert result["mode"] == "overlap" and "band" not in result
    assert result["words"] == result["in_overlap"] == len(overlap)
    assert set(result["per_word"]["word"]) <= set(overlap)
    # a word is scored unless all its occurrences fell on one variant: 2 / 2^count per word
    expected_lost = sum(2 * 0.5 ** counts[w] for w in overlap)
    assert len(overlap) - result["scored"] < expected_lost + 5 * np.sqrt(expected_lost) + 1
    assert result["sdt_rho"] > 0.7


def test_band_sets_hold_at_most_a_tenth_of_overlap_words(lee_docs):
    counts = Counter(t for d in lee_docs for t in d)
    band = sorted(w for w, c in counts.items() if 10 < c < 400)
    overlap = set(band[: int(0.6 * len(band))])           # most of the band
    for seed in range(4):
        words = select_words(lee_docs, np.random.default_rng(seed), freq_min=10,
                             freq_max=400, n_words=200, overlap=overlap, max_overlap=0.10)
        assert len(words) == 200 and len(set(words)) == 200 and set(words) <= set(band)
        assert sum(w in overlap for w in words) <= 20
        again = select_words(lee_docs, np.random.default_rng(seed), freq_min=10,
                             freq_max=400, n_words=200, overlap=overlap, max_overlap=0.10)
        assert words == again
    # without the rule (or without an overlap set) the draw is the plain uniform draw
    plain = select_words(lee_docs, np.random.default_rng(9), freq_min=10, freq_max=400,
                         n_words=200)
    assert plain == select_words(lee_docs, np.random.default_rng(9), freq_min=10,
                                 freq_max=400, n_words=200, overlap=overlap, max_overlap=1.0)
    assert sum(w in overlap for w in plain) > 60
    # too few other band words: the set shrinks until overlap words are <= 10 %
    overlap = set(band) - set(band[:27])
    words = select_words(lee_docs, np.random.default_rng(0), freq_min=10, freq_max=400,
                         n_words=200, overlap=overlap, max_overlap=0.10)
    assert len(words) == 30 and sum(w in overlap for w in words) == 3
    with pytest.raises(InputError, match="max_overlap"):
        select_words(lee_docs, np.random.default_rng(0), max_overlap=1.5)


def test_blockwise_sdt_rho_equals_the_auc_over_all_pairs():
    rng = np.random.default_rng(6)
    words = [f"w{i}" for i in range(23)]
    keys = [variant(w, k) for w in words for k in (1, 2)]
    matrix = rng.integers(-2, 3, size=(len(keys), 4)).astype(np.float32)  # many tied cosines
    matrix[matrix.sum(axis=1) == 0, 0] = 1
    vectors = Vectors(keys, matrix)
    unit = vectors.unit().astype(np.float64)
    sims = unit @ unit.T
    i, j = np.triu_indices(len(keys), k=1)
    is_pair = (i % 2 == 0) & (j == i + 1)
    expected = roc_auc(sims[i, j][is_pair], sims[i, j][~is_pair])
    for chunk in (1, 2, 5, 100):
        rho, per_word = sdt_rho(vectors, words, chunk=chunk)
        assert rho == pytest.approx(expected, rel=1e-12)
        assert list(per_word["word"]) == words
    first = np.concatenate([sims[0, 2:], sims[1, 2:]])
    assert per_word["auc"].iloc[0] == pytest.approx(roc_auc(np.array([sims[0, 1]]), first))
