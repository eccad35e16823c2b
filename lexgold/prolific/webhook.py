"""Prolific's webhook requests: the signature check and the event they carry (pure functions).

docs.prolific.com, API reference, Webhooks > Verifying: "Hook requests will contain two headers,
X-Prolific-Request-Signature and X-Prolific-Request-Timestamp. The former represents signature
and the latter represents a UNIX timestamp of when the request was sent. [...] sign the request
body and timestamp with your secret key using SHA256 and then base64 encode the resulting
digest": ``base64(HMAC-SHA256(secret, timestamp + body))``. The secret is the workspace's
(``POST /api/v1/hooks/secrets/``). The raw body as received is signed here (the docs' Python
example re-serialises the parsed JSON, which changes nothing for Prolific's own compact JSON
but would break on any other spacing).

Webhooks > Receiving, ``submission.status.change``: ``{"resource_id": <the submission>,
"event_type": "submission.status.change", "participant_id": ..., "status": <the new status>}``.

A request is accepted only when its timestamp is within ``window_s`` of the site's clock, so a
captured request cannot be replayed later; within the window a replay changes nothing (freeing
a place twice frees it once).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re

SIGNATURE_HEADER = "X-Prolific-Request-Signature"
TIMESTAMP_HEADER = "X-Prolific-Request-Timestamp"
EVENT = "submission.status.change"
#: the statuses whose place Prolific gives to another participant ("Submission object")
FREES_PLACE = ("RETURNED", "TIMED-OUT")
STATUSES = ("RESERVED", "ACTIVE", "TIMED-OUT", "AWAITING REVIEW", "APPROVED", "RETURNED",
            "REJECTED", "SCREENED OUT", "PARTIALLY APPROVED")
ID = re.compile(r"[A-Za-z0-9_\-]{1,100}")
MAX_BODY = 16 * 1024
DEFAULT_WINDOW_S = 300


class BadHook(ValueError):
    """A webhook request refused: ``status`` is the HTTP status to answer."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


def read_secret(path) -> str | None:
    """The webhook secret held in the file ``path`` (None for no file); InputError when the
    file is empty or others may read it (as the session-signing key's file)."""
    if not path:
        return None
    import stat
    from pathlib import Path

    from lexgold.compression import read_input_text
    from lexgold.errors import InputError

    try:
        mode = Path(path).stat().st_mode
        secret = read_input_text(path, encoding="utf-8").strip()
    except OSError as err:
        raise InputError(f"cannot read the webhook secret: {err.strerror}", path=path) from None
    if mode & stat.S_IRWXO:
        raise InputError(f"the webhook secret file is readable by others: chmod 600 {path}",
                         path=path)
    if not secret:
        raise InputError("empty webhook secret", path=path)
    return secret


def signature(secret: str, timestamp: str, body: bytes) -> str:
    """Prolific's signature of ``body`` sent at ``timestamp`` (base64 of the HMAC-SHA256)."""
    digest = hmac.new(secret.encode(), timestamp.encode() + body, hashlib.sha256).digest()
    return base64.b64encode(digest).decode()


def verify(secret: str, headers, body: bytes, now_s: float,
           window_s: float = DEFAULT_WINDOW_S) -> None:
    """Raise :class:`BadHook` (401) unless ``headers`` carry a valid signature of ``body`` and
    a timestamp within ``window_s`` seconds of ``now_s`` (UNIX seconds)."""
    given = headers.get(SIGNATURE_HEADER, "")
    stamp = headers.get(TIMESTAMP_HEADER, "")
    if not given or not re.fullmatch(r"\d{1,12}(\.\d{1,6})?", stamp):
        raise BadHook(401, "missing or malformed signature headers")
    if not hmac.compare_digest(signature(secret, stamp, body).encode(), given.encode()):
        raise BadHook(401, "bad signature")
    if abs(now_s - float(stamp)) > window_s:
        raise BadHook(401, "timestamp outside the replay window")


def parse_event(body: bytes) -> dict | None:
    """The ``submission.status.change`` event of a (verified) body, checked strictly:
    ``{"submission", "participant", "status", "study"}`` (``study``: the ``study_id`` when the
    body has one, else None); None for another event type; BadHook (400) for anything
    malformed."""
    try:
        data = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise BadHook(400, "body is not UTF-8 JSON") from None
    except RecursionError:                   # thousands of nested brackets
        raise BadHook(400, "body nested too deeply") from None
    if not isinstance(data, dict) or not isinstance(data.get("event_type"), str):
        raise BadHook(400, "body is not an event object")
    if data["event_type"] != EVENT:
        return None
    submission, participant, status = (data.get(k) for k in ("resource_id", "participant_id",
                                                             "status"))
    for name, value in (("resource_id", submission), ("participant_id", participant)):
        if not isinstance(value, str) or not ID.fullmatch(value):
            raise BadHook(400, f"bad {name}")
    if not isinstance(status, str) or status.upper() not in STATUSES:
        raise BadHook(400, "bad status")
    study = data.get("study_id")            # not in Prolific's documented event; checked if sent
    if study is not None and (not isinstance(study, str) or not ID.fullmatch(study)):
        raise BadHook(400, "bad study_id")
    return {"submission": submission, "participant": participant, "status": status.upper(),
            "study": study}
