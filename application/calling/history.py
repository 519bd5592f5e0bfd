"""A call's history (issue 17): its stored events in the API's words, masked as the record is, and
the call as it stood at an instant, replayed from those events. No framework or driver here."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any
from uuid import UUID

from eventsourcing.application import project_aggregate

from application.calling.app import Calling
from application.calling.lifecycle import CallRead, read_call
from application.errors import NotFoundError
from application.principal import Principal
from domain.calls.call import Call
from domain.calls.call_rules import MACHINE_ANSWERS
from domain.calls.outcome_schema import OutcomeSchema
from domain.calls.sms import CallSms
from domain.calls.pricing import money
from domain.timestamps import iso

# Every Call event by its class name, named as the API names it: the stored names are the
# library's topics, not a contract a client should read (tests/unit/test_call_history_names.py).
EVENT_NAMES: dict[str, str] = {
    "Queued": "call.queued",
    "Started": "call.started",
    "Leased": "call.leased",
    "Restarted": "call.restarted",
    "DialRequested": "call.dial_requested",
    "Dialed": "call.dialed",
    "InboundAnswered": "call.inbound_answered",
    "InboundRouted": "call.inbound_routed",
    "CarrierProgressed": "call.carrier_progressed",
    "CarrierEnded": "call.carrier_ended",
    "VoiceSessionOpened": "call.voice_session_opened",
    "VoiceSessionClosed": "call.voice_session_closed",
    "Answered": "call.answered",
    "TurnRecorded": "call.turn",
    "KeypadCollected": "call.keypad_collected",
    "TransferRequested": "call.transfer_requested",
    "TransferLegEnded": "call.transfer_leg_ended",
    "VoicemailRecorded": "call.voicemail_recorded",
    "VoicemailTranscribed": "call.voicemail_transcribed",
    "AgentUsageRecorded": "call.agent_usage_recorded",
    "Ended": "call.ended",
    "OutcomeExtracted": "call.outcome_extracted",
    "PartialOutcomeRecorded": "call.partial_outcome_recorded",
    "Completed": "call.completed",
    "Failed": "call.failed",
    "RecordingAttached": "call.recording_attached",
    "SmsClaimed": "call.sms_claimed",
    "SmsSent": "call.sms_sent",
    "SmsFailed": "call.sms_failed",
}
# A call's post-call SMS (its own aggregate since 0.2.0) shows in the call's history as release
# 0.1.0's SMS events on the call did; opening it is bookkeeping, not shown.
SMS_EVENT_NAMES: dict[str, str] = {
    "Claimed": "call.sms_claimed",
    "Sent": "call.sms_sent",
    "Failed": "call.sms_failed",
}
# SPEC.md's answering-machine rule: an answer by a machine or a fax is what abandons the call.
MACHINE_DETECTED = "call.machine_detected"
SYSTEM = "callwright"  # who caused an event that names nobody: the service itself
MASKED = "[masked]"
SECRET_WORDS = ("token", "secret", "nonce")
# The library's bookkeeping, shown as seq and at (or not at all), never as the event's data.
ENVELOPE = frozenset({"originator_id", "originator_version", "timestamp", "originator_topic"})


@dataclass(frozen=True, kw_only=True)
class HistoryEvent:
    seq: int
    type: str
    at: str
    by: str
    data: dict[str, Any]


@dataclass(frozen=True, kw_only=True)
class HistoryPage:
    events: list[HistoryEvent]
    last_seq: int | None  # where the next page starts (after this seq); None on the last page


def event_name(event: Any) -> str:
    if isinstance(event, CallSms.Event):
        return SMS_EVENT_NAMES[type(event).__name__]
    name = EVENT_NAMES[type(event).__name__]
    if name == "call.answered" and event.answered_by in MACHINE_ANSWERS:
        return MACHINE_DETECTED
    return name


def _plain(value: Any) -> Any:
    """JSON-ready, in the record's words: money with four places, instants in UTC with a Z, an
    outcome schema as its canonical definition."""
    if isinstance(value, Decimal):
        return money(value)
    if isinstance(value, datetime):
        return iso(value)
    if isinstance(value, OutcomeSchema):
        return value.to_definition()
    if isinstance(value, UUID):
        return str(value)
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value


def _masked(event: Any, name: str, value: Any) -> Any:
    """Keypad digits never leave the call (the transcript shows them as stars), nor does a
    single-use socket token's nonce or any other secret an event may hold."""
    if any(word in name for word in SECRET_WORDS):
        return MASKED
    if type(event).__name__ == "KeypadCollected" and name == "digits":
        return "*" * len(value)
    return _plain(value)


def event_data(event: Any) -> dict[str, Any]:
    return {name: _masked(event, name, value) for name, value in vars(event).items() if name not in ENVELOPE}


def history_event(event: Any, seq: int | None = None) -> HistoryEvent:
    by = getattr(event, "by", None) or getattr(event, "created_by", None) or SYSTEM
    return HistoryEvent(seq=event.originator_version if seq is None else seq, type=event_name(event),
                        at=iso(event.timestamp) or "", by=by, data=event_data(event))


def call_events(calling: Calling, principal: Principal, call_id: str, *, after: int = 0,
                limit: int = 100) -> HistoryPage:
    """The tenant's call's events after ``after`` (a seq), oldest first, ``limit`` at most."""
    read = read_call(calling, principal, call_id)
    if read.sms is None:  # a seq is the call's own version
        stored = calling.recorder.select_events(read.call.id, gt=after, limit=limit + 1)
        shown = [history_event(calling.mapper.to_domain_event(item)) for item in stored[:limit]]
        return HistoryPage(events=shown, last_seq=shown[-1].seq if len(stored) > limit else None)
    timeline = merged_history(calling, read.call.id, read.sms.id)
    rest = timeline[after:]
    shown = [history_event(event, seq) for seq, event in enumerate(rest[:limit], start=after + 1)]
    return HistoryPage(events=shown, last_seq=shown[-1].seq if len(rest) > limit else None)


def merged_history(calling: Calling, call_id: UUID, sms_id: UUID) -> list[Any]:
    """The call's events and its SMS's (but the opening), in the order they happened: a seq is a
    place in this order, which is the call's own version up to its first message (every message
    follows the call's end, and what is recorded later comes later)."""
    call_events = [calling.mapper.to_domain_event(item) for item in calling.recorder.select_events(call_id)]
    sms_events = [calling.mapper.to_domain_event(item) for item in calling.recorder.select_events(sms_id)]
    messages = [event for event in sms_events if not isinstance(event, CallSms.Opened)]
    return sorted([*call_events, *messages], key=lambda event: event.timestamp)


def event_instant(event: Any) -> datetime:
    """When ``event`` happened for ``as_of``: its stored timestamp. A ``Queued`` event is stored at
    its ``at`` (the record's ``created_at``); one stored before that was so counts from the
    earlier of the two, so ``as_of=created_at`` finds the queued call either way."""
    if event.originator_version == 1 and isinstance(getattr(event, "at", None), datetime):
        return min(event.timestamp, event.at)
    return event.timestamp


def version_as_of(events: list[Any], as_of: datetime) -> int | None:
    """The seq of the last event recorded at or before ``as_of``; None before the first."""
    return max((event.originator_version for event in events if event_instant(event) <= as_of), default=None)


def call_as_of(calling: Calling, principal: Principal, call_id: str, as_of: datetime) -> CallRead:
    """The tenant's call (and its SMS) as it stood at ``as_of``, replayed from its stored events
    (never a snapshot); before it was queued it did not exist, the same 404 as an unknown call."""
    read = read_call(calling, principal, call_id)
    events = [calling.mapper.to_domain_event(item) for item in calling.recorder.select_events(read.call.id)]
    version = version_as_of(events, as_of)
    if version is None:
        raise NotFoundError(f"no call {call_id}", code="call_not_found")
    replayed = project_aggregate(None, [event for event in events if event.originator_version <= version])
    assert isinstance(replayed, Call)
    if read.sms is None:
        return CallRead(replayed)
    stored = [calling.mapper.to_domain_event(item) for item in calling.recorder.select_events(read.sms.id)]
    sms = project_aggregate(None, [event for event in stored if event.timestamp <= as_of])
    assert sms is None or isinstance(sms, CallSms)
    return CallRead(replayed, sms)
