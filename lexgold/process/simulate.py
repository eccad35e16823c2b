"""Synthetic raters with known true scores, for testing the post-processing pipeline.

A rating study is laid out as in the papers (a consistency set shown in every tranche, unique
pairs per tranche, calibration repeats, HyperLex duplicates, SimLex checkpoints) and answered by
simulated raters:

- an honest rater answers ``round(truth + bias + noise)`` clipped to the scale, with a per-rater
  ``bias ~ N(0, bias_sd)`` (what SimLex calibration corrects) and ``noise ~ N(0, noise_sd)``;
  a checkpoint is answered right with probability ``honest_checkpoint``; a pair shown again
  (calibration repeat, duplicate) gets the rater's earlier answer with probability ``recall``
  (the rater remembers it), else a fresh answer;
- a spammer (share ``spammers``) answers at random (uniform over the scale), with one value
  throughout, or alternating between two values, in equal proportions; it gets a checkpoint
  right with probability 1/3 (three choices);
- a quitter (share ``quitters`` of the honest raters) stops after a random 10-90 % of its
  showings, as a rater who closes the page;
- TR9856 is binary: an honest annotator says "related" with probability equal to the pair's
  true score on [0, 1]; a spammer with probability 1/2.

Everything random comes from one ``numpy.random.Generator``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from lexgold.errors import InputError


@dataclass(frozen=True)
class Design:
    """Study layout (SimLex section 3.3-3.5; HyperLex section 4.4; TR9856 section 3.4)."""
    consistency: int = 20          # pairs shown in every tranche
    unique: int = 99               # unique pairs per tranche
    #: SimLex section 3.6: at most 16 excluded per tranche, "so that each pair ... was rated by
    #: a minimum of 36 raters": 36 + 16 = 52 per tranche ("approximately 50", section 3.5)
    raters_per_tranche: int = 52
    duplicates: int = 0            # pairs shown twice to the same rater (HyperLex: 9)
    group_size: int = 7            # calibration repeat at the start of each later group
    checkpoints: int = 3           # SimLex: one per POS batch
    rating_max: int = 6
    binary: bool = False


DESIGNS = {
    "simlex": Design(),
    "hyperlex": Design(consistency=20, unique=50, raters_per_tranche=12, duplicates=9,
                       checkpoints=0),
    "tr9856": Design(consistency=0, unique=100, raters_per_tranche=10, group_size=0,
                     checkpoints=0, rating_max=1, binary=True),
}


def design_for(protocol: str, **changes) -> Design:
    """The default design of a protocol (``simlex``, ``hyperlex``, ``tr9856``) with changes."""
    key = {"simlex999": "simlex"}.get(protocol, protocol)
    if key not in DESIGNS:
        raise InputError(f"expected one of {', '.join(DESIGNS)}, found {protocol!r}",
                         field="protocol")
    return replace(DESIGNS[key], **{k: v for k, v in changes.items() if v is not None})


def simulate_ratings(pairs: pd.DataFrame, design: Design, *, rng: np.random.Generator,
                     truth: np.ndarray | None = None, noise_sd: float = 1.0,
                     bias_sd: float = 0.7, spammers: float = 0.1,
                     honest_checkpoint: float = 0.99,
                     recall: float = 0.995,
                     quitters: float = 0.0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Simulate a study over ``pairs`` and return ``(ratings, truth)``.

    Parameters
    ----------
    pairs : pandas.DataFrame
        ``word1, word2`` and optionally ``pos``; the first ``design.consistency`` pairs form the
        consistency set, the rest are dealt to tranches of ``design.unique`` pairs (the last
        tranche may be smaller).
    design : Design
        The layout; see :func:`design_for`.
    rng : numpy.random.Generator
        The only source of randomness.
    truth : array, optional
        True score of each pair on the rating scale; default uniform over the scale.
    noise_sd, bias_sd, spammers, honest_checkpoint, recall, quitters : float
        Rater model, see the module docstring.

    Returns
    -------
    ratings : pandas.DataFrame
        Long format of docs/contract.md (``rater_id, tranche, word1, word2, rating, pos, kind,
        answered_at``), one row per answer.
    raters : pandas.DataFrame
        ``rater_id, tranche, spammer, style, bias, quit``: who is who (for tests and reports);
        ``raters.attrs["truth"]`` holds the true score of each pair, in ``pairs`` order.
    """
    if not isinstance(rng, np.random.Generator):
        raise InputError(f"expected a numpy.random.Generator, found {type(rng).__name__}",
                         field="rng")
    pairs = pairs.reset_index(drop=True).copy()
    if truth is None:
        truth = rng.uniform(0, design.rating_max, len(pairs))
    pairs["truth"] = np.asarray(truth, dtype=float)
    if "pos" not in pairs.columns:
        pairs["pos"] = ""
    tranches = _tranches(len(pairs), design)
    frames, who = [], []
    clock = pd.Timestamp("2026-01-01T00:00:00Z")
    for t, unique in enumerate(tranches, start=1):
        shown = _showings(pairs, unique, design, rng)
        for r in range(design.raters_per_tranche):
            rater = f"t{t:02d}r{r:03d}"
            style = _style(rng, spammers)
            bias = 0.0 if design.binary else float(rng.normal(0, bias_sd))
            answers = _answer(shown, style, bias, noise_sd, design, rng)
            if style == "honest":
                answers = _remember(shown, answers, recall, rng)
            checks = _checkpoints(design, style, honest_checkpoint, rng)
            frame = pd.concat([checks, shown.drop(columns="first").assign(rating=answers)],
                              ignore_index=True)
            quit = bool(quitters) and style == "honest" and rng.random() < quitters
            if quit:
                frame = frame.iloc[:max(1, int(rng.uniform(0.1, 0.9) * len(frame)))]
            frame = frame.assign(rater_id=rater, tranche=t,
                                 answered_at=(clock + pd.to_timedelta(
                                     np.arange(len(frame)) * 10, unit="s")).strftime(
                                     "%Y-%m-%dT%H:%M:%SZ"))
            frames.append(frame)
            who.append({"rater_id": rater, "tranche": t, "spammer": style != "honest",
                        "style": style, "bias": bias, "quit": quit})
    ratings = pd.concat(frames, ignore_index=True)
    columns = ["rater_id", "tranche", "word1", "word2", "rating", "pos", "kind", "answered_at"]
    raters = pd.DataFrame(who)
    raters.attrs["truth"] = pairs["truth"].to_numpy()
    return ratings[columns], raters


def exclusion_outcome(pairs: pd.DataFrame, protocol: str, *, noise_sd: float, bias_sd: float,
                      recall: float, quitters: float, spammers: float = 0.15, seed: int = 1,
                      **exclusion_keys) -> dict[str, set]:
    """Who a protocol's exclusion rules catch in a simulated study of ``pairs``.

    Raters of the given behaviour (and ``spammers``) are simulated, the protocol's
    ``[process.exclusions]`` rules (changed by ``exclusion_keys``) are applied, and the rater ids
    are returned by group: ``excluded``, ``honest`` (finished, not spammers), ``spammers``,
    ``quitters``. Used to check rules against behaviours they were not designed around.
    """
    import copy
    import warnings

    from lexgold.process.exclusions import excluded_raters, exclusion_table
    from lexgold.protocols import load_protocol

    ratings, raters = simulate_ratings(pairs, design_for(protocol),
                                       rng=np.random.default_rng(seed), noise_sd=noise_sd,
                                       bias_sd=bias_sd, recall=recall, quitters=quitters,
                                       spammers=spammers)
    loaded = copy.deepcopy(load_protocol(protocol))
    loaded["process"]["exclusions"].update(exclusion_keys)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        excluded = set(excluded_raters(exclusion_table(ratings, loaded)))
    spam = set(raters.loc[raters["spammer"], "rater_id"])
    quit = set(raters.loc[raters["quit"], "rater_id"])
    return {"excluded": excluded, "honest": set(raters["rater_id"]) - spam - quit,
            "spammers": spam, "quitters": quit}


def usf_pairs(n: int, *, rng: np.random.Generator, usf: pd.DataFrame | None = None) -> pd.DataFrame:
    """``n`` random same-POS (N, V, A) pairs of single lower-case words, both normed, from USF.

    A stand-in for a builder's ``pairs.csv`` when simulating without one. As in SimLex-999,
    word1 is the USF target and word2 the cue (the released Assoc(USF) is FSG(word2 -> word1)).
    """
    if usf is None:
        from lexgold.resources import read_usf
        usf = read_usf()
    pos = usf["qps"].astype(str).replace({"AJ": "A"})
    keep = usf["normed"].astype(bool) & (pos == usf["tps"].astype(str).replace({"AJ": "A"})) \
        & pos.isin(["N", "V", "A"]) & usf["cue"].str.fullmatch(r"[A-Z]+") \
        & usf["target"].str.fullmatch(r"[A-Z]+")
    pool = pd.DataFrame({"word1": usf["target"].str.lower(), "word2": usf["cue"].str.lower(),
                         "pos": pos})[keep.fillna(False).to_numpy()]
    pool = pool.drop_duplicates(["word1", "word2"]).reset_index(drop=True)
    if n > len(pool):
        raise InputError(f"only {len(pool)} USF pairs available, asked for {n}", field="n_pairs")
    return pool.iloc[np.sort(rng.choice(len(pool), n, replace=False))].reset_index(drop=True)


def truth_table(pairs: pd.DataFrame, truth: np.ndarray) -> pd.DataFrame:
    """``word1, word2, truth`` for comparing a gold standard with the simulated truth."""
    return pd.DataFrame({"word1": pairs["word1"].to_numpy(), "word2": pairs["word2"].to_numpy(),
                         "truth": np.asarray(truth, dtype=float)})


def _tranches(n_pairs: int, design: Design) -> list[np.ndarray]:
    rest = np.arange(design.consistency, n_pairs)
    if len(rest) == 0:
        raise InputError(f"need more than {design.consistency} pairs (the consistency set), "
                         f"found {n_pairs}", field="pairs")
    return [rest[i:i + design.unique] for i in range(0, len(rest), design.unique)]


def _showings(pairs, unique, design, rng) -> pd.DataFrame:
    """One tranche's sequence of showings: kind per showing, POS-batched, with repeats."""
    index = np.concatenate([np.arange(design.consistency), unique])
    kinds = np.array(["consistency"] * design.consistency + ["unique"] * len(unique))
    order = rng.permutation(len(index))
    index, kinds = index[order], kinds[order]
    batch = np.argsort(pairs.loc[index, "pos"].to_numpy(), kind="stable")
    index, kinds = list(index[batch]), list(kinds[batch])
    if design.duplicates:
        picks = rng.choice(len(unique), size=min(design.duplicates, len(unique)), replace=False)
        for p in picks:
            index.append(unique[p])
            kinds.append("duplicate")
    if design.group_size:
        out_index, out_kinds = [], []
        for start in range(0, len(index), design.group_size):
            if start:
                out_index.append(out_index[-1])
                out_kinds.append("calibration")
            out_index += index[start:start + design.group_size]
            out_kinds += kinds[start:start + design.group_size]
        index, kinds = out_index, out_kinds
    shown = pairs.loc[index, ["word1", "word2", "pos", "truth"]].reset_index(drop=True)
    first = pd.Series(np.arange(len(index))).groupby(np.asarray(index)).transform("min")
    return shown.assign(kind=kinds, first=first.to_numpy())


def _style(rng, spammers) -> str:
    if rng.random() >= spammers:
        return "honest"
    return ("random", "single", "alternate")[int(rng.integers(0, 3))]


def _answer(shown, style, bias, noise_sd, design, rng) -> np.ndarray:
    n, top = len(shown), design.rating_max
    if design.binary:
        p = np.clip(shown["truth"].to_numpy(), 0, 1) if style == "honest" else np.full(n, 0.5)
        return (rng.random(n) < p).astype(float)
    if style == "honest":
        values = shown["truth"].to_numpy() + bias + rng.normal(0, noise_sd, n)
        return np.clip(np.round(values), 0, top)
    if style == "random":
        return rng.integers(0, top + 1, n).astype(float)
    if style == "single":
        return np.full(n, float(rng.integers(0, top + 1)))
    two = rng.choice(top + 1, size=2, replace=False).astype(float)
    return two[rng.integers(0, 2, n)]


def _remember(shown, answers, recall, rng) -> np.ndarray:
    """A repeated pair gets the first answer again with probability ``recall``."""
    answers = answers.copy()
    source = shown["first"].to_numpy()
    again = np.flatnonzero(source != np.arange(len(source)))
    keep = again[rng.random(len(again)) < recall]
    answers[keep] = answers[source[keep]]
    return answers


def _checkpoints(design, style, honest_checkpoint, rng) -> pd.DataFrame:
    n = design.checkpoints
    right = honest_checkpoint if style == "honest" else 1 / 3
    return pd.DataFrame({"word1": [f"checkpoint{i + 1}" for i in range(n)], "word2": "",
                         "pos": "", "truth": np.nan, "kind": "checkpoint",
                         "rating": (rng.random(n) < right).astype(float)})
