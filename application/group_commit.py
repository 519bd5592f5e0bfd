"""Group commit: the events of concurrent commands are appended in one save.

Every append to an event table holds that table's lock until the commit is on disk, so saves
run one at a time; one save of many commands' events costs about as much as one save of one.
A command still succeeds or fails alone: when a group conflicts (a concurrent writer of the
same aggregate), its commands are saved one by one and only the conflicting one fails.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import Future
from typing import Any

from eventsourcing.persistence import IntegrityError

MAX_COMMANDS = 256


class GroupCommitter:
    def __init__(self, save: Callable[..., Sequence[Any]], *, name: str = "group-commit") -> None:
        self._save = save  # Application.save: takes domain events, returns recordings
        self._queue: queue.SimpleQueue[tuple[list[Any], Future[int]] | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._stopped = False
        self._thread.start()

    def submit(self, events: list[Any]) -> int:
        """Append ``events`` atomically (with other commands' events); the highest position, or
        ``IntegrityError`` when a concurrent writer of one of these aggregates won."""
        return self.enqueue(events).result()

    def enqueue(self, events: list[Any]) -> Future[int]:
        """``submit`` without waiting: the future of its result (for ``asyncio.wrap_future``)."""
        if self._stopped:
            raise RuntimeError("the group committer is stopped")
        future: Future[int] = Future()
        self._queue.put((events, future))
        return future

    def stop(self) -> None:
        self._stopped = True
        self._queue.put(None)
        self._thread.join(timeout=10)

    def _run(self) -> None:
        while True:
            first = self._queue.get()
            if first is None:
                return
            group = [first]
            while len(group) < MAX_COMMANDS:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is None:
                    self._queue.put(None)  # stop after this group
                    break
                group.append(item)
            self._commit(group)

    def _commit(self, group: list[tuple[list[Any], Future[int]]]) -> None:
        if len(group) > 1:
            try:
                recordings = self._save(*[event for events, _ in group for event in events])
            except IntegrityError:
                pass  # someone in the group conflicts: find out who, one by one
            except BaseException as exc:  # the database is down: every command fails alike
                for _, future in group:
                    future.set_exception(exc)
                return
            else:
                position = max((r.notification.id for r in recordings), default=0)
                for _, future in group:
                    future.set_result(position)
                return
        for events, future in group:
            try:
                recordings = self._save(*events)
            except BaseException as exc:
                future.set_exception(exc)
            else:
                future.set_result(max((r.notification.id for r in recordings), default=0))


class LoopGroupCommitter:
    """Group commit on an asyncio event loop: while one group's append is in flight, the commands
    that arrive queue up and go together in the next. No thread, so no GIL hand-over per round
    trip; the loop serves other requests while the database works."""

    def __init__(self, to_stored: Callable[[Any], Any], append: Callable[[list[Any]], Awaitable[int]]) -> None:
        self._to_stored = to_stored  # Mapper.to_stored_event
        self._append = append  # async: stored events -> highest notification id, or IntegrityError
        self._pending: list[tuple[list[Any], asyncio.Future[int]]] = []
        self._draining = False

    async def submit(self, events: list[Any]) -> int:
        future: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._pending.append(([self._to_stored(event) for event in events], future))
        if not self._draining:
            self._draining = True
            asyncio.get_running_loop().create_task(self._drain())
        return await future

    async def _drain(self) -> None:
        try:
            while self._pending:
                group, self._pending = self._pending[:MAX_COMMANDS], self._pending[MAX_COMMANDS:]
                await self._commit(group)
        finally:
            self._draining = False

    async def _commit(self, group: list[tuple[list[Any], asyncio.Future[int]]]) -> None:
        if len(group) > 1:
            try:
                position = await self._append([event for events, _ in group for event in events])
            except IntegrityError:
                pass  # someone in the group conflicts: find out who, one by one
            except Exception as exc:  # the database is down: every command fails alike
                for _, future in group:
                    _settle(future, exception=exc)
                return
            except BaseException:  # the loop is closing: nobody will read the answers
                for _, future in group:
                    future.cancel()
                raise
            else:
                for _, future in group:
                    _settle(future, result=position)
                return
        for events, future in group:
            try:
                position = await self._append(events)
            except Exception as exc:
                _settle(future, exception=exc)
            except BaseException:
                future.cancel()
                raise
            else:
                _settle(future, result=position)


def _settle(future: asyncio.Future[int], *, result: int = 0, exception: BaseException | None = None) -> None:
    if future.done():  # the request gave up (client gone); the append stands
        return
    if exception is not None:
        future.set_exception(exception)
    else:
        future.set_result(result)
