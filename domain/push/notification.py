"""One notification of a live inbound call to one subscribed device (SPEC.md Events 12), and its
attempts. Its payload is ``{notification_id, call_id, number_id, from, started_at}``.

An attempt is written down before it is sent (``Sending``) and its answer after (``Attempted``):
a ``Sending`` with no answer is an attempt whose worker stopped, recorded as lost when the
notification is tried again, so every attempt that may have reached the push service is on
record. A ringing call is news for a short while only: past ``expires_at`` nothing is sent.
"""

from __future__ import annotations

import json
import uuid
from datetime import datetime, timedelta
from typing import Any

from eventsourcing.domain import event

from domain import ids
from domain.base import TenantAggregate
from domain.push.subscription import GONE
from domain.timestamps import iso

PENDING, SENT, FAILED, EXPIRED, CANCELLED = "pending", "sent", "failed", "expired", "cancelled"
STATUSES = (PENDING, SENT, FAILED, EXPIRED, CANCELLED)
NOTIFY_WITHIN = timedelta(seconds=60)  # after the call started; about as long as a phone rings
LOST = "lost: no answer was recorded (the sender stopped)"


class NotificationStateError(Exception):
    pass


def answered(status: int | None) -> str:
    """What the push service's answer means for the notification: a 2xx sent it; anything else
    (no answer, 3xx never followed, 4xx, 5xx) failed it, 404 and 410 for good."""
    return SENT if status is not None and 200 <= status < 300 else FAILED


class PushNotification(TenantAggregate):
    @staticmethod
    def create_id(call_id: str, subscription_id: str) -> uuid.UUID:
        return ids.deterministic("push-notification", f"{call_id}:{subscription_id}")

    @staticmethod
    def id_of(notification_id: str) -> uuid.UUID:
        return ids.from_public(ids.PUSH_NOTIFICATION, notification_id)

    @event("Scheduled")
    def __init__(self, tenant_id: str, subscription_id: str, call_id: str, number_id: str, caller: str,
                 started_at: datetime, at: datetime, expires_at: datetime) -> None:
        self.tenant_id = tenant_id
        self.subscription_id = subscription_id
        self.call_id = call_id
        self.number_id = number_id
        self.caller = caller
        self.started_at = started_at
        self.created_at = at
        self.expires_at = expires_at
        self.status = PENDING
        self.attempts: list[dict[str, Any]] = []
        self.sending_attempt: int | None = None
        self.delivered_at: datetime | None = None
        self.closed_reason: str | None = None

    @property
    def notification_id(self) -> str:
        return ids.to_public(ids.PUSH_NOTIFICATION, self.id)

    @property
    def sent_at(self) -> datetime | None:
        """When the push service accepted it: the attempt it answered with a 2xx, or None."""
        sent = [a["at"] for a in self.attempts if answered(a["response_status"]) == SENT]
        return sent[-1] if sent else None

    def payload(self) -> bytes:
        """What the device decrypts (UTF-8 JSON)."""
        return json.dumps({"notification_id": self.notification_id, "call_id": self.call_id,
                           "number_id": self.number_id, "from": self.caller, "started_at": iso(self.started_at)},
                          separators=(",", ":")).encode()

    def seconds_left(self, now: datetime) -> int:
        """The push service's TTL: how long the news stays worth delivering."""
        return max(1, int((self.expires_at - now).total_seconds()))

    def start_attempt(self, now: datetime) -> int | None:
        """Write down the next attempt before it is sent; its number, or None when there is nothing
        to send (sent, failed, closed, or too late: then it expires)."""
        if self.status != PENDING:
            return None
        if self.sending_attempt is not None:
            self._attempted(attempt=self.sending_attempt, response_status=None, error=LOST, latency_ms=0, at=now,
                            status=PENDING)
        if now >= self.expires_at:
            self._closed(status=EXPIRED, reason="the call's news ran out before it was sent", at=now)
            return None
        number = len(self.attempts) + 1
        self._sending(attempt=number, at=now)
        return number

    @event("Sending")
    def _sending(self, attempt: int, at: datetime) -> None:
        self.sending_attempt = attempt

    def record_attempt(self, attempt: int, *, response_status: int | None, error: str | None, latency_ms: int,
                       now: datetime) -> str:
        """The push service's answer to the attempt under way; the notification's new status."""
        if self.sending_attempt != attempt:
            raise NotificationStateError(f"attempt {attempt} is not the one under way")
        status = answered(response_status)
        if status == FAILED and error is None:
            error = "gone" if response_status in GONE else f"the push service answered {response_status}"
        self._attempted(attempt=attempt, response_status=response_status, error=error, latency_ms=latency_ms,
                        at=now, status=status)
        return status

    @event("Attempted")
    def _attempted(self, attempt: int, response_status: int | None, error: str | None, latency_ms: int,
                   at: datetime, status: str) -> None:
        self.attempts = [*self.attempts, {"attempt": attempt, "response_status": response_status, "error": error,
                                          "latency_ms": latency_ms, "at": at}]
        self.sending_attempt = None
        self.status = status

    def close(self, reason: str, now: datetime) -> None:
        """Nothing more is sent: the subscription was tombstoned or unsubscribed meanwhile."""
        if self.status == PENDING:
            self._closed(status=CANCELLED, reason=reason, at=now)

    @event("Closed")
    def _closed(self, status: str, reason: str, at: datetime) -> None:
        self.status = status
        self.closed_reason = reason
        self.sending_attempt = None

    def acknowledge(self, now: datetime) -> bool:
        """The device says it showed the notification; the first acknowledgement counts."""
        if self.delivered_at is not None:
            return False
        self._delivered(at=now)
        return True

    @event("Delivered")
    def _delivered(self, at: datetime) -> None:
        self.delivered_at = at
