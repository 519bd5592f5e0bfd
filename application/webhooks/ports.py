"""What the webhook use cases need from outside besides a sealed-secret box (``application.ports``):
an HTTP poster behind the SSRF guard."""

from __future__ import annotations

from typing import Protocol


class AttemptOutcome(Protocol):
    status: int | None
    body: str
    latency_ms: int
    error: str | None
    blocked: bool
    address: str | None
    refused_code: str | None  # set when the URL policy refuses the target: the endpoint is disabled


class WebhookPoster(Protocol):
    """Posts one attempt behind the SSRF guard; never raises for network problems."""

    async def check(self, url: str) -> object: ...

    async def post(self, url: str, body: bytes, headers: dict[str, str]) -> AttemptOutcome: ...
