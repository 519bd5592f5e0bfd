"""The service's VAPID key pair (RFC 8292): made once, the private key kept sealed like the other
secrets at rest. One aggregate with a fixed id; it belongs to no tenant (``tenant_id`` "system")."""

from __future__ import annotations

import uuid
from datetime import datetime

from eventsourcing.domain import event

from domain import ids
from domain.accounts.system_defaults import SYSTEM_TENANT
from domain.base import TenantAggregate


class VapidKeys(TenantAggregate):
    @staticmethod
    def create_id() -> uuid.UUID:
        return ids.deterministic("vapid-keys", "singleton")

    @event("Generated")
    def __init__(self, public_key: str, sealed_private_key: str, at: datetime, tenant_id: str = SYSTEM_TENANT) -> None:
        self.tenant_id = tenant_id
        self.public_key = public_key  # base64url of the uncompressed point: a browser's applicationServerKey
        self.sealed_private_key = sealed_private_key
        self.generated_at = at
