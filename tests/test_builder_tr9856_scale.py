"""TR9856 on large corpora: counting in several processes, Bling Fire sentences, and Wikipedia
multistream dumps read by seeking to the wanted articles (Levy et al. 2015, section 3.1-3.2)."""

from collections import Counter
from pathlib import Path

import pytest

from lexgold.builder import tr9856_lexicon
from lexgold.builder.terms import SentenceSplitter
from lexgold.builder.tr9856 import build_tr9856
from lexgold.builder.tr9856_lexicon import SentenceCounts, merge_counts
from lexgold.errors import InputError
from lexgold.protocols import load_protocol

OUTPUTS = ("lexicon.csv", "pairs.csv", "report.json")


def blingfire_protocol(folder: Path) -> Path:
    """The packaged TR9856 protocol with ``sentence_splitter = "blingfire"``."""
    text = Path(load_protocol("tr9856")["_path"]).read_text(encoding="utf-8")
    assert 'sentence_splitter = "punkt-trained"' in text
    path = folder / "tr9856_blingfire.toml"
    path.write_text(text.replace('sentence_splitter = "punkt-trained"',
                                 'sentence_splitter = "blingfire"'), encoding="utf-8")
    return path


def test_merged_counts_are_the_sums():
    a = SentenceCounts(3, {"t": 2}, Counter({"x": 2, "y": 1}), {"t": Counter({"x": 1})}, 1,
                       {"t": 1})
    b = SentenceCounts(4, {"t": 1, "u": 4}, Counter({"x": 1, "z": 3}),
                       {"t": Counter({"x": 1}), "u": Counter({"z": 3})}, 2, {"t": 1, "u": 1})
    total = merge_counts(a, b)
    assert total.sentences == 7 and total.articles == 3
    assert total.topic_sentences == {"t": 3, "u": 4}
    assert total.term_sentences == Counter({"x": 3, "y": 1, "z": 3})
    assert total.topic_term_sentences == {"t": Counter({"x": 2}), "u": Counter({"z": 3})}
    assert total.topic_articles == {"t": 2, "u": 1}


@pytest.fixture(scope="module")
def one_process(tmp_path_factory):
    base = tmp_path_factory.mktemp("tr9856-scale")
    build_tr9856(None, None, base / "punkt", seed=1, show_progress=False)
    return base


def test_workers_give_the_same_bytes_as_one_process(one_process, tmp_path, monkeypatch):
    # small batches, so that both workers count several of them and results are merged
    monkeypatch.setattr(tr9856_lexicon, "BATCH_CHARS", 20_000)
    report = build_tr9856(None, None, tmp_path / "w2", seed=1, workers=2, show_progress=False)
    assert report["articles"] > 10
    for name in OUTPUTS:
        assert (tmp_path / "w2" / name).read_bytes() == \
            (one_process / "punkt" / name).read_bytes(), name


def test_blingfire_splits_sentences_without_training():
    splitter = SentenceSplitter("blingfire")
    text = "Dr. Smith met the U.S. Navy in 1969. It sailed away.\n\nA second line"
    assert list(splitter.split(text)) == ["Dr. Smith met the U.S. Navy in 1969.",
                                          "It sailed away.", "A second line"]
    assert splitter.parameters() is None


def test_blingfire_build_is_the_same_in_any_number_of_processes(one_process, tmp_path,
                                                                monkeypatch):
    protocol = blingfire_protocol(tmp_path)
    monkeypatch.setattr(tr9856_lexicon, "BATCH_CHARS", 20_000)
    one = build_tr9856(None, None, tmp_path / "b1", protocol=protocol, seed=1,
                       show_progress=False)
    build_tr9856(None, None, tmp_path / "b2", protocol=protocol, seed=1, workers=2,
                 show_progress=False)
    for name in OUTPUTS:
        assert (tmp_path / "b1" / name).read_bytes() == (tmp_path / "b2" / name).read_bytes()
    assert one["config"]["sentence_splitter"] == "blingfire"
    # another splitter cuts other sentences: the counts differ from Punkt's
    punkt = (one_process / "punkt" / "lexicon.csv").read_bytes()
    assert (tmp_path / "b1" / "lexicon.csv").read_bytes() != punkt


def test_unknown_splitter_is_named():
    with pytest.raises(InputError, match="build.sentence_splitter.*unknown sentence splitter"):
        SentenceSplitter("spacy")
