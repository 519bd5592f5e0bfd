"""Sends due webhook attempts (ARCHITECTURE.md §6, §9).

It runs on its own thread and event loop. Each round it takes what is due from
``webhook_deliveries_v1`` and the hints of the scheduler (new deliveries, so a first attempt does
not wait for the view). Every attempt is its own task: it is leased (an event, so dispatchers in
several processes never send one attempt twice), sent, and written down. A task starts only with a
slot (webhook_slots.py): ``concurrency`` in all, a fair share of them per tenant with work (less a
few kept for a tenant that has none), and per endpoint a limit that starts at ``per_endpoint``,
halves on each attempt that gets no answer and grows by one per answer. After 3 timeouts in a row
an endpoint is backed off: none of its attempts start for a cool-down (1 s, doubling to 30 s), then
one probe at a time until one is answered. So a slow or dead endpoint costs its own tenant, never
another. An attempt left out is not leased (a lease that ran out would count as an attempt) and
stays due for a later round; the tenants take turns within a round.
"""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from datetime import timedelta
from typing import Any

import structlog

from application.calling.app import Calling
from application.webhooks import attempt_batches, deliveries
from application.ports import SecretBox
from application.webhooks.ports import AttemptOutcome, WebhookPoster
from domain.webhooks.delivery import LEASE, WebhookDelivery
from entrypoints.workers import webhook_slots
from entrypoints.workers.batches import Batches
from entrypoints.workers.webhook_slots import Ticket, WebhookSlots

log = structlog.get_logger(__name__)

Due = Callable[[Any], list[tuple[uuid.UUID, str, str]]]  # now -> [(delivery uuid, endpoint id, tenant id)]
Hint = tuple[uuid.UUID, str, str]


class WebhookDispatcher:
    name = "webhook_dispatcher"

    def __init__(self, calling: Calling, box: SecretBox, poster: Callable[[], WebhookPoster], due: Due, *,
                 owner: str, poll_interval: float = 0.5, concurrency: int = 64, per_endpoint: int = 8,
                 lease: timedelta = LEASE, monotonic: Callable[[], float] = time.monotonic) -> None:
        self.calling, self.box, self.due, self.owner = calling, box, due, owner
        self._make_poster = poster
        self._poster: WebhookPoster | None = None
        self.poll_interval = poll_interval
        self.lease = lease  # longer than an attempt can take: the sender's timeout and the bookkeeping
        self.per_endpoint = per_endpoint
        self.slots = WebhookSlots(concurrency, per_endpoint)
        self._monotonic = monotonic  # cool-downs; ``calling.ports.clock`` is the wall clock of the events
        self._bound_to: asyncio.AbstractEventLoop | None = None
        self._in_flight: dict[uuid.UUID, asyncio.Task[None]] = {}
        self._waiting_for_slots = False  # something due was left out for want of a slot
        self._hints: list[Hint] = []
        self._fresh: dict[uuid.UUID, WebhookDelivery] = {}  # hinted deliveries as saved: no read to lease them
        self._hints_lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake: asyncio.Event | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        # The leases of one round go in one commit, and the results that arrive while one batch is
        # saved go together in the next (attempt_batches.py); the view is read once per poll interval.
        self._leases: Batches[attempt_batches.Wanted, deliveries.Attempt | None] = Batches(self._lease_batch)
        self._results: Batches[tuple[deliveries.Attempt, AttemptOutcome], WebhookDelivery | None] = Batches(
            self._record_batch)
        self._due_read_at = float("-inf")

    # --- from other threads ----------------------------------------------------------------------

    def hint(self, scheduled: Sequence[WebhookDelivery]) -> None:
        """New deliveries: attempt them now rather than at the next poll."""
        with self._hints_lock:
            self._hints.extend((d.id, d.endpoint_id, d.tenant_id) for d in scheduled)
            self._fresh.update((d.id, d) for d in scheduled)
        self.poke()

    def poke(self) -> None:
        loop, wake = self._loop, self._wake
        if loop is not None and wake is not None and not loop.is_closed():
            loop.call_soon_threadsafe(wake.set)

    def start(self) -> None:
        self._thread = threading.Thread(target=lambda: asyncio.run(self._run()), name=self.name, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self.poke()
        if self._thread is not None:
            self._thread.join(timeout=15)

    # --- on the dispatcher's loop ----------------------------------------------------------------

    async def _run(self) -> None:
        self._loop, self._wake = asyncio.get_running_loop(), asyncio.Event()
        while not self._stop.is_set():
            try:
                await self.run_due()
            except Exception as exc:  # the database may be away: report, wait, go on
                log.error("webhooks.dispatch_failed", error=type(exc).__name__, exc_info=exc)
            try:
                await asyncio.wait_for(self._wake.wait(), self.poll_interval)
            except asyncio.TimeoutError:
                pass
            self._wake.clear()
        await self.drain()

    async def run_due(self, *, wait: bool = False) -> int:
        """Start an attempt for everything due now that gets a slot (``wait``: and wait for them);
        how many started."""
        loop = asyncio.get_running_loop()
        if loop is not self._bound_to:  # an HTTP client belongs to one loop
            self._bound_to, self._poster = loop, None
        with self._hints_lock:
            hinted, self._hints = self._hints, []
        now = self.calling.ports.clock()
        due: list[Hint] = []
        if wait or self._monotonic() - self._due_read_at >= self.poll_interval or not hinted:
            self._due_read_at = self._monotonic()
            due = await asyncio.to_thread(self.due, now)
        started = 0
        self._waiting_for_slots = False
        hinted_ids = {hint[0] for hint in hinted}
        later: list[Hint] = []  # hinted, not started, perhaps not in the view yet: the next round's
        candidates = _unique([*hinted, *due])
        self.slots.begin_round(tenant for _, _, tenant in candidates)
        moment = self._monotonic()
        for candidate in self.slots.in_turns(candidates):
            delivery_uuid, endpoint_id, tenant_id = candidate
            if delivery_uuid in self._in_flight:
                if delivery_uuid in hinted_ids:  # hinted again while under way (a manual retry): next round
                    later.append(candidate)
                continue
            if self.slots.cooling(endpoint_id, moment):
                self._waiting_for_slots = True
                if delivery_uuid in hinted_ids:  # the view has it by the end of the cool-down
                    with self._hints_lock:
                        self._fresh.pop(delivery_uuid, None)
                continue
            ticket = self.slots.admit(tenant_id, endpoint_id, moment)
            if ticket is None:
                self._waiting_for_slots = True
                if delivery_uuid in hinted_ids:
                    later.append(candidate)
                continue
            task = asyncio.create_task(self._attempt(delivery_uuid, ticket))
            self._in_flight[delivery_uuid] = task
            started += 1
        if later:
            with self._hints_lock:
                self._hints.extend(later)
        if wait:
            await self.drain()
        return started

    async def drain(self) -> None:
        while self._in_flight:
            await asyncio.gather(*self._in_flight.values(), return_exceptions=True)

    async def _attempt(self, delivery_uuid: uuid.UUID, ticket: Ticket) -> None:
        """Lease, post, and write down one attempt. The slot is the post's: it is given back as the
        answer arrives, while the result waits for its batch (the delivery stays in flight until then)."""
        held = [True]
        try:
            with self._hints_lock:
                known = self._fresh.pop(delivery_uuid, None)
            attempt = await self._leases.submit((delivery_uuid, known))
            if attempt is None:
                return
            poster = self._poster = self._poster or self._make_poster()
            now = self.calling.ports.clock()
            outcome = await poster.post(attempt.url, attempt.delivery.body.encode(),
                                        attempt.headers(int(now.timestamp())))
            self._release(ticket, _result(outcome), held)
            await self._results.submit((attempt, outcome))
            _log_attempt(attempt, outcome)
        except Exception as exc:
            log.error("webhooks.attempt_failed", delivery=str(delivery_uuid), endpoint_id=ticket.endpoint_id,
                      error=type(exc).__name__, exc_info=exc)
        finally:
            self._release(ticket, webhook_slots.NEUTRAL, held)
            self._in_flight.pop(delivery_uuid, None)

    def _release(self, ticket: Ticket, result: str, held: list[bool]) -> None:
        if not held[0]:
            return
        held[0] = False
        cool_until = self.slots.health(ticket.endpoint_id).cool_until
        self.slots.done(ticket, result, self._monotonic())
        health = self.slots.health(ticket.endpoint_id)
        if health.cool_until is not None and health.cool_until != cool_until:
            log.warning("webhooks.endpoint_backed_off", endpoint_id=ticket.endpoint_id, tenant_id=ticket.tenant_id,
                        cool_down_s=health.cool_down, timeouts_in_a_row=health.timeouts)
        if self._waiting_for_slots and self._wake is not None and asyncio.get_running_loop() is self._loop:
            self._wake.set()  # a slot is free: what waited for it goes in the next round

    def _lease_batch(self, wanted: list[attempt_batches.Wanted]) -> list[deliveries.Attempt | None]:
        return attempt_batches.lease_many(self.calling, self.box, wanted, self.owner, self.calling.ports.clock(),
                                          self.lease)

    def _record_batch(self, results: list[tuple[deliveries.Attempt, AttemptOutcome]]) -> list[WebhookDelivery | None]:
        return attempt_batches.record_many(self.calling, results, self.calling.ports.clock())


def _result(outcome: AttemptOutcome) -> str:
    """What an attempt says about its endpoint's health (webhook_slots.py)."""
    if outcome.status is not None:
        return webhook_slots.ANSWERED
    if outcome.blocked:
        return webhook_slots.NEUTRAL
    return webhook_slots.TIMED_OUT if outcome.error == "timeout" else webhook_slots.FAILED


def _log_attempt(attempt: deliveries.Attempt, outcome: AttemptOutcome) -> None:
    """One line per attempt, with the ids an operator searches by; a receiver's 5xx and an attempt
    the URL policy blocked are warnings (someone has to act), the rest info."""
    delivery = attempt.delivery
    serious = outcome.blocked or (outcome.status is not None and outcome.status >= 500)
    (log.warning if serious else log.info)(
        "webhooks.attempt", delivery_id=delivery.delivery_id, endpoint_id=delivery.endpoint_id,
        call_id=delivery.call_id, tenant_id=delivery.tenant_id, attempt=attempt.number, status=outcome.status,
        error=outcome.error, blocked=outcome.blocked, latency_ms=outcome.latency_ms,
        signatures=len(attempt.secrets))


def _unique(items: Iterable[Hint]) -> list[Hint]:
    return list({item[0]: item for item in items}.values())
