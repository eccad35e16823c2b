"""A small local fake of Prolific's REST API (the endpoints lexgold.prolific.client calls, as
docs.prolific.com documents them), served from a thread of the test: the real API cannot be
reached from CI. It checks the ``Authorization: Token ...`` header, pages the submission list
(``page``/``page_size``, ``_links.next.href``), refuses a rejection without a 100-character
message or a known ``rejection_category``, and records every call."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

TOKEN = "test-token-1234"
#: Prolific's rejection categories ("Approve or reject a submission")
CATEGORIES = {"TOO_QUICKLY", "TOO_SLOWLY", "FAILED_INSTRUCTIONS", "INCOMP_LONGITUDINAL",
              "FAILED_CHECK", "LOW_EFFORT", "MALINGERING", "NO_CODE", "BAD_CODE", "NO_DATA",
              "UNSUPP_DEVICE", "OTHER"}


class FakeProlific:
    def __init__(self, submissions: list[dict]):
        self.submissions = [dict(s) for s in submissions]
        self.calls: list[tuple[str, str, dict | None]] = []
        #: (status, headers[, method]): the answers to the next requests (of that method)
        self.fail: list[tuple] = []
        self.bulk: dict[str, str] = {}
        self.paid: list[str] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                fake.handle(self, "GET")

            def do_POST(self):
                fake.handle(self, "POST")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()

    def calls_to(self, fragment: str, method: str = "POST") -> list:
        return [c for c in self.calls if c[0] == method and fragment in c[1]]

    # -- the endpoints --------------------------------------------------------------------------

    def handle(self, request, method):
        length = int(request.headers.get("Content-Length") or 0)
        body = json.loads(request.rfile.read(length) or b"null") if length else None
        self.calls.append((method, request.path, body))
        if request.headers.get("Authorization") != f"Token {TOKEN}":
            return self.answer(request, 401, {"error": {"detail": "Invalid token."}})
        if self.fail and (len(self.fail[0]) < 3 or self.fail[0][2] == method):
            status, headers = self.fail.pop(0)[:2]
            return self.answer(request, status, {"error": {"detail": "try later"}}, headers)
        url = urlsplit(request.path)
        parts = [p for p in url.path.split("/") if p]
        if method == "GET" and url.path == "/api/v1/submissions/":
            return self.list(request, parse_qs(url.query))
        if method == "POST" and parts[:3] == ["api", "v1", "submissions"] and len(parts) == 5:
            found = next((s for s in self.submissions if s["id"] == parts[3]), None)
            if found is None:
                return self.answer(request, 404, {"error": {"detail": "Not found."}})
            if parts[4] == "transition":
                return self.transition(request, found, body or {})
            if parts[4] == "request-return":
                if not isinstance((body or {}).get("request_return_reasons"), list):
                    return self.answer(request, 400, {"error": {"detail": "reasons"}})
                found["return_requested"] = "2026-11-24T12:00:00Z"
                return self.answer(request, 200, {"id": found["id"], "status": found["status"]})
        if method == "POST" and url.path == "/api/v1/submissions/bonus-payments/":
            lines = [line.split(",") for line in body["csv_bonuses"].splitlines() if line]
            known = {s["participant_id"] for s in self.submissions
                     if s["study_id"] == body["study_id"]}
            if any(pid not in known for pid, _ in lines):
                return self.answer(request, 400, {"error": {"detail": "unknown participant"}})
            bulk = f"bulk{len(self.bulk) + 1}"
            self.bulk[bulk] = body["csv_bonuses"]
            return self.answer(request, 201, {"id": bulk, "study": body["study_id"],
                                              "amount": sum(float(a) for _, a in lines)})
        if method == "POST" and parts[:3] == ["api", "v1", "bulk-bonus-payments"] \
                and parts[4:] == ["pay"]:
            if parts[3] not in self.bulk:
                return self.answer(request, 404, {"error": {"detail": "Not found."}})
            self.paid.append(parts[3])
            return self.answer(request, 202, {})
        return self.answer(request, 404, {"error": {"detail": "Not found."}})

    def list(self, request, query):
        study = query.get("study", [""])[0]
        size = int(query.get("page_size", ["20"])[0])
        number = int(query.get("page", ["1"])[0])
        mine = [s for s in self.submissions if s["study_id"] == study]
        page = mine[(number - 1) * size:number * size]
        more = number * size < len(mine)
        following = (f"{self.url}/api/v1/submissions/?study={study}&page_size={size}"
                     f"&page={number + 1}") if more else None
        return self.answer(request, 200, {
            "results": page, "_links": {"next": {"href": following, "title": "Next"}},
            "meta": {"count": len(mine)}})

    def transition(self, request, found, body):
        action = body.get("action")
        if action == "APPROVE":
            found["status"] = "APPROVED"
        elif action == "REJECT":
            if len(body.get("message", "")) < 100 or body.get("rejection_category") \
                    not in CATEGORIES:
                return self.answer(request, 400, {"error": {"detail": "bad rejection"}})
            found["status"] = "REJECTED"
        else:
            return self.answer(request, 400, {"error": {"detail": "bad action"}})
        return self.answer(request, 200, {"id": found["id"], "status": found["status"]})

    @staticmethod
    def answer(request, status, data, headers=None):
        text = json.dumps(data).encode()
        request.send_response(status)
        request.send_header("Content-Type", "application/json")
        request.send_header("Content-Length", str(len(text)))
        for key, value in (headers or {}).items():
            request.send_header(key, value)
        request.end_headers()
        request.wfile.write(text)
