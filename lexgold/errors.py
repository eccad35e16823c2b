"""The one exception type lexgold raises for bad input: a one-line message naming the place."""

import functools
import re


class InputError(ValueError):
    """Bad input data. ``str(err)`` is one line naming the file, row or field at fault."""

    def __init__(self, message: str, *, path=None, line: int | None = None, field: str | None = None):
        where = []
        if path is not None:
            where.append(str(path) + (f":{line}" if line is not None else ""))
        elif line is not None:
            where.append(f"line {line}")
        if field is not None:
            where.append(f"field {field!r}")
        prefix = ", ".join(where)
        super().__init__(f"{prefix}: {message}" if prefix else message)
        self.path, self.line, self.field = path, line, field


class IncompleteRelease(InputError):
    """The ratings do not support a complete release (a pair missing or on too few accepted
    raters, no rater left); ``lexgold process --allow-incomplete`` writes it anyway."""


class WordNetNotFound(FileNotFoundError):
    """No WordNet 3.0 could be found; the message says where lexgold looked.

    Defined here, not in :mod:`lexgold.resources.wordnet` (which still exports it), so that the
    command line can report it without importing NLTK at start-up."""


class UndefinedStatistic(ValueError):
    """A statistic is undefined on the data so far (too few raters or pairs), not wrong.

    Raised by an exclusion rule (:mod:`lexgold.process.rules`) that cannot be computed yet;
    live recruitment reports it as "not yet computable" and waits, while any other error, a
    bug included, surfaces."""


#: a URL's ``user:password@`` (the password group is masked). Linear by construction: a match
#: starts only where a run of scheme characters starts (the look-behind), every run is taken
#: possessively (``*+``: nothing is retried), so each letter of a line is read a bounded number
#: of times (a run of 250,000 letters without ``://`` is read once, not once per letter)
_URL_PASSWORD = re.compile(r"(?P<head>(?<![A-Za-z0-9+.\-])[0-9+.\-]*+[A-Za-z][A-Za-z0-9+.\-]*+"
                           r"://[^\s:/@'\"]*+:)(?P<secret>[^\s@/'\"]++)(?=@)")
#: ``password=...``, ``token=...`` and the like in a query string, a libpq DSN or a message
_KEYWORD = re.compile(r"(?P<key>\b\w*(?:password|passwd|pwd|token|secret|key)\s*=\s*)"
                      r"(?P<value>[^\s&;,'\"]+)", flags=re.IGNORECASE)
#: the site's paths whose next segment is a secret: ``/move/<token>`` (a move link),
#: ``/preview/<token>`` (a preview link) and ``/resume/``. The rating site adds those of its URL
#: rules (every route with a ``<token>`` variable, :func:`lexgold.annotate.app.token_paths`) and
#: gives them to :func:`redact` for every log line; elsewhere (a command's error naming a file
#: in a folder ``preview/``) a path is no URL and is shown whole
TOKEN_PATHS = ("/move/", "/preview/", "/resume/")


@functools.lru_cache(maxsize=16)
def _token_pattern(paths: tuple[str, ...]) -> re.Pattern:
    """The path segment after any of ``paths`` (literal prefixes; one pass over a line)."""
    alternatives = "|".join(re.escape(path) for path in sorted(paths, key=len, reverse=True))
    return re.compile(rf"(?P<path>{alternatives})(?P<token>[^/\s?#&:;,'\"<>]++)")


def redact(text, token_paths: tuple[str, ...] = ()) -> str:
    """``text`` with every secret a URL or a setting can carry replaced by ``***``: the
    password of ``scheme://user:password@host``, the value of ``password=``, ``token=``,
    ``secret=``, ``key=`` (query strings, libpq DSNs), and the path segment after each of
    ``token_paths`` (the site's log filter gives :data:`TOKEN_PATHS` and its token routes:
    ``/move/<token>``). The one masking function for whatever lexgold prints or logs
    (``lexgold.cliutil.LexgoldGroup``, the server's log filter). Its time is linear in the
    length of ``text`` (bench/bench_redact.py).

    >>> redact("serving postgresql+psycopg://u:pa%40ss@db:5432/s?sslpassword=x at http://h/")
    'serving postgresql+psycopg://u:***@db:5432/s?sslpassword=*** at http://h/'
    >>> redact("host=db user=u password=hunter2 dbname=s")
    'host=db user=u password=*** dbname=s'
    >>> redact("database unavailable for GET /move/Zm9v.YmFy: timeout", TOKEN_PATHS)
    'database unavailable for GET /move/***: timeout'
    >>> redact("a.sqlite: no such table")
    'a.sqlite: no such table'
    """
    text = _URL_PASSWORD.sub(r"\g<head>***", str(text))
    text = _KEYWORD.sub(r"\g<key>***", text)
    if token_paths:
        text = _token_pattern(tuple(token_paths)).sub(r"\g<path>***", text)
    return text
