"""Fit lexgold's default crowd (lexgold/crowd/data/default.json) to the two shipped real logs.

    python scripts/fit_default_crowd.py [--out lexgold/crowd/data/default.json]

The pairs (latent scores, their spreads, lapses, the error's tails, the noise) come from
SimVerb-3500's raw ratings (3,500 pairs, 10 ratings each, 0-6, no rater identity); how raters
differ (bias, scale, noise, spammers) from WordSim-353 set 1 (153 pairs, 13 identified raters,
0-10), fitted twice: with identity, and without (ids blanked) to learn which share of an
anonymous log's noise is within a rater (lexgold.crowd.model.combine). The fit is
deterministic: the same files give the same JSON.
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

from lexgold.crowd.logs import log_record, shipped_log
from lexgold.crowd.model import combine, fit

DEFAULT = Path(__file__).resolve().parent.parent / "lexgold" / "crowd" / "data" / "default.json"


def fitted(name: str, *, anonymous: bool = False):
    """The crowd fitted to a shipped log (``anonymous``: rater ids blanked)."""
    frame, record = shipped_log(name)
    if anonymous:
        frame = frame.assign(rater_id="?")
    model = fit(frame, scale=tuple(record["scale"]))
    entry = log_record(frame, file=record["file"], sha256=record["sha256"],
                       scale=record["scale"], anonymous=model.raters is None)
    return replace(model, fitted_to=[entry])


def default_crowd(simverb=None, wordsim=None, wordsim_anonymous=None):
    """The default crowd; fits already made can be passed in."""
    simverb = simverb or fitted("simverb")
    wordsim = wordsim or fitted("wordsim353")
    wordsim_anonymous = wordsim_anonymous or fitted("wordsim353", anonymous=True)
    model = combine(simverb, wordsim, wordsim_anonymous, name="default")
    return replace(model, notes=model.notes + [
        "built by scripts/fit_default_crowd.py; scale-relative (rescaled to each study's "
        "scale)"])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(DEFAULT))
    args = parser.parse_args(argv)
    model = default_crowd()
    Path(args.out).write_text(model.to_json(), encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
