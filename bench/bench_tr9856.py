"""Benchmark of ``lexgold build tr9856``: speed, and memory bounded by the vocabulary.

1. The embedded default: gensim's shortened Wikipedia dump (1.7 MB bz2) with the packaged topics.
2. The same topic articles as a plain-text folder corpus, copied 1, 4 and 16 times (each copy a
   new article of the same topic): the corpus grows 16-fold while its vocabulary of n-gram terms
   stays the same, so peak memory should stay nearly flat while time grows linearly.

Each build runs in a fresh Python process; peak memory is its maximum resident set size.

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
corpus, topics, out = (None if a == "-" else a for a in sys.argv[1:4])
start = time.perf_counter()
report = build_tr9856(corpus, topics, out, seed=1, show_progress=False)
seconds = time.perf_counter() - start
print(json.dumps({"seconds": seconds, "max_rss_mb": resource.getrusage(
    resource.RUSAGE_SELF).ru_maxrss / 1024, "sentences": report["sentences"],
    "articles": report["articles"], "lexicon_terms": report["lexicon_terms"],
    "pairs": report["pairs"]}))
"""


def run(corpus: str, topics: str, out: Path) -> dict:
    result = subprocess.run([sys.executable, "-c", CHILD, corpus, topics, str(out)],
                            capture_output=True, text=True, check=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


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
            print(f"text folder x{copies:<2}: {figures['articles']:4d} articles, "
                  f"{figures['sentences']:7d} sentences: {figures['seconds']:6.1f} s "
                  f"({figures['sentences'] / figures['seconds']:,.0f} sentences/s), "
                  f"peak RSS {figures['max_rss_mb']:.0f} MB")


if __name__ == "__main__":
    main()
