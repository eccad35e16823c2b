"""What a run of ``lexgold process`` found, typed: :class:`ProcessReport` for a rating study,
:class:`BwsReport` for a Best-Worst Scaling one.

The pipeline (:mod:`lexgold.process.pipeline`, :mod:`lexgold.process.bws_release`) fills one;
``report.json`` is its :meth:`~ProcessReport.to_dict` (a published file: the keys, their order
and their values are the release's contract, ``docs/process.md``); the command line prints its
:meth:`~ProcessReport.notice_lines` and :meth:`~ProcessReport.summary_lines`, and the dataset
card, ``report.md``, ``CITATION.cff``, ``datapackage.json`` and ``croissant.json`` read its
attributes. Figures whose shape depends on the data (agreement per stage and subset, split-half,
splits, norms, the builder's manifest) stay JSON objects (``dict``).
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field, fields, is_dataclass
from pathlib import Path

import numpy as np

from lexgold.process.config import ProcessConfig


@dataclass
class Stage:
    """Raters, ratings (checkpoints not counted) and pairs at one stage of the pipeline."""
    raters: int
    ratings: int
    pairs: int


@dataclass(kw_only=True)
class Counts:
    """Counts of a rating study's run (``report.json`` ``counts``)."""
    #: ``raw``, ``calibrated`` and ``final`` (the accepted raters)
    stages: dict[str, Stage]
    calibrated_raters: int
    excluded_raters: int
    excluded_by_rule: dict[str, int]
    #: raters who met a rule but were kept by the per-tranche cap (SimLex section 3.6)
    kept_by_cap: int
    released_pairs: int
    pairs_listed_twice_merged: int
    min_raters_per_pair: int


@dataclass(kw_only=True)
class ReleaseCheck:
    """Is the release complete (:func:`lexgold.process.pipeline.release_check`)?"""
    min_raters_per_pair: int
    accepted_raters: int
    pairs_below: int
    pairs_missing: int
    #: one line per problem, the biggest first; empty when the release is complete
    problems: list[str]


@dataclass(kw_only=True)
class StudyRef:
    """The study the ratings came from (a database or an export with its description)."""
    name: str | None
    protocol_sha256: str
    pairs: int


@dataclass(kw_only=True)
class ProcessReport:
    """Everything a rating study's run found and used, in ``report.json``'s order.

    The first group is filled by :func:`lexgold.process.pipeline.process_ratings` (in
    memory); the second by :func:`lexgold.process.pipeline.release`, which writes the
    folder. ``split_half``, ``transitivity``, ``splits`` and ``simulated`` are left out of
    ``report.json`` when None (the protocol asks for none, no rating is simulated).
    """
    protocol: str
    protocol_file: str
    protocol_sha256: str
    config: ProcessConfig
    scale: dict
    aggregate: dict
    counts: Counts
    agreement: dict
    notes: list[str]
    split_half: dict | None = None
    transitivity: dict | None = None
    splits: dict | None = None
    release_check: ReleaseCheck
    machine: dict | None = None
    # -- the release folder ------------------------------------------------------------------
    paper: str = ""
    language: str = "en"
    release_file: str = ""
    ratings_file: dict | None = None
    ratings_source: str = ""
    simulated: dict | None = None
    study: StudyRef | None = None
    seed: int = 0
    pairs_file: dict | None = None
    builder_manifest: dict | None = None
    norms: dict = field(default_factory=dict)
    dates: dict | None = None
    warnings: list[str] = field(default_factory=list)
    overlap_warnings: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)

    #: left out of report.json when None
    OPTIONAL = ("split_half", "transitivity", "splits", "simulated", "machine")
    #: figures computed in memory: NaN written as null, numpy numbers as Python's
    CLEANED = ("config", "scale", "aggregate", "counts", "agreement", "split_half",
               "transitivity", "splits", "release_check")

    @property
    def anonymous(self) -> bool:
        """Ratings without rater identity: split-half on random halves, no IAA."""
        return "split_half_random" in self.agreement

    def to_dict(self) -> dict:
        """``report.json``'s object."""
        out = {}
        for item in fields(self):
            value = getattr(self, item.name)
            if item.name in self.OPTIONAL and not value:
                continue
            value = _plain(value)
            out[item.name] = clean(value) if item.name in self.CLEANED else value
        return out

    def write_json(self, path: Path) -> None:
        """Write ``report.json``."""
        path.write_text(json.dumps(self.to_dict(), indent=2) + "\n", encoding="utf-8")

    def notice_lines(self) -> list[str]:
        """What ``lexgold process`` says on stderr: simulated ratings, words spelled two ways,
        an incomplete release, the notes and scale warnings."""
        return [*_simulated_note(self.simulated),
                *_unstated_note(self.config, dated=bool((self.dates or {}).get("last"))),
                *(f"Warning: {message}" for message in self.overlap_warnings),
                *(f"Warning: incomplete release: {problem}" for problem in self.warnings),
                *(f"Note: {note}" for note in self.notes),
                *(f"Warning: {warning}" for warning in self.scale.get("warnings", []))]

    def summary_lines(self, out_dir) -> list[str]:
        """What ``lexgold process`` says on stdout: what was released, agreement, rescaling,
        merged listings, the files written to ``out_dir``."""
        counts, final = self.counts, self.agreement["final"]
        show = lambda v: "n/a" if v is None else f"{v:.3f}"  # noqa: E731
        if self.anonymous:
            half = self.agreement["split_half_random"]
            lines = [f"{counts.released_pairs} pairs released from "
                     f"{counts.stages['final'].ratings} anonymous ratings",
                     f"ratings without rater identity: no IAA-1/IAA-2; split-half on random "
                     f"halves r {show(half['r'])} (Spearman-Brown {show(half['spearman_brown'])})"]
        else:
            lines = [f"{counts.released_pairs} pairs released from "
                     f"{counts.stages['final'].raters} of {counts.stages['raw'].raters} raters "
                     f"({counts.calibrated_raters} calibrated, {counts.excluded_raters} "
                     f"excluded)", f"IAA-1 {show(final['iaa1'])}  IAA-2 {show(final['iaa2'])}"]
        low, high = self.scale["ratings"]
        lines += [f"ratings declared on {a:g}-{b:g} rescaled linearly to {low:g}-{high:g}"
                  for a, b in self.scale["rescaled"]]
        if counts.pairs_listed_twice_merged:
            lines.append(f"pairs listed twice in a source: {counts.pairs_listed_twice_merged}, "
                         f"merged (each rater's mean of the listings)")
        if self.machine:
            lines.append(_machine_line(self.machine))
        if self.release_file != "gold.csv":
            lines.append(f"release file {self.release_file}")
        return [*lines, f"wrote {', '.join(self.files)} to {out_dir}"]


def _machine_line(machine: dict) -> str:
    """The machine's line of ``lexgold process``'s summary (lexgold.process.machine_mode)."""
    model = machine.get("model") or "model not recorded"
    if machine["mode"] != "prior":
        return f"machine {model} (mode {machine['mode']}): released scores are human means"
    show = lambda v: "n/a" if v is None else f"{v:.3f}"  # noqa: E731
    return (f"machine {model} (mode prior) on {machine['pairs_covered']} pairs: mean weight "
            f"{show(machine.get('weight_mean'))}; circularity "
            f"{show(machine.get('circularity'))} (its Spearman against the released scores "
            f"minus against the human-only means); human_score kept in gold.csv")


@dataclass(kw_only=True)
class BwsCounts:
    """Counts of a Best-Worst Scaling study's run (``report.json`` ``counts``)."""
    raters: int
    raters_excluded: int
    raters_accepted: int
    answers: int
    tuples: int
    pairs: int
    answers_per_pair_min: int


@dataclass(kw_only=True)
class BwsReport:
    """Everything a Best-Worst Scaling study's run found and used, in ``report.json``'s order
    (:mod:`lexgold.process.bws_release`); ``simulated`` is left out when None."""
    protocol: str
    paper: str
    protocol_sha256: str
    task: str = "bws"
    method: str
    score_range: list[float]
    counts: BwsCounts
    #: raters each rule of ``[process.bws] rules`` excluded
    exclusion_reasons: dict[str, int]
    split_half: dict
    methods_spearman: float | None
    config: ProcessConfig
    warnings: list[str]
    simulated: dict | None = None
    seed: int = 0
    ratings_file: str = ""
    pairs_file: str | None = None
    release_file: str = "gold.csv"
    files: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        """``report.json``'s object (of the config, ``[process.bws]`` and
        ``[process.release]``)."""
        out = {}
        for item in fields(self):
            value = getattr(self, item.name)
            if item.name == "simulated" and not value:
                continue
            out[item.name] = ({"bws": asdict(value.bws), "release": asdict(value.release)}
                              if item.name == "config" else _plain(value))
        return out

    def write_json(self, path: Path) -> None:
        """Write ``report.json`` (numpy numbers as floats)."""
        path.write_text(json.dumps(self.to_dict(), indent=2, default=float) + "\n",
                        encoding="utf-8")

    def notice_lines(self) -> list[str]:
        """What ``lexgold process`` says on stderr: simulated answers, an incomplete release."""
        return [*_simulated_note(self.simulated), *_unstated_note(self.config, dated=False),
                *(f"Warning: incomplete release: {problem}" for problem in self.warnings)]

    def summary_lines(self, out_dir) -> list[str]:
        """What ``lexgold process`` says on stdout: the answers scored, split-half reliability
        (Kiritchenko & Mohammad 2017), the files written to ``out_dir``."""
        counts, half = self.counts, self.split_half
        return [f"{counts.pairs} pairs released from {counts.answers} Best-Worst answers of "
                f"{counts.raters_accepted} of {counts.raters} raters ({counts.raters_excluded} "
                f"excluded); {self.method} scores; split-half r {half['r']:.3f} (no "
                f"Spearman-Brown; corrected {half['spearman_brown']:.3f})",
                f"wrote {', '.join(self.files)} to {out_dir}"]


def _simulated_note(simulated: dict | None) -> list[str]:
    """The note that simulated ratings were released (:mod:`lexgold.process.simulated_label`)."""
    if not simulated:
        return []
    return [f"Note: {simulated['ratings']} of {simulated['of']} ratings are simulated "
            f"(platform 'simulated'): the release says so"]


def following(paper: str, protocol: str) -> str:
    """How a release names where its method comes from: "following the protocol of PAPER", or
    for a protocol of no paper (``plain.toml``'s ``paper = "none: ..."``) lexgold's protocol
    and what it does.

    >>> following("Hill et al. 2015, SimLex-999", "simlex999")
    'following the protocol of Hill et al. 2015, SimLex-999'
    >>> following("none: mean rating per pair", "plain")
    "under lexgold's plain protocol (mean rating per pair)"
    """
    paper = (paper or "").strip()
    if paper and not paper.casefold().startswith("none"):
        return f"following the protocol of {paper}"
    what = paper.partition(":")[2].strip()
    return f"under lexgold's {protocol} protocol" + (f" ({what})" if what else "")


def cites_paper(paper: str) -> bool:
    """Whether a protocol names a paper to cite (not ``plain.toml``'s "none: ...")."""
    return bool(paper) and not paper.strip().casefold().startswith("none")


def _unstated_note(config: ProcessConfig, dated: bool) -> list[str]:
    """One line naming the statements ``[process.release]`` left empty (docs/protocols.md,
    "Release metadata"): the release writes each as "not stated"; ``date_published`` too when
    the ratings have no date to take it from (``dated``)."""
    missing = config.release.unstated()
    if not dated and not config.release.date_published:
        missing.append("date_published")
    if not missing:
        return []
    return [f"Warning: not stated in [process.release]: {', '.join(missing)} (the dataset card, "
            f"CITATION.cff and croissant.json say \"not stated\"; docs/protocols.md, \"Release "
            f"metadata\")"]


def _plain(value):
    """A dataclass (nested ones too) as the dict ``json`` writes; anything else as it is."""
    return asdict(value) if is_dataclass(value) else value


def clean(value):
    """JSON-safe: NaN -> None, numpy scalars -> Python."""
    if isinstance(value, dict):
        return {str(k): clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean(v) for v in value]
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return None if math.isnan(value) else float(value)
    return value
