"""Inbound calls (SPEC.md Carrier callbacks ``inbound``): route by the dialled number, check the
carrier's signature with that number's tenant, record an inbound call and answer with the voice
socket instructions. The number's objective and outcome schema drive the agent; the call settles
like any live call and fires ``call.completed``.

The call id derives from the carrier's call id, so a repeated callback finds the same call.
"""

from __future__ import annotations

from application.calling import callbacks
from application.calling.app import Calling
from application.calling.carrier_reports import InboundCallReport, SignedCallback
from application.calling.instructions import Hangup, Instruction
from application.calling.live import account_of_number
from application.errors import ConflictError
from application.numbers.lookups import number_for_e164
from domain import ids
from domain.calls.call import Call
from domain.calls.outcome_schema import OutcomeSchema
from domain.numbers.number import Number

INBOUND = "inbound"


def inbound_call_id(carrier_sid: str) -> str:
    return ids.to_public(ids.CALL, ids.deterministic("inbound-call", carrier_sid))


def answer(calling: Calling, report: InboundCallReport, callback: SignedCallback) -> list[Instruction]:
    number = number_for_e164(calling, report.to)
    carrier_sid = report.carrier_sid
    if number is None or not carrier_sid or not callbacks.signed_by(calling, account_of_number(calling, number), callback):
        raise callbacks.refused_callback()
    call_id = inbound_call_id(carrier_sid)
    call = calling.find(Call, Call.create_id(call_id))
    if call is None:
        call = _record(calling, number, call_id, carrier_sid, report.from_number)
    if call is None:
        return [Hangup()]
    return callbacks.voice_instructions(calling, call, number_id=number.number_id)


def _record(calling: Calling, number: Number, call_id: str, carrier_sid: str, caller: str) -> Call | None:
    now = calling.ports.clock()
    call = Call(
        tenant_id=number.tenant_id, call_id=call_id, direction=INBOUND, mode="live", to=number.e164,
        from_number=caller, objective=number.objective,
        outcome_schema=OutcomeSchema.compile(number.outcome_schema, limits=False),  # the number's stored definition
        consent_type=INBOUND, consent_record_id=None, voice_id=None,
        voice_engine=number.voice_engine or calling.ports.voice_routing(number.tenant_id).engine_for(call_id),
        language=number.language, metadata={"number_id": number.number_id},
        variables={}, simulation=None, created_by=f"carrier:{carrier_sid}",
        max_duration_seconds=calling.ports.max_call_seconds, at=now,
    )
    call.inbound_answered(carrier_sid, now)
    try:
        calling.commit(call)
    except ConflictError:  # the same callback twice at once: the other one recorded it
        return calling.find(Call, Call.create_id(call_id))
    return call
