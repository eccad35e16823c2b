"""Candidate pools and sampling: SimLex-999 USF stratification, HyperLex WordNet relation pools,
TR9856 hypergeometric topic lexicons."""
