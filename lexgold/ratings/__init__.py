"""Raw ratings as their authors distributed them, turned into lexgold's long format.

:mod:`lexgold.ratings.layouts` reads one file of a published layout (WordSim-353's one column
per rater, MEN's one file per rater, SimVerb-3500's ratings without rater identity,
HyperLex's release (its trailing ratings, without rater identity), lexgold's
long CSV, Potato-style JSON lines) into long-format rows (``docs/process.md``, "Importing
published ratings"); :mod:`lexgold.ratings.cli` is ``lexgold ratings import``.
"""

#: the layouts ``lexgold ratings import --layout`` reads (here, not in :mod:`.layouts`, so that the
#: command line offers them without importing pandas)
LAYOUTS = ("wide", "per-rater", "anonymous", "hyperlex", "long", "potato")
