"""``/v1/push``: Web Push for live inbound calls (SPEC.md Other endpoints named, Events 12;
docs/push.md): the VAPID public key, a device's opt-in per number, its opt-out, its
acknowledgement of a notification, and the tenant's devices with their failure counts."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Controller, Response, get, post
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import Parameter
from litestar.status_codes import HTTP_200_OK, HTTP_201_CREATED

from application.errors import FeatureUnavailableError, ValidationFailedError
from application.principal import Principal
from application.push import subscriptions, vapid
from application.push.ports import PushPorts
from application.push.subscriptions import Subscribing
from domain.accounts.scopes import PUSH_READ, PUSH_WRITE
from domain.push.notification import PushNotification
from domain.push.subscription import PushSubscription
from domain.timestamps import iso
from domain.webhooks.targets import UnsafeTargetError, parse_target
from entrypoints.http import cursors
from entrypoints.http.auth import requires_scope
from entrypoints.http.blocking import run_blocking
from entrypoints.http.controllers.webhooks import DEVELOPMENT_FLAGS
from entrypoints.http.dependencies import provide_push, service_and_principal
from entrypoints.http.schemas.push import (
    PushDeliveredRequest,
    PushFailure,
    PushNotificationView,
    PushSubscribeRequest,
    PushSubscriptionsPage,
    PushSubscriptionView,
    PushUnsubscribeRequest,
    VapidKey,
)
from entrypoints.http.schemas.webhooks import ErrorBody
from entrypoints.http.services import PushService

CURSOR = "push_subscriptions"
NOT_ALLOWED = ResponseSpec(ErrorBody, description="The key lacks the scope (insufficient_scope), or names or "
                                                  "reaches a number outside its number_ids (number_not_allowed)")
UNAVAILABLE = ResponseSpec(ErrorBody, description="Web Push is not set up on this server (feature_unavailable)")


def _ports(service: PushService) -> PushPorts:
    if service.ports is None:
        raise FeatureUnavailableError("Web Push is not set up on this server", code="feature_unavailable")
    return service.ports


def subscription_view(subscription: PushSubscription) -> PushSubscriptionView:
    failure: dict[str, Any] = subscription.last_failure or {}
    return PushSubscriptionView(
        id=subscription.subscription_id, endpoint=subscription.endpoint, device_label=subscription.device_label,
        number_ids=list(subscription.number_ids), status=subscription.status,
        failure_count=subscription.failure_count, tombstoned_at=iso(subscription.tombstoned_at),
        tombstone_reason=subscription.tombstone_reason, created_at=iso(subscription.created_at) or "",
        subscribed_at=iso(subscription.subscribed_at) or "", unsubscribed_at=iso(subscription.unsubscribed_at),
        last_notified_at=iso(subscription.last_notified_at), last_delivered_at=iso(subscription.last_delivered_at),
        last_failure=PushFailure(notification_id=failure["notification_id"], response_status=failure["response_status"],
                                 error=failure["error"], at=iso(failure["at"]) or "") if failure else None)


def notification_view(notification: PushNotification) -> PushNotificationView:
    return PushNotificationView(
        notification_id=notification.notification_id, subscription_id=notification.subscription_id,
        call_id=notification.call_id, number_id=notification.number_id, from_=notification.caller,
        started_at=iso(notification.started_at) or "", status=notification.status,
        sent_at=iso(notification.sent_at), delivered_at=iso(notification.delivered_at))


async def checked_endpoint(service: PushService, endpoint: str) -> str:
    """The normalized endpoint, or a 422 at ``body.subscription.endpoint`` saying why (the webhook
    URL policy, with the development flag that would lift it)."""
    try:
        async with _ports(service).sender() as sender:
            return await sender.check(endpoint)
    except UnsafeTargetError as exc:
        flag = DEVELOPMENT_FLAGS.get(exc.code)
        message = exc.message + (f" (for local development only, the server allows it with {flag})" if flag else "")
        raise ValidationFailedError([(["body", "subscription", "endpoint"], message, exc.code, endpoint)]) from exc


def _normalized(endpoint: str) -> str:
    """The endpoint as ``subscribe`` kept it (no resolution: an unsubscribe needs none)."""
    try:
        return parse_target(endpoint, allow_http=True).url
    except UnsafeTargetError:
        return endpoint


class PushController(Controller):
    path = "/v1/push"
    tags = ["push"]
    dependencies = service_and_principal(provide_push)

    @get("/vapid-key", sync_to_thread=True, operation_id="push_vapid_key", responses={503: UNAVAILABLE},
         summary="The VAPID public key to subscribe a browser with (PushManager.subscribe's applicationServerKey); "
                 "any key of the account may read it")
    def vapid_key(self, service: PushService) -> VapidKey:
        return VapidKey(public_key=vapid.public_key(service.calling, _ports(service)))

    @post("/subscribe", guards=[requires_scope(PUSH_WRITE)], status_code=HTTP_201_CREATED,
          operation_id="push_subscribe", responses={
              200: ResponseSpec(PushSubscriptionView, description="The device was subscribed already: its numbers, "
                                                                  "keys and label are now these, and it is active"),
              403: NOT_ALLOWED, 503: UNAVAILABLE},
          summary="Subscribe a device (per device and per number) to notifications of live inbound calls")
    async def subscribe(self, data: PushSubscribeRequest, service: PushService,
                        principal: Principal) -> Response[PushSubscriptionView]:
        endpoint = await checked_endpoint(service, data.subscription.endpoint)
        given = Subscribing(endpoint=endpoint, p256dh=data.subscription.keys.p256dh,
                            auth=data.subscription.keys.auth, number_ids=list(data.number_ids),
                            device_label=data.device_label)
        subscription, created = await run_blocking(subscriptions.subscribe, service.calling, principal,
                                                   _ports(service).box, given)
        return Response(subscription_view(subscription), status_code=HTTP_201_CREATED if created else HTTP_200_OK)

    @post("/unsubscribe", guards=[requires_scope(PUSH_WRITE)], sync_to_thread=True, status_code=HTTP_200_OK,
          operation_id="push_unsubscribe", responses={
              403: NOT_ALLOWED, 404: ResponseSpec(ErrorBody, description="No subscription of this account has that "
                                                                          "endpoint (subscription_not_found)")},
          summary="Unsubscribe a device: nothing more is sent to it")
    def unsubscribe(self, data: PushUnsubscribeRequest, service: PushService,
                    principal: Principal) -> PushSubscriptionView:
        return subscription_view(subscriptions.unsubscribe(service.calling, principal, _normalized(data.endpoint)))

    @post("/delivered", guards=[requires_scope(PUSH_WRITE)], sync_to_thread=True, status_code=HTTP_200_OK,
          operation_id="push_delivered", responses={
              403: NOT_ALLOWED, 404: ResponseSpec(ErrorBody, description="No notification of this account has that "
                                                                          "id (notification_not_found)")},
          summary="A device acknowledges a notification it received; recorded on the notification and its "
                  "subscription (the first acknowledgement counts)")
    def delivered(self, data: PushDeliveredRequest, service: PushService, principal: Principal) -> PushNotificationView:
        return notification_view(subscriptions.acknowledge(service.calling, principal, data.notification_id))

    @get("/subscriptions", guards=[requires_scope(PUSH_READ)], sync_to_thread=True,
         operation_id="push_subscriptions", responses={403: NOT_ALLOWED},
         summary="The account's subscribed devices, first subscribed first, tombstoned ones included")
    def list_subscriptions(
        self, service: PushService, principal: Principal,
        limit: Annotated[int, Parameter(ge=1, le=200)] = 50,
        cursor: Annotated[str | None, Parameter(max_length=cursors.MAX_LENGTH,
                                                description="next_cursor of the previous page")] = None,
    ) -> PushSubscriptionsPage:
        after = cursors.decode(CURSOR, cursor, int)[0] if cursor is not None else None
        shown, after = subscriptions.listing(service.calling, principal, after, limit)
        return PushSubscriptionsPage(data=[subscription_view(s) for s in shown],
                                     next_cursor=None if after is None else cursors.encode(CURSOR, after))
