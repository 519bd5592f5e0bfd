"""What the webhook use cases need from outside: a sealed-secret box and an HTTP poster."""

from __future__ import annotations

from typing import Protocol


class SecretBox(Protocol):
    """Authenticated encryption of small secrets at rest (AES-GCM under the master key)."""

    def seal(self, plaintext: str) -> str: ...

    def open(self, sealed: str) -> str: ...


class AttemptOutcome(Protocol):
    status: int | None
    body: str
    latency_ms: int
    error: str | None
    blocked: bool
    address: str | None


class WebhookPoster(Protocol):
    """Posts one attempt behind the SSRF guard; never raises for network problems."""

    async def check(self, url: str) -> object: ...

    async def post(self, url: str, body: bytes, headers: dict[str, str]) -> AttemptOutcome: ...
