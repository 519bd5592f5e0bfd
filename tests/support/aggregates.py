"""Given/When/Then for eventsourcing aggregates, after EventSourcing.NetCore's Helpdesk sample.

    given(queued_call()).when(lambda call: call.start(NOW)).then(Call.Started, Call.Leased, status="in_progress")
    given(completed_call()).when(lambda call: call.end(3, NOW)).then_raises(CallStateError)

``given`` takes an aggregate (its pending events become history: only what the command emits is
checked) or the events of one aggregate (replayed into it). ``when`` runs one command and collects
what it emitted with ``collect_events()``. ``then`` names the new event types in order and any
attribute values (``returns=`` checks the command's return value); ``then_raises`` expects a
refusal that emits nothing. Both return the aggregate, so a scenario may go on from there.
Imports only eventsourcing and the standard library.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from eventsourcing.domain import Aggregate, DomainEventProtocol

A = TypeVar("A", bound=Aggregate)

_ANY: Any = object()  # ``returns`` not given: the command's return value is not checked


def given(history: A | Iterable[DomainEventProtocol]) -> Given[A]:
    """The aggregate a scenario starts from, or the events it is rebuilt from."""
    if isinstance(history, Aggregate):
        history.collect_events()
        return Given(history)  # type: ignore[arg-type]
    aggregate: Any = None
    for past in history:
        aggregate = past.mutate(aggregate)
    assert aggregate is not None, "given() needs at least the event that created the aggregate"
    return Given(aggregate)


@dataclass
class Given(Generic[A]):
    aggregate: A

    def when(self, command: Callable[[A], Any]) -> Then[A]:
        """Run ``command`` on the aggregate; an exception it raises is kept for ``then_raises``."""
        try:
            result, error = command(self.aggregate), None
        except Exception as raised:  # noqa: BLE001 - handed to then_raises, re-raised by then
            result, error = None, raised
        return Then(self.aggregate, list(self.aggregate.collect_events()), result, error)


@dataclass
class Then(Generic[A]):
    aggregate: A
    events: list[Any]
    result: Any
    error: Exception | None

    def then(self, *event_types: type, returns: Any = _ANY, **attributes: Any) -> A:
        """The command emitted exactly ``event_types`` (none: it changed nothing) and left
        ``attributes`` on the aggregate."""
        if self.error is not None:
            raise AssertionError(f"the command was refused: {self.error!r}") from self.error
        emitted = [type(e).__qualname__ for e in self.events]
        assert emitted == [t.__qualname__ for t in event_types], f"emitted {emitted}"
        if returns is not _ANY:
            assert self.result == returns, f"returned {self.result!r}, expected {returns!r}"
        for name, expected in attributes.items():
            actual = getattr(self.aggregate, name)
            if isinstance(expected, dict) and hasattr(actual, "as_dict"):  # a value, told in its plain shape
                actual = actual.as_dict()
            assert actual == expected, f"{name} is {actual!r}, expected {expected!r}"
        return self.aggregate

    def then_raises(self, error: type[Exception], match: str | None = None) -> A:
        """The command was refused with ``error`` (its message matching ``match``) and emitted nothing."""
        assert self.error is not None, f"the command was accepted and emitted {[type(e).__qualname__ for e in self.events]}"
        assert isinstance(self.error, error), f"raised {self.error!r}, expected {error.__name__}"
        if match is not None:
            assert re.search(match, str(self.error)), f"{str(self.error)!r} does not match {match!r}"
        assert self.events == [], f"a refused command emitted {[type(e).__qualname__ for e in self.events]}"
        return self.aggregate
