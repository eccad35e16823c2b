"""How long `lexgold crowd fit`'s EM takes on the shipped real logs (issue 33: SimVerb-3500's
35,202 ratings "well under a minute"), and what it finds.

For each shipped log (SimVerb-3500's raw ratings, 0-6, no rater identity; WordSim-353 set 1,
0-10, 13 identified raters) the rater model of lexgold.crowd.model is fitted ``--repeats``
times; printed: wall and CPU seconds (median), EM iterations, and the per-pair SD quantiles
(10th / 50th / 90th) of the real log against 100 simulated copies of it (seed 0).

Usage: python bench/bench_crowd.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from lexgold.crowd.logs import shipped_log
from lexgold.crowd.model import fit, sd_quantiles, simulate_like


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f}")
    for name in ("simverb", "wordsim353"):
        frame, record = shipped_log(name)
        walls, cpus = [], []
        for _ in range(args.repeats):
            wall, cpu = time.perf_counter(), time.process_time()
            model = fit(frame, scale=tuple(record["scale"]))
            walls.append(time.perf_counter() - wall)
            cpus.append(time.process_time() - cpu)
        simulated = simulate_like(model, frame, np.random.default_rng(0), replicates=100)
        real, sim = sd_quantiles(frame), sd_quantiles(simulated)
        print(f"{record['file']}: {len(frame)} ratings; fit {np.median(walls):.1f} s wall, "
              f"{np.median(cpus):.1f} s CPU (median of {args.repeats}); {model.notes[0]}; "
              f"per-pair SD 10/50/90 %: real {' / '.join(f'{v:.3f}' for v in real)}, "
              f"simulated {' / '.join(f'{v:.3f}' for v in sim)}")


if __name__ == "__main__":
    main()
