"""Batches of blocking calls made from an event loop: what arrives while a batch is under way goes
together in the next one (the webhook dispatcher's leases and results, docs/decisions.md 45).

One thread hop and one commit serve a whole batch instead of one each; a caller still gets its own
answer, or the batch's exception.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")

LIMIT = 256


class Batches(Generic[T, R]):
    def __init__(self, run: Callable[[list[T]], Sequence[R]], *, limit: int = LIMIT) -> None:
        self._run = run  # blocking: items -> one result per item, in order; runs on a worker thread
        self._limit = limit
        self._pending: list[tuple[T, asyncio.Future[R]]] = []
        self._draining = False

    async def submit(self, item: T) -> R:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[R] = loop.create_future()
        self._pending.append((item, future))
        if not self._draining:
            self._draining = True
            loop.create_task(self._drain())
        return await future

    async def _drain(self) -> None:
        try:
            while self._pending:
                group, self._pending = self._pending[: self._limit], self._pending[self._limit:]
                try:
                    results = await asyncio.to_thread(self._run, [item for item, _ in group])
                except Exception as exc:
                    for _, future in group:
                        if not future.done():
                            future.set_exception(exc)
                    continue
                for (_, future), result in zip(group, results, strict=True):
                    if not future.done():
                        future.set_result(result)
        finally:
            self._draining = False
