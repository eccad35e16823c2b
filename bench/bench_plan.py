"""Time ``lexgold plan`` on 999-pair pilots beside an anchor measured in the same run.

Pilots (written to a temporary folder): **simulated** SimLex pilots of 999 pairs with 4, 10 and
20 raters per tranche (``lexgold simulate --protocol simlex --n-pairs 999
--raters-per-tranche K --seed 1``: lexgold's own crowd), and two real ones from the vendored
logs (``lexgold/resources/data/SOURCES.toml``): 4 of WordSim-353 set 1's 13 raters (152 pairs)
and 4 of each of 999 SimVerb-3500 pairs' ratings (no rater identity).

Per pilot: the wall time of ``lexgold plan PILOT --quiet`` (defaults: ``--max-raters 20``, 200
bootstrap replicates) in a fresh process, the median of ``--repeats`` runs; the **anchor**, a
fresh Python process that imports numpy and pandas, reads the same file and makes one pass of
the pilot's statistics with numpy (the pair means of two halves of each pair's ratings and
their Spearman), the same number of runs, interleaved; wall and CPU (user + system) seconds,
each the median of the runs (on a shared machine CPU is the steadier figure); the ratio of the
CPU times; the least-squares steps of the pilot's fit and the most any bootstrap replicate's
took (the cap is 500; -1 from a checkout that does not report them: the commands run the
lexgold of the checkout holding this file, so a copy of it in another checkout times that
one). The load average is printed before and after.

    PYTHONPATH=. python bench/bench_plan.py
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ANCHOR = """
import sys
import numpy as np, pandas as pd
frame = pd.read_csv(sys.argv[1])
frame = frame[frame.get("kind", pd.Series("", index=frame.index)) != "checkpoint"]
pair = frame.groupby(["word1", "word2"], sort=False).ngroup().to_numpy()
slot = frame.groupby(["word1", "word2"], sort=False).cumcount().to_numpy()
value = frame["rating"].to_numpy(float)
n = pair.max() + 1
half = slot % 2
means = [np.bincount(pair[half == h], value[half == h], n) /
         np.maximum(np.bincount(pair[half == h], minlength=n), 1) for h in (0, 1)]
ranks = [np.argsort(np.argsort(m)) for m in means]
print(np.corrcoef(*ranks)[0, 1])
"""


def _env() -> dict:
    root = Path(__file__).resolve().parents[1]
    return {**os.environ, "PYTHONPATH": f"{root}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}


def _lexgold(*args: str) -> list[str]:
    return [sys.executable, "-c", "from lexgold.cli import cli; cli()", *args]


def _timed(command: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of a subprocess."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(command, check=True, env=_env(), stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _pilots(folder: Path) -> dict[str, Path]:
    """The pilots' CSV files, simulated and real."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import validate_plan

    found = {}
    for raters in (4, 10, 20):
        path = folder / f"simulated-{raters}.csv"
        subprocess.run(_lexgold("simulate", "--protocol", "simlex", "--n-pairs", "999",
                                "--raters-per-tranche", str(raters), "--out", str(path),
                                "--seed", "1"), check=True, env=_env(),
                       stdout=subprocess.DEVNULL)
        found[f"simulated, {raters} raters per tranche"] = path
    wordsim = validate_plan.matrix(validate_plan.load_log("wordsim353"), anonymous=False)
    path = folder / "wordsim353-4.csv"
    validate_plan.long_of(wordsim[:, [0, 3, 5, 9]], anonymous=False).to_csv(path, index=False)
    found["WordSim-353, 4 of 13 raters (152 pairs)"] = path
    simverb = validate_plan.matrix(validate_plan.load_log("simverb"), anonymous=True)
    path = folder / "simverb-4.csv"
    validate_plan.long_of(simverb[:999, :4], anonymous=True).to_csv(path, index=False)
    found["SimVerb-3500, 4 ratings of 999 pairs"] = path
    return found


def _steps(path: Path) -> tuple[int, int, int]:
    """The pilot's fit steps, the most a replicate's took and the ratings (answers)."""
    import pandas as pd

    from lexgold.process.plan import _pilot, reliability_curve

    frame = pd.read_csv(path)
    curve = reliability_curve(frame, 20, rng=np.random.default_rng(0))
    if "steps" not in curve.attrs:                  # a checkout from before the steps were told
        return -1, -1, len(_pilot(frame).value)
    return (int(curve.attrs["steps"]), int(curve.attrs["replicate_steps"].max()),
            len(_pilot(frame).value))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(f"load average before: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    with tempfile.TemporaryDirectory() as folder:
        pilots = _pilots(Path(folder))
        anchor_file = Path(folder) / "anchor.py"
        anchor_file.write_text(ANCHOR)
        print(f"{'pilot':<42} {'ratings':>7} {'plan wall/CPU s':>15} "
              f"{'anchor wall/CPU s':>17} {'ratio CPU':>9} {'steps':>5} {'max replicate':>13}")
        for name, path in pilots.items():
            plan, anchor = [], []
            for _ in range(args.repeats):
                plan.append(_timed(_lexgold("plan", str(path), "--quiet")))
                anchor.append(_timed([sys.executable, str(anchor_file), str(path)]))
            steps, replicate_steps, ratings = _steps(path)
            (pw, pc), (aw, ac) = ([statistics.median(v) for v in zip(*runs)]
                                  for runs in (plan, anchor))
            print(f"{name:<42} {ratings:>7} {f'{pw:.2f} / {pc:.2f}':>15} "
                  f"{f'{aw:.2f} / {ac:.2f}':>17} {pc / ac:>9.1f} {steps:>5} "
                  f"{replicate_steps:>13}")
    print(f"load average after: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")


if __name__ == "__main__":
    main()
