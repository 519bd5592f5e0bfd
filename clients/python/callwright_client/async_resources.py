"""The resources of ``AsyncClient``: those of ``resources``, awaited. Lists are ``async for``."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterable
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from callwright_client import _operations as ops
from callwright_client._async import AsyncSender
from callwright_client.errors import WaitTimeout
from callwright_client.setup_types import Provisioned, PushNotification, PushSubscription, WizardDraft
from callwright_client.types import ApiKey, BatchResult, Call, Flow, Number, Page, Suppression, Template, WebhookEndpoint
from callwright_client.webhooks import verify_signature

Row = dict[str, Any]


class _Resource:
    def __init__(self, sender: AsyncSender) -> None:
        self._sender = sender


class AsyncCalls(_Resource):
    """``/v1/calls``; see ``resources.Calls``."""

    async def create(self, *, idempotency_key: str | None = None, **fields: Any) -> Call:
        return await self._sender.run(ops.create_call(fields, idempotency_key))

    async def batch(self, items: Iterable[Row], *, idempotency_key: str | None = None, **shared: Any) -> BatchResult:
        return await self._sender.run(ops.batch_calls(list(items), shared, idempotency_key))

    async def get(self, call_id: str) -> Call:
        return await self._sender.run(ops.get_call(call_id))

    async def list_page(self, **filters: Any) -> Page[Call]:
        return await self._sender.run(ops.list_calls(filters))

    def list(self, **filters: Any) -> AsyncIterator[Call]:
        return self._sender.pages(ops.list_calls, filters)

    async def export_csv(self, path: str | Path | IO[bytes], **params: Any) -> int:
        return await self._sender.download(ops.export_calls(params), path)

    async def cancel(self, call_id: str) -> Call:
        return await self._sender.run(ops.cancel_call(call_id))

    async def wait(self, call_id: str, timeout: float = 60.0, interval: float = 0.5) -> Call:
        deadline = time.monotonic() + timeout
        while True:
            call = await self.get(call_id)
            remaining = deadline - time.monotonic()
            if call.ended:
                return call
            if remaining <= 0:
                raise WaitTimeout(f"call {call_id} is still {call.status} after {timeout:g} s", call=call)
            await asyncio.sleep(min(interval, remaining))

    def events(self, call_id: str) -> AsyncIterator[Row]:
        return self._sender.pages(lambda params: ops.call_events(call_id, params), {})


class AsyncNumbers(_Resource):
    async def list(self, *, limit: int | None = None) -> list[Number]:
        return [number async for number in self._sender.pages(ops.list_numbers, {"limit": limit})]

    async def list_page(self, *, limit: int | None = None, cursor: str | None = None) -> Page[Number]:
        """One page; ``next_cursor`` (the ``X-Next-Cursor`` header) names the next."""
        return await self._sender.run(ops.list_numbers({"limit": limit, "cursor": cursor}))

    async def get(self, number_id: str) -> Number:
        return await self._sender.run(ops.get_number(number_id))

    async def update(self, number_id: str, **fields: Any) -> Number:
        return await self._sender.run(ops.update_number(number_id, fields))


class AsyncWebhooks(_Resource):
    """``/v1/webhooks``; see ``resources.Webhooks``. ``verify_signature`` is not awaited: it checks a
    delivery in memory and sends nothing."""

    verify_signature = staticmethod(verify_signature)

    async def create(self, url: str, *, idempotency_key: str | None = None, **fields: Any) -> WebhookEndpoint:
        return await self._sender.run(ops.create_webhook(url, fields, idempotency_key))

    async def list(self) -> list[WebhookEndpoint]:
        return await self._sender.run(ops.list_webhooks())

    async def delete(self, endpoint_id: str) -> WebhookEndpoint:
        return await self._sender.run(ops.delete_webhook(endpoint_id))

    def deliveries(self, endpoint_id: str, **params: Any) -> AsyncIterator[Row]:
        return self._sender.pages(lambda page: ops.webhook_deliveries(endpoint_id, page), params)

    async def retry(self, endpoint_id: str, delivery_id: str) -> Row:
        return await self._sender.run(ops.retry_delivery(endpoint_id, delivery_id))


class AsyncApiKeys(_Resource):
    async def create(self, *, idempotency_key: str | None = None, **fields: Any) -> ApiKey:
        return await self._sender.run(ops.create_key(fields, idempotency_key))

    async def list(self) -> list[ApiKey]:
        return await self._sender.run(ops.list_keys())

    async def rotate(self, key_id: str) -> ApiKey:
        return await self._sender.run(ops.rotate_key(key_id))

    async def revoke(self, key_id: str) -> ApiKey:
        return await self._sender.run(ops.revoke_key(key_id))


class AsyncSuppressions(_Resource):
    def list(self, *, include_removed: bool = False, **params: Any) -> AsyncIterator[Suppression]:
        return self._sender.pages(ops.list_suppressions, {"include_removed": include_removed, **params})

    async def add(self, e164: str, *, reason: str | None = None,
                  expires_at: datetime | str | None = None) -> Suppression:
        return await self._sender.run(ops.add_suppression({"e164": e164, "reason": reason, "expires_at": expires_at}))

    async def remove(self, e164: str) -> Suppression:
        return await self._sender.run(ops.remove_suppression(e164))


class AsyncTemplates(_Resource):
    async def create(self, *, idempotency_key: str | None = None, **fields: Any) -> Template:
        return await self._sender.run(ops.create_template(fields, idempotency_key))

    async def get(self, template_id: str) -> Template:
        return await self._sender.run(ops.get_template(template_id))

    def list(self, **params: Any) -> AsyncIterator[Template]:
        return self._sender.pages(ops.list_templates, params)

    async def delete(self, template_id: str) -> None:
        await self._sender.run(ops.delete_template(template_id))


class AsyncFlows(_Resource):
    async def create(self, name: str, graph_json: Row, *, idempotency_key: str | None = None, **fields: Any) -> Flow:
        return await self._sender.run(ops.create_flow({"name": name, "graph_json": graph_json, **fields},
                                                      idempotency_key))

    async def get(self, flow_id: str) -> Flow:
        return await self._sender.run(ops.get_flow(flow_id))

    def list(self, *, state: str | None = None, **params: Any) -> AsyncIterator[Flow]:
        return self._sender.pages(ops.list_flows, {"state": state, **params})

    async def update(self, flow_id: str, **fields: Any) -> Flow:
        return await self._sender.run(ops.update_flow(flow_id, fields))

    async def preview(self, flow_id: str, graph_json: Row | None = None) -> Row:
        return await self._sender.run(ops.preview_flow(flow_id, graph_json))

    async def publish(self, flow_id: str) -> Flow:
        return await self._sender.run(ops.publish_flow(flow_id))


class AsyncAnalytics(_Resource):
    async def report(self, name: str, **params: Any) -> Row:
        return await self._sender.run(ops.analytics_report(name, params))


class AsyncWizard(_Resource):
    """``/v1/wizard``; see ``resources.Wizard``."""

    async def generate(self, business_description: str) -> WizardDraft:
        return await self._sender.run(ops.generate_config(business_description))

    async def provision(self, business_name: str, business_description: str, area_code: str, config: Row, *,
                        idempotency_key: str | None = None) -> Provisioned:
        fields = {"business_name": business_name, "business_description": business_description,
                  "area_code": area_code, "config": config}
        return await self._sender.run(ops.provision_number(fields, idempotency_key))


class AsyncPush(_Resource):
    """``/v1/push``; see ``resources.Push``."""

    async def vapid_key(self) -> str:
        return await self._sender.run(ops.vapid_key())

    async def subscribe(self, endpoint: str, p256dh: str, auth: str, number_ids: Iterable[str],
                        device_label: str | None = None) -> PushSubscription:
        subscription = {"endpoint": endpoint, "keys": {"p256dh": p256dh, "auth": auth}}
        return await self._sender.run(ops.subscribe_device(subscription, list(number_ids), device_label))

    async def unsubscribe(self, endpoint: str) -> PushSubscription:
        return await self._sender.run(ops.unsubscribe_device(endpoint))

    async def delivered(self, notification_id: str) -> PushNotification:
        return await self._sender.run(ops.acknowledge_notification(notification_id))

    def subscriptions(self, *, limit: int | None = None) -> AsyncIterator[PushSubscription]:
        return self._sender.pages(ops.list_push_subscriptions, {"limit": limit})
