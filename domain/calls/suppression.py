"""Suppression entries: numbers the tenant must not call, with who added or removed them, when."""

from __future__ import annotations

import uuid
from datetime import datetime

from eventsourcing.domain import event

from domain import ids
from domain.base import TenantAggregate


def suppression_id(tenant_id: str, e164: str) -> uuid.UUID:
    return ids.deterministic("suppression", f"{tenant_id}:{e164}")


class SuppressionEntry(TenantAggregate):
    """One per tenant and number (deterministic id); re-adding after removal reuses it."""

    @staticmethod
    def create_id(tenant_id: str, e164: str) -> uuid.UUID:
        return suppression_id(tenant_id, e164)

    @event("Added")
    def __init__(self, tenant_id: str, e164: str, reason: str | None, expires_at: datetime | None, by: str, at: datetime) -> None:
        self.tenant_id = tenant_id
        self.e164 = e164
        self.reason, self.expires_at, self.added_by, self.added_at = reason, expires_at, by, at
        self.removed_at: datetime | None = None
        self.removed_by: str | None = None

    def add_again(self, reason: str | None, expires_at: datetime | None, by: str, now: datetime) -> None:
        self._readded(e164=self.e164, reason=reason, expires_at=expires_at, by=by, at=now)

    @event("Readded")
    def _readded(self, e164: str, reason: str | None, expires_at: datetime | None, by: str, at: datetime) -> None:
        self.reason, self.expires_at, self.added_by, self.added_at = reason, expires_at, by, at
        self.removed_at = self.removed_by = None

    def remove(self, by: str, now: datetime) -> bool:
        if self.removed_at is not None:
            return False
        self._removed(e164=self.e164, by=by, at=now)
        return True

    @event("Removed")
    def _removed(self, e164: str, by: str, at: datetime) -> None:
        self.removed_at = at
        self.removed_by = by


class SuppressionIndex(TenantAggregate):
    """All of a tenant's active suppressions in one place, so a 200-item batch checks them with
    one read. Saved together with the entry it reflects; the entries keep the who and when."""

    @staticmethod
    def create_id(tenant_id: str) -> uuid.UUID:
        return ids.deterministic("suppression-index", tenant_id)

    @event("Opened")
    def __init__(self, tenant_id: str) -> None:
        self.tenant_id = tenant_id
        self.numbers: dict[str, datetime | None] = {}

    def is_suppressed(self, e164: str, now: datetime) -> bool:
        if e164 not in self.numbers:
            return False
        expires_at = self.numbers[e164]
        return expires_at is None or now < expires_at

    def list_number(self, e164: str, expires_at: datetime | None) -> None:
        self._listed(e164=e164, expires_at=expires_at)

    @event("Listed")
    def _listed(self, e164: str, expires_at: datetime | None) -> None:
        self.numbers = {**self.numbers, e164: expires_at}

    def delist_number(self, e164: str) -> None:
        if e164 in self.numbers:
            self._delisted(e164=e164)

    @event("Delisted")
    def _delisted(self, e164: str) -> None:
        numbers = dict(self.numbers)  # a new dict, as ``_listed`` makes
        del numbers[e164]  # ``delist_number`` delists only a listed number
        self.numbers = numbers
