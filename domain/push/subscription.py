"""A device's Web Push subscription (SPEC.md Events 12): opted in per device and per number, and
the failure rule. A 404 or 410 from the push service tombstones it at once (``failure_count`` 5);
any other failure adds 1 and the 5th tombstones it; a notification sent clears the count. A
tombstoned or unsubscribed subscription gets nothing until the device subscribes again.

One aggregate per tenant and endpoint URL (the device's identity at its push service). The
``auth`` secret is kept sealed (``sealed_auth``); ``p256dh`` is the device's public key."""

from __future__ import annotations

import base64
import binascii
import uuid
from datetime import datetime

from eventsourcing.domain import event

from domain import ids
from domain.base import TenantAggregate

FAILURE_LIMIT = 5
GONE = (404, 410)  # the push service says the subscription no longer exists
MAX_NUMBERS = 50
MAX_LABEL = 100
P256DH_BYTES = 65  # an uncompressed P-256 point (RFC 8291 §3.1)
AUTH_BYTES = 16  # the authentication secret (RFC 8291 §3.2)

ACTIVE, TOMBSTONED, UNSUBSCRIBED = "active", "tombstoned", "unsubscribed"


def failures_after(count: int, status: int | None) -> int:
    """The failure count after one failed notification (``status`` None: no answer)."""
    if status in GONE:
        return FAILURE_LIMIT
    return min(FAILURE_LIMIT, count + 1)


def key_problem(value: str, length: int, *, point: bool = False) -> str | None:
    """Why a base64url key of a browser's subscription is unusable, or None."""
    try:
        raw = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
    except (binascii.Error, ValueError):
        return "must be base64url"
    if len(raw) != length:
        return f"must decode to {length} bytes, not {len(raw)}"
    if point and raw[0] != 4:
        return "must be an uncompressed P-256 point (its first byte 0x04)"
    return None


class PushSubscription(TenantAggregate):
    @staticmethod
    def create_id(tenant_id: str, endpoint: str) -> uuid.UUID:
        return ids.deterministic("push-subscription", f"{tenant_id}:{endpoint}")

    @staticmethod
    def id_of(subscription_id: str) -> uuid.UUID:
        return ids.from_public(ids.PUSH_SUBSCRIPTION, subscription_id)

    @event("Subscribed")
    def __init__(self, tenant_id: str, endpoint: str, p256dh: str, sealed_auth: str, number_ids: list[str],
                 device_label: str | None, by: str, at: datetime) -> None:
        self.tenant_id = tenant_id
        self.endpoint = endpoint
        self.created_at = at
        self.last_notified_at: datetime | None = None
        self.last_delivered_at: datetime | None = None
        self.last_failure: dict[str, object] | None = None
        self.p256dh = p256dh
        self.sealed_auth = sealed_auth
        self.number_ids = list(number_ids)
        self.device_label = device_label
        self.subscribed_by = by
        self.subscribed_at = at
        self.failure_count = 0
        self.tombstoned_at: datetime | None = None
        self.tombstone_reason: str | None = None
        self.unsubscribed_at: datetime | None = None

    @property
    def subscription_id(self) -> str:
        return ids.to_public(ids.PUSH_SUBSCRIPTION, self.id)

    @property
    def status(self) -> str:
        if self.unsubscribed_at is not None:
            return UNSUBSCRIBED
        return TOMBSTONED if self.tombstoned_at is not None else ACTIVE

    @property
    def active(self) -> bool:
        return self.status == ACTIVE

    def resubscribe(self, *, p256dh: str, sealed_auth: str, number_ids: list[str], device_label: str | None,
                    by: str, now: datetime) -> None:
        """The device subscribed again (new keys, other numbers, or after a tombstone or an
        unsubscribe): it is active again with a clean count."""
        self._resubscribed(p256dh=p256dh, sealed_auth=sealed_auth, number_ids=list(number_ids),
                           device_label=device_label, by=by, at=now)

    @event("Resubscribed")
    def _resubscribed(self, p256dh: str, sealed_auth: str, number_ids: list[str], device_label: str | None, by: str,
                      at: datetime) -> None:
        self.p256dh = p256dh
        self.sealed_auth = sealed_auth
        self.number_ids = list(number_ids)
        self.device_label = device_label
        self.subscribed_by = by
        self.subscribed_at = at
        self.failure_count = 0
        self.tombstoned_at = None
        self.tombstone_reason = None
        self.unsubscribed_at = None

    def unsubscribe(self, by: str, now: datetime) -> bool:
        if self.unsubscribed_at is not None:
            return False
        self._unsubscribed(by=by, at=now)
        return True

    @event("Unsubscribed")
    def _unsubscribed(self, by: str, at: datetime) -> None:
        self.unsubscribed_at = at

    def notified(self, notification_id: str, now: datetime) -> None:
        """The push service accepted a notification for the device."""
        self._notified(notification_id=notification_id, at=now)

    @event("Notified")
    def _notified(self, notification_id: str, at: datetime) -> None:
        self.last_notified_at = at
        self.failure_count = 0

    def fail(self, notification_id: str, response_status: int | None, error: str | None, now: datetime) -> bool:
        """A notification failed; True when this failure tombstones the subscription."""
        count = failures_after(self.failure_count, response_status)
        self._failed(notification_id=notification_id, response_status=response_status, error=error,
                     failure_count=count, at=now)
        if count < FAILURE_LIMIT or self.tombstoned_at is not None:
            return False
        reason = (f"the push service answered {response_status}: the subscription is gone"
                  if response_status in GONE else f"{FAILURE_LIMIT} notifications failed in a row")
        self._tombstoned(reason=reason, at=now)
        return True

    @event("Failed")
    def _failed(self, notification_id: str, response_status: int | None, error: str | None, failure_count: int,
                at: datetime) -> None:
        self.failure_count = failure_count
        self.last_failure = {"notification_id": notification_id, "response_status": response_status,
                             "error": error, "at": at}

    @event("Tombstoned")
    def _tombstoned(self, reason: str, at: datetime) -> None:
        self.tombstoned_at = at
        self.tombstone_reason = reason

    def delivered(self, notification_id: str, now: datetime) -> None:
        """The device acknowledged a notification (``POST /v1/push/delivered``)."""
        self._delivered(notification_id=notification_id, at=now)

    @event("Delivered")
    def _delivered(self, notification_id: str, at: datetime) -> None:
        self.last_delivered_at = at
