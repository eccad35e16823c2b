"""The command line: every command documented, bad input reported in one line."""

import json
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from lexgold.cli import cli


def _commands(group, prefix=()):
    for name, command in group.commands.items():
        yield prefix + (name,), command
        if isinstance(command, click.Group):
            yield from _commands(command, prefix + (name,))


@pytest.mark.parametrize("path,command", list(_commands(cli)), ids=lambda v: " ".join(v) if isinstance(v, tuple) else "")
def test_every_command_has_help_with_example(path, command):
    result = CliRunner().invoke(cli, [*path, "--help"])
    assert result.exit_code == 0, result.output
    assert command.help and command.help.strip()
    if not isinstance(command, click.Group):
        assert "Example:" in result.output


def test_spec_commands_registered():
    names = {" ".join(path) for path, _ in _commands(cli)}
    for name in ["build simlex", "build hyperlex", "build tr9856", "relations", "agree",
                 "process", "evaluate", "analogy", "serve", "study create", "resources"]:
        assert name in names


def test_resources_json():
    result = CliRunner().invoke(cli, ["resources", "--json"])
    assert result.exit_code == 0, result.output
    # stdout only: run first in a session (empty cache), the graph's progress bar is on stderr
    entries = {e["resource"]: e for e in json.loads(result.stdout)}
    assert entries["usf_appendix_a"]["summary"]["cues"] == 5018
    assert all(f["checksum_ok"] for f in entries["usf_appendix_a"]["files"])
    assert entries["wordnet"]["summary"]["version"] == "3.0"
    # counted from the WordNet graph, which `lexgold resources` builds (set-up) when missing
    assert entries["wordnet"]["summary"]["noun_synsets"] == 82115
    assert entries["wordnet"]["summary"]["verb_synsets"] == 13767
    assert Path(entries["wordnet"]["graph"]).is_file()


def test_resources_bad_usf_folder_fails(tmp_path):
    result = CliRunner().invoke(cli, ["resources", "--usf", str(tmp_path)])
    assert result.exit_code == 1
    assert f"{tmp_path}: usf_appendix_a file 'A-B.txt' not found" in result.output


def test_resources_checksum_mismatch_reported(tmp_path):
    from lexgold.resources._files import resource_files
    for file in resource_files("usf_appendix_a"):
        (tmp_path / file.name).write_bytes(file.read_bytes())
    with open(tmp_path / "S.txt", "ab") as handle:
        handle.write(b"\n")
    result = CliRunner().invoke(cli, ["resources", "--usf", str(tmp_path)])
    assert result.exit_code == 1
    assert "checksum MISMATCH: S.txt" in result.output
