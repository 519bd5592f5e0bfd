"""Reactor that turns every terminal call (``Completed`` or ``Failed``, any direction or mode) into
one delivery per active endpoint of its tenant, then wakes the dispatcher for them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from eventsourcing.persistence import Tracking

from application.calling.app import Calling
from application.webhooks import deliveries
from domain.calls.call import Call
from domain.webhooks.delivery import WebhookDelivery


class WebhookScheduler:
    name = "webhook_scheduler"
    handles = (Call.Completed, Call.Failed)

    def __init__(self, calling: Calling, tracking: Any,
                 scheduled: Callable[[Sequence[WebhookDelivery]], None] = lambda _: None,
                 retry_delays: Sequence[float] | None = None) -> None:
        self.calling = calling
        self.tracking = tracking
        self.retry_delays = retry_delays
        self.scheduled = scheduled  # told of new deliveries (the dispatcher's hint)

    def process_event(self, event: Any, tracking: Tracking) -> None:
        if isinstance(event, self.handles):
            repository = self.calling.repository
            tenant_id = repository.get(event.originator_id, version=1).tenant_id  # from Queued alone
            fresh = deliveries.schedule(
                self.calling, tenant_id,
                lambda: repository.get(event.originator_id, version=event.originator_version), self.retry_delays,
            )
            if fresh:
                self.scheduled(fresh)
        self.tracking.insert_tracking(tracking)
