"""What every live-call use case shares (ARCHITECTURE.md §7-§9): the ports of live calls, the
tenant's carrier account, and ``change``. Dialing, the carrier's callbacks and transfers have a
module each (``dialing``, ``callbacks``, ``transfers``).

Every change goes through ``Calling.update`` (re-read and re-applied on a conflict): the carrier's
callbacks, the voice socket and the reactors write the same call concurrently.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from application.calling.app import Calling
from application.numbers.lookups import number_called
from application.providers.credentials import credential_of
from application.providers.ports import AccountAccess
from domain.calls.call import Call
from domain.calls.call_rules import CallStateError
from domain.numbers.inbound_plan import ROUTED_AWAY
from domain.numbers.number import MANAGED, Number

def account_of_number(calling: Calling, number: Number) -> AccountAccess | None:
    """The carrier account a number lives on: the service's sub-account for a managed number, the
    tenant's own verified account otherwise."""
    return calling.live.managed if number.source == MANAGED else account_for(calling, number.tenant_id)


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
                         auth_token=calling.live.credentials.open(credential.sealed_token))


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
