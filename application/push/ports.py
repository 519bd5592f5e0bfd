"""What the push use cases need from outside: a sender behind the webhook SSRF guard that
encrypts per RFC 8291 and signs with VAPID (RFC 8292), a maker of VAPID key pairs, and a box that
seals secrets at rest."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Protocol

from application.ports import SecretBox


@dataclass(frozen=True)
class PushTarget:
    """A device as its browser described it; ``auth`` is a secret: never logged."""

    endpoint: str
    p256dh: str
    auth: str = field(repr=False)


@dataclass(frozen=True)
class VapidKeyPair:
    public_key: str  # base64url of the uncompressed P-256 point
    private_key: str = field(repr=False)  # base64url of the PKCS #8 DER; never logged


class PushOutcome(Protocol):
    status: int | None  # the push service's status; None when it gave no answer
    error: str | None
    latency_ms: int


@dataclass(frozen=True)
class PushResult:
    """A ``PushOutcome`` as the sender (or the notifier, for a send that crashed) writes it."""

    status: int | None
    error: str | None
    latency_ms: int


class PushSender(Protocol):
    async def check(self, endpoint: str) -> str:
        """The endpoint URL normalized, or ``UnsafeTargetError`` (domain.webhooks.targets): the
        webhook SSRF guard's verdict."""
        ...

    async def send(self, target: PushTarget, payload: bytes, *, vapid: VapidKeyPair, ttl: int) -> PushOutcome:
        """One encrypted, signed notification; never raises for network problems."""
        ...


@dataclass(frozen=True, kw_only=True)
class PushPorts:
    box: SecretBox  # seals subscriptions' auth secrets and the VAPID private key
    sender: Callable[[], AbstractAsyncContextManager[PushSender]]  # one per use
    new_vapid_keys: Callable[[], VapidKeyPair]
