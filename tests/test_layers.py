"""The layer order of README's "Layout" table, checked by import-linter: a module imports only
from layers below its own (``[tool.importlinter]`` in pyproject.toml), and no module imports
itself back through others (no import cycle, function-level imports included)."""

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


def contract() -> dict:
    import tomllib

    with open(ROOT / "pyproject.toml", "rb") as handle:
        return tomllib.load(handle)["tool"]["importlinter"]


def test_every_package_is_in_the_contract_and_none_is_excepted():
    """Every subpackage and top-level module of lexgold has its layer; no import is let through."""
    settings = contract()
    layered = {name.strip() for layer in settings["contracts"][0]["layers"]
               for name in layer.split(":")}
    top = {f"lexgold.{p.stem if p.is_file() else p.name}" for p in (ROOT / "lexgold").iterdir()
           if (p.is_file() and p.suffix == ".py" and p.stem != "__init__")
           or (p.is_dir() and (p / "__init__.py").exists())}
    covered = {name for name in top if name in layered
               or any(entry.startswith(name + ".") for entry in layered)}
    assert top - covered == set()
    assert not settings["contracts"][0].get("ignore_imports")


def cycles(source_root: Path) -> list[list[str]]:
    """The import cycles among ``lexgold``'s modules under ``source_root`` (strongly connected
    components of grimp's import graph, function-level imports included)."""
    code = ("import grimp, json, sys\n"
            "sys.setrecursionlimit(10000)\n"
            "g = grimp.build_graph('lexgold', cache_dir=None)\n"
            "index, low, stack, on, out = {}, {}, [], set(), []\n"
            "def visit(v):\n"
            "    index[v] = low[v] = len(index); stack.append(v); on.add(v)\n"
            "    for w in g.find_modules_directly_imported_by(v):\n"
            "        if w not in index:\n"
            "            visit(w); low[v] = min(low[v], low[w])\n"
            "        elif w in on:\n"
            "            low[v] = min(low[v], index[w])\n"
            "    if low[v] == index[v]:\n"
            "        part = []\n"
            "        while True:\n"
            "            w = stack.pop(); on.discard(w); part.append(w)\n"
            "            if w == v: break\n"
            "        if len(part) > 1: out.append(sorted(part))\n"
            "for v in sorted(g.modules):\n"
            "    if v not in index: visit(v)\n"
            "print(json.dumps(out))\n")
    import json

    env = {**os.environ, "PYTHONPATH": str(source_root)}
    done = subprocess.run([sys.executable, "-c", code], cwd=source_root, env=env,
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def test_no_module_imports_itself_back():
    assert cycles(ROOT) == []


def test_an_injected_cycle_is_found(tmp_path):
    shutil.copytree(ROOT / "lexgold", tmp_path / "lexgold",
                    ignore=shutil.ignore_patterns("data", "templates", "static", "*.toml",
                                                  "*.txt", "__pycache__"))
    compression = tmp_path / "lexgold" / "compression.py"     # tables imports compression
    compression.write_text(compression.read_text(encoding="utf-8")
                           + "\n\ndef _back():\n    from lexgold import tables\n"
                           "    return tables\n", encoding="utf-8")
    found = cycles(tmp_path)
    assert ["lexgold.compression", "lexgold.tables"] in found
