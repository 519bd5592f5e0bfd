"""The calls pages' live streams (``text/event-stream``): the server asks the API, in process and as
the session, about once a second, and sends ``event: changed`` when what the page shows changed;
the page then fetches its region again (static/app.js). A comment every ``HEARTBEAT`` seconds keeps
proxies from closing the stream, and the session is checked again then (``event: login`` when it
has ended). A stream lasts at most ``LIFETIME`` seconds; the browser reconnects by itself.

The list's stream compares the first page's digest with the one the page was rendered with
(``seen``), so a change between the render and the connection is not missed. The call's stream
ends once the call is final, telling the browser not to come back (``retry`` of a day, then a 204,
which makes an ``EventSource`` stop for good).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from litestar import Request, Response
from litestar.response import ServerSentEvent, ServerSentEventMessage

from application.accounts.sessions import authenticate_session
from application.errors import AuthenticationError
from entrypoints.http.blocking import run_blocking
from entrypoints.http.dashboard.api import Answer, Api
from entrypoints.http.dashboard.calls_filters import FINAL, digest
from entrypoints.http.dashboard.render import HEADERS
from entrypoints.http.dashboard.session import Session, dashboard_of

POLL = 1.0
SLOW_POLL = 5.0  # after a refusal
HEARTBEAT = 15.0
LIFETIME = 600.0
RECONNECT_MS = 2000
NEVER_MS = 86_400_000
STREAM_HEADERS = {**HEADERS, "X-Accel-Buffering": "no"}

Probe = Callable[[], Awaitable[tuple[str | None, bool, bool]]]  # (digest or None when refused, final, slow down)


async def _session_alive(request: Request[Any, Any, Any], session: Session) -> bool:
    try:
        await run_blocking(authenticate_session, dashboard_of(request).accounts, session.token)
    except AuthenticationError:
        return False
    return True


async def _changes(request: Request[Any, Any, Any], session: Session, probe: Probe,
                   seen: str | None) -> AsyncIterator[ServerSentEventMessage]:
    yield ServerSentEventMessage(data=None, retry=RECONNECT_MS, comment="live")
    started = last_beat = time.monotonic()
    while time.monotonic() - started < LIFETIME:
        current, final, slow = await probe()
        if current is not None and seen is not None and current != seen:
            yield ServerSentEventMessage(event="changed", data=current)
        seen = current if current is not None else seen
        if final:
            yield ServerSentEventMessage(data=None, retry=NEVER_MS, comment="final")
            return
        if time.monotonic() - last_beat >= HEARTBEAT:
            last_beat = time.monotonic()
            if not await _session_alive(request, session):
                yield ServerSentEventMessage(event="login", data="{}")
                return
            yield ServerSentEventMessage(data=None, comment="heartbeat")
        await asyncio.sleep(SLOW_POLL if slow else POLL)


def stream(request: Request[Any, Any, Any], session: Session, probe: Probe, seen: str | None) -> ServerSentEvent:
    return ServerSentEvent(_changes(request, session, probe, seen), headers=STREAM_HEADERS)


def _slow(answer: Answer) -> bool:
    """Refused (the session's rate budget is not spent by polls: in-process calls are not counted)."""
    return not answer.ok


def list_probe(api: Api, params: dict[str, str]) -> Probe:
    async def probe() -> tuple[str | None, bool, bool]:
        answer = await api.get("/v1/calls", params=params)
        return (digest(answer.body) if answer.ok else None), False, _slow(answer)

    return probe


def call_digest(record: dict[str, Any]) -> str:
    seen = [record.get(k) for k in ("status", "started_at", "ended_at", "confidence", "duration_seconds", "cost_total",
                                    "error_code", "recording_url", "outcome")]
    seen += [len(record.get("transcript") or ""), len(record.get("sms") or [])]
    return hashlib.sha256(json.dumps(seen, sort_keys=True, default=str).encode()).hexdigest()[:20]


def call_probe(api: Api, call_id: str) -> Probe:
    async def probe() -> tuple[str | None, bool, bool]:
        answer = await api.get(f"/v1/calls/{call_id}")
        if not answer.ok:
            return None, answer.status == 404, True
        return call_digest(answer.body), answer.body.get("status") in FINAL, _slow(answer)

    return probe


def ended() -> Response[str]:
    """No stream: an ``EventSource`` that gets a 204 stops reconnecting."""
    return Response("", status_code=204, headers=HEADERS)
