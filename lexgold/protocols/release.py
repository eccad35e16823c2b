"""``[process.release]``: the scale and the layout of a released gold standard.

Its schema sits here, below the packages, because more than one step reads it: post-processing
writes the release by it (:mod:`lexgold.process`, where it is ``ProcessConfig.release``), and
the cross-lingual builder (:mod:`lexgold.languages.crosslingual`) reads a gold standard's scale
from it when nothing beside the file declares one. Checked by the one path of
:mod:`lexgold.protocols.schema`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from typing import Annotated, Literal

from lexgold.protocols.schema import Check, Invalid, between, length, parse_section

#: what a release writes for a statement its authors did not make (never a placeholder)
NOT_STATED = "not stated"
#: the statements only a release's authors can make, in the order ``lexgold process`` names
#: the missing ones (docs/protocols.md, "Release metadata")
STATEMENTS = ("collection_type", "recruitment", "biases", "social_impact", "maintenance",
              "license")
#: a statement: free text of at most 2,000 characters ("" = not stated)
Statement = Annotated[str, length(0, 2000)]


def _semantic_version(value: str) -> bool:
    return re.fullmatch(r"\d+\.\d+\.\d+", value) is not None


def _iso_date(value: str) -> bool:
    try:
        return value == "" or date.fromisoformat(value).isoformat() == value
    except ValueError:
        return False


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
    release_file: Annotated[str, Check(
        "a plain file name other than gold.csv, exclusions.csv and report.json",
        lambda name: "/" not in name and "\\" not in name
        and name not in ("gold.csv", "exclusions.csv", "report.json", ".", ".."))] = ""
    #: fewest accepted raters on every released pair (SimLex section 3.6: 36); fewer, or no
    #: rater left at all, stops the release unless it is forced (--allow-incomplete)
    min_raters_per_pair: Annotated[int, between(1)] = 36
    #: decimals of released scores
    decimals: Annotated[int, between(0, 15)] = 2
    #: how the released score is rounded (lexgold.process.release.released_score): "half-up" =
    #: the exact score (the mean rescaled) rounded half up on its decimal value; "mean-first"
    #: = the mean rounded to ``decimals`` with Python's round(), rescaled, and rounded again
    #: the same way, as HyperLex's AVG_SCORE_0_10 (str(round(round(mean, 2) * 10 / 6, 2)));
    #: "half-even" = the exact score rounded half to even on its decimal value, as the Rare
    #: Words set (8.625 -> 8.62);
    #: "" = the layout's published rule (hyperlex: mean-first; the others: half-up)
    score_rounding: Literal["", "half-up", "half-even", "mean-first"] = ""
    #: how the release file prints its numbers: "fixed" = exactly ``decimals`` decimals
    #: (5.20), "trimmed" = at most ``decimals``, trailing zeros dropped (9.2, 2), "shortest" =
    #: Python's shortest repr of the rounded value (7.5, 0.0, 10.0); "" = the layout's
    #: published form (simlex, tr9856: trimmed; hyperlex: fixed)
    number_format: Literal["", "fixed", "trimmed", "shortest"] = ""
    #: the released score column's form (SimLex999, AVG_SCORE_0_10, TR9856 score); "" =
    #: number_format when that is set, else the layout's published form (hyperlex: shortest)
    score_format: Literal["", "fixed", "trimmed", "shortest"] = ""
    #: SimLex conc(w1)/conc(w2): "brysbaert" (1-5, as published) or "pairs" (builder's conc1/2)
    conc_source: Literal["brysbaert", "pairs"] = "brysbaert"
    #: how the ratings were collected, as Croissant's ``rai:dataCollectionType`` names it
    #: ("Crowdsourcing", "Lab experiment", "Survey"); simulated ratings add "Simulation"
    collection_type: Statement = ""
    #: who the raters were, how they were recruited and paid, and their consent
    recruitment: Statement = ""
    #: known biases of the pairs or the raters (``rai:dataBiases``)
    biases: Statement = ""
    #: the dataset's social impact (``rai:dataSocialImpact``)
    social_impact: Statement = ""
    #: who maintains the dataset, how errata are handled (``rai:dataReleaseMaintenancePlan``)
    maintenance: Statement = ""
    #: the dataset's licence (an SPDX identifier such as "CC-BY-4.0", or a URL)
    license: Statement = ""
    #: the dataset's authors, one name each ("Given Family"), for CITATION.cff and the card
    authors: list[Annotated[str, length(1, 200)]] = field(default_factory=list)
    #: the release's version, MAJOR.MINOR.PATCH (Croissant ``version``)
    version: Annotated[str, Check("a version MAJOR.MINOR.PATCH", _semantic_version)] = "1.0.0"
    #: the publication date, YYYY-MM-DD; "" = the date of the last rating (``report.json``
    #: ``dates``), so that the same ratings give the same bytes
    date_published: Annotated[str, Check("a date YYYY-MM-DD, or \"\"", _iso_date)] = ""

    def unstated(self) -> list[str]:
        """The :data:`STATEMENTS` left empty (written as :data:`NOT_STATED`)."""
        return [key for key in STATEMENTS if not getattr(self, key).strip()]

    def stated(self, key: str) -> str:
        """A statement as the release writes it: its text, or :data:`NOT_STATED`."""
        return getattr(self, key).strip() or NOT_STATED

    def check(self):
        if not self.rating_min < self.rating_max:
            raise Invalid("rating_max", f"a number > rating_min ({self.rating_min:g})",
                          self.rating_max)
        if not self.score_min < self.score_max:
            raise Invalid("score_max", f"a number > score_min ({self.score_min:g})",
                          self.score_max)


def release_config(protocol: dict) -> ReleaseConfig:
    """The checked ``[process.release]`` table of a loaded protocol."""
    process = {"_path": protocol.get("_path", "<protocol>"),
               "process.release": (protocol.get("process") or {}).get("release", {})}
    return parse_section(ReleaseConfig, process, "process.release")
