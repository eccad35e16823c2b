"""The prompt a machine rater reads, and the number read back from its answer.

The prompt is what the protocol's raters see (its ``[study]`` table, :class:`RaterTexts`): the
instruction pages with their examples, the question of each pair with the protocol's word case
(and its part-of-speech variant, its topic), and the scale with its two end labels. lexgold adds
one paragraph only, because raters answer with a slider and a machine with text: how to write
the answer (:func:`answer_format`). The system message is the instructions and that paragraph;
each request's user message numbers its questions, one per pair.

An answer is read per line when a request holds several pairs (``3: 5``, ``3. 5`` or ``3) 5``
name the question; a reply of exactly one line per question without numbers is read in order).
The number of a pair is the first number of its line (of the whole answer, for one pair); a
line without a number, or whose first number lies off the scale, is unparsable: ``None``, never
0.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

#: a number as a model writes it: ``5``, ``-1``, ``4.5``
_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?")
#: a numbered line of an answer: ``3: 5``, ``3. 5``, ``3) 5``, ``[3] 5``, ``#3 - 5``
_NUMBERED = re.compile(r"^\s*[\[(#]?\s*(\d+)\s*(?:[:)\]]|\.(?!\d)|\s-\s)\s*(.*)$")


@dataclass(frozen=True)
class RaterTexts:
    """What a protocol's raters see (the ``[study]`` table of docs/protocols.md).

    ``task`` is ``slider`` (an integer from ``scale_min`` to ``scale_max``) or ``binary``
    (1 = ``binary_yes_label``, 0 = ``binary_no_label``)."""

    task: str
    scale_min: int
    scale_max: int
    instructions: tuple[str, ...]
    question: str
    question_by_pos: dict[str, str] = field(default_factory=dict)
    scale_min_label: str = ""
    scale_max_label: str = ""
    binary_yes_label: str = "related"
    binary_no_label: str = "unrelated"
    word_case: str = "as-is"
    topic_label: str = "Topic: {topic}"
    #: topic id -> the title raters see (TR9856: the motion); a topic without one shows its id
    topic_titles: dict[str, str] = field(default_factory=dict)

    @property
    def scale(self) -> tuple[int, int]:
        """The lowest and highest answer (binary: 0 and 1)."""
        return (0, 1) if self.task == "binary" else (self.scale_min, self.scale_max)


def answer_format(texts: RaterTexts) -> str:
    """The one paragraph lexgold adds to the raters' instructions: how to write the answer."""
    if texts.task == "binary":
        values = f"1 ({texts.binary_yes_label}) or 0 ({texts.binary_no_label})"
    else:
        values = (f"a whole number from {texts.scale_min} ({texts.scale_min_label}) to "
                  f"{texts.scale_max} ({texts.scale_max_label})")
    return (f"Answer each numbered question with {values}. Write one line per question: its "
            "number, a colon and your answer (for example `1: "
            f"{texts.scale[1]}`), and nothing else.")


def system_message(texts: RaterTexts) -> str:
    """The instruction pages as raters read them, then :func:`answer_format`."""
    return "\n\n".join([*texts.instructions, answer_format(texts)])


def show_word(word: str, case: str) -> str:
    """A word in the protocol's case (``upper``: HyperLex's "Is TO RUN a type of ...")."""
    return word.upper() if case == "upper" else word.lower() if case == "lower" else word


def pair_question(texts: RaterTexts, word1: str, word2: str, pos: str = "", topic: str = "") -> str:
    """The question raters see above a pair's slider (with its topic where the pair has one)."""
    template = texts.question_by_pos.get(pos, texts.question)
    topic = texts.topic_titles.get(topic, topic)
    text = template.format(word1=show_word(word1, texts.word_case),
                           word2=show_word(word2, texts.word_case), topic=topic)
    if topic and "{topic}" not in template:
        text += f" ({texts.topic_label.format(topic=topic)})"
    return text


def user_message(texts: RaterTexts, pairs: list[dict]) -> str:
    """One request's questions, numbered from 1; ``pairs``: dicts with ``word1, word2`` and
    optionally ``pos``, ``topic``."""
    return "\n".join(f"{i}. " + pair_question(texts, p["word1"], p["word2"], p.get("pos", ""),
                                         p.get("topic", ""))
                     for i, p in enumerate(pairs, start=1))


def prompt_record(texts: RaterTexts) -> str:
    """The prompt as a provenance record keeps it: the system message, then the shape of a
    request's user message (its question templates)."""
    templates = [f"{{n}}. {texts.question}"]
    templates += [f"{{n}}. {t}    (part of speech {pos})"
                  for pos, t in sorted(texts.question_by_pos.items())]
    return (system_message(texts) + "\n\n[each request: one numbered question per pair]\n"
            + "\n".join(templates))


def prompt_sha256(texts: RaterTexts) -> str:
    """SHA-256 (hex) of :func:`prompt_record`: the cache and the provenance name the prompt by
    it."""
    return hashlib.sha256(prompt_record(texts).encode("utf-8")).hexdigest()


def parse_number(text: str, scale: tuple[float, float]) -> float | None:
    """The first number of ``text`` if it lies on ``scale`` (inclusive); else ``None``.

    >>> parse_number("I would say 5 (very similar).", (0, 6))
    5.0
    >>> parse_number("7", (0, 6)) is None, parse_number("similar", (0, 6)) is None
    (True, True)
    """
    found = _NUMBER.search(text or "")
    if found is None:
        return None
    value = float(found.group())
    return value if scale[0] <= value <= scale[1] else None


def parse_answers(text: str, n: int, scale: tuple[float, float]) -> list[float | None]:
    """The ratings of a request's ``n`` pairs read from the answer ``text`` (module docstring).

    >>> parse_answers("1: 5\\n2: 0\\n3: nine", 3, (0, 6))
    [5.0, 0.0, None]
    >>> parse_answers("4\\n2", 2, (0, 6))
    [4.0, 2.0]
    """
    text = text or ""
    lines = [line for line in text.splitlines() if line.strip()]
    found: dict[int, float | None] = {}
    for line in lines:
        numbered = _NUMBERED.match(line)
        if numbered and 1 <= int(numbered.group(1)) <= n and int(numbered.group(1)) not in found:
            found[int(numbered.group(1))] = parse_number(numbered.group(2), scale)
    if not found and n == 1:
        return [parse_number(text, scale)]
    if not found and len(lines) == n:
        return [parse_number(line, scale) for line in lines]
    return [found.get(i) for i in range(1, n + 1)]
