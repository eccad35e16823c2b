"""The rating site: Flask pages that serve a study's tranches to crowd raters (sliders, binary
questions with topic context, Best-Worst tuples), the admin view, ``lexgold serve`` and
``lexgold study rehearse`` (docs/annotate.md)."""

from importlib import import_module

#: the package's Python API: each name and the module that defines it (imported on first use,
#: so importing the package costs nothing)
_API = {
    "create_app": "lexgold.annotate.app",
    "serve_study": "lexgold.annotate.server",
    "rehearse": "lexgold.annotate.rehearse",
}
__all__ = sorted(_API)


def __getattr__(name: str):
    if name in _API:
        return getattr(import_module(_API[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
