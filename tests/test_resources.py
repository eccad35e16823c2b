"""The resource readers on the real files as distributed."""

import math

import pandas as pd
import pytest

from lexgold.errors import InputError
from lexgold.resources import pos
from lexgold.resources._files import resource_files
from lexgold.resources.concreteness import parse_brysbaert, read_brysbaert
from lexgold.resources.usf import USF_COLUMNS, parse_usf, read_usf
from lexgold.resources.wordnet import WordNetNotFound, load_wordnet, locate_wordnet, nltk_layout



def test_usf_row_and_cue_counts(usf):
    # every well-formed data line of the eight files (72,176; the norms' documentation says
    # 72,171) and all 5,018 cues
    assert len(usf) == 72176
    assert usf["cue"].nunique() == 5018
    assert list(usf.columns) == list(USF_COLUMNS.values())
    assert not usf.duplicated(["cue", "target"]).any()


def test_usf_known_values(usf):
    row = usf[(usf.cue == "CAB") & (usf.target == "TAXI")].iloc[0]
    assert row.fsg == pytest.approx(0.386)
    assert row.n_participants == 49
    assert row.bsg == pytest.approx(0.537)
    assert row.qcon == pytest.approx(6.32) and row.tcon == pytest.approx(6.28)
    assert row.qps == "N" and row.tps == "N" and row.th == "G"
    assert bool(row.normed) is True
    assert pd.isna(row.qh)


def test_usf_missing_values_are_nan(usf):
    row = usf[(usf.cue == "A") & (usf.target == "B")].iloc[0]
    assert not row.normed
    assert math.isnan(row.bsg) and math.isnan(row.tcon) and pd.isna(row.tss)
    assert pd.isna(row.tps)
    assert row.qfr == 9999  # a value, not a missing code


def test_usf_cue_called_cue_and_trf_spelling(usf):
    assert (usf.cue == "CUE").sum() > 0          # the cue "CUE" is data, not a header
    d_f = usf[usf.cue.str[0].isin(list("DEF"))]  # D-F.txt spells TFR "TRF"
    assert d_f["tfr"].notna().any()


def test_usf_latin1_bytes_decoded():
    raw = resource_files("usf_appendix_a")[0].read_bytes()
    assert b"\xa5" in raw
    text = "CUE, TARGET, NORMED?, " + ", ".join(list(USF_COLUMNS)[3:]) + "\n"
    text += "CAF\xc9, CR\xc8ME, NO" + ", \xa5" * 28 + "\n"
    frame = parse_usf(("<PRE>\n" + text + "</PRE>\n").encode("latin-1").decode("latin-1"))
    assert frame.cue.iloc[0] == "CAFÉ" and frame.target.iloc[0] == "CRÈME"
    assert frame.iloc[0, 3:].isna().all()


def test_usf_bad_line_names_file_and_line(tmp_path):
    for file in resource_files("usf_appendix_a"):
        (tmp_path / file.name).write_bytes(file.read_bytes())
    broken = (tmp_path / "C.txt").read_bytes().split(b"\n")
    broken[10] = b"CAB, TAXI, YES, 127"
    (tmp_path / "C.txt").write_bytes(b"\n".join(broken))
    with pytest.raises(InputError, match=r"C\.txt:11: expected 31 comma-separated fields, found 4"):
        read_usf(tmp_path)


def test_usf_bad_number_names_field(tmp_path):
    text = "CUE, TARGET, NORMED?, " + ", ".join(list(USF_COLUMNS)[3:]) + "\n"
    text += "A, B, NO, x" + ", \xa5" * 27 + "\n"
    with pytest.raises(InputError, match="field 'n_group': not a number: 'x'"):
        parse_usf(text, "t.txt")


def test_usf_columns_subset_is_the_full_frame_cut(usf):
    """``read_usf(columns=...)`` (what ``lexgold process`` reads; issue 22) gives the same
    values and types as the full frame, in file order, whatever order they are asked in."""
    frame = read_usf(columns=["tcon", "cue", "fsg", "target", "qcon"])
    assert list(frame.columns) == ["cue", "target", "fsg", "qcon", "tcon"]
    pd.testing.assert_frame_equal(frame, usf[["cue", "target", "fsg", "qcon", "tcon"]])


def test_usf_columns_subset_checks_only_its_columns_and_names_unknown_ones():
    text = "CUE, TARGET, NORMED?, " + ", ".join(list(USF_COLUMNS)[3:]) + "\n"
    text += "A, B, NO, x" + ", \xa5" * 27 + "\n"            # n_group is not a number
    frame = parse_usf(text, "t.txt", columns=["cue", "target", "fsg"])
    assert list(frame.columns) == ["cue", "target", "fsg"]
    assert (frame["cue"].tolist(), frame["target"].tolist()) == (["A"], ["B"])
    assert frame["fsg"].isna().all()
    with pytest.raises(InputError, match="field 'n_group': not a number: 'x'"):
        parse_usf(text, "t.txt", columns=["cue", "n_group"])
    with pytest.raises(InputError, match="not a USF column: fsgg"):
        parse_usf(text, "t.txt", columns=["cue", "fsgg"])


def unpack_vendored(resource, folder):
    """Write the vendored files of ``resource`` into ``folder`` as distributed (uncompressed)."""
    folder.mkdir()
    for file in resource_files(resource):
        (folder / file.name).write_bytes(file.read_bytes())
    return folder


def test_usf_from_user_folder_matches_vendored(usf, tmp_path):
    folder = unpack_vendored("usf_appendix_a", tmp_path / "usf_appendix_a")
    assert sorted(p.name for p in folder.iterdir())[0] == "A-B.txt"
    frame = read_usf(folder)
    pd.testing.assert_frame_equal(frame, usf)


def test_usf_user_folder_missing_file_names_it(tmp_path):
    folder = unpack_vendored("usf_appendix_a", tmp_path / "usf")
    (folder / "S.txt").unlink()
    with pytest.raises(FileNotFoundError, match="S.txt"):
        read_usf(folder)


def test_brysbaert(brysbaert):
    assert len(brysbaert) == 39954
    assert brysbaert["bigram"].sum() == 2896
    assert (~brysbaert["bigram"]).sum() == 37058
    row = brysbaert[brysbaert.word == "roadsweeper"].iloc[0]
    assert row.conc_m == pytest.approx(4.85) and row.total == 27
    last = brysbaert.iloc[-1]
    assert pd.isna(last.dom_pos)  # "#N/A" on the last line, which has no newline
    assert brysbaert.dom_pos.isna().sum() > 0
    assert brysbaert.conc_m.between(1, 5).all()


def test_brysbaert_user_file_matches_vendored(brysbaert, tmp_path):
    folder = unpack_vendored("brysbaert_concreteness", tmp_path / "brysbaert")
    path = folder / "Concreteness_ratings_Brysbaert_et_al_BRM.txt"
    assert path.read_bytes().endswith(b"#N/A") and b"\r\n" in path.read_bytes()
    pd.testing.assert_frame_equal(read_brysbaert(path), brysbaert)


def test_brysbaert_bad_value_names_line():
    text = "\t".join(["Word", "Bigram", "Conc.M", "Conc.SD", "Unknown", "Total", "Percent_known",
                      "SUBTLEX", "Dom_Pos"]) + "\r\nfoo\t0\tabc\t1\t0\t30\t1\t5\tNoun"
    with pytest.raises(InputError, match=r"b\.txt:2, field 'conc_m': not a number"):
        parse_brysbaert(text, "b.txt")


def test_vendored_checksums_hold():
    for resource in ("usf_appendix_a", "brysbaert_concreteness", "simverb3500_ratings",
                     "wordsim353_set1", "danish_similarity", "card660"):
        for file in resource_files(resource):
            assert file.sha256() == file.expected_sha256, file.name


def test_wordnet_hypernym_paths(wordnet):
    cathedral, building = wordnet.synset("cathedral.n.01"), wordnet.synset("building.n.01")
    assert any(building in path for path in cathedral.hypernym_paths())
    assert cathedral.shortest_path_distance(building) == 3  # HyperLex: cathedral/building hyp-3
    assert wordnet.get_version() == "3.0"


def test_wordnet_holonyms_antonyms_wup(wordnet):
    assert wordnet.synset("hand.n.01") in wordnet.synset("finger.n.01").part_holonyms()
    antonyms = {a.name() for a in wordnet.lemma("beginning.n.02.beginning").antonyms()}
    assert "end" in antonyms
    assert wordnet.synset("dog.n.01").wup_similarity(wordnet.synset("cat.n.01")) == pytest.approx(6 / 7)
    assert set(wordnet.synsets("author")) & set(wordnet.synsets("writer"))


def test_wordnet_layout_built_from_dict_folder(tmp_path, monkeypatch):
    kind, where = locate_wordnet("/usr/share/wordnet")
    assert kind == "dict"
    root = nltk_layout(where, tmp_path / "root")
    target = root / "corpora" / "wordnet"
    assert (target / "lexnames").read_text().splitlines()[3] == "03\tnoun.Tops\t1"
    assert not any(p.is_symlink() for p in target.iterdir())
    monkeypatch.setenv("LEXGOLD_WORDNET", str(root))
    assert locate_wordnet() == ("nltk", root)
    assert load_wordnet().synset("dog.n.01").lexname() == "noun.animal"


def test_wordnet_bad_folder(tmp_path):
    with pytest.raises(WordNetNotFound, match="neither a WordNet dict folder"):
        locate_wordnet(tmp_path)


def test_pos_sources_agree_on_clear_words(usf):
    usf_counts = pos.usf_pos_counts(usf)
    assert usf_counts.loc["taxi"].to_dict() == {"N": 1, "V": 0, "A": 0, "other": 0}
    penn = pos.penn_tag_counts()
    tendency = pos.pos_tendency(penn)
    assert tendency.loc["happy", "pos"] == "A" and tendency.loc["happy", "share"] == 1.0
    assert tendency.loc["run", "pos"] == "V"
    assert penn.loc["run", "V"] > penn.loc["run", "N"] > 0


def test_tagged_corpus_counts(tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_text("The/AT0 dog/NN1 runs/VVZ ./PUN\nDog/NN1 run/VVB-NN1 London/NP0 big/AJ0\n"
                      "the/DT dog/NN barks/VBZ\n")
    counts = pos.tagged_corpus_counts(corpus)
    assert counts.loc["dog"].to_dict() == {"N": 3, "V": 0, "A": 0, "other": 0}
    assert counts.loc["run", "V"] == 1 and "london" not in counts.index  # NP0: a name
    assert counts.loc["big", "A"] == 1
    corpus.write_text("fine/JJ\nbroken\n")
    with pytest.raises(InputError, match=r"c\.txt:2: token 'broken' is not word/TAG"):
        pos.tagged_corpus_counts(corpus)


@pytest.mark.parametrize("tag,coarse", [("NNS", "N"), ("NNP", "proper"), ("NNPS", "proper"), ("VBD", "V"),
                                        ("VVG", "V"), ("JJR", "A"), ("AJ0-NN1", "A"),
                                        ("RB", "other"), ("MD", "other")])
def test_coarse_pos(tag, coarse):
    assert pos.coarse_pos(tag) == coarse
