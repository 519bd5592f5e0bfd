"""Stored events are named by their topic (module and class): the Call's events must keep the
names they were stored under, whichever module holds the command that records them
(ARCHITECTURE.md §4: never move a module that defines events without registering the old topic)."""

from __future__ import annotations

from eventsourcing.domain import CanMutateAggregate
from eventsourcing.utils import get_topic

from domain.calls.call import Call

STORED = {
    "Queued", "Started", "DialRequested", "Dialed", "InboundAnswered", "CarrierProgressed", "CarrierEnded",
    "VoiceSessionOpened", "VoiceSessionClosed", "TransferRequested", "TransferLegEnded", "RecordingAttached",
    "Answered", "TurnRecorded", "Ended", "OutcomeExtracted", "PartialOutcomeRecorded", "Completed", "Failed",
    "Leased", "Restarted", "SmsClaimed", "SmsSent", "SmsFailed", "InboundRouted", "VoicemailRecorded",
    "VoicemailTranscribed", "AgentUsageRecorded", "KeypadCollected",
}


def test_every_call_event_keeps_the_topic_it_was_stored_under():
    events = {name: value for name, value in vars(Call).items()
              if isinstance(value, type) and issubclass(value, CanMutateAggregate)
              and name not in ("Event", "Created")}  # the library's base classes, never stored
    assert set(events) == STORED
    assert {get_topic(cls) for cls in events.values()} == {f"domain.calls.call:Call.{name}" for name in STORED}
