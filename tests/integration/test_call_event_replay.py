"""A running deployment's stored calls keep loading (issue 31 item 1): every event type the 0.1.0
release stores for a call, recorded with its state as the event store holds it
(``tests/fixtures/call_events/release_0_1_0.json``: simulated, taken over, failed extraction,
cancelled, answering machine, busy, transfer with post-call SMS sent, failed and under way, a
flow's transfer fallback with a keypad entry, inbound voicemail, inbound transfer, a hang-up, a
queued live call), is written to a fresh store and read back through the repository. The call
record (SPEC.md Call, ``GET /v1/calls/{id}``), the ``call.completed`` payload (SPEC.md Events 3)
and the facts the live-call use cases decide by must equal what that release answered, field by
field."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from eventsourcing.persistence import StoredEvent
from litestar.serialization import encode_json

from application.calling.lifecycle import CallRead
from domain.calls.call import Call
from domain.webhooks.payload import call_completed
from entrypoints.http.serializers import call_record_json
from tests.support.records import call_record

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "call_events" / "release_0_1_0.json"
RECORDED: dict[str, Any] = json.loads(FIXTURE.read_text())["calls"]


def _stored(event: dict[str, Any]) -> StoredEvent:
    return StoredEvent(originator_id=uuid.UUID(event["originator_id"]), originator_version=event["originator_version"],
                       topic=event["topic"], state=json.dumps(event["state"], separators=(",", ":")).encode())


def _json(value: Any) -> Any:
    return json.loads(encode_json(value))


def _plain(value: Any) -> Any:
    """A value of the aggregate in the shape the release kept it (its ``as_dict``), else itself."""
    return value.as_dict() if hasattr(value, "as_dict") else value


def _differences(expected: dict[str, Any], actual: dict[str, Any]) -> list[str]:
    return [f"{name}: {expected.get(name)!r} != {actual.get(name)!r}"
            for name in sorted({*expected, *actual}) if expected.get(name) != actual.get(name)]


def test_the_fixture_covers_every_event_type_of_a_call():
    stored = {event["topic"].rsplit(".", 1)[-1] for call in RECORDED.values() for event in call["events"]}
    defined = {name for name, value in vars(Call).items() if isinstance(value, type) and hasattr(value, "mutate")
               and name not in ("Created", "Event")}
    assert defined - stored == set(), f"event types with no recorded example: {sorted(defined - stored)}"


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_recorded_events_replay_into_the_same_record(container, name):
    recorded = RECORDED[name]
    events = [_stored(event) for event in recorded["events"]]
    container.calling.recorder.insert_events(events)
    call = container.calling.find(Call, events[0].originator_id)
    assert call is not None and call.version == len(events)
    assert _differences(recorded["record"], _json(call_record(call))) == []
    assert call_record_json(CallRead(call)).decode() == recorded["record_json"]  # byte for byte: the keys' order too
    webhook = _json(call_completed(call)) if call.is_terminal else None
    assert webhook == recorded["webhook"]
    facts = _json({fact: _plain(getattr(call, fact)) for fact in recorded["facts"]})
    assert _differences(recorded["facts"], facts) == []
