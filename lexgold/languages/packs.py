"""Language packs: a folder per language, no code change for a new one.

A pack is a folder (shipped ones under ``lexgold/protocols/<lang>/``, or any folder the user
names) holding

- ``pack.toml``: ``language``, ``language_name``, ``protocols`` (the study files of the pack)
  and a ``[resources]`` table naming the adapters to use: ``wordnet`` (``multiwordnet:<lang>``,
  ``lmf:<file>`` or ``princeton``), optional ``[resources.association_norms]`` (a
  cue-response-count table, :func:`lexgold.languages.norms.read_association_norms`) and
  ``[resources.concreteness]`` (a word-rating table, :func:`read_concreteness`);
- one complete protocol file per study type (``hyperlex.toml``, ``simlex999.toml``, ...) whose
  ``[study]`` table carries the translated instructions, question templates, checkpoint and
  qualification items, native-speaker wording and the text direction (``rtl`` for Hebrew,
  Arabic, ...). Every lexgold command takes such a file wherever it takes ``--protocol``.

Relative paths in ``pack.toml`` are relative to the pack folder.
"""

from __future__ import annotations

import dataclasses
import re
from importlib import resources
from pathlib import Path

import pandas as pd

from lexgold.compression import read_input_text, read_input_toml
from lexgold.errors import InputError
from lexgold.protocols import parse_section

PACKAGED = resources.files("lexgold.protocols")


@dataclasses.dataclass
class AssociationSpec:
    path: str = ""
    cue: str = "cue"
    response: str = "response"
    count: str = "R1"
    total: str = "N"
    lowercase: bool = False


@dataclasses.dataclass
class ConcretenessSpec:
    path: str = ""
    word: str = "Word"
    rating: str = "Conc.M"
    scale: list[float] = dataclasses.field(default_factory=lambda: [1.0, 5.0])


@dataclasses.dataclass
class PackResources:
    wordnet: str = "princeton"
    association_norms: AssociationSpec | None = None
    concreteness: ConcretenessSpec | None = None


@dataclasses.dataclass
class Pack:
    """A loaded language pack (see the module docstring)."""

    path: Path
    language: str
    language_name: str
    protocols: dict[str, Path]
    resources: PackResources

    def protocol(self, name: str) -> Path:
        """The pack's protocol file for ``name`` (``hyperlex``, ``simlex999``/``simlex``, ...)."""
        key = {"simlex": "simlex999"}.get(name, name)
        if key not in self.protocols:
            raise InputError(f"pack {self.language!r} has no {name} protocol; it has: "
                             + ", ".join(self.protocols), path=self.path / "pack.toml",
                             field="protocols")
        return self.protocols[key]

    def wordnet(self):
        """The NLTK-like reader named by ``[resources] wordnet``."""
        from lexgold.resources.wordnets import load_wordnet_adapter
        spec = self.resources.wordnet
        if spec.startswith("lmf:"):
            spec = "lmf:" + str(self._resolve(spec[4:], "resources.wordnet"))
        return load_wordnet_adapter(spec)

    def association_norms(self) -> pd.DataFrame:
        """The pack's association norms (USF-style strengths)."""
        from lexgold.languages.norms import read_association_norms
        spec = self.resources.association_norms
        if spec is None:
            raise InputError("the pack names no association norms", path=self.path / "pack.toml",
                             field="resources.association_norms")
        return read_association_norms(self._resolve(spec.path, "resources.association_norms.path"),
                                      cue=spec.cue, response=spec.response, count=spec.count,
                                      total=spec.total or None, lowercase=spec.lowercase)

    def concreteness(self) -> pd.DataFrame | None:
        """The pack's concreteness norms (``word, conc_m``), or None when it names none."""
        from lexgold.languages.norms import read_concreteness
        spec = self.resources.concreteness
        if spec is None:
            return None
        return read_concreteness(self._resolve(spec.path, "resources.concreteness.path"),
                                 word=spec.word, rating=spec.rating, scale=tuple(spec.scale))

    def _resolve(self, value: str, field: str) -> Path:
        path = Path(value)
        path = path if path.is_absolute() else self.path / path
        if not path.is_file():
            raise InputError("file named by the pack not found", path=path, field=field)
        return path


def pack_dir(name_or_path: str | Path) -> Path:
    """A shipped pack by language code (``it``, ``he``) or any folder holding ``pack.toml``."""
    path = Path(name_or_path)
    if (path / "pack.toml").is_file():
        return path
    shipped = Path(str(PACKAGED / str(name_or_path)))
    if (shipped / "pack.toml").is_file():
        return shipped
    names = sorted(p.name for p in Path(str(PACKAGED)).iterdir() if (p / "pack.toml").is_file())
    raise InputError(f"no language pack here (a folder with pack.toml); shipped packs: "
                     f"{', '.join(names)}", path=path)


def load_pack(name_or_path: str | Path) -> Pack:
    """Read and check a pack's ``pack.toml``; protocol files must exist."""
    folder = pack_dir(name_or_path)
    source = folder / "pack.toml"
    data = read_input_toml(source)
    unknown = sorted(set(data) - {"language", "language_name", "protocols", "resources"})
    if unknown:
        raise InputError("unknown key; allowed: language, language_name, protocols, resources",
                         path=source, field=unknown[0])
    language = data.get("language")
    if not isinstance(language, str) or not language:
        raise InputError("a pack needs a language code", path=source, field="language")
    listed = data.get("protocols", [])
    if not isinstance(listed, list) or not all(isinstance(p, str) for p in listed):
        raise InputError(f"expected a list of file names, found {listed!r}", path=source,
                         field="protocols")
    protocols = {}
    for name in listed:
        path = folder / name
        if not path.is_file():
            raise InputError("protocol file listed in the pack not found", path=path,
                             field="protocols")
        protocols[Path(name).stem] = path
    found = parse_section(PackResources, {"_path": str(source), **data}, "resources")
    return Pack(folder, language, str(data.get("language_name", language)), protocols, found)


def shipped_packs() -> list[str]:
    """Language codes of the packs shipped with lexgold."""
    return sorted(p.name for p in Path(str(PACKAGED)).iterdir() if (p / "pack.toml").is_file())


#: what a pack protocol file may set differently from the English protocol it translates
TOP_LEVEL_KEYS = ("name", "language")
BUILD_KEYS = ("word_pattern", "offensive_lists")


def _study_block(text: str, source) -> str:
    if "\n[study]\n" not in text or "\n[process]\n" not in text:
        raise InputError("a protocol file needs a [study] table followed by [process]",
                         path=source, field="study")
    return "[study]\n" + text.split("\n[study]\n", 1)[1].split("\n[process]\n", 1)[0]


def rebase_protocol(pack_file: str | Path, base_file: str | Path) -> str:
    """The text of ``pack_file`` rebuilt on the current English protocol ``base_file``.

    Everything comes from ``base_file`` except what a pack translates or adapts: the header
    comment lines before the base's first line, the top-level ``name`` and ``language``, the
    ``[build]`` keys ``word_pattern`` and ``offensive_lists``, and the whole ``[study]`` table.
    Use it when lexgold's English protocols change (``lexgold pack rebase``).
    """
    pack_text = read_input_text(pack_file, encoding="utf-8")
    base_text = read_input_text(base_file, encoding="utf-8")
    head = base_text.split("\n[study]\n", 1)[0]
    tail = "\n[process]\n" + base_text.split("\n[process]\n", 1)[1]
    first_base_line = base_text.splitlines()[0]
    header = pack_text.split(first_base_line, 1)[0] if first_base_line in pack_text else ""
    for key in TOP_LEVEL_KEYS + BUILD_KEYS:
        pattern = re.compile(rf"^{re.escape(key)} = .*$", re.M)
        mine = pattern.search(pack_text.split("\n[study]\n", 1)[0])
        if mine and pattern.search(head):
            head = pattern.sub(lambda _: mine.group(0), head, count=1)
    return header + head + "\n" + _study_block(pack_text, pack_file) + tail


def english_base(pack_protocol: Path) -> Path:
    """The shipped English protocol a pack's protocol file translates (by file name)."""
    from lexgold.protocols import protocol_path
    return protocol_path(pack_protocol.name)


def pack_record(protocol_path: str | Path) -> dict | None:
    """What a study stores of the pack its protocol file belongs to (a ``pack.toml`` beside the
    file): ``language``, ``folder`` (absolute), ``packaged`` (the shipped pack's name, else
    ``""``) and ``protocol_file``; ``None`` for a protocol outside any pack."""
    path = Path(protocol_path)
    if not (path.parent / "pack.toml").is_file():
        return None
    pack = load_pack(path.parent)
    folder = pack.path.resolve()
    packaged = Path(str(PACKAGED)).resolve()
    return {"language": pack.language, "folder": str(folder),
            "packaged": folder.name if folder.parent == packaged else "",
            "protocol_file": path.name}


def pack_folder(record: dict | None) -> Path | None:
    """The folder of a stored pack (:func:`pack_record`) on this machine, or None when it is not
    there (a shipped pack is found in this installation of lexgold)."""
    if not record:
        return None
    folder = (Path(str(PACKAGED)) / record["packaged"] if record.get("packaged")
              else Path(record.get("folder", "")))
    return folder if (folder / "pack.toml").is_file() else None
