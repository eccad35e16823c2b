"""Fit lexgold's default crowd (lexgold/crowd/data/default.json) to the two shipped real logs.

    python scripts/fit_default_crowd.py [--out lexgold/crowd/data/default.json]

The pairs (latent scores, their spreads, lapses, the error's tails, the noise) come from
SimVerb-3500's raw ratings (3,500 pairs, 10 ratings each, 0-6, no rater identity); how raters
differ (bias, scale, noise, spammers) from WordSim-353 set 1 (153 pairs, 13 identified raters,
0-10), relative to the scale. WordSim-353 is fitted first, with identity; SimVerb is then
fitted with those rater spreads held, each of its anonymous ratings a fresh rater's (the
likelihood averaged over raters), so its noise is the noise within a rater. The fit is
deterministic: the same files give the same JSON.
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

from lexgold.crowd.logs import log_record, shipped_log
from lexgold.crowd.model import fit

DEFAULT = Path(__file__).resolve().parent.parent / "lexgold" / "crowd" / "data" / "default.json"


def fitted(name: str, *, raters=None):
    """The crowd fitted to a shipped log (``raters``: rater spreads held)."""
    frame, record = shipped_log(name)
    model = fit(frame, scale=tuple(record["scale"]), raters=raters)
    entry = log_record(frame, file=record["file"], sha256=record["sha256"],
                       scale=record["scale"], anonymous=model.raters is None or raters)
    return replace(model, fitted_to=[entry])


def default_crowd(wordsim=None):
    """The default crowd; the WordSim-353 fit can be passed in."""
    wordsim = wordsim or fitted("wordsim353")
    simverb = fitted("simverb", raters=wordsim.raters)
    return replace(simverb, name="default", fitted_to=simverb.fitted_to + wordsim.fitted_to,
                   notes=simverb.notes + [
                       "raters (bias, scale, noise spreads, spammers; relative to the scale) "
                       "from WordSim-353 set 1 with rater identity, held while the pairs "
                       "(scores, spreads, within-rater noise, lapses, tails) were fitted to "
                       "SimVerb-3500's anonymous ratings; built by "
                       "scripts/fit_default_crowd.py"])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(DEFAULT))
    args = parser.parse_args(argv)
    model = default_crowd()
    Path(args.out).write_text(model.to_json(), encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
