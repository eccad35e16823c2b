"""One set of command-line options (issue 25): every option explained, the same names and value
checks in every command, and docs/contract.md's names still accepted."""

import re
import shutil
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from lexgold.cli import cli

CONTRACT = Path(__file__).resolve().parents[1] / "docs" / "contract.md"


def _commands(group, prefix=()):
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            yield from _commands(command, prefix + (name,))
        else:
            yield prefix + (name,), command


COMMANDS = dict(_commands(cli))


def _options(command):
    return [p for p in command.params if isinstance(p, click.Option)]


def _with(option_name):
    return {path: command for path, command in COMMANDS.items()
            if any(option_name in p.opts for p in _options(command))}


def test_every_option_of_every_command_has_help():
    missing = [f"lexgold {' '.join(path)} {option.opts[0]}"
               for path, command in COMMANDS.items() for option in _options(command)
               if not (option.help or "").strip()]
    assert missing == []


def test_help_texts_print_no_doubled_percent_sign():
    # click does not %-format help: a '%%' is shown as it is written
    doubled = [f"lexgold {' '.join(path)} {option.opts[0]}"
               for path, command in COMMANDS.items() for option in _options(command)
               if "%%" in (option.help or "")]
    assert doubled == []
    result = CliRunner().invoke(cli, ["simulate", "--help"])
    assert "10-90 % of" in " ".join(result.output.split())


@pytest.mark.parametrize("path", sorted(_with("--seed")), ids=" ".join)
def test_a_negative_seed_is_a_usage_error_everywhere(path):
    result = CliRunner().invoke(cli, [*path, "--seed", "-1"])
    assert result.exit_code == 2
    assert "Invalid value for '--seed'" in result.output


@pytest.mark.parametrize("path", sorted(_with("--bootstrap")), ids=" ".join)
def test_a_negative_bootstrap_is_a_usage_error_everywhere(path):
    # `evaluate --bootstrap -5` used to mean: no bootstrap
    result = CliRunner().invoke(cli, [*path, "--bootstrap", "-5"])
    assert result.exit_code == 2
    assert "Invalid value for '--bootstrap'" in result.output


@pytest.mark.parametrize("path", sorted(_with("--bootstrap")), ids=" ".join)
def test_a_bootstrap_past_its_bound_is_refused_before_any_work(path):
    # bounded time: a slip of the keyboard (--bootstrap 10000000) is not hours of resampling
    result = CliRunner().invoke(cli, [*path, "--bootstrap", "100001"])
    assert result.exit_code == 2
    assert "Invalid value for '--bootstrap'" in result.output and "100000" in result.output


def test_protocol_is_one_option_everywhere():
    found = {path: next(p for p in _options(c) if "--protocol" in p.opts)
             for path, c in _with("--protocol").items()}
    assert len(found) >= 7
    for path, option in found.items():
        assert option.metavar == "NAME|FILE", path
        assert not isinstance(option.type, click.Choice), path       # a file is always allowed
        assert "path of a protocol file" in option.help, path


@pytest.mark.parametrize("path", sorted(_with("--protocol")), ids=" ".join)
def test_an_unknown_protocol_is_a_usage_error_naming_the_option(path, tmp_path):
    missing = str(tmp_path / "nope.toml")
    result = CliRunner().invoke(cli, [*path, "--protocol", missing])
    assert result.exit_code == 2
    assert "Invalid value for '--protocol'" in result.output
    assert "nope.toml" in result.output


def test_every_out_option_says_folder_or_file():
    for path, command in COMMANDS.items():
        for option in _options(command):
            if "--out" in option.opts:
                assert option.metavar in ("DIR", "FILE"), path
            assert "--output" not in option.opts or "--out" in option.opts, path


def test_simulate_takes_a_protocol_file(tmp_path):
    from lexgold.protocols import protocol_path

    own = tmp_path / "my-protocol.toml"
    shutil.copy(protocol_path("simlex"), own)
    out = tmp_path / "ratings.csv"
    result = CliRunner().invoke(cli, ["simulate", "--protocol", str(own), "--n-pairs", "40",
                                      "--out", str(out), "--seed", "1"])
    assert result.exit_code == 0, result.output
    assert out.read_text().startswith("rater_id,")


def test_translate_export_takes_a_protocol_file(tmp_path):
    from lexgold.protocols import protocol_path

    pairs = tmp_path / "pairs.csv"
    pairs.write_text("word1,word2,pos\ncat,animal,N\nrun,walk,V\n")
    own = tmp_path / "mine.toml"
    shutil.copy(protocol_path("hyperlex"), own)       # name = "hyperlex": HyperLex's question
    result = CliRunner().invoke(cli, ["translate", "export", "--pairs", str(pairs), "--lang", "it",
                                      "--protocol", str(own), "--out", str(tmp_path / "s")])
    assert result.exit_code == 0, result.output
    sheet = (tmp_path / "s" / "it_A.csv").read_text(encoding="utf-8-sig")
    assert "Is cat a type of animal?" in sheet and "Is to run a type of to walk?" in sheet


def test_translate_export_refuses_a_protocol_without_a_question(tmp_path):
    from lexgold.protocols import protocol_path

    pairs = tmp_path / "pairs.csv"
    pairs.write_text("word1,word2,pos\ncat,animal,N\n")
    result = CliRunner().invoke(cli, ["translate", "export", "--pairs", str(pairs), "--lang", "it",
                                      "--protocol", str(protocol_path("plain")),
                                      "--out", str(tmp_path / "s")])
    assert result.exit_code == 1
    assert "plain.toml" in result.output and "no English question" in result.output


@pytest.mark.parametrize("how", [["STUDY"], ["--db", "STUDY"], ["STUDY", "--db", "STUDY"]])
def test_study_create_takes_the_study_like_the_other_study_commands(tmp_path, how):
    pairs = tmp_path / "pairs.csv"
    pairs.write_text("word1,word2,pos\n" + "".join(f"w{i},v{i},N\n" for i in range(30)))
    study = str(tmp_path / "s.sqlite")
    args = [study if a == "STUDY" else a for a in how]
    result = CliRunner().invoke(cli, ["study", "create", "--protocol", "simlex", "--pairs",
                                      str(pairs), *args])
    assert result.exit_code == 0, result.output
    assert Path(study).is_file()
    report = CliRunner().invoke(cli, ["study", "report", study])
    assert report.exit_code == 0, report.output


def test_study_create_refuses_two_different_studies(tmp_path):
    pairs = tmp_path / "pairs.csv"
    pairs.write_text("word1,word2,pos\ncat,dog,N\n")
    result = CliRunner().invoke(cli, ["study", "create", "--protocol", "simlex", "--pairs",
                                      str(pairs), str(tmp_path / "a.sqlite"),
                                      "--db", str(tmp_path / "b.sqlite")])
    assert result.exit_code == 2
    assert "STUDY or --db, not both" in result.output
    assert not (tmp_path / "a.sqlite").exists() and not (tmp_path / "b.sqlite").exists()


@pytest.mark.parametrize("args,name", [
    (["serve", "--port", "70000"], "--port"),
    (["serve", "--threads", "0"], "--threads"),
    (["relations", "x.csv", "--hyp-max", "0"], "--hyp-max"),
    (["sdt", "--dim", "0"], "--dim"),
    (["crosslingual", "--max-score-difference", "-1"], "--max-score-difference"),
])
def test_numbers_out_of_range_are_usage_errors(args, name):
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2
    assert f"'{name}'" in result.output


def _contract_rows():
    """(command path, options) of every command line in docs/contract.md's command table."""
    rows = []
    for line in CONTRACT.read_text(encoding="utf-8").splitlines():
        match = re.match(r"\| `lexgold ([^`]*)`", line)
        if not match:
            continue
        words = match.group(1).split()
        path = []
        for word in words:
            if not re.fullmatch(r"[a-z][a-z0-9-]*", word):     # STUDY, IN.csv, --out, [...]
                break
            path.append(word)
        rows.append((tuple(path), re.findall(r"--[a-z][a-z-]*", match.group(1))))
    return rows


def test_the_contract_table_is_read():
    rows = _contract_rows()
    assert (("build", "simlex"), ["--usf", "--seed", "--out"]) in rows
    assert len(rows) >= 15


@pytest.mark.parametrize("path,names", _contract_rows(), ids=lambda v: " ".join(v)
                         if isinstance(v, tuple) else "")
def test_docs_contract_names_still_work(path, names):
    if path == ("process",) and not names:      # `lexgold process ...` (release): see above
        return
    command = COMMANDS[path]
    opts = {o for p in _options(command) for o in p.opts + p.secondary_opts}
    assert set(names) <= opts


@pytest.mark.parametrize("path", sorted(_with("--scale")), ids=" ".join)
@pytest.mark.parametrize("scale", [["10", "0"], ["1", "1"], ["0", "inf"]])
def test_a_scale_must_run_from_min_to_max_everywhere(path, scale):
    assert len(_with("--scale")) >= 3
    result = CliRunner().invoke(cli, [*path, "--scale", *scale])
    assert result.exit_code == 2
    assert "Invalid value for '--scale'" in result.output and "MIN must be below MAX" in result.output
