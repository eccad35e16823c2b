"""Protocol files: one declarative TOML file per published protocol.

A protocol file has a few top-level keys (``name``, ``paper``, ``language``) and one table per
protocol step, each owned and checked by the module that implements that step:

- ``[build]``   candidate pools and sampling (``lexgold.builder``, docs/builders.md)
- ``[study]``   questionnaire layout and wording (``lexgold.annotate``, docs/annotate.md)
- ``[process]`` calibration, exclusions, agreement, release (``lexgold.process``, docs/process.md)

Every key defaults to the paper's value; a new study or language is a new file that changes keys.
Keys carry their units in their names (``claim_timeout_s``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import tomllib
import types
import typing
from importlib import resources
from pathlib import Path

from lexgold.errors import InputError

PACKAGED = resources.files("lexgold.protocols")
#: short names accepted wherever a protocol file is expected
NAMES = {"simlex": "simlex999.toml", "simlex999": "simlex999.toml",
         "hyperlex": "hyperlex.toml", "tr9856": "tr9856.toml", "plain": "plain.toml"}


def protocol_path(name_or_path: str | Path) -> Path:
    """A packaged protocol by short name (``simlex``, ``hyperlex``, ``tr9856``, ``plain``), a
    shipped language pack's protocol as ``<language>/<name>`` (``it/simlex``, ``he/simlex999``)
    when no such file exists, or a file path."""
    key = str(name_or_path)
    if key in NAMES:
        return Path(str(PACKAGED / NAMES[key]))
    path = Path(name_or_path)
    if not path.is_file():
        packaged = Path(str(PACKAGED / path.name))
        if path.parent == Path(".") and packaged.is_file():
            return packaged
        if len(path.parts) == 2:
            name = NAMES.get(path.parts[1], path.parts[1])
            shipped = Path(str(PACKAGED / path.parts[0] / name))
            if (shipped.parent / "pack.toml").is_file() and shipped.suffix == ".toml" \
                    and shipped.is_file():
                return shipped
        raise InputError("protocol file not found (or use simlex, hyperlex, tr9856, plain, "
                         "or a shipped pack's <language>/<name>: it/hyperlex, he/simlex)",
                         path=path)
    return path


def load_protocol(name_or_path: str | Path) -> dict:
    """Read a protocol file into a dict; adds ``_path`` and ``_sha256`` (for run manifests)."""
    path = protocol_path(name_or_path)
    data = path.read_bytes()
    try:
        protocol = tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        raise InputError(f"not a valid TOML protocol file: {err}", path=path) from None
    protocol["_path"] = str(path)
    protocol["_sha256"] = hashlib.sha256(data).hexdigest()
    return protocol


T = typing.TypeVar("T")


def parse_section(schema: type[T], protocol: dict, section: str) -> T:
    """Check ``protocol[section]`` against the dataclass ``schema`` and return an instance.

    Missing keys take the dataclass default (the paper's value). An unknown key or a value of
    the wrong type raises :class:`InputError` naming the file, the key, what is allowed and what
    was found. Nested tables map to nested dataclasses; lists and dicts are checked shallowly.
    """
    source = protocol.get("_path", "<protocol>")
    return _build(schema, protocol.get(section, {}), source, section)


def _build(schema, table, source, prefix):
    if not isinstance(table, dict):
        raise InputError(f"expected a table, found {table!r}", path=source, field=prefix)
    fields = {f.name: f for f in dataclasses.fields(schema)}
    unknown = sorted(set(table) - set(fields))
    if unknown:
        raise InputError(f"unknown key; allowed: {', '.join(sorted(fields))}", path=source,
                         field=f"{prefix}.{unknown[0]}")
    hints = typing.get_type_hints(schema)
    values = {}
    for name, value in table.items():
        values[name] = _check(hints[name], value, source, f"{prefix}.{name}")
    return schema(**values)


def _check(hint, value, source, key):
    origin = typing.get_origin(hint)
    if dataclasses.is_dataclass(hint):
        return _build(hint, value, source, key)
    if origin in (typing.Union, types.UnionType):
        for option in typing.get_args(hint):
            try:
                return _check(option, value, source, key)
            except InputError:
                continue
        raise InputError(f"expected {hint}, found {value!r}", path=source, field=key)
    if hint is type(None):
        if value is None:
            return None
        raise InputError(f"expected nothing, found {value!r}", path=source, field=key)
    if origin is typing.Literal:
        if value in typing.get_args(hint):
            return value
        raise InputError(f"expected one of {', '.join(map(repr, typing.get_args(hint)))}, "
                         f"found {value!r}", path=source, field=key)
    base = origin or hint
    if base is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if base in (list, tuple, dict):
        if not isinstance(value, (list, tuple) if base is not dict else dict):
            raise InputError(f"expected a {base.__name__}, found {value!r}", path=source, field=key)
        args = typing.get_args(hint)
        if base is dict and args and dataclasses.is_dataclass(args[1]):
            return {k: _build(args[1], v, source, f"{key}.{k}") for k, v in value.items()}
        if base is dict and args:
            return {k: _check(args[1], v, source, f"{key}.{k}") for k, v in value.items()}
        if base is list and args:
            return [_check(args[0], v, source, f"{key}[{i}]") for i, v in enumerate(value)]
        return base(value) if base is tuple else value
    if isinstance(value, bool) != (base is bool) or not isinstance(value, base):
        raise InputError(f"expected {getattr(base, '__name__', base)}, found {value!r}",
                         path=source, field=key)
    return value
