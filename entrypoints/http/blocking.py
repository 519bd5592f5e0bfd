"""Running the synchronous core (eventsourcing, psycopg) from async handlers.

A plain thread pool through ``loop.run_in_executor``: on the hot paths (authentication, call
creation) anyio's task-group machinery cost more than the work handed to the thread. The call
runs in a copy of the caller's context, as anyio's does: the request's log fields and whether its
client still waits (``application.client_presence``) go with it.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")

_EXECUTOR = ThreadPoolExecutor(max_workers=32, thread_name_prefix="core")


async def run_blocking(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    context = contextvars.copy_context()
    return await asyncio.get_running_loop().run_in_executor(_EXECUTOR, context.run,
                                                            functools.partial(fn, *args, **kwargs))
