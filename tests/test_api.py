"""The Python API: each package's ``__all__`` resolves, costs nothing to import, and is the list
docs/contract.md ("Python API") gives."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ["process", "ratings", "crowd", "builder", "languages", "resources", "prolific",
            "protocols", "evaluate", "study", "machine", "live", "annotate"]


def contract_rows() -> dict[str, list[str]]:
    """``package -> names`` of the table under "## Python API" in docs/contract.md."""
    text = (ROOT / "docs" / "contract.md").read_text(encoding="utf-8")
    section = text.split("## Python API", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0].startswith("`lexgold."):
            rows[cells[0].strip("`")] = re.findall(r"`([^`]+)`", cells[2])
    return rows


@pytest.mark.parametrize("name", PACKAGES)
def test_every_declared_name_resolves(name):
    package = importlib.import_module(f"lexgold.{name}")
    assert package.__all__ and len(set(package.__all__)) == len(package.__all__)
    for attribute in package.__all__:
        assert getattr(package, attribute) is not None, attribute
    with pytest.raises(AttributeError, match="no attribute"):
        package.no_such_name                # noqa: B018


@pytest.mark.parametrize("name", PACKAGES)
def test_the_contract_lists_each_package_api(name):
    package = importlib.import_module(f"lexgold.{name}")
    assert contract_rows().get(f"lexgold.{name}") == list(package.__all__)


def test_importing_a_package_imports_no_library():
    # the names are imported on first use: a command line that imports one package to register
    # its commands pays for none of pandas, numpy, scipy, SQLAlchemy, Flask, NLTK
    code = ("import sys\n" + "".join(f"import lexgold.{name}\n" for name in PACKAGES)
            + "print(sorted(m for m in ('pandas', 'numpy', 'scipy', 'sqlalchemy', 'flask', "
              "'nltk') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]"
    # and a name, once used, imports its module
    out = subprocess.run([sys.executable, "-c", "import sys, lexgold.process as p; "
                          "p.process_ratings; print('pandas' in sys.modules)"],
                         capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "True"


#: public names that more than one module defines, each for a reason a reader sees at once:
#: Alembic's migration entry points, a click command beside the library function it runs
#: (same name, same thing), click commands named as their commands (``lexgold simulate``,
#: ``lexgold translate simulate``), Flask views of two blueprints (``admin.move``,
#: ``rater.move``), the per-builder settings readers, a lazy re-export, and the helpers of the
#: crowd's commands that part B of issue 44 moves and merges
SHARED_NAMES = {
    "upgrade", "downgrade",                                       # Alembic, every migration
    "adjudicate", "export_sheets", "import_sheets",               # command = its function
    "simulate",                                                   # two commands
    "move",                                                       # blueprint views
    "check_settings", "load_settings",                            # builder/simlex, hyperlex
    "shown",                                                      # annotate.server re-export
    "replay",                                                     # command = its function
}


def defined_public_names() -> dict[str, list[str]]:
    """Top-level ``def``/``class`` names not starting with ``_`` -> the modules defining them."""
    import ast

    where: dict[str, list[str]] = {}
    for path in sorted((ROOT / "lexgold").rglob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                    and not node.name.startswith("_"):
                where.setdefault(node.name, []).append(str(path.relative_to(ROOT)))
    return where


def test_one_name_per_public_thing():
    """Two different things under one public name send a reader to the wrong module (three
    ``split_half`` computed three figures): a name defined in two modules is either renamed
    for what each computes or listed in :data:`SHARED_NAMES` with its reason."""
    shared = {name for name, modules in defined_public_names().items() if len(modules) > 1}
    assert shared - SHARED_NAMES == set()
