"""A small local fake of an OpenAI-compatible chat-completions server (``POST
.../chat/completions``, the answer in ``choices[0].message.content``), served from a thread on
loopback: what ``lexgold machine rate`` is tested and benchmarked against (tests/
test_machine_rate.py, tests/test_docs.py for docs/machine.md, bench/bench_machine_rate.py).
Standard library only.

By default it answers every numbered question of the user message (``3. How similar are ...``)
with ``3: R``, R a number on 0-6 fixed by the question's text (CRC-32), so reruns agree.
``answer`` replaces that (a function of the user message); ``fail`` queues (status, headers)
answers for the next requests; ``delay_s`` holds every answer back (time-outs, latency);
``die_after`` drops the connection of every request after that many answered ones (a server
that dies mid-run); ``key`` demands ``Authorization: Bearer KEY`` and, like some hosted APIs,
echoes a wrong key in its 401. Every request is recorded in ``calls``.

    python bench/chat_fake.py --port 8099     # serve until Ctrl-C (URL printed)
"""

from __future__ import annotations

import argparse
import json
import re
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

_QUESTION = re.compile(r"^\s*(\d+)\.\s+(.*)$")


def default_answer(user: str) -> str:
    """``N: R`` per numbered question, R = CRC-32 of the question modulo 7."""
    lines = []
    for line in user.splitlines():
        found = _QUESTION.match(line)
        if found:
            lines.append(f"{found.group(1)}: {zlib.crc32(found.group(2).encode()) % 7}")
    return "\n".join(lines)


class FakeChat:
    def __init__(self, *, key: str | None = None, answer=default_answer, delay_s: float = 0.0,
                 port: int = 0):
        self.key, self.answer, self.delay_s = key, answer, delay_s
        self.calls: list[dict] = []
        self.fail: list[tuple[int, dict]] = []
        self.die_after: int | None = None
        self.answered = 0
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                fake.handle(self)

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_port}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,),
                                       daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def handle(self, request):
        length = int(request.headers.get("Content-Length") or 0)
        raw = request.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            body = None
        with self._lock:
            self.calls.append({"path": request.path, "authorization":
                               request.headers.get("Authorization"), "body": body})
            dead = self.die_after is not None and self.answered >= self.die_after
            failure = self.fail.pop(0) if self.fail and not dead else None
        if dead:
            request.close_connection = True
            request.connection.shutdown(2)      # no answer: the connection just ends
            return
        if not request.path.endswith("/chat/completions"):
            return self.send(request, 404, {"error": {"message": "not found"}})
        if self.key is not None and request.headers.get("Authorization") != f"Bearer {self.key}":
            given = request.headers.get("Authorization", "")
            return self.send(request, 401, {"error": {
                "message": f"Incorrect API key provided: {given.removeprefix('Bearer ')}"}})
        if failure is not None:
            status, headers = failure
            return self.send(request, status, {"error": {"message": "try later"}}, headers)
        if self.delay_s:
            time.sleep(self.delay_s)
        user = next((m.get("content", "") for m in reversed((body or {}).get("messages", []))
                     if m.get("role") == "user"), "")
        content = self.answer(user)
        with self._lock:
            self.answered += 1
        return self.send(request, 200, {"id": "chatcmpl-fake", "object": "chat.completion",
                                        "model": (body or {}).get("model"),
                                        "choices": [{"index": 0, "finish_reason": "stop",
                                                     "message": {"role": "assistant",
                                                                 "content": content}}]})

    @staticmethod
    def send(request, status, payload, headers=None):
        data = json.dumps(payload).encode()
        try:
            request.send_response(status)
            request.send_header("Content-Type", "application/json")
            request.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                request.send_header(name, value)
            request.end_headers()
            request.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):    # the client gave up (time-out)
            pass


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=8099)
    parser.add_argument("--delay", type=float, default=0.0, help="seconds per answer")
    args = parser.parse_args()
    fake = FakeChat(port=args.port, delay_s=args.delay)
    print(fake.url, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        fake.close()
