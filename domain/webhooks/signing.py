"""Webhook signatures (SPEC.md Events 4–5, ARCHITECTURE.md §9): hex HMAC-SHA256 of
``"<timestamp>.<raw body>"`` keyed with the whole ``whsec_…`` string, sent as ``sha256=<hex>``."""

from __future__ import annotations

import hashlib
import hmac
import secrets

SECRET_PREFIX = "whsec_"
SIGNATURE = "X-Service-Signature"
TIMESTAMP = "X-Service-Timestamp"
EVENT = "X-Service-Event"
DELIVERY_ID = "X-Service-Delivery-Id"


def new_secret() -> str:
    return SECRET_PREFIX + secrets.token_urlsafe(32)


def signature(secret: str, timestamp: int, body: bytes) -> str:
    mac = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256)
    return "sha256=" + mac.hexdigest()


def headers(secret: str, timestamp: int, body: bytes, *, event_type: str, delivery_uuid: str) -> dict[str, str]:
    """The headers of one attempt: a fresh timestamp and signature, the delivery's constant id."""
    return {
        "Content-Type": "application/json",
        "User-Agent": "callwright-webhooks/1",
        SIGNATURE: signature(secret, timestamp, body),
        TIMESTAMP: str(timestamp),
        EVENT: event_type,
        DELIVERY_ID: delivery_uuid,
    }
