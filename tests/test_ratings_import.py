"""``lexgold ratings import`` on small files written in the published layouts, byte for byte:
WordSim-353 set1/set2 (.csv and .tab), MEN's per-rater agreement files, SimVerb-3500's ratings
without rater identity, Potato JSON; then agree / process (plain protocol) / evaluate."""

import itertools
import json
from decimal import ROUND_HALF_UP, Decimal

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from scipy import stats

from lexgold.cli import cli
from lexgold.errors import InputError
from lexgold.process.agreement import iaa_weighted_by_pairs
from lexgold.ratings.long import check_ratings, on_scale
from lexgold.process.splithalf import split_half_random
from lexgold.ratings.importer import import_ratings

NBSP = "\xa0"


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def ws353_rows(n_pairs, n_raters, seed, repeat=None):
    """Rows (word1, word2, ratings) of a WordSim-353-like set; ``repeat`` lists a pair twice."""
    rng = np.random.default_rng(seed)
    truth = rng.uniform(0, 10, n_pairs)
    rows = []
    for i in range(n_pairs):
        ratings = np.clip(np.round(truth[i] + rng.normal(0, 1.5, n_raters)), 0, 10).astype(int)
        rows.append((f"w{seed}a{i}", f"w{seed}b{i}", ratings))
    if repeat is not None:
        word1, word2, ratings = rows[repeat]
        rows.append((word1, word2, np.clip(ratings + rng.integers(-1, 2, n_raters), 0, 10)))
    return rows


def write_ws353(path, rows, delimiter=","):
    """The layout of set1.csv / set2.csv: ``Word 1,Word 2,Human (mean),1,...,13``, CRLF, with
    stray blanks, a non-breaking space and a trailing delimiter as in hand-made files."""
    n = len(rows[0][2])
    lines = [delimiter.join(["Word 1", "Word 2", "Human (mean)", *map(str, range(1, n + 1))])]
    for k, (word1, word2, ratings) in enumerate(rows):
        fields = [word1, word2, published_mean(ratings), *map(str, ratings)]
        if k == 1:
            fields[0] = f" {fields[0]} "                       # stray blanks
        if k == 2:
            fields[3] = fields[3] + NBSP                        # a non-breaking space
        line = delimiter.join(fields) + (delimiter if k == 3 else "")   # trailing delimiter
        lines.append(line)
    path.write_bytes(("\r\n".join(lines) + "\r\n").encode("utf-8"))


def published_mean(ratings) -> str:
    """WordSim-353's ``Human (mean)``: the exact mean rounded half up to two decimals (its
    published means do; 2.625 -> 2.63, where numpy and round() give 2.62)."""
    exact = Decimal(int(sum(ratings))) / Decimal(len(ratings))
    return str(exact.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def mean_pairwise_rho(rows):
    """IAA-1 of one set by hand: scipy Spearman of every two rater columns over all rows."""
    matrix = np.array([r for _, _, r in rows], dtype=float)
    rhos = [stats.spearmanr(matrix[:, a], matrix[:, b]).statistic
            for a, b in itertools.combinations(range(matrix.shape[1]), 2)]
    return float(np.mean(rhos))


def rho_vs_mean(rows):
    matrix = np.array([r for _, _, r in rows], dtype=float)
    n = matrix.shape[1]
    return float(np.mean([stats.spearmanr(matrix[:, r], np.delete(matrix, r, axis=1).mean(
        axis=1)).statistic for r in range(n)]))


@pytest.fixture
def ws353(tmp_path):
    set1 = ws353_rows(12, 13, seed=1, repeat=4)      # WordSim-353 lists a pair twice in set1
    set2 = ws353_rows(15, 16, seed=2)
    write_ws353(tmp_path / "set1.csv", set1)
    write_ws353(tmp_path / "set2.csv", set2)
    return tmp_path, set1, set2


def test_wordsim353_wide_files(ws353):
    folder, set1, set2 = ws353
    result = run("ratings", "import", folder / "set1.csv", folder / "set2.csv", "--scale", 0, 10,
                 "--out", folder / "ws.csv")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("set1.csv: one column per rater, 13 raters, 12 pairs, 169 ratings")
    assert "CRLF line ends on 14 lines" in lines[0]
    assert "non-breaking spaces in 1 value" in lines[0]
    assert "stray blanks around 1 value" in lines[0]
    assert "trailing delimiters on 1 line" in lines[0]
    assert "'Human (mean)' is not a rater" in lines[0] and "on 13 of 13 rows" in lines[0]
    assert "1 pair listed twice (w1a4-w1b4 (line 14))" in lines[0]
    assert "set2.csv: one column per rater, 16 raters, 15 pairs, 240 ratings" in lines[1]
    assert "listed twice" not in lines[1]
    long = pd.read_csv(folder / "ws.csv", keep_default_na=False)
    assert list(long.columns) == ["rater_id", "tranche", "word1", "word2", "rating", "kind",
                                  "scale_min", "scale_max"]
    assert set(long["rater_id"]) == ({f"set1:{i}" for i in range(1, 14)}
                                     | {f"set2:{i}" for i in range(1, 17)})
    assert set(long["tranche"]) == {"set1", "set2"}
    assert long.loc[long["word1"] == "w1a1", "word1"].size == 13      # blanks stripped
    assert (long["kind"] == "duplicate").sum() == 13
    assert (long["scale_min"] == 0).all() and (long["scale_max"] == 10).all()


def test_wordsim353_agreement_pooled_and_weighted_by_pairs(ws353):
    folder, set1, set2 = ws353
    run("ratings", "import", folder / "set1.csv", folder / "set2.csv", "--scale", 0, 10,
        "--out", folder / "ws.csv")
    result = run("agree", folder / "ws.csv", "--json", "--detail", "--min-overlap", 5)
    assert result.exit_code == 0, result.output
    figures = json.loads(result.output.splitlines()[-1])
    # the papers' aggregation: per set, the duplicate row kept, weighted by listed pairs
    expected1 = (13 * mean_pairwise_rho(set1) + 15 * mean_pairwise_rho(set2)) / 28
    expected2 = (13 * rho_vs_mean(set1) + 15 * rho_vs_mean(set2)) / 28
    assert figures["by_tranche"]["iaa1"] == pytest.approx(expected1, abs=1e-12)
    assert figures["by_tranche"]["iaa2"] == pytest.approx(expected2, abs=1e-12)
    assert [t["pairs"] for t in figures["by_tranche"]["tranches"]] == [13, 15]
    # pooled: every within-set rater pair once, the repeated pair merged per rater
    merged1 = set1[:4] + [(set1[4][0], set1[4][1], (set1[4][2] + set1[-1][2]) / 2)] + set1[5:-1]
    pooled = [stats.spearmanr(np.array([r for *_, r in rows], dtype=float)[:, a],
                              np.array([r for *_, r in rows], dtype=float)[:, b]).statistic
              for rows in (merged1, set2)
              for a, b in itertools.combinations(range(len(rows[0][2])), 2)]
    assert figures["iaa1"] == pytest.approx(np.mean(pooled), abs=1e-12)
    assert figures["raters"] == 29 and figures["pairs"] == 27
    assert set(json.loads(run("agree", folder / "ws.csv", "--json").output)) == {
        "iaa1", "iaa2", "raters", "pairs", "alpha_interval", "alpha_ordinal", "icc1", "icck",
        "icc", "aggregate_model"}


def test_wordsim353_tab_variant_reads_the_same(ws353):
    folder, set1, _ = ws353
    (folder / "tab").mkdir()
    write_ws353(folder / "tab" / "set1.tab", set1, delimiter="\t")
    a, _ = import_ratings([folder / "set1.csv"])
    b, _ = import_ratings([folder / "tab" / "set1.tab"])
    pd.testing.assert_frame_equal(a, b)


def test_wordsim353_plain_process_mean_is_the_published_mean(ws353):
    folder, set1, set2 = ws353
    run("ratings", "import", folder / "set1.csv", folder / "set2.csv", "--scale", 0, 10,
        "--out", folder / "ws.csv")
    result = run("process", folder / "ws.csv", "--protocol", "plain", "--out", folder / "gold",
                 "--no-plots", "--bootstrap", 0)
    assert result.exit_code == 0, result.output
    assert "pairs listed twice in a source: 1, merged" in result.output
    gold = pd.read_csv(folder / "gold" / "gold.csv")
    assert list(gold.columns) == ["word1", "word2", "score"]
    published = {(w1, w2): float(published_mean(r)) for w1, w2, r in set1[:-1] + set2}
    ties = [r for *_, r in set1[:-1] + set2 if round(float(np.mean(r)), 2)
            != float(published_mean(r))]
    assert ties, "the fixture should hold a mean that half-to-even rounds differently"
    for row in gold.itertuples():
        if (row.word1, row.word2) == (set1[4][0], set1[4][1]):
            assert row.score == pytest.approx(np.mean([set1[4][2], set1[-1][2]]), abs=0.005)
        else:
            assert row.score == pytest.approx(published[row.word1, row.word2], abs=1e-9)
    report = json.loads((folder / "gold" / "report.json").read_text())
    assert report["scale"] == {"ratings": [0.0, 10.0], "released": [0.0, 10.0],
                               "declared": [[0.0, 10.0]], "rescaled": [], "warnings": []}
    assert report["counts"]["pairs_listed_twice_merged"] == 1


def write_men(path, rows, trailing=()):
    """MEN agreement file: no header, ``word1 TAB word2 TAB rating``, some trailing TABs."""
    lines = [f"{w1}\t{w2}\t{r}" + ("\t" if i in trailing else "")
             for i, (w1, w2, r) in enumerate(rows)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture
def men(tmp_path):
    rng = np.random.default_rng(3)
    words = [(f"a{i}-n", f"b{i}-n") for i in range(30)]
    elias = [(w1, w2, int(rng.integers(1, 8))) for w1, w2 in words[:25]]
    marcos = [(w1, w2, int(np.clip(r + rng.integers(-1, 2), 1, 7))) for w1, w2, r in elias[3:]]
    marcos += [(w1, w2, int(rng.integers(1, 8))) for w1, w2 in words[25:]]
    write_men(tmp_path / "elias-men-ratings.txt", elias, trailing=(0, 7))
    write_men(tmp_path / "marcos-men-ratings.txt", marcos)
    return tmp_path, elias, marcos


def test_men_two_rater_files(men):
    folder, elias, marcos = men
    result = run("ratings", "import", folder / "elias-men-ratings.txt",
                 folder / "marcos-men-ratings.txt", "--scale", 1, 7, "--out", folder / "men.csv")
    assert result.exit_code == 0, result.output
    assert ("elias-men-ratings.txt: one file per rater, 1 rater, 25 pairs, 25 ratings, "
            "scale seen") in result.output
    assert "trailing delimiters on 2 lines" in result.output
    assert "(22 pairs rated by more than one)" in result.output
    long = pd.read_csv(folder / "men.csv")
    assert set(long["rater_id"]) == {"elias-men-ratings", "marcos-men-ratings"}
    assert set(long["tranche"].astype(str)) == {"1"}
    figures = json.loads(run("agree", folder / "men.csv", "--json", "--detail").stdout)
    shared = {(w1, w2): r for w1, w2, r in elias}
    both = [(shared[w1, w2], r) for w1, w2, r in marcos if (w1, w2) in shared]
    assert figures["shared_pairs"] == len(both) == 22
    expected = stats.spearmanr(*zip(*both)).statistic
    assert figures["iaa1"] == pytest.approx(expected, abs=1e-12)
    text = run("agree", folder / "men.csv").output
    assert "rated by more than one rater: 22" in text


def test_men_tranche_option_and_common_prefix(men):
    folder, *_ = men
    frame, _ = import_ratings([folder / "elias-men-ratings.txt"], tranche="men")
    assert set(frame["tranche"]) == {"men"}
    (folder / "men-elias.txt").write_text("a\tb\t3\n")
    (folder / "men-marcos.txt").write_text("a\tb\t4\n")
    frame, _ = import_ratings([folder / "men-elias.txt", folder / "men-marcos.txt"])
    assert set(frame["tranche"]) == {"men"}


def test_men_declared_scale_is_rescaled_onto_the_protocol(men, tmp_path):
    folder, elias, _ = men
    run("ratings", "import", folder / "elias-men-ratings.txt", "--scale", 1, 7, "--out",
        folder / "men.csv")
    protocol = tmp_path / "p.toml"
    protocol.write_text('name = "p"\n[process.calibration]\nenabled = false\n'
                        '[process.exclusions]\nrules = []\n[process.release]\nformat = "plain"\n'
                        'min_raters_per_pair = 1\n'
                        'rating_min = 0.0\nrating_max = 6.0\nscore_min = 0.0\nscore_max = 10.0\n')
    result = run("process", folder / "men.csv", "--protocol", protocol, "--out", folder / "g",
                 "--no-plots", "--bootstrap", 0)
    assert result.exit_code == 0, result.output
    assert "ratings declared on 1-7 rescaled linearly to 0-6" in result.output
    gold = pd.read_csv(folder / "g" / "gold.csv")
    expected = [round((r - 1) / 6 * 10, 2) for _, _, r in elias]     # 1-7 -> 0-6 -> 0-10
    assert gold["score"].tolist() == pytest.approx(expected)


def write_simverb(path):
    """SimVerb-3500-ratings.txt: ``word1 word2 r1 ... r10`` header, TABs, rows of 10 or 11
    ratings on SimVerb's 0-6 scale."""
    rng = np.random.default_rng(4)
    rows = []
    for i in range(20):
        n = 11 if i % 3 == 0 else 10
        rows.append((f"v{i}", f"u{i}", [int(x) for x in np.clip(
            np.round(i * 6 / 19 + rng.normal(0, 1, n)), 0, 6)]))
    header = "\t".join(["word1", "word2", *(f"r{k}" for k in range(1, 11))])
    lines = [header] + ["\t".join([w1, w2, *map(str, r)]) for w1, w2, r in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return rows


def test_simverb_anonymous_ratings(tmp_path):
    rows = write_simverb(tmp_path / "SimVerb-3500-ratings.txt")
    result = run("ratings", "import", tmp_path / "SimVerb-3500-ratings.txt", "--scale", 0, 6,
                 "--out", tmp_path / "sv.csv")
    assert result.exit_code == 0, result.output
    assert "SimVerb-3500-ratings.txt: ratings without rater identity, 20 pairs, 207 ratings" \
        in result.output
    assert "kept as anonymous ratings" in result.output
    assert "scale seen 0-6 (declared 0-6)" in result.output and "Warning" not in result.output
    refused = run("agree", tmp_path / "sv.csv")
    assert refused.exit_code == 1
    assert "IAA-1 and IAA-2: not defined for ratings without rater identity" in refused.output
    half = json.loads(run("agree", tmp_path / "sv.csv", "--split-half", "--json").output)
    assert half["iaa1"] is None and half["split_half"]["pairs"] == 20
    assert 0.8 < half["split_half"]["r"] <= 1
    result = run("process", tmp_path / "sv.csv", "--protocol", "plain", "--out", tmp_path / "g",
                 "--no-plots")
    assert result.exit_code == 0, result.output
    assert "20 pairs released from 207 anonymous ratings" in result.output
    gold = pd.read_csv(tmp_path / "g" / "gold.csv")
    assert gold["score"].tolist() == pytest.approx([round(np.mean(r), 2) for *_, r in rows])
    refused = run("process", tmp_path / "sv.csv", "--protocol", "simlex", "--out", tmp_path / "h")
    assert refused.exit_code == 1 and "calibration (SimLex-999 section 3.6)" in refused.output


def test_potato_json_lines(tmp_path):
    lines = [{"user_id": "u1", "instance": {"word1": "car", "word2": "auto"},
              "label_annotations": {"similarity": {"scale_1": "5"}}},
             {"annotator": "u2", "word1": "car", "word2": "auto", "rating": 6}]
    (tmp_path / "annotated.jsonl").write_text("\n".join(map(json.dumps, lines)) + "\n")
    frame, imported = import_ratings([tmp_path / "annotated.jsonl"])
    assert imported[0].layout == "potato"
    assert frame[["rater_id", "word1", "word2", "rating", "kind"]].values.tolist() == [
        ["u1", "car", "auto", 5.0, "unique"], ["u2", "car", "auto", 6.0, "unique"]]


def test_potato_rater_from_its_output_folder(tmp_path):
    folder = tmp_path / "annotation_output" / "rater7"
    folder.mkdir(parents=True)
    (folder / "annotated_instances.jsonl").write_text(json.dumps(
        {"id": "3", "word1": "cup", "word2": "mug", "label_annotations": {"sim": {"5": "5"}}})
        + "\n")
    frame, _ = import_ratings([folder / "annotated_instances.jsonl"], layout="potato")
    assert frame[["rater_id", "rating"]].values.tolist() == [["rater7", 5.0]]


def test_long_csv_passes_through(tmp_path):
    (tmp_path / "long.csv").write_text("rater_id,tranche,word1,word2,rating,kind\n"
                                       "a,1,x,y,3,unique\na,1,x,y,4,calibration\n")
    frame, imported = import_ratings([tmp_path / "long.csv"])
    assert imported[0].layout == "long" and frame["kind"].tolist() == ["unique", "calibration"]


@pytest.mark.parametrize("content,message", [
    ("Word 1,Word 2,Human (mean),1,2\r\na,b,3.00,3,x3\r\n", "bad.csv:2, field '2': expected a "
                                                             "number, found 'x3'"),
    ("Word 1,Word 2,Human (mean),1,2\na,b,3.00,3\n", "bad.csv:2: expected 5 fields"),
    ("a\tb\t3\nc\td\n", "bad.csv:2: expected 3 fields (word1, word2, rating), found 2"),
    ("hello world\n", "bad.csv:1: cannot recognise the layout"),
    ("a\tb\t3\nc\td\t12\n", "bad.csv:2, field 'rating': rating 12 is outside the declared "
                            "scale 1-7"),
])
def test_errors_name_file_line_and_value(tmp_path, content, message):
    (tmp_path / "bad.csv").write_bytes(content.encode())
    result = run("ratings", "import", tmp_path / "bad.csv", "--scale", 1, 7, "--out",
                 tmp_path / "o.csv")
    assert result.exit_code == 1
    assert message in result.output
    assert "Traceback" not in result.output


def test_explicit_layout_overrides_detection(tmp_path):
    (tmp_path / "r.txt").write_text("a\tb\t3\n")
    with pytest.raises(InputError, match=r"r\.txt:1: expected a header"):
        import_ratings([tmp_path / "r.txt"], layout="wide")


def test_process_refuses_ratings_outside_the_protocol_scale(tmp_path):
    (tmp_path / "r.csv").write_text("rater_id,tranche,word1,word2,rating\n"
                                    "a,1,x,y,5\na,1,x,z,50\na,1,y,z,80\n")
    result = run("process", tmp_path / "r.csv", "--protocol", "simlex", "--out", tmp_path / "g")
    assert result.exit_code == 1
    assert "r.csv:3, field 'rating': rating 50 is outside 0-6, the protocol's scale" in \
        result.output
    result = run("process", tmp_path / "r.csv", "--protocol", "plain", "--out", tmp_path / "g")
    assert result.exit_code == 1 and "declare none" in result.output
    result = run("process", tmp_path / "r.csv", "--protocol", "plain", "--scale", 0, 10,
                 "--out", tmp_path / "g", "--no-plots")
    assert result.exit_code == 1
    assert "rating 50 is outside 0-10, the declared scale" in result.output


def test_on_scale_maps_declared_scales_linearly():
    frame = check_ratings(pd.DataFrame({
        "rater_id": "a", "tranche": "1", "word1": ["p", "q", "r", "s"], "word2": "w",
        "rating": [1.0, 4.0, 7.0, 3.0], "scale_min": [1, 1, 1, None],
        "scale_max": [7, 7, 7, None]}))
    assert on_scale(frame, 0, 6)["rating"].tolist() == [0.0, 3.0, 6.0, 3.0]


def test_weighted_by_pairs_keeps_repeats_as_items():
    ratings = pd.DataFrame({"rater_id": list("ababab"), "tranche": "t",
                            "word1": list("ppqqpp"), "word2": "w", "rating": [1, 2, 3, 3, 2, 1],
                            "kind": ["unique"] * 4 + ["duplicate"] * 2})
    kept = iaa_weighted_by_pairs(ratings, min_overlap=2)
    merged = iaa_weighted_by_pairs(ratings, min_overlap=2, repeats="merge")
    assert kept["iaa1"] == pytest.approx(stats.spearmanr([1, 3, 2], [2, 3, 1]).statistic)
    assert kept["tranches"][0]["pairs"] == 3 and merged["tranches"][0]["pairs"] == 2
    assert merged["iaa1"] == pytest.approx(1.0)        # p 1.5 < q 3 for both raters


def test_weighted_by_pairs_weights_tranches_by_their_pairs():
    rows = []
    for tranche, n, flip in (("x", 3, False), ("y", 5, True)):
        for i in range(n):
            rows += [("a" + tranche, tranche, f"{tranche}{i}", "w", i),
                     ("b" + tranche, tranche, f"{tranche}{i}", "w", n - i if flip else i)]
    ratings = pd.DataFrame(rows, columns=["rater_id", "tranche", "word1", "word2", "rating"])
    result = iaa_weighted_by_pairs(ratings, min_overlap=3)
    assert result["iaa1"] == pytest.approx((3 * 1 + 5 * -1) / 8)


def test_split_half_random_matches_the_mean_over_all_assignments():
    # three pairs with two ratings each: 8 equally likely assignments of the halves
    ratings = [(1, 2), (2, 5), (4, 3)]
    frame = pd.DataFrame([(f"?r{p}{k}", "1", f"p{p}", "w", r) for p, pair in enumerate(ratings)
                          for k, r in enumerate(pair)],
                         columns=["rater_id", "tranche", "word1", "word2", "rating"])
    expected = np.mean([stats.pearsonr([pair[s] for pair, s in zip(ratings, swap)],
                                       [pair[1 - s] for pair, s in zip(ratings, swap)]).statistic
                        for swap in itertools.product((0, 1), repeat=3)])
    result = split_half_random(frame, rng=np.random.default_rng(0), splits=4000)
    assert result["r"] == pytest.approx(expected, abs=0.03)
    again = split_half_random(frame, rng=np.random.default_rng(0), splits=4000)
    assert again == result


def test_agree_on_a_published_layout_says_how_to_import_it(ws353):
    folder, *_ = ws353
    result = run("agree", folder / "set1.csv")
    assert result.exit_code == 1
    assert "set1.csv:1, field 'rater_id': missing column rater_id: this is one column per " \
           "rater" in result.output
    assert "lexgold ratings import set1.csv --out LONG.csv" in result.output
