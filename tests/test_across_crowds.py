"""The shipped crowds by name (``--crowd danish``) and ``lexgold study rehearse
--across-crowds``: each crowd's rehearsal on a copy, the range across them (issue 46)."""

import hashlib
import json
import sqlite3

import pandas as pd
import pytest
from click.testing import CliRunner

from lexgold.annotate.across import crowd_range, rehearse_across, sqlite_file
from lexgold.cli import cli
from lexgold.crowd.crowds import ACROSS, SHIPPED_CROWDS, crowd_file
from lexgold.crowd.logs import SHIPPED, shipped_log
from lexgold.crowd.model import CrowdModel, read_model
from lexgold.crowd.simulate import Crowd, crowd_model
from lexgold.errors import InputError
from lexgold.resources._files import resource_files
from lexgold.study.db import database_url
from lexgold.study.store import create_study
from test_annotate_app import protocol_variant, usf_pair_file


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def one_line_error(result, *words):
    assert result.exit_code != 0
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    for word in words:
        assert word in lines[0], lines[0]


# -- the shipped crowds ------------------------------------------------------------------------

@pytest.mark.parametrize("name", SHIPPED_CROWDS)
def test_each_shipped_crowd_loads_by_name_and_names_its_log(name):
    model = read_model(crowd_file(name))
    (record,) = model.fitted_to
    resource, _, scale = SHIPPED[name]
    files = {f.name: f.sha256() for f in resource_files(resource)}
    assert files[record["file"]] == record["sha256"]          # the shipped file, unchanged
    assert record["scale"] == list(scale) and model.name == name
    rescaled = crowd_model(name, 1, 7)
    assert isinstance(rescaled, CrowdModel) and rescaled.scale[:2] == (1.0, 7.0)
    fitted = 0.0 if model.raters is None else model.raters.spammers
    assert Crowd(model=name).spam_share == pytest.approx(fitted)
    assert Crowd(model=name, spammers=0.3).spam_share == 0.3


def test_a_shipped_crowd_is_fitted_to_its_log_alone():
    """The crowd's record is the log's: its pairs and ratings (card660, the smallest log)."""
    frame, _ = shipped_log("card660")
    (record,) = read_model(crowd_file("card660")).fitted_to
    assert record["ratings"] == len(frame)
    assert record["pairs"] == len(frame[["word1", "word2"]].drop_duplicates())


@pytest.mark.parametrize("command", [("simulate",), ("study", "rehearse")])
def test_help_lists_every_crowd_name(command):
    result = invoke(*command, "--help")
    assert result.exit_code == 0
    text = " ".join(result.output.split())
    for name in ("default", "invented", *SHIPPED_CROWDS):
        assert name in text


def test_an_unknown_crowd_is_a_one_line_error(tmp_path):
    result = invoke("simulate", "--crowd", "danishh", "--protocol", "simlex", "--n-pairs", 20,
                    "--out", tmp_path / "r.csv")
    one_line_error(result, "danishh", "card660", "crowd JSON")
    assert not (tmp_path / "r.csv").exists()


def test_simulate_takes_a_shipped_crowd_by_name(tmp_path):
    out = tmp_path / "ratings.csv"
    result = invoke("simulate", "--crowd", "wordsim353", "--protocol", "simlex", "--n-pairs",
                    40, "--raters-per-tranche", 3, "--out", out, "--seed", 2)
    assert result.exit_code == 0, result.output
    ratings = pd.read_csv(out)
    rated = ratings.loc[ratings["kind"] != "checkpoint", "rating"]
    assert set(rated) <= set(range(7)) and (ratings["platform"] == "simulated").all()
    again = tmp_path / "again.csv"
    invoke("simulate", "--crowd", "danish", "--protocol", "simlex", "--n-pairs", 40,
           "--raters-per-tranche", 3, "--out", again, "--seed", 2)
    assert not pd.read_csv(again)["rating"].equals(ratings["rating"])   # another crowd


# -- the range ---------------------------------------------------------------------------------

def test_crowd_range_is_the_lowest_and_highest_and_who_gave_them():
    rows = [{"crowd": "a", "raters": 30, "iaa1": None, "pages": 5},
            {"crowd": "b", "raters": 41, "iaa1": 0.5, "pages": 5},
            {"crowd": "c", "raters": 27, "iaa1": 0.25, "pages": 5}]
    got = crowd_range(rows, ("raters", "iaa1", "pages", "missing"))
    assert got["raters"] == {"min": 27, "max": 41, "min_crowd": "c", "max_crowd": "b"}
    assert got["iaa1"] == {"min": 0.25, "max": 0.5, "min_crowd": "c", "max_crowd": "b"}
    assert got["pages"] == {"min": 5, "max": 5, "min_crowd": "a", "max_crowd": "a"}
    assert got["missing"] is None


def test_a_postgresql_study_is_refused_in_one_line():
    with pytest.raises(InputError, match="PostgreSQL study has none"):
        sqlite_file("postgresql+psycopg://u:pw@localhost:1/study")
    result = invoke("study", "rehearse", "postgresql+psycopg://u:pw@localhost:1/study",
                    "--across-crowds")
    one_line_error(result, "--across-crowds", "SQLite")


# -- rehearsals across crowds ------------------------------------------------------------------

@pytest.fixture(scope="module")
def fresh(usf, tmp_path_factory):
    """A small SimLex study nobody entered: 2 tranches of 3 places."""
    folder = tmp_path_factory.mktemp("across")
    pairs = usf_pair_file(usf, folder / "pairs.csv",
                          counts=(("N", "N", 30), ("V", "V", 10), ("A", "AJ", 6)))
    protocol = protocol_variant(folder, "simlex", tranches=2, raters_per_tranche=3)
    study = folder / "study.sqlite"
    create_study(protocol, pairs, database_url(study), seed=1)
    return study


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def raters_in(path):
    with sqlite3.connect(path) as connection:
        return connection.execute("select count(*) from rater").fetchone()[0]


@pytest.mark.slow                     # five rehearsals through the site
def test_across_crowds_prints_each_crowd_and_the_range_and_leaves_the_study(fresh):
    before = digest(fresh)
    result = invoke("study", "rehearse", fresh, "--across-crowds", "--seed", 3, "--json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert [row["crowd"] for row in out["crowds"]] == list(ACROSS)
    assert out["simulated"] is True and out["seed"] == 3
    for name, entry in out["range"].items():
        values = [row[name] for row in out["crowds"] if row[name] is not None]
        assert entry["min"] == min(values) and entry["max"] == max(values), name
        assert out["crowds"][[r["crowd"] for r in out["crowds"]].index(entry["min_crowd"])][
            name] == entry["min"]
    for row in out["crowds"]:
        assert row["finished"] and row["completed"] == 6 and row["complete"] in (True, False)
        assert row["released_pairs"] > 0 and row["fewest_accepted_raters"] >= 1
    assert digest(fresh) == before and raters_in(fresh) == 0        # the study unchanged
    text = invoke("study", "rehearse", fresh, "--across-crowds", "--seed", 3)
    assert text.exit_code == 0, text.output
    lines = text.output.splitlines()
    assert "simulated" in lines[0] and lines[-2].startswith("range")
    assert [line.split()[0] for line in lines[2:2 + len(ACROSS)]] == list(ACROSS)
    assert lines[1].split()[:3] == ["crowd", "raters", "screened"]
    raters = out["range"]["raters"]
    assert lines[-2].split()[1] == (f"{raters['min']}-{raters['max']}"
                                    if raters["min"] != raters["max"] else str(raters["min"]))


@pytest.mark.slow                     # rehearsals through the site
def test_across_crowds_same_seed_same_figures(fresh):
    runs = [rehearse_across(fresh, seed=5, crowds=("default", "card660"), max_raters=4)
            for _ in range(2)]
    assert runs[0] == runs[1]
    assert runs[0]["crowds"][0]["raters"] == 4 and not runs[0]["crowds"][0]["finished"]


def test_across_crowds_refuses_a_crowd_or_truth_in_one_line(fresh, tmp_path):
    one_line_error(invoke("study", "rehearse", fresh, "--across-crowds", "--crowd", "danish"),
                   "--crowd")
    one_line_error(invoke("study", "rehearse", fresh, "--across-crowds", "--truth",
                          tmp_path / "t.csv"), "--truth")
    one_line_error(invoke("study", "rehearse", fresh, "--across-crowds", "--noise-sd", "1"),
                   "invented")
    assert raters_in(fresh) == 0


def test_the_docs_table_of_shipped_crowds_is_the_crowds():
    """docs/process.md's table of the shipped crowds: each row's noise, lapses and per-pair SD
    quantiles are those of the crowd JSON it names (rounded as printed)."""
    from pathlib import Path

    from lexgold.crowd.model import describe

    text = (Path(__file__).resolve().parents[1] / "docs" / "process.md").read_text("utf-8")
    rows = {line.split("|")[1].strip(" `"): [c.strip() for c in line.split("|")[2:-1]]
            for line in text.splitlines() if line.startswith("| `")
            and line.split("|")[1].strip(" `") in SHIPPED_CROWDS}
    assert set(rows) == set(SHIPPED_CROWDS)
    for name, cells in rows.items():
        model = read_model(crowd_file(name))
        figures, record = describe(model), model.fitted_to[0]
        assert cells[2].startswith(f"{figures['typical_noise_sd']:.2f} (")
        assert cells[3] == f"{100 * figures['lapse']:.1f} %"
        shown = lambda values: " / ".join(f"{v:.2f}" for v in values)  # noqa: E731
        assert cells[5] == shown(record["sd_quantiles"]["real"])
        assert cells[6] == shown(record["sd_quantiles"]["simulated"])


def test_release_figures_of_a_slider_and_a_best_worst_release():
    from types import SimpleNamespace

    from lexgold.annotate.across import release_figures
    from lexgold.process.run_report import BwsReport

    slider = SimpleNamespace(
        counts=SimpleNamespace(released_pairs=40, min_raters_per_pair=3, excluded_raters=2),
        agreement={"final": {"iaa1": 0.5, "iaa2": float("nan")}},
        release_check=SimpleNamespace(problems=["12 pairs below 4 raters"]))
    assert release_figures(slider) == {"released_pairs": 40, "fewest_accepted_raters": 3,
                                       "excluded_raters": 2, "iaa1": 0.5, "iaa2": None,
                                       "complete": False}
    bws = BwsReport.__new__(BwsReport)
    bws.counts = SimpleNamespace(pairs=30, raters_excluded=1)
    bws.warnings = []
    assert release_figures(bws) == {"released_pairs": 30, "fewest_accepted_raters": None,
                                    "excluded_raters": 1, "iaa1": None, "iaa2": None,
                                    "complete": True}


@pytest.mark.slow                     # fits a log
def test_the_script_rebuilds_a_shipped_crowd_byte_for_byte(tmp_path):
    """scripts/fit_shipped_crowds.py is how the shipped crowds are made: run on Card-660 (the
    quickest fit), it writes the shipped JSON again, byte for byte (a change of the model
    fails here until the script is rerun)."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    done = subprocess.run([sys.executable, str(root / "scripts" / "fit_shipped_crowds.py"),
                           "--only", "card660", "--out", str(tmp_path)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "card660.json").read_bytes() == crowd_file("card660").read_bytes()
