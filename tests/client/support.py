"""Helpers of the client's tests: answers for ``httpx.MockTransport`` and a transport that records
what reached the real server. Nothing here sends traffic beyond loopback."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx

LOOPBACK = "http://127.0.0.1:9"  # never contacted: the mock transports answer in-process


def call_json(call_id: str = "cll_1", status: str = "queued", **fields: Any) -> dict[str, Any]:
    return {"call_id": call_id, "status": status, **fields}


class Recorder(httpx.BaseTransport):
    """Forwards every request to ``inner`` and keeps each request and its answer's status."""

    def __init__(self, inner: httpx.BaseTransport | None = None,
                 meddle: Callable[[httpx.Request, httpx.Response], None] | None = None) -> None:
        self.inner = inner or httpx.HTTPTransport()
        self.meddle = meddle
        self.seen: list[tuple[httpx.Request, httpx.Response]] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.inner.handle_request(request)
        self.seen.append((request, response))
        if self.meddle is not None:
            self.meddle(request, response)
        return response

    def requests(self, method: str, path: str) -> list[httpx.Request]:
        return [request for request, _ in self.seen if request.method == method and request.url.path == path]

    def close(self) -> None:
        self.inner.close()
