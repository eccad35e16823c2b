"""Progress on long work (issue 34 item 3): a tqdm bar on stderr for `study rehearse`,
`process`, `build` and `crosslingual`, shown only on a terminal and never with --quiet; and the
quick rehearsal (`study rehearse --max-raters N`) whose small release `process` makes with
--allow-incomplete."""

import fcntl
import io
import json
import os
import pty
import re
import struct
import subprocess
import sys
import termios
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from tqdm import tqdm

from lexgold.annotate.cli import rehearsal_progress
from lexgold.study.db import database_url
from lexgold.annotate.rehearse import rehearse
from lexgold.study.store import create_study
from lexgold.cli import cli
from lexgold.cliutil import Stages, progress_bar, working
from lexgold.process.pipeline import STAGES, run
from lexgold.crowd.simulate import Crowd
from test_annotate_app import protocol_variant, usf_pair_file

REPOSITORY = Path(__file__).resolve().parents[1]


class Terminal(io.StringIO):
    """A stream that says it is a terminal, as stderr is in a shell."""

    def isatty(self):
        return True


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.fixture(scope="module")
def pairs(usf, tmp_path_factory):
    return usf_pair_file(usf, tmp_path_factory.mktemp("pairs") / "pairs.csv",
                         counts=(("N", "N", 60), ("V", "V", 20), ("A", "AJ", 12)))


def _study(folder: Path, pairs, raters_per_tranche=3) -> Path:
    protocol = protocol_variant(folder, "simlex", tranches=2,
                                raters_per_tranche=raters_per_tranche)
    db = folder / "study.sqlite"
    create_study(protocol, pairs, database_url(db), seed=1)
    return db


# -- the rehearsal's progress ------------------------------------------------------------------

def test_rehearse_reports_raters_and_places_as_it_goes(tmp_path, pairs):
    """`progress` is called once before any rater, with the study's places, then once per rater
    who leaves; the places completed only grow, and end at every place."""
    db = _study(tmp_path, pairs)
    calls = []
    result = rehearse(database_url(db), rng=np.random.default_rng(1),
                      crowd=Crowd(spammers=0.0), progress=lambda *c: calls.append(c))
    assert calls[0] == (0, 0, 6)
    assert len(calls) == result["raters"] + 1
    entered = [c[0] for c in calls]
    completed = [c[1] for c in calls]
    assert entered == sorted(entered) and completed == sorted(completed)
    assert calls[-1] == (result["raters"], 6, 6) and result["completed"] == 6


def test_rehearsal_progress_moves_the_bar_by_places_or_by_raters():
    bar = tqdm(file=io.StringIO(), disable=False)
    progress = rehearsal_progress(bar)
    progress(0, 0, 520)
    progress(9, 2, 520)
    progress(12, 5, 530)                          # a top-up added ten places
    assert (bar.n, bar.total) == (5, 530) and "12 raters entered" in bar.postfix
    capped = tqdm(file=io.StringIO(), disable=False)
    progress = rehearsal_progress(capped, max_raters=30)
    for call in [(0, 0, 520), (30, 0, 520), (30, 1, 520), (30, 1, 520)]:
        progress(*call)                           # three raters left (one screened out)
    assert (capped.n, capped.total) == (3, 30) and "1/520 places" in capped.postfix


def _on_a_terminal(*args) -> str:
    """Run `lexgold ARGS` with stderr on a pseudo-terminal (80 x 24): what it showed there."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    environment = {**os.environ, "PYTHONPATH": str(REPOSITORY)}
    process = subprocess.Popen([sys.executable, "-c", "from lexgold.cli import main; main()",
                                *map(str, args)], stdout=subprocess.PIPE, stderr=follower,
                               env=environment, cwd=REPOSITORY)
    os.close(follower)
    shown = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:                           # the terminal closed with the process
            break
        if not chunk:
            break
        shown += chunk
    process.wait(timeout=600)
    os.close(leader)
    assert process.returncode == 0, shown
    return shown.decode("utf-8", "replace")


@pytest.mark.slow                   # rehearsals, on a pseudo-terminal
def test_rehearse_shows_a_bar_on_a_terminal_and_none_with_quiet(tmp_path, pairs):
    db = _study(tmp_path, pairs)
    shown = _on_a_terminal("study", "rehearse", db, "--max-raters", 2, "--seed", 1)
    assert "rehearsal: 2/2 raters done" in shown and "places completed" in shown
    db.unlink()
    for suffix in ("-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    db = _study(tmp_path, pairs)
    assert _on_a_terminal("study", "rehearse", db, "--max-raters", 2, "--seed", 1,
                          "--quiet") == ""


# -- a quick rehearsal and its small release ---------------------------------------------------

def test_quick_rehearsal_then_an_incomplete_release_on_request(tmp_path, pairs):
    """`--max-raters 2` stops early and says how to release what was rated; `process` then
    refuses in one line naming --allow-incomplete, and with it writes the small release. Off a
    terminal, stderr gets no bar: the outputs stay what they were."""
    db = _study(tmp_path, pairs)
    done = invoke("study", "rehearse", db, "--max-raters", 2, "--seed", 1)
    assert done.exit_code == 0, done.output
    assert done.stderr == ""
    lines = done.stdout.splitlines()
    assert len(lines) == 4 and lines[0].startswith("rehearsal of ")
    assert "stopped at --max-raters 2" in lines[3] and "--allow-incomplete" in lines[3]
    refused = invoke("process", db, "--out", tmp_path / "gold", "--no-plots", "--bootstrap", 0)
    assert refused.exit_code == 1
    message = refused.stderr.strip()
    assert "\n" not in message and "incomplete release" in message
    assert "--allow-incomplete" in message and not (tmp_path / "gold").exists()
    released = invoke("process", db, "--out", tmp_path / "gold", "--no-plots", "--bootstrap", 0,
                      "--allow-incomplete")
    assert released.exit_code == 0, released.output
    assert "\r" not in released.stderr and "stage" not in released.stderr
    gold = pd.read_csv(tmp_path / "gold" / "gold.csv")
    report = json.loads((tmp_path / "gold" / "report.json").read_text())
    assert 0 < len(gold) <= 92 and report["warnings"]
    assert report["counts"]["stages"]["raw"]["raters"] == 2


def test_process_reports_its_stages_in_order(tmp_path, pairs):
    db = _study(tmp_path, pairs, raters_per_tranche=2)
    rehearse(database_url(db), rng=np.random.default_rng(1), crowd=Crowd(spammers=0.0))
    stages = []
    run(db, None, tmp_path / "gold", plots=False, bootstrap=0, allow_incomplete=True,
        progress=stages.append)
    assert stages == list(STAGES)


# -- the bars themselves -----------------------------------------------------------------------

def test_a_bar_shows_on_a_terminal_only_and_never_when_quiet(monkeypatch):
    for stream, quiet, shows in [(Terminal(), False, True), (Terminal(), True, False),
                                 (io.StringIO(), False, False)]:
        monkeypatch.setattr(sys, "stderr", stream)
        with progress_bar(quiet, total=4, desc="work") as bar:
            bar.update(3)
        assert ("work" in stream.getvalue()) is shows


def test_stages_name_the_stage_running(monkeypatch):
    stream = Terminal()
    monkeypatch.setattr(sys, "stderr", stream)
    with Stages(["reading", "agreement", "writing"], desc="process") as stages:
        stages("reading")
        stages("agreement")
        assert stages.bar.n == 2
        stages.bar.refresh()
        assert re.search(r"process: stage 2/3 \[\d\d:\d\d, agreement\]", stream.getvalue())
        stages("writing")
        assert stages.bar.n == 3
    quiet = Terminal()
    monkeypatch.setattr(sys, "stderr", quiet)
    with Stages(["reading"], desc="process", quiet=True) as stages:
        stages("reading")
    assert quiet.getvalue() == ""


def test_working_shows_the_command_and_its_time(monkeypatch):
    stream = Terminal()
    monkeypatch.setattr(sys, "stderr", stream)
    with working("build simlex"):
        pass
    assert re.search(r"build simlex \[\d\d:\d\d\]", stream.getvalue())
    stream = Terminal()
    monkeypatch.setattr(sys, "stderr", stream)
    with working("build simlex", quiet=True):
        pass
    assert stream.getvalue() == ""


@pytest.mark.slow                   # two whole SimLex builds
@pytest.mark.parametrize("quiet", [(), ("--quiet",)])
def test_build_prints_its_one_line_and_no_bar_off_a_terminal(tmp_path, quiet):
    done = invoke("build", "simlex", "--seed", 1, "--out", tmp_path / "simlex", *quiet)
    assert done.exit_code == 0, done.output
    assert len(done.stdout.splitlines()) == 1 and done.stdout.startswith("999 pairs")
    assert "build simlex" not in done.stderr and "\r" not in done.stderr
