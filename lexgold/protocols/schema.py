"""The one checker of protocol files: typed sections with choices, bounds and cross-field checks.

Each table of a protocol file (``[build]``, ``[study]``, ``[process]``, ``[crosslingual]``) is a
dataclass owned by the module that implements its step. Its fields declare

- the type (``int``, ``float``, ``str``, ``bool``, lists, tables, nested dataclasses),
- the choices (``Literal[...]``; also as keys of a table, ``dict[Literal["N", "V"], int]``),
- the bounds (``Annotated[float, between(0, 1)]``, :func:`between`, :class:`Check`),

and a dataclass may define ``check(self)`` for rules across fields, raising :class:`Invalid`.
Every number is finite, and one without an upper bound of its own is at most
:data:`CEILING` in size, so that no value of a protocol file can overflow a date or a size
further on (docs/protocols.md, "Bounds").
Unknown keys and unknown tables are refused. Every problem is one :class:`ProtocolError` line::

    simlex999.toml: [process.exclusions] gain_fraction: allowed 0 <= x < 1, given 5
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from collections.abc import Callable

from lexgold.errors import InputError

#: the tables a protocol file may have, and the top-level keys beside them
TABLES = ("build", "study", "process", "crosslingual")
TOP_LEVEL = {"name": str, "paper": str, "language": str}


class ProtocolError(InputError):
    """A bad protocol value: ``FILE: [table] key: allowed ..., given ...`` on one line."""

    def __init__(self, source, key: str, allowed: str, given: str):
        if len(given) > MAX_SHOWN:       # a 1 MB value: one short line, not the value
            given = f"{given[:MAX_SHOWN // 2]}... ({len(given):,} characters)"
        table, _, leaf = key.rpartition(".")
        where = f"[{table}] {leaf}" if table else leaf
        super().__init__(f"{where}: allowed {allowed}, given {given}", path=source)
        self.field, self.allowed, self.given = key, allowed, given


class Invalid(Exception):
    """Raised by a section's ``check`` method: ``key`` (relative to the section), what is
    allowed, and the value given."""

    def __init__(self, key: str, allowed: str, given):
        super().__init__(key, allowed, given)
        self.key, self.allowed, self.given = key, allowed, given


@dataclasses.dataclass(frozen=True)
class Check:
    """A value rule for ``Annotated[type, Check(...)]``: ``test(value)`` must hold."""

    allowed: str
    test: Callable[[typing.Any], bool]
    #: the rule sets an upper bound (then :data:`CEILING` does not apply)
    bounded: bool = False


def between(low: float | None = None, high: float | None = None, *, low_open: bool = False,
            high_open: bool = False) -> Check:
    """A bound: ``between(0, 1)`` is 0 <= x <= 1, ``between(0, low_open=True)`` is x > 0.

    >>> between(0, 1, high_open=True).allowed
    '0 <= x < 1'
    >>> between(1).test(0)
    False
    """
    def test(value):
        if isinstance(value, float) and math.isnan(value):
            return False
        return ((low is None or (value > low if low_open else value >= low))
                and (high is None or (value < high if high_open else value <= high)))

    def number(x):
        return f"{x:,}" if isinstance(x, int) else f"{x:g}"

    left = "" if low is None else f"{number(low)} {'<' if low_open else '<='} "
    right = "" if high is None else f" {'<' if high_open else '<='} {number(high)}"
    if low is not None and high is None:
        text = f"x {'>' if low_open else '>='} {number(low)}"
    else:
        text = f"{left}x{right}"
    return Check(text, test, bounded=high is not None)


def length(low: int = 0, high: int | None = None) -> Check:
    """A bound on the length of a string or a list: ``length(1, 500)`` is 1 to 500 characters
    (items).

    >>> length(0, 500).allowed
    'a length of 0 to 500'
    >>> length(1, 2).test(["a", "b", "c"])
    False
    """
    def test(value):
        return low <= len(value) and (high is None or len(value) <= high)

    return Check(f"a length of {low:,} to {high:,}" if high is not None
                 else f"a length of at least {low:,}", test)


def one_line() -> Check:
    """A string of one line without control or invisible formatting characters
    (:func:`lexgold.tables.line_problem`: no line break, no bidi override U+202E).

    >>> one_line().test("a\u202eb")
    False
    """
    from lexgold.tables import line_problem

    return Check("one line without control or bidi formatting characters (a line break, "
                 "U+202E)", lambda value: line_problem(value) is None)


#: the longest value a protocol error shows (characters): a longer one is cut, with its length
MAX_SHOWN = 120


#: the largest size of a number of a protocol file without a tighter bound of its own
CEILING = 10 ** 9


#: common bounds
COUNT = between(0)                       # an integer >= 0
POSITIVE = between(1)                    # an integer >= 1
NON_NEGATIVE = between(0)
SHARE = between(0, 1)
T = typing.TypeVar("T")


def parse_section(schema: type[T], protocol: dict, section: str) -> T:
    """Check ``protocol[section]`` against the dataclass ``schema`` and return an instance.

    Missing keys take the dataclass default (the paper's value). An unknown key, a value of the
    wrong type, outside its choices or bounds, or failing the schema's ``check`` raises
    :class:`ProtocolError` naming the file, the table, the key, what is allowed and what was
    given.
    """
    source = protocol.get("_path", "<protocol>")
    return _build(schema, protocol.get(section, {}), source, section)


def check_instance(instance: T, source, section: str) -> T:
    """Check an instance again (after command-line overrides): as :func:`parse_section` would
    check its values written into the protocol file."""
    table = dataclasses.asdict(instance)
    return _build(type(instance), table, source, section)


def check_top_level(protocol: dict, source) -> None:
    """Refuse unknown tables and top-level keys and check ``name``, ``paper``, ``language``."""
    for key, value in protocol.items():
        if key.startswith("_"):
            continue
        if key in TABLES:
            if not isinstance(value, dict):
                raise ProtocolError(source, key, "a table", repr(value))
        elif key in TOP_LEVEL:
            if not isinstance(value, TOP_LEVEL[key]):
                raise ProtocolError(source, key, "a string", repr(value))
        else:
            table = isinstance(value, dict)
            allowed = ("tables " + " | ".join(f"[{t}]" for t in TABLES)
                       + " and keys " + " | ".join(TOP_LEVEL))
            raise ProtocolError(source, f"[{key}]" if table else key, allowed,
                                "an unknown " + ("table" if table else "key"))


def _build(schema, table, source, prefix):
    if not isinstance(table, dict):
        raise ProtocolError(source, prefix, "a table", repr(table))
    fields = {f.name: f for f in dataclasses.fields(schema)}
    for name in table:
        if name not in fields:
            raise ProtocolError(source, f"{prefix}.{name}", "keys " + " | ".join(sorted(fields)),
                                "an unknown key")
    hints = typing.get_type_hints(schema, include_extras=True)
    values = {name: _check(hints[name], value, source, f"{prefix}.{name}")
              for name, value in table.items()}
    instance = schema(**values)
    check = getattr(instance, "check", None)
    if callable(check):
        try:
            check()
        except Invalid as err:
            given = table.get(err.key, err.given)       # as written in the file (5, not 5.0)
            raise ProtocolError(source, f"{prefix}.{err.key}", err.allowed, repr(given)) from None
    return instance


def describe_type(hint) -> str:
    """What a type allows, in words (for error messages).

    >>> describe_type(typing.Literal["a", "b"])
    "'a' | 'b'"
    """
    origin = typing.get_origin(hint)
    if origin is typing.Annotated:
        base, *rules = typing.get_args(hint)
        return " and ".join([describe_type(base)]
                            + [r.allowed for r in rules if isinstance(r, Check)])
    if origin is typing.Literal:
        return " | ".join(map(repr, typing.get_args(hint)))
    if origin in (typing.Union, types.UnionType):
        return " or ".join(describe_type(a) for a in typing.get_args(hint))
    if dataclasses.is_dataclass(hint):
        return "a table"
    base = origin or hint
    names = {int: "an integer", float: "a number", str: "a string", bool: "true or false",
             list: "a list", tuple: "a list", dict: "a table", type(None): "nothing"}
    if base in (list, tuple) and typing.get_args(hint):
        return f"a list of ({describe_type(typing.get_args(hint)[0])})"
    return names.get(base, getattr(base, "__name__", str(base)))


def _container(hint) -> type | tuple:
    """The TOML container a type is written as (a dataclass or dict: a table; a list: an array)."""
    if typing.get_origin(hint) is typing.Annotated:
        hint = typing.get_args(hint)[0]
    if dataclasses.is_dataclass(hint):
        return dict
    base = typing.get_origin(hint) or hint
    return base if base in (dict, list) else ()


def _check(hint, value, source, key, bounded: bool = False):
    origin = typing.get_origin(hint)
    if origin is typing.Annotated:
        base, *rules = typing.get_args(hint)
        bounded = any(isinstance(r, Check) and r.bounded for r in rules)
        checked = _check(base, value, source, key, bounded)
        for rule in rules:
            if isinstance(rule, Check) and not rule.test(checked):
                raise ProtocolError(source, key, rule.allowed, repr(value))
        return checked
    if dataclasses.is_dataclass(hint):
        return _build(hint, value, source, key)
    if origin in (typing.Union, types.UnionType):
        errors = []
        for option in typing.get_args(hint):
            try:
                return _check(option, value, source, key)
            except ProtocolError as err:
                errors.append((option, err))
        for option, err in errors:          # a table or list of the right shape: its own error
            if isinstance(value, (dict, list)) and isinstance(value, _container(option)):
                raise err
        raise ProtocolError(source, key, describe_type(hint), repr(value))
    if hint is type(None):
        if value is None:
            return None
        raise ProtocolError(source, key, "nothing", repr(value))
    if origin is typing.Literal:
        if value in typing.get_args(hint) and type(value) is not bool:
            return value
        raise ProtocolError(source, key, describe_type(hint), repr(value))
    base = origin or hint
    if base is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value) if abs(value) < 1e308 else math.inf if value > 0 else -math.inf
    if base in (list, tuple, dict):
        if not isinstance(value, (list, tuple) if base is not dict else dict):
            raise ProtocolError(source, key, describe_type(hint), repr(value))
        args = typing.get_args(hint)
        if base is dict and args:
            keys = typing.get_origin(args[0]) is typing.Literal and typing.get_args(args[0])
            for name in value:
                if keys and name not in keys:
                    raise ProtocolError(source, f"{key}.{name}",
                                        "keys " + " | ".join(keys), "an unknown key")
            return {k: _check(args[1], v, source, f"{key}.{k}") for k, v in value.items()}
        if base is list and args:
            return [_check(args[0], v, source, f"{key}[{i}]") for i, v in enumerate(value)]
        return base(value) if base is tuple else value
    if isinstance(value, bool) != (base is bool) or not isinstance(value, base):
        raise ProtocolError(source, key, describe_type(hint), repr(value))
    if base in (int, float) and (not math.isfinite(value) or (not bounded
                                                               and abs(value) > CEILING)):
        raise ProtocolError(source, key, f"{describe_type(hint)} of size at most {CEILING:,} "
                            f"(every number of a protocol file)", repr(value))
    return value
