"""Web Push opt-in (SPEC.md Events 12): a device subscribes for some of the tenant's numbers,
unsubscribes, lists the subscriptions, and acknowledges a notification it showed.

Subscribing again with the same endpoint replaces the device's numbers and keys and makes it
active again. A key restricted by ``number_ids`` names only its numbers (403 for any other) and
reaches only the subscriptions all of whose numbers are its own. The endpoint URL is checked by
the caller before ``subscribe`` (the webhook SSRF guard, an async resolution).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from application.calling.app import Calling
from application.errors import NotFoundError, PermissionDeniedError, ValidationFailedError
from application.ports import SecretBox
from application.principal import Principal
from domain import ids
from domain.numbers.number import Number
from domain.push.index import PushSubscriptionIndex
from domain.push.notification import PushNotification
from domain.push.subscription import PushSubscription


@dataclass(frozen=True, kw_only=True)
class Subscribing:
    endpoint: str
    p256dh: str
    auth: str
    number_ids: list[str]
    device_label: str | None


def _index(calling: Calling, tenant_id: str) -> PushSubscriptionIndex | None:
    return calling.find(PushSubscriptionIndex, PushSubscriptionIndex.create_id(tenant_id))


def _reachable(principal: Principal, subscription: PushSubscription) -> bool:
    return all(principal.may_use_number(n) for n in subscription.number_ids)


def _numbers(calling: Calling, principal: Principal, number_ids: list[str]) -> list[str]:
    """The canonical ids, once each: 403 for a number outside the key's list, 422 for one that is
    not an active number of the tenant."""
    canonical = [str(uuid.UUID(n)) for n in number_ids]
    for number_id in canonical:
        principal.require_number(number_id)
    problems = []
    for place, number_id in enumerate(canonical):
        number = calling.find(Number, uuid.UUID(number_id))
        if number is None or number.tenant_id != principal.tenant_id or not number.active:
            problems.append((["body", "number_ids", place], "names no active number of this account",
                             "number_not_found", number_ids[place]))
    if problems:
        raise ValidationFailedError(problems)
    return list(dict.fromkeys(canonical))


def subscribe(calling: Calling, principal: Principal, box: SecretBox,
              given: Subscribing) -> tuple[PushSubscription, bool]:
    """The device's subscription and whether it is new. The same keys, numbers and label again on
    an active subscription record nothing."""
    numbers = _numbers(calling, principal, given.number_ids)
    sealed = box.seal(given.auth)

    def attempt() -> tuple[PushSubscription, bool]:
        now, by = calling.ports.clock(), principal.actor
        subscription = calling.find(PushSubscription, PushSubscription.create_id(principal.tenant_id, given.endpoint))
        index = _index(calling, principal.tenant_id) or PushSubscriptionIndex(tenant_id=principal.tenant_id)
        created = subscription is None
        if subscription is None:
            subscription = PushSubscription(tenant_id=principal.tenant_id, endpoint=given.endpoint, p256dh=given.p256dh,
                                            sealed_auth=sealed, number_ids=numbers, device_label=given.device_label,
                                            by=by, at=now)
        else:
            if not _reachable(principal, subscription):
                raise PermissionDeniedError("this device is subscribed for numbers this API key may not use",
                                            code="number_not_allowed")
            same = (subscription.p256dh, subscription.number_ids, subscription.device_label) == (
                given.p256dh, numbers, given.device_label)
            if subscription.active and same and box.open(subscription.sealed_auth) == given.auth:
                return subscription, False
            subscription.resubscribe(p256dh=given.p256dh, sealed_auth=sealed, number_ids=numbers,
                                     device_label=given.device_label, by=by, now=now)
        index.subscribe(subscription.subscription_id, numbers)
        calling.commit(subscription, index)
        return subscription, created

    return calling.retry_on_conflict(attempt)


def unsubscribe(calling: Calling, principal: Principal, endpoint: str) -> PushSubscription:
    """Nothing more is sent to the device; unsubscribing again answers the same."""
    def attempt() -> PushSubscription:
        subscription = calling.find(PushSubscription, PushSubscription.create_id(principal.tenant_id, endpoint))
        if subscription is None:
            raise NotFoundError("no subscription of this account has that endpoint", code="subscription_not_found")
        if not _reachable(principal, subscription):
            raise PermissionDeniedError("this device is subscribed for numbers this API key may not use",
                                        code="number_not_allowed")
        if subscription.unsubscribe(principal.actor, calling.ports.clock()):
            index = _index(calling, principal.tenant_id)
            if index is not None:
                index.unlist(subscription.subscription_id)
            calling.commit(*(a for a in (subscription, index) if a is not None))
        return subscription

    return calling.retry_on_conflict(attempt)


def listing(calling: Calling, principal: Principal, after: int | None,
            limit: int) -> tuple[list[PushSubscription], int | None]:
    """A page of the tenant's subscriptions (tombstoned ones too, unsubscribed ones not), first
    subscribed first, and where the next page starts."""
    index = _index(calling, principal.tenant_id)
    if index is None:
        return [], None
    shown: list[PushSubscription] = []
    while True:
        page, after = index.page(after, limit - len(shown))
        found = (calling.find(PushSubscription, PushSubscription.id_of(s)) for s in page)
        shown += [s for s in found if s is not None and _reachable(principal, s)]
        if after is None or len(shown) >= limit:
            return shown, after


def acknowledge(calling: Calling, principal: Principal, notification_id: str) -> PushNotification:
    """``POST /v1/push/delivered``: recorded on the notification and its subscription, once."""
    try:
        aggregate_id = PushNotification.id_of(notification_id)
    except ids.MalformedIdError as exc:
        raise ValidationFailedError([(["body", "notification_id"], str(exc), "invalid_id", notification_id)]) from exc

    def attempt() -> PushNotification:
        notification = calling.find(PushNotification, aggregate_id)
        if notification is None or notification.tenant_id != principal.tenant_id:
            raise NotFoundError(f"no notification {notification_id}", code="notification_not_found")
        principal.require_number(notification.number_id)
        now = calling.ports.clock()
        if notification.acknowledge(now):
            subscription = calling.find(PushSubscription, PushSubscription.id_of(notification.subscription_id))
            if subscription is not None:
                subscription.delivered(notification.notification_id, now)
            calling.commit(*(a for a in (notification, subscription) if a is not None))
        return notification

    return calling.retry_on_conflict(attempt)
