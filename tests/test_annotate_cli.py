"""``lexgold study create|report|export`` and ``lexgold serve`` through click's CliRunner."""

import json
import re
import sqlite3

import pandas as pd
import pytest
from click.testing import CliRunner

from lexgold.cli import cli
from test_annotate_app import enter, make_app, page, rate_all, usf_pair_file


@pytest.fixture(scope="module")
def pairs(usf, tmp_path_factory):
    return usf_pair_file(usf, tmp_path_factory.mktemp("cli") / "pairs.csv")


def test_create_report_export_serve(tmp_path, pairs):
    runner = CliRunner()
    db = tmp_path / "study.sqlite"
    result = runner.invoke(cli, ["study", "create", "--protocol", "simlex", "--pairs",
                                 str(pairs), "--db", str(db), "--seed", "4",
                                 "--completion-code", "CLI-OK"])
    assert result.exit_code == 0, result.output
    assert re.search(r"210 pairs, 10 tranches .* 20 consistency pairs, 520 rater slots",
                     result.output)
    assert "  layout: 19 unique pairs per tranche where the protocol's figure is 99" \
        in result.output
    assert "not satisfied" not in result.output          # summed up by kind, not listed

    report = runner.invoke(cli, ["study", "report", str(db), "--json"])
    assert report.exit_code == 0
    data = json.loads(report.output)
    assert data["design"]["tranches"] == 10 and len(data["progress"]) == 10
    assert {row["target"] for row in data["progress"]} == {52}

    app = make_app(f"sqlite:///{db}")
    # one figure for the platform's time field and the consent page (expected_minutes)
    minutes = re.search(r"estimated completion time\): (\S+) minutes\n", result.output).group(1)
    assert f"takes about {minutes} minutes" in app.test_client().get("/").get_data(as_text=True)
    client = app.test_client()
    enter(client)
    posted, _, _ = rate_all(client)
    quitter = app.test_client()                # answers one page, then leaves
    enter(quitter)
    _, position, ids, checkpoint = page(quitter)
    data = {"choice": 1} if checkpoint else {f"r{i}": 3 for i in ids}
    assert quitter.post("/step", data={"position": position, **data}).status_code == 302
    summary = runner.invoke(cli, ["study", "report", str(db)])     # for a person
    assert summary.exit_code == 0 and not summary.output.startswith("{")
    assert summary.output.splitlines()[:6] == [
        f"study 'simlex999' ({db})",
        "1 of 520 places completed; 1 rater rating now, 0 claims expired",
        "accepted raters: 1 (0 excluded by the protocol's [process.exclusions] rules)",
        "10 of 10 tranches with places still open: 1, 2, 3, 4, 5, 6, 7, 8, 9, 10",
        "new raters: open: new raters are taken",
        "codes: completion CLI-OK, screen-out " + data_codes(runner, db)[1]]
    assert summary.output.splitlines()[-1] == \
        f"per tranche and the design report, as JSON: lexgold study report {db} --json"
    out = tmp_path / "ratings.csv"
    result = runner.invoke(cli, ["study", "export", str(db), "--out", str(out)])
    assert result.exit_code == 0 and f"-> {out}" in result.output
    frame = pd.read_csv(out)                   # by default only raters who finished
    assert frame["rater_id"].nunique() == 1
    assert (frame["kind"] != "checkpoint").sum() == len(posted)
    everyone = tmp_path / "all.csv"
    result = runner.invoke(cli, ["study", "export", str(db), "--out", str(everyone),
                                 "--all-raters"])
    assert result.exit_code == 0 and pd.read_csv(everyone)["rater_id"].nunique() == 2

    served = runner.invoke(cli, ["serve", str(db), "--port", "0", "--check"],
                           env={"LEXGOLD_ADMIN_PASSWORD": "x"})
    assert served.exit_code == 0, served.output
    assert re.search(r"serving .* at http://127\.0\.0\.1:\d+/", served.output)
    assert "entry page OK (HTTP 200)" in served.output


def data_codes(runner, db) -> tuple[str, str]:
    data = json.loads(runner.invoke(cli, ["study", "report", str(db), "--json"]).output)
    return data["completion_code"], data["screenout_code"]


def test_create_sums_up_what_the_design_could_not_meet(tmp_path):
    """A SimLex-sized pair set: the 9 misses of the paper's layout print as two lines that say
    nothing needs doing; every miss is still in --json and in the stored report."""
    rows = [(f"{pos.lower()}{i}a", f"{pos.lower()}{i}b", pos)
            for pos, n in (("N", 666), ("V", 222), ("A", 111)) for i in range(n)]
    pairs = tmp_path / "simlex-sized.csv"
    pd.DataFrame(rows, columns=["word1", "word2", "pos"]).to_csv(pairs, index=False)
    runner = CliRunner()
    args = ["study", "create", "--protocol", "simlex", "--pairs", str(pairs), "--seed", "1"]
    result = runner.invoke(cli, [*args, "--db", str(tmp_path / "a.sqlite")])
    assert result.exit_code == 0, result.output
    notes = result.output.split("design notes (9 constraints not met; each one in --json and "
                                "`lexgold study report`):\n")[1].splitlines()
    assert [line.split(":")[0] for line in notes] == [
        "  layout", "  consistency pair second in each group"]
    assert all(line.endswith("nothing to do") for line in notes)
    created = json.loads(runner.invoke(cli, [*args, "--db", str(tmp_path / "b.sqlite"),
                                             "--json"]).output)
    assert len(created["unmet"]) == 9 and created["unmet_summary"] == [n[2:] for n in notes]
    stored = json.loads(runner.invoke(cli, ["study", "report", str(tmp_path / "b.sqlite"),
                                         "--json"])
                        .output)["design"]
    assert stored["unmet"] == created["unmet"]


def test_create_errors_are_one_line(tmp_path, pairs):
    runner = CliRunner()
    bad = tmp_path / "bad.csv"
    bad.write_text("word1,word2\ncat,dog\n")
    result = runner.invoke(cli, ["study", "create", "--protocol", "simlex", "--pairs", str(bad),
                                 "--db", str(tmp_path / "x.sqlite")])
    assert result.exit_code == 1
    assert result.output.strip() == f"Error: {bad}, field 'pos': missing column; the header " \
                                    "needs word1, word2, pos"
    db = tmp_path / "y.sqlite"
    args = ["study", "create", "--protocol", "simlex", "--pairs", str(pairs), "--db", str(db)]
    assert runner.invoke(cli, args).exit_code == 0
    again = runner.invoke(cli, args)
    assert again.exit_code == 1
    assert again.output.strip() == (
        f"Error: {db} already holds the study 'simlex999' (one study per database): "
        f"`lexgold serve {db}` serves it, `lexgold study report {db}` shows it; for a new "
        f"study give a new --db")


@pytest.mark.parametrize("command", [["serve", "--check"], ["study", "report"],
                                     ["study", "export", "--out", "x.csv"]])
def test_missing_or_foreign_database_one_line_error(tmp_path, command):
    missing = tmp_path / "none.sqlite"
    result = CliRunner().invoke(cli, [command[0], *command[1:2], str(missing), *command[2:]]
                                if command[0] == "study" else ["serve", str(missing), "--check"])
    assert result.exit_code == 1
    assert result.output == f"Error: {missing}: no such study database (create it with " \
                            "`lexgold study create`)\n"
    foreign = tmp_path / "other.sqlite"
    sqlite3.connect(foreign).execute("CREATE TABLE t (x)").connection.commit()
    args = [command[0], *command[1:2], str(foreign), *command[2:]] if command[0] == "study" \
        else ["serve", str(foreign), "--check"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1 and "not a lexgold study database" in result.output
    assert len(result.output.splitlines()) == 1


def test_upgrade_is_idempotent(tmp_path, pairs):
    db = tmp_path / "u.sqlite"
    CliRunner().invoke(cli, ["study", "create", "--protocol", "simlex", "--pairs", str(pairs),
                             "--db", str(db)])
    result = CliRunner().invoke(cli, ["study", "upgrade", str(db)])
    assert result.exit_code == 0 and "schema up to date" in result.output


@pytest.mark.parametrize("command", [["study", "create"], ["study", "report"],
                                     ["study", "export"], ["study", "upgrade"], ["serve"]])
def test_help_has_an_example(command):
    result = CliRunner().invoke(cli, [*command, "--help"])
    assert result.exit_code == 0 and "Example:" in result.output


def test_accept_and_confirm_options(tmp_path, pairs):
    runner = CliRunner()
    db = tmp_path / "study.sqlite"
    result = runner.invoke(cli, ["study", "create", "--protocol", "simlex", "--pairs",
                                 str(pairs), "--db", str(db), "--accept", "mturk",
                                 "--strict-ids"])
    assert result.exit_code == 0, result.output
    with sqlite3.connect(db) as connection:
        stored = json.loads(connection.execute("SELECT entries FROM study").fetchone()[0])
    assert stored == {"platforms": ["mturk"], "strict_ids": True}
    client = make_app(f"sqlite:///{db}").test_client()
    assert client.get("/").status_code == 403                     # no anonymous link
    enter(client, "?workerId=A1B2C3D4E5F6G7&hitId=" + "H" * 30 + "&assignmentId=" + "B" * 30)
    listed = tmp_path / "batch.csv"
    pd.DataFrame({"WorkerId": ["A1B2C3D4E5F6G7", "AZZZZZZZZZZZZ"]}).to_csv(listed, index=False)
    result = runner.invoke(cli, ["study", "confirm", str(db), "--participants", str(listed),
                                 "--platform", "mturk"])
    assert result.exit_code == 0, result.output
    assert "1 raters confirmed; 1 IDs of the list never entered; 0 raters unconfirmed" \
        in result.output
    wrong = tmp_path / "wrong.csv"
    pd.DataFrame({"id": ["x"]}).to_csv(wrong, index=False)
    result = runner.invoke(cli, ["study", "confirm", str(db), "--participants", str(wrong)])
    assert result.exit_code != 0
    assert result.output.strip().splitlines()[-1].startswith("Error:")
    assert "Participant id" in result.output


@pytest.mark.parametrize("command", [["serve", "--check"], ["study", "report"],
                                     ["study", "upgrade"]])
def test_file_that_is_not_a_database_one_line_error(tmp_path, command):
    ratings = tmp_path / "ratings.csv"
    ratings.write_text("word1,word2,rating\ncat,dog,5\n")
    args = ["serve", str(ratings), "--check"] if command[0] == "serve" \
        else [*command, str(ratings)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1
    assert result.output == f"Error: {ratings}: not a lexgold study database " \
                            "(file is not a database)\n"


def _free_port() -> int:
    import socket
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.postgres
@pytest.mark.parametrize("fault", ["password", "closed port"])
@pytest.mark.parametrize("command", [["serve", "--check"], ["study", "report"],
                                     ["study", "create"]])
def test_postgres_connection_failure_one_line_error(postgres_url, pairs, fault, command):
    from sqlalchemy.engine import make_url

    url = make_url(postgres_url)
    url = url.set(password="not-the-password") if fault == "password" \
        else url.set(host="127.0.0.1", port=_free_port())
    text = url.render_as_string(hide_password=False)
    if command[0] == "serve":
        args = ["serve", text, "--check"]
    elif command[1] == "create":
        args = ["study", "create", "--protocol", "simlex", "--pairs", str(pairs), "--db", text]
    else:
        args = [*command, text]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1
    assert len(result.output.splitlines()) == 1
    assert result.output.startswith(f"Error: {url.render_as_string(hide_password=True)}: "
                                    "cannot connect to the study database: ")
    assert "not-the-password" not in result.output
    expected = "password authentication failed" if fault == "password" else "refused"
    assert expected in result.output


@pytest.mark.parametrize("command", [["serve", "--check"], ["study", "report"]])
def test_psycopg_missing_says_what_to_install(monkeypatch, command):
    import sys

    monkeypatch.setitem(sys.modules, "psycopg", None)      # `import psycopg` now fails
    url = "postgresql+psycopg://u:secret@127.0.0.1:5432/study"
    args = ["serve", url, "--check"] if command[0] == "serve" else [*command, url]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1
    assert result.output == "Error: postgresql+psycopg://u:***@127.0.0.1:5432/study: the " \
                            "database driver psycopg is not installed " \
                            "(pip install -e '.[postgres]' in the lexgold clone)\n"


def test_serve_warns_on_a_public_address_without_a_proxy(tmp_path, pairs):
    """Round 3, item 7: straight at waitress, slow clients tie up every connection."""
    db = tmp_path / "public.sqlite"
    assert CliRunner().invoke(cli, ["study", "create", "--protocol", "simlex", "--pairs",
                                    str(pairs), "--db", str(db)]).exit_code == 0
    warned = {}
    for host, proxies in (("0.0.0.0", "0"), ("0.0.0.0", "1"), ("127.0.0.1", "0")):
        result = CliRunner().invoke(cli, ["serve", str(db), "--check", "--host", host,
                                          "--port", "0", "--trusted-proxies", proxies])
        assert result.exit_code == 0, result.output
        warned[host, proxies] = "put nginx in front (deploy/README.md)" in result.stderr
    assert warned == {("0.0.0.0", "0"): True, ("0.0.0.0", "1"): False,
                      ("127.0.0.1", "0"): False}


def test_serve_on_a_port_in_use_is_one_line_naming_it(tmp_path, pairs):
    import socket
    db = tmp_path / "study.sqlite"
    runner = CliRunner()
    assert runner.invoke(cli, ["study", "create", "--protocol", "simlex", "--pairs", str(pairs),
                               "--db", str(db), "--seed", "4"]).exit_code == 0
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        for extra in ([], ["--workers", "2"]):
            served = runner.invoke(cli, ["serve", str(db), "--port", str(port), *extra],
                                   env={"LEXGOLD_ADMIN_PASSWORD": "x"})
            assert served.exit_code == 1
            assert served.output.strip().splitlines() == [
                f"Error: port {port} on 127.0.0.1 is already in use (another lexgold serve, or "
                f"another server): stop it, or choose a free port with --port"]


def test_a_database_never_reached_is_the_commands_one_line_not_the_sites_outage_log(
        tmp_path, pairs, caplog):
    """A wrong password or an unreachable server at `study create`: the command's own error
    only, not the serving site's "study database down ... 503" log line first."""
    pytest.importorskip("psycopg")
    with socket_closed_port() as port:
        url = f"postgresql+psycopg://lexgold:wrong@127.0.0.1:{port}/study"
        with caplog.at_level("WARNING"):
            result = CliRunner().invoke(cli, ["study", "create", "--protocol", "simlex",
                                              "--pairs", str(pairs), "--db", url])
    assert result.exit_code == 1
    assert result.output.startswith(f"Error: postgresql+psycopg://lexgold:***@127.0.0.1:{port}"
                                    f"/study: cannot connect to the study database: ")
    assert len(result.output.splitlines()) == 1
    assert not [r for r in caplog.records if "study database down" in r.getMessage()]


def socket_closed_port():
    """A loopback port nothing listens on (bound, then released)."""
    import contextlib
    import socket

    @contextlib.contextmanager
    def closed():
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        yield port
    return closed()
