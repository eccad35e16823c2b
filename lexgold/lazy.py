"""A package's Python API loaded on first use (PEP 562, module ``__getattr__`` and ``__dir__``).

Each package of lexgold names its API in a dict ``_API`` (name -> the submodule that defines it)
and hands it to :func:`lazy_api`, so that importing the package, as the command line does to
register its commands, loads none of pandas, numpy, SciPy, SQLAlchemy or Flask::

    _API = {"process_ratings": "pipeline", "calibrate": "calibration"}
    __all__ = sorted(_API)
    __getattr__, __dir__ = lazy_api(__name__, _API, globals())
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module


def lazy_api(package: str, api: dict[str, str], namespace: dict) -> tuple[
        Callable[[str], object], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of the package ``package`` whose globals are
    ``namespace``: a name of ``api`` is imported from ``f"{package}.{api[name]}"`` when first
    asked for and kept in ``namespace``, so later look-ups do not reach ``__getattr__``; any
    other name raises :class:`AttributeError`. ``__dir__`` lists the globals and ``__all__``."""

    def __getattr__(name: str):
        if name not in api:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(f"{package}.{api[name]}"), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(namespace.get("__all__", api)))

    return __getattr__, __dir__
