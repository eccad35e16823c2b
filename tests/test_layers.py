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


def layer_entries() -> list[list[str]]:
    """The contract's layers, top first, each a list of its (independent) module names."""
    return [[name.strip() for name in layer.split(":")]
            for layer in contract()["contracts"][0]["layers"]]


def modules(source_root: Path) -> dict[str, Path]:
    """Every module of the ``lexgold`` under ``source_root`` (``lexgold/**/*.py``) by dotted
    name; a package is its ``__init__``. A folder without an ``__init__`` is no package (the
    Alembic scripts of ``lexgold/study/migrations``, which Alembic loads by path): its files
    are not modules of lexgold."""
    found = {}
    for path in sorted((source_root / "lexgold").rglob("*.py")):
        folders = path.relative_to(source_root).parents
        if any(not (source_root / folder / "__init__.py").exists()
               for folder in folders if folder != Path(".")):
            continue
        parts = path.relative_to(source_root).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def lexgold_imports(path: Path) -> set[str]:
    """The lexgold modules a file imports anywhere (function-level imports included)."""
    import ast

    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names |= {node.module} | {f"{node.module}.{alias.name}" for alias in node.names}
    return {name for name in names if name.split(".")[0] == "lexgold"}


def uncovered(source_root: Path) -> list[str]:
    """Modules that no layer of the contract covers (neither the module nor a package above
    it is an entry). A package split across layers (``lexgold.ratings``) is itself covered
    only while its ``__init__`` imports nothing but the bottom layer (its lazy API)."""
    layers = layer_entries()
    entries = {name for layer in layers for name in layer}
    bottom = set(layers[-1])

    def covered(name: str) -> bool:
        parts = name.split(".")
        return any(".".join(parts[:i]) in entries for i in range(1, len(parts) + 1))

    def bottom_only(path: Path) -> bool:
        return all(any(name == low or name.startswith(low + ".") for low in bottom)
                   for name in lexgold_imports(path))

    return sorted(name for name, path in modules(source_root).items() if not covered(name)
                  and not (path.name == "__init__.py" and bottom_only(path)))


def test_every_module_is_in_the_contract_and_none_is_excepted():
    """Every module of lexgold (``lexgold/**/*.py``) has its layer; no import is let through."""
    assert uncovered(ROOT) == []
    assert not contract()["contracts"][0].get("ignore_imports")


def test_a_new_module_of_a_split_package_is_found(tmp_path):
    """The check is not vacuous: a module added under ``lexgold/study/`` (whose modules are
    layered one by one) without a layer entry is reported, and so is a split package's
    ``__init__`` that imports from a layer above the bottom one."""
    shutil.copytree(ROOT / "lexgold", tmp_path / "lexgold",
                    ignore=shutil.ignore_patterns("data", "templates", "static", "*.toml",
                                                  "*.txt", "__pycache__", "migrations"))
    (tmp_path / "lexgold" / "study" / "new.py").write_text('"""New."""\n', encoding="utf-8")
    assert uncovered(tmp_path) == ["lexgold.study.new"]
    init = tmp_path / "lexgold" / "study" / "__init__.py"
    init.write_text(init.read_text(encoding="utf-8") + "\nfrom lexgold.stats import spearman\n",
                    encoding="utf-8")
    assert uncovered(tmp_path) == ["lexgold.study", "lexgold.study.new"]


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
