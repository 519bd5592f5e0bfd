"""Reactor that turns every terminal call (``Completed`` or ``Failed``, any direction or mode) into
one delivery per active endpoint of its tenant, then wakes the dispatcher for them.

Following the notification log, it schedules a page of events at once: the page's deliveries are
saved in one commit before the page's tracking row (``paged_tracking``), so a crash in between
schedules the page again, which saves nothing twice (a delivery's id derives from its event).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from eventsourcing.persistence import Tracking

from application.calling.app import Calling
from application.webhooks import deliveries
from domain.calls.call import Call
from domain.webhooks.delivery import WebhookDelivery

Ended = tuple[str, Callable[[], Call]]  # the call's tenant, and how to load the call as it ended


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
        self._page: list[Ended] | None = None
        self.paged_tracking = _PagedTracking(self, tracking)

    def process_event(self, event: Any, tracking: Tracking) -> None:
        if isinstance(event, self.handles):
            repository = self.calling.repository
            # Every event names its tenant; the first one is read only for an event stored without it.
            tenant_id = getattr(event, "tenant_id", None) or repository.get(event.originator_id, version=1).tenant_id
            ended = (tenant_id, lambda: repository.get(event.originator_id, version=event.originator_version))
            if self._page is not None:
                self._page.append(ended)
            else:
                self._schedule([ended])
        self.tracking.insert_tracking(tracking)

    @contextlib.contextmanager
    def page(self) -> Iterator[None]:
        """The events processed inside are scheduled together as it ends, before the tracking's
        own batch commits; if the block raises, nothing is scheduled and the page comes again."""
        self._page = []
        try:
            yield
            ended = self._page
        finally:
            self._page = None
        if ended:
            self._schedule(ended)

    def _schedule(self, ended: list[Ended]) -> None:
        fresh = deliveries.schedule_many(self.calling, ended, self.retry_delays)
        if fresh:
            self.scheduled(fresh)


class _PagedTracking:
    """The tracking the follower sees: its ``batch`` also runs the scheduler's page."""

    def __init__(self, scheduler: WebhookScheduler, tracking: Any) -> None:
        self._scheduler, self._tracking = scheduler, tracking

    @contextlib.contextmanager
    def batch(self) -> Iterator[None]:
        batch = getattr(self._tracking, "batch", None)
        with batch() if batch is not None else contextlib.nullcontext(), self._scheduler.page():
            yield

    def __getattr__(self, name: str) -> Any:
        return getattr(self._tracking, name)
