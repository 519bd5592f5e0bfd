"""Request and response shapes of ``/auth/api-keys``."""

from __future__ import annotations

import uuid
from typing import Annotated, Any

import msgspec
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints

from entrypoints.http.schemas.text import Label

ScopeName = Annotated[str, StringConstraints(min_length=1, max_length=64)]
def _canonical_uuid(value: str) -> str:
    try:
        return str(uuid.UUID(value))
    except ValueError as exc:
        raise ValueError("must be a number id (a UUID)") from exc


NumberId = Annotated[str, StringConstraints(max_length=64), AfterValidator(_canonical_uuid)]


class ApiKeyCreateRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: Label | None = None
    scopes: Annotated[list[ScopeName], Field(max_length=32)] | None = None
    number_ids: Annotated[list[NumberId], Field(max_length=1000)] | None = None


class _KeyFields(msgspec.Struct, kw_only=True):
    """What every answer about a key shows first (never its secret, except right after issuing)."""

    key_id: str
    name: str | None
    prefix: str
    scopes: list[str] | None
    number_ids: list[str] | None


class ApiKeySecretResponse(_KeyFields, kw_only=True):
    created_at: str
    secret: str
    rotated_from: str | None = None


class RotateResponse(ApiKeySecretResponse, kw_only=True):
    old_key_id: str
    old_key_expires_at: str


class ApiKeyListItem(_KeyFields, kw_only=True):
    status: str
    created_at: str
    expires_at: str | None
    revoked_at: str | None
    rotated_to: str | None
    rotated_from: str | None
    last_used_during_grace_at: str | None


class ApiKeyList(msgspec.Struct, kw_only=True):
    """Every key of the tenant at once: next_cursor is always null."""

    data: list[ApiKeyListItem]
    next_cursor: str | None = None
    items: list[ApiKeyListItem]  # deprecated: the same keys as data (CHANGELOG.md)


class RevokeResponse(msgspec.Struct, kw_only=True):
    status: str
    key_id: str
    revoked_at: str


class ApiKeyEvent(msgspec.Struct, kw_only=True):
    seq: int | None  # the event's version; null for api_key.expired, which the clock decides
    type: str
    at: str
    by: str
    data: dict[str, Any]


class ApiKeyEventsPage(msgspec.Struct, kw_only=True):
    data: list[ApiKeyEvent]
    next_cursor: str | None = None
