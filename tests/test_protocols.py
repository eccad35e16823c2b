"""Protocol files load, and the section checker names the key at fault."""

import dataclasses
from typing import Literal

import pytest

from lexgold.errors import InputError
from lexgold.protocols import load_protocol, parse_section, protocol_path


@dataclasses.dataclass
class Inner:
    size: int = 7


@dataclasses.dataclass
class Schema:
    threshold: float = 0.75
    mode: Literal["per_pos", "global"] = "per_pos"
    quotas: dict[str, int] = dataclasses.field(default_factory=lambda: {"N": 600})
    inner: Inner = dataclasses.field(default_factory=Inner)


@pytest.mark.parametrize("name", ["simlex", "hyperlex", "tr9856"])
def test_packaged_protocols_load(name):
    protocol = load_protocol(name)
    assert protocol["name"] in {"simlex999", "hyperlex", "tr9856"}
    assert len(protocol["_sha256"]) == 64
    assert protocol_path(name).is_file()


def test_defaults_and_overrides():
    protocol = {"_path": "p.toml", "build": {"threshold": 1, "inner": {"size": 6}}}
    parsed = parse_section(Schema, protocol, "build")
    assert parsed == Schema(threshold=1.0, inner=Inner(6))
    assert parse_section(Schema, {}, "build") == Schema()


@pytest.mark.parametrize("table,message", [
    ({"treshold": 1}, (r"^p\.toml: \[build\] treshold: allowed keys inner \| mode \| quotas \| "
                       r"threshold, given an unknown key$")),
    ({"threshold": "x"}, r"^p\.toml: \[build\] threshold: allowed a number, given 'x'$"),
    ({"mode": "pos"}, r"^p\.toml: \[build\] mode: allowed 'per_pos' \| 'global', given 'pos'$"),
    ({"quotas": {"N": "6"}}, r"^p\.toml: \[build\.quotas\] N: allowed an integer, given '6'$"),
    ({"inner": {"size": True}}, r"^p\.toml: \[build\.inner\] size: allowed an integer, given True$"),
])
def test_bad_keys_named(table, message):
    with pytest.raises(InputError, match=message):
        parse_section(Schema, {"_path": "p.toml", "build": table}, "build")


def test_an_unknown_short_name_lists_every_packaged_protocol_and_the_near_ones():
    with pytest.raises(InputError) as caught:
        load_protocol("bws")
    assert str(caught.value) == (
        "bws: protocol file not found (did you mean simlex_bws or simlex999_bws? short names: "
        "simlex, hyperlex, tr9856, plain, simlex_bws; or a shipped pack's <language>/<name>: "
        "it/hyperlex, he/simlex)")
    with pytest.raises(InputError, match=r"did you mean hyperlex\?"):
        load_protocol("hyperlx")


def test_missing_and_broken_files(tmp_path):
    with pytest.raises(InputError, match="protocol file not found"):
        load_protocol(tmp_path / "nope.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("name = \n")
    with pytest.raises(InputError, match=r"bad\.toml: not a valid TOML protocol file"):
        load_protocol(bad)


def test_shipped_pack_protocols_by_language_and_name(tmp_path, monkeypatch):
    assert protocol_path("he/simlex") == protocol_path("he/simlex999.toml")
    assert protocol_path("he/simlex").parent.name == "he"
    assert protocol_path("it/hyperlex").name == "hyperlex.toml"
    assert load_protocol("he/simlex")["language"] == "he"
    with pytest.raises(InputError, match="or a shipped pack's <language>/<name>"):
        protocol_path("xx/simlex")
    monkeypatch.chdir(tmp_path)                     # a file of that name wins
    (tmp_path / "he").mkdir()
    (tmp_path / "he" / "simlex").write_text('name = "mine"\n')
    assert load_protocol("he/simlex")["name"] == "mine"
