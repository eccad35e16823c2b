#!/usr/bin/env bash
# Set lexgold up and run the main job on the embedded defaults (SQLite, vendored norms).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export PATH="$PWD/.venv/bin:$PATH"
out=${LEXGOLD_QUICKSTART_OUT:-quickstart-out}
mkdir -p "$out"

echo "== 1. resources: what lexgold finds, checksums verified"
lexgold resources
