"""Issue 28: several models in one evaluate run (--common-vocabulary, Steiger's test between
each two), and the catalogue of published gold files behind --gold-dir."""

import bz2
import gzip
import hashlib
import json
import re
import shutil
from pathlib import Path

import gensim
import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from scipy import stats

from lexgold.cli import cli
from lexgold.evaluate.catalogue import load_catalogue, scan_folder
from lexgold.evaluate.gold import read_gold
from lexgold.evaluate.wordpairs import compare_scores, steiger_test

GENSIM_DATA = Path(gensim.__file__).parent / "test" / "test_data"
WORDS = ["cat", "dog", "car", "bus", "sun", "moon", "tea", "cup", "old", "new", "red", "blue"]
PAIRS = [("cat", "dog", 8.0), ("car", "bus", 7.0), ("sun", "moon", 6.0), ("tea", "cup", 5.5),
         ("old", "new", 2.0), ("red", "blue", 4.0), ("cat", "car", 1.0), ("dog", "sun", 0.5),
         ("cup", "moon", 1.5), ("bus", "tea", 3.0)]
#: each model lacks some words: a covers every pair, b 9 of 10, c 8 of 10 (b and c together: 7)
MISSING = {"a.vec": [], "b.vec": ["blue"], "c.vec": ["tea"]}


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.fixture
def models(tmp_path):
    rng = np.random.default_rng(0)
    paths = []
    for name, missing in MISSING.items():
        words = [w for w in WORDS if w not in missing]
        lines = [f"{len(words)} 4"] + [w + " " + " ".join(f"{v:.5f}" for v in rng.normal(size=4))
                                       for w in words]
        (tmp_path / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
        paths.append(tmp_path / name)
    gold = tmp_path / "gold.txt"
    gold.write_text("".join(f"{a}\t{b}\t{s}\n" for a, b, s in PAIRS), encoding="utf-8")
    return gold, paths


# -- Steiger's test ------------------------------------------------------------------------------

def test_steiger_between_two_models_by_hand():
    """Gold 1..6; model x swaps the last two pairs, model y swaps two neighbours three times.
    Spearman on ranks: sum d^2 = 2, 6 and 4 -> rho = 1 - 6 sum d^2 / (n (n^2 - 1)):
    r_jk = 1 - 12/210 = 198/210, r_jh = 1 - 36/210 = 174/210, r_kh = 1 - 24/210 = 186/210.
    Steiger (1980) eq. 14 with r_bar = (r_jk + r_jh) / 2 = 186/210:
    psi = r_kh (1 - 2 r_bar^2) - r_bar^2 (1 - 2 r_bar^2 - r_kh^2) / 2 = 0.0269381,
    s = psi / (1 - r_bar^2)^2 = 0.5800046,
    Z = (atanh r_jk - atanh r_jh) sqrt(3) / sqrt(2 - 2 s) = 1.0953819, p = 0.2733494."""
    gold = pd.DataFrame({"gold": [1.0, 2, 3, 4, 5, 6], "used": True})
    x = gold.assign(model=[0.1, 0.2, 0.3, 0.4, 0.6, 0.5])
    y = gold.assign(model=[0.25, 0.15, 0.45, 0.35, 0.9, 0.8])
    out = compare_scores(x, y)
    rho = out["spearman"]
    assert out["used"] == 6
    assert (rho["first"], rho["second"], rho["between"]) == pytest.approx(
        (198 / 210, 174 / 210, 186 / 210))
    assert rho["z"] == pytest.approx(1.0953819, abs=1e-6)
    assert rho["p"] == pytest.approx(0.2733494, abs=1e-6)
    # Pearson: the same test on the scores themselves (scipy for the three correlations)
    r_jk = stats.pearsonr(gold["gold"], x["model"]).statistic
    r_jh = stats.pearsonr(gold["gold"], y["model"]).statistic
    r_kh = stats.pearsonr(x["model"], y["model"]).statistic
    assert out["pearson"]["z"] == pytest.approx(steiger_test(r_jk, r_jh, r_kh, 6)["z"])


def test_steiger_only_on_the_pairs_both_models_use():
    gold = pd.DataFrame({"gold": [1.0, 2, 3, 4, 5, 6, 7]})
    x = gold.assign(model=[0.1, 0.2, 0.3, 0.4, 0.6, 0.5, 9.0], used=[True] * 7)
    y = gold.assign(model=[0.25, 0.15, 0.45, 0.35, 0.9, 0.8, np.nan], used=[True] * 6 + [False])
    assert compare_scores(x, y)["spearman"]["z"] == pytest.approx(1.0953819, abs=1e-6)
    assert compare_scores(x, y)["used"] == 6


# -- several models ------------------------------------------------------------------------------

def single(gold, vectors):
    out = run("evaluate", "--gold", gold, "--vectors", vectors, "--json", "--bootstrap", 50)
    assert out.exit_code == 0, out.output
    return json.loads(out.output)


def test_each_model_on_its_own_coverage_equals_a_run_with_it_alone(models):
    gold, paths = models
    out = run("evaluate", "--gold", gold, *[a for p in paths for a in ("--vectors", p)],
              "--json", "--bootstrap", 50)
    assert out.exit_code == 0, out.output
    result = json.loads(out.output)
    assert result["pairs"] == 10 and result["covered_by_all"] == 7
    assert not result["common_vocabulary"]
    for model, path in zip(result["models"], paths):
        assert model == single(gold, path)
    assert [m["covered"] for m in result["models"]] == [10, 9, 8]
    pairs = [(t["first"], t["second"], t["used"]) for t in result["steiger"]]
    assert pairs == [(str(paths[0]), str(paths[1]), 9), (str(paths[0]), str(paths[2]), 8),
                     (str(paths[1]), str(paths[2]), 7)]


def test_common_vocabulary_scores_every_model_on_the_pairs_all_cover(models, tmp_path):
    gold, paths = models
    out = run("evaluate", "--gold", gold, *[a for p in paths for a in ("--vectors", p)],
              "--common-vocabulary", "--json", "--bootstrap", 50)
    assert out.exit_code == 0, out.output
    result = json.loads(out.output)
    assert result["common_vocabulary"] and result["covered_by_all"] == 7
    # the same as each model alone on a gold file holding only the 7 common pairs
    common = tmp_path / "common.txt"
    common.write_text("".join(f"{a}\t{b}\t{s}\n" for a, b, s in PAIRS
                              if not {a, b} & {"blue", "tea"}), encoding="utf-8")
    for model, path in zip(result["models"], paths):
        alone = single(common, path)
        assert model["used"] == model["pairs"] == 7
        for key in ("spearman", "pearson", "ci"):
            assert model[key] == alone[key], key
    assert all(test["used"] == 7 for test in result["steiger"])


def test_several_models_table(models):
    gold, paths = models
    out = run("evaluate", "--gold", gold, "--vectors", paths[0], "--vectors", paths[2],
              "--common-vocabulary", "--bootstrap", 0)
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    assert lines[0] == (f"{gold} (plain): 2 models, pairs 10, covered by all 8 (every model on "
                        "the 8 pairs all cover; oov=drop, case=exact-then-lower)")
    assert lines[2].startswith(f"{paths[0]}   8/8 ") or lines[2].split()[:3] == [
        str(paths[0]), "8/8", "8"]
    assert re.match(rf"  {re.escape(str(paths[0]))} vs {re.escape(str(paths[2]))} \(8 pairs\): "
                    r"spearman -?\d\.\d{4} vs -?\d\.\d{4}, z -?\d\.\d{4}, p \d\.\d{4}; pearson",
                    lines[-1]), lines[-1]


@pytest.mark.parametrize("args, message", [
    (["--common-vocabulary"], "--common-vocabulary'?: needs two or more --vectors"),
    (["--vectors", "{b}", "--compare", "{b}"], "--compare'?: with several --vectors"),
])
def test_option_errors(models, args, message):
    gold, paths = models
    args = [a.replace("{b}", str(paths[1])) for a in args]
    out = run("evaluate", "--gold", gold, "--vectors", paths[0], *args)
    assert out.exit_code == 1 and "Traceback" not in out.output
    assert re.search(message, out.output), out.output


def test_neither_gold_nor_gold_dir(models):
    out = run("evaluate", "--vectors", models[1][0])
    assert out.exit_code == 1 and "give --gold FILE (repeatable) or --gold-dir DIR" in out.output


# -- the catalogue -------------------------------------------------------------------------------

def fake_catalogue(tmp_path, text_a: bytes) -> Path:
    path = tmp_path / "catalogue.toml"
    path.write_text(f"""
[alpha]
name = "Alpha"
files = ["alpha.txt"]
layout = "plain"
citation = "A. Author (2000). Alpha."
url = "https://example.org/alpha"
licence = ""
[alpha.sha256]
"alpha.txt" = "{hashlib.sha256(text_a).hexdigest()}"

[beta]
name = "Beta"
files = ["Beta.csv"]
layout = "plain"
citation = "B. Author (2001). Beta."
""", encoding="utf-8")
    return path


def test_catalogue_checksum_match_mismatch_unknown_and_renamed(tmp_path):
    alpha = b"cat\tdog\t5\nsun\tmoon\t3\ncar\tbus\t4\n"
    catalogue = load_catalogue(fake_catalogue(tmp_path, alpha))
    folder = tmp_path / "golds"
    (folder / "sub").mkdir(parents=True)
    (folder / "alpha.txt").write_bytes(alpha)                       # as distributed
    (folder / "sub" / "alpha.txt").write_bytes(alpha + b"red\tblue\t1\n")   # modified
    (folder / "beta.csv").write_bytes(b"a,b,1\n")                  # no checksum known
    (folder / "copy-of-alpha.tsv").write_bytes(alpha)              # renamed: by checksum
    (folder / "alpha.txt.gz").write_bytes(gzip.compress(alpha))   # compressed: inner bytes
    (folder / "readme.md").write_bytes(b"# notes\n")               # unknown
    known, ignored = scan_folder(folder, catalogue)
    verdicts = {str(m.path.relative_to(folder)): (m.entry.key, m.file, m.verdict)
                for m in known}
    assert verdicts == {"alpha.txt": ("alpha", "alpha.txt", "verified"),
                        "alpha.txt.gz": ("alpha", "alpha.txt", "verified"),
                        "beta.csv": ("beta", "Beta.csv", "unverified"),
                        "copy-of-alpha.tsv": ("alpha", "alpha.txt", "verified"),
                        "sub/alpha.txt": ("alpha", "alpha.txt", "modified")}
    assert [(i.path.name, i.reason) for i in ignored] == [("readme.md", "not a data file")]
    modified = next(m for m in known if m.verdict == "modified")
    assert modified.sha256 == hashlib.sha256(alpha + b"red\tblue\t1\n").hexdigest()


def test_scan_of_a_missing_folder_is_an_error(tmp_path):
    with pytest.raises(Exception, match="not a folder"):
        scan_folder(tmp_path / "nope", [])


def test_packaged_catalogue_checksums_are_of_real_copies():
    """Every checksum in the catalogue was computed from a real file: the ones of the copies
    gensim distributes are checked here against the installed files."""
    entries = load_catalogue()
    layouts = {"simlex", "hyperlex", "tr9856", "ws353", "simverb", "men", "rg65",
               "multisimlex", "plain"}
    assert {e.layout for e in entries} <= layouts
    sums = {file: digest for e in entries for file, digest in e.sha256.items()}
    assert all(re.fullmatch(r"[0-9a-f]{64}", d) for d in sums.values())
    assert set(sums) == {"simlex999.txt", "wordsim353.tsv"}
    for file, digest in sums.items():
        assert hashlib.sha256((GENSIM_DATA / file).read_bytes()).hexdigest() == digest
        entry = next(e for e in entries if file in e.sha256)
        assert read_gold(GENSIM_DATA / file).attrs["format"] == entry.layout
    names = [f.lower() for e in entries for f in e.files]
    assert len(names) == len(set(names))                 # a name means one data set


def test_gold_dir_table_warns_on_a_modified_copy(models, tmp_path):
    gold, paths = models
    folder = tmp_path / "benchmarks"
    (folder / "edited").mkdir(parents=True)
    shutil.copy(GENSIM_DATA / "simlex999.txt", folder / "simlex999.txt")
    edited = (GENSIM_DATA / "wordsim353.tsv").read_bytes() + b"cat\tdog\t9.0\n"
    (folder / "edited" / "wordsim353.tsv").write_bytes(edited)
    (folder / "MTURK-771.csv.bz2").write_bytes(bz2.compress(
        "".join(f"{a},{b},{s}\n" for a, b, s in PAIRS).encode()))
    (folder / "notes.txt").write_text("not a gold file\n")
    out = CliRunner().invoke(cli, [str(a) for a in (
        "evaluate", "--gold-dir", folder, "--vectors", paths[0], "--vectors", paths[1],
        "--bootstrap", 0)])
    assert out.exit_code == 0, out.output + out.stderr
    digest = hashlib.sha256(edited).hexdigest()
    assert (f"Warning: {folder / 'edited' / 'wordsim353.tsv'}: a modified copy of WordSim-353 "
            f"(gensim's copy)'s wordsim353.tsv (sha256 {digest[:12]}, the catalogue's "
            f"f92a022fc253)") in out.stderr
    assert (f"Note: {folder}: 1 file not evaluated: 1 not word pairs (notes.txt: no word pairs "
            "found after the header)") in out.stderr
    rows = [line.split("  ") for line in out.stdout.splitlines()]
    table = {cells[0]: [c.strip() for c in cells[1:] if c.strip()] for cells in rows}
    assert table["dataset"][-2:] == [str(paths[0]), str(paths[1])]
    assert table["MTurk-771"][1:3] == ["unverified", "10"]
    assert table["SimLex-999 (gensim's copy)"][1:3] == ["verified", "999"]
    assert table["WordSim-353 (gensim's copy)"][1] == "modified"
    mturk = single(gold, paths[1])                        # the same pairs, scores halved
    assert table["MTurk-771"][-1] == f"{mturk['spearman']:.4f} ({mturk['used']})"


def test_gold_dir_json_names_the_catalogue_entry(models, tmp_path):
    _, paths = models
    folder = tmp_path / "benchmarks"
    folder.mkdir()
    shutil.copy(GENSIM_DATA / "simlex999.txt", folder / "simlex999.txt")
    out = run("evaluate", "--gold-dir", folder, "--vectors", paths[0], "--json",
              "--bootstrap", 0)
    assert out.exit_code == 0, out.output
    [result] = json.loads(out.output[out.output.index("["):])
    assert result["catalogue"]["name"] == "SimLex-999 (gensim's copy)"
    assert result["catalogue"]["checksum"] == "verified"
    assert result["catalogue"]["citation"].startswith("Hill, F., Reichart, R., & Korhonen, A.")
    assert result["pairs"] == 999 and "spearman" in result


def test_gold_dir_without_a_known_file(tmp_path, models):
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "x.txt").write_text("hello\n")
    out = run("evaluate", "--gold-dir", tmp_path / "empty", "--vectors", models[1][0])
    assert out.exit_code == 1 and "no gold file in this folder (1 file not evaluated: 1 not " \
                                  "word pairs (x.txt: no word pairs found after the header))" in out.output
    assert "Note:" not in out.output
