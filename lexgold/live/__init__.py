"""A live study's background work, never done in a rater's request: the admin view's figures
(computed and stored), the recruitment counts and top-ups (HyperLex section 4.4), the adaptive
allocator, and the refresher process that runs them beside ``lexgold serve``."""

from lexgold.lazy import lazy_api

#: the package's Python API: each name and the submodule that defines it (imported on first use,
#: so importing the package costs nothing)
_API = {
    "compute": "figures",
    "load": "figures",
    "recruitment": "tally",
    "top_up": "recruit",
    "allocate": "allocator",
    "refresh": "refresher",
    "watch": "refresher",
    "Supervised": "refresher",
}
__all__ = sorted(_API)

__getattr__, __dir__ = lazy_api(__name__, _API, globals())
