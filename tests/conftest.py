"""Shared fixtures: the real resources, loaded once per test session; hypothesis profiles.

Hypothesis profiles (``HYPOTHESIS_PROFILE`` selects one; under ``CI`` the default is ``ci``):

- ``ci``: derandomized (the examples are a function of the test alone) and no example database,
  so a red CI run fails the same way on any machine: rerun it with ``HYPOTHESIS_PROFILE=ci``.
- ``dev`` (default outside CI): random examples, remembered in ``.hypothesis/`` as usual.
- ``deep``: random, 20 times the examples of each test, for a nightly-style search.

Under the README's test command (``scripts/test.sh``, which sets ``LEXGOLD_REQUIRE_ALL=1``; CI
runs it through ``.ci/run``) or whenever ``CI`` is set, nothing the tests need may be missing: a
test skipped for a missing program, extra or server (``pytest.importorskip``, a ``skipif`` on
Chromium, no ``LEXGOLD_TEST_POSTGRES_URL``) fails instead. A case that does not apply (a
PostgreSQL-only check in a test parametrized over SQLite too) skips with :func:`not_applicable`,
which stays a skip.

The fast tier, ``pytest -m "not slow"`` (README, "Testing"): the tests of a browser, a PostgreSQL
server or a document are ``slow`` (:data:`SLOW_BY_MARK`), other slow tests are marked in their
files; a run of the whole fast tier fails when it left a module of lexgold unimported.
"""

import csv
import os
import sys
from pathlib import Path

import pytest
from hypothesis import settings

settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
settings.register_profile("dev", print_blob=True)
settings.register_profile("deep", database=None, print_blob=True)
PROFILE = os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev")
settings.load_profile(PROFILE)

#: skips for something missing are failures (scripts/test.sh, CI)
REQUIRE_ALL = any(os.environ.get(name, "").strip() not in ("", "0", "false")
                  for name in ("CI", "LEXGOLD_REQUIRE_ALL"))
#: the reason prefix of a skip that stays a skip under REQUIRE_ALL
NOT_APPLICABLE = "not applicable: "


def not_applicable(reason: str):
    """Skip a case that does not apply (not one whose requirement is missing)."""
    pytest.skip(NOT_APPLICABLE + reason)


def _missing(report) -> str | None:
    """The reason of a skip for something missing, or None for any other report."""
    if not report.skipped or hasattr(report, "wasxfail"):
        return None
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    reason = reason.removeprefix("Skipped: ")
    return None if reason.startswith(NOT_APPLICABLE) else reason


def _as_failure(report, reason: str) -> None:
    report.outcome = "failed"
    report.longrepr = (f"skipped for something missing: {reason} (under scripts/test.sh or CI "
                       f"nothing the tests need may be missing: `bash scripts/setup.sh --test` "
                       f"installs it, scripts/test.sh starts PostgreSQL)")


#: marks whose tests are slow by nature (a browser, a PostgreSQL server, a document's walk-through):
#: the hook below marks them ``slow`` too; other slow tests carry ``slow`` in their own file
SLOW_BY_MARK = ("browser", "postgres", "docs")
#: the fast tier (README, Testing): every module of lexgold must be imported while it runs
FAST_TIER = "not slow"


@pytest.hookimpl(tryfirst=True)          # before ``-m`` deselects by the marks
def pytest_addoption(parser):
    parser.addoption("--reverse", action="store_true",
                     help="run the collected tests in reverse order: a test that passes only "
                          "after another one (its side effects) fails (scripts/test-under-load.sh)")


def pytest_collection_modifyitems(config, items):
    for item in items:
        if any(item.get_closest_marker(name) for name in SLOW_BY_MARK):
            item.add_marker(pytest.mark.slow)
    if config.getoption("--reverse"):
        items.reverse()


def package_modules(root: Path) -> set[str]:
    """Every importable module of the package in folder ``root``: files in folders with an
    ``__init__.py`` all the way up (not Alembic's scripts in ``lexgold/study/migrations``, which are
    loaded by path, whenever a test makes a study)."""
    names = set()
    for path in root.rglob("*.py"):
        parts = path.relative_to(root.parent).with_suffix("").parts
        if all((root.parent.joinpath(*parts[:i]) / "__init__.py").exists()
               for i in range(1, len(parts))):
            names.add(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def _whole_fast_tier(session) -> bool:
    """Whether this run is the whole fast tier: ``-m "not slow"`` over the whole suite, run (not
    only collected), no other selection, not stopped early."""
    option, tests = session.config.option, Path(__file__).parent
    here = session.config.invocation_params.dir
    return (" ".join((option.markexpr or "").split()) == FAST_TIER and not option.keyword
            and not getattr(option, "collectonly", False)
            and not getattr(option, "deselect", None) and not getattr(option, "lf", False)
            and not session.shouldstop
            and all((here / arg.split("::")[0]).resolve() in (tests, tests.parent)
                    for arg in session.config.args))


_imported_by_workers: set[str] = set()


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """pytest-xdist: what a worker imported (it runs its share of the tests in its own process)."""
    _imported_by_workers.update(getattr(node, "workeroutput", {}).get("lexgold_modules", ()))


def pytest_sessionfinish(session, exitstatus):
    imported = {name for name in sys.modules if name == "lexgold" or name.startswith("lexgold.")}
    if hasattr(session.config, "workeroutput"):            # an xdist worker: tell the controller
        session.config.workeroutput["lexgold_modules"] = sorted(imported)
        return
    if exitstatus not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED) \
            or not _whole_fast_tier(session):
        return
    import lexgold
    missing = sorted(package_modules(Path(lexgold.__file__).parent) - imported
                     - _imported_by_workers)
    if missing:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        message = (f"the fast tier imported no module {', '.join(missing)}: give each a test "
                   f"outside the slow tier (tests/conftest.py, FAST_TIER)")
        if reporter is not None:
            reporter.write_sep("=", message, red=True)
        else:
            sys.stderr.write(message + "\n")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    report = (yield).get_result()
    reason = _missing(report) if REQUIRE_ALL else None
    if reason is not None:
        _as_failure(report, reason)


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    report = (yield).get_result()
    reason = _missing(report) if REQUIRE_ALL else None
    if reason is not None:                  # a module-level importorskip
        _as_failure(report, reason)


def examples(n: int) -> int:
    """``max_examples`` for a property test: ``n``, or 20 n under the ``deep`` profile."""
    return 20 * n if PROFILE == "deep" else n


@pytest.fixture(scope="session", autouse=True)
def lexgold_cache(tmp_path_factory):
    """lexgold's cache (WordNet layout, WordNet graph, MultiWordNet files) in a folder of the
    test session, never the user's ~/.cache/lexgold."""
    folder = tmp_path_factory.mktemp("lexgold-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LEXGOLD_CACHE", str(folder))
        yield folder


@pytest.fixture(scope="session")
def usf():
    from lexgold.resources import read_usf
    return read_usf()


@pytest.fixture(scope="session")
def brysbaert():
    from lexgold.resources import read_brysbaert
    return read_brysbaert()


@pytest.fixture(scope="session")
def wordnet():
    from lexgold.resources import load_wordnet
    return load_wordnet()


@pytest.fixture(scope="session")
def postgres_url():
    """URL of the real PostgreSQL server started by scripts/test.sh; required there and
    under CI (see REQUIRE_ALL)."""
    url = os.environ.get("LEXGOLD_TEST_POSTGRES_URL")
    if not url:
        pytest.skip("no PostgreSQL server (set LEXGOLD_TEST_POSTGRES_URL; scripts/test.sh "
                    "starts one)")
    return url


@pytest.fixture(autouse=True)
def _csv_field_size_limit():
    """Give every test Python's own CSV field limit back: frictionless' ``validate`` raises it
    for the whole process, which made the "field larger than field limit" test depend on order."""
    limit = csv.field_size_limit()
    yield
    csv.field_size_limit(limit)
