"""Values taken from data, made safe in the Markdown that a release ships.

``report.md`` and the dataset card ``README.md`` are rendered by GitHub and Hugging Face, which
pass raw HTML through. A pair word, a study or protocol name, a note or a file name is data, not
markup: every such value goes through :func:`text` (running text and table cells) or
:func:`code` (a code span) before it is written.

>>> text("<img src=x onerror=alert(1)> | a`b")
'&lt;img src=x onerror=alert(1)&gt; \\\\| a\\\\`b'
>>> code("gold.csv")
'`gold.csv`'
"""

from __future__ import annotations

import re

_HTML = {"<": "&lt;", ">": "&gt;"}
#: an ``&`` that would start a character reference (``&amp;``, ``&#60;``, ``&#x3c;``)
_ENTITY = re.compile(r"&(?=#?[0-9A-Za-z]+;)")
#: Markdown punctuation that could open emphasis, a link, an image, a code span or a cell (an
#: underscore inside a word, as in ``min_answers``, opens nothing and stays as it is)
_PUNCTUATION = re.compile(r"([\\`*\[\]|]|(?<![0-9A-Za-z])_|_(?![0-9A-Za-z]))")


def _one_line(value) -> str:
    return " ".join(str(value).split("\n")).replace("\r", " ").replace("\0", "")


def text(value) -> str:
    """``value`` as literal Markdown text on one line: ``<`` and ``>`` as HTML entities, ``&``
    only where it would start an entity (``&amp;`` is shown as typed, ``Hill & Korhonen``
    stays readable in the raw file), Markdown punctuation (``\\ ` * [ ] |``, and ``_`` but
    inside a word) backslash-escaped, newlines as spaces. Safe in running text and in table
    cells.

    >>> text("Hill, Reichart & Korhonen; &amp; <b>")
    'Hill, Reichart & Korhonen; &amp;amp; &lt;b&gt;'
    """
    line = "".join(_HTML.get(char, char) for char in _ENTITY.sub("&amp;", _one_line(value)))
    return _PUNCTUATION.sub(r"\\\1", line)


def code(value) -> str:
    """``value`` as a code span on one line: a fence longer than any run of backticks in it,
    ``|`` escaped (GitHub splits table cells on it even inside code spans). HTML in a code span
    is shown, never rendered."""
    line = _one_line(value).replace("|", "\\|")
    fence = "`" * (max((len(run) for run in re.findall("`+", line)), default=0) + 1)
    pad = " " if line.startswith("`") or line.endswith("`") else ""
    return f"{fence}{pad}{line}{pad}{fence}"
