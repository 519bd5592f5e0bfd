"""What a reactor is, whichever source feeds it (ARCHITECTURE.md §6): the notification log
(embedded) or a Kafka consumer group (scaled). Same reactor code on both; no I/O here."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from eventsourcing.persistence import Tracking


@dataclass(frozen=True)
class EventTracking(Tracking):
    """Tracking of an event that came from Kafka: its log position plus the envelope's
    ``event_id``, the key under which a consumer-group source records it as processed."""

    event_id: str


@runtime_checkable
class Reactor(Protocol):
    """Turns events into side effects; must be idempotent (sources deliver at least once).

    ``process_event`` records ``tracking`` through the tracking recorder it was built with,
    after (or together with) its own effects."""

    name: str
    handles: tuple[type, ...]

    def process_event(self, event: Any, tracking: Tracking) -> None: ...


@runtime_checkable
class EventSource(Protocol):
    """Feeds one reactor (or projection) until stopped; ``error`` is the last failure, if the
    source is currently failing."""

    name: str
    error: BaseException | None

    def start(self) -> None: ...

    def stop(self) -> None: ...
