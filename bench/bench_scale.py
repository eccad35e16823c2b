"""`lexgold process`, `agree`, `study export` and start-up at research scale.

Studies of 500, 2,000 and 10,000 finished SimLex raters (10 tranches of 50, 200, 1,000):

- the layout is the packaged SimLex protocol's (``lexgold.crowd.simulate.simulate_ratings``
  over 999 same-POS pairs drawn from the shipped USF norms, seed 1), simulated once with 50
  raters per tranche (calibration repeats, consistency pairs, checkpoints, spammers);
- larger studies are built from it with numpy, not by simulating every rater (that takes
  ~0.02 s per rater): rater ``r`` of a tranche copies the rows of simulated rater ``r % 50``
  (same items, kinds, checkpoint answers, dates) with its ratings moved by its own bias and
  noise (SD 0.7 and 0.5, rounded, clipped to 0-6). So 10,000 raters give 1.39 M rows.

Every measurement is one fresh subprocess (`python -m` of the installed CLI entry point, in
this checkout or the one given by ``--root``): wall time and the child's peak resident memory
(``ru_maxrss`` from ``os.wait4``), the median of ``--runs`` runs.

- process: ``lexgold process ratings.csv --protocol simlex --pairs pairs.csv --no-plots``
  (bootstrap: the protocol's 200 replicates; seed 0);
- agree: ``lexgold agree ratings.csv --json``, beside its anchor ``bench/plain_iaa.py`` (the
  same file's IAA-1 and IAA-2 in plain pandas/numpy), in turn, with their ratio;
- study export: ``lexgold study export STUDY --out ratings.csv`` of a SQLite study with the
  same number of finished raters, bulk-loaded (:func:`build_study_db`: every item and
  checkpoint of the rater's tranche answered, ~139 rows per rater), against the same answers
  written by the ``sqlite3`` command line (``-csv``, one joined SELECT; when it is installed);
- start-up: ``lexgold --help`` against ``python -c "import click"`` (median of 5).

The admin view's figures of the issue (render time; raters' p50/p95/p99 with and without an
admin tab reloading) come from ``bench/bench_admin.py`` on studies of the same sizes.

Usage: python bench/bench_scale.py [--raters 2000 10000] [--runs 1] [--root DIR]
       [--data /tmp/lexgold-bench-scale] [--skip-process] [--skip-agree] [--skip-export]
``--root`` measures another checkout (e.g. the base commit in a ``git worktree``) on the same
data.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
#: the answers of `study export` as the sqlite3 command line writes them (checkpoints aside)
SQLITE_EXPORT = ("SELECT r.public_id, t.number, p.word1, p.word2, a.rating, p.pos, i.kind, "
                 "a.answered_at, a.start_value, a.response_ms, a.server_ms, r.platform, "
                 "r.confirmed, r.fast_pages, r.browsers FROM answer a "
                 "JOIN rater r ON a.rater_id = r.id JOIN item i ON a.item_id = i.id "
                 "JOIN tranche t ON i.tranche_id = t.id JOIN pair p ON i.pair_id = p.id "
                 "ORDER BY a.id;")
#: the same SELECT in `study export`'s row order (tranche, rater, time): the sort the export
#: does and the stored-order baseline above does not
SQLITE_EXPORT_SORTED = SQLITE_EXPORT.replace(
    "ORDER BY a.id;", "ORDER BY t.number, r.public_id, substr(a.answered_at, 1, 19), a.id;")
BASE_PER_TRANCHE = 50
CLI = "from lexgold.cli import main; main()"


def build_study(raters: int, folder: Path) -> tuple[Path, Path]:
    """``(ratings.csv, pairs.csv)`` of a SimLex study of ``raters`` finished raters (cached)."""
    import numpy as np
    import pandas as pd

    from lexgold.crowd.simulate import simulate_ratings, usf_pairs

    folder.mkdir(parents=True, exist_ok=True)
    pairs_path, ratings_path = folder / "pairs.csv", folder / f"ratings_{raters}.csv"
    template_path = folder / "template.csv"
    if not template_path.exists():
        rng = np.random.default_rng(1)
        pairs = usf_pairs(999, rng=rng)
        pairs.to_csv(pairs_path, index=False)
        ratings, _ = simulate_ratings(pairs, "simlex", rng=rng,
                                      raters_per_tranche=BASE_PER_TRANCHE)
        ratings.to_csv(template_path, index=False)
    if ratings_path.exists():
        return ratings_path, pairs_path
    template = pd.read_csv(template_path, keep_default_na=False)
    tranches = template["tranche"].nunique()
    per_tranche = raters // tranches
    if per_tranche == BASE_PER_TRANCHE:
        template.to_csv(ratings_path, index=False)
        return ratings_path, pairs_path
    rng = np.random.default_rng(raters)
    number = template["rater_id"].str.slice(4).astype(int).to_numpy()
    rows_of = template.groupby([template["tranche"], number]).indices
    rows, ids, copy = [], [], []
    for t in sorted(template["tranche"].unique()):
        for r in range(per_tranche):
            own = rows_of[(t, r % BASE_PER_TRANCHE)]
            rows.append(own)
            ids.append(np.full(len(own), f"t{t:02d}r{r:04d}", dtype=object))
            copy.append(np.full(len(own), r >= BASE_PER_TRANCHE))
    rows, copy = np.concatenate(rows), np.concatenate(copy)
    study = template.iloc[rows].reset_index(drop=True)
    study["rater_id"] = np.concatenate(ids)
    sizes = np.array([len(i) for i in ids])
    bias = np.repeat(rng.normal(0, 0.7, len(ids)), sizes)
    moved = np.clip(np.round(study["rating"].to_numpy(float) + bias
                             + rng.normal(0, 0.5, len(study))), 0, 6)
    move = copy & (study["kind"] != "checkpoint").to_numpy()
    study["rating"] = np.where(move, moved, study["rating"]).astype(int)
    study.to_csv(ratings_path, index=False)
    return ratings_path, pairs_path


def build_study_db(raters: int, folder: Path) -> Path:
    """``study_{raters}.sqlite``: the packaged SimLex study over ``pairs.csv`` with ``raters``
    finished raters bulk-loaded (cached). Each rater answers every item and checkpoint of
    its tranche (ratings drawn at random around a per-pair mean, a minute per page), as the
    site would store them; rater ``r`` of tranche ``t`` is ``t{t:02d}r{r:05d}``."""
    import sqlite3

    import numpy as np

    from lexgold.study.store import create_study

    path = folder / f"study_{raters}.sqlite"
    if path.exists():                                # cached: at this checkout's schema
        from lexgold.study.db import is_current, make_engine, upgrade

        engine = make_engine(f"sqlite:///{path}")
        if not is_current(engine):
            upgrade(engine)
        engine.dispose()
        return path
    build_study(raters, folder)                      # pairs.csv
    partial = path.with_suffix(".partial")
    partial.unlink(missing_ok=True)
    create_study("simlex", folder / "pairs.csv", f"sqlite:///{partial}", seed=1)
    rng = np.random.default_rng(raters)
    db = sqlite3.connect(partial)
    tranches = db.execute("SELECT id, number FROM tranche ORDER BY number").fetchall()
    per_tranche = raters // len(tranches)
    truth = rng.uniform(0, 6, db.execute("SELECT max(id) FROM pair").fetchone()[0] + 1)
    rater_id, slot_id = 0, db.execute("SELECT max(id) FROM slot").fetchone()[0]
    for tranche, number in tranches:
        items = db.execute("SELECT item.id, item.pair_id, step.position FROM item JOIN step "
                           "ON item.step_id = step.id WHERE item.tranche_id = ? ORDER BY "
                           "step.position, item.position", (tranche,)).fetchall()
        checks = db.execute("SELECT id, position FROM step WHERE tranche_id = ? AND "
                            "kind = 'checkpoint' ORDER BY position", (tranche,)).fetchall()
        item_ids = np.array([i for i, _, _ in items])
        means = truth[[p for _, p, _ in items]]
        pages = np.array([s for _, _, s in items])
        answers, checkpoints, rows = [], [], []
        for r in range(per_tranche):
            rater_id += 1
            slot_id += 1
            start = 1_767_225_600 + rater_id * 600                 # 2026-01-01, 10 min apart
            done = _stamp(start + 60 * (pages.max() + 2))
            rows.append((rater_id, f"t{number:02d}r{r:05d}", "prolific", f"P{rater_id:07d}",
                         done, done, tranche, slot_id))
            ratings = np.clip(np.round(means + rng.normal(0, 1.2, len(means))), 0, 6)
            times = start + 60 * pages + rng.integers(0, 50, len(pages))
            answers.extend(zip(item_ids.tolist(), [rater_id] * len(items), [slot_id] * len(items),
                               ratings.astype(int).tolist(),
                               rng.integers(0, 7, len(items)).tolist(),
                               rng.integers(800, 9000, len(items)).tolist(),
                               [_stamp(t) for t in times],
                               rng.integers(800, 9000, len(items)).tolist()))
            checkpoints.extend((rater_id, step, slot_id, 0, True, 3000, _stamp(start + 60 * pos),
                                2900) for step, pos in checks)
        db.executemany("INSERT INTO rater (id, public_id, platform, external_id, created_at, "
                       "completed_at, stage, instructions_page, native_speaker, "
                       "external_study, external_session, browser_sha256, browsers, "
                       "fast_pages, confirmed, move_sha256) VALUES (?, ?, ?, ?, ?, ?, "
                       "'done', 0, 1, '', '', '', 1, 0, 0, '')",
                       [row[:6] for row in rows])
        db.executemany("INSERT INTO slot (id, tranche_id, number, status, rater_id, step, "
                       "completed_at) VALUES (?, ?, ?, 'completed', ?, 0, ?)",
                       [(row[7], row[6], 1000 + i, row[0], row[5])
                        for i, row in enumerate(rows)])
        db.executemany("INSERT INTO answer (item_id, rater_id, slot_id, rating, start_value, "
                       "response_ms, answered_at, server_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                       answers)
        db.executemany("INSERT INTO checkpoint_answer (rater_id, step_id, slot_id, choice, "
                       "correct, response_ms, answered_at, server_ms) VALUES "
                       "(?, ?, ?, ?, ?, ?, ?, ?)", checkpoints)
        db.commit()
    db.close()
    partial.rename(path)
    return path


def _stamp(seconds) -> str:
    """A time as SQLAlchemy stores a DateTime in SQLite."""
    import datetime

    return datetime.datetime.fromtimestamp(int(seconds), datetime.UTC).strftime(
        "%Y-%m-%d %H:%M:%S.000000")


def measure(argv: list[str], root: Path) -> tuple[float, float, float]:
    """Wall seconds, peak RSS (MB) and CPU seconds (user + system) of one subprocess."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    timed = not argv[0].endswith(("python", "python3")) and Path("/usr/bin/time").exists()
    if timed:        # a non-Python child's ru_maxrss would count this process's pages (fork)
        argv = ["/usr/bin/time", "-f", "maxrss_kb %M", *argv]
    start = time.perf_counter()
    child = subprocess.Popen(argv, env=env, cwd=root, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE)      # cwd: `python -c` imports from it
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - start
    error = child.stderr.read().decode()
    child.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv)} failed:\n{error}")
    peak_kb = usage.ru_maxrss
    if timed:
        peak_kb = int(error.rsplit("maxrss_kb ", 1)[1].split()[0])
    return seconds, peak_kb / 1024, usage.ru_utime + usage.ru_stime


def measure_until(argv: list[str], root: Path, timeout: float, stdout=subprocess.DEVNULL
                  ) -> tuple[float | None, float, float]:
    """Wall seconds (None: killed at ``timeout``), CPU seconds (user + system) and peak RSS
    (MB, ``ru_maxrss`` of ``os.wait4``) of one Python subprocess run from ``root``, its
    standard output to ``stdout``; a child that fails (not killed) stops the bench."""
    start = time.perf_counter()
    child = subprocess.Popen(argv, env={**os.environ, "PYTHONPATH": str(root)}, cwd=root,
                             stdout=stdout, stderr=subprocess.PIPE)
    stopped = False
    while True:
        pid, status, usage = os.wait4(child.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() - start > timeout and not stopped:
            child.send_signal(signal.SIGKILL)
            stopped = True
        time.sleep(0.2)
    seconds = time.perf_counter() - start
    error = child.stderr.read().decode()
    child.stderr.close()
    if not stopped and os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv)} failed:\n{error}")
    return (None if stopped else seconds), usage.ru_utime + usage.ru_stime, \
        usage.ru_maxrss / 1024


def median_of(argv, root, runs):
    results = [measure(argv, root) for _ in range(runs)]
    return (statistics.median(s for s, _, _ in results), max(m for _, m, _ in results),
            statistics.median(c for _, _, c in results))


def agree_beside_anchor(python, ratings: Path, root: Path, runs: int) -> None:
    """``lexgold agree --json`` and its anchor (``bench/plain_iaa.py``: IAA-1 and IAA-2 in
    plain pandas/numpy) in turn, ``runs`` times each; medians and their ratio."""
    ours, anchor = [], []
    for _ in range(runs):
        ours.append(measure([python, "-c", CLI, "agree", str(ratings), "--json"], root))
        anchor.append(measure([python, str(HERE / "bench" / "plain_iaa.py"), str(ratings)],
                              root))
    rows = {}
    for name, results in (("agree", ours), ("anchor", anchor)):
        rows[name] = (statistics.median(s for s, _, _ in results),
                      max(m for _, m, _ in results),
                      statistics.median(c for _, _, c in results))
    for name, label in (("agree", "lexgold agree --json"),
                        ("anchor", "bench/plain_iaa.py: read_csv + IAA-1/IAA-2 in numpy")):
        seconds, mb, cpu = rows[name]
        print(f"  {name:<8s} {seconds:8.2f} s wall {cpu:8.2f} s CPU {mb:6.0f} MB peak  ({label})")
    print(f"  agree / anchor: {rows['agree'][0] / rows['anchor'][0]:.2f}x wall, "
          f"{rows['agree'][2] / rows['anchor'][2]:.2f}x CPU (load average "
          f"{os.getloadavg()[0]:.1f})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--raters", type=int, nargs="+", default=[2000, 10000])
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--root", type=Path, default=HERE)
    parser.add_argument("--data", type=Path, default=Path(tempfile.gettempdir())
                        / "lexgold-bench-scale")
    parser.add_argument("--skip-process", action="store_true")
    parser.add_argument("--skip-agree", action="store_true")
    parser.add_argument("--skip-export", action="store_true")
    args = parser.parse_args()
    python = sys.executable
    print(f"checkout {args.root}; data {args.data}; {os.cpu_count()} CPUs; "
          f"median of {args.runs} run(s); load average {os.getloadavg()[0]:.1f}")
    for raters in args.raters:
        ratings, pairs = build_study(raters, args.data)
        with open(ratings) as handle:
            rows = sum(1 for _ in handle) - 1
        print(f"{raters} raters, {rows} rows ({ratings.name})")
        if not args.skip_process:
            out = Path(tempfile.mkdtemp(prefix=f"bench-process-{raters}-"))
            seconds, mb, cpu = median_of([python, "-c", CLI, "process", str(ratings),
                                          "--protocol", "simlex", "--pairs", str(pairs),
                                          "--out", str(out), "--no-plots"], args.root, args.runs)
            print(f"  process  {seconds:8.2f} s wall {cpu:8.2f} s CPU {mb:6.0f} MB peak  "
                  f"(out: {out})")
        if not args.skip_agree:
            agree_beside_anchor(python, ratings, args.root, args.runs)
        if not args.skip_export:
            study = build_study_db(raters, args.data)
            out = Path(tempfile.mkdtemp(prefix=f"bench-export-{raters}-")) / "ratings.csv"
            seconds, mb, cpu = median_of([python, "-c", CLI, "study", "export", str(study),
                                          "--out", str(out)], args.root, args.runs)
            print(f"  export   {seconds:8.2f} s wall {cpu:8.2f} s CPU {mb:6.0f} MB peak  "
                  f"(lexgold study export, {out.stat().st_size / 2**20:.0f} MiB)")
            if shutil.which("sqlite3"):
                ours = cpu
                for query, what in ((SQLITE_EXPORT, "stored order"),
                                    (SQLITE_EXPORT_SORTED, "the export's order")):
                    seconds, mb, cpu = median_of(
                        ["sqlite3", "-csv", "-header", str(study),
                         ".output " + str(out.with_name("sqlite3.csv")), query],
                        args.root, args.runs)
                    print(f"  sqlite3  {seconds:8.2f} s wall {cpu:8.2f} s CPU {mb:6.0f} MB peak  "
                          f"(the same answers, one joined SELECT, {what}; export / sqlite3 "
                          f"{ours / cpu:.2f}x CPU)")
    help_s = statistics.median(measure([python, "-c", CLI, "--help"], args.root)[0]
                               for _ in range(5))
    click_s = statistics.median(measure([python, "-c", "import click"], args.root)[0]
                                for _ in range(5))
    print(f"lexgold --help {help_s:.3f} s; python -c 'import click' {click_s:.3f} s "
          f"({help_s / click_s:.1f}x)")


if __name__ == "__main__":
    main()
