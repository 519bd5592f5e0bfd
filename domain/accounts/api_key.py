"""ApiKey aggregate: issue, rotate with a 24 h grace window, record grace-time use, revoke.

The aggregate id is derived from the SHA-256 of the secret, so authentication is one read
and the secret itself never enters an event.
"""

from __future__ import annotations

import hashlib
import secrets
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from eventsourcing.domain import event

from domain import ids
from domain.base import TenantAggregate
from domain.errors import KeyAlreadyRotatedError, KeyRevokedError

SECRET_PREFIX = "sk_live_"
SECRET_SUFFIX_LENGTH = 32
DISPLAY_PREFIX_LENGTH = 16
ROTATION_GRACE = timedelta(hours=24)

ACTIVE = "active"
ROTATED = "rotated"  # still valid until expires_at
EXPIRED = "expired"
REVOKED = "revoked"


def generate_secret() -> str:
    # 24 random bytes encode to exactly 32 URL-safe base64 characters.
    return SECRET_PREFIX + secrets.token_urlsafe(24)


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


def looks_like_secret(value: str) -> bool:
    return value.startswith(SECRET_PREFIX) and len(value) == len(SECRET_PREFIX) + SECRET_SUFFIX_LENGTH


def key_uuid(key_hash: str) -> uuid.UUID:
    return ids.deterministic("api_key", key_hash)


@dataclass(frozen=True)
class Grant:
    """What a key may use: its scopes and its numbers, each ``None`` (no limit) or a tuple, whatever
    sequence the event holds (a list once stored)."""

    scopes: tuple[str, ...] | None
    number_ids: tuple[str, ...] | None

    @classmethod
    def recorded(cls, scopes: Iterable[str] | None, number_ids: Iterable[str] | None) -> Grant:
        return cls(scopes=_tuple(scopes), number_ids=_tuple(number_ids))


def _tuple(values: Iterable[str] | None) -> tuple[str, ...] | None:
    return tuple(values) if values is not None else None


class ApiKey(TenantAggregate):
    @staticmethod
    def create_id(key_hash: str) -> uuid.UUID:
        return key_uuid(key_hash)

    @event("Issued")
    def __init__(
        self,
        tenant_id: str,
        user_id: str,
        key_hash: str,
        prefix: str,
        name: str | None,
        scopes: tuple[str, ...] | None,
        number_ids: tuple[str, ...] | None,
        issued_by: str,
        at: datetime,
        rotated_from: str | None = None,
    ) -> None:
        self.tenant_id = tenant_id
        self.user_id = user_id
        self.key_hash = key_hash
        self.prefix = prefix
        self.name = name
        self.grant = Grant.recorded(scopes, number_ids)
        self.created_at = at
        self.rotated_from = rotated_from
        self.rotated_to: str | None = None
        self.expires_at: datetime | None = None
        self.revoked_at: datetime | None = None

    @property
    def key_id(self) -> str:
        return ids.to_public(ids.API_KEY, self.id)

    @property
    def scopes(self) -> tuple[str, ...] | None:
        return self.grant.scopes

    @property
    def number_ids(self) -> tuple[str, ...] | None:
        return self.grant.number_ids

    def status(self, now: datetime) -> str:
        if self.revoked_at is not None:
            return REVOKED
        if self.expires_at is not None:
            return EXPIRED if now >= self.expires_at else ROTATED
        return ACTIVE

    def rotate(self, successor_key_id: str, by: str, now: datetime) -> datetime:
        status = self.status(now)
        if status == REVOKED:
            raise KeyRevokedError("a revoked key cannot be rotated")
        if self.rotated_to is not None:
            raise KeyAlreadyRotatedError(f"this key was already rotated to {self.rotated_to}")
        expires_at = now + ROTATION_GRACE
        self._rotated(successor_key_id=successor_key_id, expires_at=expires_at, by=by, at=now)
        return expires_at

    @event("Rotated")
    def _rotated(self, successor_key_id: str, expires_at: datetime, by: str, at: datetime) -> None:
        self.rotated_to = successor_key_id
        self.expires_at = expires_at

    def record_use_during_grace(self, method: str, path: str, now: datetime) -> None:
        self._rotated_key_used(method=method, path=path, at=now)

    @event("RotatedKeyUsed")
    def _rotated_key_used(self, method: str, path: str, at: datetime) -> None:
        pass

    def revoke(self, by: str, now: datetime) -> bool:
        """Soft revoke: the record stays, the key stops authenticating. Idempotent."""
        if self.revoked_at is not None:
            return False
        self._revoked(by=by, at=now)
        return True

    @event("Revoked")
    def _revoked(self, by: str, at: datetime) -> None:
        self.revoked_at = at
