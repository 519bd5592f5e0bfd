"""The Call's rules for what answered and how the carrier ended it (SPEC.md answering-machine rule,
ARCHITECTURE.md §7): the same methods serve live and simulated calls."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from domain.calls.call import Call
from tests.support.calls import queued_call

NOW = datetime(2026, 3, 2, 10, 0, tzinfo=timezone.utc)
LATER = NOW + timedelta(seconds=30)


def running_call(mode: str = "live") -> Call:
    call = queued_call(mode=mode, at=NOW)
    if mode == "live":
        call.request_dial(True, NOW)
        call.dialed("CA" + "1" * 32, NOW)
    else:
        call.start(NOW)
    return call


def event_names(call: Call) -> list[str]:
    return [type(event).__name__ for event in call.collect_events()]


@pytest.mark.parametrize("mode", ["live", "simulated"])
@pytest.mark.parametrize("answered_by,code", [("machine_start", "machine_detected"),
                                              ("machine_end_beep", "machine_detected"),
                                              ("machine_end_silence", "machine_detected"),
                                              ("machine_end_other", "machine_detected"),
                                              ("fax", "fax_detected")])
def test_call_is_abandoned_when_answered_by_machine(mode, answered_by, code):
    call = running_call(mode)
    call.collect_events()

    assert call.machine_verdict(answered_by, LATER) is False

    assert (call.status, call.error_code, call.answered_by) == ("failed", code, answered_by)
    assert call.error_message == f"answered by {answered_by}; the call was abandoned"
    assert event_names(call) == ["Answered", "Failed"]


@pytest.mark.parametrize("answered_by", ["human", "unknown"])
def test_a_person_or_an_undetermined_answer_lets_the_agent_speak(answered_by):
    call = running_call()
    assert call.machine_verdict(answered_by, LATER) is True
    assert (call.status, call.answered_by, call.error_code) == ("in_progress", answered_by, None)


@pytest.mark.parametrize("mode,message", [("live", "nobody answered (silence)"), ("simulated", "nobody answered")])
def test_silence_fails_the_call_with_no_answer(mode, message):
    call = running_call(mode)
    assert call.machine_verdict("no_answer", LATER) is False
    assert (call.status, call.error_code, call.error_message) == ("failed", "no_answer", message)


def test_a_second_verdict_or_one_on_a_terminal_call_changes_nothing():
    call = running_call()
    call.machine_verdict("human", NOW)
    call.collect_events()
    assert call.machine_verdict("machine_start", LATER) is False
    assert call.status == "in_progress" and event_names(call) == []

    ended = running_call()
    ended.fail("timeout", "too long", NOW)
    ended.collect_events()
    assert ended.machine_verdict("fax", LATER) is False and event_names(ended) == []


@pytest.mark.parametrize("status,code,message", [("busy", "busy", "the carrier reported busy"),
                                                 ("no_answer", "no_answer", "the carrier reported no-answer"),
                                                 ("failed", "carrier_failed", "the carrier reported failed"),
                                                 ("canceled", "carrier_canceled", "the carrier reported canceled")])
def test_each_carrier_failure_fails_the_call_with_its_own_code(status, code, message):
    call = running_call()
    call.collect_events()

    assert call.carrier_final(status, 0, LATER) is True

    assert (call.status, call.error_code, call.error_message) == ("failed", code, message)
    assert (call.carrier_status, call.carrier_duration_seconds) == (status, 0)
    assert event_names(call) == ["CarrierEnded", "Failed"]


def test_a_call_completed_before_its_conversation_started_has_hung_up():
    call = running_call()
    assert call.carrier_final("completed", 3, LATER) is True
    assert (call.status, call.error_code) == ("failed", "hung_up")
    assert call.error_message == "the call ended before the conversation started"


def test_a_call_completed_after_its_conversation_waits_for_the_settler():
    call = running_call()
    call.machine_verdict("human", NOW)
    call.open_session("relay", "nonce", NOW)
    call.close_session("socket_closed", LATER)
    call.collect_events()

    assert call.carrier_final("completed", 41, LATER) is True

    assert call.status == "in_progress" and call.carrier_duration_seconds == 41
    assert event_names(call) == ["CarrierEnded"]


def test_a_call_completed_during_a_transfer_is_not_hung_up():
    call = running_call()
    call.request_transfer([{"label": "Desk", "e164": "+442071838751"}], 1, "brief", NOW)
    assert call.carrier_final("completed", 60, LATER) is True
    assert call.status == "in_progress"


def test_the_final_status_is_recorded_once_and_never_on_a_terminal_call():
    call = running_call()
    call.carrier_final("busy", 0, NOW)
    call.collect_events()
    assert call.carrier_final("completed", 10, LATER) is False and event_names(call) == []

    ended = running_call()
    ended.fail("cancelled", "cancelled", NOW)
    ended.collect_events()
    assert ended.carrier_final("failed", 0, LATER) is False and event_names(ended) == []
