#!/usr/bin/env bash
# Set lexgold up on a fresh Debian machine: system packages (when apt-get is there and we are
# root), a virtual environment in .venv, and lexgold installed into it (editable).
#   bash scripts/setup.sh          # what the quickstart and bench/ need (lexgold, gensim, httpx)
#   bash scripts/setup.sh --test   # plus what the tests need (PostgreSQL, Chromium, test extras)
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(wordnet-base wordnet-sense-index liblingua-en-tagger-perl)
extras="[gensim,bench]"   # gensim: the quickstart's Wikipedia sample; bench: bench/*.py (httpx)
if [ "${1:-}" = "--test" ]; then
    packages+=(postgresql chromium nginx openssl)   # nginx: the HTTPS proxy test (deploy/)
    extras="[test,bench]"
fi

missing=()
for p in "${packages[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
        echo "setup: installing Debian packages: ${missing[*]}"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    else
        echo "setup: please install these packages (apt-get install ${missing[*]}); continuing" >&2
    fi
fi

if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e ".${extras}"
# the WordNet graph the builders read (lexgold.resources.wordnet_graph): built once per WordNet,
# here rather than in the first builder run; `lexgold resources` does it too
.venv/bin/python -c "from lexgold.resources.wordnet_graph import load_graph; load_graph()" \
    || echo "setup: WordNet graph not built (WordNet not found?); the first builder run builds it" >&2
echo "setup: done (.venv/bin/lexgold)"
