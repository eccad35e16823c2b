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
