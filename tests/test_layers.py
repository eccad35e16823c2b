"""The layer order of README's "Layout" table, checked by import-linter (issue 25): a module
imports only from layers below its own (``[tool.importlinter]`` in pyproject.toml)."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINT = Path(sys.executable).parent / "lint-imports"


def lint(source_root: Path) -> subprocess.CompletedProcess:
    """``lint-imports`` with the project's contract over the ``lexgold`` under ``source_root``."""
    env = {**os.environ, "PYTHONPATH": str(source_root)}
    return subprocess.run([str(LINT), "--config", str(ROOT / "pyproject.toml"), "--no-cache"],
                          cwd=source_root, env=env, capture_output=True, text=True, check=False)


def test_the_package_keeps_its_layers():
    result = lint(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 kept, 0 broken" in result.stdout


def test_a_forbidden_import_breaks_the_contract(tmp_path):
    """The contract is not vacuous: the builder importing the study site, even inside a
    function (where cycles used to hide), is reported with its line."""
    shutil.copytree(ROOT / "lexgold", tmp_path / "lexgold",
                    ignore=shutil.ignore_patterns("data", "templates", "static", "*.toml",
                                                  "*.txt", "__pycache__"))
    common = tmp_path / "lexgold" / "builder" / "common.py"
    common.write_text(common.read_text(encoding="utf-8")
                      + "\n\ndef _study():\n    from lexgold.live import figures\n"
                      "    return figures\n", encoding="utf-8")
    result = lint(tmp_path)
    assert result.returncode != 0
    assert "lexgold.builder.common -> lexgold.live.figures" in result.stdout
    assert "0 kept, 1 broken" in result.stdout
