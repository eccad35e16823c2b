"""Per-pair scores, scaling, splits, split-half and transitivity, released formats."""

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st
from scipy import stats

from conftest import examples
from lexgold.errors import InputError
from lexgold.process.agreement import AgreementWarning
from lexgold.process.release import (HYPERLEX_COLUMNS, SIMLEX_COLUMNS, TR9856_COLUMNS,
                                     concreteness_quartile, gold_table, read_release_pairs)
from lexgold.process.scaling import linear_scale, gold_scores
from lexgold.process.splithalf import split_half_all_splits, transitivity, transitivity_points
from lexgold.process.splits import lexical_split, random_split, score_interval


# -- scaling -----------------------------------------------------------------------------------

def test_linear_scale():
    assert linear_scale([0, 1.5, 6]).tolist() == [0.0, 2.5, 10.0]
    assert linear_scale([0, 1], source=(0, 1), target=(0, 1)).tolist() == [0.0, 1.0]
    with pytest.raises(InputError):
        linear_scale([1], source=(6, 0))


def test_linear_scale_keeps_the_offsets_of_both_scales():
    """A 1-7 slider released on 0-10 (and 1-7 onto 2-4): the bottom of one scale is the bottom
    of the other, so the mapping subtracts the source's start and adds the target's."""
    assert linear_scale([1, 4, 7], source=(1, 7)).tolist() == [0.0, 5.0, 10.0]
    assert linear_scale([1, 2.5, 7], source=(1, 7), target=(2, 4)).tolist() == [2.0, 2.5, 4.0]


@pytest.mark.parametrize("source, target", [((1, 1), (0, 10)), ((6, 0), (0, 10)),
                                            ((0, 6), (10, 10)), ((0, 6), (10, 0))])
def test_linear_scale_refuses_an_empty_or_reversed_interval(source, target):
    with pytest.raises(InputError, match=r"need increasing intervals, found .* -> ") as error:
        linear_scale([1], source=source, target=target)
    assert error.value.field == "scale" and str(source) in str(error.value)


def test_pair_scores_on_a_scale_not_starting_at_zero():
    ratings = pd.DataFrame({"rater_id": ["a", "b", "a", "b"], "tranche": 1,
                            "word1": ["x", "x", "y", "y"], "word2": "w", "kind": "unique",
                            "rating": [1, 2, 7, 4]})
    scores = gold_scores(ratings, rating_range=(1, 7)).set_index("word1")
    # x: mean 1.5 -> (1.5 - 1) / 6 * 10; y: mean 5.5 -> 4.5 / 6 * 10
    assert scores["score"].tolist() == pytest.approx([0.5 / 6 * 10, 4.5 / 6 * 10])


def test_pair_scores_keep_pos_and_rater_order_on_both_scales():
    """Pairs in order of first appearance (z before a), each with its own POS; answers listed
    by rater id whatever the row order; 1-7 mapped onto 0-1 (TR9856's released interval)."""
    ratings = pd.DataFrame({"rater_id": ["b", "b", "a", "a"], "tranche": 1,
                            "word1": ["z", "a", "z", "a"], "word2": "w", "kind": "unique",
                            "pos": ["V", "N", "V", "N"], "rating": [7, 1, 1, 4]})
    scores = gold_scores(ratings, rating_range=(1, 7), score_range=(0, 1))
    assert scores[["word1", "pos"]].values.tolist() == [["z", "V"], ["a", "N"]]
    assert scores["scores"].tolist() == [[1.0, 7.0], [4.0, 1.0]]      # a's answer first
    assert scores["score"].tolist() == pytest.approx([0.5, 0.25])


def test_pair_scores_mean_sd_and_repeats():
    ratings = pd.DataFrame({
        "rater_id": ["a", "a", "b", "c", "a", "b"], "tranche": 1,
        "word1": ["x", "x", "x", "x", "y", "y"], "word2": "w",
        "kind": ["unique", "calibration", "unique", "unique", "unique", "unique"],
        "rating": [2, 4, 6, 0, 5, 6]})
    scores = gold_scores(ratings).set_index("word1")
    # a's two answers to x count once, as 3: x = mean(3, 6, 0)
    assert scores.loc["x", "n"] == 3
    assert scores.loc["x", "mean"] == pytest.approx(3.0)
    assert scores.loc["x", "sd"] == pytest.approx(np.std([3, 6, 0], ddof=1))
    assert scores.loc["x", "score"] == pytest.approx(5.0)
    assert scores.loc["y", "scores"] == [5.0, 6.0]
    assert list(scores.index) == ["x", "y"]


# -- splits ------------------------------------------------------------------------------------

@settings(max_examples=examples(40), deadline=None)
@given(n=st.integers(min_value=1, max_value=400), seed=st.integers(0, 2**32 - 1))
def test_random_split_proportions_within_one_pair_per_stratum(n, seed):
    rng = np.random.default_rng(seed)
    scores = rng.uniform(0, 10, n)
    pos = rng.choice(["N", "V"], n)
    labels = random_split(scores, rng=rng, strata=[pos])
    cell = pd.Series(list(zip(score_interval(scores, [0, 2, 4, 6, 8, 10]), pos)))
    for rows in cell.groupby(cell).groups.values():
        inside = labels[np.asarray(rows)]
        for part, share in (("train", 0.70), ("dev", 0.05), ("test", 0.25)):
            assert abs((inside == part).sum() - share * len(inside)) <= 1
    for part, share in (("train", 0.70), ("dev", 0.05), ("test", 0.25)):
        assert abs((labels == part).sum() - share * n) <= cell.nunique()


def test_random_split_is_stratified_and_seeded():
    scores = np.random.default_rng(0).uniform(0, 10, 1000)
    labels = random_split(scores, rng=np.random.default_rng(3))
    assert (labels == random_split(scores, rng=np.random.default_rng(3))).all()
    interval = score_interval(scores, [0, 2, 4, 6, 8, 10])
    for i in range(5):
        inside = labels[interval == i]
        assert abs((inside == "train").sum() - 0.7 * len(inside)) <= 1
        assert abs((inside == "test").sum() - 0.25 * len(inside)) <= 1


@pytest.mark.parametrize("seed", range(5))
def test_random_split_is_exact_within_interval_and_pos(seed):
    """HyperLex's released random split is exact within every interval and POS: 20 nouns and
    20 verbs in one interval get 14 / 1 / 5 each (70 / 5 / 25 %), whatever the shuffle."""
    scores = np.full(40, 5.0)
    pos = np.array(["N", "V"] * 20)
    labels = random_split(scores, rng=np.random.default_rng(seed), strata=[pos])
    for tag in ("N", "V"):
        inside = pd.Series(labels[pos == tag]).value_counts()
        assert inside.to_dict() == {"train": 14, "test": 5, "dev": 1}
    with pytest.raises(InputError, match="one stratum label per pair"):
        random_split(scores, rng=np.random.default_rng(0), strata=[pos[:3]])


def test_score_interval_closes_the_last_interval():
    assert score_interval([0, 1.99, 2, 9.99, 10], [0, 2, 4, 6, 8, 10]).tolist() == [0, 0, 1, 4, 4]


def _vocabularies(pairs, labels):
    return {part: set(pairs.loc[labels == part, "word1"]) | set(pairs.loc[labels == part, "word2"])
            for part in ("train", "dev", "test")}


def test_lexical_split_strict_shares_no_word():
    rng = np.random.default_rng(1)
    words = [f"w{i}" for i in range(120)]
    pairs = pd.DataFrame({"word1": rng.choice(words, 900), "word2": rng.choice(words, 900)})
    labels = lexical_split(pairs, rng=np.random.default_rng(2), mode="strict")
    vocab = _vocabularies(pairs, labels)
    assert not vocab["train"] & vocab["test"]
    assert not vocab["train"] & vocab["dev"] and not vocab["dev"] & vocab["test"]
    cross = pairs[labels == ""]
    assert len(cross) > 0
    counts = pd.Series(labels[labels != ""]).value_counts(normalize=True)
    assert counts["train"] > counts["test"] > counts["dev"]


def test_lexical_split_two_way_keeps_test_apart_only():
    """The released HyperLex lexical split: train and dev share words, test shares none; dev
    is dev / (train + dev) of the train side's pairs; more pairs are kept than three ways."""
    rng = np.random.default_rng(1)
    words = [f"w{i}" for i in range(120)]
    pairs = pd.DataFrame({"word1": rng.choice(words, 900), "word2": rng.choice(words, 900)})
    labels = lexical_split(pairs, rng=np.random.default_rng(2))
    assert (labels == lexical_split(pairs, rng=np.random.default_rng(2), mode="two-way")).all()
    vocab = _vocabularies(pairs, labels)
    assert not vocab["train"] & vocab["test"] and not vocab["dev"] & vocab["test"]
    assert vocab["train"] & vocab["dev"]
    side = int(np.isin(labels, ["train", "dev"]).sum())
    assert (labels == "dev").sum() == round(0.05 / 0.75 * side)
    strict = lexical_split(pairs, rng=np.random.default_rng(2), mode="strict")
    assert (labels != "").sum() > (strict != "").sum()
    with pytest.raises(InputError, match="field 'lexical'.*two-way, strict"):
        lexical_split(pairs, rng=np.random.default_rng(2), mode="loose")


def _best_kept(pairs, share, tolerance):
    """Brute force over every vocabulary partition: the most pairs kept with the test side's
    pairs within ``tolerance`` of ``share`` of the kept pairs."""
    words = sorted(set(pairs["word1"]) | set(pairs["word2"]))
    index = {w: i for i, w in enumerate(words)}
    one = pairs["word1"].map(index).to_numpy()
    two = pairs["word2"].map(index).to_numpy()
    best = 0
    for mask in range(1, 2 ** len(words)):
        side = (mask >> np.arange(len(words))) & 1
        test = (side[one] == 1) & (side[two] == 1)
        kept = test.sum() + ((side[one] == 0) & (side[two] == 0)).sum()
        if kept and abs(test.sum() / kept - share) <= tolerance:
            best = max(best, int(kept))
    return best


@pytest.mark.parametrize("seed", [3, 4, 5])
def test_lexical_split_keeps_the_most_pairs_brute_force(seed):
    """Issue 36: the vocabulary partition keeps as many pairs as the best of all 2^12
    partitions of 12 words (test at 25 % +/- 5 % of the kept pairs); dealing words out at
    random kept fewer."""
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(12)]
    first = rng.choice(words, 30)
    second = [rng.choice([w for w in words if w != a]) for a in first]
    pairs = pd.DataFrame({"word1": first, "word2": second})
    labels = lexical_split(pairs, rng=np.random.default_rng(seed), tolerance=0.05)
    kept = labels != ""
    assert kept.sum() == _best_kept(pairs, 0.25, 0.05)
    assert abs((labels == "test").sum() / kept.sum() - 0.25) <= 0.05
    vocab = _vocabularies(pairs, labels)
    assert not vocab["test"] & (vocab["train"] | vocab["dev"])


def test_lexical_split_cuts_two_cliques_at_their_one_link():
    """A 6-word clique (15 pairs) joined by one pair to a 10-word clique (45 pairs): at test =
    25 % of the kept pairs exactly, the only partition that drops one pair puts the 6 words in
    test (15 of 60)."""
    small, large = [f"a{i}" for i in range(6)], [f"b{i}" for i in range(10)]
    rows = [(c[i], c[j]) for c in (small, large) for i in range(len(c))
            for j in range(i + 1, len(c))] + [("a0", "b0")]
    pairs = pd.DataFrame(rows, columns=["word1", "word2"])
    labels = lexical_split(pairs, rng=np.random.default_rng(0), tolerance=0.0)
    test = pairs[labels == "test"]
    assert len(test) == 15 and (labels != "").sum() == 60
    assert set(test["word1"]) | set(test["word2"]) == set(small)


def test_lexical_split_of_too_few_pairs_comes_nearest():
    """Two unrelated pairs cannot give test 25 % of the kept pairs: the nearest partition is
    kept (one pair in test, 50 %), not an error; test still shares no word."""
    pairs = pd.DataFrame({"word1": ["dog", "tea"], "word2": ["animal", "cup"]})
    labels = lexical_split(pairs, rng=np.random.default_rng(0))
    assert (labels == "test").sum() == 1 and (labels != "").all()
    vocab = _vocabularies(pairs, labels)
    assert not vocab["test"] & (vocab["train"] | vocab["dev"])


def test_split_fractions_are_checked():
    with pytest.raises(InputError, match="fractions"):
        random_split([1.0], rng=np.random.default_rng(), fractions=(0.5, 0.5, 0.5))


# -- split-half and transitivity (TR9856 section 4) --------------------------------------------

def binary_study(seed=0, pairs=40, raters=10, extra_pairs=5):
    rng = np.random.default_rng(seed)
    truth = rng.uniform(0, 1, pairs)
    rows = [(f"r{r}", 1, f"p{i}", "q", float(rng.random() < truth[i]))
            for i in range(pairs) for r in range(raters)]
    rows += [(f"r{r}", 2, f"e{i}", "q", 1.0) for i in range(extra_pairs) for r in range(3)]
    return pd.DataFrame(rows, columns=["rater_id", "tranche", "word1", "word2", "rating"])


def test_split_half_against_scipy_over_all_splits():
    ratings = binary_study()
    result = split_half_all_splits(ratings)
    table = ratings[ratings["tranche"] == 1].pivot(index="word1", columns="rater_id",
                                                   values="rating")
    values = []
    for group in itertools.combinations(table.columns, 5):
        if "r0" not in group:
            continue
        rest = [c for c in table.columns if c not in group]
        values.append(stats.pearsonr(table[list(group)].mean(axis=1),
                                     table[rest].mean(axis=1)).statistic)
    assert len(values) == 126 == result["splits"]
    assert result["r"] == pytest.approx(np.mean(values))
    assert result["spearman_brown"] == pytest.approx(2 * result["r"] / (1 + result["r"]))
    assert result["pairs"] == 40 and len(result["raters"]) == 10


def test_split_half_undefined_without_a_full_rater_set():
    with pytest.warns(AgreementWarning):
        assert np.isnan(split_half_all_splits(binary_study(raters=6))["r"])


def test_split_half_perfect_agreement_is_one():
    ratings = binary_study(raters=4)
    same = ratings.assign(rating=ratings["word1"].str[1:].astype(int) % 3)
    assert split_half_all_splits(same, annotators=4)["r"] == pytest.approx(1.0)


def test_transitivity_hand_computed():
    gold = pd.DataFrame({"word1": ["a", "b", "a", "x"], "word2": ["b", "c", "c", "y"],
                         "score": [0.9, 0.8, 0.6, 0.5]})
    points = transitivity_points(gold)
    # triangle a-b-c gives three points, one per pair as R2
    got = sorted(zip(points["r2"], points["diff"].round(6)))
    assert got == [(0.6, round(abs(0.9 - 0.8), 6)), (0.8, round(abs(0.9 - 0.6), 6)),
                   (0.9, round(abs(0.8 - 0.6), 6))]
    result = transitivity(gold, bins=2)
    assert result["points"] == 3
    assert result["bins"][1]["points"] == 3 and result["bins"][0]["points"] == 0
    assert result["spearman"] == pytest.approx(
        stats.spearmanr([0.6, 0.8, 0.9], [0.1, 0.3, 0.2]).statistic)


def test_transitivity_bins_have_exact_edges_and_a_p_value():
    """TR9856 scores are shares of 10 labels: 0.3 and 0.7 open their own bins (linspace's
    0.30000000000000004 / 0.7000000000000001 edges put them in the bin below)."""
    labels = np.array([0, 1, 1, 1, 0, 0, 0, 0, 0, 0])  # 3 of 10
    gold = pd.DataFrame({"word1": ["a", "b", "a", "p", "q", "p"],
                         "word2": ["b", "c", "c", "q", "r", "r"],
                         "score": [labels.mean(), 0.7, 0.5, 0.1 + 0.1 + 0.1, 0.2, 0.9]})
    result = transitivity(gold, bins=10)
    points = transitivity_points(gold)
    assert sorted(points["r2"].round(9)) == [0.2, 0.3, 0.3, 0.5, 0.7, 0.9]
    counts = [b["points"] for b in result["bins"]]
    assert counts == [0, 0, 1, 2, 0, 1, 0, 1, 0, 1]
    assert result["bins"][3]["r2_low"] == 0.3 and result["bins"][6]["r2_high"] == 0.7
    assert result["bins"][9]["r2_high"] == 1.0
    found = stats.spearmanr(points["r2"], points["diff"])
    assert result["spearman"] == pytest.approx(found.statistic)
    assert result["spearman_p"] == pytest.approx(found.pvalue)
    # on 1-7 with bins of 1: R2 = 2.2, 2.8, 2.8, 4.0 (an edge: bin [4, 5)), 5.2, 6.4
    shifted = transitivity(gold.assign(score=gold["score"] * 6 + 1), bins=6, score_range=(1, 7))
    assert [b["points"] for b in shifted["bins"]] == [0, 3, 0, 1, 1, 1]



def test_transitivity_rho_and_p_value_equal_scipy_spearmanr_on_random_triangles():
    """Spearman's rho and its t-based p-value, computed with numpy and ``scipy.special``,
    equal :func:`scipy.stats.spearmanr` (to 1e-12) on tied and untied scores."""
    rng = np.random.default_rng(7)
    words = [f"w{i}" for i in range(12)]
    pairs = [(a, b) for i, a in enumerate(words) for b in words[i + 1:]]
    for levels in (3, 11, None):
        draw = rng.random(len(pairs))
        score = draw if levels is None else np.floor(draw * levels) / levels
        gold = pd.DataFrame(pairs, columns=["word1", "word2"]).assign(score=score)
        result = transitivity(gold)
        points = transitivity_points(gold)
        found = stats.spearmanr(points["r2"], points["diff"])
        assert result["points"] == len(points) > 100
        assert result["spearman"] == pytest.approx(found.statistic, abs=1e-12)
        assert result["spearman_p"] == pytest.approx(found.pvalue, rel=1e-12, abs=1e-300)

# -- released formats --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def scores():
    ratings = pd.DataFrame({
        "rater_id": list("aabbcc"), "tranche": 1, "word1": ["old", "cat"] * 3,
        "word2": ["new", "dog"] * 3, "pos": ["A", "N"] * 3, "rating": [1, 4, 2, 5, 0, 6]})
    return gold_scores(ratings)


def test_simlex_gold_with_real_usf_and_brysbaert(scores, usf, brysbaert):
    gold = gold_table(scores, "simlex", usf=usf, brysbaert=brysbaert)
    assert list(gold.columns) == SIMLEX_COLUMNS
    row = gold.set_index("word1").loc["cat"]
    assert row["SimLex999"] == pytest.approx(linear_scale([5.0])[0], abs=0.01)
    # SimLex's word1 is the USF target, word2 the cue; Assoc(USF) = 10 x FSG(word2 -> word1)
    fsg = usf[(usf["cue"] == "DOG") & (usf["target"] == "CAT")]["fsg"].iloc[0]
    assert row["Assoc(USF)"] == pytest.approx(10 * fsg, abs=0.005)
    conc = brysbaert.set_index("word")["conc_m"]
    assert row["conc(w1)"] == pytest.approx(conc["cat"], abs=0.01)
    assert row["SD(SimLex)"] == pytest.approx(1.0)
    assert gold["SimAssoc333"].tolist() == [1, 1]     # fewer than 333 pairs: all


def test_simlex_gold_prefers_pairs_file_and_leaves_unknowns_empty(scores, tmp_path):
    path = tmp_path / "pairs.csv"
    path.write_text("word1,word2,pos,conc1,conc2,fsg\nold,new,A,2.5,3.0,0.4\ncat,dog,N,,,\n")
    gold = gold_table(scores, "simlex", pairs=read_release_pairs(path), conc_source="pairs")
    old = gold.set_index("word1").loc["old"]
    assert (old["conc(w1)"], old["conc(w2)"], old["Assoc(USF)"]) == (2.5, 3.0, 4.0)
    cat = gold.set_index("word1").loc["cat"]
    assert np.isnan(cat["conc(w1)"]) and pd.isna(cat["concQ"]) and np.isnan(cat["Assoc(USF)"])
    assert gold["SimAssoc333"].tolist() == [1, 0]      # unknown association is never ranked in
    default = gold_table(scores, "simlex", pairs=read_release_pairs(path))
    assert default["conc(w1)"].isna().all()      # brysbaert (not passed): pairs' conc not used
    assert default.set_index("word1").loc["old", "Assoc(USF)"] == 4.0


def test_concreteness_quartiles():
    q = concreteness_quartile(pd.Series([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, np.nan]))
    assert q.tolist()[:8] == [1, 1, 2, 2, 3, 3, 4, 4] and pd.isna(q.iloc[8])


def test_hyperlex_and_tr9856_layouts(scores):
    pairs = pd.DataFrame({"word1": ["cat"], "word2": ["dog"], "relation": ["cohyp"],
                          "topic": ["pets"]})
    hyper = gold_table(scores, "hyperlex", pairs=pairs)
    assert list(hyper.columns) == HYPERLEX_COLUMNS
    cat = hyper.set_index("WORD1").loc["cat"]
    assert cat["TYPE"] == "cohyp" and cat["SCORES.."] == "4 5 6"
    assert cat["AVG_SCORE"] == 5.0 and cat["AVG_SCORE_0_10"] == pytest.approx(8.33)
    tr = gold_table(scores, "tr9856", pairs=pairs)
    assert list(tr.columns) == TR9856_COLUMNS
    assert tr["topic"].tolist() == ["", "pets"]


def test_read_release_pairs_errors(tmp_path):
    path = tmp_path / "pairs.csv"
    path.write_text("a,b\nx,y\n")
    with pytest.raises(InputError, match="word1"):
        read_release_pairs(path)
    path.write_text("term1,term2,conc1\nx,y,high\n")
    with pytest.raises(InputError, match=r"pairs.csv:2.*conc1"):
        read_release_pairs(path)


def test_split_half_ignores_row_and_rater_order():
    ratings = binary_study(seed=3)
    base = split_half_all_splits(ratings)
    shuffled = ratings.sample(frac=1.0, random_state=2)
    shuffled = shuffled.assign(rater_id="x" + shuffled["rater_id"].str[::-1])
    again = split_half_all_splits(shuffled)
    assert again["r"] == pytest.approx(base["r"]) and again["pairs"] == base["pairs"]


def test_answer_lists_share_one_float_per_distinct_rating():
    """Issue 22: a float object per answer was held for the whole run (1.4 M at 10,000
    raters); the lists now share one per distinct value, with the same values in rater order."""
    rng = np.random.default_rng(3)
    ratings = pd.DataFrame({"rater_id": np.repeat([f"r{i}" for i in range(30)], 20),
                            "tranche": 1, "word1": np.tile([f"w{i}" for i in range(20)], 30),
                            "word2": "x", "kind": "unique",
                            "rating": rng.integers(0, 7, 600) + rng.choice([0.0, 0.5], 600)})
    ratings = ratings.iloc[rng.permutation(600)].reset_index(drop=True)     # any row order
    scores = gold_scores(ratings)
    by_rater = ratings.sort_values("rater_id", kind="stable")
    want = by_rater.groupby("word1", sort=False)["rating"].agg(list)
    assert scores.set_index("word1")["scores"].to_dict() == want.to_dict()
    floats = [value for values in scores["scores"] for value in values]
    assert all(type(value) is float for value in floats)
    assert len({id(value) for value in floats}) == ratings["rating"].nunique()


def test_no_accepted_rating_gives_no_pair():
    ratings = pd.DataFrame({"rater_id": ["a"], "tranche": 1, "word1": ["x"], "word2": "w",
                            "kind": "checkpoint", "rating": [1.0]})
    scores = gold_scores(ratings)
    assert scores.empty and "scores" in scores.columns
