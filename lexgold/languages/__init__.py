"""New-language versions: translation workflow, language packs, cross-lingual sets."""

#: the English rating's question without context, per protocol (SimLex section 3.2;
#: HyperLex section 4.3; TR9856 section 3.4 without the topic); here, not in
#: :mod:`.translation`, so that the command line offers them without importing pandas
QUESTIONS = {
    "simlex": "How similar are {word1} and {word2}?",
    "hyperlex": "Is {word1} a type of {word2}?",
    "tr9856": "Are {word1} and {word2} related?",
}
