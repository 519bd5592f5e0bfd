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
from application.calling.lifecycle import owned_call
from application.errors import NotFoundError
from application.principal import Principal
from domain.calls.call import Call
from domain.calls.call_rules import MACHINE_ANSWERS
from domain.calls.outcome_schema import OutcomeSchema
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


def history_event(event: Any) -> HistoryEvent:
    by = getattr(event, "by", None) or getattr(event, "created_by", None) or SYSTEM
    return HistoryEvent(seq=event.originator_version, type=event_name(event), at=iso(event.timestamp) or "",
                        by=by, data=event_data(event))


def call_events(calling: Calling, principal: Principal, call_id: str, *, after: int = 0,
                limit: int = 100) -> HistoryPage:
    """The tenant's call's events after ``after`` (a seq), oldest first, ``limit`` at most."""
    call = owned_call(calling, principal, call_id)
    stored = calling.recorder.select_events(call.id, gt=after, limit=limit + 1)
    shown = [history_event(calling.mapper.to_domain_event(item)) for item in stored[:limit]]
    return HistoryPage(events=shown, last_seq=shown[-1].seq if len(stored) > limit else None)


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


def call_as_of(calling: Calling, principal: Principal, call_id: str, as_of: datetime) -> Call:
    """The tenant's call as it stood at ``as_of``, replayed from its stored events (never a
    snapshot); before it was queued it did not exist, the same 404 as an unknown call."""
    call = owned_call(calling, principal, call_id)
    events = [calling.mapper.to_domain_event(item) for item in calling.recorder.select_events(call.id)]
    version = version_as_of(events, as_of)
    if version is None:
        raise NotFoundError(f"no call {call_id}", code="call_not_found")
    replayed = project_aggregate(None, [event for event in events if event.originator_version <= version])
    assert isinstance(replayed, Call)
    return replayed
