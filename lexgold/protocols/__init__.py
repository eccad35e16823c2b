"""Protocol files: one declarative TOML file per published protocol.

A protocol file has a few top-level keys (``name``, ``paper``, ``language``) and one table per
protocol step, each owned and checked by the module that implements that step:

- ``[build]``   candidate pools and sampling (``lexgold.builder``, docs/builders.md)
- ``[study]``   questionnaire layout and wording (``lexgold.annotate``, docs/annotate.md)
- ``[process]`` calibration, exclusions, agreement, release (``lexgold.process``, docs/process.md)

Every key defaults to the paper's value; a new study or language is a new file that changes keys.
Keys carry their units in their names (``claim_timeout_s``). Tables are checked by one path,
:mod:`lexgold.protocols.schema`; docs/protocols.md lists every key with its range.
"""

from __future__ import annotations

import difflib
import hashlib
from importlib import resources
from pathlib import Path

from lexgold.compression import parse_toml, read_input_bytes
from lexgold.errors import InputError
from lexgold.protocols.schema import (
    Check,
    Invalid,
    ProtocolError,
    between,
    check_instance,
    check_top_level,
    length,
    parse_section,
)
from lexgold.protocols.release import ReleaseConfig, release_config

__all__ = [
    "NAMES",
    "Check",
    "Invalid",
    "ProtocolError",
    "ReleaseConfig",
    "between",
    "check_instance",
    "length",
    "load_protocol",
    "parse_section",
    "protocol_path",
    "release_config",
]

PACKAGED = resources.files("lexgold.protocols")
#: short names accepted wherever a protocol file is expected
NAMES = {"simlex": "simlex999.toml", "simlex999": "simlex999.toml",
         "hyperlex": "hyperlex.toml", "tr9856": "tr9856.toml", "plain": "plain.toml",
         "simlex_bws": "simlex999_bws.toml", "simlex999_bws": "simlex999_bws.toml"}


def short_names() -> list[str]:
    """The short names of :data:`NAMES`, one per packaged file (the first that names it):
    ``simlex``, ``hyperlex``, ``tr9856``, ``plain``, ``simlex_bws``."""
    return list({file: name for name, file in reversed(NAMES.items())}.values())[::-1]


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
        near = [name for name in NAMES if key.lower() in name] \
            or difflib.get_close_matches(key.lower(), NAMES, n=2)
        hint = f"did you mean {' or '.join(near)}? " if near else ""
        raise InputError(f"protocol file not found ({hint}short names: "
                         f"{', '.join(short_names())}; or a shipped pack's <language>/<name>: "
                         "it/hyperlex, he/simlex)", path=path)
    return path


def load_protocol(name_or_path: str | Path) -> dict:
    """Read a protocol file into a dict; adds ``_path`` and ``_sha256`` (for run manifests).

    Unknown tables and top-level keys are refused here (:func:`check_top_level`); each table is
    checked by the step that reads it (:func:`parse_section` with its schema)."""
    path = protocol_path(name_or_path)
    data = read_input_bytes(path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise InputError(f"not a valid TOML protocol file: {err}", path=path) from None
    protocol = parse_toml(text, path, what="TOML protocol file")
    check_top_level(protocol, path)
    protocol["_path"] = str(path)
    protocol["_sha256"] = hashlib.sha256(data).hexdigest()
    return protocol
