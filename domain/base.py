"""Base aggregate of every callwright aggregate: every event carries ``tenant_id``.

Commands validate and compute; private ``@event`` methods only assign state.
"""

from __future__ import annotations

from typing import Any

from eventsourcing.domain import Aggregate


class TenantAggregate(Aggregate):
    """An aggregate owned by one tenant; its id never changes owner."""

    tenant_id: str

    class Event(Aggregate.Event):
        tenant_id: str

    class Created(Event, Aggregate.Created):
        pass

    def trigger_event(self, event_class: Any, **kwargs: Any) -> None:
        kwargs.setdefault("tenant_id", self.tenant_id)
        super().trigger_event(event_class, **kwargs)
