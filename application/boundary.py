"""Base of every event-sourced Application here: atomic commits, lookups, retried fact appends,
and the notification position the read side must reach for read-your-writes."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping
from typing import Any, TypeVar
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError, Application
from eventsourcing.domain import Aggregate
from eventsourcing.persistence import IntegrityError
from eventsourcing.utils import get_topic

from application import logs
from application.client_presence import ensure_client_still_waits, ensure_client_waits
from application.errors import ConflictError, FieldError, NotFoundError
from application.commit_path import CommitPath, CommitPathFactory, direct
from domain import ids

A = TypeVar("A", bound=Aggregate)
T = TypeVar("T")

log = logs.get_logger(__name__)

# Between two tries of a commit that met an outage: the first pause, and the longest.
OUTAGE_PAUSES = (0.1, 1.0)


def _no_outages(exc: BaseException) -> bool:
    return False


class BoundaryApplication(Application[UUID]):
    """One consistency boundary; every command ends in one atomic commit through ``commits``."""

    def __init__(self, env: Mapping[str, str] | None = None, *, commits: CommitPathFactory = direct) -> None:
        super().__init__(env)
        self._after_save: list[Callable[[int, frozenset[str]], Any]] = []
        self.known_head = 0  # highest notification id this process has saved or seen
        # The composition root chooses the kind (direct or grouped); the HTTP server attaches its loop.
        self.commits: CommitPath = commits(self.save, self.mapper.to_stored_event, f"group-commit-{self.name}")
        # Whether an error says the database cannot be reached (the composition root knows the
        # driver); with none, no error is one and ``commit`` never waits an outage out.
        self.is_outage: Callable[[BaseException], bool] = _no_outages

    def close(self) -> None:
        self.commits.close()
        super().close()

    def on_saved(self, callback: Callable[[int, frozenset[str]], Any]) -> None:
        """Register a callable told, after each save, the highest notification id and the topics
        of the events saved."""
        self._after_save.append(callback)

    def commit(self, *aggregates: Aggregate, conflict: str = "conflict", outage_patience: float = 0.0) -> int:
        """Save atomically; a concurrent writer of the same aggregate gives ``ConflictError``.

        ``outage_patience``: for work no client waits on (a call's conversation), seconds to keep
        trying while the database cannot be reached, instead of failing at once."""
        ensure_client_waits()
        events = [event for aggregate in aggregates for event in aggregate.collect_events()]
        try:
            position = self._save_through_outage(events, outage_patience) if events else 0
        except IntegrityError as exc:
            raise ConflictError("a concurrent change won; try again", code=conflict) from exc
        self._saved(position, events)
        self.committed(events, aggregates)
        return position

    def _save_through_outage(self, events: list[Any], patience: float) -> int:
        """``commits.commit``, tried again after an outage until ``patience`` runs out. A try cut
        off by the outage may have been saved all the same: when the next try conflicts, the
        stored events are read, and if they are these, the commit is done."""
        deadline = time.monotonic() + patience
        pause, longest = OUTAGE_PAUSES
        interrupted = False
        while True:
            try:
                return self.commits.commit(events)
            except IntegrityError:
                if interrupted and self._stored_already(events[-1]):
                    return self.head()
                raise
            except Exception as exc:
                if not self.is_outage(exc) or time.monotonic() + pause > deadline:
                    raise
                if not interrupted:
                    log.warning("commit.waits_for_database", events=len(events), error=type(exc).__name__)
                interrupted = True
                time.sleep(pause)
                pause = min(longest, pause * 2)

    def _stored_already(self, event: Any) -> bool:
        """Is ``event`` the one stored at its aggregate's version (its type and its timestamp)?"""
        stored = self.recorder.select_events(event.originator_id, gt=event.originator_version - 1,
                                             lte=event.originator_version, limit=1)
        if not stored:
            return False
        found = self.mapper.to_domain_event(stored[0])
        return type(found) is type(event) and found.timestamp == event.timestamp

    async def commit_async(self, *aggregates: Aggregate, conflict: str = "conflict") -> int:
        """``commit`` from the event loop without blocking it (loop or group commits)."""
        await ensure_client_still_waits()
        events = [event for aggregate in aggregates for event in aggregate.collect_events()]
        try:
            position = await self.commits.commit_async(events) if events else 0
        except IntegrityError as exc:
            raise ConflictError("a concurrent change won; try again", code=conflict) from exc
        self._saved(position, events)
        self.committed(events, aggregates)
        return position

    def committed(self, events: list[Any], aggregates: tuple[Aggregate, ...]) -> None:
        """Told of every commit once it is saved (the place to log a state change that happened)."""

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

    def remembered(self, cls: type[A], aggregate_id: UUID) -> A | None:
        """The aggregate as this process's cache holds it, with no read of the store: maybe behind
        (the caller compares its version with the committed one). Never change or save it."""
        cache = self.repository.cache
        if cache is None:
            return None
        try:
            aggregate = cache.get(aggregate_id)
        except KeyError:
            return None
        return aggregate if isinstance(aggregate, cls) else None

    def peek(self, cls: type[A], aggregate_id: UUID) -> A | None:
        """``find`` for a glance that changes nothing: the cached aggregate itself, not a copy of it
        (a deep copy of a call costs more than the glance). Never change or save what it returns."""
        try:
            aggregate = self.repository.get(aggregate_id, deepcopy_from_cache=False)
        except AggregateNotFoundError:
            return None
        return aggregate if isinstance(aggregate, cls) else None
