"""Outermost ASGI layer: request id (``X-Request-Id``), one access log line, Prometheus metrics.

The access line (``http.request``) carries method, path, route, status, duration_ms, request_id,
and the key_id and tenant_id of the caller when its key was recognised (refused ones included).
Granian's own access log stays off (``callwright serve``): this line replaces it.

It wraps Litestar's handler so unmatched routes and errors are logged and counted too, and it
watches a changing request's client (``disconnects``): work for a client that has gone is not
committed.
Query strings and headers are never logged: they may carry tokens.
"""

from __future__ import annotations

import re
import time
import uuid
from contextlib import nullcontext
from typing import Any

import structlog
from prometheus_client import CollectorRegistry, Counter, Histogram

from application import client_presence, wait_budget
from entrypoints.http.disconnects import WATCHED, DisconnectWatch

log = structlog.get_logger("callwright.http")
_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")


class HttpMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        self.requests = Counter(
            "callwright_http_requests_total", "HTTP requests answered", ["method", "route", "status"], registry=registry
        )
        self.latency = Histogram(
            "callwright_http_request_duration_seconds", "HTTP request latency", ["method", "route"], registry=registry,
            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5),
        )


class VoiceMetrics:
    """The voice sockets' own latency: from a frame's reading to the end of its handling, how late
    the event loop runs (what a frame waits before it is read), and from the end of an utterance to
    the first frame of the reply."""

    def __init__(self, registry: CollectorRegistry) -> None:
        buckets = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5)
        self.frame = Histogram("callwright_voice_frame_seconds", "Server time per inbound audio frame",
                               registry=registry, buckets=buckets)
        # While media streams are open, how late the event loop runs a 10 ms timer: an arriving frame
        # waits about this long before it is read (the frame histogram starts once it is read).
        self.loop_lag = Histogram("callwright_voice_loop_lag_seconds", "Event loop lateness while media streams are open",
                                  registry=registry, buckets=buckets)
        self.turn = Histogram("callwright_voice_turn_seconds", "End of an utterance to the reply's first frame or text",
                              ["transport"], registry=registry, buckets=buckets)
        self.sessions = Counter("callwright_voice_sessions_total", "Voice sockets by how they ended",
                                ["transport", "reason"], registry=registry)


def _incoming_request_id(scope: dict[str, Any]) -> str | None:
    for name, value in scope.get("headers", ()):
        if name == b"x-request-id":
            text = value.decode("latin-1")
            return text if _REQUEST_ID.match(text) else None
    return None


class RequestContext:
    """``wait_seconds``: what all of a request's waits for database connections may take together
    (``CALLWRIGHT_DATABASE_WAIT_SECONDS``), so an outage costs a request one wait, then 503."""

    def __init__(self, app: Any, metrics: HttpMetrics, *, wait_seconds: float | None = None) -> None:
        self.app = app
        self.metrics = metrics
        self.wait_seconds = wait_seconds

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = _incoming_request_id(scope) or uuid.uuid4().hex
        scope.setdefault("state", {})["request_id"] = request_id
        started = time.perf_counter()
        status_holder = {"status": 500}

        async def send_with_id(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                status_holder["status"] = message["status"]
                headers = list(message.get("headers", []))
                headers.append((b"x-request-id", request_id.encode()))
                message = {**message, "headers": headers}
            await send(message)

        structlog.contextvars.bind_contextvars(request_id=request_id)
        watch = DisconnectWatch(receive) if scope.get("method") in WATCHED else None
        presence = client_presence.serving(watch) if watch is not None else None
        budget = wait_budget.budget(self.wait_seconds) if self.wait_seconds is not None else nullcontext()
        try:
            with budget:
                await self.app(scope, watch.receive if watch is not None else receive, send_with_id)
        finally:
            if watch is not None and presence is not None:
                client_presence.done(presence)
                await watch.close()
            elapsed = time.perf_counter() - started
            route = scope.get("path_template") or "unmatched"
            method = scope.get("method", "GET")
            self.metrics.requests.labels(method, route, str(status_holder["status"])).inc()
            self.metrics.latency.labels(method, route).observe(elapsed)
            state = scope.get("state", {})
            principal, refusal = state.get("principal"), state.get("refusal") or {}
            log.info(
                "http.request",
                method=method,
                path=scope.get("path", ""),
                route=route,
                status=status_holder["status"],
                duration_ms=round(elapsed * 1000, 2),
                tenant_id=getattr(principal, "tenant_id", None) or refusal.get("tenant_id"),
                key_id=getattr(principal, "key_id", None) or refusal.get("key_id"),
                **({"error_code": refusal["error_code"]} if refusal else {}),
            )
            structlog.contextvars.unbind_contextvars("request_id")
