"""Quality flags per rater (lexgold.process.quality) against hand-computed figures."""

import numpy as np
import pandas as pd

from lexgold.process.quality import FLAG_COLUMNS, pair_seconds, quality_flags


def pages(rater, pages_, start="2026-03-01T12:00:00Z", kind="unique"):
    """Rows of one rater: ``pages_`` is a list of (seconds after start, [(word, rating, ms)])."""
    t0 = pd.Timestamp(start)
    rows = []
    for seconds, answers in pages_:
        at = (t0 + pd.Timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")
        rows += [(rater, 1, word, "w", rating, kind, at, ms) for word, rating, ms in answers]
    return pd.DataFrame(rows, columns=["rater_id", "tranche", "word1", "word2", "rating", "kind",
                                       "answered_at", "response_ms"])


def test_page_time_is_the_largest_response_time_shared_by_its_pairs():
    frame = pages("a", [(10, [("x", 1, 3000), ("y", 2, 9000), ("z", 3, 6000)]),
                        (40, [("u", 4, 1000), ("v", 5, 2000)])])
    seconds = pair_seconds(frame)
    assert seconds.tolist() == [3.0, 3.0, 3.0, 1.0, 1.0]
    assert quality_flags(frame)["median_s_per_pair"].iloc[0] == 3.0   # median of 3,3,3,1,1


def test_without_response_times_the_gap_between_pages_is_used():
    frame = pages("a", [(0, [("x", 1, None), ("y", 2, None)]),
                        (20, [("z", 3, None), ("u", 4, None)]),
                        (28, [("v", 5, None)])])
    frame["response_ms"] = frame["response_ms"].astype("Int64")
    seconds = pair_seconds(frame)
    assert np.isnan(seconds.iloc[0]) and np.isnan(seconds.iloc[1])   # first page: no time
    assert seconds.iloc[2:].tolist() == [10.0, 10.0, 8.0]
    assert quality_flags(frame)["median_s_per_pair"].iloc[0] == 10.0


def test_no_times_gives_nan_not_zero():
    frame = pages("a", [(0, [("x", 1, 500)])]).drop(columns=["answered_at", "response_ms"])
    assert np.isnan(quality_flags(frame)["median_s_per_pair"].iloc[0])


def test_straight_lining_checkpoints_and_repeats():
    a = pages("a", [(10, [("x", 4, 1000), ("y", 4, 1000), ("z", 4, 1000), ("u", 2, 1000)]),
                    (20, [("u", 5, 1000)])])
    a.loc[4, "kind"] = "calibration"                       # u answered 2, then 5: |5 - 2| = 3
    b = pages("b", [(10, [("x", 0, 1000), ("y", 6, 1000)])])
    checks = pages("b", [(5, [("cp1", 0, 800), ("cp2", 1, 800), ("cp3", 0, 800)])],
                   kind="checkpoint")
    flags = quality_flags(pd.concat([b, checks, a], ignore_index=True)).set_index("rater_id")
    assert list(flags.columns) == FLAG_COLUMNS and list(flags.index) == ["a", "b"]
    assert flags.loc["a", "top_value_share"] == 3 / 5
    assert flags.loc["b", "top_value_share"] == 1 / 2
    assert (flags.loc["a", "checkpoints_failed"], flags.loc["a", "checkpoints"]) == (0, 0)
    assert (flags.loc["b", "checkpoints_failed"], flags.loc["b", "checkpoints"]) == (2, 3)
    assert flags.loc["a", "repeat_difference"] == 3.0
    assert np.isnan(flags.loc["b", "repeat_difference"])


def test_row_order_does_not_change_the_flags():
    frame = pd.concat([pages("a", [(10, [("x", 1, 3000), ("y", 2, 9000)]),
                                   (30, [("x", 3, 500)])]),
                       pages("b", [(10, [("x", 6, 100), ("y", 6, 200)])])], ignore_index=True)
    shuffled = frame.sample(frac=1.0, random_state=7)
    pd.testing.assert_frame_equal(quality_flags(frame), quality_flags(shuffled))
