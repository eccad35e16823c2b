"""The ``[process]`` table of a protocol file, checked against the paper's defaults.

Defaults are SimLex-999's values (Hill et al. 2015, sections 3.6 and 4.1); ``hyperlex.toml``,
``tr9856.toml`` and ``plain.toml`` change the keys that differ. Keys carry their units.
"""

from __future__ import annotations

from dataclasses import dataclass, field, make_dataclass
from itertools import pairwise
from typing import Annotated, Literal

from lexgold.process.aggregate import RULES as AGGREGATES
from lexgold.process.rules import BWS_RULES, KEYS, RULES
from lexgold.protocols import Check, Invalid, between, load_protocol, parse_section
from lexgold.protocols.release import ReleaseConfig

Rule = Literal[RULES]
Count = Annotated[int, between(0)]
#: bootstrap resamples: 0 (none) to 100,000 (a 95 % CI needs about 2,000)
Resamples = Annotated[int, between(0, 100_000)]
Share = Annotated[float, between(0, 1)]
NonNegative = Annotated[float, between(0)]


@dataclass
class AgreementConfig:
    #: "tranche": raters compared within their tranche; "all": on any shared items
    pool: Literal["tranche", "all"] = "tranche"
    #: fewest shared items on which a Spearman correlation is computed
    min_overlap: Annotated[int, between(2)] = 10
    #: bootstrap replicates for the confidence intervals of report.json (0 = none)
    bootstrap: Resamples = 200
    ci_level: Annotated[float, between(0, 1, low_open=True, high_open=True)] = 0.95


@dataclass
class CalibrationConfig:
    """SimLex section 3.6: shift a rater whose consistency-set mean is off by > threshold."""
    enabled: bool = True
    threshold: NonNegative = 1.0
    shift: NonNegative = 1.0


def _check_exclusions(self):
    """A rule named twice is a typo for another one."""
    for rule in self.rules:
        if self.rules.count(rule) > 1:
            raise Invalid("rules", "each rule once", self.rules)


#: Which rules apply and their thresholds (SimLex section 3.6, HyperLex section 4.5): ``rules``
#: and one field per key the registered rules declare (:data:`lexgold.process.rules.KEYS`),
#: in their order; a rule's keys and meaning are defined with the rule.
ExclusionConfig = make_dataclass(
    "ExclusionConfig",
    [("rules", list[Rule], field(default_factory=lambda: ["min_answers", "checkpoint",
                                                          "low_agreement", "agreement_gain"])),
     *((name, key.hint, field(default=key.default, metadata={"doc": key.doc}))
       for name, key in KEYS.items())],
    namespace={"check": _check_exclusions,
               "__doc__": "Which rules apply and their thresholds (SimLex section 3.6, "
                          "HyperLex section 4.5); the keys are declared with the rules "
                          "(lexgold.process.rules)."})
ExclusionConfig.__module__ = __name__           # pickled and named as this module's


@dataclass
class SplitConfig:
    """HyperLex section 5: random 70/5/25 split over score intervals, lexical split."""
    enabled: bool = False
    train: Share = 0.70
    dev: Share = 0.05
    test: Share = 0.25
    #: interval edges on the released scale; the last interval is closed
    intervals: list[float] = field(default_factory=lambda: [0.0, 2.0, 4.0, 6.0, 8.0, 10.0])
    #: pair columns the random split is stratified by beside the interval (skipped when absent)
    strata: list[str] = field(default_factory=lambda: ["pos"])
    #: lexical split: "two-way" (train+dev vs test, as released) or "strict" (three ways)
    lexical: Literal["two-way", "strict"] = "two-way"

    def check(self):
        total = self.train + self.dev + self.test
        if abs(total - 1) > 1e-6:
            raise Invalid("test", f"train + dev + test = 1 (here {total:g})", self.test)
        edges = self.intervals
        if len(edges) < 2 or any(b <= a for a, b in pairwise(edges)):
            raise Invalid("intervals", "two or more increasing edges", edges)


@dataclass
class SplitHalfConfig:
    """TR9856 section 4: split-half agreement over all splits of a fixed group of annotators."""
    enabled: bool = False
    annotators: Annotated[int, between(2), Check("an even number", lambda n: n % 2 == 0)] = 10
    transitivity_bins: Annotated[int, between(1)] = 10


@dataclass
class BwsConfig:
    """``[process.bws]``: scores, intervals, split-half and exclusions of a Best-Worst Scaling
    study (Kiritchenko & Mohammad 2016, 2017; lexgold.process.bws)."""
    #: the released score: "counting" (%best - %worst, Orme 2009) or "bradley-terry" (choix
    #: on the comparisons a best-worst answer implies)
    method: Literal["counting", "bradley-terry"] = "counting"
    #: bootstrap replicates over annotations for the per-pair intervals (0 = none)
    bootstrap: Resamples = 200
    ci_level: Annotated[float, between(0, 1, low_open=True, high_open=True)] = 0.95
    #: random splits of the split-half reliability (K&M 2017: 100)
    split_half_splits: Annotated[int, between(1)] = 100
    #: Bradley-Terry regularisation (choix ``alpha``): keeps a pair that always wins finite
    bt_alpha: NonNegative = 0.01
    #: the exclusion rules, by name (:data:`lexgold.process.rules.BWS_REGISTRY`)
    rules: list[Literal[BWS_RULES]] = field(default_factory=lambda: list(BWS_RULES))
    #: checkpoint: excluded after more than this many failed check tuples (best or worst wrong)
    max_checkpoint_failures: Count = 0
    #: too_fast: excluded when the median seconds per tuple is below this
    min_seconds_per_tuple: NonNegative = 2.0
    #: same_position: excluded when the best (or the worst) answer is at one position of the
    #: tuple in at least this share of the rater's tuples (chance: 1 / tuple_size)
    same_position_share: Annotated[float, between(0, 1, low_open=True)] = 0.8
    #: ... counted only for raters with at least this many tuples
    same_position_min_tuples: Annotated[int, between(1)] = 10


@dataclass
class ProcessConfig:
    #: a pair's score from its accepted ratings (lexgold.process.aggregate): "mean" (the
    #: papers'), "model" (rater bias and noise fitted, ITU-T P.913 clause 12), "trimmed_1sd"
    #: (the mean within one SD of the mean, Rare Words)
    aggregate: Literal[AGGREGATES] = "mean"
    #: a machine rater's part (lexgold.process.machine_mode): "none"; "allocate" (it decided
    #: where human ratings went; released scores are human means); "prior" (released scores
    #: are the empirical-Bayes posterior of the human ratings and the calibrated machine, the
    #: human-only mean kept beside them); never without a declared mode
    machine: Literal["none", "allocate", "prior"] = "none"
    agreement: AgreementConfig = field(default_factory=AgreementConfig)
    calibration: CalibrationConfig = field(default_factory=CalibrationConfig)
    exclusions: ExclusionConfig = field(default_factory=ExclusionConfig)
    release: ReleaseConfig = field(default_factory=ReleaseConfig)
    splits: SplitConfig = field(default_factory=SplitConfig)
    split_half: SplitHalfConfig = field(default_factory=SplitHalfConfig)
    bws: BwsConfig = field(default_factory=BwsConfig)


def process_config(protocol: dict | str) -> ProcessConfig:
    """The checked ``[process]`` table of a protocol (a loaded dict, a short name or a path)."""
    if not isinstance(protocol, dict):
        protocol = load_protocol(protocol)
    return parse_section(ProcessConfig, protocol, "process")
