"""Best-Worst Scaling tuple designs (lexgold.study.bws): balance on small sets."""

import numpy as np
import pandas as pd
import pytest

from lexgold.study.bws import bws_tuples, design_bws, make_tuples, tuple_balance
from lexgold.study.pairs import check_pairs
from lexgold.study.config import BwsStudy, load_study_config
from lexgold.errors import InputError


@pytest.mark.parametrize("n", [5, 8, 12, 50, 120])
def test_each_pair_in_the_same_number_of_tuples(n):
    tuples = make_tuples(range(n), 2 * n, 4, np.random.default_rng(n))
    report = tuple_balance(tuples, range(n))
    assert tuples.shape == (2 * n, 4)
    assert report["occurrences_min"] == report["occurrences_max"] == 8
    assert report["repeated_in_tuple"] == 0
    assert report["items_unused"] == 0


@pytest.mark.parametrize("n, floor", [(5, 6), (8, 4), (12, 3), (50, 1), (120, 1)])
def test_no_two_pairs_together_more_than_needed(n, floor):
    # an item of 8 tuples has 24 partner places for n - 1 partners: ceil(24 / (n - 1))
    report = tuple_balance(make_tuples(range(n), 2 * n, 4, np.random.default_rng(1)))
    assert report["cooccurrence_floor"] == floor
    assert report["cooccurrence_max"] == floor
    assert report["balanced"]


def test_large_sets_never_repeat_a_co_occurrence():
    report = tuple_balance(make_tuples(range(300), 600, 4, np.random.default_rng(3)))
    assert report["pairs_together_more_than_once"] == 0


def test_uneven_totals_give_one_extra_occurrence_at_most():
    tuples = make_tuples(range(10), 7, 4, np.random.default_rng(0))    # 28 places, 10 items
    report = tuple_balance(tuples, range(10))
    assert (report["occurrences_min"], report["occurrences_max"]) == (2, 3)
    assert report["repeated_in_tuple"] == 0


def test_balance_report_by_hand():
    report = tuple_balance(np.array([[0, 1, 2, 3], [0, 1, 4, 5], [2, 3, 4, 4]]), range(7))
    assert report["repeated_in_tuple"] == 1
    assert report["pairs_together_more_than_once"] == 2        # (0, 1) and (2, 3)
    assert report["cooccurrence_max"] == 2
    assert report["items_unused"] == 1                         # 6
    assert not report["balanced"]


def test_too_few_pairs_is_an_error():
    with pytest.raises(InputError, match="at least 4 pairs"):
        make_tuples(range(3), 6, 4, np.random.default_rng(0))


def _pairs(n_by_pos):
    rows = [(f"{pos.lower()}{i}a", f"{pos.lower()}{i}b", pos)
            for pos, n in n_by_pos.items() for i in range(n)]
    return check_pairs(pd.DataFrame(rows, columns=["word1", "word2", "pos"]), source="pairs")


def test_pos_pure_tuples():
    pairs = _pairs({"N": 20, "V": 8, "A": 6})
    tuples = bws_tuples(pairs, BwsStudy(), np.random.default_rng(0))
    assert len(tuples) == 2 * 34
    for _, row in tuples.iterrows():
        assert set(pairs.loc[[row[f"p{i}"] for i in range(4)], "pos"]) == {row["pos"]}


def test_pos_pure_needs_a_full_tuple_per_pos():
    with pytest.raises(InputError, match="part of speech A has only 3 pairs"):
        bws_tuples(_pairs({"N": 10, "A": 3}), BwsStudy(), np.random.default_rng(0))
    mixed = bws_tuples(_pairs({"N": 10, "A": 3}), BwsStudy(pos_pure=False),
                       np.random.default_rng(0))
    assert len(mixed) == 26


def test_design_pages_tranches_checkpoints():
    config = load_study_config("simlex_bws")
    config.bws.tuples_per_tranche = 20
    pairs = _pairs({"N": 30, "V": 10, "A": 10})
    design = design_bws(pairs, config, np.random.default_rng(0))
    assert design.report["balance"]["occurrences_min"] == 8
    assert len(design.tranches) == 5                       # 98 tuples + 2 in every tranche
    seen = []
    for pages in design.tranches:
        tuples = [t for page in pages for t in page.tuples]
        assert {t for t, kind in tuples if kind == "consistency"} == set(design.consistency)
        seen += [t for t, kind in tuples if kind == "unique"]
        checks = [i for i, page in enumerate(pages) if page.kind == "checkpoint"]
        assert len(checks) == 2 and 0 < checks[0] < checks[1] < len(pages)
        for page in pages:
            assert len(page.tuples) <= config.bws.tuples_per_page
            if page.kind == "tuples":                      # POS-pure pages
                ids = [t for t, _ in page.tuples]
                assert len(set(design.tuples.set_index("tuple_id").loc[ids, "pos"])) == 1
    assert sorted(seen + design.consistency) == list(design.tuples["tuple_id"])


def test_study_create_of_too_few_pairs_names_the_part_of_speech_and_writes_nothing(tmp_path):
    from lexgold.study.store import create_study

    pairs = tmp_path / "pairs.csv"
    pd.DataFrame({"word1": ["a", "b", "c", "d", "i"], "word2": ["e", "f", "g", "h", "j"],
                  "pos": ["N"] * 4 + ["V"]}).to_csv(pairs, index=False)
    url = f"sqlite:///{tmp_path / 'study.sqlite'}"
    with pytest.raises(InputError, match="part of speech V has only 1 pairs"):
        create_study("simlex_bws", pairs, url)
    assert not (tmp_path / "study.sqlite").exists()


def test_balance_floor_of_a_pos_pure_design_is_per_part_of_speech():
    # two parts of speech of 5 pairs, each with all five 4-subsets: every pair is in 4 tuples,
    # 4 * 3 partner places for 4 partners of its own part of speech -> floor 3 (over all 10
    # pairs it would be ceil(12 / 9) = 2, which a POS-pure design cannot reach)
    from itertools import combinations

    from lexgold.study.bws import tuple_balance

    rows = [list(c) for c in combinations(range(5), 4)] + \
        [list(c) for c in combinations(range(5, 10), 4)]
    groups = {i: ("N" if i < 5 else "V") for i in range(10)}
    pure = tuple_balance(np.array(rows), range(10), groups)
    assert (pure["cooccurrence_max"], pure["cooccurrence_floor"], pure["balanced"]) == (3, 3, True)
    mixed = tuple_balance(np.array(rows), range(10))
    assert (mixed["cooccurrence_floor"], mixed["balanced"]) == (2, False)
