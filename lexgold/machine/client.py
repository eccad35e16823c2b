"""An OpenAI-compatible chat-completions client: hosted APIs and local servers alike.

``POST {endpoint}/chat/completions`` with ``{"model", "messages", "temperature"}``, the answer
read from ``choices[0].message.content``. The endpoint is the API's base URL, as the servers
document it: ``https://api.openai.com/v1``, llama.cpp's server ``http://localhost:8080/v1``,
vLLM's ``http://localhost:8000/v1``, Ollama's ``http://localhost:11434/v1``; a URL that already
ends in ``/chat/completions`` is used as given.

The API key comes only from the environment variable :data:`KEY_VARIABLE` (sent as
``Authorization: Bearer ...``; no header without it, as local servers need none). It is never
an argument of a command, and no message of this module holds it: errors name the endpoint's
host, the status and a masked excerpt of the body (:func:`lexgold.errors.redact`, the key
itself replaced too).

429, 5xx, time-outs and broken connections are retried ``retries`` times with exponential
backoff (``backoff_s`` x 2^attempt, at most ``max_backoff_s``), a ``Retry-After`` header
(seconds) honoured instead; other statuses fail at once. ``rate_limit`` spaces the requests of
all threads at least ``1 / rate_limit`` seconds apart. The sleep and the monotonic clock are
injected, so tests wait for nothing.
"""

from __future__ import annotations

import threading
import time
from urllib.parse import urlsplit

import httpx

from lexgold.errors import redact

#: the one place the API key comes from
KEY_VARIABLE = "LEXGOLD_MACHINE_API_KEY"
#: statuses worth asking again (rate limited, server trouble)
RETRY_STATUSES = frozenset({408, 409, 425, 429}) | frozenset(range(500, 600))
#: the longest body excerpt an error message shows
EXCERPT_CHARS = 200


class EndpointError(RuntimeError):
    """The endpoint did not answer (after the retries), or refused the request; one line, no
    key."""


def chat_url(endpoint: str) -> str:
    """The chat-completions URL of an endpoint (module docstring).

    >>> chat_url("http://localhost:8080/v1/"), chat_url("https://h/v1/chat/completions")
    ('http://localhost:8080/v1/chat/completions', 'https://h/v1/chat/completions')
    """
    endpoint = endpoint.rstrip("/")
    return endpoint if endpoint.endswith("/chat/completions") else endpoint + "/chat/completions"


def endpoint_host(endpoint: str) -> str:
    """The host (and port) of an endpoint, without user, password, path or query: what a
    provenance record keeps.

    >>> endpoint_host("https://user:pw@api.example.org:8443/v1?key=x")
    'api.example.org:8443'
    """
    parts = urlsplit(endpoint)
    host = parts.hostname or ""
    return f"{host}:{parts.port}" if parts.port else host


class RateLimiter:
    """At most ``rate`` requests per second across threads (``None`` or 0: no limit)."""

    def __init__(self, rate: float | None, *, sleep=time.sleep, monotonic=time.monotonic):
        self.gap = 1.0 / rate if rate else 0.0
        self.sleep, self.monotonic = sleep, monotonic
        self._next = None
        self._lock = threading.Lock()

    def wait(self) -> None:
        if not self.gap:
            return
        with self._lock:
            now = self.monotonic()
            start = now if self._next is None else max(now, self._next)
            self._next = start + self.gap
        if start > now:
            self.sleep(start - now)


class ChatClient:
    """Chat completions from one endpoint and model (module docstring); thread-safe."""

    def __init__(self, endpoint: str, model: str, *, api_key: str | None = None,
                 temperature: float = 0.0, timeout_s: float = 60.0, retries: int = 5,
                 backoff_s: float = 1.0, max_backoff_s: float = 60.0,
                 rate_limit: float | None = None, sleep=time.sleep,
                 monotonic=time.monotonic, concurrency: int = 1):
        self.url, self.model, self.temperature = chat_url(endpoint), model, temperature
        self.host = endpoint_host(endpoint)
        self._key = api_key or None
        self.retries, self.backoff_s, self.max_backoff_s = retries, backoff_s, max_backoff_s
        self.sleep = sleep
        self.limiter = RateLimiter(rate_limit, sleep=sleep, monotonic=monotonic)
        headers = {"Authorization": f"Bearer {self._key}"} if self._key else {}
        self.http = httpx.Client(headers=headers, timeout=httpx.Timeout(timeout_s),
                                 limits=httpx.Limits(max_connections=max(concurrency, 1)))

    def close(self) -> None:
        self.http.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _mask(self, text: str) -> str:
        text = str(text)
        if self._key:
            text = text.replace(self._key, "***")
        return redact(text)

    def complete(self, messages: list[dict]) -> str:
        """The answer's text to ``messages`` (retried as the module docstring says).

        Raises
        ------
        EndpointError
            A status that is not worth retrying, an answer that is not a chat completion, or
            no answer after the retries.
        """
        body = {"model": self.model, "messages": messages, "temperature": self.temperature}
        last = ""
        for attempt in range(self.retries + 1):
            if attempt:
                self.sleep(wait)
            self.limiter.wait()
            try:
                response = self.http.post(self.url, json=body)
            except httpx.TimeoutException:
                last, wait = "timed out", self._backoff(attempt)
                continue
            except httpx.TransportError as err:
                last, wait = f"connection failed ({type(err).__name__})", self._backoff(attempt)
                continue
            if response.status_code in RETRY_STATUSES:
                last = f"HTTP {response.status_code}"
                wait = self._retry_after(response) or self._backoff(attempt)
                continue
            if response.status_code >= 400:
                raise EndpointError(self._mask(
                    f"{self.host}: HTTP {response.status_code} from the chat-completions "
                    f"endpoint: {response.text[:EXCERPT_CHARS]!r}"))
            return self._content(response)
        raise EndpointError(self._mask(f"{self.host}: no answer after {self.retries + 1} "
                                       f"attempts (last: {last})"))

    def _backoff(self, attempt: int) -> float:
        return min(self.backoff_s * 2 ** attempt, self.max_backoff_s)

    def _retry_after(self, response: httpx.Response) -> float | None:
        value = response.headers.get("Retry-After", "").strip()
        try:
            seconds = float(value)
        except ValueError:
            return None
        return min(max(seconds, 0.0), self.max_backoff_s) if seconds == seconds else None

    def _content(self, response: httpx.Response) -> str:
        try:
            content = response.json()["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise EndpointError(self._mask(
                f"{self.host}: not a chat completion: {response.text[:EXCERPT_CHARS]!r}")) \
                from None
        return content if isinstance(content, str) else ""
