"""Idempotency records (ARCHITECTURE.md §9): per tenant, endpoint and key, 24 h, the original
answer replayed for the same body and refused for another."""

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
        self._apply(fingerprint, status_code, response, at)

    def _apply(self, fingerprint: str, status_code: int, response: dict[str, Any], at: datetime) -> None:
        self.fingerprint = fingerprint
        self.status_code = status_code
        self.response = response
        self.recorded_at = at

    def is_live(self, now: datetime) -> bool:
        return now < self.recorded_at + WINDOW

    def reuse(self, fingerprint: str, status_code: int, response: dict[str, Any], now: datetime) -> None:
        """The window has passed: the key starts a new request."""
        self._rerecorded(fingerprint=fingerprint, status_code=status_code, response=response, at=now)

    @event("Rerecorded")
    def _rerecorded(self, fingerprint: str, status_code: int, response: dict[str, Any], at: datetime) -> None:
        self._apply(fingerprint, status_code, response, at)
