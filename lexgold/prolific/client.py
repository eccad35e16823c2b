"""A small client of Prolific's public REST API (standard library only: ``urllib``).

What it calls, as documented at docs.prolific.com (API reference, read 2026-11):

- Authentication: "In your requests add ``Authorization`` header with the value ``Token <your
  token>``" (every endpoint's page); the token comes from ``PROLIFIC_API_TOKEN``.
- ``GET /api/v1/submissions/?study=ID`` ("List submissions": "Paginate by page_size and page
  (Default page_size is 20)"); each result has ``id`` (the ``%SESSION_ID%``), ``participant_id``,
  ``status`` (``RESERVED``, ``ACTIVE``, ``TIMED-OUT``, ``AWAITING REVIEW``, ``APPROVED``,
  ``RETURNED``, ``REJECTED``, ``SCREENED OUT``; "Submission object"), ``started_at``,
  ``completed_at``, ``study_code``.
- ``POST /api/v1/submissions/{id}/transition/`` ("Approve or reject a submission"): ``action``;
  with ``REJECT`` a ``message`` ("It must be at least 100 chars long") and a
  ``rejection_category``. "Note this endpoint is idempotent, so if you make the same request
  twice, the second request will be ignored."
- ``POST /api/v1/submissions/{id}/request-return/`` ("Request the participant ... to return
  their response", an experimental endpoint): ``request_return_reasons``, a list of strings.
- ``POST /api/v1/submissions/bonus-payments/`` ("Set up bonuses"): ``study_id`` and
  ``csv_bonuses`` (lines ``participant_id,amount``, the amount in the account's currency), which
  returns the bulk payment's ``id``; ``POST /api/v1/bulk-bonus-payments/{id}/pay/`` ("Pay
  bonuses"): "This endpoint is **not idempotent**. Sending multiple requests with the same bulk
  bonus payment ID will result in participants being paid multiple times." That call is never
  retried here (:mod:`lexgold.prolific.review` records it before and after).

The token goes to the base URL's origin only: ``https://`` (``http://`` only to a loopback
address, as the tests' fake), a ``next`` page or a redirect to any other scheme, host or port
is refused (a :class:`ProlificError`), never followed with the token.

Rate limits and server errors (HTTP 429 and 5xx, and a dropped connection) are retried with
exponential backoff, honouring ``Retry-After``; any other failure is a :class:`ProlificError`
naming the HTTP status and the endpoint in one line.
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request

from lexgold.errors import InputError

API_URL = "https://api.prolific.com"
TOKEN_VARIABLE = "PROLIFIC_API_TOKEN"
#: submission statuses of Prolific's "Submission object"
SUBMITTED = ("AWAITING REVIEW", "APPROVED", "REJECTED", "PARTIALLY APPROVED", "SCREENED OUT")
UNFINISHED = ("RESERVED", "ACTIVE", "RETURNED", "TIMED-OUT")


class ProlificError(InputError):
    """A call to Prolific's API failed: one line with the HTTP status and the endpoint."""


class Client:
    """Prolific's API at ``base_url`` (default https://api.prolific.com; tests give a local
    fake) with the API token ``token`` (default: ``$PROLIFIC_API_TOKEN``).

    ``retries`` attempts more are made on HTTP 429 and 5xx and on a dropped connection, waiting
    ``backoff_s`` * 2^attempt seconds (or the server's ``Retry-After``) through ``sleep``.
    """

    def __init__(self, token: str | None = None, base_url: str | None = None, *,
                 retries: int = 4, backoff_s: float = 1.0, timeout_s: float = 30.0,
                 sleep=time.sleep, page_size: int = 100):
        token = token if token is not None else os.environ.get(TOKEN_VARIABLE, "")
        if not token.strip():
            raise ProlificError(f"no Prolific API token: set {TOKEN_VARIABLE} (Prolific: "
                                f"Settings > API tokens)", field=TOKEN_VARIABLE)
        self.token = token.strip()
        self.base_url = (base_url or os.environ.get("LEXGOLD_PROLIFIC_API_URL")
                         or API_URL).rstrip("/")
        self.origin = _origin(self.base_url)
        self._opener = urllib.request.build_opener(_SameOrigin(self.origin))
        self.retries, self.backoff_s, self.timeout_s = retries, backoff_s, timeout_s
        self.sleep, self.page_size = sleep, page_size

    # -- transport ------------------------------------------------------------------------------

    def request(self, method: str, path: str, body: dict | None = None, *,
                retry: bool = True) -> dict:
        """One call; the decoded JSON answer (``{}`` for an empty one). ``path`` is relative to
        the base URL (``/api/v1/...``) or a full URL the API gave (a next page)."""
        url = path if path.startswith(("http://", "https://")) else self.base_url + path
        endpoint = f"{method} {urllib.parse.urlsplit(url).path}"
        if _origin(url, check=False) != self.origin:
            raise ProlificError(f"Prolific API: {endpoint}: a URL on another site "
                                f"({urllib.parse.urlsplit(url).netloc}) than {self.base_url}; "
                                "the token is not sent there")
        data = None if body is None else json.dumps(body).encode()
        attempts = self.retries + 1 if retry else 1
        for attempt in range(attempts):
            request = urllib.request.Request(url, data=data, method=method, headers={
                "Authorization": f"Token {self.token}", "Accept": "application/json",
                **({"Content-Type": "application/json"} if data is not None else {})})
            try:
                with self._opener.open(request, timeout=self.timeout_s) as response:
                    text = response.read().decode("utf-8", "replace")
                return json.loads(text) if text.strip() else {}
            except urllib.error.HTTPError as err:
                detail = _detail(err)
                if err.code == 429 or err.code >= 500:
                    if attempt + 1 < attempts:
                        self.sleep(_wait(err.headers.get("Retry-After"),
                                         self.backoff_s * 2 ** attempt))
                        continue
                    raise ProlificError(f"Prolific API: HTTP {err.code} on {endpoint} after "
                                        f"{attempts} attempts{detail}") from None
                raise ProlificError(f"Prolific API: HTTP {err.code} on {endpoint}{detail}") \
                    from None
            except (urllib.error.URLError, OSError) as err:
                if attempt + 1 < attempts:
                    self.sleep(self.backoff_s * 2 ** attempt)
                    continue
                reason = getattr(err, "reason", err)
                raise ProlificError(f"Prolific API: {endpoint} unreachable: {reason}") from None
            except json.JSONDecodeError:
                raise ProlificError(f"Prolific API: {endpoint} answered something other than "
                                    f"JSON") from None
        raise AssertionError("unreachable")

    # -- endpoints ------------------------------------------------------------------------------

    def submissions(self, study_id: str) -> list[dict]:
        """Every submission of the Prolific study ``study_id``, all pages."""
        query = urllib.parse.urlencode({"study": study_id, "page_size": self.page_size,
                                        "page": 1})
        out, url, seen = [], f"/api/v1/submissions/?{query}", set()
        while url and url not in seen:
            seen.add(url)
            page = self.request("GET", url)
            results = page.get("results")
            if not isinstance(results, list):
                raise ProlificError("Prolific API: GET /api/v1/submissions/ answered without "
                                    "a 'results' list")
            out.extend(results)
            url = _next_page(page)
        return out

    def approve(self, submission_id: str) -> dict:
        return self.request("POST", f"/api/v1/submissions/{_quoted(submission_id)}/transition/",
                            {"action": "APPROVE"})

    def reject(self, submission_id: str, message: str, category: str) -> dict:
        if len(message) < 100:
            raise ProlificError("a rejection message must be at least 100 characters "
                                "(Prolific's API)", field="message")
        return self.request("POST", f"/api/v1/submissions/{_quoted(submission_id)}/transition/",
                            {"action": "REJECT", "message": message,
                             "rejection_category": category})

    def request_return(self, submission_id: str, reasons: list[str]) -> dict:
        return self.request("POST",
                            f"/api/v1/submissions/{_quoted(submission_id)}/request-return/",
                            {"request_return_reasons": list(reasons)})

    def set_up_bonuses(self, study_id: str, amounts: dict[str, int]) -> str:
        """A bulk bonus payment of ``amounts`` (participant ID -> cents); its ID. Pays nothing."""
        lines = "".join(f"{pid},{cents // 100}.{cents % 100:02d}\n"
                        for pid, cents in amounts.items())
        answer = self.request("POST", "/api/v1/submissions/bonus-payments/",
                              {"study_id": study_id, "csv_bonuses": lines})
        bulk = answer.get("id")
        if not bulk:
            raise ProlificError("Prolific API: POST /api/v1/submissions/bonus-payments/ "
                                "answered without the bulk payment's 'id'")
        return str(bulk)

    def pay_bonuses(self, bulk_id: str) -> dict:
        """Pay a bulk bonus payment: not idempotent, so one attempt only (no retry)."""
        return self.request("POST", f"/api/v1/bulk-bonus-payments/{_quoted(bulk_id)}/pay/",
                            {}, retry=False)


def _origin(url: str, check: bool = True) -> tuple[str, str, int | None]:
    """(scheme, host, port) of ``url``; with ``check``, an :class:`InputError` unless it is
    ``https://``, or ``http://`` to a loopback address."""
    import ipaddress

    parts = urllib.parse.urlsplit(url)
    host = (parts.hostname or "").lower()
    try:
        port = parts.port or {"https": 443, "http": 80}.get(parts.scheme)
    except ValueError:
        port = None
    if check:
        try:
            loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
        except ValueError:
            loopback = False
        if parts.scheme != "https" and not (parts.scheme == "http" and loopback) or not host:
            raise InputError(f"the Prolific API URL must be https:// (http:// only on this "
                             f"machine): {url}", field="--api-url")
    return parts.scheme, host, port


class _SameOrigin(urllib.request.HTTPRedirectHandler):
    """Follow a redirect only within the API's origin (urllib would carry the token along)."""

    def __init__(self, origin):
        self.origin = origin

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        if _origin(newurl, check=False) != self.origin:
            raise ProlificError(f"Prolific API: HTTP {code} redirect to another site "
                                f"({urllib.parse.urlsplit(newurl).netloc}); the token is not "
                                "sent there")
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def _quoted(value: str) -> str:
    return urllib.parse.quote(str(value), safe="")


def _next_page(page: dict) -> str | None:
    """The next page's URL of a list answer: ``_links.next.href`` or ``next``; None at the end."""
    links = page.get("_links") or {}
    following = links.get("next") if isinstance(links, dict) else None
    if isinstance(following, dict):
        following = following.get("href")
    following = following or page.get("next")
    return following if isinstance(following, str) and following else None


def _wait(retry_after: str | None, default: float) -> float:
    """Seconds to wait: the server's ``Retry-After`` (seconds, at most 5 minutes) or ``default``."""
    try:
        return min(max(float(retry_after), 0.0), 300.0) if retry_after else default
    except ValueError:
        return default


def _detail(err: urllib.error.HTTPError) -> str:
    """": <the API's message>" in one short line, or ""."""
    try:
        text = err.read().decode("utf-8", "replace")
    except OSError:
        return ""
    try:
        data = json.loads(text)
        error = data.get("error", data) if isinstance(data, dict) else data
        if isinstance(error, dict):
            text = str(error.get("detail") or error.get("title") or error)
        else:
            text = str(error)
    except (json.JSONDecodeError, AttributeError):
        pass
    text = " ".join(text.split())[:200]
    return f": {text}" if text else ""
