"""New-language versions: translation workflow, language packs, cross-lingual sets."""

from importlib import import_module

#: the English rating's question without context, per protocol (SimLex section 3.2;
#: HyperLex section 4.3; TR9856 section 3.4 without the topic); here, not in
#: :mod:`.translation`, so that the command line offers them without importing pandas
QUESTIONS = {
    "simlex": "How similar are {word1} and {word2}?",
    "hyperlex": "Is {word1} a type of {word2}?",
    "tr9856": "Are {word1} and {word2} related?",
}

#: the package's Python API: each name and the module that defines it (imported on first use,
#: so importing the package costs nothing)
_API = {
    "translator_sheet": "lexgold.languages.translation",
    "check_sheet": "lexgold.languages.translation",
    "compare_translations": "lexgold.languages.translation",
    "adjudication_sheet": "lexgold.languages.translation",
    "apply_adjudication": "lexgold.languages.translation",
    "export_sheets": "lexgold.languages.sheets",
    "import_sheets": "lexgold.languages.sheets",
    "adjudicate": "lexgold.languages.sheets",
    "Pack": "lexgold.languages.packs",
    "load_pack": "lexgold.languages.packs",
    "shipped_packs": "lexgold.languages.packs",
    "build_pack_hyperlex": "lexgold.languages.pools",
    "read_association_norms": "lexgold.languages.norms",
    "read_concreteness": "lexgold.languages.norms",
    "Scale": "lexgold.languages.crosslingual",
    "crosslingual_pairs": "lexgold.languages.crosslingual",
    "crosslingual_sets": "lexgold.languages.crosslingual",
    "crosslingual_from_files": "lexgold.languages.crosslingual",
}
__all__ = sorted(["QUESTIONS", *_API])


def __getattr__(name: str):
    if name in _API:
        return getattr(import_module(_API[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
