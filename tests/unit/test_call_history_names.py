"""A call's history names every Call event in the API's words, and shows its fields as the record
would: money and instants as strings, keypad digits and secrets masked (issue 17; docs/events.md)."""

from __future__ import annotations

import json
import re
from decimal import Decimal

import pytest
from eventsourcing.domain import CanMutateAggregate

from application.calling.history import EVENT_NAMES, MACHINE_DETECTED, history_event
from domain.calls.call import Call
from domain.calls.call_rules import MACHINE_ANSWERS
from tests.support.calls import answered_call, later, settled_call, talking_call

RENAMED = {"TurnRecorded": "call.turn"}  # the rest: call. and the class name in snake_case


def _call_events() -> set[str]:
    return {name for name, value in vars(Call).items()
            if isinstance(value, type) and issubclass(value, CanMutateAggregate)
            and name not in ("Event", "Created")}  # the library's base classes, never stored


def test_every_call_event_has_a_name_and_no_name_is_left_over():
    assert set(EVENT_NAMES) == _call_events()


def test_names_are_the_class_names_in_snake_case_and_all_differ():
    for cls_name, name in EVENT_NAMES.items():
        expected = RENAMED.get(cls_name) or "call." + re.sub(r"(?<!^)(?=[A-Z])", "_", cls_name).lower()
        assert name == expected
    assert len(set(EVENT_NAMES.values())) == len(EVENT_NAMES)
    assert MACHINE_DETECTED not in EVENT_NAMES.values()


@pytest.mark.parametrize("answered_by", MACHINE_ANSWERS)
def test_an_answer_by_a_machine_or_a_fax_is_named_machine_detected(answered_by):
    answered = answered_call(answered_by).collect_events()[-1]
    assert history_event(answered).type == MACHINE_DETECTED


def test_an_answer_by_a_human_is_named_answered():
    assert history_event(answered_call("human").collect_events()[-1]).type == "call.answered"


def test_keypad_digits_and_the_session_nonce_are_masked():
    call = talking_call()
    call.record_keypad_entry("pin", "4821", later(14))
    shown = [history_event(event) for event in call.collect_events()]

    keypad = next(event for event in shown if event.type == "call.keypad_collected")
    opened = next(event for event in shown if event.type == "call.voice_session_opened")
    assert keypad.data["digits"] == "****" and keypad.data["field"] == "pin"
    assert opened.data["nonce"] == "[masked]"
    assert "4821" not in json.dumps([event.data for event in shown])
    assert "nonce-1" not in json.dumps([event.data for event in shown])


def test_fields_are_json_in_the_record_words_without_the_library_envelope():
    call = settled_call()
    call.complete(Decimal("0.01"), Decimal("0.002"), later(22))
    shown = [history_event(event) for event in call.collect_events()]
    json.dumps([event.data for event in shown])  # every value is plain JSON

    queued, completed = shown[0], shown[-1]
    assert (queued.seq, queued.type, queued.by) == (1, "call.queued", "key_test")
    assert queued.data["outcome_schema"] == {"confirmed": {"type": "boolean", "optional": False}}
    assert queued.data["at"] == "2026-11-25T12:00:00Z"
    assert not {"originator_id", "originator_version", "timestamp", "originator_topic"} & set(queued.data)
    assert completed.data["cost_total"] == "0.0120" and completed.by == "callwright"
    assert [event.seq for event in shown] == list(range(1, len(shown) + 1))
    assert all(event.at.endswith("Z") for event in shown)
