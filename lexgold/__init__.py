"""lexgold: build word-pair gold standards for lexical semantics.

Recreates the SimLex-999 (Hill et al. 2015), HyperLex (Vulic et al. 2017) and TR9856
(Levy et al. 2015) protocols: candidate sampling, crowd rating, agreement and release.
"""

__version__ = "0.1.0"

