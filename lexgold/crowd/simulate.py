"""Simulated raters with known true scores: the crowd of ``lexgold study rehearse`` and
``lexgold simulate``.

One rater model serves both. A rater answers the pages of a study as the study lays them out
(:func:`lexgold.study.design.design_study`, the one layout engine; SimLex-999 sections
3.3-3.5, HyperLex section 4.4, TR9856 section 3.4):

- an honest rater answers from the crowd's rater model (:mod:`lexgold.crowd.model`, fitted to
  real rating logs; default: the crowd fitted to SimVerb-3500's and WordSim-353's raw
  ratings, ``lexgold/crowd/data/default.json``, rescaled to the study's scale): the pair's
  latent score and spread (drawn from the model unless given), the rater's bias, scale and
  noise, Student-t latent error, ordinal rounding and clipping, lapses. The crowd named
  ``invented`` is lexgold's earlier one: ``round(truth + bias + noise)`` clipped to the scale,
  ``bias ~ N(0, bias_sd)``, ``noise ~ N(0, noise_sd)``, true scores uniform over the scale
  (far too clean and too even against real logs; kept for tests that need it);
- a checkpoint or qualification question is answered right with probability
  ``honest_checkpoint``; a pair shown again (calibration repeat, duplicate) gets the rater's
  earlier answer with probability ``recall`` (the rater remembers it), else a fresh answer;
- a spammer (share ``spammers``: by default a fitted crowd's own share, none where its log
  showed none, and 0.1 in the default and the invented crowd) answers at random (uniform over the scale), with one value
  throughout, or alternating between two values, in equal proportions; it picks a checkpoint or
  qualification option at random;
- a quitter (share ``quitters`` of the honest raters) closes the page after a random 10-90 %
  of its tranche's pages;
- speed: a rater's pace is ``seconds_per_pair`` times a personal factor (log-normal, sd 0.3);
  spammers go three times faster;
- binary questions (TR9856): an honest annotator says "related" with probability equal to the
  pair's true score on [0, 1] (uniform unless given); a spammer with probability 1/2.

:func:`simulate_ratings` answers the designed tranches directly, with a fixed number of raters
per tranche (no site, no top-ups): quick, for tests and trials. ``lexgold study rehearse``
(:mod:`lexgold.annotate.rehearse`) sends the same raters through the study's own site.
Everything random comes from one ``numpy.random.Generator``.
"""

from __future__ import annotations

import copy
import functools
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from lexgold.crowd.crowds import NAMES, crowd_source
from lexgold.crowd.model import (CrowdModel, default_model, draw_pairs, draw_raters, draw_spreads,
                                 lapse_draws, latent_errors, perceive, ratings_of, read_model,
                                 rescale_crowd, responses)
from lexgold.errors import InputError
from lexgold.process.exclusions import excluded_raters, exclusion_table
from lexgold.protocols import load_protocol
from lexgold.ratings import SIMULATED
from lexgold.resources import read_usf
from lexgold.study.config import load_study_config
from lexgold.study.design import design_study
from lexgold.study.pairs import TRUE, check_pairs

STYLES = ("random", "single", "alternate")
#: the share of spammers of the default and the invented crowd (a fitted crowd has its own)
SPAMMERS = 0.1


@dataclass(frozen=True)
class Crowd:
    """The simulated crowd (module docstring). ``model`` is ``"default"`` (the fitted default
    crowd), ``"invented"``, a shipped log's crowd by name (``"danish"``:
    :data:`lexgold.crowd.crowds.SHIPPED_CROWDS`), a path to a crowd JSON (``lexgold crowd
    fit``) or a :class:`lexgold.crowd.model.CrowdModel`; ``noise_sd`` and ``bias_sd`` shape the
    invented crowd only (default 1.0 and 0.7)."""
    model: object = "default"
    noise_sd: float | None = None
    bias_sd: float | None = None
    spammers: float | None = None
    honest_checkpoint: float = 0.99
    recall: float = 0.995
    quitters: float = 0.0
    seconds_per_pair: float = 6.0

    def __post_init__(self):
        if self.model != "invented" and (self.noise_sd is not None or self.bias_sd is not None):
            raise InputError("noise_sd and bias_sd shape the invented crowd only: give "
                             "model='invented' (--crowd invented)", field="noise_sd")
        if isinstance(self.model, (str, Path)) and str(self.model) not in NAMES \
                and not Path(self.model).is_file():
            raise InputError(f"expected a crowd's name ({', '.join(NAMES)}) or a crowd JSON "
                             f"written by `lexgold crowd fit`, found {str(self.model)!r}",
                             field="--crowd")

    @property
    def spam_share(self) -> float:
        """The share of spamming raters: ``spammers`` when given; else a crowd JSON's own
        or a shipped log's crowd's (the share its fit found: none for a log that shows none,
        such as an anonymous one) and :data:`SPAMMERS` for the default and the invented
        crowd."""
        if self.spammers is not None:
            return self.spammers
        if isinstance(self.model, (str, Path)) and str(self.model) not in ("default",
                                                                            "invented"):
            return _fitted_spammers(str(crowd_source(str(self.model))))
        return SPAMMERS

    def rater_model(self, low: float, high: float):
        """The crowd's rater model on the scale ``low..high`` (None: the invented crowd)."""
        return crowd_model(self.model, low, high)


def crowd_model(model, low: float, high: float):
    """A crowd's rater model (``"default"``, ``"invented"`` = None, a shipped crowd's name, a
    JSON path or a model) rescaled to ``low..high`` in whole steps."""
    if isinstance(model, str) and model == "invented":
        return None
    if isinstance(model, CrowdModel):
        return rescale_crowd(model, low, high, 1.0)
    key = (str(model), low, high)
    if key not in _LOADED:                  # one read per crowd and scale, not per rater
        loaded = (default_model() if str(model) == "default"
                  else read_model(crowd_source(str(model))))
        _LOADED.clear()
        _LOADED[key] = rescale_crowd(loaded, low, high, 1.0)
    return _LOADED[key]


_LOADED: dict = {}


@functools.lru_cache(maxsize=8)
def _fitted_spammers(path: str) -> float:
    """The spammer share a crowd JSON's fit found (0 where raters were not identified)."""
    raters = read_model(path).raters
    return 0.0 if raters is None else float(raters.spammers)


def pair_truths(crowd: Crowd, n: int, rng: np.random.Generator, *, low: float, high: float,
                binary: bool = False, truth=None) -> tuple[np.ndarray, np.ndarray]:
    """``(truth, spread)`` of ``n`` pairs: latent scores drawn from the crowd's rater model
    with their spreads, or the given ``truth`` with spreads drawn for it; uniform over the
    scale (spread 1) in the invented crowd and for binary questions."""
    model = None if binary else crowd.rater_model(low, high)
    if model is None:
        if truth is None:
            truth = rng.uniform(low, high, n)
        return np.asarray(truth, dtype=float), np.ones(len(truth))

    if truth is None:
        return draw_pairs(model, n, rng)
    truth = np.asarray(truth, dtype=float)
    return truth, draw_spreads(model, truth, rng)


class SimulatedRater:
    """One rater of the crowd, answering page by page on the scale ``low..high``."""
    def __init__(self, crowd: Crowd, rng: np.random.Generator, *, low: int, high: int,
                 binary: bool = False):
        self.rng, self.crowd, self.low, self.high, self.binary = rng, crowd, low, high, binary
        self.style = "honest"
        if rng.random() < crowd.spam_share:
            self.style = STYLES[int(rng.integers(0, 3))]
        self.model = None if binary else crowd.rater_model(low, high)
        self.scale, self.noise = 1.0, 1.0
        if self.model is None:
            bias_sd = 0.7 if crowd.bias_sd is None else crowd.bias_sd
            self.bias = 0.0 if binary else float(rng.normal(0, bias_sd))
        else:

            drawn = draw_raters(self.model, 1, rng, spammers=0.0).iloc[0]
            self.bias, self.scale, self.noise = (float(drawn["bias"]), float(drawn["scale"]),
                                                 float(drawn["noise"]))
        self.quit_share = (float(rng.uniform(0.1, 0.9)) if self.honest and crowd.quitters
                           and rng.random() < crowd.quitters else None)
        self.pace = crowd.seconds_per_pair * float(np.exp(rng.normal(0, 0.3)))
        if not self.honest:
            self.pace /= 3
        values = np.arange(low, high + 1)
        self.single = int(rng.choice(values))
        self.two = [int(v) for v in rng.choice(values, size=2, replace=False)]
        self.given: dict = {}              # pair key -> first answer (what a rater remembers)

    @property
    def honest(self) -> bool:
        return self.style == "honest"

    def pages_before_quitting(self, n_pages: int) -> int | None:
        """How many of ``n_pages`` the rater answers before closing the page (None: all)."""
        if self.quit_share is None:
            return None
        return max(1, int(self.quit_share * n_pages))

    def rate(self, keys: list, truths: list[float], spreads: list[float] | None = None
             ) -> list[int]:
        """Answers to one page of pairs (``keys`` identify pairs, for repeats; ``spreads``
        are the pairs' spread multipliers of the rater model, default 1).

        An honest rater of the rater model draws each pair's randomness in turn, as
        :func:`lexgold.crowd.model.draw_ratings` of that pair would, and turns the page's
        draws into answers at once (:meth:`_rate_page`)."""
        spreads = [1.0] * len(truths) if spreads is None else spreads
        if self.honest and self.model is not None and not self.binary:
            return self._rate_page(keys, truths, spreads)
        answers = []
        for key, truth in zip(keys, truths):
            if self.honest and key in self.given and self.rng.random() < self.crowd.recall:
                answers.append(self.given[key])
                continue
            value = self._answer(truth)
            self.given.setdefault(key, value)
            answers.append(value)
        return answers

    def _rate_page(self, keys: list, truths: list[float], spreads: list[float]) -> list[int]:
        """:meth:`rate` of an honest rater of the rater model: a pair seen before (on this
        page too) recalled with chance ``recall``, the others' draws made pair by pair on the
        rater's generator (:func:`~lexgold.crowd.model.latent_errors`, then
        :func:`~lexgold.crowd.model.lapse_draws`: the stream one ``draw_ratings`` call per
        pair takes) and their answers computed together."""
        model, rng, recall = self.model, self.rng, self.crowd.recall
        given = self.given
        fresh, cells, places = {}, [], []       # places: each answer's cell, or its recalled key
        for key, truth, spread in zip(keys, truths, spreads):
            if (key in given or key in fresh) and rng.random() < recall:
                places.append((key,))
                continue
            fresh.setdefault(key, len(cells))
            places.append(len(cells))
            cells.append((truth, spread, latent_errors(model, rng), *lapse_draws(model, rng)))
        values = []
        if cells:
            truth, spread, errors, uniforms, picks = (np.array(column) for column in zip(*cells))
            seen = responses(model, truth, spread, errors, bias=self.bias, scale=self.scale,
                             noise=self.noise)
            values = [int(v) for v in ratings_of(model, seen, uniforms, picks)]
        for key, place in fresh.items():
            given.setdefault(key, values[place])
        return [values[place] if isinstance(place, int) else given[place[0]]
                for place in places]

    def perceive(self, truths, spreads=None) -> np.ndarray:
        """An honest rater's unrounded perceived values of items (what a Best-Worst answer
        compares, :mod:`lexgold.crowd.bws_simulate`): the rater model's latent response,
        or ``truth + bias + noise`` in the invented crowd."""
        truths = np.asarray(truths, dtype=float)
        if self.model is None:
            noise_sd = 1.0 if self.crowd.noise_sd is None else self.crowd.noise_sd
            return truths + self.bias + self.rng.normal(0, noise_sd, len(truths))

        spreads = np.ones(len(truths)) if spreads is None else np.asarray(spreads, float)
        return perceive(self.model, truths, spreads, self.rng, bias=self.bias,
                        scale=self.scale, noise=self.noise)

    def _answer(self, truth: float) -> int:
        if self.binary:
            p = min(max(truth, 0.0), 1.0) if self.honest else 0.5
            return int(self.rng.random() < p)
        if self.style == "honest":                  # the invented crowd's (no rater model)
            noise_sd = 1.0 if self.crowd.noise_sd is None else self.crowd.noise_sd
            value = truth + self.bias + self.rng.normal(0, noise_sd)
            return int(np.clip(np.round(value), self.low, self.high))
        if self.style == "random":
            return int(self.rng.integers(self.low, self.high + 1))
        if self.style == "single":
            return self.single
        return self.two[int(self.rng.integers(0, 2))]

    def choose(self, n_options: int, answer: int) -> int:
        """A checkpoint or qualification choice among ``n_options`` (``answer`` is right)."""
        if self.honest:
            if self.rng.random() < self.crowd.honest_checkpoint or n_options < 2:
                return answer
            return int(self.rng.choice([i for i in range(n_options) if i != answer]))
        return int(self.rng.integers(0, n_options))

    def seconds(self, n_items: int) -> float:
        """Time the rater spends on a page of ``n_items`` questions."""
        return max(1.0, n_items * self.pace * float(np.exp(self.rng.normal(0, 0.2))))


def study_layout(pairs: pd.DataFrame, protocol: dict | str, rng: np.random.Generator,
                 **study_keys):
    """``(pair frame, study config, design)`` of a study of ``pairs`` under ``protocol``, laid out
    by the study designer; ``study_keys`` change keys of the ``[study]`` table (for trials)."""
    spec = copy.deepcopy(protocol if isinstance(protocol, dict) else load_protocol(protocol))
    spec.setdefault("study", {}).update({k: v for k, v in study_keys.items() if v is not None})
    config = load_study_config(spec)
    frame = check_pairs(pairs, source="pairs", group_by=config.group_by)
    return frame, config, design_study(frame, config, rng)


def simulate_ratings(pairs: pd.DataFrame, protocol: dict | str, *, rng: np.random.Generator,
                     truth: np.ndarray | None = None, crowd: Crowd = Crowd(),
                     **study_keys) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Simulate a study of ``pairs`` without a site and return ``(ratings, raters)``.

    Parameters
    ----------
    pairs : pandas.DataFrame
        A pair set as ``lexgold study create`` reads it (``word1, word2, pos``; ``topic`` for
        topic studies; the flags of an aligned set are applied: ``duplicate_of`` and
        ``collapsed`` rows are not rated).
    protocol : dict or str
        The protocol (name, path or loaded dict); its ``[study]`` table lays the study out.
    rng : numpy.random.Generator
        The only source of randomness.
    truth : array, optional
        True (latent) score of each row of ``pairs`` on the rating scale (binary studies: the
        chance of "related"); default drawn from the crowd's rater model (the invented crowd
        and binary studies: uniform over the scale).
    crowd : Crowd
        The crowd, see the module docstring (default: the fitted default crowd).
    **study_keys
        Changes to the ``[study]`` table, e.g. ``raters_per_tranche=30``,
        ``unique_per_tranche=70``.

    Returns
    -------
    ratings : pandas.DataFrame
        The long format of ``lexgold study export`` (docs/contract.md), one row per answer,
        ``platform`` ``simulated`` on every row.
    raters : pandas.DataFrame
        ``rater_id, tranche, spammer, style, bias, quit``; ``raters.attrs["truth"]`` holds the
        true score of each row of ``pairs``, in order (NaN for rows not rated).
    """
    if not isinstance(rng, np.random.Generator):
        raise InputError(f"expected a numpy.random.Generator, found {type(rng).__name__}",
                         field="rng")
    source = pairs.reset_index(drop=True)
    frame, config, design = study_layout(source, protocol, rng, **study_keys)
    binary = config.task == "binary"
    low, high = (0, 1) if binary else (config.scale_min, config.scale_max)
    if truth is not None and len(truth) != len(source):
        raise InputError(f"expected {len(source)} true scores, found {len(truth)}", field="truth")
    truth, spread = pair_truths(crowd, len(source), rng, low=low, high=high, binary=binary,
                                truth=truth)
    rated = _rated_rows(source, frame)
    frame = frame.assign(truth=truth[rated], spread=spread[rated])
    rows, who = [], []
    clock = pd.Timestamp("2026-01-01T00:00:00")
    for t, steps in enumerate(design.tranches, start=1):
        for r in range(config.raters_per_tranche):
            rater_id = f"t{t:02d}r{r:03d}"
            rater = SimulatedRater(crowd, rng, low=low, high=high, binary=binary)
            stop = rater.pages_before_quitting(len(steps))
            for step in steps[:stop]:
                clock += pd.Timedelta(seconds=rater.seconds(max(1, len(step.items))))
                at = clock.strftime("%Y-%m-%dT%H:%M:%SZ")
                if step.kind == "checkpoint":
                    check = config.checkpoints[step.checkpoint]
                    choice = rater.choose(len(check.options), check.answer)
                    word1, word2 = check.options[choice]
                    rows.append((rater_id, t, word1, word2, int(choice == check.answer),
                                 step.batch, "checkpoint", at, ""))
                    continue
                index = [i for i, _ in step.items]
                answers = rater.rate(index, frame.loc[index, "truth"].tolist(),
                                     frame.loc[index, "spread"].tolist())
                for (i, kind), value in zip(step.items, answers):
                    rows.append((rater_id, t, frame.at[i, "word1"], frame.at[i, "word2"], value,
                                 frame.at[i, "pos"], kind, at, frame.at[i, "topic"]))
            who.append({"rater_id": rater_id, "tranche": t, "spammer": not rater.honest,
                        "style": rater.style, "bias": rater.bias, "quit": stop is not None})
    columns = ["rater_id", "tranche", "word1", "word2", "rating", "pos", "kind", "answered_at",
               "topic"]
    ratings = pd.DataFrame(rows, columns=columns).assign(platform=SIMULATED)  # no person's
    if config.group_by != "topic":
        ratings = ratings.drop(columns="topic")
    raters = pd.DataFrame(who)
    full = np.full(len(source), np.nan)
    full[rated] = frame["truth"].to_numpy()
    raters.attrs["truth"] = full
    return ratings, raters


def _rated_rows(source: pd.DataFrame, frame: pd.DataFrame) -> np.ndarray:
    """Row of ``source`` behind each row of the checked pair frame (flagged rows are skipped)."""
    kept = source
    if "duplicate_of" in source.columns:
        kept = kept[kept["duplicate_of"].fillna("").astype(str).str.strip() == ""]
    if "collapsed" in source.columns:
        kept = kept[~kept["collapsed"].fillna("").astype(str).str.strip().str.lower()
                    .isin(TRUE)]
    if len(kept) != len(frame):        # cannot happen: check_pairs skips exactly these rows
        raise InputError("pair rows and study pairs do not line up", field="pairs")
    return kept.index.to_numpy()


def exclusion_outcome(pairs: pd.DataFrame, protocol: str, *, noise_sd: float, bias_sd: float,
                      recall: float, quitters: float, spammers: float = 0.15, seed: int = 1,
                      **exclusion_keys) -> dict[str, set]:
    """Who a protocol's exclusion rules catch in a simulated study of ``pairs``.

    Raters of the given behaviour (and ``spammers``) are simulated in the invented crowd
    (whose ``noise_sd`` and ``bias_sd`` are the behaviour's), the protocol's
    ``[process.exclusions]`` rules (changed by ``exclusion_keys``) are applied, and the rater ids
    are returned by group: ``excluded``, ``honest`` (finished, not spammers), ``spammers``,
    ``quitters``. Used to check rules against behaviours they were not designed around.
    """
    crowd = Crowd(model="invented", noise_sd=noise_sd, bias_sd=bias_sd, recall=recall,
                  quitters=quitters, spammers=spammers)
    # tranches of the protocol's unique_per_tranche (not its fixed count: trial sets are small)
    ratings, raters = simulate_ratings(pairs, protocol, rng=np.random.default_rng(seed),
                                       crowd=crowd, tranches=0)
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
