"""Inbound calls (SPEC.md Carrier callbacks ``inbound``; docs/numbers.md "Inbound calls"): route by
the dialled number, check the carrier's signature with that number's account, record an inbound
call and do with it what the number says (``domain/numbers/inbound_plan.py``): its hours, routes,
keypad menu, voicemail, greeting, persona and recording.

Every path ends the call with an outcome and one ``call.completed``: the agent's and the
voicemail's are extracted by the settler, a call routed away settles with the routing outcome.
The call id derives from the carrier's call id, so a repeated callback finds the same call.
"""

from __future__ import annotations

from application import logs
from application.calling import callbacks, transfers
from application.calling.app import Calling
from application.calling.carrier_reports import InboundCallReport, SignedCallback, VoicemailReport
from application.calling.instructions import Gather, Hangup, Instruction, Record, Say
from application.calling.live import account_of_call, account_of_number, change
from application.errors import ConflictError
from application.flows.flows import number_flow_run
from application.numbers.lookups import number_called, number_for_e164
from application.providers.ports import CarrierRefusedError, CarrierUnreachableError
from domain import ids
from domain.calls.call import Call
from domain.calls.outcome_schema import OutcomeSchema
from domain.numbers import inbound_plan
from domain.numbers.inbound_plan import AGENT, HANGUP, MESSAGE, TRANSFER, VOICEMAIL, Route
from domain.numbers.number import Number

log = logs.get_logger(__name__)

INBOUND = "inbound"
KEYPAD_PROMPT = "Please choose an option on your keypad."
VOICEMAIL_PROMPT = "Please leave a message after the tone."
VOICEMAIL_OBJECTIVE = ("Take the caller's voicemail message: what they want, who they are and how to reach them. "
                       "{persona}")
ROUTED_OBJECTIVE = "Route the call as the number's settings say: {action} ({reason})."
_ROUTED_SCHEMA = OutcomeSchema.compile(inbound_plan.ROUTED_SCHEMA, limits=False)


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
    if call is None or call.is_terminal:
        return [Hangup()]
    if call.routing is not None:  # the carrier asked again: the same answer
        return _instructions(calling, call, number, greeted=False)
    route = inbound_plan.on_answer(number, caller=call.from_number, at=calling.ports.clock())
    if route is inbound_plan.ASK_KEYPAD:
        return [Gather(prompt=number.greeting or KEYPAD_PROMPT, action_url=calling.live.url("keypad", call_id))]
    return _take(calling, call, number, route, greeted=False)


def text_received(calling: Calling, report: InboundCallReport, callback: SignedCallback) -> None:
    """A text message to one of the numbers (its SMS URL): checked as a call's callback (403 for
    anything not signed by the number's account), then acknowledged with no reply. Its body is
    neither stored nor logged."""
    number = number_for_e164(calling, report.to)
    if number is None or not callbacks.signed_by(calling, account_of_number(calling, number), callback):
        raise callbacks.refused_callback()
    log.info("number.sms_received", number_id=number.number_id, tenant_id=number.tenant_id)


def keypad_pressed(calling: Calling, call: Call, keys: str) -> list[Instruction]:
    """The caller's key after the keypad menu (the ``keypad`` callback): the first keypad route it
    matches, else the number's default."""
    number = number_called(calling, call)
    if number is None or call.is_terminal:
        return [Hangup()]
    if call.routing is not None:
        return _instructions(calling, call, number, greeted=True)
    return _take(calling, call, number, inbound_plan.on_keypad(number, keys), greeted=True)


def voicemail_recorded(calling: Calling, call: Call, report: VoicemailReport) -> list[Instruction]:
    """The ``<Record>`` action: the message's audio is kept as the call's recording."""
    now = calling.ports.clock
    if report.url and report.sid and calling.live.media_url(report.url):
        def keep(c: Call) -> None:
            if c.voicemail_recorded(report.url, report.sid, report.duration_seconds, now()):
                c.attach_recording(report.url, report.sid, now())
        change(calling, call.call_id, keep)
    return [Hangup()]


def voicemail_transcribed(calling: Calling, call: Call, text: str | None) -> None:
    """The message as text (the transcription callback); the settler extracts its outcome."""
    change(calling, call.call_id, lambda c: c.voicemail_transcribed(text or "", calling.ports.clock()))


def start_recording(calling: Calling, call: Call) -> None:
    """Record an inbound call the agent took when its number records calls (outbound calls are
    recorded from the dial). A carrier that refuses leaves the call unrecorded, never failed."""
    if call.direction != INBOUND or not call.record_inbound or not call.carrier_sid:
        return
    account = account_of_call(calling, call)
    if account is None:
        return
    live = calling.live
    try:
        live.carrier.start_recording(account, call.carrier_sid, live.url("recording", call.call_id))
    except (CarrierRefusedError, CarrierUnreachableError) as exc:
        log.warning("call.recording_not_started", call_id=call.call_id, reason=str(exc))


def _record(calling: Calling, number: Number, call_id: str, carrier_sid: str, caller: str) -> Call | None:
    now = calling.ports.clock()
    # A bound flow's latest published version, as the call starts; else the number's own settings.
    run = number_flow_run(calling, number.tenant_id, number.flow_id) or {
        "objective": number.objective, "outcome_schema": number.outcome_schema, "flow": None}
    call = Call(
        tenant_id=number.tenant_id, call_id=call_id, direction=INBOUND, mode="live", to=number.e164,
        from_number=caller, objective=run["objective"], flow=run["flow"],
        outcome_schema=OutcomeSchema.compile(run["outcome_schema"], limits=False),  # a stored definition
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


def _take(calling: Calling, call: Call, number: Number, route: Route, *, greeted: bool) -> list[Instruction]:
    """Record where the call goes (once; a transfer with its destination), then the instructions."""
    now = calling.ports.clock

    def routed(c: Call) -> None:
        objective = schema = None
        if route.action == VOICEMAIL:
            persona = (number.voicemail_persona or "").strip()
            objective = VOICEMAIL_OBJECTIVE.format(persona=f"Persona: {persona}" if persona else "").strip()
            schema = OutcomeSchema.compile(number.voicemail_schema, limits=False)
        elif route.action in inbound_plan.ROUTED_AWAY:
            objective, schema = ROUTED_OBJECTIVE.format(action=route.action, reason=route.reason), _ROUTED_SCHEMA
        if not c.route_inbound(action=route.action, reason=route.reason, destination=route.destination,
                               persona=number.persona, record=bool(number.recording_enabled), now=now(),
                               objective=objective, outcome_schema=schema):
            return
        if route.action == TRANSFER:
            c.request_transfer([dict(d) for d in route.destinations], len(route.destinations), "", now())

    changed = change(calling, call.call_id, routed) or calling.find(Call, Call.create_id(call.call_id))
    if changed is None or changed.is_terminal:
        return [Hangup()]
    return _instructions(calling, changed, number, greeted=greeted)


def _instructions(calling: Calling, call: Call, number: Number, *, greeted: bool) -> list[Instruction]:
    """What the carrier does for the call's routing; the greeting opens a call the number is open for."""
    assert call.routing is not None
    action, closed = call.route_action, call.routing.reason == inbound_plan.CLOSED
    greeting = [Say(number.greeting)] if number.greeting and not greeted and not closed else []
    live = calling.live
    if action == AGENT:
        return greeting + callbacks.voice_instructions(calling, call, number_id=number.number_id)
    if action == VOICEMAIL:
        prompt = (number.overflow_message or "").strip() if closed else ""
        return [*greeting, Say(prompt or VOICEMAIL_PROMPT),
                Record(action_url=live.url("voicemail", call.call_id),
                       transcript_url=live.url("voicemail-text", call.call_id)), Hangup()]
    if action == TRANSFER:
        return transfers.transfer_instructions(calling, call, None, dest="0")
    if action == MESSAGE:
        return [Say((number.overflow_message or "").strip() or transfers.NO_ONE_AVAILABLE), Hangup()]
    assert action == HANGUP
    return [Hangup()]
