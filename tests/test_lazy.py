"""lexgold.lazy.lazy_api: a package's names loaded on first use and kept (PEP 562)."""

import sys

import pytest

PACKAGE = "lazy_probe_pkg"


@pytest.fixture
def package(tmp_path, monkeypatch):
    """A package whose ``__init__`` declares one lazy name, defined in a submodule."""
    root = tmp_path / PACKAGE
    root.mkdir()
    (root / "__init__.py").write_text(
        "from lexgold.lazy import lazy_api\n"
        "EAGER = 1\n"
        "_API = {'answer': 'deep'}\n"
        "__all__ = ['EAGER', *_API]\n"
        "__getattr__, __dir__ = lazy_api(__name__, _API, globals())\n", encoding="utf-8")
    (root / "deep.py").write_text(
        "def answer():\n    return 42\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield __import__(PACKAGE)
    for name in (PACKAGE, f"{PACKAGE}.deep"):
        sys.modules.pop(name, None)


def test_a_name_is_imported_on_first_use_and_kept(package):
    assert f"{PACKAGE}.deep" not in sys.modules and "answer" not in vars(package)
    assert package.answer() == 42
    assert f"{PACKAGE}.deep" in sys.modules
    # kept in the package's globals, where later look-ups find it without __getattr__
    assert vars(package)["answer"] is sys.modules[f"{PACKAGE}.deep"].answer
    from lazy_probe_pkg import answer
    assert answer is package.answer


def test_an_unknown_name_raises_attribute_error(package):
    with pytest.raises(AttributeError) as caught:
        package.question                    # noqa: B018
    assert str(caught.value) == f"module {PACKAGE!r} has no attribute 'question'"
    assert not hasattr(package, "deep_thought")
    assert f"{PACKAGE}.deep" not in sys.modules


def test_dir_lists_all_before_any_name_is_loaded(package):
    names = dir(package)
    assert {"EAGER", "answer"} <= set(names) and names == sorted(names)
    assert f"{PACKAGE}.deep" not in sys.modules


def test_a_lexgold_package_names_itself_in_the_error_and_lists_its_api():
    import lexgold.process

    with pytest.raises(AttributeError, match="^module 'lexgold.process' has no attribute 'nope'$"):
        lexgold.process.nope                # noqa: B018
    assert set(lexgold.process.__all__) <= set(dir(lexgold.process))
