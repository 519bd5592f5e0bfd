"""Request and response shapes of ``/auth/*`` and the admin routes.

Requests are pydantic models (every error reported, in the spec's 422 terms; unknown fields
refused); responses are msgspec Structs.
"""

from __future__ import annotations

from typing import Annotated

import msgspec
from litestar.params import KwargDefinition
from pydantic import AfterValidator, BaseModel, ConfigDict, StringConstraints

from domain.accounts.user import is_valid_email, normalize_email
from entrypoints.http.schemas.text import Label


def _email(value: str) -> str:
    if not is_valid_email(normalize_email(value)):
        raise ValueError("value is not a valid e-mail address")
    return value


Email = Annotated[str, StringConstraints(min_length=3, max_length=254), AfterValidator(_email)]
Password = Annotated[str, StringConstraints(min_length=10, max_length=1024)]
Token = Annotated[str, StringConstraints(min_length=1, max_length=2048)]


class Request(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)


class SignupRequest(Request):
    email: Email
    password: Password
    name: Label | None = None


class LoginRequest(Request):
    email: Email
    password: Annotated[str, StringConstraints(min_length=1, max_length=1024)]


class LogoutRequest(Request):
    token: Token | None = None


class EmailRequest(Request):
    email: Email


class TokenRequest(Request):
    token: Token


class ResetPasswordRequest(Request):
    token: Token
    password: Password


class SignupResponse(msgspec.Struct, kw_only=True):
    """The account and its first key, answered as ``POST /auth/api-keys`` answers a key: ``secret``
    (shown this once) and ``prefix`` (its first 16 characters, SPEC.md Resources › API key)."""

    user_id: str
    tenant_id: str
    email: str
    verification_status: str
    key_id: str
    prefix: str
    secret: str
    api_key: Annotated[str, KwargDefinition(
        description="Deprecated: the same key as secret, kept for one release (CHANGELOG.md); read secret.",
        schema_extra={"deprecated": True})]


class LoginResponse(msgspec.Struct, kw_only=True):
    access_token: str
    token_type: str
    expires_in: int


class StatusResponse(msgspec.Struct, kw_only=True):
    status: str


class MeResponse(msgspec.Struct, kw_only=True):
    user_id: str
    tenant_id: str
    email: str
    name: str | None
    email_verified: bool
    is_admin: bool
    verification_status: str
    tier: str
    auth: dict[str, object]


class AdminUserResponse(msgspec.Struct, kw_only=True):
    user_id: str
    tenant_id: str
    email: str
    name: str | None
    is_admin: bool
    email_verified: bool
    verification_status: str
    registered_at: str
    approved_at: str | None
    approved_by: str | None


