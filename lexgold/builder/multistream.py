"""Wikipedia multistream dumps: the topic articles fetched by seeking, not by reading the dump.

TR9856 (Levy et al. 2015, section 3.1) takes a few hundred articles per topic out of Wikipedia.
A full English dump is about 20 GB compressed; decompressing all of it to find them takes hours.
Wikipedia also publishes every dump as ``*-pages-articles-multistream.xml.bz2``: the same XML cut
into independent bz2 streams of 100 pages each, with an index
``*-pages-articles-multistream-index.txt.bz2`` of one line per page,
``<byte offset of its stream>:<page id>:<title>``. :class:`MultistreamDump` reads the index
(tens of MB), then seeks to the streams that hold the wanted titles and decompresses only those.

The XML inside a stream is a run of ``<page>`` elements without the ``<mediawiki>`` root, so each
stream is parsed inside a root of its own; pages are turned into articles exactly as
:class:`~lexgold.builder.corpus.WikiDump` does (same redirects, same markup stripping), so both
readers give the same articles for the same titles.

The checksum in the run's manifest covers what was read: the index file and the compressed
bytes of every stream used, in file order.
"""

from __future__ import annotations

import bz2
import hashlib
import io
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from lexgold.builder.corpus import Article, TextFolder, WikiDump, normalise_title
from lexgold.errors import InputError

#: what Wikipedia calls the two files
DUMP_SUFFIX = "multistream.xml.bz2"
INDEX_SUFFIX = "multistream-index.txt.bz2"


def index_path_for(dump: str | Path) -> Path:
    """The index file Wikipedia publishes beside a multistream dump."""
    dump = Path(dump)
    return dump.with_name(dump.name[: -len(DUMP_SUFFIX)] + INDEX_SUFFIX)


def is_multistream(path: str | Path) -> bool:
    """A ``*multistream.xml.bz2`` file with its index beside it."""
    path = Path(path)
    return path.name.endswith(DUMP_SUFFIX) and index_path_for(path).is_file()


class MultistreamDump(WikiDump):
    """A multistream dump and its index; see the module docstring.

    Attributes
    ----------
    index : Path
        The index file (default: Wikipedia's name for it, beside the dump).
    streams_read : int
        Streams decompressed by the last :meth:`articles`; ``streams`` is how many there are.
    """

    unit = "stream"

    def __init__(self, path: str | Path, skip_sections: Iterable[str] = (),
                 index: str | Path | None = None, reference_like: bool = False):
        super().__init__(path, skip_sections, reference_like)
        self.index = Path(index) if index is not None else index_path_for(path)
        if not self.index.is_file():
            raise InputError("multistream index not found (Wikipedia publishes it beside the "
                             f"dump as *-{INDEX_SUFFIX})", path=self.index)
        self.size = None
        self.streams = 0
        self.streams_read = 0

    def offsets(self, wanted: set[str], digest=None) -> list[int]:
        """Sorted offsets of the streams holding a wanted (normalised) title."""
        found, every = set(), set()
        try:
            with bz2.open(self.index, "rb") as lines:
                for number, line in enumerate(lines, 1):
                    if digest is not None:
                        digest.update(line)
                    offset, _, rest = line.partition(b":")
                    page_id, _, title = rest.partition(b":")
                    if not offset.isdigit() or not page_id.isdigit():
                        raise InputError("expected offset:page id:title",
                                         path=self.index, line=number)
                    every.add(int(offset))
                    if normalise_title(title.decode("utf-8").rstrip("\r\n")) in wanted:
                        found.add(int(offset))
        except (OSError, EOFError, UnicodeDecodeError) as err:
            raise InputError(f"not a readable multistream index: {err}", path=self.index) from None
        self.streams = len(every)
        return sorted(found)

    def articles(self, wanted: set[str], on_read: Callable[[int], None] | None = None
                 ) -> Iterator[Article]:
        """Yield the wanted main-namespace articles, in dump order; ``on_read`` gets 1 a stream."""
        digest = hashlib.sha256()
        offsets = self.offsets(wanted, digest)
        self.streams_read = 0
        with open(self.path, "rb") as raw:
            for offset in offsets:
                xml = self._stream(raw, offset, digest)
                try:
                    yield from self._pages(io.BytesIO(b"<pages>" + xml + b"</pages>"), wanted)
                except ET.ParseError as err:
                    raise InputError(f"stream at byte {offset} is not MediaWiki pages: {err}",
                                     path=self.path) from None
                self.streams_read += 1
                if on_read:
                    on_read(1)
        self.sha256 = digest.hexdigest()

    def _stream(self, raw, offset: int, digest) -> bytes:
        """The decompressed bytes of the bz2 stream starting at ``offset``."""
        raw.seek(offset)
        decompressor, parts = bz2.BZ2Decompressor(), []
        try:
            while not decompressor.eof:
                block = raw.read(1 << 18)
                if not block:
                    raise EOFError("the file ends inside a stream")
                parts.append(decompressor.decompress(block))
                used = len(block) - len(decompressor.unused_data)
                digest.update(block[:used])
        except (OSError, EOFError) as err:
            raise InputError(f"no bz2 stream at byte {offset} (is the index for this dump?): "
                             f"{err}", path=self.path) from None
        return b"".join(parts)


def write_multistream(dump: str | Path, out: str | Path, pages_per_stream: int = 100
                      ) -> tuple[Path, Path]:
    """Cut a MediaWiki XML dump (``.xml`` or ``.xml.bz2``) into Wikipedia's multistream layout.

    Writes ``out`` (must end in ``multistream.xml.bz2``) and its index beside it, as Wikipedia
    does: the header (``<mediawiki>``, ``<siteinfo>``) in a stream of its own, then
    ``pages_per_stream`` pages a stream, then the closing tag. Returns both paths. Useful to make
    a small dump seekable, and to test :class:`MultistreamDump` on real pages.
    """
    dump, out = Path(dump), Path(out)
    if not out.name.endswith(DUMP_SUFFIX):
        raise InputError(f"a multistream dump's name ends in {DUMP_SUFFIX}", path=out)
    data = bz2.decompress(dump.read_bytes()) if dump.suffix == ".bz2" else dump.read_bytes()
    pages = [m.span() for m in re.finditer(rb"[ \t]*<page>.*?</page>\s*", data, re.S)]
    if not pages:
        raise InputError("no <page> elements", path=dump)
    header, footer = data[: pages[0][0]], data[pages[-1][1]:]
    index_lines = []
    with open(out, "wb") as target:
        target.write(bz2.compress(header))
        for start in range(0, len(pages), pages_per_stream):
            group = pages[start:start + pages_per_stream]
            offset = target.tell()
            chunk = data[group[0][0]: group[-1][1]]
            for begin, end in group:
                page = data[begin:end]
                page_id = re.search(rb"<id>(\d+)</id>", page).group(1)
                title = re.search(rb"<title>(.*?)</title>", page, re.S).group(1)
                title = (title.replace(b"&quot;", b'"').replace(b"&lt;", b"<")
                         .replace(b"&gt;", b">").replace(b"&amp;", b"&"))
                index_lines.append(b"%d:%s:%s\n" % (offset, page_id, title))
            target.write(bz2.compress(chunk))
        target.write(bz2.compress(footer))
    index = index_path_for(out)
    index.write_bytes(bz2.compress(b"".join(index_lines)))
    return out, index


def open_corpus(path: str | Path, skip_sections: Iterable[str] = (),
                reference_like: bool = False) -> WikiDump | TextFolder:
    """A :class:`TextFolder` for a folder; a
    :class:`MultistreamDump` for a ``*multistream.xml.bz2`` file
    with its index beside it; else a :class:`WikiDump` (``skip_sections``, ``reference_like``:
    see :func:`strip_wiki`; a text folder is read as it is)."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(2, "No such file or directory", str(path))
    if path.is_dir():
        return TextFolder(path)
    if is_multistream(path):
        return MultistreamDump(path, skip_sections, reference_like=reference_like)
    return WikiDump(path, skip_sections, reference_like)
