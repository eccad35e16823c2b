"""Output of ``lexgold evaluate`` (the I/O edge): one model, several --vectors, --gold-dir.

The figures come from :func:`lexgold.evaluate.report.evaluate_gold_files` (several models:
:mod:`lexgold.evaluate.models`); this module prints them: per gold file the correlations of one
model, or one row per model and Steiger's test between each two, or with ``--gold-dir`` one
table over every gold file of the folder (:func:`lexgold.evaluate.catalogue.scan_folder`; rows:
data sets; columns: models), as word-embeddings-benchmarks' ``evaluate_on_all`` does.
"""

from __future__ import annotations

import json
import math
import warnings

import click
import numpy as np
import pandas as pd

from lexgold.errors import InputError
from lexgold.evaluate.catalogue import IN_RELEASE, NOT_DATA, NOT_PAIRS, TOO_LARGE, scan_folder
from lexgold.evaluate.report import evaluate_gold_files
from lexgold.evaluate.wordpairs import worst_pairs


def clean_json(value):
    """JSON-safe copy: NaN and infinities become null, numpy numbers Python numbers."""
    if isinstance(value, dict):
        return {k: clean_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean_json(v) for v in value]
    if isinstance(value, (float, np.floating)):
        return None if not math.isfinite(value) else float(value)
    if isinstance(value, np.integer):
        return int(value)
    return value


def fmt(value) -> str:
    """A correlation with 4 decimals; ``nan`` when undefined."""
    return "nan" if value is None or not math.isfinite(value) else f"{value:.4f}"


def run_gold_files(golds, vectors, **options) -> list:
    """:func:`lexgold.evaluate.report.evaluate_gold_files` (``options`` passed on), its
    warnings (those of a gold built with a model evaluated here too, also kept in the JSON's
    ``warnings``) and each gold file's notes echoed on stderr. The runs of one model and of
    several."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UserWarning)
        runs = evaluate_gold_files(golds, vectors, **options)
    for warning in caught:
        click.echo(f"Warning: {warning.message}", err=True)
    for run in runs:
        for message in (run.result or {}).get("warnings", []):
            click.echo(f"Warning: {message}", err=True)
    for run in runs:
        for note in run.notes:
            click.echo(f"Note: {run.path}: {note}", err=True)
    return runs


def json_item(run) -> dict:
    """A run's JSON: its result (NaN as null), or ``gold`` and ``error`` of a failed file."""
    return clean_json(run.result) if run.error is None else {"gold": run.path, "error": run.error}


def echo_runs(runs, *, as_json: bool, show=None, item=json_item, one: bool = True) -> None:
    """Print what ``lexgold evaluate`` found for each gold file, then an ``Error:`` line on
    stderr per gold file that failed, and exit with status 1 if one did.

    With ``as_json`` a JSON list of ``item(run)`` (a lone object when ``one`` and there is
    one run); otherwise ``show(result)`` for each evaluated file, a blank line between
    (nothing when ``show`` is None: the caller printed a table). One model's output and
    several models' come through here."""
    if as_json:
        results = [item(run) for run in runs]
        click.echo(json.dumps(results[0] if one and len(results) == 1 else results, indent=2))
    elif show is not None:
        for number, run in enumerate(run for run in runs if run.error is None):
            if number:
                click.echo("")
            show(run.result)
    failed = [run for run in runs if run.error is not None]
    for run in failed:
        click.echo(f"Error: {run.error}", err=True)
    if failed:
        raise SystemExit(1)


def evaluate_one_model(golds, vectors, *, oov: str, case: str, per_pair, as_json: bool,
                       **options) -> None:
    """Run and print ``lexgold evaluate`` for one model (``options``: those of
    :func:`lexgold.evaluate.report.evaluate_gold_files`). A lone gold file that fails is a
    one-line error; with several, the others are printed and the exit status is 1."""
    runs = run_gold_files(golds, vectors, case=case, oov=oov, **options)
    done = [run for run in runs if run.error is None]
    if len(runs) == 1 and not done:
        raise click.ClickException(runs[0].error)
    if per_pair and done:
        tables = [worst_pairs(run.scores) for run in done]
        if len(runs) > 1:
            tables = [t.assign(gold_file=run.path)[["gold_file", *t.columns]]
                      for t, run in zip(tables, done)]
        pd.concat(tables).to_csv(per_pair, index=False)
    echo_runs(runs, as_json=as_json, show=lambda result: print_evaluation(result, oov, case))


def print_evaluation(result: dict, oov: str, case: str) -> None:
    """One model on one gold file: coverage, correlations with CIs, subsets, binary task,
    Steiger's test against ``--compare``."""
    click.echo(f"{result['gold']} ({result['format']}) vs {result[result['kind']]}"
               + (f" (scores: column {result['scores_column']})"
                  if result["kind"] == "scores" else ""))
    click.echo(f"pairs {result['pairs']}, covered {result['covered']}, used {result['used']} "
               + (f"(case={case})" if result["kind"] == "scores" else f"(oov={oov}, case={case})"))
    ci = result.get("ci", {})
    for name in ("spearman", "pearson"):
        bounds = ci.get(name)
        extra = f"  95% CI [{fmt(bounds[0])}, {fmt(bounds[1])}]" if bounds else ""
        click.echo(f"{name:9s} {fmt(result[name])}{extra}")
    for name, sub in result["subsets"].items():
        bounds = sub.get("ci", {}).get("spearman")
        extra = f"  CI [{fmt(bounds[0])}, {fmt(bounds[1])}]" if bounds else ""
        click.echo(f"  {name:22s} rho {fmt(sub['spearman'])}{extra}  r {fmt(sub['pearson'])}"
                   f"  covered {sub['covered']}/{sub['pairs']}")
    if "binary" in result:
        b = result["binary"]
        click.echo(f"binary task: mean error {fmt(b['error'])} over {b['folds']} folds "
                   f"({b['positives']} related, {b['negatives']} unrelated)")
    if "compare" in result:
        for name in ("spearman", "pearson"):
            c = result["compare"][name]
            click.echo(f"Steiger {name}: {fmt(c['first'])} vs {fmt(c['second'])}, "
                       f"z {fmt(c['z'])}, p {fmt(c['p'])} on {result['compare']['used']} pairs")


def gold_dir_files(gold_dir, golds) -> list:
    """The gold files of ``gold_dir`` (:func:`lexgold.evaluate.catalogue.scan_folder`): a
    warning per modified copy and one note counting the ignored files by reason on stderr;
    an error when the folder holds none and no --gold is given."""
    known, ignored = scan_folder(gold_dir)
    for match in known:
        if match.verdict == "modified":
            expected = (match.entry.sha256[match.file] if match.entry is not None
                        else match.release["expected_sha256"])
            what = (f"{match.entry.name}'s {match.file}" if match.entry is not None
                    else f"the gold.csv of lexgold release {match.name!r} (its SHA256SUMS")
            click.echo(f"Warning: {match.path}: a modified copy of {what} (sha256 "
                       f"{match.sha256[:12]}, the "
                       f"{'catalogue' if match.entry is not None else 'release'}'s "
                       f"{expected[:12]})", err=True)
    if not known and not golds:
        raise InputError("no gold file in this folder"
                         + (f" ({ignored_summary(ignored)})" if ignored else ""),
                         path=gold_dir, field="--gold-dir")
    if ignored:
        click.echo(f"Note: {gold_dir}: {ignored_summary(ignored)}", err=True)
    return known


def ignored_summary(ignored) -> str:
    """One line counting ignored files by reason; files that are not word pairs are named
    (the first three), as they may be gold files the reader missed."""
    reasons: dict[str, list] = {IN_RELEASE: [], NOT_DATA: [], TOO_LARGE: [], NOT_PAIRS: []}
    for item in ignored:
        reasons.setdefault(item.reason.split(":", 1)[0], []).append(item)
    parts = []
    for reason, items in reasons.items():
        if not items:
            continue
        part = f"{len(items)} {reason}"
        if reason == NOT_PAIRS:
            shown = "; ".join(f"{i.path.name}: {i.reason.split(': ', 1)[1]}" for i in items[:3])
            part += f" ({shown}{'; ...' if len(items) > 3 else ''})"
        parts.append(part)
    count = len(ignored)
    return f"{count} file{'s' if count > 1 else ''} not evaluated: {', '.join(parts)}"


def evaluate_several(golds, vectors, known, *, gold_format, language, case, vectors_format,
                     common_vocabulary, oov, n_boot, compare, binary, per_pair, seed,
                     as_json, strip_language_prefix=None, duplicates="first",
                     alternatives="first", scores=(), scores_column=None,
                     gold_column=None) -> None:
    """Run and print ``lexgold evaluate`` for several models or a --gold-dir folder.

    ``known``: the :class:`lexgold.evaluate.catalogue.Match` of each --gold-dir file (empty
    without --gold-dir): catalogue, lexgold release or file read as is. ``vectors`` and
    ``scores``: the models' files (vector files, then score files). Exits with status 1 when
    a gold file fails (the others are printed).
    """
    models = [*vectors, *scores]
    several = len(models) > 1
    options = {"vectors_format": vectors_format, "case": case, "oov": oov, "n_boot": n_boot,
               "seed": seed, "binary": binary, "scores_column": scores_column,
               "gold_column": gold_column}
    if several:
        options.update(common_vocabulary=common_vocabulary, scores=list(scores))
    else:
        options.update(compare=compare, scores=scores[0] if scores else None)
    runs = run_gold_files(golds, list(vectors) if several else (vectors[0] if vectors else None),
                          gold_format=gold_format,
                          language=language, strip_language_prefix=strip_language_prefix,
                          duplicates=duplicates, alternatives=alternatives, **options)
    done = [run for run in runs if run.error is None]
    matches = {str(match.path): match for match in known}
    if per_pair and done:
        tables = []
        for run in done:
            frames = run.scores if several else [run.scores]
            for frame, path in zip(frames, models):
                if frame is not None:
                    table = worst_pairs(frame)
                    tables.append(table.assign(gold_file=run.path, model=path)[
                        ["gold_file", "model", *table.columns]])
        pd.concat(tables).to_csv(per_pair, index=False)

    def item(run) -> dict:
        found = json_item(run)
        if run.path in matches:
            match = matches[run.path]
            found["dataset"], found["source"] = match.name, match.source
            if match.entry is not None:
                found["catalogue"] = _catalogue_item(match)
            if match.release is not None:
                found["release"] = {**match.release, "checksum": match.verdict,
                                    "sha256": match.sha256}
        return found

    if known and not as_json:
        _print_table(runs, models, matches, several)
    printer = _print_models if several else print_evaluation
    echo_runs(runs, as_json=as_json, item=item, one=not known,
              show=None if known else lambda result: printer(result, oov, case))


def _catalogue_item(match) -> dict:
    entry = match.entry
    return {"name": entry.name, "file": match.file, "layout": entry.layout,
            "checksum": match.verdict, "sha256": match.sha256,
            "expected_sha256": entry.sha256.get(match.file), "citation": entry.citation,
            "licence": entry.licence or None, "url": entry.url}


def _print_models(result: dict, oov: str, case: str) -> None:
    """One gold file, several models: a row per model, then Steiger's test per two."""
    models = [m for m in result["models"] if m is not None]
    scope = (f"every model on the {result['covered_by_all']} pairs all cover"
             if result["common_vocabulary"] else "each model on its own coverage")
    click.echo(f"{result['gold']} ({result['format']}): {len(result['models'])} models, pairs "
               f"{result['pairs']}, covered by all {result['covered_by_all']} ({scope}; "
               f"oov={oov}, case={case})")
    width = max(len("model"), *(len(m[m["kind"]]) for m in models))
    click.echo(f"{'model':{width}s} {'covered':>11s} {'used':>6s} {'spearman':>9s} "
               f"{'pearson':>9s}  95% CI (spearman)")
    for m in models:
        bounds = m.get("ci", {}).get("spearman")
        ci = f"[{fmt(bounds[0])}, {fmt(bounds[1])}]" if bounds else ""
        click.echo(f"{m[m['kind']]:{width}s} {m['covered']:>5d}/{m['pairs']:<5d} "
                   f"{m['used']:>6d} {fmt(m['spearman']):>9s} {fmt(m['pearson']):>9s}  {ci}")
    if result["steiger"]:
        click.echo("Steiger's test (Steiger 1980; Spearman on the ranks), on the pairs both use:")
    for test in result["steiger"]:
        cells = "; ".join(f"{name} {fmt(test[name]['first'])} vs {fmt(test[name]['second'])}"
                          f", z {fmt(test[name]['z'])}, p {fmt(test[name]['p'])}"
                          for name in ("spearman", "pearson"))
        click.echo(f"  {test['first']} vs {test['second']} ({test['used']} pairs): {cells}")


def _print_table(runs, vectors, matches, several: bool) -> None:
    """--gold-dir: one row per gold file, one column per model (Spearman, pairs used)."""
    rows = []
    for run in runs:
        match = matches.get(run.path)
        name, check = (match.name, match.verdict or "-") if match else ("-", "-")
        if run.error is not None:
            cells = ["error"] * len(vectors)
            pairs = ""
        else:
            models = run.result["models"] if several else [run.result]
            cells = ["n/a" if m is None else f"{fmt(m['spearman'])} ({m['used']})"
                     for m in models]
            pairs = str(run.result["pairs"])
        rows.append([name, run.path, check, pairs, *cells])
    header = ["dataset", "file", "checksum", "pairs", *vectors]
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        click.echo("  ".join(f"{cell:{w}s}" if i < 3 else f"{cell:>{w}s}"
                             for i, (cell, w) in enumerate(zip(row, widths))).rstrip())
    common = any(run.error is None and run.result.get("common_vocabulary") for run in runs)
    click.echo("Cells: Spearman's rho (pairs used)." + (
        " --common-vocabulary: every model on the pairs all of them cover." if common else ""))
