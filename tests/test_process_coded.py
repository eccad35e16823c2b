"""Ratings read with their key columns as categoricals (issue 22, item 2): the same values,
the same figures and the same release bytes as the plain strings."""

import json

import numpy as np
import pandas as pd
import pytest

from lexgold.errors import InputError
from lexgold.process.agreement import iaa_weighted_by_pairs
from lexgold.ratings.long import CODED, check_ratings, coded, read_ratings
from lexgold.tables import read_text_table


def test_read_ratings_codes_the_key_columns_in_sorted_order(tmp_path):
    path = tmp_path / "ratings.csv"
    path.write_text("rater_id,tranche,word1,word2,rating,pos,kind,answered_at\n"
                    " r2 ,1,dog,cat,4,N,,2026-01-01T00:00:01Z\n"
                    "r1,1,dog,cat,5,N,unique,2026-01-01T00:00:02Z\n"
                    "r1,10,bread,toast,1,N,checkpoint,2026-01-01T00:00:03Z\n"
                    "r10,2,run,walk,3,V,consistency,2026-01-01T00:00:04Z\n"
                    "r2,2,run,walk,2,V,consistency,2026-01-01T00:00:05Z\n", encoding="utf-8")
    frame = read_ratings(path)
    plain = check_ratings(read_text_table(path), source=path)
    for column in CODED:
        assert isinstance(frame[column].dtype, pd.CategoricalDtype), column
        categories = list(frame[column].cat.categories)
        assert categories == sorted(categories), column
        assert frame[column].tolist() == plain[column].tolist(), column
    assert frame["rater_id"].tolist() == ["r2", "r1", "r1", "r10", "r2"]     # stripped
    assert list(frame["rater_id"].cat.categories) == ["r1", "r10", "r2"]     # " r2 " merged
    assert frame["kind"].tolist() == ["unique", "unique", "checkpoint", "consistency",
                                      "consistency"]
    assert frame["answered_at"].tolist() == plain["answered_at"].tolist()
    assert frame["rating"].tolist() == [4.0, 5.0, 1.0, 3.0, 2.0]
    assert check_ratings(frame)["rater_id"].dtype == frame["rater_id"].dtype   # kept


def test_coded_ratings_still_name_the_line_of_an_empty_key(tmp_path):
    path = tmp_path / "ratings.csv"
    path.write_text("rater_id,tranche,word1,word2,rating\nr1,1,dog,cat,4\n  ,1,dog,cat,5\n",
                    encoding="utf-8")
    with pytest.raises(InputError, match=r"ratings\.csv:3, field 'rater_id': empty value"):
        read_ratings(path)


def test_pairs_listed_twice_are_kept_apart_with_coded_words():
    # the docstring's two tranches, rater a answering p twice (a separate item with "keep")
    ratings = pd.DataFrame({"rater_id": list("aaaabbbcccddd"),
                            "tranche": list("xxxxxxxyyyyyy"),
                            "word1": list("pqrppqrstustu"), "word2": "w",
                            "rating": [1, 2, 3, 1, 1, 2, 3, 1, 2, 3, 3, 2, 1]})
    plain = iaa_weighted_by_pairs(ratings, min_overlap=3)
    codes = iaa_weighted_by_pairs(coded(check_ratings(ratings)), min_overlap=3)
    assert codes == plain
    assert codes["tranches"][0]["pairs"] == 4 and codes["iaa1"] == plain["iaa1"]


def test_process_gives_the_same_release_from_coded_and_plain_ratings(tmp_path):
    from lexgold.process.pipeline import process_ratings
    from lexgold.process.release import release_text
    from lexgold.crowd.simulate import simulate_ratings, usf_pairs

    rng = np.random.default_rng(5)
    pairs = usf_pairs(120, rng=rng)
    ratings, _ = simulate_ratings(pairs, "simlex", rng=rng, raters_per_tranche=8)
    path = tmp_path / "ratings.csv"
    ratings.to_csv(path, index=False)
    plain = check_ratings(read_text_table(path), source=path)
    results = [process_ratings(frame, "simlex", rng=np.random.default_rng(2), pairs=pairs,
                               source=path) for frame in (plain, read_ratings(path))]
    texts = [(release_text(r.gold, "simlex"), r.exclusions.to_csv(index=False),
              r.scores.drop(columns="scores", errors="ignore").to_csv(index=False),
              json.dumps(r.report, sort_keys=True, default=str)) for r in results]
    assert texts[0] == texts[1]


def test_run_processes_with_one_blas_thread(tmp_path, monkeypatch):
    """More BLAS threads on these small matrices burn CPU for the same bytes (issue 22)."""
    from threadpoolctl import threadpool_info

    from lexgold.process import pipeline
    from lexgold.crowd.simulate import simulate_ratings, usf_pairs

    rng = np.random.default_rng(5)
    pairs = usf_pairs(60, rng=rng)
    ratings, _ = simulate_ratings(pairs, "simlex", rng=rng, raters_per_tranche=4)
    ratings.to_csv(tmp_path / "ratings.csv", index=False)
    pairs.to_csv(tmp_path / "pairs.csv", index=False)
    seen, real = [], pipeline.process_ratings

    def spy(*args, **kwargs):
        seen.append([i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"])
        return real(*args, **kwargs)

    monkeypatch.setattr(pipeline, "process_ratings", spy)
    pipeline.run(tmp_path / "ratings.csv", "simlex", tmp_path / "gold",
                 pairs_path=tmp_path / "pairs.csv", plots=False, bootstrap=5,
                 allow_incomplete=True)
    assert seen and seen[0] and set(seen[0]) == {1}
