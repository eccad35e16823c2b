"""``lexgold crowd fit``: fit the rater model (:mod:`lexgold.crowd.model`) to a real rating log.

Here (not in :mod:`lexgold.crowd`) for now; the long format is read by
:mod:`lexgold.ratings.long`.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from lexgold.cliutil import out_file_option, scale_option, seed_option
from lexgold.errors import InputError
from lexgold.ratings import LAYOUTS


def read_log(path: str | Path, layout: str | None = None):
    """A rating log in lexgold's long format or a published layout that `lexgold ratings
    import` reads (WordSim-353's one column per rater, SimVerb-3500's anonymous ratings, ...),
    plain or gzipped, as a long-format frame."""
    from lexgold.crowd.logs import plain_copy
    from lexgold.ratings.long import read_ratings
    from lexgold.ratings.layouts import detect_layout, read_layout

    path = Path(path)
    if not path.is_file():
        raise InputError("file not found", path=path)
    with plain_copy(path) as plain:
        layout = layout or detect_layout(plain)
        frame = read_ratings(plain) if layout == "long" else read_layout(plain, layout).frame
    return frame


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
@click.option("--step", type=click.FloatRange(min=0, min_open=True), default=1.0,
              show_default=True, help="The scale's step; a rating between two steps is read "
                                      "as hesitation between them.")
@click.option("--error", type=click.Choice(["t", "normal"]), default="t", show_default=True,
              help="Latent error: Student-t (df fitted) or normal.")
@click.option("--replicates", type=click.IntRange(min=1), default=20, show_default=True,
              help="Simulated copies of the log for the SD comparison.")
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
    import numpy as np
    from tqdm import tqdm

    from lexgold.crowd.logs import file_sha256, log_record
    from lexgold.crowd.model import (anonymous_ids, describe, fit, pair_sds, sd_quantiles,
                                     simulate_like)
    from dataclasses import replace

    frame = read_log(ratings, layout)
    with tqdm(desc="EM", unit="it", delay=2, disable=True if as_json else None,
              leave=False) as bar:
        model = fit(frame, scale=tuple(scale) if scale else None, step=step, error=error,
                    source=ratings, progress=lambda i: bar.update(1))
    anonymous = model.raters is None
    record = log_record(frame, file=Path(ratings).name, sha256=file_sha256(ratings),
                        scale=model.scale[:2], anonymous=anonymous)
    if not anonymous and bool(anonymous_ids(frame["rater_id"]).any()):
        record["raters"] = f"{record['raters']} identified, the rest anonymous"
    model = replace(model, fitted_to=[record], name=Path(out_path).stem)
    simulated = simulate_like(model, frame, np.random.default_rng(seed), replicates=replicates)
    real_q, sim_q = sd_quantiles(frame), sd_quantiles(simulated)
    record["sd_quantiles"] = {"quantiles": [0.1, 0.5, 0.9], "real": real_q,
                              "simulated": sim_q, "replicates": replicates, "seed": seed}
    out = Path(out_path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(model.to_json(), encoding="utf-8")
    plot = out.with_suffix(".sd.png")
    sd_plot(pair_sds(frame), pair_sds(simulated), plot,
            f"{record['file']}: per-pair SD, real vs simulated ({replicates} copies)")
    figures = describe(model)
    result = {"fitted_to": record, "model": figures, "sd_quantiles": record["sd_quantiles"],
              "files": [out.name, plot.name]}
    if as_json:
        click.echo(json.dumps(result, indent=1))
        return
    for line in summary_lines(figures, record, real_q, sim_q):
        click.echo(line)
    click.echo(f"wrote {out} and {plot.name}")


def summary_lines(figures: dict, record: dict, real_q, sim_q) -> list[str]:
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
    lines.append(f"latent scores 10/25/50/75/90 %: " + " / ".join(f"{v:.2f}" for v in
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
