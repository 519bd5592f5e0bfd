"""Checking a ``call.completed`` delivery before trusting it.

    from callwright_client import InvalidSignature, verify_signature

    try:
        event = verify_signature(request.body, request.headers, secret="whsec_…")
    except InvalidSignature:
        return 400
    if seen_before(request.headers["X-Service-Delivery-Id"]):  # retries repeat a delivery
        return 200
    handle(event)

Pass the raw body exactly as received (before any JSON parsing) and the endpoint's secret as
shown when it was created or last rotated. For 24 h after a rotation ``X-Service-Signature`` holds
two comma-separated values, ``sha256=<new>,sha256=<old>``: a delivery is genuine when any value
matches, so a receiver still holding the old secret keeps working while it rolls over.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from collections.abc import Mapping
from typing import Any

TOLERANCE_SECONDS = 300


class InvalidSignature(Exception):
    """The delivery is not from callwright, was changed, or is too old to accept."""


def _header(headers: Mapping[str, str], name: str) -> str:
    for key, value in headers.items():
        if key.lower() == name.lower():
            return value
    raise InvalidSignature(f"the {name} header is missing")


def verify_signature(body: bytes | str, headers: Mapping[str, str], secret: str, tolerance: int = TOLERANCE_SECONDS,
                     *, now: float | None = None) -> dict[str, Any]:
    """The event, once ``X-Service-Signature`` matches ``body`` and ``X-Service-Timestamp`` is within
    ``tolerance`` seconds of ``now``; ``InvalidSignature`` otherwise. Any of the header's
    comma-separated ``sha256=`` values may match. Compares in constant time."""
    raw = body.encode() if isinstance(body, str) else bytes(body)
    timestamp_text = _header(headers, "X-Service-Timestamp")
    try:
        timestamp = int(timestamp_text)
    except ValueError:
        raise InvalidSignature("X-Service-Timestamp is not a Unix time") from None
    current = time.time() if now is None else now
    if abs(current - timestamp) > tolerance:
        raise InvalidSignature("the delivery's timestamp is outside the tolerance (a replay, or a wrong clock)")
    expected = "sha256=" + hmac.new(secret.encode(), f"{timestamp}.".encode() + raw, hashlib.sha256).hexdigest()
    offered = [value.strip() for value in _header(headers, "X-Service-Signature").split(",")]
    # Every value is compared (no early exit), so timing does not tell which one matched.
    if not [value for value in offered if hmac.compare_digest(expected, value)]:
        raise InvalidSignature("the signature does not match this body and secret")
    return json.loads(raw)
