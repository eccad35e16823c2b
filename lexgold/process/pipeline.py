"""One post-processing run: ratings in, released gold standard and reliability report out.

Order of the steps (SimLex-999 section 3.6; HyperLex sections 4.5, 5; TR9856 section 4):

1. check the long-format ratings and their scale: a rating outside its scale is an error, a
   source's declared scale is mapped linearly onto the protocol's (:mod:`ratings`);
2. calibrate biased raters on the consistency set, if the protocol does (:mod:`calibration`);
3. compute every exclusion rule on the calibrated ratings and drop the excluded raters
   (:mod:`exclusions`);
4. a score per pair by the protocol's ``[process] aggregate`` rule (the mean, the papers';
   a rater model; or the Rare Words trimmed mean: :mod:`aggregate`), SD, and the score
   mapped linearly onto the released scale (:mod:`scaling`);
5. IAA-1/IAA-2 at each stage, per subset, bootstrap intervals (:mod:`agreement`); TR9856
   split-half and transitivity (:mod:`splithalf`);
6. random and lexical splits, if the protocol asks (:mod:`splits`);
7. check the release: every pair of ``pairs.csv`` released, each on at least
   ``[process.release] min_raters_per_pair`` accepted raters (:func:`release_check`);
8. write ``gold.csv``, the release file in the published layout (:mod:`release`),
   ``exclusions.csv``, ``report.json``, ``report.md``, plots, and the dataset card,
   ``CITATION.cff``, ``datapackage.json`` and ``SHA256SUMS`` (:mod:`publish`).

Association and concreteness metadata come from ``pairs.csv`` first; for an English protocol
the shipped USF and Brysbaert norms fill the gaps, for a language pack its own
``[resources]`` norms (none when it names none), never the English ones.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from lexgold.process import agreement as iaa
from lexgold.process.aggregate import pair_estimates
from lexgold.process.bws_release import release_bws
from lexgold.process.calibration import calibrate, calibration_shifts
from lexgold.process.config import ProcessConfig, process_config
from lexgold.process.exclusions import exclusion_table, excluded_raters
from lexgold.process.machine_mode import (check_mode, human_columns, machine_release,
                                          prior_estimates)
from lexgold.compression import sha256_file
from lexgold.languages.packs import load_pack, pack_folder
from lexgold.errors import IncompleteRelease, InputError, UndefinedStatistic
from lexgold.manifest import manifest_beside
from lexgold.process.run_report import (BwsReport, Counts, ProcessReport, ReleaseCheck, Stage,
                                    StudyRef, clean)
from lexgold.ratings import ITEM
from lexgold.ratings.long import (check_binary, check_ratings, declare_scale, is_anonymous,
                                  on_scale, require_raters, scale_use)
from lexgold.process.release import (concreteness_group, gold_table, read_release_pairs,
                                     plain_table, release_name, released_score,
                                     write_release)
from lexgold.process.publish import staged_folder, write_checksums, write_publication
from lexgold.process.report_md import plot_rater_agreement, plot_scores_by_subset, write_markdown
from lexgold.process.rules import low_agreement_threshold
from lexgold.process.reliability import reliability_figures
from lexgold.process.scaling import gold_scores
from lexgold.process.simulated_label import mark_gold, simulated_ratings
from lexgold.process.source import read_source
from lexgold.process.splithalf import split_half_all_splits, split_half_random, transitivity
from lexgold.process.splits import lexical_split, random_split, score_interval
from lexgold.protocols import load_protocol
from lexgold.ratings.overlap import overlap_warnings
from lexgold.resources import read_brysbaert, read_usf, usf_concreteness


@dataclass
class ProcessResult:
    gold: pd.DataFrame          # the released table
    scores: pd.DataFrame        # gold_scores of the accepted raters (+ subset columns)
    exclusions: pd.DataFrame    # exclusion_table
    agreement: pd.DataFrame     # rater_agreement of the calibrated ratings
    splits: pd.DataFrame | None
    report: ProcessReport

    @property
    def problems(self) -> list[str]:
        """What makes the release incomplete (see :func:`release_check`); empty when none."""
        return self.report.release_check.problems


#: random splits of split-half on random halves (ratings without rater identity), as
#: ``lexgold agree --split-half``; fixed, so that ``--bootstrap`` does not change the figure
RANDOM_SPLITS = 100


#: the stages of :func:`release`, in order, as they are passed to its ``progress``
STAGES = ("reading the ratings", "calibration and exclusions", "agreement",
          "writing the release", "plots", "report and dataset card")


def process_ratings(ratings: pd.DataFrame, protocol: dict | str, *, rng: np.random.Generator,
                    pairs: pd.DataFrame | None = None, usf: pd.DataFrame | None = None,
                    brysbaert: pd.DataFrame | None = None,
                    source: str | Path | None = None,
                    pairs_from: str = "the pairs file", progress=None,
                    machine: pd.DataFrame | None = None, study_machine: dict | None = None,
                    config: ProcessConfig | None = None) -> ProcessResult:
    """Run steps 1-6 in memory; see the module docstring. ``rng`` seeds three separate
    streams (:meth:`numpy.random.Generator.spawn`): bootstrap intervals, split-half on random
    halves, and the HyperLex splits, so that the number of bootstrap replicates changes none of
    the others. ``source`` (the ratings file) lets errors name the file and line; ``pairs_from``
    says where ``pairs`` came from (in the release check's messages); ``progress``, if given, is
    called with the name of each stage (:data:`STAGES`) as it starts. ``config``: the
    protocol's ``[process]`` section when the caller has parsed it already
    (:func:`~lexgold.process.config.process_config` of ``protocol``; :func:`release` parses it
    once per run), else parsed here.

    Ratings without rater identity (HyperLex's release, SimVerb-3500) skip the protocol's rater
    exclusions with a note in ``report.notes`` (the ratings are taken as already screened);
    calibration, which shifts a rater's ratings, is refused. A protocol whose study is binary
    (TR9856) refuses a rating other than 0 or 1."""
    progress = progress or (lambda stage: None)
    protocol = protocol if isinstance(protocol, dict) else load_protocol(protocol)
    config = config if config is not None else process_config(protocol)
    check_mode(config.machine, machine, config.aggregate)
    release = config.release
    progress("calibration and exclusions")
    boot_rng, half_rng, split_rng = rng.spawn(3)
    raw = check_ratings(ratings, source=source)
    rating_range, score_range, scale = _scales(raw, release, source)
    scale["warnings"] = scale_use(raw)
    raw = on_scale(raw, *rating_range, source=source)
    if (protocol.get("study") or {}).get("task") == "binary":
        check_binary(raw, source=source)
    anonymous = is_anonymous(raw)
    notes = []
    if anonymous and config.calibration.enabled:
        require_raters(raw, "calibration (SimLex-999 section 3.6)", source=source)
    if anonymous and config.exclusions.rules:
        notes.append(f"rater exclusion ({', '.join(config.exclusions.rules)}) skipped: the "
                     f"ratings have no rater identity (rater ids starting with '?'), so they "
                     f"are taken as already screened (HyperLex's release lists the accepted "
                     f"raters' ratings)")
        config = replace(config, exclusions=replace(config.exclusions, rules=[]))
    calibrated, shifted = raw, 0
    if config.calibration.enabled:
        shifts = calibration_shifts(raw, threshold=config.calibration.threshold,
                                    shift=config.calibration.shift)
        shifted = int((shifts["shift"] != 0).sum())
        calibrated = calibrate(raw, threshold=config.calibration.threshold,
                               shift=config.calibration.shift,
                               rating_min=rating_range[0], rating_max=rating_range[1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", iaa.AgreementWarning)
        per_rater = (iaa.rater_agreement(calibrated, pool=config.agreement.pool,
                                         min_overlap=config.agreement.min_overlap)
                     if not anonymous else iaa.rater_agreement(calibrated.iloc[:0]))
        exclusions = exclusion_table(calibrated, config, calibrate=False,
                                     agreement=None if anonymous else per_rater)
    dropped = set(excluded_raters(exclusions))
    # the accepted raters' rows, without the page times and raw ratings (the exclusions used
    # them; nothing after does): not copied again by every statistic below
    final = calibrated.loc[~calibrated["rater_id"].isin(dropped).to_numpy(),
                           [c for c in calibrated.columns if c not in ("answered_at",
                                                                       "rating_raw")]]
    estimates, aggregate = pair_estimates(final, config.aggregate, rating_range=rating_range,
                                          anonymous=anonymous)
    if "note" in aggregate:
        notes.append(aggregate["note"])
    prior = None
    if config.machine == "prior":         # lexgold.process.machine_mode: a declared mode
        prior = prior_estimates(final, machine)
        estimates = prior[[*ITEM, "estimate"]]
    scores = gold_scores(final, rating_range=rating_range, score_range=score_range,
                         estimates=estimates)
    scores = _with_subsets(scores, final, pairs, release.format, usf)
    if pairs is not None:                 # release in the order of the pairs file
        order = pairs.drop_duplicates(ITEM)[ITEM].reset_index(drop=True).reset_index()
        scores = scores.merge(order, on=ITEM, how="left").sort_values(
            "index", kind="stable").drop(columns="index").reset_index(drop=True)
    sources = {"pairs": pairs, "decimals": release.decimals,
               "score_rounding": release.score_rounding, "rating_range": rating_range,
               "score_range": score_range}
    if release.format == "simlex":
        sources.update(usf=usf, brysbaert=brysbaert, conc_source=release.conc_source)
    gold = (plain_gold(scores, **sources) if release.format == "plain"
            else gold_table(scores, release.format, **sources))
    if prior is not None:                 # the human-only score kept beside the released one
        gold = gold.assign(**human_columns(scores, release.decimals, rating_range,
                                           score_range))
    if "concQ" in gold.columns:           # the released quartiles, for per-subset agreement
        scores["concQ"] = gold["concQ"].array
    progress("agreement")
    halves = chain = None
    if config.split_half.enabled:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", iaa.AgreementWarning)
            halves = split_half_all_splits(final, annotators=config.split_half.annotators)
        chain = transitivity(scores, bins=config.split_half.transitivity_bins,
                             score_range=score_range)
    splits = summary = None
    if config.splits.enabled and len(scores):
        splits, summary = _splits(scores, config, split_rng)
    report = ProcessReport(
        protocol=protocol.get("name", "?"), protocol_file=protocol.get("_path", ""),
        protocol_sha256=protocol.get("_sha256", ""), config=config, scale=clean(scale),
        aggregate=clean(aggregate),
        counts=_counts(raw, calibrated, final, scores, exclusions, shifted),
        agreement=clean(_agreement(raw, calibrated, final, scores, config, boot_rng)
                        if not anonymous else _anonymous_agreement(final, config, half_rng)),
        notes=notes, split_half=clean(halves), transitivity=clean(chain),
        splits=clean(summary),
        release_check=release_check(scores, pairs, final, release.min_raters_per_pair,
                                    pairs_from),
        machine=clean(machine_release(config.machine, machine, scores, prior, study_machine)))
    return ProcessResult(gold, scores, exclusions, per_rater, splits, report)


def release_check(scores: pd.DataFrame, pairs: pd.DataFrame | None, final: pd.DataFrame,
                  min_raters: int, pairs_from: str = "the pairs file") -> ReleaseCheck:
    """Is the release complete? No accepted rater left, pairs of ``pairs`` with no accepted
    rating, and pairs on fewer than ``min_raters`` accepted raters are each a problem.

    Returns a :class:`~lexgold.process.run_report.ReleaseCheck`, its ``problems`` a list of
    one-line messages, every problem named, the biggest (most pairs) first (empty when the
    release is complete); ``pairs_from`` names where ``pairs`` came from.
    """
    problems = []
    raters = int(final.loc[final["kind"] != "checkpoint", "rater_id"].nunique())
    if raters == 0:
        problems.append((math.inf, "no rater is left after the exclusions"))
    below = scores[scores["n"] < min_raters]
    if raters and len(below):
        first = below.sort_values("n", kind="stable").iloc[0]      # the thinnest pair
        problems.append((len(below), f"{len(below)} of {len(scores)} pairs have fewer than "
                         f"{min_raters} accepted raters, the protocol's "
                         f"min_raters_per_pair (fewest: {int(first['n'])}, e.g. "
                         f"{first['word1']} / {first['word2']})"))
    missing = pd.DataFrame(columns=ITEM)
    if pairs is not None:
        wanted = pairs.drop_duplicates(ITEM)[ITEM]
        missing = wanted.merge(scores[ITEM], on=ITEM, how="left", indicator=True)
        missing = missing[missing["_merge"] == "left_only"][ITEM]
        if raters and len(missing):
            first = missing.iloc[0]
            problems.append((len(missing), f"{len(missing)} of the {len(wanted)} pairs of "
                             f"{pairs_from} have no accepted rating (e.g. {first['word1']} / "
                             f"{first['word2']})"))
    problems.sort(key=lambda problem: -problem[0])
    return ReleaseCheck(min_raters_per_pair=min_raters, accepted_raters=raters,
                        pairs_below=int(len(below)), pairs_missing=int(len(missing)),
                        problems=[text for _, text in problems])


#: decimals of the figures of exclusions.csv (values, thresholds, quality flags)
EXCLUSION_DECIMALS = 4


def run(ratings_path: str | Path, protocol: str | None, out_dir: str | Path,
        **options) -> ProcessReport | BwsReport:
    """``lexgold process``: read, process and write the release folder ``out_dir`` whole or
    not at all (:func:`lexgold.process.publish.staged_folder`); ``options`` as :func:`release`.
    """
    with staged_folder(Path(out_dir)) as staging:
        return release(ratings_path, protocol, staging, **options)


def release(ratings_path: str | Path, protocol: str | None, out_dir: str | Path, *,
            pairs_path: str | Path | None = None, seed: int = 0,
            usf_dir: str | Path | None = None, plots: bool = True,
            bootstrap: int | None = None, scale: tuple[float, float] | None = None,
            allow_incomplete: bool = False, aggregate: str | None = None,
            machine: str | Path | None = None, machine_column: str | None = None,
            machine_mode: str | None = None, progress=None,
            release_keys: dict | None = None) -> ProcessReport | BwsReport:
    """Read, process and write the release into the folder ``out_dir`` (module docstring).

    ``ratings_path`` is a study (SQLite file or database URL), an export of one (its study
    description beside it) or a ratings CSV (:mod:`lexgold.process.source`). ``protocol``
    defaults to the study's own; a ratings CSV without a study needs one. ``pairs_path``
    replaces the study's pairs (ratings from elsewhere). ``scale`` declares the scale of
    ratings that do not declare one. ``aggregate`` overrides the protocol's ``[process]
    aggregate`` (a note in report.json when it differs). ``machine`` is a machine's ratings
    (:func:`lexgold.machine.ratings.read_machine`, its number in ``machine_column``), spent as
    ``machine_mode`` or the protocol's ``[process] machine``
    (:mod:`lexgold.process.machine_mode`); a study that allocated with a machine names it in
    its export, and its release says so.

    Raises :class:`IncompleteRelease` (nothing written) when :func:`release_check` finds a
    problem, unless ``allow_incomplete``; then the problems go to ``report.json`` under
    ``warnings`` and to the dataset card. ``progress``: called with the name of each stage
    (:data:`STAGES`) as it starts. ``release_keys``: ``[process.release]`` keys from the
    command line (``version``, ``date_published``; None = the protocol's). Returns the
    report, as ``report.json`` holds it.
    """
    progress = progress or (lambda stage: None)
    progress("reading the ratings")
    loaded, source, notes = _study_of(ratings_path, protocol)
    given = {key: value for key, value in (release_keys or {}).items() if value is not None}
    if given:                             # command-line keys, checked as the protocol's are
        loaded.setdefault("process", {}).setdefault("release", {}).update(given)
    if (loaded.get("study") or {}).get("task") == "bws":    # its own steps (bws_release)
        _slider_only(aggregate)
        if machine is not None or machine_mode not in (None, "none"):
            raise InputError("a machine rater is for rating studies; a Best-Worst Scaling "
                             "release takes none", field="--machine")
        return release_bws(ratings_path, loaded, out_dir, pairs_path=pairs_path, seed=seed,
                           bootstrap=bootstrap, allow_incomplete=allow_incomplete,
                           source=source)
    ratings = source.ratings
    if scale is not None:
        ratings = declare_scale(ratings, scale)
    if bootstrap is not None:             # command-line override of [process.agreement]
        loaded.setdefault("process", {}).setdefault("agreement", {})["bootstrap"] = bootstrap
    if aggregate is not None:             # command-line override of [process] aggregate
        asked = (loaded.get("process") or {}).get("aggregate", "mean")
        if asked != aggregate:
            notes.append(f"aggregate = {aggregate!r} from the command line (--aggregate); the "
                         f"protocol says {asked!r}")
        loaded.setdefault("process", {})["aggregate"] = aggregate
    pairs = read_release_pairs(pairs_path) if pairs_path else source.pairs
    study_machine = (source.description or {}).get("machine")
    _declare_machine(loaded, machine_mode, study_machine, notes)
    scores_of_machine = None
    if machine is not None:
        from lexgold.machine.ratings import read_machine

        scores_of_machine = read_machine(machine, column=machine_column,
                                         option="--machine-column")
    config = process_config(loaded)       # once per run: process_ratings and the plots take it
    release = config.release
    name = release_name(release.format, release.release_file)
    usf, concreteness, norms = release_norms(loaded, release.format, usf_dir,
                                             study=source.description)
    # one BLAS thread: the matrices are small, and more threads burned a third more CPU for
    # the same bytes
    with threadpool_limits(limits=1, user_api="blas"):
        result = process_ratings(ratings, loaded, rng=np.random.default_rng(seed), pairs=pairs,
                                 usf=usf, brysbaert=concreteness, source=source.label,
                                 pairs_from="the pairs file" if pairs_path else "the study",
                                 progress=progress, config=config,
                                 machine=scores_of_machine, study_machine=study_machine)
    problems = result.problems
    if problems and not allow_incomplete:
        raise IncompleteRelease(f"incomplete release: {'; '.join(problems)}; nothing written "
                                f"(--allow-incomplete writes it anyway, with a warning)",
                                path=source.label)
    progress("writing the release")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    simulated = simulated_ratings(ratings) or None
    gold = mark_gold(result.gold, simulated)      # the simulated label travels with the data
    table = (plain_table(gold, decimals=release.decimals,
                         number_format=release.number_format,
                         score_format=release.score_format)
             if release.format == "plain" else gold)
    table.to_csv(out / "gold.csv", index=False, lineterminator="\n")
    files = ["gold.csv", "exclusions.csv", "report.json", "report.md"]
    if name != "gold.csv":                # plain: gold.csv is the release
        write_release(gold, release.format, out / name, decimals=release.decimals,
                      number_format=release.number_format, score_format=release.score_format)
        files.insert(1, name)
    table = result.exclusions.rename(columns={"rater_id": "rater"})
    table.round(EXCLUSION_DECIMALS).to_csv(out / "exclusions.csv", index=False,
                                           lineterminator="\n")
    if result.splits is not None:
        result.splits.to_csv(out / "splits.csv", index=False, lineterminator="\n")
        files.append("splits.csv")
    progress("plots")
    images = _plots(result, config, out) if plots and len(result.scores) else []
    progress("report and dataset card")
    published = ["README.md", "CITATION.cff", "datapackage.json", "croissant.json", "SHA256SUMS"]
    description = source.description or {}
    report = replace(
        result.report, paper=loaded.get("paper", ""),
        language=description.get("language") or loaded.get("language", "en"),
        protocol_file=_protocol_file(loaded), release_file=name,
        ratings_file=_input_named(ratings_path, source.kind), ratings_source=source.kind,
        simulated=simulated,
        study=(StudyRef(name=description.get("name"),
                        protocol_sha256=description["protocol"]["sha256"],
                        pairs=len(description["pairs"])) if description else None),
        seed=seed, pairs_file=_input_named(pairs_path) if pairs_path else None,
        builder_manifest=_without_folders(manifest_beside(pairs_path) if pairs_path
                                          else description.get("builder_manifest")),
        norms=norms, dates=_dates(ratings), warnings=problems,
        notes=notes + result.report.notes, overlap_warnings=overlap_warnings(ratings),
        files=files + images + published)
    report.write_json(out / "report.json")
    write_markdown(report, gold, out / "report.md", images)
    write_publication(out, report, gold, loaded)
    write_checksums(out, report.files)
    return report


def _declare_machine(loaded: dict, mode: str | None, study_machine: dict | None,
                     notes: list[str]) -> None:
    """``[process] machine`` from ``--machine-mode`` (a note when it differs from the
    protocol's), else from a study that allocated with a machine (its export says so)."""
    asked = (loaded.get("process") or {}).get("machine", "none")
    if mode is not None:
        if mode != asked:
            notes.append(f"machine = {mode!r} from the command line (--machine-mode); the "
                         f"protocol says {asked!r}")
        loaded.setdefault("process", {})["machine"] = mode
    elif study_machine and asked == "none":
        found = study_machine.get("mode", "allocate")
        model = study_machine.get("model") or "model not recorded"
        loaded.setdefault("process", {})["machine"] = found
        notes.append(f"machine = {found!r}: the study's allocator used a machine ({model}); "
                     "every released score is a human mean")


def _slider_only(aggregate: str | None) -> None:
    """``--aggregate`` other than the mean is for ratings, not Best-Worst Scaling answers."""
    if aggregate not in (None, "mean"):
        raise InputError(f"--aggregate {aggregate} is for rating studies; a Best-Worst Scaling "
                         f"study's scores come from [process.bws] method")


def _study_of(ratings_path, protocol: str | None):
    """``(protocol, source, notes)``: the protocol to process with, the ratings read (None for
    a Best-Worst Scaling protocol given with ``--protocol``: :func:`release_bws` reads its
    answers) and notes. ``--protocol`` when given (a note when it is not the study's own), else
    the study's; ratings without a study need ``--protocol``."""
    loaded = load_protocol(protocol) if protocol is not None else None
    if loaded is not None and (loaded.get("study") or {}).get("task") == "bws":
        return loaded, None, []
    source = read_source(ratings_path)
    own = source.protocol()
    if loaded is None:
        if own is None:
            raise InputError("no --protocol given, and these ratings come with no study (a "
                             "study database, or an export with its .study.json beside it)",
                             path=source.label, field="protocol")
        return own, source, []
    if own is not None and loaded["_sha256"] != own["_sha256"]:
        return loaded, source, [
            f"processed with {Path(loaded['_path']).name} (sha256 {loaded['_sha256'][:12]}), "
            f"not the study's own protocol {source.description['protocol']['name']} (sha256 "
            f"{own['_sha256'][:12]}); the study's language and norms are kept"]
    return loaded, source, []


#: the USF columns a release uses: association (FSG) and concreteness (QCON, TCON)
USF_USED = ["cue", "target", "fsg", "qcon", "tcon"]


def release_norms(protocol: dict, format: str, usf_dir=None, *, study: dict | None = None):
    """``(association norms, concreteness norms, what was used)`` for the SimLex/HyperLex
    metadata (Assoc(USF), SimAssoc333, concreteness, HyperLex's G1-G4).

    The language is the study's (``study``, see :func:`lexgold.process.source.read_source`),
    else the protocol's. English: USF (``--usf`` or the shipped copy) and Brysbaert et al.
    (2014). Another language: its language pack's ``[resources]`` association and
    concreteness norms (the study's pack, else a ``pack.toml`` beside the protocol file), None
    for each it does not name; never the English norms. The third value is
    ``{"language", "association", "concreteness", "note"}``; the note says where the columns
    come from, or why they stay empty (it goes to the dataset card).
    """
    if format not in ("simlex", "hyperlex"):
        return None, None, {}
    language = (study or {}).get("language") or protocol.get("language", "en")
    wants = "association and concreteness norms" if format == "simlex" else "association norms"
    if language == "en":
        concreteness = read_brysbaert() if format == "simlex" else None
        return read_usf(usf_dir, columns=USF_USED), concreteness, {
            "language": "en", "association": "USF (Nelson, McEvoy & Schreiber 2004)",
            "concreteness": "Brysbaert, Warriner & Kuperman (2014)" if concreteness is not None
            else None, "note": "English norms: USF free association (Nelson et al. 2004)"
            + (" and Brysbaert et al. (2014) concreteness." if concreteness is not None else ".")}
    if study is not None:
        folder = pack_folder(study.get("pack"))
        missing = (f"the study's language pack is not on this machine "
                   f"({(study.get('pack') or {}).get('folder', 'none stored')})"
                   if study.get("pack") else "the study's protocol belongs to no language pack")
    else:
        folder = Path(protocol.get("_path", ".")).parent
        folder = folder if (folder / "pack.toml").is_file() else None
        missing = "the protocol belongs to no language pack"
    empty = {"language": language, "association": None, "concreteness": None,
             "note": f"empty: no {wants} for language {language!r} ({missing}); English norms "
                     "are never used for other languages."}
    if folder is None:
        return None, None, empty
    pack = load_pack(folder)
    association = (pack.association_norms() if pack.resources.association_norms else None)
    concreteness = pack.concreteness() if format == "simlex" else None
    named = {"association": pack.resources.association_norms.path if association is not None
             else None, "concreteness": pack.resources.concreteness.path
             if concreteness is not None else None}
    used = [f"{kind} from the {language!r} pack's {path}" for kind, path in named.items() if path]
    lacking = [kind for kind, path in named.items() if not path
               and (kind == "association" or format == "simlex")]
    note = "; ".join(used) or f"empty: the {language!r} language pack names no {wants}"
    if used and lacking:
        note += f"; no {' or '.join(lacking)} norms in the pack (columns empty)"
    return association, concreteness, {"language": language, **named, "note": note + "."}


def _input_named(path, kind: str = "ratings") -> dict:
    """An input as a release names it, never by the folders of this machine: a file by its
    name and SHA-256; a study by its database's name (a SQLite file's name; a server's
    database without user, password or host) and its backend."""
    if kind == "study":
        from sqlalchemy.engine import make_url
        from sqlalchemy.exc import ArgumentError

        try:
            url = make_url(str(path)) if "://" in str(path) else None
        except ArgumentError:
            url = None
        if url is None or url.get_backend_name() == "sqlite":
            return {"name": Path(url.database if url is not None else str(path)).name,
                    "database": "sqlite"}
        return {"name": url.database or "", "database": url.get_backend_name()}
    return {"name": Path(path).name, "sha256": sha256_file(path)}


def _protocol_file(protocol: dict) -> str:
    """The protocol's file name; a study's stored protocol when no file stands behind it."""
    path = str(protocol.get("_path", ""))
    if path.startswith("<"):
        return f"{protocol.get('name', '?')}, as stored in the study"
    return Path(path).name


def _without_folders(value):
    """``value`` (a builder manifest) with every absolute path cut to its file name."""
    if isinstance(value, dict):
        return {key: _without_folders(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_without_folders(item) for item in value]
    if isinstance(value, str) and (value.startswith(("/", "~")) or
                                   (len(value) > 2 and value[1:3] in (":\\", ":/"))):
        return Path(value.replace("\\", "/")).name
    return value


def _dates(ratings: pd.DataFrame) -> dict | None:
    """First and last ``answered_at`` of the ratings (ISO 8601), when the column has dates."""
    if "answered_at" not in ratings.columns:
        return None
    stamps = pd.to_datetime(ratings["answered_at"].replace("", np.nan), errors="coerce",
                            utc=True).dropna()
    if stamps.empty:
        return None
    return {"first": stamps.min().strftime("%Y-%m-%dT%H:%M:%SZ"),
            "last": stamps.max().strftime("%Y-%m-%dT%H:%M:%SZ")}


# -- steps ------------------------------------------------------------------------------------

def _scales(raw, release, source):
    """(rating range, score range, report entry) of the protocol and the ratings' declaration."""
    rated = raw[raw["kind"] != "checkpoint"]
    declared = (rated[["scale_min", "scale_max"]].dropna().drop_duplicates()
                if "scale_min" in rated.columns else pd.DataFrame(columns=["a", "b"]))
    declared = [[float(a), float(b)] for a, b in declared.itertuples(index=False)]
    if release.rating_scale == "protocol":
        ratings = (release.rating_min, release.rating_max)
        scores = (release.score_min, release.score_max)
    else:
        undeclared = (rated["scale_min"].isna() if "scale_min" in rated.columns
                      else pd.Series(True, index=rated.index))
        if undeclared.any() or not declared:
            raise InputError("this protocol releases on the ratings' declared scale and they "
                             "declare none: import them with `lexgold ratings import --scale "
                             "MIN MAX` or pass `lexgold process --scale MIN MAX`",
                             path=source or "ratings", field="scale_min")
        if len(declared) > 1:
            raise InputError(f"the ratings declare {len(declared)} scales "
                             f"({', '.join(f'{a:g}-{b:g}' for a, b in declared)}); a protocol "
                             f"with rating_scale = \"protocol\" maps them onto one",
                             path=source or "ratings", field="scale_min")
        ratings = scores = tuple(declared[0])
    entry = {"ratings": list(ratings), "released": list(scores), "declared": declared,
             "rescaled": [s for s in declared if tuple(s) != tuple(ratings)]}
    return ratings, scores, entry


def plain_gold(scores: pd.DataFrame, decimals: int = 2, score_rounding: str = "",
               **ranges) -> pd.DataFrame:
    """The plain release: ``word1, word2, score`` (the mean rating on the released scale),
    rounded by ``score_rounding`` (:func:`lexgold.process.release.released_score`; half up on
    the decimal value by default, as WordSim-353's published means are)."""
    ranges = {k: v for k, v in ranges.items() if k in ("rating_range", "score_range")}
    return pd.DataFrame({"word1": scores["word1"], "word2": scores["word2"],
                         "score": released_score(scores, decimals=decimals,
                                                 rounding=score_rounding, **ranges).array})

def _with_subsets(scores, final, pairs, format, usf=None) -> pd.DataFrame:
    """Attach subset labels (pos, conc_class, relation, topic, concQ, conc_group) to scores."""
    for column in ("topic", "relation"):      # pair attributes carried by the ratings
        if column in final.columns and column not in scores.columns:
            scores = scores.join(final.groupby(ITEM)[column].first(), on=ITEM)
    if pairs is not None:
        extra = [c for c in ("pos", "conc_class", "relation", "topic", "conc1", "conc2",
                             "conc_group") if c in pairs.columns and c not in scores.columns]
        if extra:
            table = pairs.drop_duplicates(ITEM)[ITEM + extra]
            scores = scores.merge(table, on=ITEM, how="left")
    if "conc_group" in scores.columns:            # the builder's G1-G4 (its own norms)
        scores["conc_group"] = scores["conc_group"].fillna("").astype(str)
    elif format == "hyperlex" and usf is not None and "qcon" in usf.columns:
        # HyperLex section 5: G1-G4 from USF concreteness (1-7), English norms only
        conc = usf_concreteness(usf)
        scores["conc_group"] = concreteness_group(
            scores["word1"].str.lower().map(conc), scores["word2"].str.lower().map(conc)).values
    return scores


def _anonymous_agreement(final, config, rng) -> dict:
    """Ratings without rater identity: no IAA, split-half on random halves instead."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", iaa.AgreementWarning)
        half = split_half_random(final, rng=rng, splits=RANDOM_SPLITS)
    undefined = {"iaa1": np.nan, "iaa2": np.nan}
    return {"pool": config.agreement.pool, "min_overlap": config.agreement.min_overlap,
            "bootstrap": config.agreement.bootstrap, "ci_level": config.agreement.ci_level,
            "raw": undefined, "calibrated": undefined, "final": dict(undefined),
            "by_subset": {}, "split_half_random": half,
            "note": "ratings without rater identity: IAA-1 and IAA-2 are undefined"}


def _counts(raw, calibrated, final, scores, exclusions, shifted) -> Counts:
    def stage(frame):
        rated = frame[frame["kind"] != "checkpoint"]
        return Stage(raters=int(frame["rater_id"].nunique()), ratings=int(len(rated)),
                     pairs=int(len(rated[ITEM].drop_duplicates())))
    excluded = exclusions[exclusions["excluded"].astype(bool)]
    return Counts(
        stages={"raw": stage(raw), "calibrated": stage(calibrated), "final": stage(final)},
        calibrated_raters=int(shifted), excluded_raters=int(excluded["rater_id"].nunique()),
        excluded_by_rule={str(k): int(v) for k, v in excluded["rule"].value_counts().items()},
        kept_by_cap=int(exclusions.loc[~exclusions["excluded"].astype(bool),
                                       "rater_id"].nunique()),
        released_pairs=int(len(scores)), pairs_listed_twice_merged=_merged(final),
        min_raters_per_pair=int(scores["n"].min()) if len(scores) else 0)


def _merged(final) -> int:
    """Pairs listed twice in a source (kind duplicate) whose listings were averaged per rater."""
    rated = final[final["kind"] != "checkpoint"]
    if not (rated["kind"] == "duplicate").any():      # SimLex, TR9856: no pair listed twice
        return 0
    keys = ["rater_id", *ITEM]
    size = rated.groupby(keys, sort=False)["kind"].transform("size")
    listed = (rated["kind"] == "duplicate").groupby([rated[k] for k in keys],
                                                    sort=False).transform("any")
    twice = rated[(size > 1) & listed]
    return int(len(twice[ITEM].drop_duplicates()))


def _agreement(raw, calibrated, final, scores, config, rng) -> dict:
    options = {"pool": config.agreement.pool, "min_overlap": config.agreement.min_overlap}
    out = {"pool": config.agreement.pool, "min_overlap": config.agreement.min_overlap,
           "bootstrap": config.agreement.bootstrap, "ci_level": config.agreement.ci_level}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", iaa.AgreementWarning)
        out["raw"] = iaa.stage_agreement(raw, **options)
        out["calibrated"] = (dict(out["raw"]) if calibrated is raw      # no calibration
                             else iaa.stage_agreement(calibrated, **options))
        out["final"] = iaa.stage_agreement(final, rng=rng, n_boot=config.agreement.bootstrap,
                                           level=config.agreement.ci_level, **options)
        if final["tranche"].nunique() > 1 or (final["kind"] == "duplicate").any():
            out["weighted_by_pairs"] = iaa.iaa_weighted_by_pairs(
                final, min_overlap=config.agreement.min_overlap)
        out["beyond_iaa"] = reliability_figures(final)        # alpha and ICC
        out["by_subset"] = {}
        for column in ("pos", "conc_class", "concQ", "relation", "conc_group", "topic"):
            if column in scores.columns and scores[column].replace("", np.nan).notna().any():
                labels = scores.set_index(ITEM)[column].replace("", np.nan).dropna()
                labels.index = list(labels.index)
                table = iaa.agreement_by_subset(
                    final, labels.astype(str), rng=rng, n_boot=config.agreement.bootstrap,
                    level=config.agreement.ci_level, **options)
                out["by_subset"][column] = table.to_dict(orient="records")
    return out


def _splits(scores, config, rng):
    split = config.splits
    fractions = (split.train, split.dev, split.test)
    table = scores[ITEM].copy()
    strata = [c for c in split.strata
              if c in scores.columns and scores[c].replace("", np.nan).notna().any()]
    table["random"] = random_split(scores["score"], rng=rng, fractions=fractions,
                                   intervals=split.intervals,
                                   strata=[scores[c].to_numpy() for c in strata])
    table["lexical"] = lexical_split(scores, rng=rng, fractions=fractions, mode=split.lexical)
    interval = score_interval(scores["score"], split.intervals)
    summary = {"random_strata": ["interval", *strata], "lexical_mode": split.lexical}
    for kind in ("random", "lexical"):
        counts = pd.crosstab(table[kind], interval)
        summary[kind] = {part: {"pairs": int(counts.loc[part].sum()),
                                "per_interval": [int(counts.loc[part].get(i, 0))
                                                 for i in range(len(split.intervals) - 1)]}
                         for part in ("train", "dev", "test") if part in counts.index}
    summary["lexical"]["dropped"] = int((table["lexical"] == "").sum())
    summary["lexical"]["kept_share"] = (float((table["lexical"] != "").mean())
                                        if len(table) else 0.0)
    if "pos" in scores.columns:           # the POS share of every part (verbs / nouns ...)
        pos = scores["pos"].fillna("").astype(str).replace("", "?").to_numpy()
        for kind in ("random", "lexical"):
            for part, entry in summary[kind].items():
                if isinstance(entry, dict):
                    shares = pd.Series(pos[table[kind].to_numpy() == part]).value_counts(
                        normalize=True).sort_index()
                    entry["pos_share"] = {k: round(float(v), 4) for k, v in shares.items()}
    return table, summary


def _plots(result, config: ProcessConfig, out) -> list[str]:
    subset = next((c for c in ("pos", "relation", "topic") if c in result.scores.columns
                   and result.scores[c].replace("", np.nan).notna().any()), "")
    plot_scores_by_subset(result.scores, subset, out / "ratings_by_subset.png",
                          tuple(result.report.scale["released"]))
    table = result.agreement
    if table.empty:                       # no rater identity: no per-rater plot
        return ["ratings_by_subset.png"]
    try:                                  # rule (a)'s line, whichever rules apply
        threshold = float(low_agreement_threshold(table, config.exclusions.sd_below))
    except UndefinedStatistic:
        threshold = None
    plot_rater_agreement(table, set(excluded_raters(result.exclusions)), threshold,
                         out / "rater_agreement.png")
    return ["ratings_by_subset.png", "rater_agreement.png"]

