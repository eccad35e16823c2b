"""deploy/Dockerfile and the no-systemd path of deploy/README.md, as far as CI can run them
(issue 34 item 7): CI has no container engine, so the image is not built; what the image runs is.

- the image is Debian's and installs lexgold from the clone it is built in;
- its command, with the study, admin password and key from an environment file loaded as the
  README's ``set -a; . FILE; set +a`` loads it, serves a study (``--check``: waitress starts,
  the entry page answers 200) on SQLite.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from lexgold.study.db import database_url
from lexgold.study.store import create_study
from lexgold.crowd.simulate import usf_pairs

pytestmark = pytest.mark.slow            # deploy: runs the image's command, a served study

ROOT = Path(__file__).resolve().parents[1]
DOCKERFILE = ROOT / "deploy" / "Dockerfile"


def instructions() -> list[tuple[str, str]]:
    """(instruction, arguments) of the Dockerfile, continuation lines joined."""
    text = re.sub(r"\\\n", " ", DOCKERFILE.read_text(encoding="utf-8"))
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1])
            for line in text.splitlines() if line.strip() and not line.startswith("#")]


def test_image_is_debian_and_installs_lexgold_from_its_clone():
    steps = instructions()
    assert steps[0][0] == "FROM" and steps[0][1].startswith("debian:")
    copy = next(args for kind, args in steps if kind == "COPY")
    assert copy.split()[-2:] == [".", "/srv/lexgold/lexgold"]
    assert any(kind == "RUN" and "pip install" in args and "./lexgold[postgres]" in args
               for kind, args in steps)
    assert ("USER", "lexgold") in steps


def test_the_images_command_serves_a_study_from_an_environment_file(tmp_path, usf):
    command = json.loads(next(args for kind, args in instructions() if kind == "CMD"))
    assert command[:2] == ["/srv/lexgold/.venv/bin/lexgold", "serve"] and "--port" in command
    # this machine's lexgold for the image's, and any free port for its 8000
    command[0] = str(Path(sys.executable).parent / "lexgold")
    command[command.index("--port") + 1] = "0"

    pairs = usf_pairs(60, rng=np.random.default_rng(1), usf=usf)
    pairs.to_csv(tmp_path / "pairs.csv", index=False)
    study = tmp_path / "study.sqlite"
    create_study("simlex", tmp_path / "pairs.csv", database_url(study), seed=1)
    key = tmp_path / "secret.key"
    made = subprocess.run([command[0], "study", "secret", "--out", str(key)],
                          capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    env_file = tmp_path / "lexgold.env"
    env_file.write_text(f"LEXGOLD_DATABASE_URL=sqlite:///{study}\n"
                        f"LEXGOLD_ADMIN_PASSWORD=choose-a-long-one\n"
                        f"LEXGOLD_SECRET_KEY_FILE={key}\n")
    env_file.chmod(0o600)
    script = f'set -a; . "{env_file}"; set +a; exec "$@" --check'
    served = subprocess.run(["bash", "-c", script, "bash", *command], capture_output=True,
                            text=True, timeout=300)
    assert served.returncode == 0, served.stdout + served.stderr
    assert "entry page OK (HTTP 200)" in served.stdout + served.stderr
    assert "choose-a-long-one" not in served.stdout + served.stderr


def _ignored(pattern_lines: list[str], path: str) -> bool:
    """Whether Docker's build context leaves ``path`` out: its patterns are Go's filepath.Match
    from the context's root, ``**`` any number of folders, a folder's pattern covering its
    contents; close enough here with fnmatch on each leading part of the path."""
    import fnmatch
    parts = path.split("/")
    prefixes = ["/".join(parts[:n]) for n in range(1, len(parts) + 1)]
    for pattern in pattern_lines:
        options = {pattern, pattern.replace("**/", "")} if pattern.startswith("**/") else {pattern}
        for option in options:
            if pattern.startswith("**/"):
                if any(fnmatch.fnmatch(part, option) for part in parts):
                    return True
            elif any(fnmatch.fnmatchcase(prefix, option) for prefix in prefixes):
                return True
    return False


def test_the_build_context_leaves_out_environments_studies_and_keys():
    ignore = ROOT / ".dockerignore"
    assert ignore.is_file(), "no .dockerignore: the build context would take .venv and keys"
    patterns = [line.strip() for line in ignore.read_text(encoding="utf-8").splitlines()
                if line.strip() and not line.startswith("#")]
    for path in (".venv/bin/python", ".git/HEAD", "quickstart-out/secret.key",
                 "quickstart-out/study.sqlite", "study.sqlite", "studies/pilot.sqlite",
                 "secret.key", "deploy/secret.key", "lexgold/__pycache__/cli.cpython-311.pyc",
                 ".pytest_cache/v/cache", "lexgold.env"):
        assert _ignored(patterns, path), path
    for path in ("pyproject.toml", "lexgold/cli.py", "lexgold/builder/simlex.py",
                 "lexgold/protocols/simlex999.toml", "deploy/Dockerfile", "README.md"):
        assert not _ignored(patterns, path), path


def test_the_container_reads_the_hosts_key_and_reaches_the_hosts_database():
    """The host's key is root:lexgold 0640 with the host's group number, which the image's own
    lexgold user lacks; 127.0.0.1 in a bridged container is the container."""
    readme = (ROOT / "deploy" / "README.md").read_text(encoding="utf-8")
    run = readme.split("docker run -d --name lexgold", 1)[1].split("```", 1)[0]
    assert '--group-add "$(getent group lexgold | cut -d: -f3)"' in run
    assert "--add-host host.docker.internal:host-gateway" in run
    assert "@host.docker.internal/study" in readme and "--network host" in readme
    header = DOCKERFILE.read_text(encoding="utf-8")
    assert "--group-add" in header and "host.docker.internal" in header
