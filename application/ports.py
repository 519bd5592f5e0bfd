"""Ports: what the use cases need from the outside world, as Protocols."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol
from uuid import UUID

Clock = Callable[[], datetime]


class PasswordHasher(Protocol):
    def hash(self, password: str) -> str: ...

    def verify(self, password: str, encoded: str) -> bool: ...

    def verify_dummy(self, password: str) -> None:
        """Spend the same time as a real verification (unknown e-mail at login)."""


@dataclass(frozen=True, kw_only=True)
class SessionClaims:
    user_id: str
    tenant_id: str
    jti: str
    issued_at: datetime
    expires_at: datetime


@dataclass(frozen=True, kw_only=True)
class IssuedSession:
    token: str
    claims: SessionClaims


class SessionTokens(Protocol):
    def issue(self, *, user_id: str, tenant_id: str, now: datetime) -> IssuedSession: ...

    def decode(self, token: str, now: datetime) -> SessionClaims:
        """Raise ``InvalidTokenError`` for a forged, malformed or expired token."""
        ...

    def looks_like_session(self, token: str) -> bool: ...


@dataclass(frozen=True, kw_only=True)
class EmailMessage:
    to: str
    subject: str
    body: str
    kind: str


class EmailSender(Protocol):
    def send(self, message: EmailMessage) -> None: ...


@dataclass(frozen=True, kw_only=True)
class RateDecision:
    allowed: bool
    limit: int
    remaining: int
    reset_at: int  # Unix seconds when the window ends
    retry_after: int


class RateLimiter(Protocol):
    def hit(self, bucket: str, *, limit: int, window_seconds: int, now: datetime) -> RateDecision: ...


class SecretBox(Protocol):
    """Authenticated encryption of small secrets at rest (AES-GCM under the master key)."""

    def seal(self, plaintext: str) -> str: ...

    def open(self, sealed: str) -> str: ...


class FreshReads(Protocol):
    """The hot path's reads, on the event loop and as fresh as a query begun after the request
    arrived (the HTTP server's request gate, ``adapters/postgres/request_gate.py``)."""

    async def hit_and_accounts_head(self, bucket: str, *, limit: int, window_seconds: int,
                                    now: datetime) -> tuple[RateDecision, int]:
        """Count one request in ``bucket`` and read the accounts log's head."""
        ...

    async def calling_version(self, aggregate_id: UUID) -> int | None:
        """The version of one Calling aggregate as committed now; ``None`` if it does not exist."""
        ...

    async def hit(self, bucket: str, *, limit: int, window_seconds: int, now: datetime) -> RateDecision:
        """Count one request in ``bucket``, from this process's lease of its shared budget."""
        ...

    async def accounts_head(self) -> int:
        """The accounts log's head as committed now."""
        ...


class Offload(Protocol):
    """Runs a blocking function off the event loop (the server's thread pool)."""

    async def __call__(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any: ...
