"""Knowing that a client has gone while its request still works.

ASGI says so with an ``http.disconnect`` message, which only a call to ``receive`` returns. Once
a request's body has been read, the app no longer calls ``receive``; ``DisconnectWatch`` then
makes that call on its behalf, so that ``gone`` turns true when the server reports the client's
departure (and hands the message to the app if it asks again). Only requests that change
something are watched (``WATCHED``): their commits ask first (``application.client_presence``).

The server's word takes a moment to arrive (about a millisecond with granian), so a request that
has run for ``SLOW_SECONDS`` (long enough for a client to give up: it waited for the database)
starts listening and waits up to ``SETTLE_SECONDS`` for it before committing; a quick request
never waits, and never pays for a listening task (docs/decisions.md 44).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from typing import Any

WATCHED = frozenset({"POST", "PUT", "PATCH", "DELETE"})
SLOW_SECONDS = 0.5
SETTLE_SECONDS = 0.02


class DisconnectWatch:
    def __init__(self, receive: Any) -> None:
        self._receive = receive
        self._started = time.monotonic()
        self._loop = asyncio.get_running_loop()
        self._listener: asyncio.Task[Any] | None = None
        self._body_read = False
        self._gone = False
        self._heard = threading.Event()  # the listener has its answer

    def gone(self) -> bool:
        if self._undecided():
            if self._on_loop():
                self._listen()
            else:
                self._loop.call_soon_threadsafe(self._listen)
                self._heard.wait(SETTLE_SECONDS)
        return self._gone

    async def settle(self) -> None:
        if self._undecided():
            await asyncio.wait({self._listen()}, timeout=SETTLE_SECONDS)

    async def receive(self) -> Any:
        if self._body_read:  # the app asks again: it gets what the listener hears
            return await asyncio.shield(self._listen())
        message = await self._receive()
        if message["type"] == "http.disconnect":
            self._gone = True
        elif message["type"] == "http.request" and not message.get("more_body", False):
            self._body_read = True
        return message

    async def close(self) -> None:
        """The response is sent: stop listening."""
        if self._listener is not None and not self._listener.done():
            self._listener.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._listener

    def _listen(self) -> asyncio.Task[Any]:
        """The one pending ``receive`` after the body, started on first need (on the loop)."""
        if self._listener is None:
            self._listener = asyncio.ensure_future(self._hear())
        return self._listener

    async def _hear(self) -> Any:
        try:
            message = await self._receive()
            if message["type"] == "http.disconnect":
                self._gone = True
            return message
        finally:
            self._heard.set()

    def _undecided(self) -> bool:
        return (not self._gone and self._body_read and not self._heard.is_set()
                and time.monotonic() - self._started >= SLOW_SECONDS)

    def _on_loop(self) -> bool:
        try:
            return asyncio.get_running_loop() is self._loop
        except RuntimeError:
            return False
