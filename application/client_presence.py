"""Whether the client a command works for still waits for its answer.

A request that waited for the database while its client gave up (a timeout, a closed connection)
must not commit afterwards: the client saw no answer, and a retry without an ``Idempotency-Key``
would create the same thing twice. The HTTP edge tells, per request, how to know the client has
gone (``serving``); every commit asks first (``ensure_client_waits``). Commits made for no client
(reactors, periodic jobs, tools) always go ahead. A commit already handed to the event store is
not taken back: only work that had not reached its commit is dropped.
"""

from __future__ import annotations

from contextvars import ContextVar, Token
from typing import Protocol

from application.errors import ClientGoneError


class Presence(Protocol):
    def gone(self) -> bool:
        """Has the client left? (From a thread it may wait a few milliseconds for the server's word.)"""
        ...

    async def settle(self) -> None:
        """On the event loop: give the server a moment to report a departure already under way."""
        ...


_presence: ContextVar[Presence | None] = ContextVar("client_presence", default=None)


def serving(presence: Presence) -> Token[Presence | None]:
    """From now on in this context, ``presence`` tells whether the client left; undo with ``done``."""
    return _presence.set(presence)


def done(token: Token[Presence | None]) -> None:
    _presence.reset(token)


def ensure_client_waits() -> None:
    """Raise ``ClientGoneError`` when the client this context works for has gone."""
    presence = _presence.get()
    if presence is not None and presence.gone():
        raise ClientGoneError("the client closed the request before it was committed; nothing was saved")


async def ensure_client_still_waits() -> None:
    """``ensure_client_waits`` on the event loop."""
    presence = _presence.get()
    if presence is not None:
        await presence.settle()
    ensure_client_waits()
