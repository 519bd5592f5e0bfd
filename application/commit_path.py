"""The one path a boundary's events take to its event store (decisions 18, 20 and 30).

``CommitPath`` is the ``Committer`` every ``BoundaryApplication`` commits through; the composition
root chooses its kind: ``direct`` (each command saves alone: unit tests, tools) or ``grouped``
(concurrent commands share one save, on a thread). While an HTTP server runs, ``attach_loop``
adds the loop's own group committer over the asynchronous appender: commits made on the loop
append there with no thread hand-off, and commits from other threads join the loop's groups, so a
process has one writer and one holder of the event table's lock; only background writers that
must not take the loop's time commit ``beside_the_loop``, on the thread path (decision 43).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Protocol

from application.group_commit import GroupCommitter, LoopGroupCommitter

LOOP_COMMIT_TIMEOUT = 60.0
_BESIDE_THE_LOOP: ContextVar[bool] = ContextVar("commit_beside_the_loop", default=False)


@contextmanager
def beside_the_loop() -> Iterator[None]:
    """Commits made inside, from a thread, go through the thread's group committer even while a
    loop is attached: for background writers whose appends must not take the loop's time (a live
    call's turns, decision 43). The events table's lock then has two holders in turn."""
    token = _BESIDE_THE_LOOP.set(True)
    try:
        yield
    finally:
        _BESIDE_THE_LOOP.reset(token)


class Committer(Protocol):
    def commit(self, events: list[Any]) -> int:
        """Append ``events`` atomically from a thread; the highest notification id, or
        ``IntegrityError`` when a concurrent writer of one of their aggregates won."""
        ...

    async def commit_async(self, events: list[Any]) -> int:
        """``commit`` from the event loop, without blocking it."""
        ...

    @property
    def asynchronous(self) -> bool:
        """Does ``commit_async`` avoid a thread of its own (group or loop commits)?"""
        ...

    def close(self) -> None: ...


class CommitPath:
    def __init__(self, save: Callable[..., Sequence[Any]], to_stored: Callable[[Any], Any], *, grouped: bool,
                 name: str = "group-commit") -> None:
        self._save = save  # Application.save: domain events -> recordings
        self._to_stored = to_stored  # Mapper.to_stored_event
        self._group = GroupCommitter(save, name=name) if grouped else None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_group: LoopGroupCommitter | None = None

    # -- the loop's appender (the HTTP server's lifespan) -------------------------------------------

    def attach_loop(self, append: Callable[[list[Any]], Awaitable[int]]) -> None:
        """From now on commits append on the running loop through ``append`` (async: stored events
        -> highest notification id), in groups."""
        self._loop = asyncio.get_running_loop()
        self._loop_group = LoopGroupCommitter(self._to_stored, append)

    def detach_loop(self) -> None:
        """New commits go back to the thread path; those already handed to the loop still land."""
        self._loop_group = None
        self._loop = None

    @property
    def asynchronous(self) -> bool:
        return self._loop_group is not None or self._group is not None

    # -- committing ---------------------------------------------------------------------------------

    def commit(self, events: list[Any]) -> int:
        loop, loop_group = self._loop, self._loop_group
        if self._group is not None and _BESIDE_THE_LOOP.get():
            return self._group.submit(events)
        if loop_group is not None and loop is not None and not loop.is_closed() and not _running_on(loop):
            # (blocking the loop's own thread on the loop would never return: that caller saves below)
            return asyncio.run_coroutine_threadsafe(loop_group.submit(events), loop).result(LOOP_COMMIT_TIMEOUT)
        if self._group is not None:
            return self._group.submit(events)
        return _position(self._save(*events))

    async def commit_async(self, events: list[Any]) -> int:
        if self._loop_group is not None:
            return await self._loop_group.submit(events)
        if self._group is not None:
            return await asyncio.wrap_future(self._group.enqueue(events))
        raise RuntimeError("commit_async needs loop commits or group commit")

    def close(self) -> None:
        if self._group is not None:
            self._group.stop()
            self._group = None


def direct(save: Callable[..., Sequence[Any]], to_stored: Callable[[Any], Any], name: str) -> CommitPath:
    """Each command saves alone (unit tests on popo, one-shot tools)."""
    return CommitPath(save, to_stored, grouped=False, name=name)


def grouped(save: Callable[..., Sequence[Any]], to_stored: Callable[[Any], Any], name: str) -> CommitPath:
    """Concurrent commands share one save (every process that serves or reacts)."""
    return CommitPath(save, to_stored, grouped=True, name=name)


CommitPathFactory = Callable[[Callable[..., Sequence[Any]], Callable[[Any], Any], str], CommitPath]


def _running_on(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False


def _position(recordings: Sequence[Any]) -> int:
    return max((r.notification.id for r in recordings), default=0)
