"""Single-use tokens (e-mail verification, password reset) and revoked session ids.

Only the SHA-256 of a token is stored; the aggregate id is derived from it.
"""

from __future__ import annotations

import hashlib
import secrets
import uuid
from datetime import datetime, timedelta

from eventsourcing.domain import event

from domain import ids
from domain.base import TenantAggregate
from domain.errors import TokenExpiredError, TokenUsedError

EMAIL_VERIFICATION = "email_verification"
PASSWORD_RESET = "password_reset"
LIFETIMES = {
    EMAIL_VERIFICATION: timedelta(days=7),
    PASSWORD_RESET: timedelta(hours=1),
}


def generate_token() -> str:
    return secrets.token_urlsafe(32)


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def token_uuid(purpose: str, token_hash: str) -> uuid.UUID:
    return ids.deterministic(f"token:{purpose}", token_hash)


class OneTimeToken(TenantAggregate):
    @staticmethod
    def create_id(purpose: str, token_hash: str) -> uuid.UUID:
        return token_uuid(purpose, token_hash)

    @event("Issued")
    def __init__(
        self,
        tenant_id: str,
        purpose: str,
        token_hash: str,
        user_id: str,
        expires_at: datetime,
        at: datetime,
    ) -> None:
        self.tenant_id = tenant_id
        self.purpose = purpose
        self.token_hash = token_hash
        self.user_id = user_id
        self.expires_at = expires_at
        self.consumed_at: datetime | None = None

    def consume(self, now: datetime) -> None:
        if self.consumed_at is not None:
            raise TokenUsedError("this token has already been used")
        if now >= self.expires_at:
            raise TokenExpiredError("this token has expired")
        self._consumed(at=now)

    @event("Consumed")
    def _consumed(self, at: datetime) -> None:
        self.consumed_at = at


class RevokedSession(TenantAggregate):
    """A logged-out session token: its ``jti`` stays blocked until the token expires."""

    @staticmethod
    def create_id(jti: str) -> uuid.UUID:
        return ids.deterministic("session", jti)

    @event("Revoked")
    def __init__(self, tenant_id: str, jti: str, user_id: str, expires_at: datetime, at: datetime) -> None:
        self.tenant_id = tenant_id
        self.jti = jti
        self.user_id = user_id
        self.expires_at = expires_at
        self.revoked_at = at
