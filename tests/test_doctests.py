"""The worked examples in the docstrings of every lexgold module run and give what they say.

One test per module found by :func:`pkgutil.walk_packages`, so a new module's examples run
without being listed here; a module without examples passes.
"""

import doctest
import importlib
import pkgutil

import pytest

import lexgold

MODULES = sorted(m.name for m in pkgutil.walk_packages(lexgold.__path__, "lexgold."))


def test_every_module_is_found():
    assert {"lexgold.process.exclusions", "lexgold.ratings.long", "lexgold.builder.relations",
            "lexgold.languages.crosslingual", "lexgold.evaluate.wordpairs"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner(verbose=False)
    for test in finder.find(module):
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"
