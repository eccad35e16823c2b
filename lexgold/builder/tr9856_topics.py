"""TR9856 topics file: topics, their articles and S_def (Levy et al. 2015, sections 3.1 and 3.3).

The paper starts from 47 Debatabase topics; for each, annotators list relevant Wikipedia
articles, and S_def is "the set of manually identified terms mentioned in the topic definition".
A topics file (TOML) records exactly that, one table per topic::

    [topics.doping]
    definition = "The use of performance enhancing drugs in professional sports should be permitted"
    s_def = ["performance enhancing drugs", "professional sports"]
    articles = ["Doping in sport", "Anabolic steroid"]

``articles`` are article titles (MediaWiki titles, or file names without ``.txt`` in a folder
corpus). In a folder corpus it may be left out: the topic then takes every ``.txt`` file in the
sub-folder named after the topic key. An article may belong to several topics.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from lexgold.builder.corpus import normalise_title
from lexgold.compression import read_input_toml
from lexgold.errors import InputError

_KEYS = {"definition", "s_def", "articles"}


@dataclasses.dataclass(frozen=True)
class Topic:
    """One topic: its key, definition text, S_def terms (as written) and article titles."""

    key: str
    definition: str
    s_def: tuple[str, ...]
    articles: tuple[str, ...]


def read_topics(path: str | Path) -> list[Topic]:
    """Read and check a topics file; topics come back in file order.

    Raises
    ------
    InputError
        Not TOML, no ``[topics.*]`` table, an unknown key, or a key of the wrong type; the
        message names the file and the key (``topics.<topic>.<key>``).
    """
    path = Path(path)
    data = read_input_toml(path, what="TOML topics file")
    unknown = sorted(set(data) - {"topics"})
    if unknown:
        raise InputError("unknown key; a topics file has only [topics.<name>] tables",
                         path=path, field=unknown[0])
    table = data.get("topics")
    if not isinstance(table, dict) or not table:
        raise InputError("no topics: add a [topics.<name>] table with s_def and articles",
                         path=path, field="topics")
    return [_topic(path, key, value) for key, value in table.items()]


def _topic(path: Path, key: str, table) -> Topic:
    where = f"topics.{key}"
    if not isinstance(table, dict):
        raise InputError(f"expected a table, found {table!r}", path=path, field=where)
    unknown = sorted(set(table) - _KEYS)
    if unknown:
        raise InputError(f"unknown key; allowed: {', '.join(sorted(_KEYS))}", path=path,
                         field=f"{where}.{unknown[0]}")
    if "s_def" not in table:
        raise InputError("missing: the terms of the topic definition (S_def)", path=path,
                         field=f"{where}.s_def")
    s_def = _strings(path, f"{where}.s_def", table["s_def"], allow_empty=False)
    articles = _strings(path, f"{where}.articles", table.get("articles", []), allow_empty=True)
    definition = table.get("definition", "")
    if not isinstance(definition, str):
        raise InputError(f"expected a string, found {definition!r}", path=path,
                         field=f"{where}.definition")
    return Topic(key, definition, tuple(s_def), tuple(normalise_title(a) for a in articles))


def _strings(path: Path, field: str, value, *, allow_empty: bool) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise InputError(f"expected a list of non-empty strings, found {value!r}", path=path,
                         field=field)
    if not value and not allow_empty:
        raise InputError("expected at least one term", path=path, field=field)
    if len(set(value)) != len(value):
        duplicate = next(v for v in value if value.count(v) > 1)
        raise InputError(f"{duplicate!r} is listed twice", path=path, field=field)
    return value
