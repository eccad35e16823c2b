"""A machine rater in a release: the declared mode of ``[process] machine`` and what the release
says of it (issue 45: a machine is a rater, never a hidden one).

``"none"``: the machine plays no part (the default). ``"allocate"``: a machine decided where the
human ratings went and when a pair stopped (``study create --machine``, the site's allocator);
every released score is a human mean, and the release names the machine. ``"prior"``: each
released score is the empirical-Bayes posterior of the pair's human ratings and the machine's
score calibrated to the human scale (:func:`lexgold.machine.prior.prior_table`: the weight set
by the data's within-pair and between-pair variances, so a weak machine gets little); gold.csv
keeps the human-only mean (``human_score``) and its 95 % interval (``human_low``,
``human_high``) beside the released score.

**Circularity** (:func:`machine_release`): how much a gold built with the machine flatters it,
the machine's Spearman against the released scores minus its Spearman against the human-only
means of the same pairs (the pairs it covers). A prior-mode gold must not be used to evaluate
that model or models trained on its output: evaluate them on ``human_score``. An allocate-mode
gold's scores are human means; its circularity (ratings spent where the machine disagreed) is
what ``lexgold replay --machine`` measures on a real log, not measurable from one release.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from lexgold.errors import InputError
from lexgold.process.markdown import text
from lexgold.ratings import ITEM
from lexgold.ratings.long import answers
from lexgold.stats import spearman

MODES = ("none", "allocate", "prior")
Z95 = 1.959963984540054


def check_mode(mode: str, machine: pd.DataFrame | None, aggregate: str) -> None:
    """A machine file needs a declared mode, and ``prior`` needs a machine and the mean."""
    if mode not in MODES:
        raise InputError(f"expected one of {', '.join(MODES)}, found {mode!r}",
                         field="process.machine")
    if machine is not None and mode == "none":
        raise InputError("a machine's ratings were given but no mode is declared: set "
                         "[process] machine = \"allocate\" or \"prior\" (or --machine-mode)",
                         field="--machine")
    if mode == "prior" and machine is None:
        raise InputError("[process] machine = \"prior\" needs the machine's ratings "
                         "(--machine FILE)", field="--machine")
    if mode == "prior" and aggregate != "mean":
        raise InputError(f"[process] machine = \"prior\" shrinks the pairs' means; aggregate "
                         f"= {aggregate!r} is another score (use aggregate = \"mean\")",
                         field="process.aggregate")


def prior_estimates(final: pd.DataFrame, machine: pd.DataFrame) -> pd.DataFrame:
    """Each pair's ``machine-prior`` score on the rating scale, as ``[process] aggregate``'s
    estimates are given (``word1, word2, estimate``), with the posterior's columns beside it
    (``n, mean, calibrated, weight, posterior_sd``) and the fit in ``attrs``."""
    from lexgold.machine.prior import prior_table

    table = prior_table(answers(final)[[*ITEM, "rating"]], machine)
    out = table.rename(columns={"posterior": "estimate"})
    out.attrs.update(table.attrs)
    return out


def machine_release(mode: str, machine: pd.DataFrame | None, scores: pd.DataFrame,
                    prior: pd.DataFrame | None = None, study: dict | None = None) -> dict | None:
    """What report.json's ``machine`` says: the mode, the model and its provenance, how much of
    the pairs it covers, and in prior mode the calibration, the weight and the circularity.

    ``scores`` is the pipeline's per-pair table (``word1, word2, score, mean``; in prior mode
    ``plain_mean`` the human-only mean); ``study`` the study's own record of its machine (an
    export's ``machine``) when the ratings come from a study that allocated with one.
    """
    if mode == "none":
        return None
    provenance = dict(machine.attrs.get("provenance", {})) if machine is not None else \
        dict(study or {})
    record = {"mode": mode, "model": provenance.get("model"),
              "prompt_sha256": provenance.get("prompt_sha256"),
              "file": provenance.get("file"), "file_sha256": provenance.get("file_sha256"),
              "provenance": provenance, "pairs_covered": None, "circularity": None}
    if machine is None:
        record["note"] = ("the study's allocator used this machine; every released score is "
                          "a human mean")
        return record
    from lexgold.machine.prior import machine_for

    values = machine_for(scores, machine)
    covered = np.isfinite(values)
    record["pairs_covered"], record["pairs"] = int(covered.sum()), int(len(scores))
    if mode == "prior" and prior is not None:
        human = scores["plain_mean"].to_numpy(float)
        released = scores["mean"].to_numpy(float)
        record.update(
            calibration={"intercept": prior.attrs["a"], "slope": prior.attrs["b"]},
            tau2=prior.attrs["tau2"], sigma2=prior.attrs.get("sigma2"),
            weight_mean=float(scores[ITEM].merge(prior[[*ITEM, "weight"]], on=ITEM, how="left")
                              ["weight"].to_numpy(float)[covered].mean())
            if covered.any() else math.nan,
            circularity=_circularity(values[covered], released[covered], human[covered]),
            spearman_released=spearman(values[covered], released[covered]),
            spearman_human=spearman(values[covered], human[covered]))
    return record


def _circularity(machine, released, human) -> float:
    """Spearman(machine, released) - Spearman(machine, human-only): how much the gold built
    with the machine flatters it (0 for a gold of human means)."""
    if len(machine) < 3:
        return math.nan
    return float(spearman(machine, released) - spearman(machine, human))


def human_columns(scores: pd.DataFrame, decimals: int, rating_range, score_range) -> dict:
    """gold.csv's human-only columns of a prior-mode release, on the released scale:
    ``human_score`` (the mean of the accepted ratings) and ``human_low``, ``human_high`` (its
    95 % normal interval, mean -/+ 1.96 SD / sqrt(n), SD of one rating's pair NaN)."""
    from lexgold.process.release import round_half_up
    from lexgold.process.scaling import linear_scale

    mean = scores["plain_mean"].astype(float)
    half = Z95 * scores["sd"].astype(float) / np.sqrt(scores["n"].astype(float))
    def released(values) -> np.ndarray:
        scaled = linear_scale(values, source=rating_range, target=score_range)
        return round_half_up(pd.Series(np.asarray(scaled, float)), decimals).to_numpy()

    return {"human_score": released(mean), "human_low": released(mean - half),
            "human_high": released(mean + half)}


def card_lines(record: dict | None) -> list[str]:
    """The dataset card's and report.md's section on the machine (empty without one)."""
    if not record:
        return []
    model = text(record.get("model") or "a model whose provenance was not recorded")
    lines = ["## Machine rater", "",
             f"A machine rated the pairs: **{model}**"
             + (f" (prompt SHA-256 `{record['prompt_sha256'][:16]}...`)"
                if record.get("prompt_sha256") else "")
             + (f", file `{record['file']}` (SHA-256 `{str(record['file_sha256'])[:16]}...`)"
                if record.get("file") else "") + "."]
    if record["mode"] == "allocate":
        lines += ["", "Mode `allocate`: the machine decided where human ratings went and when a "
                  "pair stopped; every released score is a mean of human ratings. A gold built "
                  "this way can still flatter the machine (more ratings went where it "
                  "disagreed): `lexgold replay --machine` measures by how much on a real log."]
    else:
        lines += ["", "Mode `prior`: each released `score` is the empirical-Bayes posterior of "
                  "the pair's human ratings and the machine's score calibrated to the human "
                  f"scale (the machine's mean weight {_f(record.get('weight_mean'))}, "
                  f"calibration human = {_f(record['calibration']['intercept'])} + "
                  f"{_f(record['calibration']['slope'])} x machine). `gold.csv` keeps the "
                  "human-only mean (`human_score`) and its 95 % interval (`human_low`, "
                  "`human_high`). "
                  + (f"The {record['pairs'] - record['pairs_covered']} pairs it does not rate "
                     "are shrunk toward the grand mean of the human means by the same rule "
                     "(James-Stein), so that covered and uncovered pairs stay comparable."
                     if record.get("pairs", 0) > record.get("pairs_covered", 0) else ""),
                  "", f"**Circularity**: the machine's Spearman against the released scores "
                  f"is {_f(record.get('spearman_released'))}, against the human-only means "
                  f"{_f(record.get('spearman_human'))} ({_signed(record.get('circularity'))} "
                  f"on the {record.get('pairs_covered')} pairs it covers). **Do not evaluate "
                  f"{model}, or models trained on its output, on `score`: use `human_score`.**"]
    return lines + [""]


def croissant_fields(record: dict | None) -> dict:
    """Croissant RAI's ``rai:machineAnnotationTools`` and the mode, when a machine rated."""
    if not record:
        return {}
    model = record.get("model") or "unrecorded model"
    what = (f"{model} (lexgold machine mode {record['mode']}"
            + (f", prompt SHA-256 {record['prompt_sha256']}" if record.get("prompt_sha256")
               else "") + ")")
    return {"rai:machineAnnotationTools": [what]}


def _f(value) -> str:
    return "n/a" if value is None or (isinstance(value, float) and math.isnan(value)) \
        else f"{value:.3f}"


def _signed(value) -> str:
    return "n/a" if value is None or (isinstance(value, float) and math.isnan(value)) \
        else f"{value:+.3f}"
