"""A call's outcome_schema is stored as one value (docs/events.md ``Queued``): the Calling
application's transcoding writes ``{"_type_": "outcome_schema", "_data_": <canonical definition>}``,
and events stored before it, holding the plain definition, still rebuild the same value."""

from __future__ import annotations

import json
from typing import Any

import pytest

from adapters.kafka.envelope import decode, from_notification, to_domain_event
from domain.calls.call import Call
from domain.calls.call_rules import new_call_id
from domain.calls.outcome_schema import OutcomeSchema
from tests.fakes.clock import FakeClock

TENANT = "ten_" + "5" * 32
DEFINITION = {
    "confirmed": {"type": "boolean", "description": "Did the callee confirm?"},
    "slot": {"type": "enum", "values": ["morning", "evening"], "optional": True},
    "visit_on": {"type": "date"},
}


def queued(clock: FakeClock, outcome_schema: Any) -> Call:
    return Call(tenant_id=TENANT, call_id=new_call_id(), direction="outbound", mode="simulated", to="+442071838750",
                from_number="+15005550006", objective="Confirm", outcome_schema=outcome_schema,
                consent_type="prior_express", consent_record_id=None, voice_id=None, voice_engine="alpha_25",
                language="en-US", metadata={}, variables={}, simulation=None, created_by="key_test",
                max_duration_seconds=600, at=clock())


def stored_state(calling: Any, call: Call) -> dict[str, Any]:
    [stored] = calling.recorder.select_events(call.id, lte=1)
    return json.loads(stored.state)


@pytest.fixture(params=["postgres", "popo"])
def calling(request: pytest.FixtureRequest) -> Any:
    container = request.getfixturevalue("container" if request.param == "postgres" else "memory_container")
    return container.calling


def test_queued_event_stores_the_value_as_its_canonical_definition_and_reads_it_back(calling, clock):
    schema = OutcomeSchema.compile(DEFINITION)
    call = queued(clock, schema)
    calling.save(call)

    state = stored_state(calling, call)
    assert state["outcome_schema"] == {"_type_": "outcome_schema", "_data_": schema.to_definition()}
    again = calling.repository.get(call.id)
    assert isinstance(again.outcome_schema, OutcomeSchema)
    assert again.outcome_schema == schema
    assert again.outcome_schema.json_schema == schema.json_schema


def test_a_queued_event_of_the_old_form_rebuilds_a_call_with_the_compiled_value(calling, clock):
    """Events stored before the transcoding hold the definition as a plain object."""
    call = queued(clock, OutcomeSchema.compile(DEFINITION).to_definition())  # the event holds the dict
    calling.save(call)

    assert stored_state(calling, call)["outcome_schema"] == OutcomeSchema.compile(DEFINITION).to_definition()
    again = calling.repository.get(call.id)
    assert isinstance(again.outcome_schema, OutcomeSchema)
    assert again.outcome_schema == OutcomeSchema.compile(DEFINITION)


def test_the_kafka_envelope_carries_the_marker_and_gives_back_the_value(container, clock):
    schema = OutcomeSchema.compile(DEFINITION)
    call = queued(clock, schema)
    container.calling.save(call)
    [notification] = [n for n in container.calling.recorder.select_notifications(start=1, limit=100)
                      if n.originator_id == call.id]

    envelope = decode(from_notification("Calling", notification, container.calling))
    assert envelope.data["outcome_schema"] == {"_type_": "outcome_schema", "_data_": schema.to_definition()}
    event = to_domain_event(envelope, container.calling)
    assert isinstance(event, Call.Queued)
    assert event.outcome_schema == schema


# Over today's request limits (101 enum values, one of 150 characters, about 17 KB): what an older
# version accepted and stored.
OVER_LIMITS = {"reason": {"type": "enum", "values": [f"reason {n:03} " + "x" * 150 for n in range(101)]}}


@pytest.mark.parametrize("form", ["value", "plain definition"])
def test_a_stored_definition_over_the_request_limits_still_replays(calling, clock, form):
    schema = OutcomeSchema.compile(OVER_LIMITS, limits=False)
    call = queued(clock, schema if form == "value" else schema.to_definition())
    calling.save(call)

    again = calling.repository.get(call.id)
    assert again.outcome_schema == schema
    assert len(again.outcome_schema.field("reason").values) == 101
