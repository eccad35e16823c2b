"""Simulated raters answering a Best-Worst Scaling study (``lexgold simulate`` with a
``task = "bws"`` protocol, and the BWS bench).

The rater model is the sliders' (:class:`lexgold.crowd.simulate.SimulatedRater`): an honest
rater perceives each pair of a tuple as the crowd's rater model's latent response (the pair's
latent score and spread, the rater's bias, scale and noise; unrounded; the invented crowd's
``truth + bias + noise``) and chooses the highest as most and the lowest as least; a
"random" spammer chooses two different positions at random, a "single" spammer always the same
two positions, an "alternate" spammer alternates between two choices; check tuples are answered
right with probability ``honest_checkpoint`` by honest raters, at random by spammers. Quitters
stop after a share of their tranche's pages. A page of ``t`` tuples takes
``rater.seconds(t) * seconds_per_tuple / crowd.seconds_per_pair`` seconds.
"""

from __future__ import annotations

import copy

import numpy as np
import pandas as pd

from lexgold.errors import InputError
from lexgold.crowd.simulate import Crowd, SimulatedRater, _rated_rows, pair_truths
from lexgold.protocols import load_protocol
from lexgold.ratings import SIMULATED
from lexgold.study.bws import design_bws
from lexgold.study.config import load_study_config
from lexgold.study.pairs import check_pairs

COLUMNS = ["rater_id", "tranche", "tuple_id", "position", "word1", "word2", "pos", "rating",
           "kind", "answered_at"]


def bws_layout(pairs: pd.DataFrame, protocol: dict | str, rng: np.random.Generator,
               **study_keys):
    """``(pair frame, study config, BWS design)`` of ``pairs`` under a BWS protocol."""
    spec = copy.deepcopy(protocol if isinstance(protocol, dict) else load_protocol(protocol))
    spec.setdefault("study", {}).update({k: v for k, v in study_keys.items() if v is not None})
    config = load_study_config(spec)
    if config.task != "bws":
        raise InputError(f"not a Best-Worst Scaling protocol ([study] task = {config.task!r})",
                         path=spec.get("_path"), field="task")
    frame = check_pairs(pairs, source="pairs", group_by=config.group_by)
    return frame, config, design_bws(frame, config, rng)


def choose(rater: SimulatedRater, truths, turn: int, spreads=None) -> tuple[int, int]:
    """``(best, worst)`` positions of a rater's answer to a tuple of pairs with ``truths``
    (and spread multipliers ``spreads``)."""
    size = len(truths)
    if rater.style == "honest":
        seen = rater.perceive(truths, spreads)
        return int(np.argmax(seen)), int(np.argmin(seen))
    if rater.style == "single":
        return rater.single % size, (rater.single + 1) % size
    if rater.style == "alternate":
        a, b = rater.two[0] % size, rater.two[1] % size
        b = b if b != a else (a + 1) % size
        return (a, b) if turn % 2 == 0 else (b, a)
    best, worst = rater.rng.choice(size, 2, replace=False)
    return int(best), int(worst)


def simulate_bws(pairs: pd.DataFrame, protocol: dict | str, *, rng: np.random.Generator,
                 truth=None, crowd: Crowd | None = None, seconds_per_tuple: float | None = None,
                 **study_keys) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Simulate a BWS study of ``pairs`` without a site and return ``(answers, raters)``.

    Parameters are those of :func:`lexgold.crowd.simulate.simulate_ratings`; ``truth`` is on
    the protocol's ``[study]`` scale (default drawn from the crowd's rater model), ``seconds_per_tuple`` defaults
    to the mean of the protocol's ``seconds_per_item``. ``answers`` is the long format of
    :mod:`lexgold.process.bws`; ``raters`` is ``rater_id, tranche, spammer, style, bias,
    quit`` with ``raters.attrs["truth"]`` (the true score of each row of ``pairs``) and
    ``raters.attrs["tuples"]`` (the tuple table, words filled in).
    """
    if not isinstance(rng, np.random.Generator):
        raise InputError(f"expected a numpy.random.Generator, found {type(rng).__name__}",
                         field="rng")
    crowd = crowd or Crowd()
    source = pairs.reset_index(drop=True)
    frame, config, design = bws_layout(source, protocol, rng, **study_keys)
    low, high = config.scale_min, config.scale_max
    if truth is not None and len(truth) != len(source):
        raise InputError(f"expected {len(source)} true scores, found {len(truth)}", field="truth")
    truth, spread = pair_truths(crowd, len(source), rng, low=low, high=high, truth=truth)
    rated = _rated_rows(source, frame)
    frame = frame.assign(truth=truth[rated], spread=spread[rated])
    per_tuple = seconds_per_tuple or float(np.mean(config.seconds_per_item))
    columns = [c for c in design.tuples.columns if c[:1] == "p" and c[1:].isdigit()]
    members = dict(zip(design.tuples["tuple_id"], design.tuples[columns].to_numpy().tolist()))
    true, spreads = frame["truth"].to_numpy(), frame["spread"].to_numpy()
    word1, word2 = frame["word1"].to_numpy(), frame["word2"].to_numpy()
    pos = frame["pos"].to_numpy()
    place = {label: i for i, label in enumerate(frame.index)}
    rows, who = [], []
    clock = pd.Timestamp("2026-01-01T00:00:00")
    for t, pages in enumerate(design.tranches, start=1):
        for r in range(config.raters_per_tranche):
            rater_id = f"t{t:02d}r{r:03d}"
            rater = SimulatedRater(crowd, rng, low=low, high=high)
            stop = rater.pages_before_quitting(len(pages))
            turn = 0
            for page in pages[:stop]:
                n = max(1, len(page.tuples))
                clock += pd.Timedelta(seconds=rater.seconds(n) * per_tuple
                                      / crowd.seconds_per_pair)
                at = clock.strftime("%Y-%m-%dT%H:%M:%SZ")
                if page.kind == "checkpoint":
                    check = config.bws.checkpoints[page.checkpoint]
                    if rater.honest and rng.random() < crowd.honest_checkpoint:
                        best, worst = check.best, check.worst
                    else:
                        best, worst = (int(v) for v in rng.choice(len(check.pairs), 2,
                                                                  replace=False))
                    for p, (w1, w2) in enumerate(check.pairs):
                        rows.append((rater_id, t, f"check-{page.checkpoint + 1}", p, w1, w2,
                                     "", int(p == best) - int(p == worst), "checkpoint", at))
                    continue
                for tuple_id, kind in page.tuples:
                    index = [place[i] for i in members[tuple_id]]
                    best, worst = choose(rater, true[index], turn, spreads[index])
                    turn += 1
                    for p, i in enumerate(index):
                        rows.append((rater_id, t, str(tuple_id), p, word1[i], word2[i], pos[i],
                                     int(p == best) - int(p == worst), kind, at))
            who.append({"rater_id": rater_id, "tranche": t, "spammer": not rater.honest,
                        "style": rater.style, "bias": rater.bias, "quit": stop is not None})
    answers = pd.DataFrame(rows, columns=COLUMNS).assign(platform=SIMULATED)  # no person's
    raters = pd.DataFrame(who)
    full = np.full(len(source), np.nan)
    full[rated] = frame["truth"].to_numpy()
    raters.attrs["truth"] = full
    raters.attrs["tuples"] = tuple_table(design.tuples, frame)
    raters.attrs["design"] = design.report
    return answers, raters


def tuple_table(tuples: pd.DataFrame, frame: pd.DataFrame) -> pd.DataFrame:
    """The tuple table with words: ``tuple_id, pos, pair0 .. pair{size-1}`` (``word1 / word2``)."""
    out = tuples[["tuple_id", "pos"]].copy()
    for column in [c for c in tuples.columns if c[:1] == "p" and c[1:].isdigit()]:
        rows = tuples[column].to_numpy()
        out[f"pair{column[1:]}"] = (frame.loc[rows, "word1"].to_numpy() + " / "
                                    + frame.loc[rows, "word2"].to_numpy())
    return out
