"""The human-readable report of a run: ``report.md`` with two matplotlib plots.

- ``ratings_by_subset.png``: distribution of the released scores per subset (POS by default);
- ``rater_agreement.png``: each rater's mean pairwise Spearman (SimLex rule a) with the
  exclusion threshold marked and excluded raters in another colour.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd

from lexgold.process.markdown import code, text
from lexgold.process.publish import beyond_iaa_lines, protocol_shown
from lexgold.process.run_report import ProcessReport
from lexgold.process.machine_mode import card_lines
from lexgold.process.simulated_label import banner


def _pyplot():
    """matplotlib's pyplot on the Agg backend, imported when a plot is drawn (not for
    ``--no-plots``: it costs about a second of start-up on a busy machine)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_scores_by_subset(scores: pd.DataFrame, subset: str, path: Path,
                          score_range: tuple[float, float]) -> None:
    """Histogram of released scores, one panel per subset value."""
    plt = _pyplot()
    groups = sorted(scores[subset].fillna("").astype(str).unique()) if subset in scores else [""]
    figure, axes = plt.subplots(1, len(groups), figsize=(3.2 * len(groups) + 1, 2.8),
                                squeeze=False, sharey=True)
    for axis, label in zip(axes[0], groups):
        part = scores if subset not in scores else scores[scores[subset].fillna("") == label]
        axis.hist(part["score"].dropna(), bins=12, range=score_range, color="#4477aa")
        axis.set_title(f"{subset} = {label} ({len(part)} pairs)" if label else
                       f"all ({len(part)} pairs)", fontsize=9)
        axis.set_xlabel("score")
    axes[0][0].set_ylabel("pairs")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


def plot_rater_agreement(agreement: pd.DataFrame, excluded: set, threshold: float | None,
                         path: Path) -> None:
    """Each rater's mean pairwise Spearman, sorted, with the rule-(a) threshold marked."""
    table = agreement.dropna(subset=["mean_rho"]).sort_values("mean_rho").reset_index(drop=True)
    plt = _pyplot()
    figure, axis = plt.subplots(figsize=(7, 3))
    out = table["rater_id"].isin(excluded).to_numpy()
    axis.scatter(table.index[~out], table["mean_rho"][~out], s=6, c="#4477aa", label="kept")
    axis.scatter(table.index[out], table["mean_rho"][out], s=8, c="#cc3311", label="excluded")
    if threshold is not None and not math.isnan(threshold):
        axis.axhline(threshold, color="#cc3311", linestyle="--", linewidth=1,
                     label=f"rule (a) threshold {threshold:.3f}")
    axis.legend(loc="lower right", fontsize=8)
    axis.set_xlabel("raters, sorted by mean pairwise Spearman")
    axis.set_ylabel("mean pairwise Spearman")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


def _fmt(value) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def _fmt_p(value) -> str:
    """A p-value: two significant digits (1.2e-08), n/a when undefined."""
    return "n/a" if value is None or math.isnan(value) else f"{value:.2g}"


def _interval(row: dict, name: str) -> str:
    if row.get(f"{name}_low") is None:
        return ""
    return f" ({_fmt(row[f'{name}_low'])}-{_fmt(row[f'{name}_high'])})"


def write_markdown(report: ProcessReport, gold: pd.DataFrame, path: Path,
                   images: list[str]) -> None:
    """``report.md``: counts per stage, agreement figures, exclusions, plots, gold head."""
    agreement, counts = report.agreement, report.counts
    lines = [*(banner(report.simulated) if report.simulated else []),
             f"# {text(report.protocol)} gold standard: post-processing report", "",
             f"Protocol {protocol_shown(report.protocol_file)} "
             f"(sha256 {text(report.protocol_sha256[:12])}).", ""]
    if report.release_file:
        lines += [f"Release file {code(report.release_file)} (the published layout); `gold.csv` "
                  "holds the same table, comma-separated; `README.md` is the dataset card.", ""]
    for problem in report.warnings:
        lines += [f"**Warning: incomplete release:** {text(problem)}.", ""]
    lines += card_lines(report.machine)      # lexgold.process.machine_mode
    lines += ["## Counts per stage", "", "| stage | raters | ratings | pairs |",
             "| --- | --- | --- | --- |"]
    for stage, row in counts.stages.items():
        lines.append(f"| {text(stage)} | {row.raters} | {row.ratings} | {row.pairs} |")
    lines += ["", f"Calibrated raters: {counts.calibrated_raters}. Excluded raters: "
              f"{counts.excluded_raters} ({text(json.dumps(counts.excluded_by_rule))}).", "",
              "## Agreement (Spearman)", "", "| stage | IAA-1 | IAA-2 |", "| --- | --- | --- |"]
    for stage in ("raw", "calibrated", "final"):
        lines.append(f"| {stage} | {_fmt(agreement[stage]['iaa1'])} | "
                     f"{_fmt(agreement[stage]['iaa2'])} |")
    final = agreement["final"]
    if final.get("iaa1_ci"):
        level = agreement["ci_level"]
        lines += ["", f"{level:.0%} bootstrap intervals over pairs ({agreement['bootstrap']} "
                  f"replicates): IAA-1 {_fmt(final['iaa1_ci'][0])}-{_fmt(final['iaa1_ci'][1])}, "
                  f"IAA-2 {_fmt(final['iaa2_ci'][0])}-{_fmt(final['iaa2_ci'][1])}."]
    if agreement.get("beyond_iaa"):
        lines += ["", *beyond_iaa_lines(agreement["beyond_iaa"])[:-1]]
    for name, rows in agreement.get("by_subset", {}).items():
        lines += ["", f"### By {text(name)}", "", "| subset | IAA-1 | IAA-2 | raters | pairs |",
                  "| --- | --- | --- | --- | --- |"]
        lines += [f"| {text(r['subset'])} | {_fmt(r['iaa1'])}{_interval(r, 'iaa1')} | "
                  f"{_fmt(r['iaa2'])}{_interval(r, 'iaa2')} | {r['raters']} | {r['pairs']} |"
                  for r in rows]
    if "weighted_by_pairs" in agreement:
        weighted = agreement["weighted_by_pairs"]
        lines += ["", f"Per tranche, weighted by pairs (a pair listed twice kept as two items): "
                  f"IAA-1 {_fmt(weighted['iaa1'])}, IAA-2 {_fmt(weighted['iaa2'])}."]
    if "split_half_random" in agreement:
        half = agreement["split_half_random"]
        lines += ["", f"{text(agreement['note'])}. Split-half on random halves ({half['splits']} "
                  f"splits, {half['pairs']} pairs): r {_fmt(half['r'])}, rho {_fmt(half['rho'])}"
                  f", Spearman-Brown {_fmt(half['spearman_brown'])}."]
    scale = report.scale
    if scale:
        lines += ["", f"Rating scale {scale['ratings'][0]:g}-{scale['ratings'][1]:g}, released "
                  f"on {scale['released'][0]:g}-{scale['released'][1]:g}"
                  + "".join(f"; ratings declared on {a:g}-{b:g} rescaled linearly"
                            for a, b in scale["rescaled"]) + "."]
    aggregate = report.aggregate or {"rule": "mean"}
    if aggregate["rule"] != "mean":
        lines += ["", f"Pair scores (`[process] aggregate = \"{text(aggregate['rule'])}\"`): "
                  f"{text(aggregate.get('note') or aggregate['description'])}."]
    if report.split_half:
        half = report.split_half
        lines += ["", "## Split-half (TR9856 section 4)", "",
                  f"Mean Pearson over {half['splits']} splits: {_fmt(half['r'])} "
                  f"(Spearman-Brown {_fmt(half['spearman_brown'])}) on {half['pairs']} pairs."]
    if report.transitivity:
        chain = report.transitivity
        lines += ["", f"Transitivity: Spearman(R2, |R3-R1|) = {_fmt(chain['spearman'])} (p = "
                  f"{_fmt_p(chain.get('spearman_p'))}) over {chain['points']} triplet points."]
    lines += ["", "## Plots", ""] + [f"![{text(name)}]({text(name)})" for name in images]
    lines += ["", "## Gold standard (first rows)", "", _head(gold)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _head(gold: pd.DataFrame) -> str:
    """The first rows of the gold standard as a Markdown table, every cell escaped."""
    head = gold.head(10).copy()
    for column in head.columns:
        missing = head[column].isna()
        if missing.any() or not pd.api.types.is_numeric_dtype(head[column]):
            # a missing value (a language pack without norms) is an empty cell, never "nan"
            head[column] = [("" if gone else text(value))
                            for value, gone in zip(head[column].tolist(), missing)]
    head.columns = [text(column) for column in head.columns]
    if _has_tabulate():
        return head.to_markdown(index=False)
    rows = [list(head.columns), ["---"] * len(head.columns)] + head.astype(str).values.tolist()
    return "\n".join("| " + " | ".join(row) + " |" for row in rows)


def _has_tabulate() -> bool:
    try:
        import tabulate  # noqa: F401
    except ImportError:
        return False
    return True
