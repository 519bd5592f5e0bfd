"""Placing a live call (ARCHITECTURE.md §7): claim it, dial at most once, hang it up. Must not
import any carrier's SDK or words: the ``Carrier`` port does the talking."""

from __future__ import annotations

from application import logs

from application.calling.app import Calling
from application.calling.lifecycle import claim_queued
from application.calling.live import account_for, account_of_call, change
from application.numbers.lookups import tenant_number
from application.providers.ports import CarrierRefusedError, CarrierUnreachableError, DialRequest
from domain.calls.call import Call

log = logs.get_logger(__name__)


def claim_dial(calling: Calling, call_id: str) -> Call | None:
    """Save ``DialRequested`` (the claim: optimistic concurrency lets one runner win) before the
    carrier is asked; None when the call is not queued any more."""
    return claim_queued(calling, call_id, lambda call: call.request_dial(calling.live.amd, calling.ports.clock()))


def dial(calling: Calling, call: Call) -> None:
    """Ask the carrier to place a claimed call. A refusal fails the call; an unknown answer leaves
    it to the reconciler, which looks the call up and never dials again."""
    live = calling.live
    account = account_for(calling, call.tenant_id)
    if account is None:
        change(calling, call.call_id, lambda c: c.fail("carrier_not_configured",
                                                        "the carrier credentials were removed", calling.ports.clock()))
        return
    record = live.record_calls and _number_records(calling, call)
    request = DialRequest(
        to=call.to, from_number=call.from_number, twiml_url=live.url("twiml", call.call_id),
        status_url=live.url("status", call.call_id),
        amd_url=live.url("status", call.call_id) if call.amd_requested else None,
        recording_url=live.url("recording", call.call_id) if record else None,
    )
    try:
        sid = live.carrier.dial(account, request)
    except CarrierRefusedError as exc:
        change(calling, call.call_id, lambda c: c.fail(exc.code if exc.code.startswith("carrier_") else "carrier_refused",
                                                        f"the carrier refused the call: {exc.message}",
                                                        calling.ports.clock()))
        return
    except CarrierUnreachableError as exc:
        log.warning("call.dial_unknown", call_id=call.call_id, reason=str(exc))
        return
    change(calling, call.call_id, lambda c: c.dialed(sid, calling.ports.clock()))


def _number_records(calling: Calling, call: Call) -> bool:
    """The caller number's ``recording_enabled`` when it is a configured number (default: on)."""
    number = tenant_number(calling, call.tenant_id, call.from_number)
    return number is None or bool(number.recording_enabled)


def hang_up(calling: Calling, call: Call) -> None:
    account = account_of_call(calling, call)
    if account is None or call.carrier_sid is None:
        return
    try:
        calling.live.carrier.hang_up(account, call.carrier_sid)
    except (CarrierRefusedError, CarrierUnreachableError) as exc:
        log.warning("call.hang_up_failed", call_id=call.call_id, reason=str(exc))
