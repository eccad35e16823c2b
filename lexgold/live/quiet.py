"""Warnings of the statistics behind the admin view, kept off the server's log.

The agreement and exclusion figures (:mod:`lexgold.process`) warn when a figure is undefined
(one rater, constant ratings: HyperLex section 5). The site computes them on every admin reload,
so they are collected and shown on the page instead. ``warnings.catch_warnings`` swaps the
process's warning filters, which every thread shares: two requests using it at once restore each
other's filters, and the warnings of one reach the log (found with several admin tabs open, as
the view reloads itself). :func:`collected_warnings` lets one thread at a time do it.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

_ONE_AT_A_TIME = threading.Lock()


@contextmanager
def collected_warnings() -> Iterator[list[str]]:
    """Warnings raised inside the block are not shown; the list yielded gets their messages
    (each once, in order) when the block ends."""
    messages: list[str] = []
    with _ONE_AT_A_TIME, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            yield messages
        finally:
            messages.extend(dict.fromkeys(str(w.message) for w in caught))
