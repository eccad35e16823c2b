"""Issue 34 item 5: ``evaluate --gold-dir`` reads lexgold's own releases (by their
datapackage/croissant beside gold.csv), every file ``--gold`` reads (TR9856's
TermRelatednessResults.tsv, RG-65, cross-lingual HyperLex read by content), and skips
non-data files quietly (one line counting them, not a note per file).

The release is made by ``lexgold simulate`` + ``lexgold process`` on 8 pairs (simulated
ratings); the published-layout files are small hand-made files in their layouts (TR9856's
``#term1`` header, RG-65's ``;`` rows, cross-lingual HyperLex's ``en_dog de_tier N 5.5``).
"""

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from lexgold.cli import cli
from lexgold.evaluate.catalogue import IN_RELEASE, NOT_DATA, scan_folder

PAIRS = [("cat", "dog"), ("car", "bus"), ("sun", "moon"), ("tea", "cup"), ("old", "new"),
         ("red", "blue"), ("cat", "car"), ("dog", "sun")]
WORDS = ["cat", "dog", "car", "bus", "sun", "moon", "tea", "cup", "old", "new", "red", "blue",
         "hund", "mond", "tasse", "auto"]
TR9856 = "#term1\tterm2\tscore\ttopic\ncat\tdog\t0.9\tA\nsun\tmoon\t0.4\tA\ncar\tbus\t0.6\tB\n" \
         "tea\tcup\t0.2\tB\n"
RG65 = "cat;dog;3.0\ncar;bus;3.5\nsun;moon;1.2\ntea;cup;2.0\nold;new;0.5\n"
CROSS = "en_cat de_hund N 4.5\nen_car de_auto N 5.5\nen_sun de_mond N 1.0\nen_tea de_tasse N 2.0\n"


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    """A lexgold release: ``lexgold process`` on simulated ratings of PAIRS (tr9856)."""
    base = tmp_path_factory.mktemp("release")
    (base / "pairs.tsv").write_text("word1\tword2\ttopic\n" + "".join(
        f"{a}\t{b}\tanimals\n" for a, b in PAIRS), encoding="utf-8")
    out = run("simulate", "--pairs", base / "pairs.tsv", "--protocol", "tr9856", "--out",
              base / "ratings.csv", "--seed", "1")
    assert out.exit_code == 0, out.output
    out = run("process", base / "ratings.csv", "--protocol", "tr9856", "--out", base / "gold",
              "--no-plots", "--bootstrap", 0)
    assert out.exit_code == 0, out.output
    return base / "gold"


@pytest.fixture
def bench(tmp_path, release):
    """A folder of gold files as a researcher keeps them, with the usual noise."""
    folder = tmp_path / "benchmarks"
    shutil.copytree(release, folder / "my-study")
    (folder / "my-study" / "plot.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (folder / "ibm").mkdir(parents=True)
    (folder / "ibm" / "TermRelatednessResults.tsv").write_text(TR9856, encoding="utf-8")
    (folder / "tr-subset.tsv").write_text(TR9856, encoding="utf-8")      # no catalogue name
    (folder / "EN-RG-65.txt").write_text(RG65.replace(";", "\t"), encoding="utf-8")
    (folder / "rg.csv").write_text(RG65, encoding="utf-8")               # no catalogue name
    (folder / "cl").mkdir()
    (folder / "cl" / "en-de.txt").write_text(CROSS, encoding="utf-8")
    (folder / "README.md").write_text("# my benchmarks\n", encoding="utf-8")
    (folder / "CITATION.cff").write_text("cff-version: 1.2.0\n", encoding="utf-8")
    (folder / "SHA256SUMS").write_text("00  rg.csv\n", encoding="utf-8")
    (folder / "figure.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    (folder / "meta.json").write_text("{}\n", encoding="utf-8")
    (folder / "notes.txt").write_text("gold files for the paper\n", encoding="utf-8")
    (folder / ".git").mkdir()
    (folder / ".git" / "ORIG_HEAD").write_text("cat dog 1\nsun moon 2\n", encoding="utf-8")
    rng = np.random.default_rng(4)
    vectors = tmp_path / "a.vec"
    vectors.write_text(f"{len(WORDS)} 4\n" + "".join(
        w + " " + " ".join(f"{v:.5f}" for v in rng.normal(size=4)) + "\n" for w in WORDS),
        encoding="utf-8")
    return folder, vectors


def single(gold, vectors) -> dict:
    out = run("evaluate", "--gold", gold, "--vectors", vectors, "--json", "--bootstrap", 0,
              "--no-binary")
    assert out.exit_code == 0, out.output
    return json.loads(out.stdout)


def test_scan_reads_releases_and_every_readable_file(bench):
    folder, _ = bench
    known, ignored = scan_folder(folder)
    found = {str(m.path.relative_to(folder)): (m.source, m.name, m.verdict) for m in known}
    assert found == {
        "EN-RG-65.txt": ("catalogue", "RG-65", "unverified"),
        "cl/en-de.txt": ("file", "en-de.txt", ""),
        "ibm/TermRelatednessResults.tsv": ("catalogue", "TR9856", "unverified"),
        "my-study/gold.csv": ("lexgold release",
                              "tr9856 gold standard (simulated ratings, lexgold)", "verified"),
        "rg.csv": ("file", "rg.csv", ""),
        "tr-subset.tsv": ("file", "tr-subset.tsv", "")}
    release = next(m for m in known if m.release is not None).release
    assert release["scale"] == [0.0, 1.0] and release["protocol"] == "tr9856"
    assert release["simulated"] is True
    reasons = {str(i.path.relative_to(folder)): i.reason for i in ignored}
    # the release's TR9856.txt is its own pairs again, never IBM's TR9856
    assert reasons["my-study/TR9856.txt"] == IN_RELEASE
    assert {name for name, why in reasons.items() if why == IN_RELEASE} == {
        f"my-study/{name}" for name in ("TR9856.txt", "exclusions.csv", "report.json",
                                        "report.md", "README.md", "CITATION.cff",
                                        "datapackage.json", "croissant.json", "SHA256SUMS",
                                        "plot.png")}
    assert {name for name, why in reasons.items() if why == NOT_DATA} == {
        "README.md", "CITATION.cff", "SHA256SUMS", "figure.png", "meta.json", ".git/ORIG_HEAD"}
    assert reasons["notes.txt"].startswith("not word pairs: ")


def test_gold_dir_evaluates_them_all_and_notes_the_rest_in_one_line(bench):
    folder, vectors = bench
    out = run("evaluate", "--gold-dir", folder, "--vectors", vectors, "--bootstrap", 0,
              "--no-binary")
    assert out.exit_code == 0, out.output
    notes = [line for line in out.stderr.splitlines() if line.startswith("Note: ")]
    summary = (f"Note: {folder}: 17 files not evaluated: 10 part of a lexgold release, "
               "6 not a data file, 1 not word pairs (notes.txt: ")
    assert [line for line in notes if "not evaluated" in line][0].startswith(summary)
    assert not any("README" in line or ".png" in line or "skipped" in line for line in notes)
    rows = {line.split("  ")[0]: line for line in out.stdout.splitlines()}
    for name, path in (("RG-65", "EN-RG-65.txt"), ("TR9856", "ibm/TermRelatednessResults.tsv"),
                       ("rg.csv", "rg.csv"), ("tr-subset.tsv", "tr-subset.tsv"),
                       ("en-de.txt", "cl/en-de.txt"),
                       ("tr9856 gold standard (simulated ratings, lexgold)",
                        "my-study/gold.csv")):
        figures = single(folder / path, vectors)
        assert rows[name].split()[-2:] == [f"{figures['spearman']:.4f}",
                                           f"({figures['used']})"], name
    assert single(folder / "cl" / "en-de.txt", vectors)["covered"] == 4   # prefixes stripped


def test_gold_dir_json_names_release_catalogue_and_file(bench):
    folder, vectors = bench
    out = run("evaluate", "--gold-dir", folder, "--vectors", vectors, "--bootstrap", 0,
              "--json", "--no-binary")
    assert out.exit_code == 0, out.output
    results = {Path(r["gold"]).relative_to(folder).as_posix(): r for r in json.loads(out.stdout)}
    assert len(results) == 6
    mine = results["my-study/gold.csv"]
    assert mine["source"] == "lexgold release" and "catalogue" not in mine
    assert mine["release"]["scale"] == [0.0, 1.0] and mine["release"]["checksum"] == "verified"
    assert mine["release"]["simulated"] is True and mine["pairs"] == len(PAIRS)
    assert results["EN-RG-65.txt"]["catalogue"]["name"] == "RG-65"
    assert results["rg.csv"]["source"] == "file" and results["rg.csv"]["dataset"] == "rg.csv"


def test_an_edited_release_is_warned_against_its_sha256sums(bench):
    folder, vectors = bench
    gold = folder / "my-study" / "gold.csv"
    gold.write_text(gold.read_text(encoding="utf-8").replace("0.", "0.0", 1), encoding="utf-8")
    out = run("evaluate", "--gold-dir", folder / "my-study", "--vectors", vectors,
              "--bootstrap", 0, "--no-binary")
    assert out.exit_code == 0, out.output
    assert (f"Warning: {gold}: a modified copy of the gold.csv of lexgold release 'tr9856 gold "
            "standard (simulated ratings, lexgold)' (its SHA256SUMS") in out.stderr
    assert "modified" in out.stdout


def test_a_folder_of_noise_only_is_an_error_that_counts_it(tmp_path, bench):
    _, vectors = bench
    (tmp_path / "noise").mkdir()
    (tmp_path / "noise" / "README.md").write_text("# nothing\n", encoding="utf-8")
    (tmp_path / "noise" / "x.png").write_bytes(b"\x89PNG")
    out = run("evaluate", "--gold-dir", tmp_path / "noise", "--vectors", vectors)
    assert out.exit_code == 1
    assert "no gold file in this folder (2 files not evaluated: 2 not a data file)" in out.output
