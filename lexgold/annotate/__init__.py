"""The rating site: Flask pages that serve a study's tranches to crowd raters (sliders, binary
questions with topic context, Best-Worst tuples), the admin view, ``lexgold serve`` and
``lexgold study rehearse`` (docs/annotate.md)."""

from lexgold.lazy import lazy_api

#: the package's Python API: each name and the submodule that defines it (imported on first use,
#: so importing the package costs nothing)
_API = {
    "create_app": "app",
    "serve_study": "server",
    "rehearse": "rehearse",
}
__all__ = sorted(_API)

__getattr__, __dir__ = lazy_api(__name__, _API, globals())
