"""The rehearsal's floor benchmark runs as its docs say (issue 39): ``bench_rehearsal.py
--floor`` times a rehearsal and a minimal Flask app in one run and prints both, with their
ratio, from the times it measured."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_floor_prints_both_sides_and_their_ratio(tmp_path):
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "bench_rehearsal.py"),
                           "--protocol", "simlex", "--floor", "1", "--max-raters", "3",
                           "--out", str(tmp_path)], capture_output=True, text=True, timeout=600,
                          cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    line = re.search(r"rehearsal (\d+) requests in [\d.]+ s, ([\d.]+) ms/request \(([\d.]+) ms "
                     r"inside the app\); minimal Flask app over SQLite (\d+) requests .* "
                     r"([\d.]+) ms/request \(([\d.]+) ms inside the app\); ratio ([\d.]+) whole "
                     r"run, ([\d.]+) inside the app", done.stdout)
    assert line, done.stdout
    ours, ours_app, floor, floor_app, ratio, ratio_app = map(float, line.group(2, 3, 5, 6, 7, 8))
    assert int(line.group(1)) > 0 and int(line.group(4)) > 0
    assert 0 < ours_app <= ours and 0 < floor_app <= floor
    for printed, top, bottom in ((ratio, ours, floor), (ratio_app, ours_app, floor_app)):
        assert _within_rounding(printed, top, bottom)


def _within_rounding(ratio, top, bottom, half=0.005):
    """Whether a ratio printed to 2 decimals can be top / bottom, each printed to 2 decimals."""
    low, high = (top - half) / (bottom + half), (top + half) / max(bottom - half, 1e-9)
    return low - half <= ratio <= high + half


@pytest.mark.slow
def test_the_rehearsal_bench_prints_its_figures(tmp_path):
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "bench_rehearsal.py"),
                           "--protocol", "simlex", "--max-raters", "3", "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    figures = json.loads(done.stdout.split("simlex ", 1)[1].splitlines()[0])
    assert figures["raters"] == 3 and figures["requests"] > 3 * 20
    assert figures["pairs"] == 999 and not figures["every_pair_released"]
    assert 0 < figures["released_pairs"] < 999
    # requests_per_s is rounded to a whole request, rehearsal_s to a millisecond
    assert figures["requests_per_s"] == pytest.approx(figures["requests"]
                                                      / figures["rehearsal_s"], rel=0.02, abs=1)
