"""The crowd's commands: ``lexgold crowd fit`` (the rater model, :mod:`lexgold.crowd.model`,
fitted to a real rating log), ``lexgold replay`` (what allocation and stopping policies save,
replayed on a real log: :mod:`lexgold.crowd.replay`) and ``lexgold simulate`` (simulated raters
answering a study laid out from a pair set: :mod:`lexgold.crowd.simulate`,
:mod:`lexgold.crowd.bws_simulate`).

Logs are read as ``lexgold ratings import`` reads them, compressed or not
(:func:`lexgold.crowd.logs.read_log`).
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import click

from lexgold.cliutil import (
    FiniteRange,
    beside,
    crowd_options,
    machine_options,
    out_file_option,
    protocol_option,
    refuse_links,
    scale_option,
    seed_option,
)
from lexgold.ratings import LAYOUTS

#: the budgets of the cost goals: ratings per pair
DEFAULT_K = (4.0, 5.0, 6.0)
#: the most simulated copies of a log ``crowd fit`` compares it with (each is the log's size)
MAX_REPLICATES = 100
#: the most random splits ``replay`` measures (a median over 100 is already steady)
MAX_SPLITS = 10_000


def _ks(ctx, param, value):
    try:
        ks = tuple(sorted({float(v) for v in value.split(",") if v.strip()}))
    except ValueError:
        raise click.BadParameter(f"expected numbers separated by commas, found {value!r}") \
            from None
    if not ks:
        raise click.BadParameter("no budget given")
    return ks


@click.command()
@click.argument("log", type=click.Path(exists=True, dir_okay=False))
@click.option("--layout", type=click.Choice(LAYOUTS), default=None,
              help="The layout of LOG (default: recognised from its first line).")
@click.option("--pool", type=click.IntRange(min=1), default=8, show_default=True,
              help="Ratings of each pair drawn into the budget pool per split; the rest are "
                   "its held-out reference (pairs with no more ratings are left out).")
@click.option("--k", "ks", default="4,5,6", show_default=True, callback=_ks,
              help="Budgets, ratings per pair, separated by commas (1 .. --pool).")
@click.option("--splits", type=click.IntRange(1, MAX_SPLITS), default=100, show_default=True,
              help=f"Random splits of each pair's ratings into pool and reference (at most "
                   f"{MAX_SPLITS:,}).")
@click.option("--policy", "policies", multiple=True,
              type=click.Choice(["misordering", "error", "rank+error", "halfwidth", "stopping",
                                 "oracle", "machine-prior", "machine-allocate",
                                 "machine-disagreement", "machine-allocate+prior"]),
              help="Policies to measure (repeat; default: all; the machine-* policies need "
                   "--machine or --machine-vectors).")
@click.option("--first-round", type=click.IntRange(min=1), default=3, show_default=True,
              help="Adaptive rules and stopping: ratings of every pair before any top-up (the "
                   "site's [study] first_round_raters).")
@click.option("--topup-raters", type=click.IntRange(min=1), default=2, show_default=True,
              help="Adaptive rules: ratings a topped-up pair gets per round (the site's [study] "
                   "topup_raters).")
@click.option("--estimator", default="mean", show_default=True,
              help="Estimator of a pair's score (lexgold.crowd.replay.ESTIMATORS).")
@machine_options("machine_file",
                 "A machine's ratings of the pairs (CSV: word1, word2 and a number, any "
                 "scale, some or all pairs): adds the machine-* policies (docs/process.md).")
@click.option("--machine-vectors", type=click.Path(exists=True, dir_okay=False),
              help="Word vectors as the machine: the cosine of each pair's words (pairs with a "
                   "word missing are not covered).")
@click.option("--workers", type=click.IntRange(1, 64), default=None,
              help="Processes measuring splits at once (default: one per CPU; the figures do not "
                   "depend on it).")
@seed_option
@click.option("--json", "as_json", is_flag=True,
              help='JSON {"policies": [{"policy", "k", "spent", "saving_spearman", '
                   '"saving_spearman_low", "saving_spearman_high", "saving_mae", ..., '
                   '"saving_halfwidth", ..., "spearman", "mae", "halfwidth", "circularity"}, '
                   '...]}; _low/_high: 95 % bootstrap interval of the median over splits, '
                   '_spread_low/_spread_high: 95 % of the splits; circularity: machine-* '
                   'policies only.')
def replay(log, layout, pool, ks, splits, policies, first_round, topup_raters, estimator,
           machine_file, machine_column, machine_vectors, workers, seed, as_json):
    """Replay a real rating log: the ratings each policy saves against uniform.

    Per random split each pair's real ratings are drawn without replacement: --pool of them
    into a budget pool, the rest held out as its reference. Uniform spends k ratings on every
    pair; the adaptive rules (misordering, error, rank+error, halfwidth; the site uses error) a
    first round of --first-round ratings, then --topup-raters more to a tenth of the pairs at a
    time; stopping gives a pair one more rating while the upper 95 % bound of its CI
    half-width (on shrunk variances) is above a threshold; oracle
    is the error rule told each pair's variance over the whole log (a bound). Accuracy: Spearman
    and mean absolute error against the reference means, and the 95th percentile of the pairs'
    95 % CI half-widths. Printed: the saving in ratings at equal Spearman, MAE and half-width
    against uniform's curve of the same split, 1 - B/k (B: the ratings per pair the policy spends
    to reach uniform's figure at k ratings per pair): the median over splits and its 95 %
    bootstrap interval (JSON: also the spread of 95 % of the splits) (docs/process.md). Splits
    run in --workers processes (the figures are the same whatever their number).

    \b
    Example:
        lexgold replay SimVerb-3500-ratings.txt --splits 50
    """
    from tqdm import tqdm

    from lexgold.crowd.logs import read_log
    from lexgold.crowd.allocation_criteria import SITE_RULE
    from lexgold.crowd.replay import (MACHINE_POLICIES, POLICIES, SITE_DEFAULT, log_matrix,
                                      summarise, uniform_rows)
    from lexgold.crowd.replay import replay as run
    from lexgold.errors import InputError

    if max(ks) > pool:
        raise InputError(f"k = {max(ks):g} is above --pool {pool}", field="--k")
    matrix = log_matrix(read_log(log, layout), pool)
    machine, described = machine_numbers(matrix.pairs, machine_file, machine_column,
                                         machine_vectors)
    chosen = tuple(policies) or POLICIES + (MACHINE_POLICIES if machine is not None else ())
    with tqdm(total=splits, desc="splits", unit="split", file=sys.stderr,
              disable=None) as bar:
        records = run(matrix, pool=pool, ks=list(ks), splits=splits, seed=seed,
                      policies=chosen, estimator=estimator, machine=machine,
                      progress=lambda: bar.update(1), first_round=first_round,
                      step=topup_raters, workers=workers)
    table = summarise(records, seed=seed)
    if as_json:
        click.echo(json.dumps({"log": Path(log).name, "pairs": len(matrix.pairs),
                               "pairs_left_out": matrix.dropped, "pool": pool,
                               "splits": splits, "seed": seed, "estimator": estimator,
                               "first_round": first_round, "topup_raters": topup_raters,
                               **({"machine": described} if described else {}),
                               "site_default": SITE_DEFAULT, "site_adaptive_rule": SITE_RULE,
                               "policies": [{**row, "site_default": row["policy"] == SITE_DEFAULT,
                                             "site_adaptive_rule": row["policy"] == SITE_RULE}
                                            for row in uniform_rows(records)
                                            + table.to_dict("records")]}, indent=2))
        return
    click.echo(f"{Path(log).name}: {len(matrix.pairs)} pairs with more than {pool} ratings "
               f"({matrix.dropped} left out), {splits} splits, first round {first_round}, "
               f"top-ups of {topup_raters}, estimator {estimator}")
    if described:
        click.echo(f"machine: {described['file']} ({described['model'] or 'model unknown'}), "
                   f"{described['covered']} of {len(matrix.pairs)} pairs covered")
    click.echo("saving in ratings against uniform at equal figure: median over splits "
               "[95 % bootstrap interval]")
    wide = 24 if described else 12
    click.echo(f"{'policy':<{wide}}{'k':>4}{'spent':>7}  {'equal Spearman':<25}"
               f"{'equal MAE':<25}{'equal 95th-pct half-width':<26}"
               f"{'circularity' if described else ''}".rstrip())
    for row in table.to_dict("records"):
        cells = " ".join(f"{_pct(row, name):<24}" for name in ("spearman", "mae", "halfwidth"))
        circular = (f" {row['circularity']:+.3f} [{row['circularity_low']:+.3f}, "
                    f"{row['circularity_high']:+.3f}]"
                    if math.isfinite(row.get("circularity", math.nan)) else "")
        click.echo(f"{row['policy']:<{wide}}{row['k']:>4g}{row['spent']:>7.2f}  {cells}"
                   f"{circular}".rstrip())


def machine_numbers(pairs, path, column, vectors):
    """The machine's number for each pair of the log (NaN: not covered) and what the JSON says
    of it, from ``--machine`` (``--machine-column``) or ``--machine-vectors``; ``(None, None)``
    without a machine."""
    import numpy as np

    from lexgold.errors import InputError
    from lexgold.machine.prior import machine_for
    from lexgold.machine.ratings import read_machine, vector_scores

    if path and vectors:
        raise InputError("give --machine or --machine-vectors, not both", field="--machine")
    if column and not path:
        raise InputError("--machine-column names a column of --machine, which is not given",
                         field="--machine-column")
    if not path and not vectors:
        return None, None
    scores = (read_machine(path, column=column, option="--machine-column") if path
              else vector_scores(vectors, pairs))
    values = machine_for(pairs, scores)
    covered = int(np.isfinite(values).sum())
    if covered < 3:
        raise InputError(f"the machine covers {covered} of the log's {len(pairs)} pairs; its "
                         "policies need 3 or more", path=path or vectors)
    record = scores.attrs["provenance"]
    return values, {"file": record["file"], "file_sha256": record["file_sha256"],
                    "model": record.get("model"), "column": scores.attrs["column"],
                    "covered": covered}


def _pct(row: dict, name: str) -> str:
    key = f"saving_{name}"
    return (f"{100 * row[key]:+.1f} % [{100 * row[key + '_low']:+.1f}, "
            f"{100 * row[key + '_high']:+.1f}]")


def sd_plot(real, simulated, out: Path, title: str) -> None:
    """Per-pair SD distributions (empirical CDFs), real against simulated, as a PNG."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    figure, axes = plt.subplots(figsize=(6, 4))
    for values, label in ((real, "real log"), (simulated, "simulated from the fitted crowd")):
        values = np.sort(np.asarray(values, float))
        axes.step(values, np.arange(1, len(values) + 1) / len(values), where="post",
                  label=label)
    axes.set_xlabel("SD of a pair's ratings")
    axes.set_ylabel("share of pairs")
    axes.set_title(title, fontsize=9)
    axes.legend(loc="lower right")
    figure.tight_layout()
    figure.savefig(out, dpi=100)
    plt.close(figure)


@click.group()
def crowd():
    """Fit the rater model behind every simulation to a real rating log."""


@crowd.command("fit")
@click.argument("ratings", type=click.Path(dir_okay=False))
@out_file_option("Crowd JSON to write; the SD plot goes beside it (<stem>.sd.png).")
@scale_option("The scale the ratings were given on (default: the file's scale_min/scale_max "
              "columns, else the whole numbers around its ratings).")
@click.option("--layout", type=click.Choice(LAYOUTS),
              help="The file's layout (as `lexgold ratings import --layout`); default: "
                   "recognised from its first line.")
@click.option("--step", type=FiniteRange(min=0, min_open=True), default=1.0,
              show_default=True, help="The scale's step; a rating between two steps is read "
                                      "as hesitation between them.")
@click.option("--error", type=click.Choice(["t", "normal"]), default="t", show_default=True,
              help="Latent error: Student-t (df fitted) or normal.")
@click.option("--replicates", type=click.IntRange(1, MAX_REPLICATES), default=20,
              show_default=True,
              help=f"Simulated copies of the log for the SD comparison (at most "
                   f"{MAX_REPLICATES}).")
@seed_option
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
def fit_command(ratings, out_path, scale, layout, step, error, replicates, seed, as_json):
    """Fit the rater model to RATINGS by maximum likelihood and write it as a crowd.

    RATINGS is a long-format log (rater identity optional: ids starting with ? are anonymous)
    or a published layout that `lexgold ratings import` reads (WordSim-353's set1.csv,
    SimVerb-3500-ratings.txt), plain or .gz. Prints the latent noise, the pairs' spread, the
    error's tails, the lapse share, the score distribution and, with rater identity, the
    spreads of rater bias, scale and noise and the spammer share; then the per-pair SD
    quantiles of the log against a log of the same design simulated from the fit, with a plot.

    \b
    Example:
        lexgold crowd fit SimVerb-3500-ratings.txt --scale 0 6 --out simverb.json
        lexgold simulate --crowd simverb.json --protocol simlex --out ratings.csv
    """
    from tqdm import tqdm

    from lexgold.crowd.crowds import fit_crowd
    from lexgold.crowd.logs import file_sha256, read_log
    from lexgold.crowd.model import describe

    plot = beside(out_path, Path(out_path).with_suffix(".sd.png").name)
    frame = read_log(ratings, layout)
    with tqdm(desc="EM", unit="it", delay=2, disable=True if as_json else None,
              leave=False) as bar:
        model, record, real, simulated = fit_crowd(
            frame, file=Path(ratings).name, sha256=file_sha256(ratings),
            name=Path(out_path).stem, scale=scale, step=step, error=error,
            replicates=replicates, seed=seed, source=ratings,
            progress=lambda i: bar.update(1))
    real_q, sim_q = record["sd_quantiles"]["real"], record["sd_quantiles"]["simulated"]
    out = Path(out_path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(model.to_json(), encoding="utf-8")
    sd_plot(real, simulated, plot,
            f"{record['file']}: per-pair SD, real vs simulated ({replicates} copies)")
    figures = describe(model)
    result = {"fitted_to": record, "model": figures, "sd_quantiles": record["sd_quantiles"],
              "files": [out.name, plot.name]}
    if as_json:
        click.echo(json.dumps(result, indent=1))
        return
    for line in fit_summary_lines(figures, record, real_q, sim_q):
        click.echo(line)
    click.echo(f"wrote {out} and {plot.name}")


def fit_summary_lines(figures: dict, record: dict, real_q, sim_q) -> list[str]:
    """What ``crowd fit`` prints."""
    low, high, step = figures["scale"]
    lines = [f"{record['file']}: {record['pairs']} pairs, {record['ratings']} ratings, raters: "
             f"{record['raters']}; scale {low:g}-{high:g} (step {step:g})"]
    tails = "normal" if figures["df"] is None else f"Student-t, df {figures['df']:.1f}"
    q = figures["pair_noise_quantiles"]
    lines.append(f"latent noise SD (typical pair) {figures['typical_noise_sd']:.2f} points; "
                 f"pairs' noise 10/50/90 %: {q['0.1']:.2f} / {q['0.5']:.2f} / {q['0.9']:.2f}"
                 f" (log spread SD {figures['pair_spread_tau']:.2f}); error {tails}")
    lines.append(f"lapses (a rating uniform over the scale): {100 * figures['lapse']:.1f} %")
    s = figures["score_quantiles"]
    lines.append("latent scores 10/25/50/75/90 %: " + " / ".join(f"{v:.2f}" for v in
                                                                 s.values())
                 + f"; {100 * figures['score_below_end']:.0f} % below {low + step / 2:g}, "
                   f"{100 * figures['score_above_end']:.0f} % above {high - step / 2:g}")
    if "raters" in figures:
        r = figures["raters"]
        lines.append(f"raters: bias SD {r['bias_sd']:.2f} points, scale SD (log) "
                     f"{r['scale_sd_log']:.2f}, noise SD (log) {r['noise_sd_log']:.2f}; "
                     f"spammers {100 * r['spammers']:.1f} %")
    else:
        lines.append("raters: no rater identity, so no rater bias, scale or spammer share "
                     "(the noise holds the raters' differences)")
    lines.append("per-pair SD 10/50/90 %: real " + " / ".join(f"{v:.2f}" for v in real_q)
                 + ", simulated " + " / ".join(f"{v:.2f}" for v in sim_q))
    return lines


@click.command()
@protocol_option("Its [study] table lays the study out, as `lexgold study create` does.",
                 required=True)
@click.option("--pairs", "pairs_path", type=click.Path(exists=True, dir_okay=False),
              help="pairs.csv as `lexgold study create` reads it, or a published file "
                   "(SimLex-999.txt, HyperLex, TR9856, Multi-SimLex ...); default: a random "
                   "sample of same-POS normed pairs from the shipped USF norms.")
@click.option("--n-pairs", type=click.IntRange(min=2), default=999, show_default=True,
              help="Pairs drawn from USF when --pairs is not given.")
@out_file_option("Ratings CSV to write (long format).")
@click.option("--truth", "truth_path", type=click.Path(dir_okay=False), callback=refuse_links,
              help="Also write the true scores and each rater's type to this CSV (and .raters.csv).")
@click.option("--raters-per-tranche", type=click.IntRange(min=1),
              help="Default: the protocol's [study] raters_per_tranche.")
@crowd_options
@seed_option
def simulate(protocol, pairs_path, n_pairs, out_path, truth_path, raters_per_tranche, seed,
             **crowd):
    """Simulate raters answering a study laid out from a pair set; write long-format ratings.

    A quick stand-in for a crowd: the study is laid out by the same designer as `lexgold study
    create` (tranches, consistency set, calibration repeats, duplicates, checkpoints) and each
    tranche is answered by a fixed number of simulated raters, without the site and without
    recruitment top-ups. To rehearse a real study as it will run, with its own layout and
    recruitment, use `lexgold study rehearse STUDY`. Honest raters answer from the crowd
    model (--crowd: default, fitted to SimVerb-3500's and WordSim-353's raw ratings; a crowd
    JSON of `lexgold crowd fit`; or invented, lexgold's earlier crowd); everything written is
    simulated.

    \b
    Example:
        lexgold simulate --pairs out/pairs.csv --protocol simlex --out ratings.csv --seed 1
    """
    import numpy as np

    from lexgold.study.config import load_study_config
    from lexgold.pairfiles import PAIR_COLUMN_ALIASES, read_pair_table
    from lexgold.crowd.simulate import Crowd, simulate_ratings, usf_pairs

    rng = np.random.default_rng(seed)
    if pairs_path:
        pairs = read_pair_table(Path(pairs_path)).rename(columns=PAIR_COLUMN_ALIASES)
    else:
        pairs = usf_pairs(n_pairs, rng=rng)
        if load_study_config(protocol).group_by == "topic":     # one topic: the USF sample
            pairs["topic"] = "usf-sample"
    if load_study_config(protocol).task == "bws":   # Best-Worst Scaling: answers to tuples
        from lexgold.crowd.bws_simulate import simulate_bws
        ratings, raters = simulate_bws(pairs, protocol, rng=rng, crowd=Crowd(**crowd),
                                       raters_per_tranche=raters_per_tranche)
    else:
        ratings, raters = simulate_ratings(pairs, protocol, rng=rng, crowd=Crowd(**crowd),
                                           raters_per_tranche=raters_per_tranche)
    Path(out_path).parent.mkdir(parents=True, exist_ok=True)
    ratings.to_csv(out_path, index=False)
    if truth_path:
        words = pairs.rename(columns={"term1": "word1", "term2": "word2"})
        truth = words[["word1", "word2"]].assign(truth=raters.attrs["truth"]).dropna()
        truth.to_csv(truth_path, index=False)
        raters.to_csv(beside(truth_path, Path(truth_path).with_suffix(".raters.csv").name),
                      index=False)
        if "tuples" in raters.attrs:
            raters.attrs["tuples"].to_csv(
                beside(truth_path, Path(truth_path).with_suffix(".tuples.csv").name),
                index=False)
    rated = ratings.loc[ratings["kind"] != "checkpoint", ["word1", "word2"]].drop_duplicates()
    if "tuple_id" in ratings.columns:
        answered = ratings[["rater_id", "tuple_id"]].drop_duplicates()
        click.echo(f"wrote {len(answered)} Best-Worst answers ({len(ratings)} rows) by "
                   f"{len(raters)} raters ({int(raters['spammer'].sum())} spammers) on "
                   f"{len(rated)} pairs to {out_path}")
        return
    click.echo(f"wrote {len(ratings)} ratings by {len(raters)} raters "
               f"({int(raters['spammer'].sum())} spammers) on {len(rated)} pairs to {out_path}")
