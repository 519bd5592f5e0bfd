"""Keeps ``webhook_deliveries_v1`` in step with WebhookDelivery events: the row is the aggregate as
of the event's version (read back from the event store), written only over an older version (a lease, which moves only ``due_at``, is applied directly).
Deliveries are few next to calls' events, so the read per event is cheap and the view can never
compute a schedule differently from the domain."""

from __future__ import annotations

import json
from typing import Any

from eventsourcing.application import Application
from eventsourcing.persistence import Tracking

from domain.timestamps import iso
from domain.webhooks.delivery import WebhookDelivery
from projections.view import pg_text
from projections.webhook_deliveries.view import WebhookDeliveriesView

EVENTS = (WebhookDelivery.Scheduled, WebhookDelivery.Leased, WebhookDelivery.Attempted,
          WebhookDelivery.RetryRequested, WebhookDelivery.Cancelled)


def _attempts(delivery: WebhookDelivery) -> str:
    rows = [{**row, "at": iso(row["at"])} for row in delivery.attempts]
    return json.dumps(pg_text(rows))


class WebhookDeliveriesProjection:
    name = "webhook_deliveries_v1"
    handles = EVENTS

    def __init__(self, view: WebhookDeliveriesView, app: Application[Any]) -> None:
        self.view = view
        self.app = app
        self._upsert = view.sql(
            "INSERT INTO {schema}.{table} AS d (delivery_uuid, delivery_id, tenant_id, endpoint_id, call_id, event_id, "
            "event_type, status, attempts, next_attempt_at, due_at, created_at, version) VALUES (%(delivery_uuid)s, "
            "%(delivery_id)s, %(tenant_id)s, %(endpoint_id)s, %(call_id)s, %(event_id)s, %(event_type)s, %(status)s, "
            "%(attempts)s::jsonb, %(next_attempt_at)s, %(due_at)s, %(created_at)s, %(version)s) "
            "ON CONFLICT (delivery_uuid) DO UPDATE SET status = EXCLUDED.status, attempts = EXCLUDED.attempts, "
            "next_attempt_at = EXCLUDED.next_attempt_at, due_at = EXCLUDED.due_at, version = EXCLUDED.version "
            "WHERE d.version < EXCLUDED.version"
        )
        # A lease moves the next chance to attempt to the lease's end (WebhookDelivery.due_at).
        self._leased = view.sql("UPDATE {schema}.{table} SET due_at = %(due_at)s, version = %(version)s "
                                "WHERE delivery_uuid = %(delivery_uuid)s AND version < %(version)s")

    def process_event(self, event: Any, tracking: Tracking) -> None:
        if isinstance(event, WebhookDelivery.Leased):  # the most frequent event moves only due_at
            self.view.write([(self._leased, {"delivery_uuid": event.originator_id, "due_at": event.until,
                                             "version": event.originator_version})], tracking)
            return
        delivery = self.app.repository.get(event.originator_id, version=event.originator_version)
        params = {
            "delivery_uuid": delivery.id, "delivery_id": delivery.delivery_id, "tenant_id": delivery.tenant_id,
            "endpoint_id": delivery.endpoint_id, "call_id": delivery.call_id, "event_id": delivery.event_id,
            "event_type": delivery.event_type, "status": delivery.status, "attempts": _attempts(delivery),
            "next_attempt_at": delivery.next_attempt_at, "due_at": delivery.due_at(), "created_at": delivery.created_at,
            "version": delivery.version,
        }
        self.view.write([(self._upsert, params)], tracking)
