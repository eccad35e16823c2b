"""The worked examples in the docstrings of lexgold.process run and give what they say."""

import doctest
import importlib

import pytest

MODULES = ["agreement", "calibration", "scaling", "release", "quality", "ratings", "splithalf"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(f"lexgold.process.{name}")
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0
