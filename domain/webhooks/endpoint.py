"""Webhook endpoints (SPEC.md Webhook endpoint): where a tenant's events go, signed with a secret
kept sealed (the aggregate holds only its ciphertext). Soft-deleted, never erased."""

from __future__ import annotations

import uuid
from datetime import datetime

from eventsourcing.domain import event

from domain import ids
from domain.base import TenantAggregate

CALL_COMPLETED = "call.completed"
EMITTED = (CALL_COMPLETED,)
# Named in the spec's neighbourhood but not emitted yet: accepted nowhere until they are.
NOT_YET_EMITTED = ("call.started", "call.transferred", "sms.delivered")
MAX_DESCRIPTION = 500


class WebhookEndpoint(TenantAggregate):
    """A random id (``wh_…``)."""

    @staticmethod
    def id_of(endpoint_id: str) -> uuid.UUID:
        return ids.from_public(ids.WEBHOOK, endpoint_id)

    @event("Created")
    def __init__(self, tenant_id: str, url: str, description: str | None, events: list[str], sealed_secret: str,
                 by: str, at: datetime) -> None:
        self.tenant_id = tenant_id
        self.url = url
        self.description = description
        self.events = events
        self.sealed_secret = sealed_secret
        self.created_by = by
        self.created_at = at
        self.deleted_at: datetime | None = None
        self.deleted_by: str | None = None

    @property
    def endpoint_id(self) -> str:
        return ids.to_public(ids.WEBHOOK, self.id)

    @property
    def active(self) -> bool:
        return self.deleted_at is None

    def subscribes_to(self, event_type: str) -> bool:
        return self.active and event_type in self.events

    def delete(self, by: str, now: datetime) -> bool:
        if not self.active:
            return False
        self._deleted(by=by, at=now)
        return True

    @event("Deleted")
    def _deleted(self, by: str, at: datetime) -> None:
        self.deleted_at = at
        self.deleted_by = by


class WebhookEndpointIndex(TenantAggregate):
    """A tenant's endpoints in creation order, saved with each change: the scheduler reads one
    aggregate to find where a call's event goes."""

    @staticmethod
    def create_id(tenant_id: str) -> uuid.UUID:
        return ids.deterministic("webhook-endpoints", tenant_id)

    @event("Started")
    def __init__(self, tenant_id: str) -> None:
        self.tenant_id = tenant_id
        self.endpoint_ids: list[str] = []
        self.active_ids: list[str] = []

    def add(self, endpoint_id: str) -> None:
        self._added(endpoint_id=endpoint_id)

    @event("Added")
    def _added(self, endpoint_id: str) -> None:
        self.endpoint_ids = [*self.endpoint_ids, endpoint_id]
        self.active_ids = [*self.active_ids, endpoint_id]

    def deactivate(self, endpoint_id: str) -> None:
        if endpoint_id in self.active_ids:
            self._deactivated(endpoint_id=endpoint_id)

    @event("Deactivated")
    def _deactivated(self, endpoint_id: str) -> None:
        self.active_ids = [i for i in self.active_ids if i != endpoint_id]
