"""Notifications of live inbound calls (SPEC.md Events 12): one per active subscription of the
dialled number, scheduled from the call's ``InboundAnswered`` by the notifier reactor, then each
attempt written down before it is sent and answered after, on the notification and on its
subscription (the failure rule, ``domain/push/subscription.py``) in one commit.

Nothing here touches the call: its events and outcome never wait for or depend on a push.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from application import logs
from application.calling.app import Calling
from application.errors import ConflictError
from application.ports import SecretBox
from application.push.ports import PushOutcome, PushTarget
from domain.calls.call import Call
from domain.push.index import PushSubscriptionIndex
from domain.push.notification import NOTIFY_WITHIN, PENDING, SENT, NotificationStateError, PushNotification
from domain.push.subscription import PushSubscription

log = logs.get_logger("callwright.push")


def schedule(calling: Calling, tenant_id: str, load_call: Callable[[], Call],
             started_at: datetime) -> list[PushNotification]:
    """The call's notifications, one per active subscription of its number, saved together; seeing
    the call again saves nothing new (their ids derive from the call and the subscription) and
    answers the ones saved before. The call is loaded only when its tenant has an active
    subscription (most tenants have none)."""
    index = calling.find(PushSubscriptionIndex, PushSubscriptionIndex.create_id(tenant_id))
    if index is None or not index.numbers:
        return []
    call = load_call()
    number_id = (call.metadata or {}).get("number_id")
    if not number_id or call.direction != "inbound" or call.mode != "live":
        return []
    targets = index.subscribed_to(str(number_id))
    now = calling.ports.clock()

    def build(subscription_id: str) -> PushNotification:
        return PushNotification(tenant_id=call.tenant_id, subscription_id=subscription_id, call_id=call.call_id,
                                number_id=str(number_id), caller=call.from_number, started_at=started_at, at=now,
                                expires_at=started_at + NOTIFY_WITHIN)

    fresh = [build(s) for s in targets]
    try:
        calling.commit(*fresh)
        return fresh
    except ConflictError:  # seen before (a replay, or another worker): each one as it stands
        found = []
        for subscription_id in targets:
            notification = build(subscription_id)
            try:
                calling.commit(notification)
            except ConflictError:
                notification = calling.find(PushNotification, notification.id)
            if notification is not None:
                found.append(notification)
        return found


@dataclass(frozen=True)
class Attempt:
    notification: PushNotification
    number: int
    target: PushTarget
    payload: bytes
    ttl: int


def start(calling: Calling, box: SecretBox, notification_uuid: uuid.UUID) -> Attempt | None:
    """Write the next attempt down; None when there is nothing to send (sent, failed, too late, the
    subscription tombstoned or unsubscribed meanwhile, or another worker is on it)."""
    notification = calling.find(PushNotification, notification_uuid)
    if notification is None or notification.status != PENDING:
        return None
    subscription = calling.find(PushSubscription, PushSubscription.id_of(notification.subscription_id))
    now = calling.ports.clock()
    if subscription is None or not subscription.active:
        notification.close(f"the subscription is {subscription.status if subscription else 'gone'}", now)
        _commit_quietly(calling, notification)
        return None
    number = notification.start_attempt(now)
    if not _commit_quietly(calling, notification) or number is None:
        return None
    target = PushTarget(endpoint=subscription.endpoint, p256dh=subscription.p256dh,
                        auth=box.open(subscription.sealed_auth))
    return Attempt(notification=notification, number=number, target=target, payload=notification.payload(),
                   ttl=notification.seconds_left(now))


def finish(calling: Calling, attempt: Attempt, outcome: PushOutcome) -> None:
    """Write the answer down on the notification and its subscription together (a failure may
    tombstone the subscription, which then leaves the number's devices)."""
    def once() -> None:
        notification = calling.find(PushNotification, attempt.notification.id)
        subscription = calling.find(PushSubscription, PushSubscription.id_of(attempt.notification.subscription_id))
        if notification is None or subscription is None:
            return
        now = calling.ports.clock()
        try:
            status = notification.record_attempt(attempt.number, response_status=outcome.status, error=outcome.error,
                                                 latency_ms=outcome.latency_ms, now=now)
        except NotificationStateError:
            return  # already written down by another worker
        index, tombstoned = None, False
        if status == SENT:
            subscription.notified(notification.notification_id, now)
        elif tombstoned := subscription.fail(notification.notification_id, outcome.status, outcome.error, now):
            index = calling.find(PushSubscriptionIndex, PushSubscriptionIndex.create_id(subscription.tenant_id))
            if index is not None:
                index.deactivate(subscription.subscription_id)
        calling.commit(*(a for a in (notification, subscription, index) if a is not None))
        _log(notification, subscription, outcome, tombstoned)

    calling.retry_on_conflict(once)


def _log(notification: PushNotification, subscription: PushSubscription, outcome: PushOutcome,
         tombstoned: bool) -> None:
    fields = {"notification_id": notification.notification_id, "subscription_id": subscription.subscription_id,
              "call_id": notification.call_id, "tenant_id": notification.tenant_id,
              "response_status": outcome.status, "latency_ms": outcome.latency_ms}
    if notification.status == SENT:
        log.info("push.notified", **fields)
        return
    log.warning("push.failed", **fields, error=outcome.error, failure_count=subscription.failure_count)
    if tombstoned:
        log.warning("push.subscription_tombstoned", subscription_id=subscription.subscription_id,
                    tenant_id=subscription.tenant_id, reason=subscription.tombstone_reason)


def _commit_quietly(calling: Calling, notification: PushNotification) -> bool:
    try:
        calling.commit(notification)
    except ConflictError:
        return False
    return True
