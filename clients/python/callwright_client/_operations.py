"""Every operation of the API the client offers: its route, body and answer (entrypoints/http/controllers).

Creates carry an ``Idempotency-Key``. ``POST /v1/calls``, ``POST /v1/calls/batch`` and
``POST /v1/wizard/provision`` honour it (a repeat answers the first result and dials or buys
nothing), so they are replay-safe; the other creates send it too, but their routes do not
deduplicate yet, so they are never sent again once the server may have acted (see _retry).
The wizard's ``generate`` stores nothing, and a ``/v1/push`` POST sent twice leaves the device
as sending it once does, so they are replay-safe too.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import httpx

from callwright_client._spec import NO_BODY, Operation, Spec, body_of, idempotency_key, one, page_of, row, segment
from callwright_client.setup_types import Provisioned, PushNotification, PushSubscription, WizardDraft
from callwright_client.types import (
    ApiKey,
    BatchResult,
    Call,
    Flow,
    Number,
    Page,
    Suppression,
    Template,
    WebhookEndpoint,
)

T = TypeVar("T")
Params = Mapping[str, Any]
NEXT_CURSOR_HEADER = "X-Next-Cursor"
KEYS = "/auth/api-keys"


def _create(path: str, body: Any, key: str | None, *, honoured: bool = False) -> Spec:
    return Spec("POST", path, body=body, idempotency_key=idempotency_key(key), replay_safe=honoured)


def _whole(build: Callable[[dict[str, Any]], T]) -> Callable[[httpx.Response], list[T]]:
    """A list answered whole (``{data: [...], next_cursor: null}``): its items."""
    return lambda response: [build(item) for item in response.json().get("data") or []]


# calls
def create_call(fields: dict[str, Any], key: str | None) -> Operation[Call]:
    return Operation(_create("/v1/calls", fields, key, honoured=True), one(Call.from_json))


def batch_calls(items: list[dict[str, Any]], shared: dict[str, Any], key: str | None) -> Operation[BatchResult]:
    return Operation(_create("/v1/calls/batch", {**shared, "items": list(items)}, key, honoured=True),
                     one(BatchResult.from_json))


def get_call(call_id: str) -> Operation[Call]:
    return Operation(Spec("GET", f"/v1/calls/{segment(call_id)}"), one(Call.from_json))


def list_calls(params: Params) -> Operation[Page[Call]]:
    return Operation(Spec("GET", "/v1/calls", params=params), page_of(Call.from_json))


def export_calls(params: Params) -> Spec:
    return Spec("GET", "/v1/calls/export.csv", params=params)


def cancel_call(call_id: str) -> Operation[Call]:
    return Operation(Spec("POST", f"/v1/calls/{segment(call_id)}/cancel"), one(Call.from_json))


def call_events(call_id: str, params: Params) -> Operation[Page[dict[str, Any]]]:
    return Operation(Spec("GET", f"/v1/calls/{segment(call_id)}/events", params=params), page_of(row))


# numbers: the list is a bare array, the next page's cursor in a header
def _numbers_page(response: httpx.Response) -> Page[Number]:
    return Page(data=[Number.from_json(item) for item in response.json()],
                next_cursor=response.headers.get(NEXT_CURSOR_HEADER))


def list_numbers(params: Params) -> Operation[Page[Number]]:
    return Operation(Spec("GET", "/v1/numbers", params=params), _numbers_page)


def get_number(number_id: str) -> Operation[Number]:
    return Operation(Spec("GET", f"/v1/numbers/{segment(number_id)}"), one(Number.from_json))


def update_number(number_id: str, fields: dict[str, Any]) -> Operation[Number]:
    return Operation(Spec("PATCH", f"/v1/numbers/{segment(number_id)}", body=fields), one(Number.from_json))


# webhooks
def create_webhook(url: str, fields: dict[str, Any], key: str | None) -> Operation[WebhookEndpoint]:
    return Operation(_create("/v1/webhooks", {"url": url, **fields}, key), one(WebhookEndpoint.from_json))


def list_webhooks() -> Operation[list[WebhookEndpoint]]:
    return Operation(Spec("GET", "/v1/webhooks"), _whole(WebhookEndpoint.from_json))


def delete_webhook(endpoint_id: str) -> Operation[WebhookEndpoint]:
    return Operation(Spec("DELETE", f"/v1/webhooks/{segment(endpoint_id)}"), one(WebhookEndpoint.from_json))


def webhook_deliveries(endpoint_id: str, params: Params) -> Operation[Page[dict[str, Any]]]:
    return Operation(Spec("GET", f"/v1/webhooks/{segment(endpoint_id)}/deliveries", params=params), page_of(row))


def retry_delivery(endpoint_id: str, delivery_id: str) -> Operation[dict[str, Any]]:
    path = f"/v1/webhooks/{segment(endpoint_id)}/deliveries/{segment(delivery_id)}/retry"
    return Operation(Spec("POST", path), one(row))


# API keys
def create_key(fields: dict[str, Any], key: str | None) -> Operation[ApiKey]:
    return Operation(_create(KEYS, fields, key), one(ApiKey.from_json))


def list_keys() -> Operation[list[ApiKey]]:
    return Operation(Spec("GET", KEYS), _whole(ApiKey.from_json))


def rotate_key(key_id: str) -> Operation[ApiKey]:
    return Operation(Spec("POST", f"{KEYS}/{segment(key_id)}/rotate"), one(ApiKey.from_json))


def revoke_key(key_id: str) -> Operation[ApiKey]:
    return Operation(Spec("DELETE", f"{KEYS}/{segment(key_id)}"), one(ApiKey.from_json))


# suppressions
def list_suppressions(params: Params) -> Operation[Page[Suppression]]:
    return Operation(Spec("GET", "/v1/suppressions", params=params), page_of(Suppression.from_json))


def add_suppression(fields: dict[str, Any]) -> Operation[Suppression]:
    body = {name: value for name, value in fields.items() if value is not None}
    return Operation(Spec("POST", "/v1/suppressions", body=body), one(Suppression.from_json))


def remove_suppression(e164: str) -> Operation[Suppression]:
    return Operation(Spec("DELETE", f"/v1/suppressions/{segment(e164)}"), one(Suppression.from_json))


# templates
def create_template(fields: dict[str, Any], key: str | None) -> Operation[Template]:
    return Operation(_create("/v1/templates", fields, key), one(Template.from_json))


def get_template(template_id: str) -> Operation[Template]:
    return Operation(Spec("GET", f"/v1/templates/{segment(template_id)}"), one(Template.from_json))


def list_templates(params: Params) -> Operation[Page[Template]]:
    return Operation(Spec("GET", "/v1/templates", params=params), page_of(Template.from_json))


def delete_template(template_id: str) -> Operation[None]:
    return Operation(Spec("DELETE", f"/v1/templates/{segment(template_id)}"), lambda response: None)


# flows
def create_flow(fields: dict[str, Any], key: str | None) -> Operation[Flow]:
    return Operation(_create("/v1/flows", fields, key), one(Flow.from_json))


def get_flow(flow_id: str) -> Operation[Flow]:
    return Operation(Spec("GET", f"/v1/flows/{segment(flow_id)}"), one(Flow.from_json))


def list_flows(params: Params) -> Operation[Page[Flow]]:
    return Operation(Spec("GET", "/v1/flows", params=params), page_of(Flow.from_json))


def update_flow(flow_id: str, fields: dict[str, Any]) -> Operation[Flow]:
    return Operation(Spec("PATCH", f"/v1/flows/{segment(flow_id)}", body=fields), one(Flow.from_json))


def preview_flow(flow_id: str, graph_json: dict[str, Any] | None) -> Operation[dict[str, Any]]:
    """Compiles the draft, or ``graph_json`` unsaved; stores nothing, so it may be sent again."""
    body = NO_BODY if graph_json is None else {"graph_json": graph_json}
    return Operation(Spec("POST", f"/v1/flows/{segment(flow_id)}/preview", body=body, replay_safe=True), one(row))


def publish_flow(flow_id: str) -> Operation[Flow]:
    return Operation(Spec("POST", f"/v1/flows/{segment(flow_id)}/publish"), one(Flow.from_json))


# analytics
def analytics_report(name: str, params: Params) -> Operation[Any]:
    return Operation(Spec("GET", f"/v1/analytics/{segment(name)}", params=params), body_of)


# wizard
def generate_config(business_description: str) -> Operation[WizardDraft]:
    body = {"business_description": business_description}
    return Operation(Spec("POST", "/v1/wizard/generate", body=body, replay_safe=True), one(WizardDraft.from_json))


def provision_number(fields: dict[str, Any], key: str | None) -> Operation[Provisioned]:
    """Buys a number: a retry repeats the key, so the server answers the first result (or 409
    ``provision_in_progress`` with ``Retry-After`` while the purchase is on its way, see _retry)."""
    return Operation(_create("/v1/wizard/provision", fields, key, honoured=True), one(Provisioned.from_json))


# push: one subscription per endpoint, so subscribing again renews it; later unsubscribes and
# acknowledgements change nothing
def vapid_key() -> Operation[str]:
    return Operation(Spec("GET", "/v1/push/vapid-key"), lambda response: str(response.json()["public_key"]))


def subscribe_device(subscription: dict[str, Any], number_ids: list[str],
                     device_label: str | None) -> Operation[PushSubscription]:
    body: dict[str, Any] = {"subscription": subscription, "number_ids": number_ids}
    if device_label is not None:
        body["device_label"] = device_label
    return Operation(Spec("POST", "/v1/push/subscribe", body=body, replay_safe=True), one(PushSubscription.from_json))


def unsubscribe_device(endpoint: str) -> Operation[PushSubscription]:
    spec = Spec("POST", "/v1/push/unsubscribe", body={"endpoint": endpoint}, replay_safe=True)
    return Operation(spec, one(PushSubscription.from_json))


def acknowledge_notification(notification_id: str) -> Operation[PushNotification]:
    spec = Spec("POST", "/v1/push/delivered", body={"notification_id": notification_id}, replay_safe=True)
    return Operation(spec, one(PushNotification.from_json))


def list_push_subscriptions(params: Params) -> Operation[Page[PushSubscription]]:
    return Operation(Spec("GET", "/v1/push/subscriptions", params=params), page_of(PushSubscription.from_json))
