"""Shared fixtures: the real resources, loaded once per test session; hypothesis profiles.

Hypothesis profiles (``HYPOTHESIS_PROFILE`` selects one; under ``CI`` the default is ``ci``):

- ``ci``: derandomized (the examples are a function of the test alone) and no example database,
  so a red CI run fails the same way on any machine: rerun it with ``HYPOTHESIS_PROFILE=ci``.
- ``dev`` (default outside CI): random examples, remembered in ``.hypothesis/`` as usual.
- ``deep``: random, 20 times the examples of each test, for a nightly-style search.
"""

import os

import pytest
from hypothesis import settings

settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
settings.register_profile("dev", print_blob=True)
settings.register_profile("deep", database=None, print_blob=True)
PROFILE = os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev")
settings.load_profile(PROFILE)


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
    """URL of the real PostgreSQL server started by scripts/test.sh; required under CI."""
    url = os.environ.get("LEXGOLD_TEST_POSTGRES_URL")
    if not url:
        if os.environ.get("CI"):
            pytest.fail("LEXGOLD_TEST_POSTGRES_URL is not set: scripts/test.sh starts PostgreSQL")
        pytest.skip("no PostgreSQL server (set LEXGOLD_TEST_POSTGRES_URL)")
    return url
