"""New-language versions: translation workflow, language packs, cross-lingual sets."""

from lexgold.lazy import lazy_api

#: the English rating's question without context, per protocol (SimLex section 3.2;
#: HyperLex section 4.3; TR9856 section 3.4 without the topic); here, not in
#: :mod:`.translation`, so that the command line offers them without importing pandas
QUESTIONS = {
    "simlex": "How similar are {word1} and {word2}?",
    "hyperlex": "Is {word1} a type of {word2}?",
    "tr9856": "Are {word1} and {word2} related?",
}

#: the package's Python API: each name and the submodule that defines it (imported on first use,
#: so importing the package costs nothing)
_API = {
    "translator_sheet": "translation",
    "check_sheet": "translation",
    "compare_translations": "translation",
    "adjudication_sheet": "translation",
    "apply_adjudication": "translation",
    "export_sheets": "sheets",
    "import_sheets": "sheets",
    "adjudicate": "sheets",
    "Pack": "packs",
    "load_pack": "packs",
    "shipped_packs": "packs",
    "build_pack_hyperlex": "pools",
    "read_association_norms": "norms",
    "read_concreteness": "norms",
    "Scale": "crosslingual",
    "crosslingual_pairs": "crosslingual",
    "crosslingual_sets": "crosslingual",
    "crosslingual_from_files": "crosslingual",
}
__all__ = sorted(["QUESTIONS", *_API])

__getattr__, __dir__ = lazy_api(__name__, _API, globals())
