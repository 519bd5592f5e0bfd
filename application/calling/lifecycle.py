"""Reading one call, cancelling it, and the watchdog that ends calls stuck past their limit."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import timedelta

from application.calling.app import Calling
from application.errors import ConflictError, FieldError
from application.ports import FreshReads, Offload
from application.principal import Principal
from domain import ids
from domain.calls.call import Call
from domain.calls.call_rules import QUEUED
from domain.calls.sms import CallSms

# Past its maximum duration a call gets this much longer to settle before the watchdog ends it.
WATCHDOG_GRACE = timedelta(seconds=60)


def claim_queued(calling: Calling, call_id: str, take: Callable[[Call], object]) -> Call | None:
    """``take`` a queued call (its first move out of ``queued``) and save it; None when the call
    is not queued any more or another runner's claim won (optimistic concurrency)."""
    call = calling.find(Call, Call.create_id(call_id))
    if call is None or call.status != QUEUED:
        return None
    take(call)
    try:
        calling.commit(call)
    except ConflictError:
        return None
    return call


def owned_call(calling: Calling, principal: Principal, call_id: str) -> Call:
    """The tenant's call; unknown and other tenants' ids give the same 404."""
    return calling.find_owned(Call, ids.CALL, call_id, principal.tenant_id, loc="call_id", noun="call")


@dataclass(frozen=True)
class CallRead:
    """A call as its record shows it: the call and, once its number has texted the other party,
    its post-call SMS (``domain/calls/sms.py``)."""

    call: Call
    sms: CallSms | None = None


def may_have_sms(call: Call) -> bool:
    """Only an ended call is texted, and never a simulated outbound one
    (``application/numbers/post_call_sms.py``)."""
    return call.is_terminal and (call.direction == "inbound" or call.mode == "live")


def read_call(calling: Calling, principal: Principal, call_id: str) -> CallRead:
    """``owned_call`` with its post-call SMS."""
    call = owned_call(calling, principal, call_id)
    sms = calling.find(CallSms, CallSms.create_id(call.call_id)) if may_have_sms(call) else None
    return CallRead(call, sms)


async def current_call(calling: Calling, principal: Principal, call_id: str, *, reads: FreshReads | None,
                       offload: Offload) -> CallRead:
    """``read_call`` from the event loop: the call (and its SMS) this process's cache holds, when
    their versions are the ones committed now (one coalesced read, ``reads.calling_version``, begun
    after the request arrived, so every write committed before it, by any process, is seen); else
    read in a thread. Only read what it returns."""
    try:
        aggregate_id = ids.from_public(ids.CALL, call_id)
    except ids.MalformedIdError as exc:
        raise FieldError(["path", "call_id"], str(exc), code="invalid_id", value=call_id) from exc
    cached = calling.remembered(Call, aggregate_id) if reads is not None else None
    if cached is not None and reads is not None and cached.tenant_id == principal.tenant_id:
        version = cached.version
        if not may_have_sms(cached):
            if await reads.calling_version(aggregate_id) == version and cached.version == version:
                return CallRead(cached)
        else:
            sms_id = CallSms.create_id(cached.call_id)
            sms = calling.remembered(CallSms, sms_id)
            sms_version = sms.version if sms is not None else None
            committed = await asyncio.gather(reads.calling_version(aggregate_id), reads.calling_version(sms_id))
            if committed == [version, sms_version] and cached.version == version and (
                    sms is None or sms.version == sms_version):
                return CallRead(cached, sms)
    return await offload(read_call, calling, principal, call_id)


def cancel_call(calling: Calling, principal: Principal, call_id: str) -> Call:
    for _attempt in range(10):
        call = owned_call(calling, principal, call_id)
        if call.is_terminal:
            raise ConflictError(f"the call is already {call.status}", code="call_already_ended")
        call.fail("cancelled", f"cancelled by {principal.actor}", calling.ports.clock())
        try:
            calling.commit(call)
        except ConflictError:
            continue  # the runner moved it meanwhile: look again
        return call
    raise ConflictError("the call keeps changing; try again", code="conflict")


def fail_overdue(calling: Calling, call_ids: Iterable[str]) -> list[str]:
    """End every listed call that is still running past its maximum duration (``timeout``)."""
    ended: list[str] = []
    for call_id in call_ids:
        call = calling.find(Call, Call.create_id(call_id))
        now = calling.ports.clock()
        if call is None or call.is_terminal:
            continue
        if now < call.created_at + timedelta(seconds=call.max_duration_seconds) + WATCHDOG_GRACE:
            continue
        call.fail("timeout", "the call ran past its maximum duration", now)
        try:
            calling.commit(call)
        except ConflictError:
            continue
        ended.append(call_id)
    return ended
