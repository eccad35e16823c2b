"""``lexgold replay LOG``: what allocation and stopping policies save, replayed on a real log.

The log is read as ``lexgold ratings import`` reads it (a published layout: SimVerb-3500's
``SimVerb-3500-ratings.txt``, WordSim-353's ``set1.csv``, ...; or lexgold's long CSV, checked
by :func:`lexgold.process.ratings.read_ratings`), compressed or not; the replay itself is
:mod:`lexgold.crowd.replay`.
"""

from __future__ import annotations

import json
import math
import shutil
import sys
import tempfile
from pathlib import Path

import click

from lexgold.cliutil import seed_option
from lexgold.ratings import LAYOUTS

#: the budgets of the cost goals: ratings per pair
DEFAULT_K = (4.0, 5.0, 6.0)


def read_log(path: str | Path, layout: str | None = None):
    """The long-format frame of ``path`` (any layout of :mod:`lexgold.ratings.layouts`,
    recognised unless ``layout`` names it; plain or ``.gz``/``.bz2``/``.xz``)."""
    from lexgold.compression import OPENERS, open_input
    from lexgold.errors import InputError
    from lexgold.process.ratings import read_ratings
    from lexgold.ratings.layouts import detect_layout, read_layout

    path = Path(path)
    if path.suffix in OPENERS:
        with tempfile.TemporaryDirectory() as folder:
            plain = Path(folder) / path.stem          # the stem names anonymous raters
            with open_input(path, "rb") as source, open(plain, "wb") as out:
                shutil.copyfileobj(source, out)
            try:
                return _read_plain(plain, layout, detect_layout, read_layout, read_ratings)
            except InputError as err:                  # name the user's file, not the copy
                raise InputError(str(err).replace(str(plain), str(path))) from None
    return _read_plain(path, layout, detect_layout, read_layout, read_ratings)


def _read_plain(path, layout, detect_layout, read_layout, read_ratings):
    layout = layout or detect_layout(path)
    if layout == "long":
        return read_ratings(path)
    return read_layout(path, layout).frame


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
@click.option("--splits", type=click.IntRange(min=1), default=100, show_default=True,
              help="Random splits of each pair's ratings into pool and reference.")
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
@click.option("--machine", "machine_file", type=click.Path(exists=True, dir_okay=False),
              help="A machine's ratings of the pairs (CSV: word1, word2 and a number, any "
                   "scale, some or all pairs): adds the machine-* policies (docs/process.md).")
@click.option("--machine-column", default=None,
              help="The column of --machine holding the number (default: the one numeric "
                   "column).")
@click.option("--machine-vectors", type=click.Path(exists=True, dir_okay=False),
              help="Word vectors as the machine: the cosine of each pair's words (pairs with a "
                   "word missing are not covered).")
@seed_option
@click.option("--json", "as_json", is_flag=True,
              help='JSON {"policies": [{"policy", "k", "spent", "saving_spearman", '
                   '"saving_spearman_low", "saving_spearman_high", "saving_mae", ..., '
                   '"saving_halfwidth", ..., "spearman", "mae", "halfwidth", "circularity"}, '
                   '...]}; _low/_high: 95 % bootstrap interval of the median over splits, '
                   '_spread_low/_spread_high: 95 % of the splits; circularity: machine-* '
                   'policies only.')
def replay(log, layout, pool, ks, splits, policies, first_round, topup_raters, estimator,
           machine_file, machine_column, machine_vectors, seed, as_json):
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
    against uniform's curve of the same split: the median over splits and its 95 % bootstrap
    interval (JSON: also the spread of 95 % of the splits) (docs/process.md).

    With --machine (or --machine-vectors) the machine's policies are measured too:
    machine-prior releases each pair's empirical-Bayes posterior of its human mean and the
    calibrated machine; machine-allocate gives top-ups where the human mean disagrees with the
    machine more than its noise explains (released scores stay human means);
    machine-disagreement is the plain disagreement rule; machine-allocate+prior both. Their
    circularity is the machine's Spearman against the gold they build minus against a
    human-only uniform gold of the same accuracy (docs/process.md).

    \b
    Example:
        lexgold replay SimVerb-3500-ratings.txt --splits 50
    """
    from tqdm import tqdm

    from lexgold.crowd.replay import MACHINE_POLICIES, POLICIES, log_matrix, summarise
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
                      step=topup_raters)
    table = summarise(records, seed=seed)
    if as_json:
        click.echo(json.dumps({"log": Path(log).name, "pairs": len(matrix.pairs),
                               "pairs_left_out": matrix.dropped, "pool": pool,
                               "splits": splits, "seed": seed, "estimator": estimator,
                               "first_round": first_round, "topup_raters": topup_raters,
                               **({"machine": described} if described else {}),
                               "policies": table.to_dict("records")}, indent=2))
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
    try:
        scores = read_machine(path, column=column) if path else vector_scores(vectors, pairs)
    except InputError as err:                       # this command's option is --machine-column
        raise InputError(str(err).replace("with --column", "with --machine-column")) from None
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
