#!/usr/bin/env bash
# Set up everything the tests need, start PostgreSQL, and run the whole test suite.
#   bash scripts/test.sh [pytest arguments]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --test
if [ -z "${LEXGOLD_TEST_POSTGRES_URL:-}" ] && [ "$(id -u)" = 0 ] && [ -d /usr/lib/postgresql ]; then
    LEXGOLD_TEST_POSTGRES_URL=$(bash scripts/postgres.sh | tail -n 1)
    export LEXGOLD_TEST_POSTGRES_URL
fi
# Nothing the tests need may be missing here: a test skipped for a missing program, extra or
# server (Chromium, axe, PostgreSQL ...) fails instead (tests/conftest.py, REQUIRE_ALL).
export LEXGOLD_REQUIRE_ALL=1
# pytest exits 5 when it collected no test: that is a failure here, as any non-zero status.
exec .venv/bin/python -m pytest "$@"
