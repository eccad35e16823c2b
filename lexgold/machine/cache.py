"""The answers a machine rater has given, kept so that a rerun sends nothing already answered.

One SQLite file beside the ratings file (``FILE.cache.sqlite``, :func:`cache_path`), one row
per answer, keyed by the model, the prompt's SHA-256, the temperature, the pair and the sample
index. The row keeps the answer's text (the pair's line of it) and the number read from it,
``NULL`` for an unparsable answer (reported, and not asked again). No request header, and so
no API key, is ever stored.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from lexgold.errors import InputError

_SCHEMA = """
CREATE TABLE IF NOT EXISTS answers (
    model TEXT NOT NULL,
    prompt_sha256 TEXT NOT NULL,
    temperature REAL NOT NULL,
    word1 TEXT NOT NULL,
    word2 TEXT NOT NULL,
    sample INTEGER NOT NULL,
    answer TEXT NOT NULL,
    rating REAL,
    PRIMARY KEY (model, prompt_sha256, temperature, word1, word2, sample)
)
"""
#: the longest answer text kept per pair (characters)
MAX_ANSWER_CHARS = 2_000


def cache_path(out: str | Path) -> Path:
    """The cache of the ratings file ``out``: ``out`` + ``.cache.sqlite``."""
    return Path(str(out) + ".cache.sqlite")


class AnswerCache:
    """The answers of one model, prompt and temperature (module docstring); one thread uses
    it."""

    def __init__(self, path: str | Path, *, model: str, prompt_sha256: str,
                 temperature: float):
        self.path = Path(path)
        self.key = (model, prompt_sha256, float(temperature))
        self.connection = sqlite3.connect(self.path)
        try:
            # WAL without a sync per commit: a crashed run loses no committed answer, a power
            # cut at most the last ones, and thousands of small commits cost no disk flush each
            self.connection.execute("PRAGMA journal_mode=WAL")
            self.connection.execute("PRAGMA synchronous=NORMAL")
            self.connection.execute(_SCHEMA)
            self.connection.commit()
        except sqlite3.DatabaseError as err:
            self.connection.close()
            raise InputError(f"not an answer cache of lexgold machine rate ({err}); remove it "
                             "to start afresh", path=self.path) from None

    def close(self) -> None:
        self.connection.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def answers(self) -> dict[tuple[str, str, int], float | None]:
        """Every answer kept for this model, prompt and temperature: ``(word1, word2,
        sample) -> rating`` (``None``: unparsable)."""
        rows = self.connection.execute(
            "SELECT word1, word2, sample, rating FROM answers WHERE model = ? AND "
            "prompt_sha256 = ? AND temperature = ?", self.key)
        return {(w1, w2, s): rating for w1, w2, s, rating in rows}

    def put(self, rows: list[tuple[str, str, int, str, float | None]]) -> None:
        """Keep answers ``(word1, word2, sample, answer text, rating)`` and commit them."""
        self.connection.executemany(
            "INSERT OR REPLACE INTO answers VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [(*self.key, w1, w2, s, (answer or "")[:MAX_ANSWER_CHARS], rating)
             for w1, w2, s, answer, rating in rows])
        self.connection.commit()
