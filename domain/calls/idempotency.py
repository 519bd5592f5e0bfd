"""Idempotency records (ARCHITECTURE.md §9): per tenant, endpoint and key, 24 h, the original
answer replayed for the same body and refused for another. A key is unique per tenant in the
window (SPEC.md Limits): its ``IdempotencyKeyClaim`` names the one endpoint that holds it."""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from datetime import datetime, timedelta
from typing import Any

from eventsourcing.domain import event

from domain import ids
from domain.base import TenantAggregate

WINDOW = timedelta(hours=24)
KEY_SYNTAX = re.compile(r"[A-Za-z0-9_.:-]{1,255}")


def is_valid_key(key: str) -> bool:
    return KEY_SYNTAX.fullmatch(key) is not None


def body_fingerprint(body: Any) -> str:
    """SHA-256 of the canonical JSON of a request body: key order and spacing do not matter."""
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


class IdempotencyRecord(TenantAggregate):
    @staticmethod
    def create_id(tenant_id: str, endpoint: str, key: str) -> uuid.UUID:
        return ids.deterministic("idempotency", f"{tenant_id}:{endpoint}:{key}")

    @event("Recorded")
    def __init__(self, tenant_id: str, endpoint: str, key: str, fingerprint: str, status_code: int,
                 response: dict[str, Any], at: datetime) -> None:
        self.tenant_id = tenant_id
        self.endpoint = endpoint
        self.key = key
        self.fingerprint, self.status_code, self.response, self.recorded_at = fingerprint, status_code, response, at

    def is_live(self, now: datetime) -> bool:
        return now < self.recorded_at + WINDOW

    def reuse(self, fingerprint: str, status_code: int, response: dict[str, Any], now: datetime) -> None:
        """The window has passed: the key starts a new request."""
        self._rerecorded(fingerprint=fingerprint, status_code=status_code, response=response, at=now)

    @event("Rerecorded")
    def _rerecorded(self, fingerprint: str, status_code: int, response: dict[str, Any], at: datetime) -> None:
        self.fingerprint, self.status_code, self.response, self.recorded_at = fingerprint, status_code, response, at


class IdempotencyKeyClaim(TenantAggregate):
    """Which endpoint holds a tenant's key in the window: saved with that endpoint's record, so a
    key used on one endpoint is refused on every other until the window has passed. (Records
    saved before claims existed have none: only their own endpoint knows them.)"""

    @staticmethod
    def create_id(tenant_id: str, key: str) -> uuid.UUID:
        return ids.deterministic("idempotency_key", f"{tenant_id}:{key}")

    @event("Claimed")
    def __init__(self, tenant_id: str, key: str, endpoint: str, at: datetime) -> None:
        self.tenant_id = tenant_id
        self.key = key
        self.endpoint, self.claimed_at = endpoint, at

    def is_live(self, now: datetime) -> bool:
        return now < self.claimed_at + WINDOW

    def held_elsewhere(self, endpoint: str, now: datetime) -> bool:
        return self.is_live(now) and self.endpoint != endpoint

    def reclaim(self, endpoint: str, now: datetime) -> None:
        """The window has passed: the key starts a new request, on ``endpoint``."""
        self._reclaimed(endpoint=endpoint, at=now)

    @event("Reclaimed")
    def _reclaimed(self, endpoint: str, at: datetime) -> None:
        self.endpoint, self.claimed_at = endpoint, at
