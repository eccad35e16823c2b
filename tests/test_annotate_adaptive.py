"""Adaptive allocation: the uncertainty ranking, split-half reliability, top-up
tranches that keep every rule of the layout, the refresher's step and the admin picture."""

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm
from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from test_annotate_app import make_app, protocol_variant, refresh_figures, usf_pair_file

from lexgold.live import allocator as adaptive
from lexgold.live import figures, refresher
from lexgold.study import models as m
from lexgold.live.adaptive_svg import picture
from lexgold.study.db import database_url, make_engine, session_factory
from lexgold.study.design import PlannedStep
from lexgold.annotate.rehearse import rehearse
from lexgold.study.config import config_from_dict, load_study_config
from lexgold.study.store import create_study, store_tranche
from lexgold.crowd.simulate import Crowd
from lexgold.protocols import ProtocolError, load_protocol


def adaptive_protocol(folder: Path, name: str, base: dict, **keys) -> Path:
    """A packaged protocol with ``[study]`` keys changed (``base``) and adaptive keys added."""
    path = protocol_variant(folder, name, **base)
    text = path.read_text(encoding="utf-8")
    added = "".join(f"{k} = {v!r}\n".replace("'", '"') for k, v in keys.items())
    path.write_text(text.replace("[study]\n", "[study]\nallocation = \"adaptive\"\n" + added, 1),
                    encoding="utf-8")
    return path


# -- the uncertainty ranking (hand cases) -------------------------------------------------------

def test_rank_uncertainty_by_hand():
    """Means 1, 2, 5 on 4 raters with variance 1 each: pooled variance 1, so every standard
    error is 1/2 and each pair's sd of a difference sqrt(1/2); u_i sums Phi(-gap/sqrt(1/2))."""
    table = pd.DataFrame({"n": [4, 4, 4], "mean": [1.0, 2.0, 5.0], "var": [1.0, 1.0, 1.0]},
                         index=[10, 11, 12])
    sd = np.sqrt(0.5)
    p12, p13, p23 = norm.cdf(-1 / sd), norm.cdf(-4 / sd), norm.cdf(-3 / sd)
    got = adaptive.rank_uncertainty(table)
    assert got.index.tolist() == [10, 11, 12]
    np.testing.assert_allclose(got, [p12 + p13, p12 + p23, p13 + p23], rtol=1e-12)
    assert got[11] > got[10] > got[12]             # the middle pair is the least certain


def test_standard_errors_shrink_to_the_pooled_variance():
    """v = ((n-1) var + 2 v0) / (n-1+2): pooled v0 = (3*2 + 1*4) / (3+1) = 2.5."""
    table = pd.DataFrame({"n": [4, 2, 1], "mean": [0.0, 0.0, 0.0],
                          "var": [2.0, 4.0, np.nan]})
    v0 = (3 * 2 + 1 * 4) / 4
    want = [((3 * 2 + 2 * v0) / 5 / 4) ** 0.5, ((1 * 4 + 2 * v0) / 3 / 2) ** 0.5, v0 ** 0.5]
    np.testing.assert_allclose(adaptive.standard_errors(table), want, rtol=1e-12)


def test_a_noisier_pair_and_one_with_fewer_raters_go_first():
    """The site's criterion (error gain): pooled v0 = (1*1 + 7*1 + 1*3) / 9; shrunk v = (1 +
    2 v0) / 3, (7 + 2 v0) / 9, (3 + 2 v0) / 3; gains v / (n (n + 1)): pair 3 (noisier) before
    pair 1 before pair 2 (8 raters); an unrated candidate comes before all."""
    table = pd.DataFrame({"n": [2, 8, 2], "mean": [3.0, 3.2, 6.0], "var": [1.0, 1.0, 3.0]},
                         index=[1, 2, 3])
    v0 = 11 / 9
    v = np.array([(1 + 2 * v0) / 3, (7 + 2 * v0) / 9, (3 + 2 * v0) / 3])
    np.testing.assert_allclose(adaptive.error_gain(table, 1), v / (table["n"] * (table["n"] + 1)),
                               rtol=1e-12)
    assert adaptive.SITE_RULE == "error"
    assert adaptive.least_certain(table, [1, 2, 3, 4], 4) == [4, 3, 1, 2]
    assert adaptive.least_certain(table, [1, 2], 1) == [1]


def test_pair_table_variances_by_hand_order_a_top_up_of_pairs_with_different_rater_counts():
    """pair_table's sample variance (ddof 1) of the rater-level means, and the shrinkage the
    site's criterion puts on it, by hand on pairs rated by 2, 3 and 5 raters (a rater who saw
    pair "a" twice counts once, with the mean of the two). ``var``: a (4, 6): 2; b (4, 4, 3):
    1/3; c (0, 0, 4, 4, 3): 16.8 / 4 = 4.2. Pooled v0 = (1*2 + 2/3 + 4*4.2) / 7 = 292/105;
    shrunk v = ((n-1) var + 2 v0) / (n - 1 + 2): 794/315, 109/70, 1174/315; gains
    v / (n (n + 1)) with one more rater: a, then b, then c (with ddof 0, or with shrinkage
    weights n instead of n - 1, c would come before b)."""
    rows = [("a", "r1", 3.0), ("a", "r1", 5.0), ("a", "r2", 6.0),
            ("b", "r1", 4.0), ("b", "r2", 4.0), ("b", "r3", 3.0),
            ("c", "r1", 0.0), ("c", "r2", 0.0), ("c", "r3", 4.0), ("c", "r4", 4.0),
            ("c", "r5", 3.0)]
    table = adaptive.pair_table(pd.DataFrame(rows, columns=["pair", "rater_id", "rating"]))
    assert table.loc[["a", "b", "c"], "n"].tolist() == [2, 3, 5]
    np.testing.assert_allclose(table.loc[["a", "b", "c"], "mean"], [5.0, 11 / 3, 2.2],
                               rtol=1e-12)
    np.testing.assert_allclose(table.loc[["a", "b", "c"], "var"], [2.0, 1 / 3, 4.2], rtol=1e-12)
    np.testing.assert_allclose(adaptive.error_gain(table, 1).loc[["a", "b", "c"]],
                               [794 / 315 / 6, 109 / 70 / 12, 1174 / 315 / 30], rtol=1e-12)
    assert adaptive.least_certain(table, ["c", "b", "a", "d"], 4) == ["d", "a", "b", "c"]


def test_misordering_gain_by_hand():
    """g_i = u_i^2 extra / (n_i + extra): the hand u of test_rank_uncertainty_by_hand, 2 more
    raters on 4."""
    table = pd.DataFrame({"n": [4, 4, 4], "mean": [1.0, 2.0, 5.0], "var": [1.0, 1.0, 1.0]},
                         index=[10, 11, 12])
    sd = np.sqrt(0.5)
    p12, p13, p23 = norm.cdf(-1 / sd), norm.cdf(-4 / sd), norm.cdf(-3 / sd)
    u = np.array([p12 + p13, p12 + p23, p13 + p23])
    got = adaptive.misordering_gain(table, 2)
    assert got.index.tolist() == [10, 11, 12]
    np.testing.assert_allclose(got, u ** 2 * 2 / 6, rtol=1e-12)


def test_a_tie_keeps_its_gain_and_a_lone_pair_has_none():
    """Two equal means count 1/2 each (u = 1/2, g = 1/4 * 4/8); a mean far from all has ~0."""
    table = pd.DataFrame({"n": [4, 4, 4], "mean": [1.0, 1.0, 5.0], "var": [1.0, 1.0, 1.0]})
    np.testing.assert_allclose(adaptive.misordering_gain(table, 4), [0.125, 0.125, 0.0],
                               atol=1e-6)


def test_ratings_already_spent_count_against_a_wide_interval():
    """Pair 3 (18 raters) sits among close means and has the higher u, but pair 1 (2 raters,
    one close neighbour) gains more from 2 more raters: u1 ~ 1/2 -> 1/4 * 2/4 against
    u3 ~ 0.89 -> 0.78 * 2/20. The widest-interval ranking took pair 3 first."""
    table = pd.DataFrame({"n": [2, 18, 18, 18, 18], "mean": [1.0, 1.0, 3.0, 3.0, 3.1],
                          "var": [1.0] * 5}, index=[1, 2, 3, 4, 5])
    u = adaptive.rank_uncertainty(table)
    assert u[3] > u[1]
    gain = adaptive.misordering_gain(table, 2)
    np.testing.assert_allclose(gain, u ** 2 * 2 / (table["n"] + 2), rtol=1e-12)
    assert gain[1] > gain[3]
    assert adaptive.least_certain(table, [1, 3], 1, extra=2) == [1]


def test_equally_noisy_pairs_keep_nearly_even_ratings():
    """Top-ups chosen by least_certain among pairs of the same noise (true scores spread over
    the scale) keep the raters per pair near the even share, which is then the best a fixed
    budget can do; ranked by u alone they spread from 4 to many times the mean."""
    rng = np.random.default_rng(5)
    truth = np.linspace(0.5, 5.5, 40)
    ratings = [list(np.round(t + rng.normal(0, 1.2, 4))) for t in truth]
    for _ in range(30):
        table = pd.DataFrame({"n": [len(r) for r in ratings],
                              "mean": [np.mean(r) for r in ratings],
                              "var": [np.var(r, ddof=1) for r in ratings]})
        for i in adaptive.least_certain(table, range(len(truth)), 10, extra=2):
            ratings[i] += list(np.round(truth[i] + rng.normal(0, 1.2, 2)))
    n = np.array([len(r) for r in ratings])
    assert n.sum() == 40 * 4 + 30 * 10 * 2
    assert n.std() / n.mean() < 0.35, n


def test_split_half_of_raters_who_agree_is_one_and_needs_three_pairs():
    """Two raters giving the same ratings: every split's halves are equal, r = 1 and the
    reliability 2r / (1 + r) = 1; a pair with one rater is left out; under three pairs: NaN."""
    a = [0, 1, 2, 4, 5, 6, 3]
    ratings = pd.DataFrame({"pair": list(range(7)) * 2 + [99],
                            "rater_id": ["a"] * 7 + ["b"] * 7 + ["c"],
                            "rating": a + a + [6]})
    assert adaptive.pair_mean_reliability(ratings, np.random.default_rng(0)) == pytest.approx(1.0)
    assert np.isnan(adaptive.pair_mean_reliability(ratings[ratings["pair"] < 2],
                                        np.random.default_rng(0)))


def test_split_half_averages_random_splits_of_more_raters():
    """Four raters per pair: the halves are two raters each, different per split; the result
    is the Spearman-Brown step-up of the mean Pearson r (scipy) over a direct loop on the same
    random draws (one uniform key per rating, the two lowest keys of a pair form its first
    half), as ``lexgold agree --split-half`` computes it."""
    from scipy.stats import pearsonr

    rng = np.random.default_rng(3)
    truth = rng.uniform(0, 6, 30)
    rows = [(p, f"r{k}", truth[p] + rng.normal()) for p in range(30) for k in range(4)]
    ratings = pd.DataFrame(rows, columns=["pair", "rater_id", "rating"])
    got = adaptive.pair_mean_reliability(ratings, np.random.default_rng(5), splits=4)
    draws, rs = np.random.default_rng(5), []
    values = ratings["rating"].to_numpy().reshape(30, 4)          # pairs x raters, as rated
    for _ in range(4):
        keys = draws.random(values.shape)
        first = np.argsort(np.argsort(keys, axis=1), axis=1) < 2
        rs.append(pearsonr(np.where(first, values, 0).sum(axis=1) / 2,
                           np.where(first, 0, values).sum(axis=1) / 2).statistic)
    r = np.mean(rs)
    assert got == pytest.approx(2 * r / (1 + r), abs=1e-12)


def test_the_admin_reliability_is_agrees_split_half_on_the_same_ratings(tmp_path, pairs):
    """One split-half definition: the reliability the admin view shows (``state``, the last
    point of the path, 10 splits seeded 0) is ``lexgold agree --split-half --splits 10 --seed
    0``'s Spearman-Brown figure on the same completed ratings, in the same order."""
    from lexgold.process.agree_figures import agree_file

    protocol = adaptive_protocol(tmp_path, "simlex", {"tranches": 2}, first_round_raters=3,
                                 topup_pairs=20, topup_raters=2, target_reliability=1.0)
    url = database_url(tmp_path / "study.sqlite")
    create_study(protocol, pairs, url, seed=1)
    rehearse_site_only(url)
    engine = make_engine(url)
    with session_factory(engine)() as session:
        config = load_study_config(load_protocol(protocol))
        shown = adaptive.adaptive_state(session, config)
        ratings = adaptive.completed_ratings(session)
        words = dict(session.execute(select(m.Pair.id, m.Pair.word1)).all())
        seconds = dict(session.execute(select(m.Pair.id, m.Pair.word2)).all())
    engine.dispose()
    path = tmp_path / "ratings.csv"
    pd.DataFrame({"rater_id": ratings["rater_id"], "tranche": 1,
                  "word1": ratings["pair"].map(words), "word2": ratings["pair"].map(seconds),
                  "rating": ratings["rating"]}).to_csv(path, index=False)
    found, _, _ = agree_file(path, splits=adaptive.SPLITS, seed=0)
    assert shown["reliability"] is not None and 0 < shown["reliability"] < 1
    assert shown["reliability"] == found["split_half"]["spearman_brown"]


def test_fill_groups_tops_up_a_batch_that_would_not_fill_a_group():
    """SimLex layout (groups of 6-7, calibration repeats): the 3 least precise pairs are N, N, A;
    batch A holds 2 consistency pairs, so 1 + 2 showings cannot make a group of 6: the next
    least certain A pairs are added until 6 (one group). Batch N (2 + 0 consistency) gets 4
    more N pairs; batch V (no pair chosen, no consistency pair) stays empty."""
    config = load_study_config("simlex")
    pos = ["N"] * 10 + ["A"] * 8 + ["V"] * 5
    pairs = pd.DataFrame({"pos": pos, "topic": "", "consistency": False}, index=range(23))
    pairs.loc[[16, 17], "consistency"] = True
    ranked = [0, 1, 10, 2, 11, 19, 12, 3, 13, 4, 14, 5, 6, 7, 8, 9, 15, 18, 20, 21, 22]
    chosen = adaptive.fill_groups(ranked, 3, pairs, config)
    assert chosen[:3] == [0, 1, 10]
    assert sorted(chosen[3:]) == [2, 3, 4, 5, 11, 12, 13]
    assert adaptive.fits(6, config) and not adaptive.fits(5, config)
    assert adaptive.fits(13, config) and adaptive.fits(8, config) is False


# -- the protocol keys --------------------------------------------------------------------------

def test_allocation_keys_are_checked(tmp_path):
    assert load_study_config("simlex").allocation == "uniform"
    spec = load_protocol("simlex")
    spec["study"] = {**spec["study"], "allocation": "greedy"}
    with pytest.raises(ProtocolError, match=r"\[study\] allocation: allowed 'uniform' \| "
                                            r"'adaptive', given 'greedy'"):
        load_study_config(spec)
    spec["study"] = {**spec["study"], "allocation": "adaptive", "target_reliability": 0}
    with pytest.raises(ProtocolError, match=r"\[study\] target_reliability: allowed 0 < x <= 1"):
        load_study_config(spec)


# -- top-up tranches in a study -----------------------------------------------------------------

def layout_problems(session, number: int, config) -> list[str]:
    """Every rule of the layout a tranche breaks (design.py's module docstring)."""
    steps = session.execute(select(m.Step.id, m.Step.kind, m.Step.batch, m.Step.checkpoint)
                            .join(m.Tranche, m.Step.tranche_id == m.Tranche.id)
                            .where(m.Tranche.number == number).order_by(m.Step.position)).all()
    consistency = set(session.scalars(select(m.Pair.id).where(m.Pair.consistency)))
    pos = dict(session.execute(select(m.Pair.id, m.Pair.pos)).all())
    problems, seen_batches, shown, index = [], [], set(), 0
    opening = [i for i, c in enumerate(config.checkpoints) if c.before == "start"]
    if [s.checkpoint for s in steps[:len(opening)]] != opening:
        problems.append("the opening checkpoints are not first")
    previous = None
    for k, step in enumerate(steps):
        if step.kind != "group":
            continue
        items = session.execute(select(m.Item.pair_id, m.Item.kind).where(
            m.Item.step_id == step.id).order_by(m.Item.position)).all()
        if {pos[i] for i, _ in items} != {step.batch}:
            problems.append(f"group {k} is not POS-pure")
        if not config.group_size_min <= len(items) <= config.group_size_max:
            problems.append(f"group {k} has {len(items)} pairs")
        if step.batch not in seen_batches:
            seen_batches.append(step.batch)
            check = next((i for i, c in enumerate(config.checkpoints)
                          if c.before == step.batch), None)
            if check is not None and steps[k - 1].checkpoint != check:
                problems.append(f"no checkpoint before batch {step.batch}")
            previous, index = None, 0
        # a consistency pair second in each group while the batch has one for it (the
        # designer's rule: a batch with more groups than consistency pairs is a harmless miss)
        second = items[1 if previous is not None else 0]
        if config.consistency_second and index < sum(pos[c] == step.batch for c in consistency) \
                and second[1] != "consistency":
            problems.append(f"group {k} has no consistency pair second")
        index += 1
        if previous is not None and items[0] != (previous, "calibration"):
            problems.append(f"group {k} does not repeat the previous group's last pair")
        for pair, kind in items:
            if kind == "duplicate" and pair not in shown:
                problems.append(f"duplicate {pair} shown before its first showing")
            shown.add(pair)
        previous = items[-1][0]
    if not consistency <= shown:
        problems.append("the consistency set is not all shown")
    duplicates = session.scalar(select(func.count()).select_from(m.Item).join(
        m.Tranche, m.Item.tranche_id == m.Tranche.id).where(
        m.Tranche.number == number, m.Item.kind == "duplicate"))
    if duplicates != config.duplicates_per_tranche:
        problems.append(f"{duplicates} duplicates, not {config.duplicates_per_tranche}")
    return problems


@pytest.fixture(scope="module")
def pairs(usf, tmp_path_factory):
    return usf_pair_file(usf, tmp_path_factory.mktemp("pairs") / "pairs.csv",
                         counts=(("N", "N", 60), ("V", "V", 20), ("A", "AJ", 12)))


@pytest.mark.parametrize("name,base,pair_counts", [
    ("simlex", {"tranches": 2, "raters_per_tranche": 4}, None),
    ("hyperlex", {"tranches": 2, "raters_per_tranche": 4, "min_accepted_raters": 0},
     (("N", "N", 90), ("V", "V", 30))),
])
def test_top_up_tranches_keep_every_rule_of_the_layout(tmp_path, usf, pairs, name, base,
                                                       pair_counts):
    """A rehearsal of an adaptive study: two first-round tranches of 2 raters, then top-ups of
    the least precise pairs until the budget is spent; each top-up tranche is laid out by the
    designer (opening checkpoints, a checkpoint per POS, POS-pure groups of 6-7, calibration
    repeats, a consistency pair second, the whole consistency set, the protocol's duplicates)."""
    if pair_counts is not None:
        pairs = usf_pair_file(usf, tmp_path / "pairs.csv", counts=pair_counts)
    protocol = adaptive_protocol(tmp_path, name, base, first_round_raters=2, topup_pairs=24,
                                 topup_raters=1, target_reliability=1.0)
    url = database_url(tmp_path / "study.sqlite")
    report = create_study(protocol, pairs, url, seed=1)
    first = sum(r["showings"] for r in report["per_tranche"]) * 2
    assert report["slots"] == 4
    result = rehearse(url, rng=np.random.default_rng(1), crowd=Crowd(spammers=0.0))
    assert result["finished"] and result["top_up_places"] >= 3
    engine = make_engine(url)
    with session_factory(engine)() as session:
        config = config_from_dict(session.scalars(select(m.Study.config)).one())
        numbers = session.scalars(select(m.Tranche.number).order_by(m.Tranche.number)).all()
        assert numbers == list(range(1, 3 + result["top_up_places"]))
        for number in numbers[2:]:
            assert layout_problems(session, number, config) == [], number
            unique = session.scalar(select(func.count(func.distinct(m.Item.pair_id))).join(
                m.Tranche, m.Item.tranche_id == m.Tranche.id).join(
                m.Pair, m.Item.pair_id == m.Pair.id).where(
                m.Tranche.number == number, ~m.Pair.consistency))
            assert 24 <= unique <= 24 + 2 * config.group_size_max   # groups filled
        money = adaptive.budget(session, config)
        # the uniform budget: raters_per_tranche times the design's showings
        assert money["budget"] == first // 2 * config.raters_per_tranche
        assert money["spent"] == money["committed"] <= money["budget"]
        # the end: nothing open, and no budget for another tranche (or the target)
        assert adaptive.allocate(session, config)["status"] in ("budget", "target")
        curve = adaptive.planner_curve(session)       # the admin picture's planner line
        assert curve["raters"].tolist()[:3] == [1, 2, 3]
        assert curve["reliability"].between(0, 1).all()
    engine.dispose()


def test_a_top_up_goes_to_the_least_certain_pairs_and_is_added_once(tmp_path, pairs):
    """After the first round the top-up tranche holds exactly the pairs least_certain names
    over the completed raters' ratings; while its slot is open nothing more is added, and a
    second process adding the same tranche number collides and adds nothing."""
    protocol = adaptive_protocol(tmp_path, "simlex", {"tranches": 2}, first_round_raters=2,
                                 topup_pairs=20, topup_raters=1, target_reliability=1.0,
                                 budget_ratings=100000)
    url = database_url(tmp_path / "study.sqlite")
    create_study(protocol, pairs, url, seed=1)
    engine = make_engine(url)
    factory = session_factory(engine)
    config = load_study_config(load_protocol(protocol))
    # the first round only: max_raters stops the rehearsal after its four places
    rehearse(url, rng=np.random.default_rng(2), crowd=Crowd(spammers=0.0), max_raters=4)
    with factory() as session:
        tranches = session.scalars(select(m.Tranche.number)).all()
        assert sorted(tranches) == [1, 2, 3]          # the rehearsal added one at the end
        ratings = adaptive.completed_ratings(session)
        unique = session.scalars(select(m.Pair.id).where(~m.Pair.consistency)).all()
        ranked = adaptive.least_certain(adaptive.pair_table(ratings), unique, len(unique),
                                        config.topup_raters)
        want = adaptive.fill_groups(ranked, 20, adaptive._pair_frame(session), config)
        assert want[:20] == ranked[:20]
        chosen = set(session.scalars(select(m.Item.pair_id).join(
            m.Tranche, m.Item.tranche_id == m.Tranche.id).join(
            m.Pair, m.Item.pair_id == m.Pair.id).where(m.Tranche.number == 3,
                                                       ~m.Pair.consistency)))
        assert chosen == set(want)
        assert adaptive.allocate(session, config) == {"status": "waiting"}
        assert session.scalar(select(func.count()).select_from(m.Tranche)) == 3
    with factory() as one, factory() as two:
        store_tranche(one, 4, [PlannedStep("group", "N", items=[(unique[0], "unique")])], int, 1)
        one.commit()
        with pytest.raises(IntegrityError):            # the unique tranche number
            store_tranche(two, 4, [PlannedStep("group", "N", items=[(unique[1], "unique")])],
                          int, 1)
        two.rollback()
    engine.dispose()


def stored_tranche(session, number: int) -> dict:
    """Tranche ``number`` as stored, without ids: its steps, items (by the pair's words) and
    slots."""
    tranche = session.scalars(select(m.Tranche).where(m.Tranche.number == number)).one()
    steps = session.execute(select(m.Step.position, m.Step.kind, m.Step.batch,
                                   m.Step.checkpoint).where(m.Step.tranche_id == tranche.id)
                            .order_by(m.Step.position)).all()
    items = session.execute(select(m.Step.position, m.Item.position, m.Pair.word1, m.Pair.word2,
                                   m.Item.kind, m.Item.tuple_id)
                            .join(m.Step, m.Item.step_id == m.Step.id)
                            .join(m.Pair, m.Item.pair_id == m.Pair.id)
                            .where(m.Item.tranche_id == tranche.id)
                            .order_by(m.Step.position, m.Item.position)).all()
    slots = session.execute(select(m.Slot.number, m.Slot.status)
                            .where(m.Slot.tranche_id == tranche.id).order_by(m.Slot.number)).all()
    return {"n_steps": tranche.n_steps, "steps": steps, "items": items, "slots": slots}


def test_a_top_up_tranche_is_stored_as_the_uniform_path_stores_its_steps(tmp_path, pairs):
    """The top-up tranche allocate stores (pair ids) has the rows the uniform path
    (create_study's storage, pair rows of the pair file) stores for the same steps and slots:
    the same steps, items, kinds, positions and free slots."""
    from lexgold.study.db import upgrade
    from lexgold.study.design import Design
    from lexgold.study.store import _store_design

    protocol = adaptive_protocol(tmp_path, "simlex", {"tranches": 2}, first_round_raters=2,
                                 topup_pairs=20, topup_raters=3, target_reliability=1.0,
                                 budget_ratings=100000)
    url = database_url(tmp_path / "study.sqlite")
    create_study(protocol, pairs, url, seed=1)
    rehearse(url, rng=np.random.default_rng(2), crowd=Crowd(spammers=0.0), max_raters=4)
    engine = make_engine(url)
    with session_factory(engine)() as session:
        topup = stored_tranche(session, 3)
        rows = session.execute(select(m.Pair.id, m.Pair.word1, m.Pair.word2, m.Pair.pos,
                                      m.Pair.topic, m.Pair.extra, m.Pair.consistency)
                               .order_by(m.Pair.id)).all()
        steps = [PlannedStep(s.kind, s.batch, checkpoint=s.checkpoint, items=list(
                     session.execute(select(m.Item.pair_id, m.Item.kind)
                                     .where(m.Item.step_id == s.id)
                                     .order_by(m.Item.position)).all()))
                 for s in session.scalars(select(m.Step).join(m.Tranche).where(
                     m.Tranche.number == 3).order_by(m.Step.position))]
    engine.dispose()
    assert len(topup["slots"]) == 3 and {status for _, status in topup["slots"]} == {"free"}
    assert {kind for *_, kind, _ in topup["items"]} >= {"unique", "consistency", "calibration"}
    assert {step.kind for step in steps} == {"group", "checkpoint"}
    row_of = {row.id: k for k, row in enumerate(rows)}
    frame = pd.DataFrame([row[1:6] for row in rows],
                         columns=["word1", "word2", "pos", "topic", "extra"])
    design = Design([[PlannedStep(s.kind, s.batch, checkpoint=s.checkpoint,
                           items=[(row_of[i], kind) for i, kind in s.items]) for s in steps]],
                    consistency=[], report={})
    uniform = make_engine(database_url(tmp_path / "uniform.sqlite"))
    upgrade(uniform)
    with session_factory(uniform)() as session, session.begin():
        _store_design(session, frame, design,
                      {k for k, row in enumerate(rows) if row.consistency}, 3)
    with session_factory(uniform)() as session:
        assert stored_tranche(session, 1) == topup
    uniform.dispose()


def test_the_refresher_adds_the_top_up_and_the_admin_view_shows_the_picture(tmp_path, pairs):
    """The background refresher (refresher.refresh), not a rater's request, adds the top-up once
    the round is complete, stores the picture with the figures, adds nothing on a second
    round; the admin page prints the stored SVG (no script)."""
    protocol = adaptive_protocol(tmp_path, "simlex", {"tranches": 2}, first_round_raters=2,
                                 topup_pairs=20, topup_raters=2, target_reliability=1.0)
    url = database_url(tmp_path / "study.sqlite")
    create_study(protocol, pairs, url, seed=1)
    app = make_app(url)
    rehearse_site_only(url)
    with app.extensions["lexgold"].sessions() as session:
        assert session.scalar(select(func.count()).select_from(m.Tranche)) == 2
    done = refresh_figures(app)
    assert done["added"] == {3: 2}
    again = refresh_figures(app)
    assert again["added"] == {}
    stored = figures.load(app.extensions["lexgold"].reads())
    shown = stored.figures["adaptive"]
    assert shown["status"] == "waiting" and shown["first_tranches"] == 2
    assert shown["spent"] > 0 and shown["committed"] > shown["spent"]
    assert shown["reliability"] is not None and len(shown["path"]) >= 2
    svg = shown["svg"]
    assert svg.startswith("<svg") and "<script" not in svg and "style=" not in svg
    assert "top-up 3" in svg and "0/2" in svg
    admin = app.test_client()
    admin.post("/admin/login", data={"password": "s3cret"})
    html = admin.get("/admin/").get_data(as_text=True)
    assert 'id="adaptive-picture"' in html and "Adaptive allocation" in html
    assert "uniform allocation, the default, costs nothing on any of them" in html
    assert re.search(r"\d+ of \d+ ratings spent", html)
    app.extensions["lexgold_engine"].dispose()


def rehearse_site_only(url):
    """Complete the first round without the rehearsal's own allocation step."""
    import lexgold.annotate.rehearse as module

    original = module._recruit
    module._recruit = lambda site, public_id: None
    try:
        rehearse(url, rng=np.random.default_rng(4), crowd=Crowd(spammers=0.0))
    finally:
        module._recruit = original


def test_picture_draws_the_planner_curve_and_one_bar_per_tranche():
    state = {"budget": 1000, "spent": 400, "committed": 600, "target": 0.9,
             "reliability": 0.8, "first_tranches": 2, "pairs": 100,
             "path": [{"ratings": 200, "raters": 2, "reliability": 0.6},
                      {"ratings": 400, "raters": 4, "reliability": 0.8}]}
    tranches = [{"tranche": 1, "slots": 2, "completed": 2},
                {"tranche": 2, "slots": 2, "completed": 2},
                {"tranche": 3, "slots": 2, "completed": 0}]
    curve = pd.DataFrame({"raters": [1, 2, 4], "reliability": [0.5, 0.7, 0.85],
                          "low": [0.4, 0.6, 0.8], "high": [0.6, 0.8, 0.9]})
    svg = picture(state, tranches, curve)
    assert svg.count("<polyline") == 2 and "planner" in svg
    assert "top-up 3" in svg and ">2/2<" in svg and ">0/2<" in svg
    assert "budget: 400 of 1000 ratings spent" in svg and "target 0.9" in svg
    without = picture(state, tranches)
    assert without.count("<polyline") == 1 and "planner" not in without


def test_study_top_up_adds_the_next_tranche_by_hand(tmp_path, pairs):
    """`lexgold study top-up DB` runs the same step: one tranche once the round is complete,
    then nothing while its slots are open."""
    from click.testing import CliRunner

    from lexgold.cli import cli

    protocol = adaptive_protocol(tmp_path, "simlex", {"tranches": 2}, first_round_raters=1,
                                 topup_pairs=20, topup_raters=2, target_reliability=1.0,
                                 budget_ratings=100000)
    db = tmp_path / "study.sqlite"
    create_study(protocol, pairs, database_url(db), seed=1)
    rehearse_site_only(database_url(db))
    first = CliRunner().invoke(cli, ["study", "top-up", str(db)])
    assert first.exit_code == 0, first.output
    assert ("adaptive allocation: a top-up tranche of the pairs whose means are least "
            "precise was added (tranche 3, 2 slots)") in first.output
    again = CliRunner().invoke(cli, ["study", "top-up", str(db)])
    assert "adaptive allocation: slots are still open" in again.output
