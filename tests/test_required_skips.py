"""Under scripts/test.sh (LEXGOLD_REQUIRE_ALL=1) or CI, a skip for something missing fails;
a case that does not apply (tests/conftest.py ``not_applicable``) stays a skip."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

CASES = '''
import pytest
from conftest import not_applicable

def test_missing_extra():
    pytest.importorskip("lexgold_no_such_module")

@pytest.mark.skipif(True, reason="needs /usr/bin/no-such-browser")
def test_missing_program():
    pass

def test_missing_server(postgres_url):
    pass

def test_sqlite_case():
    not_applicable("a SQLite study is printed as its path")

def test_runs():
    pass
'''


def _run(tmp_path, **env) -> tuple[int, str]:
    shutil.copy(Path(__file__).with_name("conftest.py"), tmp_path / "conftest.py")
    (tmp_path / "test_cases.py").write_text(CASES)
    (tmp_path / "test_module_skip.py").write_text(
        'import pytest\npytest.importorskip("lexgold_no_such_module")\n')
    environment = {k: v for k, v in os.environ.items()
                   if k not in ("CI", "LEXGOLD_REQUIRE_ALL", "LEXGOLD_TEST_POSTGRES_URL")}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider",
         "--continue-on-collection-errors",
         "--rootdir", str(tmp_path), str(tmp_path)],
        check=False, cwd=tmp_path, env={**environment, **env}, capture_output=True, text=True,
        timeout=300)
    return result.returncode, result.stdout


def _outcomes(output: str) -> dict:
    """``{test or module: PASSED | FAILED | ERROR}`` from pytest's ``-rA`` summary."""
    outcomes = {}
    for line in output.splitlines():
        word, _, rest = line.partition(" ")
        if word in ("PASSED", "FAILED", "ERROR"):
            outcomes[rest.split(" ")[0].split("::")[-1]] = word
    return outcomes


@pytest.mark.parametrize("variable", ["LEXGOLD_REQUIRE_ALL", "CI"])
def test_missing_requirements_fail_where_everything_is_installed(tmp_path, variable):
    status, output = _run(tmp_path, **{variable: "1"})
    outcomes = _outcomes(output)
    assert status == 1, output
    # a skip in the test fails it; one in a fixture or skipif mark is an error at setup, one at
    # module level an error collecting it
    assert outcomes.get("test_missing_extra") == "FAILED", output
    for name in ("test_missing_program", "test_missing_server", "test_module_skip.py"):
        assert outcomes.get(name) == "ERROR", output
    assert output.count("skipped for something missing:") >= 4
    assert outcomes.get("test_runs") == "PASSED", output
    assert "1 failed, 1 passed, 1 skipped, 3 errors" in output, output


def test_missing_requirements_skip_elsewhere(tmp_path):
    status, output = _run(tmp_path)
    assert status == 0 and "1 passed, 5 skipped" in output, output
