"""Benchmark of ``lexgold build tr9856``: speed, and memory bounded by the vocabulary.

1. The embedded default: gensim's shortened Wikipedia dump (1.7 MB bz2) with the packaged topics.
2. The same topic articles as a plain-text folder corpus, copied 1, 4 and 16 times (each copy a
   new article of the same topic): the corpus grows 16-fold while its vocabulary of n-gram terms
   stays the same, so peak memory should stay nearly flat while time grows linearly.

3. The x16 folder corpus again with 2 worker processes, and with the Bling Fire sentence
   splitter (``sentence_splitter = "blingfire"``) in 1 and 2 processes: the lexicon is the same
   bytes for any number of processes (checked here too).
4. Wikipedia multistream: the sample's pages copied 40 times under new titles (a dump of
   about 9,000 pages), once as a plain ``.xml.bz2`` and once in Wikipedia's multistream layout;
   the topic articles are fetched from each, by reading the whole dump and by seeking.

Each build runs in a fresh Python process; peak memory is its maximum resident set size
(with workers: of the main process; each worker holds one batch and its counts).

Run:  .venv/bin/python bench/bench_tr9856.py
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r"""
import json, resource, sys, time
from lexgold.builder.tr9856 import build_tr9856
corpus, topics, out, protocol = (None if a == "-" else a for a in sys.argv[1:5])
start = time.perf_counter()
report = build_tr9856(corpus, topics, out, seed=1, show_progress=False,
                      protocol=protocol or "tr9856", workers=int(sys.argv[5]))
seconds = time.perf_counter() - start
print(json.dumps({"seconds": seconds, "max_rss_mb": resource.getrusage(
    resource.RUSAGE_SELF).ru_maxrss / 1024, "sentences": report["sentences"],
    "articles": report["articles"], "lexicon_terms": report["lexicon_terms"],
    "pairs": report["pairs"]}))
"""


def run(corpus: str, topics: str, out: Path, protocol: str = "-", workers: int = 1) -> dict:
    result = subprocess.run([sys.executable, "-c", CHILD, corpus, topics, str(out), protocol,
                             str(workers)], capture_output=True, text=True, check=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


def blingfire_protocol(base: Path) -> str:
    from lexgold.protocols import load_protocol
    text = Path(load_protocol("tr9856")["_path"]).read_text(encoding="utf-8")
    path = base / "tr9856_blingfire.toml"
    path.write_text(text.replace('sentence_splitter = "punkt-trained"',
                                 'sentence_splitter = "blingfire"'), encoding="utf-8")
    return str(path)


def line(label: str, figures: dict) -> str:
    return (f"{label}: {figures['articles']:4d} articles, {figures['sentences']:7d} sentences: "
            f"{figures['seconds']:6.1f} s ({figures['sentences'] / figures['seconds']:,.0f} "
            f"sentences/s), peak RSS {figures['max_rss_mb']:.0f} MB")


def big_dump(base: Path, copies: int) -> Path:
    """The sample's pages, each also ``copies`` times under a new title, as one plain .xml.bz2."""
    import bz2
    import re

    from lexgold.builder.corpus import gensim_wiki_sample
    data = bz2.decompress(gensim_wiki_sample().read_bytes())
    pages = list(re.finditer(rb"[ \t]*<page>.*?</page>\s*", data, re.S))
    body = [data[: pages[0].start()]]
    for i in range(copies + 1):
        for page in pages:
            text = page.group(0)
            if i:
                text = re.sub(rb"<title>(.*?)</title>", rb"<title>\1 (copy %d)</title>" % i, text,
                              count=1)
            body.append(text)
    body.append(data[pages[-1].end():])
    path = base / "big-pages-articles.xml.bz2"
    path.write_bytes(bz2.compress(b"".join(body)))
    return path


def fetch_rate(reader, wanted: set[str]) -> tuple[int, float]:
    import time
    start = time.perf_counter()
    found = sum(1 for _ in reader.articles(wanted))
    return found, time.perf_counter() - start


def folder_corpus(base: Path, copies: int) -> Path:
    """The default topics' articles as ``<topic>/<title> (copy i).txt`` files."""
    from importlib import resources

    from lexgold.builder.corpus import WikiDump, gensim_wiki_sample
    from lexgold.builder.tr9856 import DEFAULT_TOPICS
    from lexgold.builder.tr9856_topics import read_topics
    topics = read_topics(Path(str(resources.files("lexgold.protocols") / DEFAULT_TOPICS)))
    texts = {a.title: a.text for a in WikiDump(gensim_wiki_sample()).articles(
        {t for topic in topics for t in topic.articles})}
    corpus = base / f"corpus_x{copies}"
    lines = []
    for topic in topics:
        (corpus / topic.key).mkdir(parents=True)
        for title in topic.articles:
            for i in range(copies):
                (corpus / topic.key / f"{title} - {topic.key} copy {i}.txt").write_text(
                    texts[title], encoding="utf-8")
        lines.append(f"[topics.{topic.key}]\ns_def = {json.dumps(list(topic.s_def))}\n")
    (base / "topics.toml").write_text("\n".join(lines), encoding="utf-8")
    return corpus


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        figures = run("-", "-", base / "out_default")
        print(f"gensim wiki sample (default): {figures['articles']} articles, "
              f"{figures['sentences']} sentences, {figures['lexicon_terms']} lexicon terms, "
              f"{figures['pairs']} pairs: {figures['seconds']:.1f} s, "
              f"peak RSS {figures['max_rss_mb']:.0f} MB")
        for copies in (1, 4, 16):
            corpus = folder_corpus(base, copies)
            figures = run(str(corpus), str(base / "topics.toml"), base / f"out_x{copies}")
            print(line(f"text folder x{copies:<2}, punkt-trained, 1 process ", figures))
        topics, blingfire = str(base / "topics.toml"), blingfire_protocol(base)
        figures = run(str(corpus), topics, base / "out_x16_w2", workers=2)
        print(line("text folder x16, punkt-trained, 2 processes", figures))
        same = (base / "out_x16_w2" / "lexicon.csv").read_bytes() == \
            (base / "out_x16" / "lexicon.csv").read_bytes()
        for workers in (1, 2):
            figures = run(str(corpus), topics, base / f"out_bf_w{workers}", blingfire, workers)
            print(line(f"text folder x16, blingfire,     {workers} process{'es' if workers > 1 else '  '}",
                       figures))
        same = same and (base / "out_bf_w1" / "lexicon.csv").read_bytes() == \
            (base / "out_bf_w2" / "lexicon.csv").read_bytes()
        print(f"lexicon.csv the same bytes with 1 and 2 processes (both splitters): {same}")

        from lexgold.builder.corpus import WikiDump
        from lexgold.builder.multistream import MultistreamDump, write_multistream
        from lexgold.builder.tr9856 import DEFAULT_TOPICS
        from lexgold.builder.tr9856_topics import read_topics
        from importlib import resources
        wanted = {t for topic in read_topics(Path(str(resources.files("lexgold.protocols")
                                                      / DEFAULT_TOPICS))) for t in topic.articles}
        plain = big_dump(base, 40)
        multi, _ = write_multistream(plain, base / "big-pages-articles-multistream.xml.bz2")
        found, seconds = fetch_rate(WikiDump(plain), wanted)
        print(f"plain dump ({plain.stat().st_size / 1e6:.0f} MB bz2), read whole: {found} topic "
              f"articles in {seconds:.1f} s ({found / seconds:,.1f} articles/s)")
        reader = MultistreamDump(multi)
        found, seconds = fetch_rate(reader, wanted)
        print(f"multistream dump, seeking: {found} topic articles in {seconds:.2f} s "
              f"({found / seconds:,.1f} articles/s; {reader.streams_read} of {reader.streams} "
              f"streams read)")


if __name__ == "__main__":
    main()
