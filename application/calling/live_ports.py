"""The ports of live calls (ARCHITECTURE.md §7-§9): the carrier, its callbacks' protocol, the
sealed credentials, the voice socket tokens' key, the public URLs and the voice profiles."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from application.calling.carrier_reports import CarrierEdge
from application.ports import SecretBox
from application.providers.ports import AccountAccess, Carrier
from domain.calls.engines import DEFAULT_ENGINE, EngineProfile

CALLBACK_PREFIX = "/webhooks/carrier"


@dataclass(frozen=True, kw_only=True)
class LivePorts:
    carrier: Carrier
    edge: CarrierEdge  # the carrier's callbacks: signatures, reports, instruction documents
    credentials: SecretBox  # unseals the tenants' carrier auth tokens
    token_key: bytes  # signs the per-call voice socket tokens
    base_url: str  # CALLWRIGHT_PUBLIC_BASE_URL: what the carrier calls back and signs
    profiles: Mapping[str, EngineProfile]
    record_calls: bool = True
    token_seconds: int = 300
    amd: bool = True
    # Where the carrier's media lives besides https: its configured API server
    # (CALLWRIGHT_TWILIO_API_BASE_URL, a local fake on plain http); None: https only.
    carrier_base_url: str | None = None
    # The service's own carrier sub-account (managed numbers: their inbound calls and texts); None:
    # not configured.
    managed: AccountAccess | None = None

    def media_url(self, url: str) -> bool:
        """May a recording URL the carrier reported be stored (never fetched, never proxied)?"""
        if url.startswith("https://"):
            return True
        base = (self.carrier_base_url or "").rstrip("/")
        return bool(base) and url.startswith(base + "/")

    def url(self, kind: str, call_id: str, query: str = "") -> str:
        return f"{self.base_url}{CALLBACK_PREFIX}/{kind}/{call_id}" + (f"?{query}" if query else "")

    def socket_url(self, transport: str, call_id: str) -> str:
        base = self.base_url.replace("https://", "wss://", 1).replace("http://", "ws://", 1)
        return f"{base}{CALLBACK_PREFIX}/{transport}/{call_id}"

    def profile(self, engine: str) -> EngineProfile:
        return self.profiles.get(engine) or self.profiles[DEFAULT_ENGINE]
