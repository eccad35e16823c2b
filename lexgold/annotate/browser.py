"""A browser for the in-process site: WSGI requests as a browser sends them, its cookies kept.

``lexgold study rehearse`` drives the site with one :class:`Browser` per simulated rater (and
``bench/bench_rehearsal.py --floor`` its minimal app with the same one): each request goes
through the whole app (its WSGI callable: every middleware, the session cookie, the CSRF
check, the response headers), built as a browser builds it, without werkzeug's test client
(its request builder, cookie jar and response wrappers cost about as much as a small page of
the site, PEP 3333 being all the app reads):

- a form is posted ``application/x-www-form-urlencoded`` with the URL of the page it came from
  as ``Referer`` (the site's ``Referrer-Policy: same-origin`` lets a browser send it);
- cookies are kept as RFC 6265 section 5.3 stores them, for one host: set by ``Set-Cookie``,
  removed by an empty value with ``Max-Age=0`` or an ``Expires`` in the past, never sent
  outside their ``Path``; a ``Secure`` cookie is not stored over plain HTTP;
- a redirect (301, 302, 303) is followed with a GET, as browsers do (RFC 9110 section
  15.4); a 307 or 308 repeats the request with its body.
"""

from __future__ import annotations

import re
import sys
import time
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from io import BytesIO
from urllib.parse import urlencode, urlsplit

#: redirects followed in a row before giving up (browsers stop at about 20)
MAX_REDIRECTS = 20


#: a name or value that ``urlencode`` leaves as it is (``quote_plus``'s always-safe characters)
PLAIN = re.compile(r"[A-Za-z0-9_.~-]*")


def form_body(data: dict) -> bytes:
    """``urlencode(data)`` as bytes: a form posted as a browser posts it; names and values
    with nothing to quote (ids, numbers, CSRF tokens) are joined as they are."""
    out = []
    for key, value in data.items():
        key, value = str(key), str(value)
        out.append(f"{key}={value}" if PLAIN.fullmatch(key) and PLAIN.fullmatch(value)
                   else urlencode([(key, value)]))
    return "&".join(out).encode("ascii")


@dataclass
class Response:
    """What a browser got back: the status code, the headers and the body."""

    status: int
    headers: list                 # (name, value), as the app sent them
    body: bytes
    url: str                      # the path (and query) it answers

    def text(self) -> str:
        return self.body.decode("utf-8")

    def header(self, name: str) -> str | None:
        name = name.lower()
        return next((value for key, value in self.headers if key.lower() == name), None)


@dataclass
class Browser:
    """One browser on ``app`` (a WSGI callable) at ``http://host``; ``requests`` counts every
    request it made, redirects followed included."""

    app: object
    host: str = "localhost"
    remote_addr: str = "127.0.0.1"
    cookies: dict = field(default_factory=dict)     # name -> (value, path)
    requests: int = 0

    def get(self, url: str) -> Response:
        """GET ``url`` (a path with its query), redirects followed."""
        return self._follow("GET", url, b"", None)

    def post(self, url: str, data: dict, referer: str | None = None) -> Response:
        """POST the form ``data`` to ``url`` from the page at ``referer``, redirects followed."""
        return self._follow("POST", url, form_body(data), referer)

    def cookie(self, name: str) -> str | None:
        """The value of the cookie ``name`` this browser holds, or None."""
        kept = self.cookies.get(name)
        return kept[0] if kept is not None else None

    def _follow(self, method: str, url: str, body: bytes, referer: str | None) -> Response:
        for _ in range(MAX_REDIRECTS + 1):
            response = self.request(method, url, body, referer)
            if response.status not in (301, 302, 303, 307, 308):
                return response
            location = urlsplit(response.header("Location") or "/")
            if location.netloc and location.netloc != self.host:
                raise ValueError(f"a redirect off the site: {response.header('Location')}")
            referer = url if referer is None else referer
            url = location.path + (f"?{location.query}" if location.query else "")
            if response.status not in (307, 308):
                method, body = "GET", b""
        raise ValueError(f"more than {MAX_REDIRECTS} redirects from {url}")

    def request(self, method: str, url: str, body: bytes = b"",
                referer: str | None = None) -> Response:
        """One request, no redirect followed."""
        path, _, query = url.partition("?")
        environ = {
            "REQUEST_METHOD": method, "SCRIPT_NAME": "", "PATH_INFO": path,
            "QUERY_STRING": query, "SERVER_NAME": self.host, "SERVER_PORT": "80",
            "SERVER_PROTOCOL": "HTTP/1.1", "REMOTE_ADDR": self.remote_addr,
            "HTTP_HOST": self.host, "wsgi.version": (1, 0), "wsgi.url_scheme": "http",
            "wsgi.input": BytesIO(body), "wsgi.errors": sys.stderr,
            "wsgi.multithread": False, "wsgi.multiprocess": False, "wsgi.run_once": False}
        if body:
            environ["CONTENT_TYPE"] = "application/x-www-form-urlencoded"
            environ["CONTENT_LENGTH"] = str(len(body))
        if referer is not None:
            environ["HTTP_REFERER"] = f"http://{self.host}{referer}"
        sent = "; ".join(f"{name}={value}" for name, (value, at) in self.cookies.items()
                         if path == at or path.startswith(at.rstrip("/") + "/"))
        if sent:
            environ["HTTP_COOKIE"] = sent
        started = []

        def start_response(status, headers, exc_info=None):
            started[:] = [status, headers]

        self.requests += 1
        chunks = self.app(environ, start_response)
        try:
            body = b"".join(chunks)
        finally:
            if hasattr(chunks, "close"):
                chunks.close()
        status, headers = int(started[0].split(None, 1)[0]), started[1]
        for name, value in headers:
            if name.lower() == "set-cookie":
                self._keep(value)
        return Response(status, headers, body, url)

    def _keep(self, header: str) -> None:
        """Store (or remove) the cookie of a ``Set-Cookie`` header."""
        pair, *attributes = header.split(";")
        name, _, value = pair.strip().partition("=")
        path, gone, secure = "/", False, False
        for attribute in attributes:
            key, _, setting = attribute.strip().partition("=")
            key = key.lower()
            if key == "path" and setting.startswith("/"):
                path = setting
            elif key == "max-age":
                gone = gone or setting.strip().lstrip("-").isdigit() and int(setting) <= 0
            elif key == "expires":
                try:
                    gone = gone or parsedate_to_datetime(setting).timestamp() <= time.time()
                except (TypeError, ValueError):
                    pass
            elif key == "secure":
                secure = True
        if secure:                    # plain HTTP: a browser stores no Secure cookie
            return
        if gone:
            self.cookies.pop(name, None)
        else:
            self.cookies[name] = (value, path)
