"""What resources lexgold can see, where they are, whether their checksums hold, and their size."""

from __future__ import annotations

from pathlib import Path

from lexgold.resources import pos
from lexgold.resources._files import resource_files
from lexgold.resources.concreteness import read_brysbaert
from lexgold.resources.usf import read_usf
from lexgold.resources.wordnet import WordNetNotFound, locate_wordnet
from lexgold.resources.wordnet_graph import graph_path, load_graph


def _checked_files(resource: str, directory) -> list[dict]:
    rows = []
    for file in resource_files(resource, directory):
        actual = file.sha256()
        rows.append({"file": file.name, "location": file.location,
                     "sha256": actual, "checksum_ok": actual == file.expected_sha256})
    return rows


def catalogue(usf_dir=None, brysbaert=None, wordnet_dir=None) -> list[dict]:
    """One entry per resource: name, where found, checksum verdicts and a summary of its content.

    A resource that cannot be found or read gets ``found: False`` and the reason in ``error``.
    """
    entries = []

    def entry(name, load, optional=False):
        try:
            entries.append({"resource": name, "found": True, "optional": optional, **load()})
        except (OSError, ValueError, WordNetNotFound) as err:
            entries.append({"resource": name, "found": False, "optional": optional,
                            "error": str(err)})

    def usf():
        files = _checked_files("usf_appendix_a", usf_dir)
        frame = read_usf(usf_dir)
        return {"location": str(Path(files[0]["location"]).parent), "files": files,
                "summary": {"pairs": len(frame), "cues": int(frame["cue"].nunique()),
                            "normed_targets": int(frame["normed"].sum())}}

    def brys():
        directory = Path(brysbaert).parent if brysbaert and Path(brysbaert).is_file() else brysbaert
        files = _checked_files("brysbaert_concreteness", directory)
        frame = read_brysbaert(brysbaert)
        return {"location": files[0]["location"], "files": files,
                "summary": {"rows": len(frame), "words": int((~frame["bigram"]).sum()),
                            "bigrams": int(frame["bigram"].sum())}}

    def wordnet():
        kind, where = locate_wordnet(wordnet_dir)
        graph = load_graph(wordnet_dir)     # built here once, at set-up, if the cache has none
        return {"location": str(where), "kind": kind, "graph": str(graph_path(graph.key)),
                "summary": {"version": graph.version,
                            "noun_synsets": graph.count("n"),
                            "verb_synsets": graph.count("v")}}

    def lingua():
        counts = pos.penn_tag_counts()
        return {"location": str(pos.LINGUA_WORDS), "summary": {"words": len(counts)}}

    entry("usf_appendix_a", usf)
    entry("brysbaert_concreteness", brys)
    entry("wordnet", wordnet)
    entry("lingua_penn_tag_counts", lingua, optional=True)
    return entries
