"""The one exception type lexgold raises for bad input: a one-line message naming the place."""


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


#: a URL's ``user:password@`` (the password group is masked)
_URL_PASSWORD = r"(?P<head>[A-Za-z][A-Za-z0-9+.\-]*://[^\s:/@'\"]*:)(?P<secret>[^\s@/'\"]+)(?=@)"
#: ``password=...``, ``token=...`` and the like in a query string, a libpq DSN or a message
_KEYWORD = (r"(?P<key>\b\w*(?:password|passwd|pwd|token|secret|key)\s*=\s*)"
            r"(?P<value>[^\s&;,'\"]+)")


def redact(text) -> str:
    """``text`` with every secret a URL or a setting can carry replaced by ``***``: the
    password of ``scheme://user:password@host``, and the value of ``password=``, ``token=``,
    ``secret=``, ``key=`` (query strings, libpq DSNs). The one masking function for whatever
    lexgold prints or logs (``lexgold.cliutil.LexgoldGroup``, the server's log filter).

    >>> redact("serving postgresql+psycopg://u:pa%40ss@db:5432/s?sslpassword=x at http://h/")
    'serving postgresql+psycopg://u:***@db:5432/s?sslpassword=*** at http://h/'
    >>> redact("host=db user=u password=hunter2 dbname=s")
    'host=db user=u password=*** dbname=s'
    >>> redact("a.sqlite: no such table")
    'a.sqlite: no such table'
    """
    import re

    text = re.sub(_URL_PASSWORD, r"\g<head>***", str(text))
    return re.sub(_KEYWORD, r"\g<key>***", text, flags=re.IGNORECASE)
