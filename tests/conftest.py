"""Shared fixtures: the real resources, loaded once per test session."""

import os
from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[1].parent / "shared"


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
