"""The reconciler (ARCHITECTURE.md §7): carrier callbacks are not durable, so live calls that have
heard nothing final for a while are looked up at the carrier and settled from its view.

- ``DialRequested`` with no carrier id (a crash or a lost answer between the two): the call is
  looked up by number and time, never dialled again; when the carrier has no such call it ends
  with ``dispatch_unknown``.
- A dialled call with no final status: its carrier record's final status is applied as if the
  callback had arrived; a call the carrier ended whose voice session never closed (the socket's
  process died) has its session closed so that the settler extracts what was said.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

from application.calling import callbacks, live
from application.calling.app import Calling
from application.calling.carrier_reports import FINAL_STATUSES, CallStatusReport, MachineVerdict
from application.providers.ports import CarrierCall, CarrierRefusedError, CarrierUnreachableError
from domain.calls.call import Call


def reconcile(calling: Calling, call_ids: Iterable[str], after: timedelta) -> list[str]:
    """Look at each listed call; the ids of the calls this moved."""
    moved: list[str] = []
    for call_id in call_ids:
        try:
            if _one(calling, call_id, after):
                moved.append(call_id)
        except CarrierUnreachableError:
            continue  # ask again next round
    return moved


def _one(calling: Calling, call_id: str, after: timedelta) -> bool:
    call = calling.find(Call, Call.create_id(call_id))
    now = calling.ports.clock()
    if call is None or call.is_terminal or call.mode != "live" or call.started_at is None:
        return False
    if now - (call.dial_requested_at or call.started_at) < after:
        return False
    account = live.account_of_call(calling, call)
    if account is None:
        return False
    carrier = calling.live.carrier
    if call.carrier_sid is None:
        if call.direction != "outbound" or call.dial_requested_at is None:
            return False
        found = carrier.find_call(account, call.to, call.from_number, call.dial_requested_at - timedelta(seconds=60))
        if not found:
            live.change(calling, call_id, lambda c: c.fail(
                "dispatch_unknown", "the dial's outcome is unknown and the carrier has no such call", now))
            return True
        sid = found[0].sid
        live.change(calling, call_id, lambda c: c.dialed(sid, now))
        return _apply(calling, call_id, found[0])
    if call.carrier_duration_seconds is not None:
        return _close_stale_session(calling, call, now, after)
    try:
        seen = carrier.fetch_call(account, call.carrier_sid)
    except CarrierRefusedError:
        seen = None
    if seen is None:
        live.change(calling, call_id, lambda c: c.fail("dispatch_unknown", "the carrier has no record of the call", now))
        return True
    return _apply(calling, call_id, seen)


def _apply(calling: Calling, call_id: str, seen: CarrierCall) -> bool:
    if seen.status not in FINAL_STATUSES:
        return False
    call = calling.find(Call, Call.create_id(call_id))
    if call is None or call.is_terminal:
        return False
    if seen.answered_by and call.answered_by is None and call.amd_requested:
        callbacks.status_reported(calling, call, MachineVerdict(answered_by=seen.answered_by))
        call = calling.find(Call, Call.create_id(call_id)) or call
    callbacks.status_reported(calling, call, CallStatusReport(status=seen.status, final=True,
                                                              duration_seconds=seen.duration_seconds or 0))
    return True


def _close_stale_session(calling: Calling, call: Call, now: datetime, after: timedelta) -> bool:
    """The carrier ended the call but the socket never reported closing: close it for it."""
    if call.session_state != "open":
        return False
    live.change(calling, call.call_id, lambda c: c.close_session("carrier_ended", now))
    return True
