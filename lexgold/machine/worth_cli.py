"""``lexgold machine worth PILOT --machine FILE``: what a machine rater is worth on a pilot.

The pilot is read as ``lexgold replay`` reads a log (lexgold's long CSV or any published layout
``lexgold ratings import`` reads, compressed or not); the machine is a ratings file
(:func:`lexgold.machine.ratings.read_machine`) or word vectors' cosines
(:func:`lexgold.machine.ratings.vector_scores`). The statistics are
:mod:`lexgold.machine.worth` and :mod:`lexgold.machine.alttest`; this module reads, checks the
published datasets lexgold knows, and prints.
"""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import click

from lexgold.cliutil import FiniteRange, seed_option
from lexgold.ratings import LAYOUTS

#: shipped rating logs (lexgold.crowd.logs) -> the catalogue entry naming the dataset
SHIPPED_DATASETS = {"simverb": "simverb", "wordsim353": "wordsim353"}
#: gensim's test-data copies of published datasets (when gensim is installed) -> catalogue entry
GENSIM_DATASETS = {"simlex999.txt": "simlex999", "wordsim353.tsv": "wordsim353"}


def known_datasets() -> dict:
    """Published datasets' pairs lexgold has offline: the shipped logs' (SimVerb-3500,
    WordSim-353 set 1) and, with gensim installed, its copies of SimLex-999 and WordSim-353;
    each named as the gold-file catalogue names it, with its citation's year."""
    import importlib.util

    import pandas as pd

    from lexgold.crowd.logs import shipped_log
    from lexgold.evaluate.catalogue import load_catalogue
    from lexgold.evaluate.gold import read_gold

    entries = {entry.key: entry for entry in load_catalogue()}
    found: dict = {}
    for log, key in SHIPPED_DATASETS.items():
        frame, _ = shipped_log(log)
        found.setdefault(_name(entries[key]), []).append(frame[["word1", "word2"]])
    spec = importlib.util.find_spec("gensim")
    if spec is not None and spec.origin:
        folder = Path(spec.origin).parent / "test" / "test_data"
        for file, key in GENSIM_DATASETS.items():
            if (folder / file).is_file():
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    pairs = read_gold(folder / file)[["word1", "word2"]]
                found.setdefault(_name(entries[key]), []).append(pairs)
    return {name: pd.concat(parts, ignore_index=True) for name, parts in found.items()}


def _name(entry) -> str:
    """``SimVerb-3500 (Gerz et al. 2016)``: the catalogue's name with its citation's authors."""
    import re

    year = re.search(r"\((\d{4})\)", entry.citation)
    first = entry.citation.split(",")[0]
    return f"{entry.name} ({first} et al. {year.group(1)})" if year else entry.name


def read_labels(path):
    """A pairs file (:func:`lexgold.pairfiles.read_pair_table`) with its columns under
    lexgold's names (``word1, word2``, lower-case ``pos``, ``relation``, ``kind``)."""
    from lexgold.errors import InputError
    from lexgold.pairfiles import PAIR_COLUMN_ALIASES, read_pair_table

    table = read_pair_table(path)
    table = table.rename(columns=lambda name: PAIR_COLUMN_ALIASES.get(name, name.lower()))
    if not {"word1", "word2"} <= set(table.columns):
        raise InputError(f"no word1/word2 columns (columns: {', '.join(table.columns)})",
                         path=path)
    return table


@click.command()
@click.argument("pilot", type=click.Path(exists=True, dir_okay=False))
@click.option("--machine", "machine_path", type=click.Path(exists=True, dir_okay=False),
              help="The machine's ratings: a CSV of word1, word2 and a number (its provenance "
                   "in FILE.json beside it).")
@click.option("--column", default=None,
              help="The machine's column in --machine (default: the one numeric column).")
@click.option("--vectors", type=click.Path(exists=True, dir_okay=False),
              help="Word vectors as the machine: the cosine of each pair (instead of "
                   "--machine).")
@click.option("--layout", type=click.Choice(LAYOUTS), default=None,
              help="The layout of PILOT (default: recognised from its first line).")
@click.option("--pairs", "pairs_path", type=click.Path(exists=True, dir_okay=False),
              help="A pairs file whose pos and relation (or kind) columns group the errors.")
@click.option("--pool", type=click.IntRange(min=1), default=5, show_default=True,
              help="The most human ratings a mean is made of (k = 1 .. pool); each pair's "
                   "other ratings are its held-out reference.")
@click.option("--splits", type=click.IntRange(1, 10_000), default=40, show_default=True,
              help="Random splits of each pair's ratings into pool and reference (at most "
                   "10,000).")
@click.option("--bands", type=click.IntRange(min=2), default=3, show_default=True,
              help="Score bands of the errors: human-mean quantiles (3 terciles, 5 quintiles).")
@click.option("--top", type=click.IntRange(min=0), default=10, show_default=True,
              help="The misjudged pairs listed.")
@click.option("--epsilon", type=FiniteRange(0, 1), default=0.2, show_default=True,
              help="The alternative annotator test's margin (Calderon et al. 2025).")
@click.option("--alignment", type=click.Choice(["rmse", "ae"]), default="rmse",
              show_default=True,
              help="The test's alignment with the other raters: -RMSE against their ratings "
                   "(the paper's) or -|error| against their mean.")
@seed_option
@click.option("--json", "as_json", is_flag=True, help="Print the figures as one JSON object.")
def worth(pilot, machine_path, column, vectors, layout, pairs_path, pool, splits, bands, top,
          epsilon, alignment, seed, as_json):
    """What a machine rater is worth on a pilot of human ratings.

    The number of human ratings it equals (Spearman and calibrated MAE against each pair's
    held-out human mean, over random splits), its calibration to the human scale, where it errs
    (part of speech, relation, score band; the pairs it misjudges most), the alternative
    annotator test where raters are identified, and a note when the pairs are a published
    dataset's (docs/machine.md).

    \b
    Example:
        lexgold machine worth SimVerb-3500-ratings.txt --machine simverb_gpt-4.dev.csv
    """
    import numpy as np

    from lexgold.crowd.model import anonymous_ids
    from lexgold.errors import InputError
    from lexgold.machine.ratings import read_machine, vector_scores
    from lexgold.machine.worth import machine_worth
    from lexgold.crowd.logs import read_log

    if (machine_path is None) == (vectors is None):
        raise InputError("give one machine: --machine FILE or --vectors FILE",
                         field="--machine")
    if column is not None and machine_path is None:
        raise InputError("--column names a column of --machine", field="--column")
    ratings = read_log(pilot, layout)
    if machine_path is not None:
        machine = read_machine(machine_path, column=column)
    else:
        machine = vector_scores(vectors, ratings[["word1", "word2"]].drop_duplicates())
    labels = read_labels(pairs_path) if pairs_path else None
    identified = not anonymous_ids(ratings["rater_id"]).any()
    result = machine_worth(ratings, machine, pool=pool, splits=splits, bands=bands, top=top,
                           rng=np.random.default_rng(seed), labels=labels,
                           identified=identified, epsilon=epsilon, alignment=alignment,
                           known=known_datasets())
    result = {"pilot": Path(pilot).name, "ratings": int(len(ratings)),
              "raters": int(ratings["rater_id"].nunique()) if identified else "anonymous",
              "machine": machine.attrs.get("provenance", {}),
              "machine_column": machine.attrs.get("column"), "seed": seed, **result}
    if as_json:
        click.echo(json.dumps(_finite(result), indent=2))
        return
    for line in worth_summary_lines(result):
        click.echo(line)


def _finite(value):
    """JSON has no inf or NaN: ``null`` for both (``more_than_pool`` says which ``null`` of a
    worth is past the pool)."""
    if isinstance(value, dict):
        out = {key: _finite(item) for key, item in value.items()}
        if {"median", "low", "high"} <= set(value):
            out["more_than_pool"] = value["median"] == math.inf
        return out
    if isinstance(value, list):
        return [_finite(item) for item in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _ratings(worth: dict, pool: int) -> str:
    median, low, high = worth["median"], worth["low"], worth["high"]
    if math.isnan(median):
        return "undefined"

    def one(value):
        return f"> {pool}" if value == math.inf else f"{value:.2f}"
    return f"{one(median)} ratings [{one(low)}, {one(high)}]"


def worth_summary_lines(result: dict) -> list[str]:
    """The human-readable summary of :func:`worth`'s result."""
    model = result["machine"].get("model") or "model unknown"
    raters = result["raters"]
    worth = result["worth"]
    pool = worth["pool"]
    lines = [f"{result['pilot']}: {result['pairs']} pairs, {result['ratings']} ratings, "
             f"{'anonymous raters' if raters == 'anonymous' else f'{raters} identified raters'}"
             f"; machine {result['machine'].get('file', '?')} ({model}"
             + (f", column {result['machine_column']}" if result["machine_column"] else "")
             + f"): {result['covered']} pairs scored "
             f"({100 * result['covered'] / result['pairs']:.1f} %)",
             f"worth in human ratings: {worth['pairs']} pairs with more than {pool} ratings, "
             f"{worth['splits']} splits, reference = each pair's other ratings; median "
             f"[95 % of splits]"]
    curve = ", ".join(f"{row['k']}: {row['spearman']:.3f}" for row in worth["human"])
    lines.append(f"  equal Spearman: {_ratings(worth['ratings_spearman'], pool)} "
                 f"(machine {worth['machine_spearman']:.3f}; k human ratings {curve})")
    curve = ", ".join(f"{row['k']}: {row['mae']:.3f}" for row in worth["human"])
    lines.append(f"  equal MAE:      {_ratings(worth['ratings_mae'], pool)} "
                 f"(machine {worth['machine_mae']:.3f} calibrated; 0: "
                 f"{worth['constant_mae']:.3f}, {curve})")
    fit = result["calibration"]
    sign = "-" if fit["intercept"] < 0 else "+"
    lines.append(f"calibration: human = {fit['slope']:.4g} x machine {sign} "
                 f"{abs(fit['intercept']):.4g}, "
                 f"R^2 {fit['r2']:.3f} ({fit['pairs']} pairs; machine seen "
                 f"{fit['machine_scale'][0]:g} to {fit['machine_scale'][1]:g}, human means "
                 f"{fit['human_scale'][0]:g} to {fit['human_scale'][1]:g})")
    titles = {"pos": "part of speech", "relation": "relation",
              "band": "score band (human-mean quantiles)"}
    for name, table in result["errors"].items():
        lines.append(f"errors by {titles[name]}: pairs, Spearman, MAE, bias (human - "
                     "calibrated machine)")
        for row in table:
            lines.append(f"  {row['group']:<22}{row['pairs']:>6}  {row['spearman']:>7.3f}  "
                         f"{row['mae']:>6.3f}  {row['bias']:>+7.3f}")
    if result["misjudged"]:
        lines.append("misjudged most: human mean, machine (calibrated), residual")
        for row in result["misjudged"]:
            pair = f"{row['word1']}-{row['word2']}"
            lines.append(f"  {pair:<28}{row['human']:>6.2f}  {row['machine']:>8.4g} "
                         f"({row['calibrated']:.2f})  {row['residual']:+.2f}")
    lines.extend(_test_lines(result["alternative_annotator_test"]))
    for row in result["published"]:
        lines.append(f"note: {row['pairs']} of the {result['covered']} pairs scored "
                     f"({100 * row['share']:.0f} %) are published in {row['dataset']}: a "
                     "model trained on web text may have seen them (an LLM, their published "
                     "scores too); its worth here may not carry to new pairs")
    return lines


def _test_lines(test: dict | None) -> list[str]:
    if test is None:
        return ["alternative annotator test: not run (the raters are anonymous)"]
    won = sum(row["won"] for row in test["raters"])
    lines = [f"alternative annotator test (Calderon, Reichart & Dror 2025; epsilon "
             f"{test['epsilon']:g}, alignment -{test['alignment'].upper()}, Benjamini-"
             f"Yekutieli q {test['q']:g}): winning rate {test['omega']:.2f} ({won} of "
             f"{len(test['raters'])} raters), advantage probability {test['rho']:.3f}: "
             + ("passes (>= 0.5)" if test["passed"] else "fails (< 0.5)"),
             "  rater                 pairs  rho machine  rho human  p adjusted  won"]
    for row in test["raters"]:
        lines.append(f"  {row['rater']:<22}{row['pairs']:>5}  {row['rho_machine']:>11.3f}  "
                     f"{row['rho_human']:>9.3f}  {row['p_adjusted']:>10.4f}  "
                     f"{'yes' if row['won'] else 'no'}")
    if test["left_out"]:
        lines.append(f"  left out (fewer than 2 pairs): {', '.join(test['left_out'])}")
    return lines
