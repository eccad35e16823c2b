"""WordNet 3.0 through NLTK's reader, found without a network.

Order of search:

1. ``directory`` argument (the CLI's ``--wordnet DIR``), else the ``LEXGOLD_WORDNET``
   environment variable. Either an NLTK data root (holding ``corpora/wordnet``) or a WordNet
   ``dict`` folder (holding ``data.noun``), such as Debian's ``wordnet-base``.
2. NLTK's own data path (``nltk.data.path``), when WordNet was installed there.
3. Well-known WordNet dict folders (``/usr/share/wordnet`` from Debian's ``wordnet-base``, ...).

A dict folder is turned into NLTK's layout ``<root>/corpora/wordnet/`` under lexgold's cache
(``LEXGOLD_CACHE`` or ``~/.cache/lexgold``), adding the ``lexnames`` file NLTK needs. Files are
copied, not linked: current NLTK refuses roots outside ``nltk.data.path`` and links that point
outside the root.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import sys
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

from lexgold.errors import WordNetNotFound  # noqa: F401  (its old home; still importable here)

if TYPE_CHECKING:
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

ENV_VAR = "LEXGOLD_WORDNET"
KNOWN_DICT_DIRS = ("/usr/share/wordnet", "/usr/share/wordnet/dict", "/usr/local/WordNet-3.0/dict",
                   "/usr/local/share/wordnet", "/opt/homebrew/share/wordnet")
_DICT_FILES = ("data.noun", "data.verb", "data.adj", "data.adv", "index.noun", "index.verb",
               "index.adj", "index.adv", "noun.exc", "verb.exc", "adj.exc", "adv.exc")
_OPTIONAL_FILES = ("cntlist.rev", "index.sense", "lexnames", "LICENSE")

#: The lexicographer files of WordNet 3.0, as in its ``lexnames`` file (see lexnames(5WN)):
#: number, name, syntactic category (1 noun, 2 verb, 3 adjective, 4 adverb).
LEXNAMES = (
    ["adj.all", "adj.pert", "adv.all", "noun.Tops"]
    + ["noun." + n for n in (
        "act animal artifact attribute body cognition communication event feeling food group "
        "location motive object person phenomenon plant possession process quantity relation "
        "shape state substance time").split()]
    + ["verb." + n for n in (
        "body change cognition communication competition consumption contact creation emotion "
        "motion perception possession social stative weather").split()]
    + ["adj.ppl"]
)
_CATEGORY = {"noun": 1, "verb": 2, "adj": 3, "adv": 4}


def lexnames_text() -> str:
    return "".join(f"{i:02d}\t{name}\t{_CATEGORY[name.split('.')[0]]}\n"
                   for i, name in enumerate(LEXNAMES))


def cache_dir() -> Path:
    return Path(os.environ.get("LEXGOLD_CACHE") or Path.home() / ".cache" / "lexgold")


def _is_dict_dir(path: Path) -> bool:
    return all((path / name).is_file() for name in _DICT_FILES)


def nltk_layout(dict_dir: str | Path, root: str | Path | None = None) -> Path:
    """Copy a WordNet dict folder into ``<root>/corpora/wordnet`` and return ``root``.

    ``root`` defaults to a folder under the cache named by a hash of ``dict_dir``. A complete
    earlier copy of the same files is reused.
    """
    dict_dir = Path(dict_dir).resolve()
    if root is None:
        key = hashlib.sha256(str(dict_dir).encode()).hexdigest()[:12]
        root = cache_dir() / f"nltk_data-{key}"
    root = Path(root)
    target = root / "corpora" / "wordnet"
    target.mkdir(parents=True, exist_ok=True)
    for name in _DICT_FILES + _OPTIONAL_FILES:
        source = dict_dir / name
        if not source.is_file():
            continue
        copy = target / name
        if not copy.is_file() or copy.stat().st_size != source.stat().st_size:
            shutil.copyfile(source, copy.with_suffix(copy.suffix + ".part"))
            os.replace(copy.with_suffix(copy.suffix + ".part"), copy)
    if not (target / "lexnames").is_file():
        (target / "lexnames").write_text(lexnames_text(), encoding="utf-8")
    return root


@functools.lru_cache(maxsize=1)
def _reader_class():
    """NLTK's reader, minus the start-up mapping to the "wordnet" corpus (NLTK is imported
    here, on first use: importing it takes a second or two).

    NLTK maps the loaded WordNet to the version of a corpus named ``wordnet`` for the Open
    Multilingual WordNet, which needs ``index.sense`` (not shipped by ``wordnet-base``; it is in
    Debian's ``wordnet-sense-index``). lexgold reads WordNet 3.0 itself, so no mapping is needed.
    """
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    class WordNet30Reader(WordNetCorpusReader):
        __doc__ = _reader_class.__doc__

        def map_wn(self, version="wordnet"):
            return None

    return WordNet30Reader


def __getattr__(name):
    if name == "WordNet30Reader":
        return _reader_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _nltk_data_path() -> list[str]:
    """``nltk.data.path`` without importing NLTK when it is not imported yet: NLTK's defaults
    (``$NLTK_DATA``, ``~/nltk_data``, under ``sys.prefix``, then ``/usr/...``), as NLTK 3.8-3.10
    build them on POSIX systems; elsewhere NLTK itself is asked."""
    if "nltk" in sys.modules or os.name == "nt":
        import nltk
        return list(nltk.data.path)
    path = [os.path.expanduser(d) for d in os.environ.get("NLTK_DATA", "").split(os.pathsep) if d]
    if "APPENGINE_RUNTIME" not in os.environ and os.path.expanduser("~/") != "~/":
        path.append(os.path.expanduser("~/nltk_data"))
    path += [os.path.join(sys.prefix, "nltk_data"), os.path.join(sys.prefix, "share", "nltk_data"),
             os.path.join(sys.prefix, "lib", "nltk_data"), "/usr/share/nltk_data",
             "/usr/local/share/nltk_data", "/usr/lib/nltk_data", "/usr/local/lib/nltk_data"]
    return path


def _nltk_wordnet_root() -> Path | None:
    """The NLTK data root holding ``corpora/wordnet`` that ``nltk.data.find`` would return, or
    None. A zipped WordNet (``corpora/wordnet.zip``) is left to NLTK itself."""
    for entry in _nltk_data_path():
        if (Path(entry) / "corpora" / "wordnet").is_dir():
            return Path(entry)
        if (Path(entry) / "corpora" / "wordnet.zip").is_file():
            import nltk
            try:
                found = nltk.data.find("corpora/wordnet")
            except LookupError:
                return None
            return Path(str(found)).parent.parent
    return None


def _reader_from_root(root: Path) -> WordNetCorpusReader:
    import nltk
    if str(root) not in nltk.data.path:
        nltk.data.path.append(str(root))
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "The multilingual functions", UserWarning)
        return _reader_class()(nltk.data.find("corpora/wordnet", paths=[str(root)]), None)


def locate_wordnet(directory: str | Path | None = None) -> tuple[str, Path]:
    """Where WordNet will be loaded from: ``(kind, path)`` with kind ``nltk`` or ``dict``."""
    explicit = directory or os.environ.get(ENV_VAR)
    if explicit:
        path = Path(explicit)
        if (path / "corpora" / "wordnet").is_dir():
            return "nltk", path
        if (path / "wordnet").is_dir() and _is_dict_dir(path / "wordnet"):
            return "dict", path / "wordnet"
        if _is_dict_dir(path):
            return "dict", path
        raise WordNetNotFound(f"{path}: neither a WordNet dict folder (data.noun, index.noun, ...) "
                              "nor an NLTK data root (corpora/wordnet)")
    root = _nltk_wordnet_root()
    if root is not None:
        return "nltk", root
    for candidate in KNOWN_DICT_DIRS:
        if _is_dict_dir(Path(candidate)):
            return "dict", Path(candidate)
    raise WordNetNotFound(
        "WordNet 3.0 not found: looked in --wordnet/$" + ENV_VAR + ", nltk.data.path and "
        + ", ".join(KNOWN_DICT_DIRS) + ". Install it with `apt-get install wordnet-base` "
        "or pass --wordnet DIR.")


def wordnet_file(name: str, directory: str | Path | None = None) -> Path:
    """The path of one file of the WordNet that :func:`load_wordnet` would load (``cntlist.rev``)."""
    kind, where = locate_wordnet(directory)
    return (Path(where) / "corpora" / "wordnet" if kind == "nltk" else Path(where)) / name


@functools.lru_cache(maxsize=4)
def _load(kind: str, path: str) -> WordNetCorpusReader:
    root = Path(path) if kind == "nltk" else nltk_layout(path)
    return _reader_from_root(root)


def load_wordnet(directory: str | Path | None = None) -> WordNetCorpusReader:
    """Return NLTK's WordNet reader over WordNet 3.0 (cached per location).

    Parameters
    ----------
    directory : path, optional
        A WordNet dict folder or an NLTK data root; default: search as in the module docstring.
    """
    kind, path = locate_wordnet(directory)
    reader = _load(kind, str(Path(path).resolve()))
    if not reader.get_version().startswith("3.0"):
        raise WordNetNotFound(f"{path}: WordNet {reader.get_version()} found, lexgold needs 3.0")
    return reader
