"""Keeps ``webhook_deliveries_v1`` in step with WebhookDelivery events, from the events alone: a
row per delivery, each change guarded by the row's version (a replayed event changes nothing).

``due_at`` follows ``WebhookDelivery.due_at``: the schedule while pending, the lease's end while an
attempt is out, the request time of a manual retry, nothing once finished.
"""

from __future__ import annotations

import json
from typing import Any

from eventsourcing.persistence import Tracking

from domain import ids
from domain.timestamps import iso
from domain.webhooks.delivery import PENDING, WebhookDelivery
from projections.view import pg_text
from projections.webhook_deliveries.view import WebhookDeliveriesView

EVENTS = (WebhookDelivery.Scheduled, WebhookDelivery.Leased, WebhookDelivery.Attempted,
          WebhookDelivery.RetryRequested, WebhookDelivery.Cancelled)

_GUARD = "WHERE delivery_uuid = %(delivery_uuid)s AND version < %(version)s"


class WebhookDeliveriesProjection:
    name = "webhook_deliveries_v1"
    handles = EVENTS

    def __init__(self, view: WebhookDeliveriesView) -> None:
        self.view = view
        self._scheduled = view.sql(
            "INSERT INTO {schema}.{table} (delivery_uuid, delivery_id, tenant_id, endpoint_id, call_id, event_id, "
            "event_type, status, attempts, next_attempt_at, due_at, created_at, version) VALUES (%(delivery_uuid)s, "
            "%(delivery_id)s, %(tenant_id)s, %(endpoint_id)s, %(call_id)s, %(event_id)s, %(event_type)s, "
            f"'{PENDING}', '[]'::jsonb, %(at)s::timestamptz, %(at)s::timestamptz, %(at)s::timestamptz, %(version)s) ON CONFLICT (delivery_uuid) DO NOTHING"
        )
        self._leased = view.sql("UPDATE {schema}.{table} SET due_at = %(until)s, version = %(version)s " + _GUARD)
        self._attempted = view.sql(
            "UPDATE {schema}.{table} SET attempts = attempts || %(row)s::jsonb, status = %(status)s::text, "
            f"next_attempt_at = %(next)s::timestamptz, "
            f"due_at = CASE WHEN %(status)s::text = '{PENDING}' THEN %(next)s::timestamptz END, "
            "version = %(version)s " + _GUARD
        )
        self._retry_requested = view.sql("UPDATE {schema}.{table} SET due_at = %(at)s, version = %(version)s " + _GUARD)
        self._cancelled = view.sql(
            f"UPDATE {{schema}}.{{table}} SET status = CASE WHEN status = '{PENDING}' THEN 'cancelled' ELSE status END, "
            "next_attempt_at = NULL, due_at = NULL, version = %(version)s " + _GUARD
        )

    def process_event(self, event: Any, tracking: Tracking) -> None:
        key = {"delivery_uuid": event.originator_id, "version": event.originator_version}
        if isinstance(event, WebhookDelivery.Scheduled):
            statement, params = self._scheduled, {
                **key, "delivery_id": ids.to_public(ids.DELIVERY, event.originator_id), "tenant_id": event.tenant_id,
                "endpoint_id": event.endpoint_id, "call_id": event.call_id, "event_id": event.event_id,
                "event_type": event.event_type, "at": event.at}
        elif isinstance(event, WebhookDelivery.Leased):
            statement, params = self._leased, {**key, "until": event.until}
        elif isinstance(event, WebhookDelivery.Attempted):
            row = {"attempt": event.attempt, "manual": event.manual, "response_status": event.response_status,
                   "response_body": event.response_body, "latency_ms": event.latency_ms, "error": event.error,
                   "at": iso(event.at)}
            statement, params = self._attempted, {**key, "row": json.dumps([pg_text(row)]), "status": event.status,
                                                  "next": event.next_attempt_at}
        elif isinstance(event, WebhookDelivery.RetryRequested):
            statement, params = self._retry_requested, {**key, "at": event.at}
        else:
            statement, params = self._cancelled, key
        self.view.write([(statement, params)], tracking)
