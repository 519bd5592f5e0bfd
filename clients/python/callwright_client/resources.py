"""The resources of ``Client``: ``client.calls``, ``client.numbers``, … one method per operation."""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from callwright_client import _operations as ops
from callwright_client._sync import SyncSender
from callwright_client.errors import WaitTimeout
from callwright_client.setup_types import Provisioned, PushNotification, PushSubscription, WizardDraft
from callwright_client.types import ApiKey, BatchResult, Call, Flow, Number, Page, Suppression, Template, WebhookEndpoint
from callwright_client.webhooks import verify_signature

Row = dict[str, Any]


class _Resource:
    def __init__(self, sender: SyncSender) -> None:
        self._sender = sender


class Calls(_Resource):
    """``/v1/calls``. Bodies and filters are the API's fields, passed through as given."""

    def create(self, *, idempotency_key: str | None = None, **fields: Any) -> Call:
        """Queue a call; the answer holds ``call_id`` and ``status`` (``get`` or ``wait`` for the rest).
        Retried safely: every attempt repeats one ``Idempotency-Key``, so the call is made once."""
        return self._sender.run(ops.create_call(fields, idempotency_key))

    def batch(self, items: Iterable[Row], *, idempotency_key: str | None = None, **shared: Any) -> BatchResult:
        """Up to 200 calls sharing ``shared``; each item is accepted or rejected with a reason."""
        return self._sender.run(ops.batch_calls(list(items), shared, idempotency_key))

    def get(self, call_id: str) -> Call:
        return self._sender.run(ops.get_call(call_id))

    def list_page(self, **filters: Any) -> Page[Call]:
        """One page (``limit``, ``cursor`` or ``offset``, and the list's filters)."""
        return self._sender.run(ops.list_calls(filters))

    def list(self, **filters: Any) -> Iterator[Call]:
        """Every call the filters select, page after page (``limit`` sets the page size)."""
        return self._sender.pages(ops.list_calls, filters)

    def export_csv(self, path: str | Path | IO[bytes], **params: Any) -> int:
        """Stream ``GET /v1/calls/export.csv`` (``status``, ``limit``, ``include``) into ``path``, a
        file name or an open binary stream (``sys.stdout.buffer``); the bytes written."""
        return self._sender.download(ops.export_calls(params), path)

    def cancel(self, call_id: str) -> Call:
        return self._sender.run(ops.cancel_call(call_id))

    def wait(self, call_id: str, timeout: float = 60.0, interval: float = 0.5) -> Call:
        """The call once ``completed`` or ``failed``, read every ``interval`` s; ``WaitTimeout``
        (holding the last record) when it has not ended within ``timeout`` s."""
        deadline = time.monotonic() + timeout
        while True:
            call = self.get(call_id)
            remaining = deadline - time.monotonic()
            if call.ended:
                return call
            if remaining <= 0:
                raise WaitTimeout(f"call {call_id} is still {call.status} after {timeout:g} s", call=call)
            time.sleep(min(interval, remaining))

    def events(self, call_id: str) -> Iterator[Row]:
        """The call's events, oldest first (``seq``, ``type``, ``at``, ``by``, ``data``)."""
        return self._sender.pages(lambda params: ops.call_events(call_id, params), {})


class Numbers(_Resource):
    """``/v1/numbers``: the account's active numbers."""

    def list(self, *, limit: int | None = None) -> list[Number]:
        """Every active number, oldest first (``limit`` is the page size of each request)."""
        return [*self._sender.pages(ops.list_numbers, {"limit": limit})]

    def list_page(self, *, limit: int | None = None, cursor: str | None = None) -> Page[Number]:
        """One page; ``next_cursor`` (the ``X-Next-Cursor`` header) names the next."""
        return self._sender.run(ops.list_numbers({"limit": limit, "cursor": cursor}))

    def get(self, number_id: str) -> Number:
        return self._sender.run(ops.get_number(number_id))

    def update(self, number_id: str, **fields: Any) -> Number:
        """Change some settings; fields left out stay as they are, ``None`` clears one."""
        return self._sender.run(ops.update_number(number_id, fields))


class Webhooks(_Resource):
    """``/v1/webhooks``: endpoints receiving ``call.completed``, and their deliveries.

    ``verify_signature(body, headers, secret)`` checks a delivery an endpoint received: the module
    function ``callwright_client.verify_signature`` itself, offered here too; it sends nothing."""

    verify_signature = staticmethod(verify_signature)

    def create(self, url: str, *, idempotency_key: str | None = None, **fields: Any) -> WebhookEndpoint:
        """Register ``url`` (``description``, ``events``); the answer's ``secret`` is shown only here."""
        return self._sender.run(ops.create_webhook(url, fields, idempotency_key))

    def list(self) -> list[WebhookEndpoint]:
        return self._sender.run(ops.list_webhooks())

    def delete(self, endpoint_id: str) -> WebhookEndpoint:
        return self._sender.run(ops.delete_webhook(endpoint_id))

    def deliveries(self, endpoint_id: str, **params: Any) -> Iterator[Row]:
        """The endpoint's deliveries, newest first, each with its attempts (``status`` filters)."""
        return self._sender.pages(lambda page: ops.webhook_deliveries(endpoint_id, page), params)

    def retry(self, endpoint_id: str, delivery_id: str) -> Row:
        return self._sender.run(ops.retry_delivery(endpoint_id, delivery_id))


class ApiKeys(_Resource):
    """``/auth/api-keys``: a key can only create keys with scopes and numbers it has."""

    def create(self, *, idempotency_key: str | None = None, **fields: Any) -> ApiKey:
        """A new key (``name``, ``scopes``, ``number_ids``; none gives all permissions); ``secret`` once."""
        return self._sender.run(ops.create_key(fields, idempotency_key))

    def list(self) -> list[ApiKey]:
        return self._sender.run(ops.list_keys())

    def rotate(self, key_id: str) -> ApiKey:
        """A new secret with the same scopes; the old key works 24 h more."""
        return self._sender.run(ops.rotate_key(key_id))

    def revoke(self, key_id: str) -> ApiKey:
        return self._sender.run(ops.revoke_key(key_id))


class Suppressions(_Resource):
    """``/v1/suppressions``: numbers never to call."""

    def list(self, *, include_removed: bool = False, **params: Any) -> Iterator[Suppression]:
        return self._sender.pages(ops.list_suppressions, {"include_removed": include_removed, **params})

    def add(self, e164: str, *, reason: str | None = None, expires_at: datetime | str | None = None) -> Suppression:
        return self._sender.run(ops.add_suppression({"e164": e164, "reason": reason, "expires_at": expires_at}))

    def remove(self, e164: str) -> Suppression:
        return self._sender.run(ops.remove_suppression(e164))


class Templates(_Resource):
    """``/v1/templates``: call configurations a call names by ``template_id``."""

    def create(self, *, idempotency_key: str | None = None, **fields: Any) -> Template:
        return self._sender.run(ops.create_template(fields, idempotency_key))

    def get(self, template_id: str) -> Template:
        return self._sender.run(ops.get_template(template_id))

    def list(self, **params: Any) -> Iterator[Template]:
        return self._sender.pages(ops.list_templates, params)

    def delete(self, template_id: str) -> None:
        self._sender.run(ops.delete_template(template_id))


class Flows(_Resource):
    """``/v1/flows``: conversation graphs, drafted, previewed and published."""

    def create(self, name: str, graph_json: Row, *, idempotency_key: str | None = None, **fields: Any) -> Flow:
        return self._sender.run(ops.create_flow({"name": name, "graph_json": graph_json, **fields}, idempotency_key))

    def get(self, flow_id: str) -> Flow:
        return self._sender.run(ops.get_flow(flow_id))

    def list(self, *, state: str | None = None, **params: Any) -> Iterator[Flow]:
        return self._sender.pages(ops.list_flows, {"state": state, **params})

    def update(self, flow_id: str, **fields: Any) -> Flow:
        """A new draft version from ``name`` and/or ``graph_json``."""
        return self._sender.run(ops.update_flow(flow_id, fields))

    def preview(self, flow_id: str, graph_json: Row | None = None) -> Row:
        """Compile the draft (or ``graph_json``, unsaved): ``{ok, compiled, errors}``."""
        return self._sender.run(ops.preview_flow(flow_id, graph_json))

    def publish(self, flow_id: str) -> Flow:
        return self._sender.run(ops.publish_flow(flow_id))


class Analytics(_Resource):
    """``/v1/analytics/{name}``: volume-by-status, latency-percentiles, cost-breakdown, top-failures,
    outcome-quality."""

    def report(self, name: str, **params: Any) -> Row:
        return self._sender.run(ops.analytics_report(name, params))


class Wizard(_Resource):
    """``/v1/wizard``: a Number configuration from a business description, and a number bought with it."""

    def generate(self, business_description: str) -> WizardDraft:
        """A verdict, its reason and, unless ``unsupported``, a ready configuration; stores nothing."""
        return self._sender.run(ops.generate_config(business_description))

    def provision(self, business_name: str, business_description: str, area_code: str, config: Row, *,
                  idempotency_key: str | None = None) -> Provisioned:
        """Buy a number in ``area_code`` and configure it (``numbers:write``). Retried safely: every
        attempt repeats one ``Idempotency-Key``, so one number is bought; while the first attempt's
        purchase is on its way (409 ``provision_in_progress``) it is sent again after ``Retry-After``."""
        fields = {"business_name": business_name, "business_description": business_description,
                  "area_code": area_code, "config": config}
        return self._sender.run(ops.provision_number(fields, idempotency_key))


class Push(_Resource):
    """``/v1/push``: Web Push devices told of live inbound calls, per device and per number."""

    def vapid_key(self) -> str:
        """The VAPID public key (base64url): the browser's ``applicationServerKey``."""
        return self._sender.run(ops.vapid_key())

    def subscribe(self, endpoint: str, p256dh: str, auth: str, number_ids: Iterable[str],
                  device_label: str | None = None) -> PushSubscription:
        """Subscribe the device (a browser's ``PushSubscription.toJSON()``: its endpoint and keys) to
        ``number_ids``, which replace its numbers; subscribing again renews it."""
        subscription = {"endpoint": endpoint, "keys": {"p256dh": p256dh, "auth": auth}}
        return self._sender.run(ops.subscribe_device(subscription, list(number_ids), device_label))

    def unsubscribe(self, endpoint: str) -> PushSubscription:
        return self._sender.run(ops.unsubscribe_device(endpoint))

    def delivered(self, notification_id: str) -> PushNotification:
        """Acknowledge a notification the device received; the first acknowledgement counts."""
        return self._sender.run(ops.acknowledge_notification(notification_id))

    def subscriptions(self, *, limit: int | None = None) -> Iterator[PushSubscription]:
        """Every subscribed device (tombstoned ones too), first subscribed first, page after page."""
        return self._sender.pages(ops.list_push_subscriptions, {"limit": limit})
