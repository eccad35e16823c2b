"""The ``[process]`` table of a protocol file, checked against the paper's defaults.

Defaults are SimLex-999's values (Hill et al. 2015, sections 3.6 and 4.1); ``hyperlex.toml``,
``tr9856.toml`` and ``plain.toml`` change the keys that differ. Keys carry their units.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from lexgold.protocols import load_protocol, parse_section

RULES = ("min_answers", "checkpoint", "low_agreement", "agreement_gain",
         "duplicate_inconsistency", "single_value", "two_value_alternation", "random_consistency",
         "too_fast")


@dataclass
class AgreementConfig:
    #: "tranche": raters compared within their tranche; "all": on any shared items
    pool: Literal["tranche", "all"] = "tranche"
    #: fewest shared items on which a Spearman correlation is computed
    min_overlap: int = 10
    #: bootstrap replicates for the confidence intervals of report.json (0 = none)
    bootstrap: int = 200
    ci_level: float = 0.95


@dataclass
class CalibrationConfig:
    """SimLex section 3.6: shift a rater whose consistency-set mean is off by > threshold."""
    enabled: bool = True
    threshold: float = 1.0
    shift: float = 1.0


@dataclass
class ExclusionConfig:
    """Which rules apply and their thresholds (SimLex section 3.6, HyperLex section 4.5)."""
    rules: list[str] = field(default_factory=lambda: ["min_answers", "checkpoint",
                                                      "low_agreement", "agreement_gain"])
    #: min_answers: excluded when the rater answered less than this share of the pairs shown
    #: in its tranche (1.0: only raters who finished)
    min_answers_share: float = 1.0
    #: rule a: excluded when mean pairwise rho < mean of means - sd_below * SD
    sd_below: float = 1.0
    #: rule b: the share of raters whose removal raises IAA-1 most
    gain_fraction: float = 0.10
    #: at most this many raters excluded per tranche (SimLex: 16); 0 = no cap
    max_per_tranche: int = 16
    #: duplicates: excluded when the mean difference between the two answers to a duplicate
    #: pair is at least this times the mean difference between answers to different pairs
    #: (1: no better than chance; 0: any unequal answer)
    duplicate_max_ratio: float = 1.0
    #: single value: excluded when one value makes up at least this share of the answers
    single_value_share: float = 1.0
    #: two-value alternation: two values make up at least this share of the answers ...
    two_value_share: float = 1.0
    #: ... and the rater's rho against the mean of the others is below this
    two_value_max_rho: float = 0.3
    #: random on the consistency set: one-sided p of rho(rater, others' mean) above this
    random_consistency_alpha: float = 0.05
    #: too_fast (lexgold's, no paper's): excluded when the rater's median seconds per pair is
    #: below this; 0 = off (SimLex-999 section 3.5: raters took over 4 s a pair)
    too_fast_s_per_pair: float = 0.0


@dataclass
class ReleaseConfig:
    #: the slider's range (SimLex/HyperLex 0-6; TR9856 binary 0-1)
    rating_min: float = 0.0
    rating_max: float = 6.0
    #: "protocol": ratings are on rating_min-rating_max (a source's declared scale is mapped
    #: onto it); "declared": the scale the ratings declare (scale_min, scale_max columns or
    #: ``process --scale``) is the rating and the score scale, nothing is rescaled (plain.toml)
    rating_scale: Literal["protocol", "declared"] = "protocol"
    #: the released score's range (linear map; SimLex/HyperLex 0-10)
    score_min: float = 0.0
    score_max: float = 10.0
    #: the published file whose layout the release file and gold.csv follow; plain: word1,
    #: word2, score
    format: Literal["simlex", "hyperlex", "tr9856", "plain"] = "simlex"
    #: the release file's name; "" = the published one (SimLex-999.txt, hyperlex-all.txt,
    #: TR9856.txt; plain: gold.csv only)
    release_file: str = ""
    #: fewest accepted raters on every released pair (SimLex section 3.6: 36); fewer, or no
    #: rater left at all, stops the release unless it is forced (--allow-incomplete)
    min_raters_per_pair: int = 36
    #: decimals of released scores
    decimals: int = 2
    #: SimLex conc(w1)/conc(w2): "brysbaert" (1-5, as published) or "pairs" (builder's conc1/2)
    conc_source: Literal["brysbaert", "pairs"] = "brysbaert"


@dataclass
class SplitConfig:
    """HyperLex section 5: random 70/5/25 split over score intervals, lexical split."""
    enabled: bool = False
    train: float = 0.70
    dev: float = 0.05
    test: float = 0.25
    #: interval edges on the released scale; the last interval is closed
    intervals: list[float] = field(default_factory=lambda: [0.0, 2.0, 4.0, 6.0, 8.0, 10.0])
    #: pair columns the random split is stratified by beside the interval (skipped when absent)
    strata: list[str] = field(default_factory=lambda: ["pos"])
    #: lexical split: "two-way" (train+dev vs test, as released) or "strict" (three ways)
    lexical: Literal["two-way", "strict"] = "two-way"


@dataclass
class SplitHalfConfig:
    """TR9856 section 4: split-half agreement over all splits of a fixed group of annotators."""
    enabled: bool = False
    annotators: int = 10
    transitivity_bins: int = 10


@dataclass
class ProcessConfig:
    agreement: AgreementConfig = field(default_factory=AgreementConfig)
    calibration: CalibrationConfig = field(default_factory=CalibrationConfig)
    exclusions: ExclusionConfig = field(default_factory=ExclusionConfig)
    release: ReleaseConfig = field(default_factory=ReleaseConfig)
    splits: SplitConfig = field(default_factory=SplitConfig)
    split_half: SplitHalfConfig = field(default_factory=SplitHalfConfig)


def process_config(protocol: dict | str) -> ProcessConfig:
    """The checked ``[process]`` table of a protocol (a loaded dict, a short name or a path)."""
    from lexgold.errors import InputError

    if not isinstance(protocol, dict):
        protocol = load_protocol(protocol)
    config = parse_section(ProcessConfig, protocol, "process")
    unknown = [rule for rule in config.exclusions.rules if rule not in RULES]
    if unknown:
        raise InputError(f"unknown rule {unknown[0]!r}; allowed: {', '.join(RULES)}",
                         path=protocol.get("_path", "<protocol>"), field="process.exclusions.rules")
    if config.exclusions.too_fast_s_per_pair < 0:
        raise InputError("must be 0 (off) or more", path=protocol.get("_path", "<protocol>"),
                         field="process.exclusions.too_fast_s_per_pair")
    return config
