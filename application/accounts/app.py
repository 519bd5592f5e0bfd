"""``Accounts``: the event-sourced Application of the accounts boundary and its lookups."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError, Application
from eventsourcing.domain import Aggregate
from eventsourcing.persistence import IntegrityError

from application.accounts.head_cache import HeadCache
from application.errors import ConflictError
from application.ports import Clock, EmailSender, PasswordHasher, SessionTokens
from domain.accounts.user import EmailIndex, User

A = TypeVar("A", bound=Aggregate)


@dataclass(frozen=True, kw_only=True)
class AccountPorts:
    clock: Clock
    hasher: PasswordHasher
    sessions: SessionTokens
    email: EmailSender
    public_base_url: str


class Accounts(Application[UUID]):
    """One consistency boundary; every command ends in one atomic ``save``."""

    name = "Accounts"

    def __init__(self, env: Mapping[str, str] | None = None, *, ports: AccountPorts) -> None:
        super().__init__(env)
        self.ports = ports
        self._after_save: list[Any] = []
        self.lookups = HeadCache()
        self.known_head = 0  # highest notification id this process has saved or seen

    def on_saved(self, callback: Any) -> None:
        """Register a callable told the highest notification id after each save."""
        self._after_save.append(callback)

    def commit(self, *aggregates: Aggregate, conflict: str = "conflict") -> int:
        """Save atomically; a concurrent writer of the same aggregate gives ``ConflictError``."""
        try:
            recordings = self.save(*aggregates)
        except IntegrityError as exc:
            raise ConflictError("a concurrent change won; try again", code=conflict) from exc
        position = max((r.notification.id for r in recordings), default=0)
        self.known_head = max(self.known_head, position)
        for callback in self._after_save:
            callback(position)
        return position

    def head(self) -> int:
        """The notification log's head now; every commit before this call is at or below it."""
        head = self.recorder.max_notification_id() or 0
        self.known_head = max(self.known_head, head)
        return head

    def update(self, cls: type[A], aggregate_id: UUID, change: Callable[[A], object], attempts: int = 30) -> A:
        """Load, change and save one aggregate, retrying when a concurrent writer won the race.

        For facts that must be recorded whatever else happened meanwhile (a login, a use of a
        rotated key), not for decisions that depend on the state they read.
        """
        for attempt in range(attempts):
            aggregate = self.find(cls, aggregate_id)
            if aggregate is None:
                raise ConflictError("the record disappeared", code="conflict")
            change(aggregate)
            try:
                self.commit(aggregate)
            except ConflictError:
                if attempt == attempts - 1:
                    raise
                time.sleep(random.uniform(0, 0.002 * (attempt + 1)))  # noqa: S311 - jitter only
                continue
            return aggregate
        raise AssertionError("unreachable")  # pragma: no cover

    def find(self, cls: type[A], aggregate_id: UUID) -> A | None:
        try:
            aggregate = self.repository.get(aggregate_id)
        except AggregateNotFoundError:
            return None
        return aggregate if isinstance(aggregate, cls) else None

    def user_by_email(self, email: str) -> User | None:
        index = self.find(EmailIndex, EmailIndex.create_id(email))
        if index is None:
            return None
        return self.find(User, User.create_id(index.user_id))
