#!/usr/bin/env bash
# The test suite with both cores kept busy by another process, as CI's machine may be (other
# processes are possible there): a test whose outcome depends on the load (a fixed sleep, a timing
# taken as pass or fail, a server assumed started) fails here first. Run it before stopping.
#   bash scripts/test-under-load.sh [--reverse] [pytest arguments]
# --reverse runs the tests in reverse order as well (a test that passes only after another fails).
# The load is one busy loop per core (stress-ng's if installed), stopped when the tests end.
set -euo pipefail
cd "$(dirname "$0")/.."
hogs=()
stop_load() { [ ${#hogs[@]} -eq 0 ] || kill "${hogs[@]}" 2>/dev/null || true; }
trap stop_load EXIT
cores=$(nproc)
if command -v stress-ng >/dev/null; then
    stress-ng --cpu "$cores" --quiet &
    hogs+=($!)
else
    for _ in $(seq "$cores"); do
        bash -c 'while :; do :; done' &
        hogs+=($!)
    done
fi
echo "test-under-load: $cores busy loops running (pids ${hogs[*]})" >&2
status=0
bash scripts/test.sh "$@" || status=$?
exit "$status"
