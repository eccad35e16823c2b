"""Security round 3, item 10's leftovers (docs/hardening.md, "Items 8, 9, 10"): a study on a
read-only filesystem, raters of a study made before browser binding after ``study upgrade``,
and the admin view's agreement warnings. Each test failed before its fix."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from test_hardening_security import answer_page, pairs, rater_client, small_study  # noqa: F401

from lexgold.annotate.db import database_url, sqlite_write_problem

LEXGOLD = str(Path(sys.executable).with_name("lexgold"))


# -- a study this user cannot write --------------------------------------------------------------

def as_unprivileged(command: list[str]) -> list[str]:
    """``command`` run so that file permissions apply to it.

    The tests run as root, which ignores them through the capabilities CAP_DAC_OVERRIDE and
    CAP_DAC_READ_SEARCH. ``setpriv`` (util-linux, in Debian's essential set) drops both from
    the bounding set, so the command stays root (it can still run this Python, which lives in
    root's 0700 home) but reads and writes as a plain owner: a file or folder without a ``w``
    bit is unwritable to it, as on a read-only mount or for a service user without permission.
    A mode=ro SQLite URI was not used: it reproduces the error but not the path a user takes
    (a plain path to a study they cannot write). As another user, chmod alone is enough."""
    if os.geteuid() != 0:
        return command
    setpriv = shutil.which("setpriv")
    assert setpriv, "setpriv (util-linux) is needed to drop root's file-permission override"
    drop = "-dac_override,-dac_read_search"
    return [setpriv, f"--bounding-set={drop}", f"--inh-caps={drop}", *command]


@pytest.fixture(params=["folder", "file"])
def unwritable_study(request, tmp_path, pairs):
    """A study with a rater's answers, then its folder and file (or the file only) made
    read-only; permissions restored afterwards."""
    url = small_study(tmp_path, pairs)
    from test_annotate_app import enter, make_app, page
    app = make_app(url)
    client = app.test_client()
    enter(client)
    for _ in range(3):
        _, position, ids, checkpoint = page(client)
        data = {"choice": 0} if checkpoint else {f"r{i}": 2 for i in ids}
        client.post("/step", data={"position": position, **data})
    from test_annotate_app import answers
    expected = answers(app)
    app.extensions["lexgold_engine"].dispose()
    study = tmp_path / "security.sqlite"
    from lexgold.annotate.db import checkpoint_sqlite
    checkpoint_sqlite(url)
    for side in ("-wal", "-shm"):                  # as after `lexgold serve` stops cleanly
        Path(f"{study}{side}").unlink(missing_ok=True)
    study.chmod(0o444)
    if request.param == "folder":
        tmp_path.chmod(0o555)
    yield study, request.param, expected
    tmp_path.chmod(0o755)
    study.chmod(0o644)


def run_lexgold(*args, cwd=None):
    env = {**os.environ, "LEXGOLD_ADMIN_PASSWORD": "x" * 12}
    return subprocess.run(as_unprivileged([LEXGOLD, *map(str, args)]), capture_output=True,
                          text=True, timeout=120, env=env, cwd=cwd, check=False)


def test_a_study_it_cannot_write_is_read_by_export_and_report_and_named_by_serve(
        unwritable_study, tmp_path_factory):
    """Before: `serve`, `study export` and `study report` all said "not a lexgold study
    database (attempt to write a readonly database)"."""
    study, kind, expected = unwritable_study
    out = tmp_path_factory.mktemp("export-out")
    out.chmod(0o777)
    served = run_lexgold("serve", study, "--port", "0", "--check")
    lines = served.stderr.strip().splitlines()
    assert served.returncode == 1 and len(lines) == 1, served.stderr
    where = f"the folder {study.parent}" if kind == "folder" else str(study)
    assert lines[0] == (f"Error: {study}: cannot write to the study database (permission "
                        f"denied on {where}): attempt to write a readonly database")
    assert "not a lexgold study database" not in served.stderr
    exported = run_lexgold("study", "export", study, "--out", out / "ratings.csv")
    assert exported.returncode == 0, exported.stderr
    assert len(pd.read_csv(out / "ratings.csv")) == 0       # one rater, unfinished
    everyone = run_lexgold("study", "export", study, "--out", out / "all.csv", "--all-raters")
    assert everyone.returncode == 0, everyone.stderr
    exported = pd.read_csv(out / "all.csv", keep_default_na=False, dtype={"rater_id": str})
    assert len(expected) > 10 and len(exported) == len(expected)
    assert exported["rating"].tolist() == expected["rating"].tolist()
    reported = run_lexgold("study", "report", study)
    assert reported.returncode == 0, reported.stderr
    assert json.loads(reported.stdout)["completion_code"] == "SEC-OK"
    assert sorted(p.name for p in study.parent.iterdir() if p.name.startswith(study.name)) \
        == sorted([study.name] + ([] if kind == "folder" else
                                  [f"{study.name}-shm", f"{study.name}-wal"]))


def test_a_read_only_file_system_is_named(tmp_path, monkeypatch):
    study = tmp_path / "study.sqlite"
    study.write_bytes(b"")
    assert sqlite_write_problem(study) is None

    class ReadOnly:
        f_flag = os.ST_RDONLY

    monkeypatch.setattr(os, "statvfs", lambda _path: ReadOnly())
    assert sqlite_write_problem(study) == f"read-only file system at {tmp_path}"
    assert database_url(study).startswith("sqlite:///")
