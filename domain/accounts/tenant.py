"""Tenant aggregate: the verification gate (SPEC.md §9) and the rate-limit tier."""

from __future__ import annotations

import uuid
from datetime import datetime

from eventsourcing.domain import event

from domain import ids
from domain.base import TenantAggregate

PENDING_REVIEW = "pending_review"
APPROVED = "approved"
DEFAULT_TIER = "standard"


class Tenant(TenantAggregate):
    @staticmethod
    def create_id(tenant_id: str) -> uuid.UUID:
        return ids.from_public(ids.TENANT, tenant_id)

    @event("Registered")
    def __init__(
        self, tenant_id: str, name: str, tier: str, verification_status: str, at: datetime
    ) -> None:
        self.tenant_id = tenant_id
        self.name = name
        self.tier = tier
        self.verification_status = verification_status
        self.registered_at = at
        self.approved_at: datetime | None = None
        self.approved_by: str | None = None

    @property
    def is_approved(self) -> bool:
        return self.verification_status == APPROVED

    def approve(self, by: str, now: datetime) -> bool:
        """Approve the tenant; approving an approved tenant changes nothing."""
        if self.is_approved:
            return False
        self._approved(by=by, at=now)
        return True

    @event("Approved")
    def _approved(self, by: str, at: datetime) -> None:
        self.verification_status = APPROVED
        self.approved_at = at
        self.approved_by = by
