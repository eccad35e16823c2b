"""Security round 3, items 8-10 (docs/hardening.md, "Round 3"): data in the release's Markdown,
local paths in a release, one-line errors instead of tracebacks, and the smaller findings."""

import json
import re

import pandas as pd
import pytest
from click.testing import CliRunner
from conftest import not_applicable

from lexgold.cli import cli
from lexgold.process.markdown import code, text
from lexgold.process.pipeline import run
from lexgold.protocols import PACKAGED
from test_annotate_app import simlex_pairs, simlex_study  # noqa: F401  (fixtures)

pytestmark = pytest.mark.slow            # hardening: servers, faults and fuzzing of the site

HOSTILE = "<img src=x onerror=alert(1)>"


def hostile_release(tmp_path):
    """A plain release whose words, protocol name and paper carry HTML, in a folder whose path
    names the user."""
    home = tmp_path / "home" / "alice" / "secret-project"
    home.mkdir(parents=True)
    protocol = (PACKAGED / "plain.toml").read_text(encoding="utf-8")
    protocol = protocol.replace('name = "plain"', 'name = "<script>alert(2)</script>"').replace(
        'paper = "none', 'paper = "<b onmouseover=alert(3)>x</b> | `tick` none')
    (home / "evil.toml").write_text(protocol, encoding="utf-8")
    rows = [(rater, 1, w1, w2, rating, 0.0, 10.0)
            for rater, shift in (("a", 0), ("b", 1), ("c", -1))
            for w1, w2, rating in ((HOSTILE, "dog|cat", 7 + shift), ("sun", "moon`", 2 + shift))]
    pd.DataFrame(rows, columns=["rater_id", "tranche", "word1", "word2", "rating", "scale_min",
                                "scale_max"]).to_csv(home / "ratings.csv", index=False)
    pairs = pd.DataFrame({"word1": [HOSTILE, "sun", "never"], "word2": ["dog|cat", "moon`",
                                                                        "<i>rated</i>"]})
    pairs.to_csv(home / "pairs.csv", index=False)
    report = run(home / "ratings.csv", str(home / "evil.toml"), home / "out", plots=False,
                 bootstrap=0, pairs_path=home / "pairs.csv", allow_incomplete=True)
    return home, report


# -- item 8: Markdown ---------------------------------------------------------------------------

def test_markdown_helpers_escape_html_and_table_cells():
    assert text(HOSTILE) == "&lt;img src=x onerror=alert(1)&gt;"
    assert text("a|b\nc`d*e") == "a\\|b c\\`d\\*e"
    assert code("x`y|z") == "``x`y\\|z``" and code("`") == "`` ` ``"


def test_release_markdown_carries_no_html_from_data(tmp_path):
    home, report = hostile_release(tmp_path)
    for name in ("report.md", "README.md"):
        page = (home / "out" / name).read_text(encoding="utf-8")
        if name == "README.md":       # the YAML header holds data as quoted YAML scalars
            header, page = page.split("\n---\n", 1)
            assert json.dumps("<script>alert(2)</script> gold standard (built with lexgold)") \
                in header
        assert not re.search(r"<(img|script|b|i)\b", page), name
        assert "&lt;script&gt;alert(2)&lt;/script&gt;" in page, name
    report_md = (home / "out" / "report.md").read_text(encoding="utf-8")
    assert "&lt;img src=x onerror=alert(1)&gt;" in report_md
    assert "dog\\|cat" in report_md                  # one cell, not two
    assert "&lt;i&gt;rated&lt;/i&gt;" in report_md   # the warning names the unrated pair
    card = (home / "out" / "README.md").read_text(encoding="utf-8")
    assert "&lt;b onmouseover=alert(3)&gt;x&lt;/b&gt; \\| \\`tick\\`" in card


def test_release_names_its_inputs_without_local_folders(tmp_path):
    home, report = hostile_release(tmp_path)
    for name in ("report.json", "report.md", "README.md", "datapackage.json", "croissant.json"):
        assert "alice" not in (home / "out" / name).read_text(encoding="utf-8"), name
    import hashlib
    digest = hashlib.sha256((home / "ratings.csv").read_bytes()).hexdigest()
    assert report.ratings_file == {"name": "ratings.csv", "sha256": digest}
    assert report.pairs_file["name"] == "pairs.csv" and report.protocol_file == "evil.toml"


# -- item 9: one line, never a traceback --------------------------------------------------------

def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def one_line_error(result, *needles):
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output and not isinstance(result.exception, Exception) \
        or isinstance(result.exception, SystemExit), result.exception
    line = result.output.strip()
    assert line.startswith("Error: ") and "\n" not in line, line
    for needle in needles:
        assert needle in line, line
    return line


def test_header_only_ratings_file_is_an_error_naming_it(tmp_path):
    (tmp_path / "header.csv").write_text("rater_id,tranche,word1,word2,rating\n")
    one_line_error(invoke("process", tmp_path / "header.csv", "--protocol", "simlex999",
                          "--out", tmp_path / "out"), "header.csv:2", "no ratings")
    assert not (tmp_path / "out").exists()
    (tmp_path / "wide.csv").write_text("word1,word2,rating\n")          # item 10: import
    one_line_error(invoke("ratings", "import", tmp_path / "wide.csv", "--out",
                          tmp_path / "long.csv"), "wide.csv:2", "no ratings")
    assert not (tmp_path / "long.csv").exists()


def test_gold_field_over_the_csv_limit_is_an_error_naming_the_line(tmp_path):
    (tmp_path / "gold.csv").write_text("word1,word2,score\ncat,dog,1\n" + "a" * 140_000
                                       + ",b,2\n")
    (tmp_path / "vectors.txt").write_text("cat 0.1 0.2\ndog 0.2 0.1\n")
    one_line_error(invoke("evaluate", "--gold", tmp_path / "gold.csv", "--vectors",
                          tmp_path / "vectors.txt"), "gold.csv:3", "field larger")


@pytest.mark.parametrize("command", [["process", "ratings.csv"], ["simulate"],
                                     ["study", "rehearse", "study.sqlite"],
                                     ["build", "simlex"], ["study", "create"]])
def test_negative_seed_is_a_usage_error(command):
    result = CliRunner().invoke(cli, command + ["--seed", "-1"])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "'--seed': -1 is not in the range x>=0" in result.output


def pair_file(path, rows):
    pd.DataFrame(rows, columns=["word1", "word2", "pos"]).to_csv(path, index=False)
    return path


@pytest.fixture(params=["sqlite", "postgresql"])
def empty_db(request, tmp_path):
    """An empty database of each kind; yields (URL, function listing its tables)."""
    from sqlalchemy import create_engine, inspect

    if request.param == "sqlite":
        path = tmp_path / "study.sqlite"
        yield str(path), lambda: (sorted(inspect(create_engine(f"sqlite:///{path}"))
                                         .get_table_names()) if path.exists() else [])
        return
    import os
    url = os.environ.get("LEXGOLD_TEST_POSTGRES_URL")
    if not url:
        pytest.skip("LEXGOLD_TEST_POSTGRES_URL not set")
    from lexgold.study.db import postgres_schema
    with postgres_schema(url) as (schema, scoped):
        engine = create_engine(url)
        yield scoped, lambda: sorted(inspect(engine).get_table_names(schema=schema))
        engine.dispose()


@pytest.mark.parametrize("case", ["nul", "long word", "long name", "long code"])
def test_study_create_checks_lengths_and_characters_before_writing(case, empty_db, tmp_path,
                                                                    usf):
    from test_annotate_app import usf_pair_file

    url, tables = empty_db
    pairs = usf_pair_file(usf, tmp_path / "pairs.csv")
    frame = pd.read_csv(pairs)
    options = []
    if case == "nul":
        frame.loc[3, "word1"] = "ca\x00t"
    elif case == "long word":
        frame.loc[3, "word2"] = "w" * 301
    elif case == "long name":
        options = ["--name", "n" * 201]
    else:
        options = ["--completion-code", "C" * 101]
    frame.to_csv(pairs, index=False)
    result = invoke("study", "create", "--protocol", "simlex999", "--pairs", pairs, "--db", url,
                    *options)
    expected = {"nul": ("pairs.csv:5", "control character"),
                "long word": ("pairs.csv:5", "longer than 300 characters"),
                "long name": ("name", "longer than 200"),
                "long code": ("completion-code", "longer than 100")}[case]
    one_line_error(result, *expected)
    assert tables() == []                          # nothing half-made


def test_study_upgrade_refuses_a_newer_study_and_another_applications_database(tmp_path, usf):
    import sqlite3

    from test_annotate_app import usf_pair_file

    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as connection:
        connection.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
    one_line_error(invoke("study", "upgrade", other), "not a lexgold study database",
                   "invoices")
    with sqlite3.connect(other) as connection:
        names = [r[0] for r in connection.execute("SELECT name FROM sqlite_master "
                                                  "WHERE type = 'table'")]
    assert names == ["invoices"]
    study = tmp_path / "study.sqlite"
    assert invoke("study", "create", "--protocol", "simlex999", "--pairs",
                  usf_pair_file(usf, tmp_path / "pairs.csv"), "--db", study).exit_code == 0
    with sqlite3.connect(study) as connection:
        connection.execute("UPDATE alembic_version SET version_num = 'f00dfeed9999'")
    one_line_error(invoke("study", "upgrade", study), "f00dfeed9999", "newer lexgold")


def test_admin_preview_with_a_huge_number_is_not_found(simlex_study):
    from test_annotate_admin_preview import login

    admin = login(simlex_study)
    assert admin.get("/admin/preview/1/0").status_code == 200
    for path in ("/admin/preview/99999999999999999999/0", "/admin/preview/1/99999999999999999999"):
        assert admin.get(path).status_code == 404, path


def test_printed_study_urls_hide_the_password(empty_db, tmp_path, usf):
    from test_annotate_app import usf_pair_file

    url, _ = empty_db
    if "://" not in url:
        not_applicable("a SQLite study is printed as its path")
    password = url.split("://", 1)[1].split("@", 1)[0].partition(":")[2]
    created = invoke("study", "create", "--protocol", "simlex999", "--pairs",
                     usf_pair_file(usf, tmp_path / "pairs.csv"), "--db", url)
    upgraded = invoke("study", "upgrade", url)
    for result in (created, upgraded):
        assert result.exit_code == 0, result.output
        assert password and f":{password}@" not in result.output
        assert ":***@" in result.output


def test_admin_without_slash_redirects_relatively(simlex_study):
    response = simlex_study.test_client().get("/admin", headers={"Host": "evil.example"})
    assert response.status_code in (301, 302, 308)
    assert response.headers["Location"] == "/admin/"        # never http://evil.example/...



def test_serve_reads_the_study_from_the_environment_and_deploy_keeps_it_off_the_command_line(
        tmp_path, usf):
    from pathlib import Path

    from test_annotate_app import usf_pair_file

    study = tmp_path / "study.sqlite"
    assert invoke("study", "create", "--protocol", "simlex999", "--pairs",
                  usf_pair_file(usf, tmp_path / "pairs.csv"), "--db", study).exit_code == 0
    for argument in ([], ["env:"]):
        served = CliRunner().invoke(cli, ["serve", *argument, "--port", "0", "--check"],
                                    env={"LEXGOLD_DATABASE_URL": str(study),
                                         "LEXGOLD_ADMIN_PASSWORD": "x" * 12})
        assert served.exit_code == 0, served.output
        assert f"serving {study}" in served.output
    missing = CliRunner().invoke(cli, ["serve", "--check"], env={"LEXGOLD_DATABASE_URL": ""})
    assert missing.exit_code == 2 and "LEXGOLD_DATABASE_URL is not set" in missing.output
    unit = (Path(__file__).parents[1] / "deploy" / "lexgold.service").read_text()
    start = unit.split("ExecStart=", 1)[1].split("\nRestart", 1)[0]
    assert "$" not in start and "LEXGOLD_DATABASE_URL=" in unit
