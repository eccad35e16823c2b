"""Corpus readers for TR9856 topic articles (Levy et al. 2015, section 3.1).

The paper takes "the union of articles identified for all topics" from Wikipedia. lexgold reads
two kinds of corpus, both streamed so that memory does not grow with the corpus:

- a MediaWiki XML dump (``.xml`` or ``.xml.bz2``), read page by page with
  :func:`xml.etree.ElementTree.iterparse`; redirects and pages outside the main namespace are
  skipped and wiki markup is stripped with ``mwparserfromhell`` (:func:`strip_wiki`), which can
  also drop reference-like sections and identifiers (lists of editions, works and sources are
  not prose: without the rule "isbn" became an anarchism term of gensim's sample);
- a folder of plain-text files, one ``<title>.txt`` per article, in any sub-folders
  (``CORPUS/<topic>/<title>.txt`` is the usual layout).

Each reader yields :class:`Article` records and hashes every byte it reads, so a run's manifest
names the exact corpus without reading it twice.
"""

from __future__ import annotations

import bz2
import dataclasses
import hashlib
import importlib.util
import io
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import mwparserfromhell
from mwparserfromhell.nodes import Comment, Heading, Tag, Template, Wikilink

from lexgold.errors import InputError

#: file name of the shortened English Wikipedia dump shipped in gensim's test data
GENSIM_WIKI_SAMPLE = "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"

#: HTML-like tags whose content is not running text (footnotes, formulas, galleries, code)
_DROPPED_TAGS = {"ref", "references", "gallery", "math", "chem", "score", "timeline",
                 "syntaxhighlight", "source", "pre", "code", "imagemap", "graph", "mapframe"}


#: words of reference-like section headings: a heading made only of these words heads a list of
#: references, editions, works, sources or links, not prose ("Editions", "Selected
#: bibliography", "Notes and references", "Works cited", "List of works")
REFERENCE_HEADING_WORDS = frozenset({
    "see", "also", "notes", "references", "citations", "cited", "sources", "bibliography",
    "further", "reading", "external", "links", "editions", "works", "selected", "publications",
    "writings", "footnotes", "discography", "filmography", "list", "of", "and"})
#: identifiers of bibliographic records (MediaWiki's ISBN / PMID magic links, the identifiers
#: of citation templates written out), with their numbers
IDENTIFIERS = re.compile(r"\b(?:ISBN|ISSN|OCLC|LCCN|PMID|PMC|ASIN|JSTOR)(?:-1[03])?\b[\s:]*"
                         r"(?:[0-9][0-9X-]*(?: [0-9][0-9X-]*)*)?|\b(?:doi|arXiv):\s*\S+")


def is_reference_heading(title: str) -> bool:
    """Whether a section heading names a reference-like section (:data:`REFERENCE_HEADING_WORDS`).

    >>> [is_reference_heading(t) for t in ("Editions", "Selected bibliography", "Works", "Life")]
    [True, True, True, False]
    """
    words = re.findall(r"[a-z]+", title.lower())
    return bool(words) and all(word in REFERENCE_HEADING_WORDS for word in words)


@dataclasses.dataclass(frozen=True)
class Article:
    """One article: its normalised title and its plain text (markup already stripped)."""

    title: str
    text: str


def normalise_title(title: str) -> str:
    """MediaWiki title normalisation: underscores are spaces, the first letter is upper case.

    >>> normalise_title("apollo_11")
    'Apollo 11'
    """
    title = " ".join(title.replace("_", " ").split())
    return title[:1].upper() + title[1:]


def gensim_wiki_sample() -> Path:
    """Path of gensim's shortened English Wikipedia dump, found without importing gensim.

    Raises
    ------
    FileNotFoundError
        gensim is not installed (``pip install -e '.[gensim]'`` in the lexgold clone), or its
        test data is missing.
    """
    spec = importlib.util.find_spec("gensim")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("the default TR9856 corpus is gensim's Wikipedia sample: "
                                "install gensim (pip install -e '.[gensim]' in the lexgold "
                                "clone) or pass --corpus")
    package = Path(list(spec.submodule_search_locations)[0])
    path = package / "test" / "test_data" / GENSIM_WIKI_SAMPLE
    if not path.is_file():
        raise FileNotFoundError(f"{path}: gensim's Wikipedia sample is missing; pass --corpus")
    return path


class _HashingReader(io.RawIOBase):
    """A binary file wrapper that feeds every byte read into a SHA-256 and a progress callback."""

    def __init__(self, raw, on_read: Callable[[int], None] | None = None):
        self._raw, self._on_read = raw, on_read
        self.sha256 = hashlib.sha256()

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        size = self._raw.readinto(buffer)
        if size:
            self.sha256.update(memoryview(buffer)[:size])
            if self._on_read:
                self._on_read(size)
        return size or 0


def strip_wiki(wikitext: str, skip_sections: Iterable[str] = (), reference_like: bool = False
               ) -> str:
    r"""Plain text of a MediaWiki article, keeping only running prose.

    Removes templates (citation templates included), footnotes (``<ref>``) and other non-prose
    tags, comments, headings, category / file / interlanguage links (any link whose target has
    a namespace prefix), and keeps the visible text of ordinary links (``[[Moon|the moon]]`` ->
    ``the moon``). A section whose heading is in ``skip_sections`` (case-insensitive) is dropped
    with its sub-sections. With ``reference_like``, so is every section whose heading
    :func:`is_reference_heading` ("Editions", "Selected bibliography"), and identifiers with
    their numbers (:data:`IDENTIFIERS`: ``ISBN 0-451-51679-6``, ``LCCN 46006290``) are removed
    from the text left.

    >>> strip_wiki("The [[Moon|moon]]<ref>cite</ref> {{convert|1|km}} orbits.[[Category:Moons]]")
    'The moon  orbits.'
    >>> strip_wiki("Prose.\n== See also ==\n* [[Sun]]\n=== More ===\nx\n== Orbit ==\nOrbits.",
    ...            skip_sections=["See also"])
    'Prose.\nOrbits.'
    >>> strip_wiki("Read it (ISBN 0-451-51679-6).\n==Editions==\n* ISBN 0-582-02173-1 (1989)",
    ...            reference_like=True)
    'Read it ().'
    """
    code = mwparserfromhell.parse(wikitext)
    skip = {" ".join(s.split()).lower() for s in skip_sections}
    _prune(code, skip, [0], is_reference_heading if reference_like else None)
    text = code.strip_code(normalize=True, collapse=True)
    if reference_like:
        text = IDENTIFIERS.sub("", text)
    return "\n".join(line.strip() for line in text.splitlines() if _is_prose_line(line))


def _prune(code, skip: set[str], skipping: list[int], rule=None) -> None:
    """Drop non-prose nodes and skipped sections in one pass, in document order.

    Unbalanced markup (an unclosed ``''``) makes the parser nest later text, headings included,
    inside a tag, so tags are pruned recursively; ``skipping[0]`` is the level of the heading
    being skipped (0: none); ``rule(title)`` says whether a heading also starts a skip.
    """
    kept = []
    for node in code.nodes:
        if isinstance(node, Heading):
            title = " ".join(node.title.strip_code().split()).lower()
            if not skipping[0] or node.level <= skipping[0]:
                skipped = title in skip or (rule is not None and rule(title))
                skipping[0] = node.level if skipped else 0
        elif _is_dropped(node):
            continue
        elif isinstance(node, Tag) and node.contents is not None:
            _prune(node.contents, skip, skipping, rule)
            kept.append(node)
        elif not skipping[0]:
            kept.append(node)
    code.nodes = kept


def _is_dropped(node) -> bool:
    if isinstance(node, (Template, Comment, Heading)):
        return True
    if isinstance(node, Tag):
        return str(node.tag).strip().lower() in _DROPPED_TAGS
    if isinstance(node, Wikilink):
        return ":" in str(node.title).strip().lstrip(":")
    return False


def _is_prose_line(line: str) -> bool:
    """Table markup left by ``strip_code`` (``{|``, ``|-``, ``|}``, ``! header``) is not prose."""
    line = line.strip()
    return bool(line) and not line.startswith(("{|", "|", "!"))


class WikiDump:
    """A MediaWiki XML dump (``.xml`` or ``.bz2``), streamed page by page.

    Parameters
    ----------
    path : path-like
        MediaWiki XML export, bz2-compressed when its name ends in ``.bz2``.

    Attributes
    ----------
    sha256 : str
        Checksum of the file's bytes, set once :meth:`articles` has been read to the end.
    redirects : dict
        Wanted titles that turned out to be redirects, mapped to their targets.
    """

    unit = "B"

    def __init__(self, path: str | Path, skip_sections: Iterable[str] = (),
                 reference_like: bool = False):
        self.path = Path(path)
        self.skip_sections = tuple(skip_sections)
        self.reference_like = reference_like
        self.size = self.path.stat().st_size
        self.sha256: str | None = None
        self.redirects: dict[str, str] = {}

    def articles(self, wanted: set[str], on_read: Callable[[int], None] | None = None
                 ) -> Iterator[Article]:
        """Yield each main-namespace article whose normalised title is in ``wanted``.

        Other pages are skipped without stripping their markup; ``on_read`` is called with the
        number of file bytes read, for a progress bar.
        """
        with open(self.path, "rb") as raw:
            hashing = _HashingReader(raw, on_read)
            buffered = io.BufferedReader(hashing, buffer_size=1 << 20)
            stream = bz2.open(buffered) if self.path.suffix == ".bz2" else buffered
            try:
                yield from self._pages(stream, wanted)
                while stream.read(1 << 20):  # hash trailing bytes the parser did not need
                    pass
            except (ET.ParseError, OSError, EOFError) as err:
                raise InputError(f"not a readable MediaWiki XML dump: {err}",
                                 path=self.path) from None
            while buffered.read(1 << 20):
                pass
            self.sha256 = hashing.sha256.hexdigest()

    def _pages(self, stream, wanted: set[str]) -> Iterator[Article]:
        context = ET.iterparse(stream, events=("start", "end"))
        _, root = next(context)
        for event, element in context:
            tag = element.tag
            if event != "end" or not (tag == "page" or tag.endswith("}page")):
                continue
            ns = tag[: -len("page")]
            title = normalise_title(element.findtext(f"{ns}title") or "")
            if title in wanted and (element.findtext(f"{ns}ns") or "0") == "0":
                text = element.findtext(f"{ns}revision/{ns}text") or ""
                redirect = element.find(f"{ns}redirect")
                if redirect is not None or text.lstrip().upper().startswith("#REDIRECT"):
                    target = (redirect.get("title", "") if redirect is not None
                              else text.partition("[[")[2].partition("]]")[0])
                    self.redirects[title] = normalise_title(target)
                else:
                    yield Article(title, strip_wiki(text, self.skip_sections,
                                                    self.reference_like))
            root.clear()  # keep memory flat: drop every finished page


class TextFolder:
    """A folder of plain-text UTF-8 articles, one ``<title>.txt`` each, in any sub-folders.

    Attributes
    ----------
    files : dict
        Normalised title (file stem) -> file.
    sha256 : str
        Checksum over the titles and bytes of the articles read, set after :meth:`articles`.
    """

    unit = "article"
    redirects: dict[str, str] = {}

    def __init__(self, folder: str | Path):
        self.path = Path(folder)
        self.files: dict[str, Path] = {}
        for file in sorted(self.path.rglob("*.txt")):
            title = normalise_title(file.stem)
            if title in self.files:
                raise InputError(f"two articles titled {title!r} (also {self.files[title]})",
                                 path=file)
            self.files[title] = file
        self.size = len(self.files)
        self.sha256: str | None = None

    def articles(self, wanted: set[str], on_read: Callable[[int], None] | None = None
                 ) -> Iterator[Article]:
        """Yield the wanted articles in title order."""
        digest = hashlib.sha256()
        for title in sorted(wanted & set(self.files)):
            data = self.files[title].read_bytes()
            digest.update(title.encode("utf-8") + b"\0" + hashlib.sha256(data).digest())
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError as err:
                raise InputError(f"not UTF-8 text ({err.reason} at byte {err.start})",
                                 path=self.files[title]) from None
            if on_read:
                on_read(1)
            yield Article(title, text)
        self.sha256 = digest.hexdigest()

    def titles_under(self, subfolder: str) -> list[str]:
        """Titles of the articles in ``CORPUS/<subfolder>/`` (a topic's default articles)."""
        base = self.path / subfolder
        return sorted(t for t, f in self.files.items() if base in f.parents)
