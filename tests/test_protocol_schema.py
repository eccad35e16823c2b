"""One protocol schema (issue 25): every table checked by one path, one error line per problem.

``FILE: [table] key: allowed ..., given ...``; unknown tables and keys are refused; values out
of their range stop the step before it runs; shipped protocols parse to the same values as
before the schema was gathered.
"""

import dataclasses
import json
import re
from importlib import resources
from pathlib import Path

import pytest
from click.testing import CliRunner

from lexgold.study.config import load_study_config
from lexgold.builder import hyperlex, simlex, tr9856
from lexgold.cli import cli
from lexgold.errors import InputError
from lexgold.languages.crosslingual import CrosslingualConfig
from lexgold.languages.packs import load_pack
from lexgold.process.config import process_config
from lexgold.protocols import ProtocolError, load_protocol, parse_section

PACKAGED = Path(str(resources.files("lexgold.protocols")))
BEFORE = Path(__file__).parent / "data" / "issue25_shipped_protocol_values.json"
BUILDERS = {"simlex999": simlex.load_settings, "hyperlex": hyperlex.load_settings,
            "tr9856": tr9856.load_build_config}


def shipped_protocols() -> list[Path]:
    """Every protocol file lexgold ships: the packaged ones and those listed by each pack."""
    files = [p for p in sorted(PACKAGED.glob("*.toml")) if not p.stem.endswith("_topics")]
    for pack in sorted(PACKAGED.glob("*/pack.toml")):
        files += list(load_pack(pack.parent).protocols.values())
    return files


def parsed_values(protocol: dict) -> dict:
    """Every section of a protocol as its step's loader parses it (plain dicts)."""
    values = {"process": dataclasses.asdict(process_config(protocol)),
              "cl": dataclasses.asdict(parse_section(CrosslingualConfig, protocol,
                                                     "crosslingual"))}
    if "study" in protocol:
        values["study"] = dataclasses.asdict(load_study_config(protocol))
    builder = BUILDERS.get(protocol["name"].split("-")[0])
    if builder is not None:
        values["build"] = dataclasses.asdict(builder(protocol))
    return values


def write(tmp_path, text: str) -> Path:
    path = tmp_path / "mine.toml"
    path.write_text('name = "mine"\n' + text, encoding="utf-8")
    return path


def test_every_shipped_protocol_loads_in_every_section():
    files = shipped_protocols()
    assert {f.relative_to(PACKAGED).as_posix() for f in files} >= {
        "simlex999.toml", "hyperlex.toml", "tr9856.toml", "plain.toml", "it/simlex999.toml",
        "it/hyperlex.toml", "he/simlex999.toml"}
    for path in files:
        protocol = load_protocol(path)
        values = parsed_values(protocol)
        assert set(values) >= {"process", "cl"}
        assert ("build" in values) == ("build" in protocol), path


def test_shipped_protocols_parse_to_the_values_they_had_before():
    """The schema added checks only: every value of every shipped protocol is unchanged."""
    before = json.loads(BEFORE.read_text(encoding="utf-8"))["values"]
    for name, expected in before.items():
        got = json.loads(json.dumps(parsed_values(load_protocol(name)), default=repr))
        assert got == expected, name


@pytest.mark.parametrize("table,key,allowed,given", [
    ("[process.exclusions]\ngain_fraction = 5\n", "gain_fraction", "0 <= x < 1", "5"),
    ("[process.exclusions]\nsd_below = -3\n", "sd_below", "x >= 0", "-3"),
    ("[process.exclusions]\nmin_answers_share = 7\n", "min_answers_share", "0 <= x <= 1", "7"),
])
def test_issue_examples_are_errors_naming_file_table_key(tmp_path, table, key, allowed, given):
    """Issue 25: these excluded 10 of 10 raters without an error."""
    path = write(tmp_path, table)
    with pytest.raises(ProtocolError) as err:
        process_config(load_protocol(path))
    assert str(err.value) == (f"{path}: [process.exclusions] {key}: allowed {allowed}, "
                              f"given {given}")
    assert err.value.field == f"process.exclusions.{key}"


def test_issue_example_stops_the_process_command(tmp_path):
    path = write(tmp_path, "[process.exclusions]\ngain_fraction = 5\n")
    ratings = tmp_path / "ratings.csv"
    ratings.write_text("rater_id,tranche,word1,word2,rating\na,1,x,y,3\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["process", str(ratings), "--protocol", str(path),
                                      "--out", str(tmp_path / "out")])
    assert result.exit_code == 1, result.output
    assert result.output.strip().splitlines() == [
        f"Error: {path}: [process.exclusions] gain_fraction: allowed 0 <= x < 1, given 5"]
    assert not (tmp_path / "out").exists()


def test_misspelled_table_is_refused(tmp_path):
    path = write(tmp_path, "[procss.exclusions]\nsd_below = 2\n")
    with pytest.raises(ProtocolError, match=r"^.*mine\.toml: \[procss\]: allowed tables \[build\] "
                                            r"\| \[study\] \| \[process\] \| \[crosslingual\] "
                                            r"and keys name \| paper \| language, given an "
                                            r"unknown table$"):
        load_protocol(path)
    with pytest.raises(ProtocolError, match=r"mine\.toml: \[process\] exclusion: allowed keys "
                                            r"aggregate \| agreement \| .*, given an unknown key$"):
        process_config(load_protocol(write(tmp_path, "[process.exclusion]\nsd_below = 2\n")))


def test_misspelled_key_is_refused(tmp_path):
    path = write(tmp_path, "[process.exclusions]\ngain_fractoin = 0.1\n")
    with pytest.raises(ProtocolError, match=r"mine\.toml: \[process\.exclusions\] gain_fractoin: "
                                            r"allowed keys duplicate_max_ratio \| gain_fraction "
                                            r"\| .*, given an unknown key$"):
        process_config(load_protocol(path))
    with pytest.raises(ProtocolError, match=r"mine\.toml: namee: allowed tables .*, given an "
                                            r"unknown key$"):
        load_protocol(write(tmp_path, 'namee = "x"\n'))
    with pytest.raises(ProtocolError, match=r"mine\.toml: language: allowed a string, given 3$"):
        load_protocol(write(tmp_path, "language = 3\n"))


@pytest.mark.parametrize("table,message", [
    ("[process.exclusions]\nrules = [\"checkpoint\", \"checkpoint\"]\n",
     r"\[process\.exclusions\] rules: allowed each rule once, given \['checkpoint', 'checkpoint'\]"),
    ("[process.exclusions]\nrules = [\"too_slow\"]\n",
     (r"\[process\.exclusions\] rules\[0\]: allowed 'min_answers' \| .* \| 'too_fast', "
     r"given 'too_slow'")),
    ("[process.release]\nscore_min = 10\nscore_max = 0\n",
     r"\[process\.release\] score_max: allowed a number > score_min \(10\), given 0"),
    ("[process.release]\nrating_min = 1\nrating_max = 1\n",
     r"\[process\.release\] rating_max: allowed a number > rating_min \(1\), given 1"),
    ("[process.release]\nformat = \"simlx\"\n",
     (r"\[process\.release\] format: allowed 'simlex' \| 'hyperlex' \| 'tr9856' \| 'plain', "
     r"given 'simlx'")),
    ("[process.release]\nrelease_file = \"gold.csv\"\n",
     r"\[process\.release\] release_file: allowed a plain file name other than gold\.csv"),
    ("[process.release]\ndecimals = -1\n", r"\[process\.release\] decimals: allowed 0 <= x <= 15"),
    ("[process.release]\nmin_raters_per_pair = 0\n",
     r"\[process\.release\] min_raters_per_pair: allowed x >= 1, given 0"),
    ("[process.splits]\ntrain = 0.8\n",
     r"\[process\.splits\] test: allowed train \+ dev \+ test = 1 \(here 1\.1\), given 0\.25"),
    ("[process.splits]\nintervals = [0, 5, 5, 10]\n",
     r"\[process\.splits\] intervals: allowed two or more increasing edges"),
    ("[process.split_half]\nannotators = 9\n",
     r"\[process\.split_half\] annotators: allowed an even number, given 9"),
    ("[process.agreement]\nci_level = 95\n",
     r"\[process\.agreement\] ci_level: allowed 0 < x < 1, given 95"),
    ("[process.agreement]\nmin_overlap = 1\n",
     r"\[process\.agreement\] min_overlap: allowed x >= 2, given 1"),
    ("[process.agreement]\nbootstrap = -5\n",
     r"\[process\.agreement\] bootstrap: allowed 0 <= x <= 100,000, given -5"),
    ("[process.exclusions]\ntwo_value_max_rho = 2\n",
     r"\[process\.exclusions\] two_value_max_rho: allowed -1 <= x <= 1, given 2"),
    ("[process.exclusions]\nrandom_consistency_alpha = 0\n",
     r"\[process\.exclusions\] random_consistency_alpha: allowed 0 < x < 1, given 0"),
    ("[process.exclusions]\nsingle_value_share = 0\n",
     r"\[process\.exclusions\] single_value_share: allowed 0 < x <= 1, given 0"),
    ("[process.exclusions]\nmax_per_tranche = -1\n",
     r"\[process\.exclusions\] max_per_tranche: allowed x >= 0, given -1"),
    ("[process.exclusions]\ntoo_fast_s_per_pair = -1\n",
     r"\[process\.exclusions\] too_fast_s_per_pair: allowed x >= 0, given -1"),
    ("[process.calibration]\nthreshold = -1\n",
     r"\[process\.calibration\] threshold: allowed x >= 0, given -1"),
])
def test_process_bounds_and_cross_field_checks(tmp_path, table, message):
    with pytest.raises(ProtocolError, match=r"^.*mine\.toml: " + message):
        process_config(load_protocol(write(tmp_path, table)))


@pytest.mark.parametrize("table,message", [
    ("[study]\ntranches = -1\n", r"\[study\] tranches: allowed 0 <= x <= 10,000, given -1"),
    ("[study]\nraters_per_tranche = 0\n", r"\[study\] raters_per_tranche: allowed 1 <= x <= 10,000, given 0"),
    ("[study]\nscale_min = 6\nscale_max = 0\n",
     r"\[study\] scale_max: allowed an integer > scale_min \(6\), given 0"),
    ("[study]\ngroup_size_min = 8\n",
     r"\[study\] group_size_min: allowed at most group_size_max \(7\), given 8"),
    ("[study]\nseconds_per_item = [0]\n", r"\[study\] seconds_per_item\[0\]: allowed 0 < x <= 3,600, given 0"),
    ("[study]\nseconds_per_item = [9, 3]\n",
     r"\[study\] seconds_per_item: allowed one positive number, or two \(low, high\), given \[9"),
    ("[study]\nconsistency = { N = -2 }\n", r"\[study\.consistency\] N: allowed 0 <= x <= 1,000, given -2"),
    ("[study.qualification]\noptions = [\"a\", \"b\"]\nanswer = 2\n",
     r"\[study\] qualification: allowed two or more options and an answer indexing one"),
])
def test_study_bounds(tmp_path, table, message):
    with pytest.raises(ProtocolError, match=r"^.*mine\.toml: " + message):
        load_study_config(load_protocol(write(tmp_path, table)))


@pytest.mark.parametrize("loader,table,message", [
    (simlex.load_settings, "[build.pos]\nmin_tendency = 0\n",
     r"\[build\.pos\] min_tendency: allowed 0 < x <= 1, given 0"),
    (simlex.load_settings, "[build.associated]\nN = -1\n",
     r"\[build\.associated\] N: allowed x >= 0, given -1"),
    (simlex.load_settings, "[build.concreteness.usf]\nscale = [7.0, 1.0]\nthreshold = 4.0\n",
     r"\[build\.concreteness\.usf\] scale: allowed two numbers \[low, high\], low < high"),
    (simlex.load_settings, "[build.concreteness.brysbaert]\nscale = [1.0, 5.0]\nthreshold = 6\n",
     (r"\[build\.concreteness\.brysbaert\] threshold: allowed a number on the scale 1\.\.5, "
     r"given 6")),
    (simlex.load_settings, "[build]\npairing_rounds = 0\n",
     r"\[build\] pairing_rounds: allowed x >= 1, given 0"),
    (hyperlex.load_settings, "[build]\nhyp_max = 0\n", r"\[build\] hyp_max: allowed x >= 1"),
    (hyperlex.load_settings, "[build]\npos = [\"A\"]\n",
     r"\[build\] pos\[0\]: allowed 'N' \| 'V', given 'A'"),
    (hyperlex.load_settings, ("[build.concreteness.usf]\nscale = [1.0, 7.0]\nthreshold = 4.0\n"
     "group_difference = -1\n"),
     r"\[build\.concreteness\.usf\] group_difference: allowed x >= 0, given -1"),
    (tr9856.load_build_config, "[build]\nngram_sizes = []\n",
     r"\[build\] ngram_sizes: allowed one or more, given \[\]"),
    (tr9856.load_build_config, "[build]\nngram_sizes = [0]\n",
     r"\[build\] ngram_sizes\[0\]: allowed x >= 1, given 0"),
    (tr9856.load_build_config, "[build]\ntoken_pattern = \"(\"\n",
     r"\[build\] token_pattern: allowed a regular expression, given '\('"),
    (tr9856.load_build_config, "[build]\nsentence_splitter = \"nltk\"\n",
     r"\[build\] sentence_splitter: allowed 'punkt-trained' \| 'punkt-untrained' \| 'blingfire'"),
])
def test_build_bounds(tmp_path, loader, table, message):
    with pytest.raises(ProtocolError, match=r"^.*mine\.toml: " + message):
        loader(load_protocol(write(tmp_path, table)))


def test_crosslingual_bounds(tmp_path):
    path = write(tmp_path, "[crosslingual]\nmax_score_difference_share = 2\n")
    with pytest.raises(ProtocolError, match=r"mine\.toml: \[crosslingual\] "
                                            r"max_score_difference_share: allowed 0 <= x <= 1, "
                                            r"given 2$"):
        parse_section(CrosslingualConfig, load_protocol(path), "crosslingual")


def test_command_line_overrides_are_checked_by_the_same_schema():
    protocol = load_protocol("simlex")
    with pytest.raises(ProtocolError, match=r"simlex999\.toml: \[build\.concreteness\] source: "
                                            r"allowed 'usf' \| 'brysbaert', given 'norms'$"):
        simlex.load_settings(protocol, concreteness="norms")
    assert simlex.load_settings(protocol, concreteness="usf").concreteness.source == "usf"


def test_protocol_error_is_an_input_error_on_one_line(tmp_path):
    path = write(tmp_path, "[study.texts]\nquestion = \"{word3}\"\n")
    with pytest.raises(InputError) as err:
        load_study_config(load_protocol(path))
    assert "\n" not in str(err.value)
    assert str(err.value).startswith(f"{path}: [study.texts] question: allowed the placeholders")


def test_every_key_is_documented():
    """docs/protocols.md lists every key of every table (the texts are in docs/annotate.md)."""
    from lexgold.study.config import StudyConfig, Texts
    from lexgold.process.config import ProcessConfig

    doc = (Path(__file__).parents[1] / "docs" / "protocols.md").read_text(encoding="utf-8")
    missing = []
    todo = [ProcessConfig, StudyConfig, simlex.SimLexBuild, hyperlex.HyperLexBuild,
            tr9856.TR9856Build, CrosslingualConfig]
    while todo:
        schema = todo.pop()
        for field in dataclasses.fields(schema):
            if dataclasses.is_dataclass(field.default_factory) and field.default_factory is not Texts:
                todo.append(field.default_factory)
            if not re.search(rf"\b{re.escape(field.name)}\b", doc):
                missing.append(f"{schema.__name__}.{field.name}")
    assert missing == []
