"""Fit one crowd to each real log lexgold ships (lexgold/crowd/data/<log>.json).

    python scripts/fit_shipped_crowds.py [--out lexgold/crowd/data] [--only danish ...]

Each log of ``lexgold.crowd.logs.SHIPPED`` (simverb: SimVerb-3500's raw ratings; wordsim353:
WordSim-353 set 1; danish: the Danish similarity set's raters; card660: Card-660's raters) is
read as lexgold ships it and fitted alone by the fit of ``lexgold crowd fit``
(``lexgold.crowd.crowds.fit_crowd``: step 1, Card-660's 0.5 (:data:`STEPS`), Student-t
error, the SD comparison on 20 simulated
copies, seed 0). Each JSON names its log's file and SHA-256. The fit is deterministic: the same
files and model give the same JSON, so after a change of the model (lexgold/crowd/model.py) one
run of this script rebuilds every shipped crowd (``scripts/fit_default_crowd.py`` rebuilds the
default crowd).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from lexgold.crowd.crowds import SHIPPED_CROWDS, fit_crowd
from lexgold.crowd.logs import shipped_log

DATA = Path(__file__).resolve().parent.parent / "lexgold" / "crowd" / "data"


#: a log's rating step where it is not 1: Card-660's annotators rated in half points (20 % of
#: its 5,280 ratings lie on a half, at every part of the scale: 220 / 235 / 313 / 299 on
#: 0.5 / 1.5 / 2.5 / 3.5), so whole steps would read them as hesitations and simulate too many
#: unanimous pairs (docs/process.md, "The lower tail")
STEPS = {"card660": 0.5}


def shipped_crowd(name: str):
    """The crowd fitted to the shipped log ``name`` (as ``lexgold crowd fit`` fits a log)."""
    frame, record = shipped_log(name)
    model, _, _, _ = fit_crowd(frame, file=record["file"], sha256=record["sha256"], name=name,
                               scale=record["scale"], step=STEPS.get(name, 1.0))
    return model


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(DATA), help="Folder of the crowd JSONs.")
    parser.add_argument("--only", nargs="+", choices=SHIPPED_CROWDS, default=SHIPPED_CROWDS,
                        help="Fit these logs only.")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for name in args.only:
        path = out / f"{name}.json"
        path.write_text(shipped_crowd(name).to_json(), encoding="utf-8")
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
