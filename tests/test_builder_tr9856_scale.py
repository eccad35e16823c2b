"""TR9856 on large corpora: counting in several processes, Bling Fire sentences, and Wikipedia
multistream dumps read by seeking to the wanted articles (Levy et al. 2015, section 3.1-3.2)."""

from collections import Counter
from pathlib import Path

import pytest

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


@pytest.mark.slow                   # worker processes
def test_workers_give_the_same_bytes_as_one_process(one_process, tmp_path):
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


@pytest.mark.slow                   # worker processes
def test_blingfire_build_is_the_same_in_any_number_of_processes(one_process, tmp_path):
    protocol = blingfire_protocol(tmp_path)
    one = build_tr9856(None, None, tmp_path / "b1", protocol=protocol, seed=1,
                       show_progress=False)
    build_tr9856(None, None, tmp_path / "b2", protocol=protocol, seed=1, workers=2,
                 show_progress=False)
    build_tr9856(None, None, tmp_path / "b3", protocol=protocol, seed=1, workers=3,
                 show_progress=False)
    for name in OUTPUTS:
        assert (tmp_path / "b1" / name).read_bytes() == (tmp_path / "b3" / name).read_bytes()
        assert (tmp_path / "b1" / name).read_bytes() == (tmp_path / "b2" / name).read_bytes()
    assert one["config"]["sentence_splitter"] == "blingfire"
    # another splitter cuts other sentences: the counts differ from Punkt's
    punkt = (one_process / "punkt" / "lexicon.csv").read_bytes()
    assert (tmp_path / "b1" / "lexicon.csv").read_bytes() != punkt


def test_unknown_splitter_is_named():
    with pytest.raises(InputError, match="build.sentence_splitter.*unknown sentence splitter"):
        SentenceSplitter("spacy")


# --------------------------------------------------------------------------- multistream dumps

@pytest.fixture(scope="module")
def multistream(tmp_path_factory):
    """gensim's Wikipedia sample cut into Wikipedia's multistream layout, 5 pages a stream."""
    from lexgold.builder.corpus import gensim_wiki_sample
    from lexgold.builder.multistream import write_multistream
    base = tmp_path_factory.mktemp("multistream")
    return write_multistream(gensim_wiki_sample(), base / "enwiki-sample-multistream.xml.bz2",
                             pages_per_stream=5)


def test_multistream_index_has_wikipedias_layout(multistream):
    import bz2
    dump, index = multistream
    assert index.name == "enwiki-sample-multistream-index.txt.bz2"
    lines = bz2.decompress(index.read_bytes()).decode("utf-8").splitlines()
    offset, page_id, title = lines[0].split(":", 2)
    assert int(offset) > 0 and page_id.isdigit() and title
    with open(dump, "rb") as raw:           # every offset starts a bz2 stream of its own
        for line in lines[:: 40]:
            raw.seek(int(line.split(":", 1)[0]))
            assert raw.read(3) == b"BZh"


def test_multistream_gives_the_articles_of_the_whole_dump_reading_few_streams(multistream):
    from lexgold.builder.corpus import WikiDump, gensim_wiki_sample
    from lexgold.builder.multistream import open_corpus
    from lexgold.builder.multistream import MultistreamDump
    dump, _ = multistream
    wanted = {"Apollo 11", "Anarchism", "Agriculture", "Astronaut", "No such article"}
    plain = list(WikiDump(gensim_wiki_sample()).articles(wanted))
    reader = open_corpus(dump)
    assert isinstance(reader, MultistreamDump)
    seeked = list(reader.articles(wanted))
    assert sorted(plain, key=lambda a: a.title) == sorted(seeked, key=lambda a: a.title)
    assert {a.title for a in seeked} == wanted - {"No such article"}
    assert reader.streams_read <= 4 < reader.streams
    assert len(reader.sha256) == 64


@pytest.mark.slow                   # two builds of a dump
def test_tr9856_on_a_multistream_dump_equals_the_plain_dump(one_process, multistream, tmp_path):
    import json
    from lexgold.builder.corpus import gensim_wiki_sample
    dump, _ = multistream
    report = build_tr9856(dump, "tr9856_enwiki_sample_topics.toml", tmp_path / "ms", seed=1,
                          show_progress=False)
    plain = build_tr9856(gensim_wiki_sample(), "tr9856_enwiki_sample_topics.toml",
                         tmp_path / "plain", seed=1, show_progress=False)
    for name in ("lexicon.csv", "pairs.csv"):
        assert (tmp_path / "ms" / name).read_bytes() == (tmp_path / "plain" / name).read_bytes()
    assert report["sentences"] == plain["sentences"] and report["articles"] == plain["articles"]
    assert json.loads((tmp_path / "ms" / "report.json").read_text())["manifest"]["resources"][
        "corpus"][0]["sha256"] != plain["manifest"]["resources"]["corpus"][0]["sha256"]


def test_multistream_errors_name_the_file(multistream, tmp_path):
    import bz2
    from lexgold.builder.multistream import MultistreamDump
    dump, index = multistream
    bad = tmp_path / "x-multistream.xml.bz2"
    bad.write_bytes(dump.read_bytes())
    with pytest.raises(InputError, match="multistream index not found"):
        MultistreamDump(bad)
    (tmp_path / "x-multistream-index.txt.bz2").write_bytes(bz2.compress(b"12:34:Apollo 11\n"))
    with pytest.raises(InputError, match=r"x-multistream\.xml\.bz2.*no bz2 stream at byte 12"):
        list(MultistreamDump(bad).articles({"Apollo 11"}))
    (tmp_path / "x-multistream-index.txt.bz2").write_bytes(bz2.compress(b"oops\n"))
    with pytest.raises(InputError, match=r"index\.txt\.bz2:1.*offset:page id:title"):
        list(MultistreamDump(bad).articles({"Apollo 11"}))
