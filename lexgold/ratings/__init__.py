"""Ratings in lexgold's long format, and raw ratings as their authors distributed them turned
into it.

:mod:`lexgold.ratings.long` reads and checks the long format (``docs/contract.md``): the one
reader of every command that takes ratings. :mod:`lexgold.ratings.layouts` reads one file of a
published layout (WordSim-353's one column per rater, MEN's one file per rater, SimVerb-3500's
ratings without rater identity, HyperLex's release (its trailing ratings, without rater
identity), lexgold's long CSV, Potato-style JSON lines) into long-format rows
(``docs/process.md``, "Importing published ratings"), :mod:`lexgold.ratings.detect` recognises
which layout a file is in, and :mod:`lexgold.ratings.cli` is ``lexgold ratings import``.

The whole package sits below :mod:`lexgold.process` and :mod:`lexgold.crowd`, which read
ratings through it, and imports neither (README, "Layers").
"""

from lexgold.lazy import lazy_api

#: the columns that name a pair in long-format ratings (``docs/contract.md``)
ITEM = ["word1", "word2"]
#: first character of the rater id of a rating without rater identity
ANONYMOUS = "?"
#: the ``platform`` of a simulated rater (``lexgold study rehearse``) and the value of the long
#: format's optional ``platform`` column on a simulated rating (``lexgold simulate``): no
#: person gave it (``docs/contract.md``; the rule: :mod:`lexgold.simulated`)
SIMULATED = "simulated"

#: the layouts ``lexgold ratings import --layout`` reads (here, not in :mod:`.layouts`, so that the
#: command line offers them without importing pandas)
LAYOUTS = ("wide", "per-rater", "anonymous", "hyperlex", "long", "potato")

#: the package's Python API: each name and the submodule that defines it (imported on first use,
#: so importing the package costs nothing)
_API = {
    "read_ratings": "long",
    "check_ratings": "long",
    "import_ratings": "importer",
    "detect_layout": "detect",
    "read_layout": "layouts",
    "Imported": "lines",
    "read_hyperlex": "released",
    "overlap_warnings": "overlap",
    "map_words": "overlap",
}
__all__ = sorted(["ITEM", "ANONYMOUS", "SIMULATED", "LAYOUTS", *_API])

__getattr__, __dir__ = lazy_api(__name__, _API, globals())
