"""The fast tier, ``pytest -m "not slow"`` (README, "Testing"): tests/conftest.py marks the tests
of a browser, a PostgreSQL server or a document ``slow``, and at the end of a run of the whole fast
tier fails it when a module of lexgold was never imported (in any xdist worker). Here, that
machinery on hand-made cases; the check itself runs with the fast tier."""

from types import SimpleNamespace

from conftest import FAST_TIER, _whole_fast_tier, package_modules, pytest_collection_modifyitems


def test_package_modules_are_the_importable_files(tmp_path):
    package = tmp_path / "pkg"
    for folder in ("sub", "scripts", "sub/data"):
        (package / folder).mkdir(parents=True)
    for name in ("__init__.py", "a.py", "sub/__init__.py", "sub/b.py", "scripts/env.py",
                 "sub/data/c.py"):
        (package / name).write_text("")
    assert package_modules(package) == {"pkg", "pkg.a", "pkg.sub", "pkg.sub.b"}


class Item:
    def __init__(self, *marks):
        self.marks = set(marks)

    def get_closest_marker(self, name):
        return name if name in self.marks else None

    def add_marker(self, mark):
        self.marks.add(mark.name)


class Options:
    def __init__(self, reverse=False):
        self.reverse = reverse

    def getoption(self, name):
        assert name == "--reverse"
        return self.reverse


def test_browser_postgres_and_docs_tests_are_slow():
    items = [Item(), Item("browser"), Item("postgres", "timeout"), Item("docs"), Item("timeout")]
    pytest_collection_modifyitems(Options(), items)
    assert ["slow" in item.marks for item in items] == [False, True, True, True, False]


def test_reverse_runs_the_tests_last_to_first():
    """``--reverse`` (scripts/test-under-load.sh): a test leaning on an earlier one's side
    effects runs before it."""
    items = [Item(), Item("browser"), Item("docs")]
    pytest_collection_modifyitems(Options(reverse=True), items)
    assert [sorted(item.marks) for item in items] == [["docs", "slow"], ["browser", "slow"], []]


def session(here, args, markexpr=FAST_TIER, keyword="", stop=False, collectonly=False):
    config = SimpleNamespace(option=SimpleNamespace(markexpr=markexpr, keyword=keyword,
                                                    collectonly=collectonly),
                             args=args, invocation_params=SimpleNamespace(dir=here))
    return SimpleNamespace(config=config, shouldstop=stop)


def test_the_module_check_runs_only_on_the_whole_fast_tier(request):
    tests = request.config.rootpath / "tests"
    root = tests.parent
    assert _whole_fast_tier(session(root, ["tests"]))
    assert _whole_fast_tier(session(tests, ["."], markexpr=" not  slow "))
    assert _whole_fast_tier(session(root, [str(root)]))
    assert not _whole_fast_tier(session(root, ["tests"], markexpr=""))          # everything
    assert not _whole_fast_tier(session(root, ["tests"], markexpr="not slow and not x"))
    assert not _whole_fast_tier(session(root, ["tests/test_stats.py"]))
    assert not _whole_fast_tier(session(root, ["tests"], keyword="stats"))
    assert not _whole_fast_tier(session(root, ["tests"], stop="-x"))
    assert not _whole_fast_tier(session(root, ["tests"], collectonly=True))


def test_lexgold_itself_is_read(request):
    modules = package_modules(request.config.rootpath / "lexgold")
    assert {"lexgold", "lexgold.cli", "lexgold.process.pipeline"} <= modules
    assert not any(name.startswith("lexgold.migrations") for name in modules)
