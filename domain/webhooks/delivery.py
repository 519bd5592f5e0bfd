"""Webhook deliveries (SPEC.md Webhook delivery, Events 6–8): one per call event and endpoint, its
attempts, and the retry schedule. Attempt 1 goes at once, then +5 s, +30 s and +2 min after each
failure; the 4th failure is final (``permanently_failed``), and so is a 4xx other than 429.

Every attempt is leased first (an event, so two workers racing for one attempt conflict and only
one sends). A lease that runs out with no result recorded was an attempt all the same (its worker
stopped after it may have sent): it is written down as lost and counts toward the four.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from eventsourcing.domain import event

from domain import ids
from domain.base import TenantAggregate

PENDING = "pending"
DELIVERED = "delivered"
FAILED = "failed"  # a final answer (4xx other than 429): not retried
PERMANENTLY_FAILED = "permanently_failed"  # the 4th attempt failed
CANCELLED = "cancelled"  # the endpoint was deleted before the delivery went out
STATUSES = (PENDING, DELIVERED, FAILED, PERMANENTLY_FAILED, CANCELLED)

RETRY_DELAYS = (5.0, 30.0, 120.0)  # seconds after the 1st, 2nd and 3rd failure (the spec's schedule)
MAX_ATTEMPTS = len(RETRY_DELAYS) + 1
LEASE = timedelta(seconds=30)  # longer than an attempt may take (10 s timeout and bookkeeping)
LOST = "lost: no result was recorded before the lease ran out (the worker stopped)"

DELIVER, RETRY, GIVE_UP = "deliver", "retry", "give_up"


def verdict(status: int | None) -> str:
    """What an answer means: 2xx delivered; no answer (transport failure, timeout, blocked), 3xx
    (never followed), 429 and 5xx retried; any other 4xx final."""
    if status is None:
        return RETRY
    if 200 <= status < 300:
        return DELIVER
    if 400 <= status < 500 and status != 429:
        return GIVE_UP
    return RETRY


@dataclass(frozen=True)
class Retries:
    """The seconds to wait after each failed automatic attempt, fixed when the delivery is
    scheduled so a change of settings never reshapes a delivery under way, and how many automatic
    attempts were leased (``made``; a manual re-post is not one of them)."""

    delays: tuple[float, ...] = RETRY_DELAYS
    made: int = 0

    @classmethod
    def scheduled(cls, delays: Sequence[float] | None) -> Retries:
        """``delays`` None: the spec's schedule."""
        return cls() if delays is None else cls(tuple(delays))

    @classmethod
    def after_lease(cls, retries: Retries, manual: bool) -> Retries:
        return retries if manual else replace(retries, made=retries.made + 1)

    def next_attempt_at(self, now: datetime) -> datetime | None:
        """When the next automatic attempt goes after the latest one failed at ``now``; None once
        the last one failed."""
        if self.made > len(self.delays):
            return None
        return now + timedelta(seconds=self.delays[self.made - 1])


@dataclass(frozen=True)
class Cancellation:
    """Why nothing more goes out, and the status it leaves: a pending delivery is cancelled; one
    that had finished keeps its status (only its requested or leased manual retry is dropped)."""

    reason: str
    status: str

    @classmethod
    def of(cls, reason: str, status: str) -> Cancellation:
        """``status``: the delivery's status when it is cancelled."""
        return cls(reason=reason, status=CANCELLED if status == PENDING else status)


class DeliveryStateError(Exception):
    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.message, self.code = message, code


class WebhookDelivery(TenantAggregate):
    @staticmethod
    def create_id(event_id: str, endpoint_id: str) -> uuid.UUID:
        return ids.deterministic("webhook-delivery", f"{event_id}:{endpoint_id}")

    @staticmethod
    def public_id(delivery_id: str) -> uuid.UUID:
        return ids.from_public(ids.DELIVERY, delivery_id)

    @event("Scheduled")
    def __init__(self, tenant_id: str, endpoint_id: str, call_id: str, event_id: str, event_type: str, body: str,
                 at: datetime, retry_delays: list[float] | None = None) -> None:
        self.tenant_id = tenant_id
        self.endpoint_id = endpoint_id
        self.call_id = call_id
        self.event_id = event_id
        self.event_type = event_type
        self.body = body  # the exact bytes every attempt posts (UTF-8), manual retries included
        self.created_at = at
        self.status = PENDING
        self.next_attempt_at: datetime | None = at
        self.attempts: list[dict[str, Any]] = []
        self.leased_attempt: int | None = None
        self.lease_manual = False
        self.lease_until: datetime | None = None
        self.retry_requested_at: datetime | None = None
        self.retries = Retries.scheduled(retry_delays)

    @property
    def delivery_id(self) -> str:
        return ids.to_public(ids.DELIVERY, self.id)

    @property
    def delivery_uuid(self) -> str:
        """``X-Service-Delivery-Id``: the same for every attempt of this delivery."""
        return str(self.id)

    def due_at(self) -> datetime | None:
        """When the next attempt may start: a requested manual retry, else the schedule."""
        if self.leased_attempt is not None:
            return self.lease_until
        if self.retry_requested_at is not None:
            return self.retry_requested_at
        return self.next_attempt_at if self.status == PENDING else None

    # --- leasing -----------------------------------------------------------------------------

    def lease(self, owner: str, now: datetime, duration: timedelta = LEASE) -> int | None:
        """Take the next attempt for ``owner`` until ``now + duration`` (longer than an attempt can
        take); its number, or None when nothing is due (not yet, already leased, or finished)."""
        if self.leased_attempt is not None:
            if self.lease_until is not None and self.lease_until > now:
                return None
            self._record(attempt=self.leased_attempt, manual=self.lease_manual, status=None, body="",
                         latency_ms=0, error=LOST, address=None, now=now)
        due = self.due_at()
        if due is None or due > now:
            return None
        manual = self.retry_requested_at is not None
        number = len(self.attempts) + 1
        self._leased(attempt=number, manual=manual, owner=owner, until=now + duration)
        return number

    @event("Leased")
    def _leased(self, attempt: int, manual: bool, owner: str, until: datetime) -> None:
        self.leased_attempt = attempt
        self.lease_manual = manual
        self.lease_until = until
        self.retry_requested_at = None  # taken by a manual attempt; an automatic one is leased without one
        self.retries = Retries.after_lease(self.retries, manual)

    def record_attempt(self, attempt: int, *, status: int | None, body: str, latency_ms: int, error: str | None,
                       address: str | None, now: datetime) -> None:
        if self.leased_attempt != attempt:
            raise DeliveryStateError(f"attempt {attempt} is not the leased one", "attempt_not_leased")
        self._record(attempt=attempt, manual=self.lease_manual, status=status, body=body, latency_ms=latency_ms,
                     error=error, address=address, now=now)

    def _record(self, *, attempt: int, manual: bool, status: int | None, body: str, latency_ms: int,
                error: str | None, address: str | None, now: datetime) -> None:
        outcome = verdict(status) if error != LOST else RETRY
        if outcome == DELIVER:
            new_status, next_at = DELIVERED, None
        elif manual:  # a manual re-post leaves a failed delivery as it was
            new_status, next_at = self.status, self.next_attempt_at
        elif outcome == GIVE_UP:
            new_status, next_at = FAILED, None
        else:
            next_at = self.retries.next_attempt_at(now)
            new_status = PERMANENTLY_FAILED if next_at is None else PENDING
        self._attempted(attempt=attempt, manual=manual, response_status=status, response_body=body,
                        latency_ms=latency_ms, error=error, address=address, at=now, status=new_status,
                        next_attempt_at=next_at)

    @event("Attempted")
    def _attempted(self, attempt: int, manual: bool, response_status: int | None, response_body: str,
                   latency_ms: int, error: str | None, address: str | None, at: datetime, status: str,
                   next_attempt_at: datetime | None) -> None:
        self.attempts = [*self.attempts, {
            "attempt": attempt, "manual": manual, "response_status": response_status,
            "response_body": response_body, "latency_ms": latency_ms, "error": error, "at": at,
        }]
        self.status = status
        self.next_attempt_at = next_attempt_at
        self.leased_attempt = None
        self.lease_manual = False
        self.lease_until = None

    # --- the rest of the lifecycle ---------------------------------------------------------------

    def request_retry(self, now: datetime) -> None:
        """A manual re-post of the original payload, once, by the dispatcher."""
        if self.status == PENDING or self.leased_attempt is not None or self.retry_requested_at is not None:
            raise DeliveryStateError("this delivery is still being attempted; retry it once it has finished",
                                     "delivery_in_progress")
        self._retry_requested(at=now)

    @event("RetryRequested")
    def _retry_requested(self, at: datetime) -> None:
        self.retry_requested_at = at

    def cancel(self, reason: str, now: datetime) -> None:
        """The endpoint was deleted: nothing more goes out (a requested manual retry neither)."""
        if self.status == PENDING or self.retry_requested_at is not None or self.leased_attempt is not None:
            self._cancelled(reason=reason, at=now)

    @event("Cancelled")
    def _cancelled(self, reason: str, at: datetime) -> None:
        cancellation = Cancellation.of(reason, self.status)
        self.status = cancellation.status
        self.next_attempt_at = None
        self.retry_requested_at = None
        self.leased_attempt = None
        self.lease_until = None
        self.cancel_reason = cancellation.reason
