"""How long the work for one client may still wait for database connections, in all.

A request may take connections from more than one pool (its key's lookup, then the event store).
During an outage each take would wait its pool's whole timeout, so a request that needs two waited
twice as long as ``CALLWRIGHT_DATABASE_WAIT_SECONDS`` before its 503. The HTTP edge opens one
budget per request (``budget``); the pools cut each wait to what is left (``remaining``). Work done
for no client (reactors, periodic jobs) has no budget: each wait is the pool's own.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

# When the current client's connection waits must end (time.monotonic()). Threads the request hands
# work to run in a copy of its context, so the deadline goes with them.
_deadline: ContextVar[float | None] = ContextVar("connection_wait_deadline", default=None)


@contextmanager
def budget(seconds: float) -> Iterator[None]:
    """All the connection waits inside share ``seconds``."""
    token = _deadline.set(time.monotonic() + seconds)
    try:
        yield
    finally:
        _deadline.reset(token)


def remaining(wait: float) -> float:
    """``wait`` cut to what the current budget has left (at most ``wait``; 0 or less: spent)."""
    deadline = _deadline.get()
    return wait if deadline is None else min(wait, deadline - time.monotonic())
