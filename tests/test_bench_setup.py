"""The benchmarks run after the documented set-up (issue 25): every module a script in bench/
imports is the standard library's, lexgold's, or installed by ``bash scripts/setup.sh`` (and
by ``--test``)."""

import ast
import re
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: import name -> distribution name, where they differ
DISTRIBUTIONS = {"sklearn": "scikit-learn", "yaml": "pyyaml", "wn": "wn", "psycopg": "psycopg"}


def _requirement_names(requirements):
    return {re.split(r"[\[<>=~! ;]", r, maxsplit=1)[0].lower() for r in requirements}


def _installed_by_setup(flag: str) -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    script = (ROOT / "scripts" / "setup.sh").read_text()
    indent = "    " if flag == "--test" else ""      # the --test branch's line is indented
    line = re.search(rf'^{indent}extras="\[([^\]]*)\]"', script, re.MULTILINE)
    extras = line.group(1).split(",")
    names = _requirement_names(project["dependencies"])
    for extra in extras:
        names |= _requirement_names(project["optional-dependencies"][extra.strip()])
    return names


def _third_party_imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    local = {p.stem for p in (ROOT / "bench").glob("*.py")}
    return {name for name in found
            if name not in sys.stdlib_module_names and name != "lexgold" and name not in local}


@pytest.mark.parametrize("flag", ["", "--test"])
@pytest.mark.parametrize("script", sorted((ROOT / "bench").glob("*.py")), ids=lambda p: p.name)
def test_bench_imports_are_installed_by_the_documented_setup(script, flag):
    installed = _installed_by_setup(flag)
    missing = {name for name in _third_party_imports(script)
               if DISTRIBUTIONS.get(name, name).lower() not in installed}
    assert missing == set(), f"bash scripts/setup.sh {flag} does not install {missing}"


def test_the_check_reads_the_setup_script():
    assert "httpx" in _installed_by_setup("")
    assert "pytest" in _installed_by_setup("--test")
    assert "httpx" in _third_party_imports(ROOT / "bench" / "load_test.py")
