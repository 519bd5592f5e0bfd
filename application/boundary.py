"""Base of every event-sourced Application here: atomic commits, lookups, retried fact appends,
and the notification position the read side must reach for read-your-writes."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError, Application
from eventsourcing.domain import Aggregate
from eventsourcing.persistence import IntegrityError
from eventsourcing.utils import get_topic

from application.errors import ConflictError, FieldError, NotFoundError
from application.group_commit import GroupCommitter, LoopGroupCommitter
from domain import ids

A = TypeVar("A", bound=Aggregate)
T = TypeVar("T")


class BoundaryApplication(Application[UUID]):
    """One consistency boundary; every command ends in one atomic ``save``."""

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        super().__init__(env)
        self._after_save: list[Callable[[int, frozenset[str]], Any]] = []
        self.known_head = 0  # highest notification id this process has saved or seen
        self._committer: GroupCommitter | None = None
        self._loop_committer: LoopGroupCommitter | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def enable_group_commit(self) -> None:
        """From now on, commits of concurrent commands share one save (see ``group_commit``)."""
        if self._committer is None:
            self._committer = GroupCommitter(self.save, name=f"group-commit-{self.name}")

    def close(self) -> None:
        if self._committer is not None:
            self._committer.stop()
            self._committer = None
        super().close()

    def on_saved(self, callback: Callable[[int, frozenset[str]], Any]) -> None:
        """Register a callable told, after each save, the highest notification id and the topics
        of the events saved."""
        self._after_save.append(callback)

    def commit(self, *aggregates: Aggregate, conflict: str = "conflict") -> int:
        """Save atomically; a concurrent writer of the same aggregate gives ``ConflictError``.

        From a thread while loop commits are on, the save joins the loop's groups (one writer per
        process: bigger groups, no second holder of the table lock)."""
        try:
            if self._committer is not None or self._loop_committer is not None:
                events = [event for aggregate in aggregates for event in aggregate.collect_events()]
                position = self._submit_from_thread(events) if events else 0
            else:
                recordings = self.save(*aggregates)
                events = [recording.domain_event for recording in recordings]
                position = max((r.notification.id for r in recordings), default=0)
        except IntegrityError as exc:
            raise ConflictError("a concurrent change won; try again", code=conflict) from exc
        self._saved(position, events)
        return position

    def _submit_from_thread(self, events: list[Any]) -> int:
        loop, committer = self._loop, self._loop_committer
        if committer is not None and loop is not None and not loop.is_closed():
            try:
                on_loop = asyncio.get_running_loop() is loop
            except RuntimeError:
                on_loop = False
            if not on_loop:  # blocking the loop's own thread on the loop would never return
                return asyncio.run_coroutine_threadsafe(committer.submit(events), loop).result(timeout=60)
        if self._committer is None:
            recordings = self.save(*events)
            return max((r.notification.id for r in recordings), default=0)
        return self._committer.submit(events)

    def enable_loop_commits(self, append: Callable[[list[Any]], Awaitable[int]]) -> None:
        """From now on commits append on the caller's event loop through ``append`` (async: stored
        events -> highest notification id), in groups (``LoopGroupCommitter``): ``commit_async``
        directly, ``commit`` from other threads by handing its events to the loop."""
        self._loop = asyncio.get_running_loop()
        self._loop_committer = LoopGroupCommitter(self.mapper.to_stored_event, append)

    def disable_loop_commits(self) -> None:
        self._loop_committer = None
        self._loop = None

    @property
    def commits_async(self) -> bool:
        return self._loop_committer is not None or self._committer is not None

    async def commit_async(self, *aggregates: Aggregate, conflict: str = "conflict") -> int:
        """``commit`` from the event loop without blocking it: on the loop itself when enabled,
        else through the group committer's thread."""
        events = [event for aggregate in aggregates for event in aggregate.collect_events()]
        try:
            if not events:
                position = 0
            elif self._loop_committer is not None:
                position = await self._loop_committer.submit(events)
            elif self._committer is not None:
                position = await asyncio.wrap_future(self._committer.enqueue(events))
            else:
                raise RuntimeError("commit_async needs loop commits or group commit")
        except IntegrityError as exc:
            raise ConflictError("a concurrent change won; try again", code=conflict) from exc
        self._saved(position, events)
        return position

    def _saved(self, position: int, events: list[Any]) -> None:
        self.known_head = max(self.known_head, position)
        if self._after_save:
            topics = frozenset(get_topic(type(event)) for event in events)
            for callback in self._after_save:
                callback(position, topics)

    def head(self) -> int:
        """The notification log's head now; every commit before this call is at or below it."""
        head = self.recorder.max_notification_id() or 0
        self.known_head = max(self.known_head, head)
        return head

    def retry_on_conflict(self, attempt: Callable[[], T], attempts: int = 30) -> T:
        """Run ``attempt`` (load, change, commit) again while a concurrent writer wins the race.

        For changes that must land whatever else happened meanwhile (a login, a use of a rotated
        key, a suppression), not for decisions that depend on the state they read.
        """
        for number in range(attempts):
            try:
                return attempt()
            except ConflictError:
                if number == attempts - 1:
                    raise
                time.sleep(random.uniform(0, 0.002 * (number + 1)))  # noqa: S311 - jitter only
        raise AssertionError("unreachable")  # pragma: no cover

    def update(self, cls: type[A], aggregate_id: UUID, change: Callable[[A], object], attempts: int = 30) -> A:
        """Load, change and save one aggregate, retrying when a concurrent writer won the race."""

        def attempt() -> A:
            aggregate = self.find(cls, aggregate_id)
            if aggregate is None:
                raise ConflictError("the record disappeared", code="conflict")
            change(aggregate)
            self.commit(aggregate)
            return aggregate

        return self.retry_on_conflict(attempt, attempts)

    def find_owned(self, cls: type[A], prefix: str, public_id: str, tenant_id: str, *, loc: str, noun: str) -> A:
        """The tenant's aggregate named by a public id; other tenants' ids are as unknown as
        made-up ones (404), and a malformed id is a 422 at ``["path", loc]``."""
        try:
            aggregate_id = ids.from_public(prefix, public_id)
        except ids.MalformedIdError as exc:
            raise FieldError(["path", loc], str(exc), code="invalid_id", value=public_id) from exc
        aggregate = self.find(cls, aggregate_id)
        if aggregate is None or getattr(aggregate, "tenant_id", None) != tenant_id:
            raise NotFoundError(f"no {noun.replace('_', ' ')} {public_id}", code=f"{noun}_not_found")
        return aggregate

    def find(self, cls: type[A], aggregate_id: UUID) -> A | None:
        try:
            aggregate = self.repository.get(aggregate_id)
        except AggregateNotFoundError:
            return None
        return aggregate if isinstance(aggregate, cls) else None
