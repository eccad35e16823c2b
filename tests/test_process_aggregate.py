"""``[process] aggregate`` (issues 33 and 36): a pair's score by the mean, a rater model or
Rare Words' trimmed mean.

- ``trimmed_1sd`` against hand cases and the real excerpt of rw.txt in tests/data/rw (its
  published scores, its import note, and ``process --aggregate trimmed_1sd`` as docs/process.md
  runs it);
- ``model`` against a hand case, the maximum-likelihood equations, Netflix SUREAL's
  ``MaximumLikelihoodEstimationModelContentOblivious`` on the real WordSim-353 set 1 log, and a
  simulation with known biases and noises (labelled simulated);
- the key's checking (one-line errors), what a release records of the rule, and the mean's
  release unchanged.
"""

import contextlib
import gzip
import io
import json
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from lexgold.cli import cli
from lexgold.process.aggregate import fit_rater_model, pair_estimates, trimmed_1sd_scores
from lexgold.process.config import process_config
from lexgold.ratings.long import answers
from lexgold.protocols import ProtocolError, load_protocol
from lexgold.ratings.layouts import read_layout
from lexgold.stats import trimmed_1sd

RW = Path(__file__).parent / "data" / "rw" / "rw.excerpt.txt"
WS353 = resources.files("lexgold.resources") / "data" / "wordsim353_set1_set1.csv.gz"


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def rw_rows():
    """(word1, word2, published text, ratings) of the real excerpt."""
    rows = []
    for line in RW.read_text(encoding="utf-8").splitlines():
        fields = line.split("\t")
        rows.append((fields[0], fields[1], fields[2], [float(v) for v in fields[3:] if v]))
    return rows


@pytest.fixture(scope="module")
def ws353(tmp_path_factory) -> Path:
    """WordSim-353 set 1 as distributed (the vendored copy, unzipped)."""
    path = tmp_path_factory.mktemp("ws353") / "set1.csv"
    path.write_bytes(gzip.decompress(WS353.read_bytes()))
    return path


@pytest.fixture(scope="module")
def ws353_answers(ws353) -> pd.DataFrame:
    return answers(read_layout(ws353, "wide").frame)


# -- trimmed_1sd --------------------------------------------------------------------------------

def test_trimmed_1sd_by_hand():
    # mean 5, population SD sqrt(42 / 10) = 2.05: the 1 (4 off) and the 2 (3 off) go
    assert trimmed_1sd([7, 7, 6, 1, 4, 6, 6, 7, 2, 4]) == pytest.approx(47 / 8)
    # mean 4.5, SD exactly 2.5: the 7 and the 2 lie on the bound and stay (5.4 without them)
    assert trimmed_1sd([7, 6, 0, 5, 6, 5, 5, 2, 1, 8]) == pytest.approx(36 / 7)
    assert trimmed_1sd([3, 3, 3]) == 3.0
    assert trimmed_1sd([4]) == 4.0


def test_trimmed_1sd_per_pair_frame():
    frame = pd.DataFrame({"rater_id": list("abcdabc"), "word1": ["x"] * 4 + ["y"] * 3,
                          "word2": ["z"] * 7, "rating": [0, 4, 4, 4, 1, 2, 3.0]})
    table = trimmed_1sd_scores(frame)
    assert table["word1"].tolist() == ["x", "y"]
    # x: mean 3, SD sqrt(3) = 1.73: the 0 goes; y: mean 2, SD 0.82: only the 2 stays
    assert table["estimate"].tolist() == [4.0, 2.0]
    assert table["kept"].tolist() == [3, 1]


def test_trimmed_1sd_reproduces_the_real_rw_excerpt():
    """Every published score of the real excerpt is the rule's value printed with 2 decimals;
    the plain mean gives it on 1 row."""
    rows = rw_rows()
    assert len(rows) == 41
    assert [f"{trimmed_1sd(r):.2f}" for *_, r in rows] == [p for _, _, p, _ in rows]
    assert sum(f"{np.mean(r):.2f}" == p for _, _, p, r in rows) == 1


def test_rw_import_names_the_rule_and_process_releases_it(tmp_path, monkeypatch):
    """docs/process.md's two commands, as written, on the real excerpt."""
    (tmp_path / "rw.txt").write_bytes(RW.read_bytes())
    monkeypatch.chdir(tmp_path)
    out = run("ratings", "import", "rw.txt", "--scale", "0", "10", "--out", "rw.csv")
    assert out.exit_code == 0, out.output
    assert ("the plain mean of the ratings gives it on 1 of 41 rows, the mean within one SD of "
            "their mean (aggregate = \"trimmed_1sd\", Rare Words' rule) on 41 (to its printed "
            "decimals): it follows trimmed_1sd") in out.output
    out = run("process", "rw.csv", "--protocol", "plain", "--aggregate", "trimmed_1sd",
              "--out", "rw-gold")
    assert out.exit_code == 0, out.output
    gold = pd.read_csv(tmp_path / "rw-gold" / "gold.csv", keep_default_na=False)
    published = [float(p) for _, _, p, _ in rw_rows()]
    assert gold["word1"].tolist() == [w for w, *_ in rw_rows()]
    # the release rounds half up (8.625 -> 8.63), RW printed ties down (8.62): within half a
    # unit of the last decimal everywhere
    assert np.abs(gold["score"].to_numpy() - published).max() <= 0.01 + 1e-9
    assert (gold["score"].to_numpy() == published).sum() == 39
    report = json.loads((tmp_path / "rw-gold" / "report.json").read_text())
    assert report["aggregate"]["rule"] == report["aggregate"]["applied"] == "trimmed_1sd"
    assert report["aggregate"]["ratings_dropped"] == sum(
        len(r) - sum(abs(np.array(r) - np.mean(r)) <= np.std(r) + 1e-9) for *_, r in rw_rows())
    assert "--aggregate" in " ".join(report["notes"])
    card = (tmp_path / "rw-gold" / "README.md").read_text()
    assert 'aggregate = "trimmed\\_1sd"' in card or 'aggregate = "trimmed_1sd"' in card


def test_half_even_rounding_releases_every_rw_score_as_printed(tmp_path, monkeypatch):
    """Rare Words prints its ties half to even (8.625 as 8.62): a protocol with
    ``score_rounding = "half-even"`` releases all 41 scores of the real excerpt as printed,
    where half up (the test above) gives 39."""
    (tmp_path / "rw.txt").write_bytes(RW.read_bytes())
    plain = (resources.files("lexgold.protocols") / "plain.toml").read_text(encoding="utf-8")
    assert 'score_rounding = "half-up"' in plain
    (tmp_path / "rw.toml").write_text(plain.replace('score_rounding = "half-up"',
                                                    'score_rounding = "half-even"'),
                                      encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert run("ratings", "import", "rw.txt", "--scale", "0", "10", "--out", "rw.csv").exit_code == 0
    out = run("process", "rw.csv", "--protocol", "rw.toml", "--aggregate", "trimmed_1sd",
              "--out", "rw-gold")
    assert out.exit_code == 0, out.output
    gold = pd.read_csv(tmp_path / "rw-gold" / "gold.csv", keep_default_na=False)
    published = [float(p) for _, _, p, _ in rw_rows()]
    assert gold["score"].tolist() == published


# -- the rater model ----------------------------------------------------------------------------

def test_model_by_hand():
    """Two raters one point apart, each 0.2 off the pair's score: psi the midpoint, biases
    -0.5 and +0.5. The raters' difference has SD 0.4 = sqrt(2) upsilon, so upsilon = 0.283
    (the corrected noise; the MLE says 0.2, the residual about the pair's own score); the
    standard error is sqrt(upsilon^2 / 2)."""
    answered = pd.DataFrame({"rater_id": list("aaaabbbb"), "word1": list("wxyz") * 2,
                             "word2": ["v"] * 8,
                             "rating": [0.7, 1.3, 2.7, 3.3, 1.3, 2.7, 3.3, 4.7]})
    for noise, upsilon in (("corrected", np.sqrt(0.08)), ("mle", 0.2)):
        fit = fit_rater_model(answered, noise=noise)
        assert fit.converged
        assert fit.pairs["psi"].tolist() == pytest.approx([1, 2, 3, 4])
        assert fit.raters["bias"].tolist() == pytest.approx([-0.5, 0.5])
        assert fit.raters["noise"].tolist() == pytest.approx([upsilon, upsilon])
        assert fit.pairs["se"].tolist() == pytest.approx([upsilon / np.sqrt(2)] * 4)


def test_model_weights_a_noisy_rater_less():
    """Raters a and b agree closely, c is noisy: psi lies nearer to a and b's ratings than the
    mean does, by the weights 1 / upsilon^2."""
    rng = np.random.default_rng(0)
    truth = np.linspace(0, 6, 30)
    ratings = {"a": truth + rng.normal(0, 0.2, 30), "b": truth + rng.normal(0, 0.2, 30),
               "c": truth + rng.normal(0, 2.0, 30)}
    answered = pd.DataFrame([{"rater_id": r, "word1": f"w{i}", "word2": "v", "rating": x}
                             for r, values in ratings.items() for i, x in enumerate(values)])
    fit = fit_rater_model(answered)
    noise = fit.raters.set_index("rater_id")["noise"]
    assert noise["c"] > 5 * max(noise["a"], noise["b"])
    mean = answered.groupby("word1", sort=False)["rating"].mean().to_numpy()
    assert np.abs(fit.pairs["psi"] - truth).mean() < 0.5 * np.abs(mean - truth).mean()


@pytest.mark.parametrize("noise", ["mle", "corrected"])
def test_model_solves_its_equations_on_real_ratings(ws353_answers, noise):
    """At the fit, each block is its own solution given the others (WordSim-353 set 1)."""
    fit = fit_rater_model(ws353_answers, noise=noise)
    assert fit.converged and fit.components == 1 and fit.at_floor == 0
    frame = ws353_answers.merge(fit.pairs, on=["word1", "word2"]).merge(
        fit.raters.rename(columns={"n": "pairs"}), on="rater_id")
    pair = [frame["word1"], frame["word2"]]
    residual = frame["rating"] - frame["psi"] - frame["bias"]
    w = 1 / frame["noise"] ** 2
    psi = ((frame["rating"] - frame["bias"]) * w).groupby(pair).sum() / w.groupby(pair).sum()
    assert np.abs(psi - frame.groupby(pair)["psi"].first()).max() < 1e-8
    bias = (frame["rating"] - frame["psi"]).groupby(frame["rater_id"]).mean()
    assert np.abs(bias - frame.groupby("rater_id")["bias"].first()).max() < 1e-8
    free = (1 - w / w.groupby(pair).transform("sum")) if noise == "corrected" else 1 + 0 * w
    noise_ = np.sqrt((residual ** 2).groupby(frame["rater_id"]).sum()
                     / free.groupby(frame["rater_id"]).sum())
    assert np.abs(noise_ - frame.groupby("rater_id")["noise"].first()).max() < 1e-7
    assert abs(fit.raters["bias"].sum()) < 1e-9


def test_model_matches_sureal_on_wordsim353(ws353_answers):
    """SUREAL's MLE without content ambiguity is this model (P.913 clause 12); on the real
    WordSim-353 set 1 log (152 pairs, 13 raters) the two fits agree."""
    pytest.importorskip("sureal")
    from sureal.dataset_reader import RawDatasetReader
    from sureal.subjective_model import MaximumLikelihoodEstimationModelContentOblivious

    fit = fit_rater_model(ws353_answers, noise="mle")

    class Dataset:
        ref_score = 10
        ref_videos = [{"content_id": 0, "content_name": "pairs", "path": "ref"}]
        dis_videos = [{"content_id": 0, "asset_id": k, "path": str(k),
                       "os": dict(zip(group["rater_id"], group["rating"].astype(float)))}
                      for k, (_, group) in enumerate(ws353_answers.groupby(
                          ["word1", "word2"], sort=False))]

    with contextlib.redirect_stdout(io.StringIO()), np.errstate(all="ignore"):
        result = MaximumLikelihoodEstimationModelContentOblivious(
            RawDatasetReader(Dataset())).run_modeling()
    order = [result["observers"].index(r) for r in fit.raters["rater_id"]]
    assert np.abs(np.array(result["quality_scores"]) - fit.pairs["psi"]).max() < 1e-5
    assert np.abs(np.array(result["observer_bias"])[order] - fit.raters["bias"]).max() < 1e-5
    assert np.abs(np.array(result["observer_inconsistency"])[order]
                  - fit.raters["noise"]).max() < 1e-5


def simulated_crowd(seed: int):
    """Simulated: 200 pairs, 10 raters with known bias (SD 0.7, centred) and noise (0.5-2)."""
    rng = np.random.default_rng(seed)
    psi = rng.uniform(0, 6, 200)
    bias = rng.normal(0, 0.7, 10)
    bias -= bias.mean()
    noise = rng.uniform(0.5, 2.0, 10)
    rows = [{"rater_id": f"r{j}", "word1": f"p{i}", "word2": "q",
             "rating": psi[i] + bias[j] + noise[j] * rng.normal()}
            for j in range(10) for i in range(200)]
    return pd.DataFrame(rows), psi, bias, noise


@pytest.mark.parametrize("seed", [33, 1, 2])
def test_model_recovers_known_biases_and_noises(seed):
    """Simulated crowds: each estimate within four of its standard errors (bias: about
    upsilon / sqrt(200); noise: upsilon / sqrt(400)), and the pair scores nearer the truth
    than the means."""
    answered, psi, bias, noise = simulated_crowd(seed)
    fit = fit_rater_model(answered)
    assert np.all(np.abs(fit.raters["bias"] - bias) < 4 * noise / np.sqrt(200) + 0.05)
    assert np.all(np.abs(fit.raters["noise"] - noise) < 4 * noise / np.sqrt(400))
    mean = answered.groupby("word1", sort=False)["rating"].mean().to_numpy()
    assert np.abs(fit.pairs["psi"] - psi).mean() < np.abs(mean - psi).mean()


def test_plain_mle_collapses_on_a_consistent_rater():
    """Why the release corrects the noise: on simulated crowd 33 the most consistent rater
    (noise 0.53) has no interior likelihood maximum (0.53^2 < 3 / sum of the others' weights),
    and the MLE (as SUREAL's) drives its noise to the floor."""
    answered, _, _, noise = simulated_crowd(33)
    best = int(np.argmin(noise))
    assert noise[best] ** 2 < 3 / np.sum(1 / np.delete(noise, best) ** 2)
    mle = fit_rater_model(answered, noise="mle")
    assert mle.at_floor == 1 and mle.raters["noise"].idxmin() == best
    assert fit_rater_model(answered).at_floor == 0


def test_model_centres_biases_within_each_group_of_raters():
    """Two tranches that share no pair: their biases are centred apart."""
    answered = pd.DataFrame({"rater_id": list("aabbccdd"),
                             "word1": ["x", "y", "x", "y", "u", "v", "u", "v"],
                             "word2": ["z"] * 8,
                             "rating": [1, 2, 2, 4, 5, 5, 6, 7.0]})
    fit = fit_rater_model(answered)
    assert fit.components == 2
    bias = fit.raters.set_index("rater_id")["bias"]
    assert bias["a"] + bias["b"] == pytest.approx(0, abs=1e-9)
    assert bias["c"] + bias["d"] == pytest.approx(0, abs=1e-9)


def test_model_falls_back_to_the_mean_without_rater_identity():
    final = pd.DataFrame({"rater_id": ["?1", "?2"], "tranche": "1", "word1": "x",
                          "word2": "y", "rating": [1.0, 2.0], "kind": "unique"})
    estimates, record = pair_estimates(final, "model", rating_range=(0, 6), anonymous=True)
    assert estimates is None
    assert record["rule"] == "model" and record["applied"] == "mean"
    assert "needs rater identity" in record["note"]


# -- the pipeline -------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def ws353_long(ws353, tmp_path_factory):
    out = tmp_path_factory.mktemp("long") / "set1-long.csv"
    result = run("ratings", "import", ws353, "--scale", "0", "10", "--out", out)
    assert result.exit_code == 0, result.output
    return out


def test_model_release_records_the_rule(ws353_long, ws353_answers, tmp_path):
    out = run("process", ws353_long, "--protocol", "plain", "--aggregate", "model", "--out",
              tmp_path / "gold", "--no-plots", "--bootstrap", "0")
    assert out.exit_code == 0, out.output
    report = json.loads((tmp_path / "gold" / "report.json").read_text())
    record = report["aggregate"]
    assert record["rule"] == record["applied"] == "model" and record["converged"]
    assert record["raters"] == 13 and record["rater_groups"] == 1
    assert report["config"]["aggregate"] == "model"
    fit = fit_rater_model(ws353_answers)
    psi = fit.pairs.set_index(["word1", "word2"])["psi"].clip(0, 10)
    gold = pd.read_csv(tmp_path / "gold" / "gold.csv").set_index(["word1", "word2"])["score"]
    assert np.abs(gold - psi.loc[gold.index]).max() <= 0.005 + 1e-9
    assert record["clipped_to_scale"] == int(((fit.pairs["psi"] < 0)
                                              | (fit.pairs["psi"] > 10)).sum())
    mean = ws353_answers.groupby(["word1", "word2"])["rating"].mean()
    assert record["max_abs_difference"] == pytest.approx(
        np.abs(psi.loc[mean.index] - mean).max())
    card = (tmp_path / "gold" / "README.md").read_text()
    assert 'aggregate = "model"' in card
    assert "aggregate" in (tmp_path / "gold" / "report.md").read_text()


def test_model_on_anonymous_ratings_says_it_released_means(tmp_path):
    (tmp_path / "rw.txt").write_bytes(RW.read_bytes())
    assert run("ratings", "import", tmp_path / "rw.txt", "--scale", "0", "10", "--out",
               tmp_path / "rw.csv").exit_code == 0
    out = run("process", tmp_path / "rw.csv", "--protocol", "plain", "--aggregate", "model",
              "--out", tmp_path / "gold", "--no-plots")
    assert out.exit_code == 0, out.output
    report = json.loads((tmp_path / "gold" / "report.json").read_text())
    assert report["aggregate"]["applied"] == "mean"
    assert any("needs rater identity" in note for note in report["notes"])
    assert "needs rater identity" in (tmp_path / "gold" / "README.md").read_text()
    gold = pd.read_csv(tmp_path / "gold" / "gold.csv")
    means = [np.mean(r) for *_, r in rw_rows()]
    assert np.abs(gold["score"] - means).max() <= 0.005 + 1e-9


def test_mean_release_is_unchanged(ws353_long, ws353_answers, tmp_path):
    """The default rule releases the plain means, and naming it changes no byte of any file
    (the seeded study's gold.csv digest of tests/data/issue22_base_process.json, written
    before the key existed, is checked by tests/test_process_agreement_fast.py)."""
    for name, extra in (("default", []), ("named", ["--aggregate", "mean"])):
        out = run("process", ws353_long, "--protocol", "plain", "--out", tmp_path / name,
                  "--no-plots", "--bootstrap", "0", *extra)
        assert out.exit_code == 0, out.output
    for path in sorted((tmp_path / "default").iterdir()):
        assert path.read_bytes() == (tmp_path / "named" / path.name).read_bytes(), path.name
    report = json.loads((tmp_path / "default" / "report.json").read_text())
    assert report["aggregate"] == {"rule": "mean", "applied": "mean",
                                   "description": "the mean of the accepted ratings of a pair"}
    gold = pd.read_csv(tmp_path / "default" / "gold.csv").set_index(["word1", "word2"])
    mean = ws353_answers.groupby(["word1", "word2"])["rating"].mean()
    assert np.abs(gold["score"] - mean.loc[gold.index]).max() <= 0.005 + 1e-9
    # plain: the ratings' own scale, not rescaled (issue 47: not the protocol's default 0-6)
    assert "- Score: the mean of the accepted ratings of a pair, on the rating scale 0-10 (not " \
        "rescaled)." in (tmp_path / "default" / "README.md").read_text()


# -- the key ------------------------------------------------------------------------------------

def write(tmp_path, text: str) -> Path:
    path = tmp_path / "mine.toml"
    path.write_text('name = "mine"\n' + text, encoding="utf-8")
    return path


@pytest.mark.parametrize("value,given", [('"median"', "'median'"), ("1", "1"),
                                         ('"Mean"', "'Mean'")])
def test_bad_aggregate_is_one_line(tmp_path, value, given):
    path = write(tmp_path, f"[process]\naggregate = {value}\n")
    with pytest.raises(ProtocolError) as err:
        process_config(load_protocol(path))
    assert str(err.value) == (f"{path}: [process] aggregate: allowed 'mean' | 'model' | "
                              f"'trimmed_1sd', given {given}")
    ratings = tmp_path / "ratings.csv"
    ratings.write_text("rater_id,tranche,word1,word2,rating\na,1,x,y,3\n", encoding="utf-8")
    out = run("process", ratings, "--protocol", path, "--out", tmp_path / "out")
    assert out.exit_code != 0
    assert out.output.strip().splitlines() == [f"Error: {err.value}"]
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("rule", ["mean", "model", "trimmed_1sd"])
def test_each_rule_is_accepted(tmp_path, rule):
    path = write(tmp_path, f"[process]\naggregate = \"{rule}\"\n")
    assert process_config(load_protocol(path)).aggregate == rule


def test_best_worst_scaling_refuses_another_rule(tmp_path):
    out = run("process", tmp_path / "answers.csv", "--protocol", "simlex_bws", "--aggregate",
              "model", "--out", tmp_path / "out")
    assert out.exit_code != 0
    assert out.output.strip().splitlines() == [
        "Error: --aggregate model is for rating studies; a Best-Worst Scaling "
        "study's scores come from [process.bws] method"]


def test_docs_commands_on_wordsim353(ws353, tmp_path, monkeypatch):
    """docs/process.md's commands of the aggregate section, as written."""
    (tmp_path / "set1.csv").write_bytes(ws353.read_bytes())
    monkeypatch.chdir(tmp_path)
    out = run("ratings", "import", "set1.csv", "--scale", "0", "10", "--out", "set1-long.csv")
    assert out.exit_code == 0, out.output
    out = run("process", "set1-long.csv", "--protocol", "plain", "--aggregate", "model",
              "--out", "ws-model")
    assert out.exit_code == 0, out.output
    record = json.loads((tmp_path / "ws-model" / "report.json").read_text())["aggregate"]
    assert record["applied"] == "model" and record["noise_at_floor"] == 0
    assert 0 < record["mean_abs_difference"] < record["max_abs_difference"]


def test_bench_compares_the_rules_on_the_same_splits():
    """bench/bench_aggregate.py on two splits: every k from 2 to 8, each rule, one reference."""
    import importlib.util

    path = Path(__file__).resolve().parents[1] / "bench" / "bench_aggregate.py"
    spec = importlib.util.spec_from_file_location("bench_aggregate", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    table = bench.load()
    for design in ("complete", "incomplete"):
        results = bench.run(table, reference=5, splits=2, seed=0, design=design)
        assert len(results) == 2 * 7 * 3
        assert set(results["k"]) == set(range(2, 9))
        assert results["spearman"].between(0, 1).all() and (results["mae"] > 0).all()
        with contextlib.redirect_stdout(io.StringIO()) as printed:
            bench.report(results)
        assert printed.getvalue().count("\n") == 1 + 7
    # all 8 of the pool's raters on every pair: the two designs are the same
    complete = bench.run(table, reference=5, splits=2, seed=0)
    assert np.allclose(complete[complete["k"] == 8]["spearman"],
                       results[results["k"] == 8]["spearman"])


@pytest.mark.parametrize("third,verdict", [
    (lambda r: f"{np.mean(r):.2f}", "it follows the plain mean"),
    (lambda r: f"{np.median(r):.2f}", "neither rule reproduces most rows"),
])
def test_import_names_the_rule_a_third_column_follows(tmp_path, third, verdict):
    """A headerless file whose field 3 is the plain mean, or neither rule (the median)."""
    rows = [(w1, w2, r) for w1, w2, _, r in rw_rows()]
    text = "".join(f"{w1}\t{w2}\t{third(r)}\t" + "\t".join(f"{v:g}" for v in r) + "\n"
                   for w1, w2, r in rows)
    (tmp_path / "scores.txt").write_text(text, encoding="utf-8")
    out = run("ratings", "import", tmp_path / "scores.txt", "--out", tmp_path / "long.csv")
    assert out.exit_code == 0, out.output
    assert out.output.splitlines()[0].endswith(f"(to its printed decimals): {verdict}")
