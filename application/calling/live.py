"""What every live-call use case shares (ARCHITECTURE.md §7-§9): the ports of live calls, the
tenant's carrier account, and ``change``. Dialing, the carrier's callbacks and transfers have a
module each (``dialing``, ``callbacks``, ``transfers``).

Every change goes through ``Calling.update`` (re-read and re-applied on a conflict): the carrier's
callbacks, the voice socket and the reactors write the same call concurrently.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

from application.calling.app import Calling
from application.calling.carrier_reports import CarrierEdge
from application.numbers.lookups import number_called
from application.ports import SecretBox
from application.providers.credentials import credential_of
from application.providers.ports import AccountAccess, Carrier
from domain.calls.call import Call
from domain.calls.call_rules import CallStateError
from domain.calls.engines import DEFAULT_ENGINE, EngineProfile
from domain.numbers.inbound_plan import ROUTED_AWAY
from domain.numbers.number import MANAGED, Number

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


def ports_of(calling: Calling) -> LivePorts:
    if calling.live is None:
        raise RuntimeError("live calls are not wired in this process")
    return calling.live


def account_of_number(calling: Calling, number: Number) -> AccountAccess | None:
    """The carrier account a number lives on: the service's sub-account for a managed number, the
    tenant's own verified account otherwise."""
    return ports_of(calling).managed if number.source == MANAGED else account_for(calling, number.tenant_id)


def account_of_call(calling: Calling, call: Call) -> AccountAccess | None:
    """The carrier account a live call runs on: that of the number an inbound call came to (its
    ``metadata.number_id``), the tenant's own for every outbound call (its caller number is one of
    the tenant's account)."""
    number = number_called(calling, call)
    return account_of_number(calling, number) if number is not None else account_for(calling, call.tenant_id)


def account_for(calling: Calling, tenant_id: str) -> AccountAccess | None:
    credential = credential_of(calling, tenant_id)
    if credential is None or not credential.verified:
        return None
    return AccountAccess(account_sid=credential.account_sid,
                         auth_token=ports_of(calling).credentials.open(credential.sealed_token))


def change(calling: Calling, call_id: str, apply: Callable[[Call], object]) -> Call | None:
    """Apply ``apply`` to the call (re-read and retried on conflicts); None when the call refuses it."""
    try:
        return calling.update(Call, Call.create_id(call_id), apply)
    except CallStateError:
        return None


# -- settling -----------------------------------------------------------------------------------


def live_duration(call: Call, now: datetime | None = None) -> int:
    """The carrier's billed duration; else the voice session's; else, for a call its number routed
    away from the agent (settled as its instructions end it), the time since it was answered."""
    if call.carrier_duration_seconds:
        return call.carrier_duration_seconds
    if call.session_opened_at and call.session_closed_at:
        return max(1, round((call.session_closed_at - call.session_opened_at).total_seconds()))
    if now is not None and call.started_at is not None and call.route_action in ROUTED_AWAY:
        return max(0, round((now - call.started_at).total_seconds()))
    return 0


def overdue_dial(call: Call, now, after: timedelta) -> bool:  # type: ignore[no-untyped-def]
    return (call.dial_requested_at is not None and call.carrier_sid is None
            and now - call.dial_requested_at >= after)
