"""``lexgold agree``, ``lexgold process`` and ``lexgold plan``."""

from __future__ import annotations

import json
from pathlib import Path

import click

from lexgold.cliutil import (
    FiniteRange,
    Stages,
    bootstrap_option,
    machine_options,
    out_option,
    protocol_option,
    quiet_option,
    refuse_links,
    scale_option,
    seed_option,
    usf_option,
)
from lexgold.errors import InputError
from lexgold.simulated import note as simulated_note


@click.command()
@click.argument("ratings", type=click.Path(exists=True, dir_okay=False))
@click.option("--json", "as_json", is_flag=True,
              help="JSON with keys iaa1, iaa2, raters, pairs, alpha_interval, alpha_ordinal, "
                   "icc1, icck, icc (form and 95 % intervals), aggregate_model (what "
                   "aggregate = model would save; with rater identity) (and split_half with "
                   "--split-half).")
@click.option("--detail", is_flag=True,
              help="JSON also gets shared_pairs (pairs rated by more than one rater) and "
                   "by_tranche (per-tranche IAA weighted by pairs).")
@click.option("--pool", type=click.Choice(["tranche", "all"]), default="tranche",
              show_default=True,
              help="tranche: raters compared within their tranche; all: on any shared pairs.")
@click.option("--min-overlap", type=click.IntRange(min=2), default=10, show_default=True,
              help="Fewest shared pairs for a correlation.")
@click.option("--split-half", is_flag=True,
              help="Also split-half reliability on random halves of each pair's ratings "
                   "(the only figure for ratings without rater identity).")
@click.option("--splits", type=click.IntRange(1, 10_000), default=100, show_default=True,
              help="Random splits for --split-half (at most 10,000).")
@seed_option
def agree(ratings, as_json, detail, pool, min_overlap, split_half, splits, seed):
    """Print IAA-1 and IAA-2 of a long-format ratings file.

    IAA-1 is the mean pairwise Spearman rho between raters; IAA-2 the mean Spearman rho of each
    rater against the mean of the other raters (HyperLex section 5). Checkpoint rows are
    ignored; no calibration or exclusion is applied (see `lexgold process`). An undefined
    figure (one rater, constant ratings) prints as n/a (null in JSON). Next to these pooled
    figures: the per-tranche figures weighted by each tranche's listed pairs, a pair listed
    twice kept as two items (how WordSim-353's 0.611 / 0.756 were aggregated), and the number
    of pairs rated by more than one rater. Ratings without rater identity (SimVerb-3500) have
    no IAA: use --split-half. Beyond IAA: Krippendorff's alpha (interval and ordinal; pairs
    with two or more ratings, rater identity not needed) and the ICC, two-way random, absolute
    agreement: ICC(2,1) for one rater, ICC(2,k) for the mean of a tranche's k raters, with 95 %
    intervals, on each tranche's raters and pairs that form a complete block
    (docs/process.md).

    \b
    Example:
        lexgold agree ratings.csv --json
    """
    from lexgold.process.agree_figures import agree_file, agree_summary_lines, summary_json

    result, anonymous, messages = agree_file(ratings, pool=pool, min_overlap=min_overlap,
                                             splits=splits if split_half else 0, seed=seed)
    if result.get("simulated"):           # lexgold.simulated: a rehearsal's or simulate's
        click.echo(simulated_note("these ratings are"), err=True)
    for message in messages:
        click.echo(f"Warning: {message}", err=True)
    lines = [summary_json(result, detail)] if as_json else agree_summary_lines(result, anonymous)
    for line in lines:
        click.echo(line)


@click.command()
@click.argument("ratings", metavar="STUDY_OR_RATINGS")
@protocol_option("Default: the study's own; needed for ratings that come without a study "
                 "(plain: the mean per pair on the declared scale, gold.csv word1,word2,score).")
@out_option
@click.option("--pairs", "pairs_path", type=click.Path(exists=True, dir_okay=False),
              help="For ratings from elsewhere: the builder's pairs.csv (POS, concreteness "
                   "conc1, conc2, fsg, relation, topic of each pair for gold.csv and per-subset "
                   "agreement; every pair must be released). A study brings its own pairs.")
@usf_option
@seed_option
@bootstrap_option("bootstrap", None,
                  "Bootstrap replicates for the confidence intervals (0: none); default: "
                  "the protocol's [process.agreement] bootstrap (200).")
@click.option("--aggregate", type=click.Choice(["mean", "model", "trimmed_1sd"]), default=None,
              help="A pair's score from its ratings: the mean (the papers'), a rater model "
                   "(bias and noise per rater, ITU-T P.913; needs rater identity) or the mean "
                   "within one SD of the mean (Rare Words); default: the protocol's "
                   "[process] aggregate (mean).")
@machine_options("machine_path",
                 "A machine's ratings of the pairs (CSV: word1, word2 and a number; `lexgold "
                 "machine rate` writes one), spent as the declared mode (--machine-mode or "
                 "the protocol's [process] machine; docs/machine.md).")
@click.option("--machine-mode", type=click.Choice(["none", "allocate", "prior"]), default=None,
              help="The machine's part: prior (released scores are the empirical-Bayes "
                   "posterior of the human ratings and the calibrated machine; gold.csv keeps "
                   "human_score beside them), allocate (it chose where human ratings went: "
                   "scores stay human means), none; default: the protocol's [process] "
                   "machine.")
@click.option("--no-plots", is_flag=True, help="Skip the PNG plots of report.md.")
@scale_option("The scale of ratings that declare none (see `lexgold ratings import "
              "--scale`); they are mapped onto the protocol's scale.")
@click.option("--allow-incomplete", is_flag=True,
              help="Release even when no rater is left, a pair of the study (or of --pairs) "
                   "has no accepted rating, or a pair has fewer accepted raters than the "
                   "protocol's [process.release] min_raters_per_pair; the problems are printed "
                   "and recorded in report.json and README.md.")
@click.option("--release-version", default=None, metavar="MAJOR.MINOR.PATCH",
              help="The release's version (croissant.json, CITATION.cff); default: the "
                   "protocol's [process.release] version (1.0.0).")
@click.option("--date-published", default=None, metavar="YYYY-MM-DD",
              help="The publication date (croissant.json, CITATION.cff); default: the "
                   "protocol's [process.release] date_published, else the date of the last "
                   "rating.")
@quiet_option
def process(ratings, protocol, out_dir, pairs_path, usf_dir, seed, bootstrap, aggregate,
            machine_path, machine_column, machine_mode, no_plots, scale, allow_incomplete,
            release_version, date_published, quiet):
    """Turn raw ratings into a released gold standard with its reliability report.

    STUDY_OR_RATINGS is a study (its SQLite file or database URL: the ratings of every rater
    who finished a tranche, with the study's own pairs, protocol and language), an export of
    one (`lexgold study export` writes ratings.study.json beside the CSV, read from there), or
    a long-format ratings CSV from elsewhere (then --protocol, and --pairs if any).

    Calibrates, excludes raters, averages and rescales per pair, measures agreement, and
    writes to --out the release file in the published layout (SimLex-999.txt,
    hyperlex-all.txt or TR9856.txt), gold.csv (the same table, comma-separated),
    exclusions.csv, report.json, report.md (with plots), a dataset card (README.md),
    CITATION.cff, datapackage.json and SHA256SUMS; HyperLex also gets splits.csv. A Best-Worst
    Scaling protocol (--protocol simlex_bws) reads a BWS answers CSV and writes gold.csv
    (word1, word2, score), scores.csv, tuples.csv and the same card and metadata. An
    incomplete release (see --allow-incomplete) stops with an error naming every problem and
    writes nothing. A rating outside the protocol's scale is an error; a source's declared
    scale (--scale, or the scale_min/scale_max columns of `lexgold ratings import --scale`) is
    mapped linearly onto it. On a terminal, a bar on stderr names the stage running (--quiet:
    none).

    \b
    Example:
        lexgold process study.sqlite --out gold
        lexgold process ratings.csv --protocol simlex --pairs out/pairs.csv --out gold
        lexgold process rw.csv --protocol plain --aggregate trimmed_1sd --out rw-gold
    """
    from lexgold.process.pipeline import STAGES, run

    before = Path(out_dir, "SHA256SUMS").is_file()
    try:
        with Stages(STAGES, desc="process", quiet=quiet) as stages:
            report = run(ratings, protocol, out_dir, pairs_path=pairs_path, seed=seed,
                         usf_dir=usf_dir, plots=not no_plots, bootstrap=bootstrap,
                         scale=tuple(scale) if scale else None,
                         allow_incomplete=allow_incomplete, aggregate=aggregate,
                         machine=machine_path, machine_column=machine_column,
                         machine_mode=machine_mode, progress=stages,
                         release_keys={"version": release_version,
                                       "date_published": date_published})
    except InputError:
        raise                    # one line that names the input; nothing was written either
    except Exception:
        kept = "the previous release there is kept" if before else "no release folder made"
        click.echo(f"Note: nothing written to {out_dir} ({kept})", err=True)
        raise
    for line in report.notice_lines():
        click.echo(line, err=True)
    for line in report.summary_lines(out_dir):
        click.echo(line)


@click.command()
@click.argument("ratings", metavar="STUDY_OR_RATINGS")
@click.option("--target", type=FiniteRange(0, 1, min_open=True, max_open=True),
              default=0.9, show_default=True,
              help="Reliability wanted: the Spearman between the pair means of two "
                   "independent groups of raters.")
@click.option("--max-raters", type=click.IntRange(min=1, max=200), default=20,
              show_default=True, help="Largest number of raters per pair on the curve.")
@click.option("--pay-per-hour", type=FiniteRange(min=0), default=None,
              help="Pay per hour of rating, for the cost of the raters needed.")
@click.option("--seconds-per-pair", type=FiniteRange(min=0, min_open=True), default=None,
              help="Seconds a rater spends on a pair; default: measured from the ratings' "
                   "times (answered_at, server_ms).")
@click.option("--pairs", "n_pairs", type=click.IntRange(min=1), default=None,
              help="Pairs of the full study, for the cost; default: the pilot's pairs.")
@bootstrap_option("replicates", 200, "Bootstrap replicates for the interval (0: none).")
@click.option("--level", type=FiniteRange(0, 1, min_open=True, max_open=True),
              default=0.9, show_default=True, help="Coverage of the interval.")
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False), callback=refuse_links,
              metavar="FILE.png",
              help="Also draw the curve with its interval to this PNG.")
@machine_options("machine_path",
                 "A machine's ratings of the pairs (CSV: word1, word2 and a number): also "
                 "the curve with the machine as a prior, from its worth on this pilot "
                 "(approximate; docs/machine.md).")
@click.option("--json", "as_json", is_flag=True,
              help='JSON {"curve": [{"raters", "reliability", "low", "high"}, ...], '
                   '"raters_needed", "raters_needed_low", "details", "pilot", "method" (the '
                   'method chosen and why, both predictions), "aggregate_model", "too_small", '
                   '"cost", ...}.')
@quiet_option
@seed_option
def plan(ratings, target, max_raters, pay_per_hour, seconds_per_pair, n_pairs, replicates,
         level, plot_path, machine_path, machine_column, as_json, quiet, seed):
    """How many raters per pair? Plan a study from pilot ratings.

    STUDY_OR_RATINGS is a study (SQLite file or database URL), an export of one, or a
    long-format ratings CSV (`ratings import`, `simulate`; rater identity optional). For k = 1
    .. --max-raters raters per pair, prints the expected reliability of the gold scores (the
    Spearman between the pair means of two disjoint groups of k raters) with an interval, the
    expected width of a pair mean's 95 % CI (in points of the rating scale) and the expected
    IAA-2, the raters needed for --target, and the time and cost, and says when the pilot is
    too small to tell. The pilot is modelled (pair scores, each rater's bias, scale and noise,
    each pair's own spread) and studies of k raters are simulated from it; the model and
    Spearman-Brown are cross-validated on subsets of the pilot's raters and the nearer one is
    used, both printed; the interval is the spread of its predictions over those subsets
    (delete-d jackknife; a bootstrap over pairs and raters for a pilot too thin to
    cross-validate). With rater identity it also says what aggregate = "model" would save
    (docs/process.md, "How many raters?").

    \b
    Example:
        lexgold plan pilot.csv --target 0.9 --pay-per-hour 12 --plot curve.png
    """
    import numpy as np

    from lexgold.process.plan import plan_study, plan_summary_lines, plot_curve
    from lexgold.process.simulated_label import simulated_ratings
    from lexgold.process.source import read_source
    from lexgold.ratings.long import PLAN_COLUMNS

    source = read_source(ratings, columns=PLAN_COLUMNS)
    simulated = simulated_ratings(source.ratings)
    if simulated:                         # a rehearsal's raters: times and costs are a model's
        click.echo(simulated_note("the pilot's ratings are"), err=True)
    result = plan_study(source.ratings, rng=np.random.default_rng(seed), max_raters=max_raters,
                        target=target, replicates=replicates, level=level, pairs=n_pairs,
                        seconds=seconds_per_pair, pay_per_hour=pay_per_hour,
                        progress=False if quiet else None)
    if simulated:
        result["simulated"] = simulated   # the JSON and the cost line say so
    if machine_path:                      # lexgold.process.plan_machine
        from lexgold.machine.ratings import read_machine
        from lexgold.process.plan_machine import machine_curve, machine_lines

        machine = read_machine(machine_path, column=machine_column, option="--machine-column")
        result["machine"] = machine_curve(result, source.ratings, machine,
                                          rng=np.random.default_rng(seed))
    if plot_path:
        plot_curve(result, plot_path)
    if as_json:
        click.echo(json.dumps(result))
        return
    for line in plan_summary_lines(result):
        click.echo(line)
    if machine_path:
        for line in machine_lines(result["machine"], target):
            click.echo(line)
    if plot_path:
        click.echo(f"wrote {plot_path}")
