"""The release folder of `lexgold process`: published layouts, evaluate round trip, dataset card,
CITATION.cff, SHA256SUMS and a Frictionless data package; incomplete releases; language packs."""

import hashlib
import json
import re
import shutil
import warnings

import numpy as np
import pandas as pd
import pytest
import yaml
from click.testing import CliRunner
from frictionless import validate

from lexgold.cli import cli
from lexgold.errors import InputError
from lexgold.evaluate.gold import read_gold
from lexgold.process.agreement import AgreementWarning
from lexgold.errors import IncompleteRelease
from lexgold.process.pipeline import process_ratings, release_norms, run
from lexgold.process.release import (concreteness_quartile, gold_table, most_associated,
                                     release_text, write_release)
from lexgold.process.scaling import gold_scores
from lexgold.crowd.simulate import Crowd, simulate_ratings, usf_pairs
from lexgold.protocols import PACKAGED, load_protocol
from lexgold.simulated import COMMENT

SIMLEX_HEADER = (b"word1\tword2\tPOS\tSimLex999\tconc(w1)\tconc(w2)\tconcQ\tAssoc(USF)\t"
                 b"SimAssoc333\tSD(SimLex)\r\n")     # SimLex-999.txt has CRLF line ends
HYPERLEX_HEADER = b"WORD1 WORD2 POS TYPE AVG_SCORE AVG_SCORE_0_10 STD SCORES..\n"
TR9856_HEADER = b"#term1\tterm2\tscore\n"


def ratings_of(table: dict, **columns) -> pd.DataFrame:
    """Long format from {(word1, word2): [ratings of raters a, b, c, ...]}."""
    rows = [(chr(97 + i), 1, w1, w2, float(v)) for (w1, w2), values in table.items()
            for i, v in enumerate(values)]
    frame = pd.DataFrame(rows, columns=["rater_id", "tranche", "word1", "word2", "rating"])
    return frame.assign(**columns)


# -- published layouts -------------------------------------------------------------------------

def test_simlex_layout_bytes(tmp_path, usf, brysbaert):
    scores = gold_scores(ratings_of({("cat", "dog"): [4, 5, 6], ("old", "new"): [1, 2, 0]},
                                    pos="N"))
    gold = gold_table(scores, "simlex", usf=usf, brysbaert=brysbaert)
    data = write_release(gold, "simlex", tmp_path / "SimLex-999.txt").read_bytes()
    lines = data.split(b"\r\n")
    assert data.startswith(SIMLEX_HEADER) and data.endswith(b"\r\n") and lines[-1] == b""
    assert data.count(b"\n") == data.count(b"\r\n") == 3
    assert all(line.count(b"\t") == 9 for line in lines[:-1]) and b"," not in data
    cat = lines[1].decode().split("\t")
    assert cat[:4] == ["cat", "dog", "N", "8.33"]            # mean 5 on 0-6 -> 8.33
    fsg = usf[(usf["cue"] == "DOG") & (usf["target"] == "CAT")]["fsg"].iloc[0]
    assert cat[7] == f"{10 * fsg:.2f}".rstrip("0").rstrip(".")     # 10 x FSG(word2 -> word1)
    assert cat[8] == "1" and cat[9] == "1"                  # SD 1: no trailing zeros


def test_hyperlex_layout_bytes_and_relation_names(tmp_path):
    scores = gold_scores(ratings_of({("dog", "animal"): [6, 5, 6, 4],
                                     ("animal", "dog"): [1, 0, 2, 1],
                                     ("car", "wheel"): [0, 1, 0, 0]}))
    pairs = pd.DataFrame({"word1": ["dog", "animal"], "word2": ["animal", "dog"],
                          "pos": ["N", "N"], "relation": ["hyp-5", "rhyp-2"]})
    gold = gold_table(scores, "hyperlex", pairs=pairs)
    data = write_release(gold, "hyperlex", tmp_path / "hyperlex-all.txt").read_bytes()
    assert data.startswith(HYPERLEX_HEADER) and b"\t" not in data and b"  " not in data
    rows = {tuple(line.split(" ")[:2]): line.split(" ")
            for line in data.decode().splitlines()[1:]}
    dog = rows[("dog", "animal")]
    assert dog[2:4] == ["N", "hyp-4"]                       # hyp-4 holds paths of 4 or more
    # population SD (ddof = 0) as published: sqrt(2.75 / 4) = 0.83 (the sample SD is 0.96)
    assert dog[4:7] == ["5.25", "8.75", "0.83"]
    assert dog[7:] == ["6", "5", "6", "4"]                  # integers, in rater-id order a-d
    car = rows[("car", "wheel")]                            # two decimals, trailing zeros kept
    assert car[4:7] == ["0.25", "0.42", "0.43"] and car[7:] == ["0", "1", "0", "0"]
    assert rows[("animal", "dog")][4:7] == ["1.00", "1.67", "0.71"]
    assert rows[("animal", "dog")][3] == "r-hyp-2"
    assert rows[("car", "wheel")][2:4] == ["NA", "NA"]      # unknown POS and TYPE


def test_tr9856_layout_bytes(tmp_path):
    scores = gold_scores(ratings_of({("stem cell", "embryo"): [1, 1, 1, 0],
                                     ("tax", "moon"): [0, 0, 0, 0]}, topic="science"),
                         rating_range=(0, 1), score_range=(0, 1))
    gold = gold_table(scores, "tr9856")
    data = write_release(gold, "tr9856", tmp_path / "TR9856.txt").read_bytes()
    assert data == TR9856_HEADER + b"stem cell\tembryo\t0.75\ntax\tmoon\t0\n"


def test_a_word_holding_the_delimiter_is_an_input_error():
    scores = gold_scores(ratings_of({("ice cream", "dessert"): [5, 6]}))
    with pytest.raises(InputError, match="ice cream"):
        release_text(gold_table(scores, "hyperlex"), "hyperlex")


@pytest.mark.parametrize("fmt, name, score", [("simlex", "SimLex-999.txt", "SimLex999"),
                                              ("hyperlex", "hyperlex-all.txt", "AVG_SCORE"),
                                              ("tr9856", "TR9856.txt", "score")])
def test_release_round_trip_through_evaluate_reader_and_pandas(tmp_path, fmt, name, score):
    rng = np.random.default_rng(4)
    words = [("cat", "dog"), ("car", "wheel"), ("sun", "moon"), ("tea", "cup"), ("ox", "cow")]
    top = 1 if fmt == "tr9856" else 6
    ratings = ratings_of({w: rng.integers(0, top + 1, 5) for w in words}, pos="N")
    scores = gold_scores(ratings, rating_range=(0, top), score_range=(0, 10 if top > 1 else 1))
    gold = gold_table(scores, fmt, pairs=pd.DataFrame(
        {"word1": [w[0] for w in words], "word2": [w[1] for w in words],
         "relation": ["cohyp", "mero", "cohyp", "no-rel", "syn"]}))
    path = write_release(gold, fmt, tmp_path / name)
    for reader_format in ("auto", fmt):
        back = read_gold(path, format=reader_format)
        assert back[["word1", "word2"]].values.tolist() == [list(w) for w in words]
        assert back["score"].tolist() == pytest.approx(gold[score].tolist(), abs=1e-9)
    if fmt == "hyperlex":
        assert back["relation"].tolist() == gold["TYPE"].tolist()
        table = pd.read_csv(path, sep=" ", index_col=False, usecols=range(7))
    else:
        table = pd.read_csv(path, sep="\t")
    assert table.iloc[:, 0].tolist() == [w[0] for w in words]
    assert table[score if fmt != "tr9856" else "score"].tolist() == pytest.approx(
        gold[score].tolist())


# -- SimLex metadata ---------------------------------------------------------------------------

def test_simassoc333_ignores_row_order_and_never_ranks_unknown_association():
    rng = np.random.default_rng(0)
    n = 400
    assoc = pd.Series(rng.integers(1, 60, n) / 10.0)
    assoc[rng.choice(n, 50, replace=False)] = np.nan
    assoc[assoc.isna().to_numpy().nonzero()[0][:10]] = 0.0
    words = pd.DataFrame({"word1": [f"w{i:03d}" for i in rng.permutation(n)], "word2": "x"})
    flags = most_associated(assoc, words["word1"], words["word2"])
    known = assoc > 0
    assert flags.sum() == 333 and not flags[~known].any()
    threshold = assoc[flags == 1].min()
    assert (assoc[known & (flags == 0)] <= threshold).all()
    tied = known & (assoc == threshold)          # ties at the boundary: the smallest word1 win
    assert words["word1"][tied & (flags == 1)].max() < words["word1"][tied & (flags == 0)].min()
    order = rng.permutation(n)
    shuffled = most_associated(assoc.iloc[order].reset_index(drop=True),
                               words["word1"].iloc[order].reset_index(drop=True),
                               words["word2"].iloc[order].reset_index(drop=True))
    assert set(words["word1"].iloc[order][shuffled.to_numpy() == 1]) == \
        set(words["word1"][flags == 1])


def test_concreteness_quartile_breaks_ties_by_row_order():
    """Issue 24: the published concQ ranks tied sums in row order (999 of 999 reproduced; mean
    ranks give 997). Sums 2 5 5 5 8 9 1 5: ranks 2 3 4 5 7 8 1 6, quartile ceil(rank / 2); the
    four tied 5s fall in quartiles 2, 2, 3, 3 (with mean rank 4.5 all four would be 3)."""
    total = pd.Series([2.0, 5.0, 5.0, 5.0, 8.0, 9.0, 1.0, 5.0, np.nan])
    quartiles = concreteness_quartile(total)
    assert quartiles.iloc[:8].tolist() == [1, 2, 2, 3, 4, 4, 1, 3] and pd.isna(quartiles.iloc[8])
    # the same sums in another row order: the ties take their quartiles in that order
    order = [7, 3, 2, 1, 0, 4, 5, 6]
    moved = concreteness_quartile(total.iloc[order].reset_index(drop=True))
    assert moved.tolist() == [2, 2, 3, 3, 1, 4, 4, 1]
    n = 999                                   # SimLex-999: quartiles of 249, 250, 250, 250 pairs
    counts = concreteness_quartile(pd.Series(np.zeros(n))).value_counts().sort_index()
    assert counts.tolist() == [249, 250, 250, 250]


# -- the whole release folder ------------------------------------------------------------------

def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.fixture(scope="module")
def simlex_release(tmp_path_factory, usf):
    """A complete simulated SimLex release: 52 raters per tranche (36 + the cap of 16)."""
    folder = tmp_path_factory.mktemp("simlex")
    pairs = usf_pairs(100, rng=np.random.default_rng(2), usf=usf)
    pairs["fsg"] = [0.25, np.nan] * 50                      # the builder's USF FSG, 0-1
    pairs.to_csv(folder / "pairs.csv", index=False)
    manifest = {"lexgold_version": "9.9", "seed": 11,
                "protocol": {"file": "simlex999.toml", "sha256": "ab" * 32}, "resources": {}}
    (folder / "report.json").write_text(json.dumps({"manifest": manifest}))
    ratings, _ = simulate_ratings(pairs, "simlex", rng=np.random.default_rng(3), tranches=0,
                                  unique_per_tranche=40, raters_per_tranche=52)
    ratings.to_csv(folder / "ratings.csv", index=False)
    args = ["process", folder / "ratings.csv", "--protocol", "simlex", "--pairs",
            folder / "pairs.csv", "--seed", "5", "--bootstrap", "10", "--no-plots"]
    result = invoke(*args, "--out", folder / "gold")
    assert result.exit_code == 0, result.output
    again = invoke(*args, "--out", folder / "again")
    assert again.exit_code == 0, again.output
    return folder


def test_release_folder_files_and_report(simlex_release):
    out = simlex_release / "gold"
    report = json.loads((out / "report.json").read_text())
    assert report["release_file"] == "SimLex-999.txt" and report["warnings"] == []
    assert sorted(report["files"]) == sorted(p.name for p in out.iterdir())
    release = pd.read_csv(out / "SimLex-999.txt", sep="\t")
    copy = pd.read_csv(out / "gold.csv")
    assert list(release.columns) == list(copy.columns)
    pd.testing.assert_frame_equal(release, copy)
    # lexgold simulate's ratings: the simulated mark travels as a last column (lexgold.simulated)
    assert (out / "SimLex-999.txt").read_bytes().startswith(SIMLEX_HEADER[:-2]
                                                            + b"\tsimulated\r\n")
    assert release["simulated"].all()
    # Assoc(USF) = 10 x the pairs file's fsg; missing fsg falls back to the USF norms
    assert (release["Assoc(USF)"][::2] == 2.5).all()
    assert release["SimAssoc333"].sum() == (release["Assoc(USF)"] > 0).sum()


def test_same_seed_same_bytes(simlex_release):
    first, second = simlex_release / "gold", simlex_release / "again"
    for path in first.iterdir():
        if path.name != "report.json":                       # it names its --out folder
            assert path.read_bytes() == (second / path.name).read_bytes(), path.name


def test_checksums_and_frictionless_package(simlex_release, tmp_path):
    out = simlex_release / "gold"
    lines = (out / "SHA256SUMS").read_text().splitlines()
    listed = {}
    for line in lines:
        digest, name = line.split("  ")
        listed[name] = digest
        assert hashlib.sha256((out / name).read_bytes()).hexdigest() == digest
    assert set(listed) == {p.name for p in out.iterdir()} - {"SHA256SUMS"}
    report = validate(out / "datapackage.json")
    assert report.valid, report.flatten(["rowNumber", "fieldName", "type", "note"])
    package = json.loads((out / "datapackage.json").read_text())
    assert {r["path"] for r in package["resources"]} >= {"gold.csv", "SimLex-999.txt",
                                                        "exclusions.csv"}
    tampered = tmp_path / "tampered"
    shutil.copytree(out, tampered)
    with open(tampered / "gold.csv", "a", encoding="utf-8") as handle:
        handle.write("extra,row,N,1,,,,,0,\n")
    assert not validate(tampered / "datapackage.json").valid


def card_header(text: str) -> dict:
    assert text.startswith("---\n")
    return yaml.safe_load(text.split("---\n")[1])


def test_dataset_card_has_yaml_header_and_the_reports_figures(simlex_release):
    out = simlex_release / "gold"
    text = (out / "README.md").read_text()
    report = json.loads((out / "report.json").read_text())
    header = card_header(text)
    assert header["language"] == ["en"] and header["license"] == "other"
    assert header["configs"][0]["data_files"] == "gold.csv"
    counts, final = report["counts"], report["agreement"]["final"]
    assert header["size_categories"] == ["n<1K"] and counts["released_pairs"] == 100
    # lexgold simulate's raters: the card says simulated (lexgold.process.simulated_label)
    assert f"Raters simulated: {counts['stages']['raw']['raters']} " in text
    assert header["tags"][-1] == "simulated" and "simulated" in header["pretty_name"]
    for rule in report["config"]["exclusions"]["rules"]:
        assert f"| {rule} | {counts['excluded_by_rule'].get(rule, 0)} |" in text
    low, high = final["iaa1_ci"]
    assert f"| final | {final['iaa1']:.3f} (95% CI {low:.3f}-{high:.3f}) |" in text
    assert report["protocol_sha256"] in text and "ab" * 32 in text and "seed 11" in text
    assert f"{report['dates']['first']} to {report['dates']['last']}" in text
    assert "from [0, 6] to [0, 10]" in text and "Licence: not stated." in text
    assert "TODO" not in text
    beyond = report["agreement"]["beyond_iaa"]          # issue 26: alpha and ICC(2,1)/(2,k)
    assert f"interval {beyond['alpha_interval']:.3f}, ordinal {beyond['alpha_ordinal']:.3f}" \
        in text
    assert f"ICC(2,1) (one rater) {beyond['icc1']:.3f}" in text
    assert 0 < beyond["icc1"] < beyond["icck"] < 1 and beyond["icc"]["pairs"] > 0
    assert f"ICC(2,1) (one rater) {beyond['icc1']:.3f}" in (out / "report.md").read_text()
    citation = yaml.safe_load((out / "CITATION.cff").read_text())
    assert citation["cff-version"] == "1.2.0" and citation["type"] == "dataset"
    assert citation["references"][0]["year"] == 2015
    assert "SimLex-999" in citation["references"][0]["title"]


def simulated_run(tmp_path, protocol, *, n=100):
    pairs = usf_pairs(n, rng=np.random.default_rng(1)).assign(topic="t1")
    ratings, _ = simulate_ratings(pairs, protocol, rng=np.random.default_rng(2), tranches=0,
                                  raters_per_tranche=12, crowd=Crowd(spammers=0.0))
    ratings.to_csv(tmp_path / "ratings.csv", index=False)
    return run(tmp_path / "ratings.csv", protocol, tmp_path / "out", seed=1, plots=False,
               bootstrap=0)


@pytest.mark.parametrize("protocol, name, header",
                         [("hyperlex", "hyperlex-all.txt", HYPERLEX_HEADER),
                          ("tr9856", "TR9856.txt", TR9856_HEADER)])
def test_hyperlex_and_tr9856_release_folders_validate(tmp_path, protocol, name, header):
    report = simulated_run(tmp_path, protocol)
    out = tmp_path / "out"
    # simulated ratings: HyperLex's file opens with a "# simulated" line (no room for a
    # column), TR9856's ends each row in a simulated column (lexgold.simulated)
    marked = (COMMENT.encode() + b"\n" + header if protocol == "hyperlex"
              else header[:-1] + b"\tsimulated\n")
    assert report.release_file == name and (out / name).read_bytes().startswith(marked)
    result = validate(out / "datapackage.json")
    assert result.valid, result.flatten(["rowNumber", "fieldName", "type", "note"])
    back = read_gold(out / name)
    gold = pd.read_csv(out / "gold.csv")
    column = "AVG_SCORE" if protocol == "hyperlex" else "score"
    assert back["score"].tolist() == pytest.approx(gold[column].tolist())
    assert card_header((out / "README.md").read_text())["tags"][0] in (
        "lexical-entailment", "term-relatedness")


# -- incomplete releases -----------------------------------------------------------------------

def test_no_rater_left_stops_the_release(tmp_path):
    ratings = ratings_of({(f"x{i}", "w"): [3, 3, 3] for i in range(12)}, kind="consistency")
    ratings.to_csv(tmp_path / "ratings.csv", index=False)      # every rater: one value
    with pytest.raises(IncompleteRelease, match="no rater is left after the exclusions"):
        run(tmp_path / "ratings.csv", "hyperlex", tmp_path / "out", plots=False, bootstrap=0)
    assert not (tmp_path / "out").exists()
    result = invoke("process", tmp_path / "ratings.csv", "--protocol", "hyperlex",
                    "--out", tmp_path / "out", "--no-plots")
    assert result.exit_code == 1
    assert result.output.strip().splitlines()[-1].startswith(
        f"Error: {tmp_path / 'ratings.csv'}: incomplete release: no rater is left")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = run(tmp_path / "ratings.csv", "hyperlex", tmp_path / "out", plots=False,
                     bootstrap=0, allow_incomplete=True)
    assert report.warnings == ["no rater is left after the exclusions"]
    assert (tmp_path / "out" / "hyperlex-all.txt").read_bytes() == HYPERLEX_HEADER
    card = (tmp_path / "out" / "README.md").read_text()
    assert "**Incomplete release.** no rater is left" in card


def test_unrated_and_thin_pairs_are_problems(tmp_path):
    ratings = ratings_of({("cat", "dog"): [5, 6, 5], ("sun", "moon"): [4, 4]})
    pairs = pd.DataFrame({"word1": ["cat", "sun", "tea"], "word2": ["dog", "moon", "cup"]})
    protocol = load_protocol("tr9856")          # no exclusion rule; 10 annotators per pair
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AgreementWarning)
        result = process_ratings(ratings.assign(rating=ratings["rating"] > 4), protocol,
                                 rng=np.random.default_rng(0), pairs=pairs)
    check = result.report.release_check
    assert check.pairs_below == 2 and check.pairs_missing == 1
    assert result.problems == [
        "2 of 2 pairs have fewer than 10 accepted raters, the protocol's min_raters_per_pair "
        "(fewest: 2, e.g. sun / moon)",
        "1 of the 3 pairs of the pairs file have no accepted rating (e.g. tea / cup)"]


# -- language packs ----------------------------------------------------------------------------

def test_language_pack_metadata_never_comes_from_english_norms(tmp_path):
    hebrew = load_protocol(str(PACKAGED / "he" / "simlex999.toml"))
    norms, concreteness, used = release_norms(hebrew, "simlex")     # the he pack names none
    assert norms is None and concreteness is None and used["language"] == "he"
    assert "the 'he' language pack names no association and concreteness norms" in used["note"]
    scores = gold_scores(ratings_of({("cat", "dog"): [4, 5, 6], ("old", "new"): [1, 2, 0]}))
    gold = gold_table(scores, "simlex", usf=None, brysbaert=None)
    assert gold["Assoc(USF)"].isna().all() and gold["conc(w1)"].isna().all()
    # no association known at all: SimAssoc333 is empty too, not "none associated" (issue 47)
    assert gold["SimAssoc333"].isna().all()
    assert release_text(gold, "simlex").splitlines()[1].split("\t")[8] == ""

    pack = tmp_path / "xx"
    pack.mkdir()
    (pack / "simlex999.toml").write_text(
        (PACKAGED / "he" / "simlex999.toml").read_text(encoding="utf-8"), encoding="utf-8")
    (pack / "norms.tsv").write_text("cue\tresponse\tR1\tN\ndog\tcat\t30\t100\ndog\tbone\t20\t100\n")
    (pack / "conc.csv").write_text("Word,Conc.M\ncat,4.5\ndog,4.75\n")
    (pack / "pack.toml").write_text(
        'language = "xx"\nprotocols = ["simlex999.toml"]\n[resources]\n'
        '[resources.association_norms]\npath = "norms.tsv"\n'
        '[resources.concreteness]\npath = "conc.csv"\n')
    norms, concreteness, used = release_norms(load_protocol(str(pack / "simlex999.toml")),
                                              "simlex")
    assert used["association"] == "norms.tsv" and used["concreteness"] == "conc.csv"
    gold = gold_table(scores, "simlex", usf=norms, brysbaert=concreteness).set_index("word1")
    assert gold.loc["cat", "Assoc(USF)"] == pytest.approx(3.0)   # 10 x 30/100, cue dog
    assert np.isnan(gold.loc["old", "Assoc(USF)"])               # "new" was never a cue
    assert (gold.loc["cat", "conc(w1)"], gold.loc["cat", "conc(w2)"]) == (4.5, 4.75)


def test_plain_release_is_gold_csv_with_a_valid_package(tmp_path):
    ratings = ratings_of({("cat", "dog"): [7, 8, 9], ("sun", "moon"): [2, 3, 1]},
                         scale_min=0.0, scale_max=10.0)
    ratings.to_csv(tmp_path / "ratings.csv", index=False)
    report = run(tmp_path / "ratings.csv", "plain", tmp_path / "out", plots=False, bootstrap=0)
    out = tmp_path / "out"
    assert report.release_file == "gold.csv" and report.warnings == []
    assert (out / "gold.csv").read_text() == "word1,word2,score\ncat,dog,8.0\nsun,moon,2.0\n"
    result = validate(out / "datapackage.json")
    assert result.valid, result.flatten(["rowNumber", "fieldName", "type", "note"])
    assert 'pd.read_csv("gold.csv")' in (out / "README.md").read_text()


@pytest.mark.parametrize("tabulate", [True, False])
def test_report_head_shows_missing_norms_as_empty_cells(monkeypatch, tabulate):
    """A language pack without norms releases empty norm columns (issue 34 item 1): report.md's
    table shows them as empty cells, with or without tabulate (pandas 3 keeps NaN through
    astype(str), which crashed the plain writer)."""
    from lexgold.process import report_md

    monkeypatch.setattr(report_md, "_has_tabulate", lambda: tabulate)
    gold = pd.DataFrame({"word1": ["schizzare", "idolo"], "word2": ["sormontare", "pupillo"],
                         "SimLex999": [4.93, 8.87], "conc(w1)": [np.nan, np.nan],
                         "concQ": pd.Series([np.nan, "2"], dtype=object)})
    table = report_md._head(gold)
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in table.splitlines()]
    assert rows[2] == ["schizzare", "sormontare", "4.93", "", ""]
    assert rows[3][3:] == ["", "2"]
    assert "nan" not in table


def test_a_release_is_written_whole_or_not_at_all(tmp_path, monkeypatch):
    """A failure after some files are written leaves no half folder: a first failed run leaves
    nothing, a failed rerun leaves the previous release as it was (issue 34 item 2)."""
    from lexgold.process import pipeline

    pairs = usf_pairs(60, rng=np.random.default_rng(1))
    ratings, _ = simulate_ratings(pairs, "simlex", rng=np.random.default_rng(2), tranches=0,
                                  raters_per_tranche=12, crowd=Crowd(spammers=0.0))
    ratings.to_csv(tmp_path / "ratings.csv", index=False)
    args = ["process", tmp_path / "ratings.csv", "--protocol", "simlex", "--no-plots",
            "--bootstrap", "0", "--allow-incomplete", "--out", tmp_path / "gold"]
    real = pipeline.write_publication

    def fail_midway(out, *rest, **options):
        assert (out / "gold.csv").is_file()        # the tables are written by now
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(pipeline, "write_publication", fail_midway)
    result = invoke(*args)
    assert isinstance(result.exception, OSError) and "No space left" in str(result.exception)
    assert "nothing written to" in result.output and "no release folder made" in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ratings.csv"]

    monkeypatch.setattr(pipeline, "write_publication", real)
    done = invoke(*args)
    assert done.exit_code == 0, done.output
    before = {p.name: p.read_bytes() for p in (tmp_path / "gold").iterdir()}
    monkeypatch.setattr(pipeline, "write_publication", fail_midway)
    result = invoke(*args)
    assert isinstance(result.exception, OSError) and "the previous release there is kept" in result.output
    assert {p.name: p.read_bytes() for p in (tmp_path / "gold").iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gold", "ratings.csv"]


def test_a_folder_of_other_files_is_never_replaced(tmp_path):
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "mine.txt").write_text("keep me")
    ratings_of({("cat", "dog"): [5, 6, 5]}).to_csv(tmp_path / "ratings.csv", index=False)
    result = invoke("process", tmp_path / "ratings.csv", "--protocol", "plain", "--scale", 0, 6,
                    "--out", tmp_path / "notes")
    assert result.exit_code == 1
    assert result.output.strip().splitlines()[-1] == (
        f"Error: {tmp_path / 'notes'}: is a folder of other files, not a lexgold release (no "
        f"SHA256SUMS); name a new or empty folder")
    assert [p.name for p in (tmp_path / "notes").iterdir()] == ["mine.txt"]


def test_dataset_card_reads_as_written(simlex_release):
    """Issue 34 item 4: one "Uses" section, the paper's authors readable in the raw file (no
    ``&amp;``), the ICC's rater count without spurious decimals."""
    text = (simlex_release / "gold" / "README.md").read_text()
    assert text.count("### Uses") == 1
    assert "Hill, Reichart & Korhonen" in text and "&amp;" not in text
    raters = re.search(r"the mean of a tranche's (\S+) raters", text).group(1)
    assert not raters.endswith("0") and float(raters) > 1


def test_a_study_keeps_its_builders_manifest(tmp_path, usf):
    """``study create`` copies the builder's manifest (report.json beside the pairs) into the
    study, so a release processed from the study names how its pairs were built, and a study
    made from a hand-written pair file says TODO (issue 34 item 4)."""
    from lexgold.study.db import database_url, make_engine, session_factory
    from lexgold.study.export_sql import study_description
    from lexgold.study.store import create_study

    def stored(url):
        engine = make_engine(url)
        with session_factory(engine)() as session:
            description = study_description(session)
        engine.dispose()
        return description["builder_manifest"]

    pairs = usf_pairs(60, rng=np.random.default_rng(2), usf=usf)
    (tmp_path / "built").mkdir()
    pairs.to_csv(tmp_path / "built" / "pairs.csv", index=False)
    manifest = {"lexgold_version": "9.9", "seed": 11,
                "protocol": {"file": "simlex999.toml", "sha256": "ab" * 32}, "resources": {}}
    (tmp_path / "built" / "report.json").write_text(json.dumps({"manifest": manifest}))
    url = database_url(tmp_path / "study.sqlite")
    create_study("simlex", tmp_path / "built" / "pairs.csv", url, seed=1)
    kept = stored(url)
    assert kept["seed"] == 11 and kept["protocol"]["sha256"] == "ab" * 32

    (tmp_path / "hand").mkdir()
    pairs.to_csv(tmp_path / "hand" / "pairs.csv", index=False)
    hand = database_url(tmp_path / "hand.sqlite")
    create_study("simlex", tmp_path / "hand" / "pairs.csv", hand)
    assert stored(hand) is None


@pytest.mark.parametrize("keys,score", [("", "4.5"), ('score_format = "fixed"\n', "4.50"),
                                        ('score_format = "trimmed"\n', "4.5")])
def test_plain_release_number_format_is_a_protocol_key(tmp_path, keys, score):
    """Issue 36: gold.csv of the plain release prints its score by [process.release]
    score_format (default "shortest", as plain.toml declares): the mean of 4 and 5 is 4.5."""
    text = (PACKAGED / "plain.toml").read_text(encoding="utf-8")
    text = text.replace('score_format = "shortest"', "#")
    protocol = tmp_path / "mine.toml"
    protocol.write_text(text.replace("[process.release]\n", "[process.release]\n" + keys),
                        encoding="utf-8")
    (tmp_path / "r.csv").write_text("rater_id,tranche,word1,word2,rating\na,1,cup,mug,4\n"
                                    "b,1,cup,mug,5\na,1,sun,moon,1\nb,1,sun,moon,2\n",
                                    encoding="utf-8")
    out = CliRunner().invoke(cli, ["process", str(tmp_path / "r.csv"), "--protocol",
                                   str(protocol), "--scale", "0", "6", "--out",
                                   str(tmp_path / "gold"), "--no-plots", "--bootstrap", "0"])
    assert out.exit_code == 0, out.output
    lines = (tmp_path / "gold" / "gold.csv").read_text(encoding="utf-8").splitlines()
    assert f"cup,mug,{score}" in lines


# -- the card's words (issue 47) ----------------------------------------------------------------

def test_the_cards_pairs_line_is_prose_and_a_translation_is_described(tmp_path):
    from lexgold.manifest import manifest_beside
    from lexgold.process.publish import pairs_origin

    digest = "0123456789abcdef" * 4
    manifest = {"lexgold_version": "9.9", "seed": 11,
                "protocol": {"file": "simlex999.toml", "sha256": "ab" * 32},
                "resources": {f"norms{i}": [{"file": f"norms{i}.csv", "sha256": digest}]
                              for i in range(12)}}
    line = pairs_origin(manifest)
    assert "{" not in line and "\"" not in line and len(line) < 800
    assert line.startswith("built by lexgold 9.9 with protocol `simlex999.toml`")
    assert "norms0: `norms0.csv` (sha256 `0123456789ab`)" in line
    # a translation's aligned.csv: its report.json counts the pairs (lexgold translate
    # adjudicate), and the card describes them from it
    (tmp_path / "it").mkdir()
    (tmp_path / "it" / "aligned.csv").write_text("pair_id,lang,word1,word2\n", encoding="utf-8")
    (tmp_path / "it" / "report.json").write_text(json.dumps(
        {"lang": "it", "pairs": 897, "by_origin": {"agreed": 850, "adjudicated": 47},
         "flags": {"multiword1": 3, "collapsed": 0}, "dropped": 102}), encoding="utf-8")
    aligned = manifest_beside(tmp_path / "it" / "aligned.csv")
    assert pairs_origin(aligned) == (
        "897 translated pairs (it) from `aligned.csv` (`lexgold translate adjudicate`): agreed "
        "850, adjudicated 47; 102 source pairs dropped; flagged: multiword1 3.")
    assert "TODO" not in pairs_origin(None) and "TODO" not in pairs_origin({}, {"name": "p.csv"})


def test_citation_lists_the_papers_authors_one_by_one(simlex_release):
    citation = yaml.safe_load((simlex_release / "gold" / "CITATION.cff").read_text())
    assert citation["references"][0]["authors"] == [
        {"family-names": "Hill"}, {"family-names": "Reichart"}, {"family-names": "Korhonen"}]
    assert "TODO" not in (simlex_release / "gold" / "CITATION.cff").read_text()


def test_exclusions_csv_prints_figures_to_four_decimals(simlex_release):
    text = (simlex_release / "gold" / "exclusions.csv").read_text()
    decimals = [len(number.split(".")[1]) for number in re.findall(r"-?\d+\.\d+", text)]
    assert decimals and max(decimals) <= 4
