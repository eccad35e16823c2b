"""A study's completion and screen-out codes and its entry links, where the researcher looks:
``lexgold study create`` (text and --json), ``lexgold study report``, the admin view, and the
link back to the platform on the screened-out page."""

import html
import json
import re
import sqlite3

import pytest
from click.testing import CliRunner

from lexgold.study.db import database_url
from lexgold.study.store import create_study
from lexgold.cli import cli
from test_annotate_app import enter, make_app, protocol_variant, usf_pair_file

PROLIFIC_QUERY = ("?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}"
                  "&SESSION_ID={{%SESSION_ID%}}")
COMPLETE = "https://app.prolific.com/submissions/complete?cc={code}"


@pytest.fixture(scope="module")
def pairs(usf, tmp_path_factory):
    return usf_pair_file(usf, tmp_path_factory.mktemp("codes") / "pairs.csv")


def stored_codes(db) -> tuple[str, str]:
    with sqlite3.connect(db) as connection:
        return connection.execute("SELECT completion_code, screenout_code FROM study").fetchone()


def test_create_prints_the_codes_and_the_entry_links(tmp_path, pairs):
    db = tmp_path / "study.sqlite"
    result = CliRunner().invoke(cli, ["study", "create", "--protocol", "simlex", "--pairs",
                                      str(pairs), "--db", str(db), "--completion-code",
                                      "CLI-DONE", "--screenout-code", "CLI-OUT", "--accept",
                                      "prolific", "--accept", "anonymous"])
    assert result.exit_code == 0, result.output
    assert "completion code: CLI-DONE  screen-out code: CLI-OUT\n" in result.output
    assert f"\n  <site>/{PROLIFIC_QUERY}\n" in result.output
    assert "entry link for prolific (the study URL there; Prolific fills in the placeholders)" \
        in result.output
    assert "entry link for anonymous" in result.output
    assert "mturk" not in result.output                  # not accepted: no link for it


def test_create_json_and_report_carry_the_random_codes(tmp_path, pairs):
    db = tmp_path / "study.sqlite"
    runner = CliRunner()
    result = runner.invoke(cli, ["study", "create", "--protocol", "simlex", "--pairs",
                                 str(pairs), "--db", str(db), "--json"])
    assert result.exit_code == 0, result.output
    created = json.loads(result.output)
    completion, screenout = stored_codes(db)
    assert re.fullmatch(r"[0-9A-F]{8}", completion) and re.fullmatch(r"[0-9A-F]{8}", screenout)
    assert (created["completion_code"], created["screenout_code"]) == (completion, screenout)
    report = runner.invoke(cli, ["study", "report", str(db), "--json"])
    assert report.exit_code == 0, report.output
    data = json.loads(report.output)
    assert (data["completion_code"], data["screenout_code"]) == (completion, screenout)
    assert data["design"]["tranches"] == 10                      # the rest is unchanged


def test_create_study_returns_the_codes_it_stored(tmp_path, pairs):
    db = tmp_path / "lib.sqlite"
    report = create_study("simlex", pairs, database_url(db), completion_code="GIVEN")
    assert report["completion_code"] == "GIVEN"
    assert (report["completion_code"], report["screenout_code"]) == stored_codes(db)


def admin_page(app, base_url, **headers) -> str:
    client = app.test_client()
    assert client.post("/admin/login", data={"password": "s3cret"},
                       base_url=base_url).status_code == 302
    response = client.get("/admin/", base_url=base_url, headers=headers)
    assert response.status_code == 200
    return response.get_data(as_text=True)


def test_admin_view_shows_the_codes_and_the_entry_links(tmp_path, pairs):
    url = database_url(tmp_path / "admin.sqlite")
    create_study("simlex", pairs, url, completion_code="ADM-DONE", screenout_code="ADM-OUT",
                 completion_url=COMPLETE, entries={"platforms": ["prolific", "mturk"],
                                                   "strict_ids": True})
    page = admin_page(make_app(url), "https://ratings.example.org")
    table = html.unescape(re.search(r'<table id="platform">.*?</table>', page, re.DOTALL).group(0))
    assert "<code>ADM-DONE</code>" in table and "<code>ADM-OUT</code>" in table
    assert "https://app.prolific.com/submissions/complete?cc=ADM-DONE" in table
    assert "https://app.prolific.com/submissions/complete?cc=ADM-OUT" in table
    assert f"<code>https://ratings.example.org/{PROLIFIC_QUERY}</code>" in table
    assert "entry link, mturk</th><td><code>https://ratings.example.org/</code>" in table
    assert "anonymous" not in table                       # the study does not accept it
    assert "no qualification question" in table           # SimLex: nobody is screened out


def test_admin_entry_links_do_not_follow_untrusted_forwarded_headers(tmp_path, pairs):
    url = database_url(tmp_path / "host.sqlite")
    create_study("simlex", pairs, url, entries={"platforms": ["prolific"], "strict_ids": False})
    page = html.unescape(admin_page(make_app(url), "http://127.0.0.1:8000",
                                    **{"X-Forwarded-Host": "evil.example",
                                       "X-Forwarded-Proto": "https"}))
    assert f"http://127.0.0.1:8000/{PROLIFIC_QUERY}" in page and "evil.example" not in page
    trusted = make_app(url, TRUSTED_PROXIES=1)              # behind one trusted proxy: its host
    page = html.unescape(admin_page(trusted, "http://127.0.0.1:8000",
                                    **{"X-Forwarded-Host": "ratings.example.org",
                                       "X-Forwarded-Proto": "https"}))
    assert f"https://ratings.example.org/{PROLIFIC_QUERY}" in page


@pytest.mark.parametrize("completion_url", [COMPLETE, ""])
def test_screened_out_page_links_back_with_the_screenout_code(tmp_path, usf, completion_url):
    pairs = usf_pair_file(usf, tmp_path / "h.csv", (("N", "N", 60), ("V", "V", 20)))
    protocol = protocol_variant(tmp_path, "hyperlex", tranches=1, raters_per_tranche=2)
    url = database_url(tmp_path / "screen.sqlite")
    create_study(protocol, pairs, url, screenout_code="SCREEN 7", completion_code="OK-1",
                 completion_url=completion_url)
    client = make_app(url).test_client()
    enter(client)
    client.post("/qualification", data={"choice": 0})           # two wrong answers
    client.post("/qualification", data={"choice": 2})
    page = client.get("/task").get_data(as_text=True)
    assert "Thank you for your interest" in page and "SCREEN 7" in page
    link = re.search(r'<a id="return"[^>]* href="([^"]+)">Return to the study platform</a>', page)
    if completion_url:                                # the code goes into the URL quoted
        assert link.group(1) == "https://app.prolific.com/submissions/complete?cc=SCREEN%207"
    else:
        assert link is None
