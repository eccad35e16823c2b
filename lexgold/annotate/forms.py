"""What every form of the rating site shares: the refusal of a request and the reading of an
integer field as the site's own pages send it."""

from __future__ import annotations

import re


class Rejected(Exception):
    """A request the flow refuses; ``text`` names the message in ``[study.texts]``."""

    def __init__(self, text: str = "error_invalid", detail: str = ""):
        super().__init__(detail or text)
        self.text, self.detail = text, detail


def parse_int(text) -> int | None:
    """An integer of at most 9 ASCII digits from a form field, else ``None``.

    Only an integer written as the site's forms write it is accepted: ASCII ``0-9``, an optional
    leading ``-``, no leading zero (``"0"``, ``"6"``, ``"-1"``; not ``"06"``, ``"-0"``), with
    surrounding ASCII blanks. Other Unicode digits (``'٠'``, ``'５'``), which ``\\d`` and ``int()``
    would both take, are refused, so nothing a browser does not send is ever stored.
    """
    text = str(text).strip(" \t\r\n")
    return int(text) if _CANONICAL.fullmatch(text) else None


#: an integer as the site's forms send it (see :func:`parse_int`)
CANONICAL_INT = r"0|-?[1-9][0-9]{0,8}"
_CANONICAL = re.compile(CANONICAL_INT)
