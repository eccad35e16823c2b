"""``lexgold process`` on Best-Worst Scaling answers: exclusions, scores, release folder.

Steps (scores and statistics: :mod:`lexgold.process.bws`):

1. read and check the answers (one row per pair of an answered tuple);
2. exclude raters by ``[process.bws] rules`` (failed check tuples, rushing, same position);
3. counting and Bradley-Terry scores of the accepted answers; the ``method`` one is released,
   mapped onto ``[process.release] score_min .. score_max``, with bootstrap intervals;
4. split-half reliability (Kiritchenko & Mohammad 2017) of the accepted answers;
5. release check: every pair of the pairs file scored, each in at least
   ``min_raters_per_pair`` accepted answers;
6. write ``gold.csv`` (the plain layout ``word1, word2, score``), ``scores.csv`` (both
   methods, counts, intervals), ``tuples.csv`` (every accepted answer: tuple, its pairs in the
   order shown, best, worst, so that others can rescore), ``exclusions.csv``, ``report.json``,
   the dataset card ``README.md``, ``CITATION.cff``, ``datapackage.json`` and ``SHA256SUMS``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from lexgold.errors import IncompleteRelease, InputError
from lexgold.process import bws
from lexgold.process.config import process_config
from lexgold.process.run_report import BwsCounts, BwsReport
from lexgold.process.croissant import write_croissant
from lexgold.process.publish import _resource, citation_cff, write_checksums
from lexgold.process.release import plain_table, read_release_pairs, round_half_up
from lexgold.process.simulated_label import banner, mark_gold, simulated_ratings, statement
from lexgold.process.source import RatingsSource, is_study, read_source
from lexgold.protocols import ProtocolError
from lexgold.study.config import load_study_config
from lexgold.tables import parser_error


#: what a simulated BWS row counts (:mod:`lexgold.process.simulated_label`): one answer to a tuple
ANSWERS = "Best-Worst answers"


def process_bws(answers: pd.DataFrame, protocol: dict, *, rng: np.random.Generator,
                pairs: pd.DataFrame | None = None, source=None) -> dict:
    """Steps 1-5 in memory; returns ``{"gold", "scores", "tuples", "exclusions", "report"}``
    (``report`` a :class:`~lexgold.process.run_report.BwsReport`)."""
    config = process_config(protocol)
    if config.aggregate != "mean":      # slider ratings only: BWS scores by [process.bws] method
        raise ProtocolError(protocol.get("_path", "<protocol>"), "process.aggregate",
                            "'mean' in a Best-Worst Scaling study (its scores: [process.bws] "
                            "method)", repr(config.aggregate))
    options, release = config.bws, config.release
    study = load_study_config(protocol)
    boot_rng, half_rng = rng.spawn(2)
    frame = bws.check_bws(answers, source=source)
    exclusions = bws.bws_exclusions(frame, options, study.bws.checkpoints)
    dropped = set(exclusions.loc[exclusions["excluded"], "rater_id"])
    final = frame[~frame["rater_id"].isin(dropped)]
    if final[final["kind"] != "checkpoint"].empty:
        raise InputError("no rater is left after the exclusions", path=source)
    counting = bws.counting_scores(final)
    bt = bws.bt_scores(final, alpha=options.bt_alpha)
    scores = counting.rename(columns={"score": "counting"}).merge(
        bt.rename(columns={"score": "bradley_terry"}), on=bws.ITEM)
    column = "counting" if options.method == "counting" else "bradley_terry"
    to_scale = bws.bws_release_scale(scores[column], options.method, release.score_min,
                                 release.score_max)
    scores["score"] = to_scale(scores[column])
    ci = bws.bootstrap_intervals(final, options.method, replicates=options.bootstrap,
                                 level=options.ci_level, rng=boot_rng, alpha=options.bt_alpha)
    ci = ci.assign(low=to_scale(ci["low"]), high=to_scale(ci["high"]))
    scores = scores.merge(ci, on=bws.ITEM)
    if pairs is not None:                 # the pairs file's order
        order = pairs.drop_duplicates(bws.ITEM)[bws.ITEM].reset_index(drop=True).reset_index()
        scores = scores.merge(order, on=bws.ITEM, how="left").sort_values(
            "index", kind="stable").drop(columns="index").reset_index(drop=True)
    if release.score_rounding == "mean-first":
        raise InputError("score_rounding = \"mean-first\" rounds a mean rating first; a "
                         "Best-Worst Scaling score is none: use \"half-up\"",
                         field="process.release.score_rounding")
    gold = scores[bws.ITEM].assign(score=round_half_up(scores["score"], release.decimals))
    problems = _release_check(scores, pairs, release.min_raters_per_pair)
    notes = bws.annotations(final)
    rated = notes[notes["kind"] != "checkpoint"]
    report = BwsReport(
        protocol=protocol.get("name", "?"), paper=protocol.get("paper", ""),
        protocol_sha256=protocol.get("_sha256", ""), method=options.method,
        score_range=[release.score_min, release.score_max],
        counts=BwsCounts(raters=int(frame["rater_id"].nunique()), raters_excluded=len(dropped),
                         raters_accepted=int(final["rater_id"].nunique()),
                         answers=len(rated), tuples=int(rated["tuple_id"].nunique()),
                         pairs=len(scores), answers_per_pair_min=int(scores["n"].min())),
        exclusion_reasons={r: int(exclusions["reasons"].str.contains(r).sum())
                           for r in options.rules},
        split_half=bws.bws_split_half(final, splits=options.split_half_splits, rng=half_rng),
        methods_spearman=float(scores[["counting", "bradley_terry"]].corr(
            method="spearman").iloc[0, 1]) if len(scores) > 2 else None,
        config=config, warnings=problems)
    return {"gold": gold, "scores": scores, "tuples": _tuple_answers(final),
            "exclusions": exclusions, "report": report}


def _release_check(scores, pairs, min_answers: int) -> list[str]:
    problems = []
    below = scores[scores["n"] < min_answers]
    if len(below):
        problems.append(f"{len(below)} of {len(scores)} pairs are in fewer than {min_answers} "
                        f"accepted answers, the protocol's min_raters_per_pair (fewest: "
                        f"{int(below['n'].min())})")
    if pairs is not None:
        wanted = pairs.drop_duplicates(bws.ITEM)[bws.ITEM]
        missing = wanted.merge(scores[bws.ITEM], how="left", indicator=True)
        missing = missing[missing["_merge"] == "left_only"]
        if len(missing):
            first = missing.iloc[0]
            problems.append(f"{len(missing)} of the {len(wanted)} pairs of the pairs file have "
                            f"no accepted answer (e.g. {first['word1']} / {first['word2']})")
    return problems


def _tuple_answers(final: pd.DataFrame) -> pd.DataFrame:
    """One row per accepted answer: ``rater_id, tranche, tuple_id, kind, pair0 .. pairN``
    (``word1 / word2`` in the order shown), ``best``, ``worst`` (0-based positions)."""
    rows = final.assign(pair=final["word1"] + " / " + final["word2"])
    wide = rows.pivot_table(index=bws.ANNOTATION, columns="position", values="pair",
                            aggfunc="first")
    wide.columns = [f"pair{int(c)}" for c in wide.columns]
    notes = bws.annotations(final).set_index(bws.ANNOTATION)
    out = notes[["tranche", "kind"]].join(wide).join(notes[["best", "worst"]])
    return out.reset_index()


def release_bws(ratings_path, protocol: dict, out_dir, *, pairs_path=None, seed: int = 0,
                bootstrap: int | None = None, allow_incomplete: bool = False,
                source: RatingsSource | None = None) -> BwsReport:
    """``lexgold process`` for a BWS protocol: read a BWS answers CSV (or the study ``source``,
    when the caller has read it), write the release folder (module docstring). Raises
    :class:`lexgold.errors.IncompleteRelease` when the release check finds a problem, unless
    ``allow_incomplete``."""
    study_pairs = None
    if source is not None or is_study(ratings_path):    # a study: its finished raters
        source = source or read_source(ratings_path)
        if "tuple_id" not in source.ratings.columns:
            raise InputError("not a Best-Worst Scaling study ([study] task is not 'bws')",
                             path=source.label, field="task")
        answers = source.ratings.astype({"rater_id": str, "tranche": str, "tuple_id": str})
        study_pairs = source.pairs
    else:
        try:
            answers = pd.read_csv(ratings_path, dtype={"rater_id": str, "tranche": str,
                                                       "tuple_id": str}, keep_default_na=False)
        except pd.errors.ParserError as err:
            raise parser_error(err, ratings_path) from None
        except (OSError, ValueError) as err:
            raise InputError(f"cannot read the answers: {err}", path=ratings_path) from None
    if bootstrap is not None:
        protocol.setdefault("process", {}).setdefault("bws", {})["bootstrap"] = bootstrap
    pairs = read_release_pairs(pairs_path) if pairs_path else study_pairs
    result = process_bws(answers, protocol, rng=np.random.default_rng(seed), pairs=pairs,
                         source=str(ratings_path))
    report = result["report"]
    report.simulated = simulated_ratings(answers.drop_duplicates(["rater_id", "tuple_id"])) or None
    if report.warnings and not allow_incomplete:
        raise IncompleteRelease(f"incomplete release: {'; '.join(report.warnings)}; nothing "
                                f"written (--allow-incomplete writes it anyway, with a warning)",
                                path=str(ratings_path))
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    release = report.config.release
    gold = mark_gold(plain_table(result["gold"], decimals=release.decimals,
                                 number_format=release.number_format,
                                 score_format=release.score_format), report.simulated)
    tables = {"gold.csv": gold, "scores.csv": result["scores"],
              "tuples.csv": result["tuples"],
              "exclusions.csv": result["exclusions"].rename(columns={"rater_id": "rater"})}
    for name, table in tables.items():
        table.to_csv(out / name, index=False, lineterminator="\n")
    report.seed, report.ratings_file = seed, Path(ratings_path).name
    report.pairs_file = Path(pairs_path).name if pairs_path else None
    report.files = [*tables, "report.json", "README.md", "CITATION.cff", "datapackage.json",
                    "croissant.json", "SHA256SUMS"]
    report.write_json(out / "report.json")
    (out / "README.md").write_text(bws_dataset_card(report), encoding="utf-8")
    (out / "CITATION.cff").write_text(citation_cff(report), encoding="utf-8")
    slug = report.protocol.lower().replace(" ", "-")
    package = {"name": f"{slug}-gold", "title": f"{report.protocol} gold standard",
               "profile": "tabular-data-package",
               "description": (statement(report.simulated, ANSWERS) + " " if report.simulated
                               else "")
                              + "Built with lexgold from Best-Worst Scaling answers; see README.md.",
               "resources": [_resource(out, name.removesuffix(".csv"), name,
                                       pd.read_csv(out / name, keep_default_na=False,
                                                   na_values=[""]))
                             for name in tables]}
    (out / "datapackage.json").write_text(json.dumps(package, indent=2, ensure_ascii=False)
                                          + "\n", encoding="utf-8")
    write_croissant(out, report, protocol)
    write_checksums(out, report.files)
    return report


def bws_dataset_card(report: BwsReport) -> str:
    """The dataset card of a BWS release (Hugging Face YAML header, then what the files hold)."""
    counts, half = report.counts, report.split_half
    low, high = report.score_range
    method = ("%best - %worst, Orme 2009" if report.method == "counting"
              else "Bradley-Terry")
    summary = (f"{counts.pairs} word pairs scored from {counts.answers} Best-Worst "
               f"answers to {counts.tuples} tuples by {counts.raters_accepted} accepted "
               f"raters ({counts.raters_excluded} excluded). Scores: {report.method} "
               f"({method}), mapped linearly onto {low:g}-{high:g}.")
    reliability = (f"Split-half reliability (Kiritchenko & Mohammad 2017: annotations of each "
                   f"tuple split at random in two halves, Spearman between the halves' "
                   f"counting scores, mean of {half['splits']} splits, no Spearman-Brown "
                   f"correction): {half['r']:.3f} (Spearman-Brown corrected: "
                   f"{half['spearman_brown']:.3f}).")
    files = [("gold.csv", "`word1, word2, score`: the gold standard"),
             ("scores.csv", ("per pair: answers `n`, times `best`/`worst`, `counting` "
                             "(-1..1), `bradley_terry` (log-strength), released `score`, "
                             "interval `low`-`high`")),
             ("tuples.csv", ("every accepted answer: tuple, its pairs as shown, `best`, "
                             "`worst` (0-based positions), to rescore")),
             ("exclusions.csv", "per rater: the exclusion figures and reasons"),
             ("report.json", "every figure of this run")]
    warning = ([f"**Warning:** incomplete release: {'; '.join(report.warnings)}.", ""]
               if report.warnings else [])
    simulated = report.simulated
    lines = ["---", "language:", "- en", "task_categories:", "- sentence-similarity",
             "tags:", "- word-similarity", "- best-worst-scaling",
             *(["- simulated"] if simulated else []), "---", "",
             *(banner(simulated, ANSWERS) if simulated else []),
             f"# {report.protocol} gold standard (Best-Worst Scaling, built with lexgold)",
             "", *warning, summary, "", reliability, "", "| file | holds |", "| --- | --- |",
             *[f"| `{name}` | {what} |" for name, what in files], "",
             f"Licence: {report.config.release.stated('license')}. Citation: see "
             "`CITATION.cff`, and cite the protocol's paper.", ""]
    return "\n".join(lines)
