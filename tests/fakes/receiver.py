"""A loopback webhook receiver for tests: records every request and answers from a script."""

from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes
    at: float


@dataclass
class Answer:
    status: int = 200
    body: bytes = b"ok"
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


class _Server(ThreadingHTTPServer):
    request_queue_size = 128  # a dispatcher opens dozens of connections at once (the default is 5)


class Receiver:
    """``answers`` are used in order, then ``default``; ``url`` is http://127.0.0.1:<port>/hook."""

    def __init__(self, *answers: Answer, default: Answer | None = None) -> None:
        self.received: list[Received] = []
        self._answers: deque[Answer] = deque(answers)
        self._default = default or Answer()
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                with receiver._lock:
                    receiver.received.append(Received(self.path, dict(self.headers.items()), body, time.monotonic()))
                    answer = receiver._answers.popleft() if receiver._answers else receiver._default
                if answer.delay:
                    time.sleep(answer.delay)
                self.send_response(answer.status)
                for name, value in answer.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(answer.body)))
                self.end_headers()
                self.wfile.write(answer.body)

            do_GET = do_POST  # noqa: N815 - a followed redirect would arrive as a GET

            def log_message(self, *_: Any) -> None:
                pass

        self._server = _Server(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/hook"
        self._thread = threading.Thread(target=self._server.serve_forever, name="receiver", daemon=True)
        self._thread.start()

    def wait_for(self, count: int, timeout: float = 5.0) -> list[Received]:
        deadline = time.monotonic() + timeout
        while len(self.received) < count:
            assert time.monotonic() < deadline, f"{len(self.received)} of {count} requests arrived"
            time.sleep(0.01)
        return list(self.received)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
