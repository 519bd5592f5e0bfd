"""Webhook signatures (SPEC.md Events 4–5, ARCHITECTURE.md §9): hex HMAC-SHA256 of
``"<timestamp>.<raw body>"`` keyed with the whole ``whsec_…`` string, sent as ``sha256=<hex>``.
During a rotation's grace the header lists one value per secret, the new one first:
``sha256=<new>,sha256=<old>``; a receiver accepts the delivery if any value matches."""

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


def signatures(secrets: list[str], timestamp: int, body: bytes) -> str:
    """The ``X-Service-Signature`` value: one ``sha256=`` value per secret, comma-separated, in order."""
    return ",".join(signature(secret, timestamp, body) for secret in secrets)


def headers(secrets: str | list[str], timestamp: int, body: bytes, *, event_type: str,
            delivery_uuid: str) -> dict[str, str]:
    """The headers of one attempt: a fresh timestamp and signature(s), the delivery's constant id."""
    return {
        "Content-Type": "application/json",
        "User-Agent": "callwright-webhooks/1",
        SIGNATURE: signatures([secrets] if isinstance(secrets, str) else secrets, timestamp, body),
        TIMESTAMP: str(timestamp),
        EVENT: event_type,
        DELIVERY_ID: delivery_uuid,
    }
