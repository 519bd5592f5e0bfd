"""Per-call voice socket tokens (ARCHITECTURE.md §8): short-lived, bound to one call, single use.

``<nonce>.<expires unix>.<mac>`` where the MAC (HMAC-SHA256, truncated to 128 bits) covers the call
id, the nonce and the expiry. The token travels in a TwiML ``<Parameter>`` and comes back in the
socket's first message; single use is enforced by the call itself, which accepts one voice session
(the nonce is recorded with it), so it holds across processes.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class StreamGrant:
    call_id: str
    nonce: str


def _mac(key: bytes, call_id: str, nonce: str, expires: int) -> str:
    digest = hmac.new(key, f"{call_id}|{nonce}|{expires}".encode(), hashlib.sha256).digest()[:16]
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


def issue(key: bytes, call_id: str, now: datetime, ttl_seconds: int) -> str:
    nonce = secrets.token_urlsafe(12)
    expires = int(now.timestamp()) + int(ttl_seconds)
    return f"{nonce}.{expires}.{_mac(key, call_id, nonce, expires)}"


def verify(key: bytes, token: object, call_id: str, now: datetime) -> StreamGrant | None:
    """The grant when ``token`` was issued for ``call_id`` and has not expired; None otherwise."""
    if not isinstance(token, str) or len(token) > 200:
        return None
    parts = token.split(".")
    if len(parts) != 3 or not parts[1].isdigit():
        return None
    nonce, expires_text, mac = parts
    expires = int(expires_text)
    if not hmac.compare_digest(mac, _mac(key, call_id, nonce, expires)):
        return None
    if now.timestamp() > expires:
        return None
    return StreamGrant(call_id=call_id, nonce=nonce)
