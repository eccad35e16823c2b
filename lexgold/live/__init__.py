"""A live study's background work, never done in a rater's request: the admin view's figures
(computed and stored), the recruitment counts and top-ups (HyperLex section 4.4), the adaptive
allocator, and the refresher process that runs them beside ``lexgold serve``."""

from importlib import import_module

#: the package's Python API: each name and the module that defines it (imported on first use,
#: so importing the package costs nothing)
_API = {
    "compute": "lexgold.live.figures",
    "load": "lexgold.live.figures",
    "recruitment": "lexgold.live.tally",
    "top_up": "lexgold.live.recruit",
    "allocate": "lexgold.live.allocator",
    "refresh": "lexgold.live.refresher",
    "watch": "lexgold.live.refresher",
    "Supervised": "lexgold.live.refresher",
}
__all__ = sorted(_API)


def __getattr__(name: str):
    if name in _API:
        return getattr(import_module(_API[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
