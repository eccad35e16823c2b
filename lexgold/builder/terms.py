"""Sentences, tokens and n-gram terms for the TR9856 topic lexicons (Levy et al. 2015, section 3.2).

The paper counts, for each n-gram term t (n = 1, 2, 3), the *sentences* that contain t. It does
not say how sentences, tokens or terms were delimited (**Decision**); lexgold's
choices, each a key of the ``[build]`` table of ``protocols/tr9856.toml``:

- Sentences: NLTK's Punkt (Kiss & Strunk 2006), trained without supervision on the topic articles
  themselves (``sentence_splitter = "punkt-trained"``), so that abbreviations such as "U.S." or
  "e.g." learnt from the corpus do not end a sentence; no pretrained model is downloaded.
  ``"punkt-untrained"`` uses Punkt's defaults; ``"blingfire"`` Microsoft's Bling Fire splitter
  (rules compiled to a finite-state machine: no training, several times faster, for corpora of
  the paper's size and larger). Each line of an article is split separately.
- Tokens: the matches of ``token_pattern`` (as NLTK's :class:`~nltk.tokenize.RegexpTokenizer`
  finds them: the ``regex`` engine, Unicode), lower-cased when ``lowercase`` is true.
- Terms: every run of n consecutive tokens inside a sentence, for n in ``ngram_sizes``, that
  neither starts nor ends with a stop word or with a token without a letter (a number). Stop
  words may occur inside a term ("nation of islam"). The stop list is the Snowball English list
  (``stop_words``; empty string for none).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Iterable, Iterator

import regex
from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer, PunktTrainer

from lexgold.errors import InputError


@dataclasses.dataclass(frozen=True)
class TermOptions:
    """How sentences are cut into n-gram terms (see the module docstring)."""

    ngram_sizes: tuple[int, ...] = (1, 2, 3)
    lowercase: bool = True
    token_pattern: str = r"\w+(?:[-.]\w+)*"
    stop_words: frozenset[str] = frozenset()

    def tokenizer(self) -> regex.Pattern:
        """``token_pattern`` compiled as NLTK's ``RegexpTokenizer`` compiles it (the ``regex``
        engine, Unicode, multi-line, dot-all), so ``tokenizer().findall`` gives its tokens,
        without the per-call time-out wrapper that makes NLTK's twice as slow."""
        return regex.compile(self.token_pattern, regex.UNICODE | regex.MULTILINE | regex.DOTALL)


#: sentence splitters of the ``sentence_splitter`` key
SPLITTERS = ("punkt-trained", "punkt-untrained", "blingfire")


class SentenceSplitter:
    """A sentence splitter: Punkt, optionally trained on the corpus first, or Bling Fire.

    ``kind`` is one of :data:`SPLITTERS`. With ``"punkt-trained"`` call :meth:`train` with each
    article's text (streamed: Punkt keeps only frequency tables, bounded by the vocabulary), then
    :meth:`split`. ``"blingfire"`` is Microsoft's Bling Fire rule-based splitter (a compiled
    finite-state machine, no training, about ten times Punkt's speed; ``pip install blingfire``).
    A splitter made from :meth:`parameters` of a trained one splits exactly as it does, so the
    work can be shared among processes.
    """

    def __init__(self, kind: str = "punkt-trained", parameters: PunktParameters | None = None):
        if kind not in SPLITTERS:
            raise InputError(f"unknown sentence splitter {kind!r} (one of {', '.join(SPLITTERS)})",
                             field="build.sentence_splitter")
        self.kind = kind
        self._trainer = PunktTrainer() if kind == "punkt-trained" and parameters is None else None
        self._parameters = parameters
        self._split_line: Callable[[str], list[str]] | None = None
        if kind == "blingfire":
            try:
                import blingfire  # noqa: F401
            except ImportError:
                raise InputError("the blingfire sentence splitter is not installed "
                                 "(pip install -e '.[fast]' in the lexgold clone)",
                                 field="build.sentence_splitter") from None

    def train(self, text: str) -> None:
        if self._trainer is not None:
            self._trainer.train(text, finalize=False)

    def parameters(self) -> PunktParameters | None:
        """Punkt's learnt parameters (training ends here); None for Bling Fire."""
        if self.kind == "blingfire":
            return None
        if self._parameters is None:
            if self._trainer is not None:
                self._trainer.finalize_training()
                self._parameters = self._trainer.get_params()
                self._trainer = None
            else:
                self._parameters = PunktParameters()
        return self._parameters

    def split(self, text: str) -> Iterator[str]:
        """Yield the sentences of ``text``; a line break always ends a sentence."""
        if self._split_line is None:
            if self.kind == "blingfire":
                from blingfire import text_to_sentences
                self._split_line = lambda line: text_to_sentences(line).split("\n")
            else:
                self._split_line = PunktSentenceTokenizer(self.parameters()).tokenize
        for line in text.splitlines():
            if line.strip():
                yield from (s for s in self._split_line(line) if s.strip())


def tokens(sentence: str, options: TermOptions, tokenizer: regex.Pattern | None = None
           ) -> list[str]:
    """Tokens of one sentence (lower-cased if ``options.lowercase``)."""
    found = (tokenizer or options.tokenizer()).findall(sentence)
    return [t.lower() for t in found] if options.lowercase else found


def sentence_terms(words: list[str], options: TermOptions) -> set[str]:
    """The distinct n-gram terms of one tokenised sentence (space-joined).

    >>> sorted(sentence_terms(["nation", "of", "islam"], TermOptions(stop_words=frozenset({"of"}))))
    ['islam', 'nation', 'nation of islam']
    """
    edge = [w not in options.stop_words and _has_letter(w) for w in words]
    found = set()
    for n in options.ngram_sizes:
        for i in range(len(words) - n + 1):
            if edge[i] and edge[i + n - 1]:
                found.add(" ".join(words[i:i + n]))
    return found


@functools.lru_cache(maxsize=1 << 20)
def _has_letter(word: str) -> bool:
    return any(c.isalpha() for c in word)


def normalise_terms(terms: Iterable[str], options: TermOptions) -> list[str]:
    """Terms written by hand (S_def) tokenised and cased like corpus terms."""
    tokenizer = options.tokenizer()
    return [" ".join(tokens(term, options, tokenizer)) for term in terms]
