"""The ``Call`` aggregate's state machine, command by command (ARCHITECTURE.md §7), as
Given/When/Then scenarios: which events each command emits, and which states refuse it."""

from __future__ import annotations

from decimal import Decimal

import pytest

from domain.calls.call import Call
from domain.calls.call_rules import LEASE
from domain.calls.call_rules import (
    AGENT,
    CALLEE,
    COMPLETED,
    FAILED,
    IN_PROGRESS,
    MACHINE_ANSWERS,
    NO_COST,
    QUEUED,
    CallStateError,
    abandon_code,
)
from tests.support.aggregates import given
from tests.support.calls import (
    CARRIER_SID,
    DESTINATIONS,
    NOW,
    OUTCOME,
    answered_call,
    completed_call,
    dialed_call,
    failed_call,
    later,
    live_call,
    queued_call,
    settled_call,
    started_call,
    talking_call,
    transferring_call,
)

TERMINAL_CALLS = {"completed": completed_call, "failed": failed_call}
NON_TERMINAL_CALLS = {"queued": queued_call, "started": started_call, "dialed": dialed_call,
                      "answered": answered_call, "talking": talking_call, "settled": settled_call,
                      "transferring": transferring_call}


# -- creation ---------------------------------------------------------------------------------------


def test_a_new_call_is_queued_with_nothing_spent_and_nothing_reported():
    call = queued_call()
    assert [type(e) for e in call.collect_events()] == [Call.Queued]
    assert (call.status, call.is_terminal, call.started_at, call.answered_by, call.outcome) == (
        QUEUED, False, None, None, None)
    assert (call.cost_voice, call.cost_extraction, call.cost_total) == (NO_COST, NO_COST, NO_COST)
    assert (call.session_state, call.transfer_pending, call.ready_to_settle) == ("none", False, False)


def test_given_replays_the_events_of_a_call_into_the_same_state():
    history = queued_call()
    history.start(NOW)
    given(history.collect_events()).when(lambda call: call.record_turn(AGENT, "Hello", NOW)).then(
        Call.TurnRecorded, status=IN_PROGRESS, turns=[{"speaker": AGENT, "text": "Hello"}])


# -- claiming: simulated start, live dial, inbound answer -------------------------------------------


def test_starting_a_queued_simulated_call_puts_it_in_progress():
    given(queued_call()).when(lambda call: call.start(NOW)).then(Call.Started, Call.Leased, status=IN_PROGRESS, started_at=NOW,
                                                             lease_until=NOW + LEASE)


def test_a_second_start_conflicts():
    given(started_call()).when(lambda call: call.start(NOW)).then_raises(CallStateError, "in_progress")


def test_a_dial_is_claimed_before_the_carrier_is_asked():
    """§7: dialing is at most once; ``DialRequested`` is saved before the carrier is called."""
    given(live_call()).when(lambda call: call.request_dial(amd=True, now=NOW)).then(
        Call.DialRequested, status=IN_PROGRESS, dial_requested_at=NOW, started_at=NOW, amd_requested=True,
        awaiting_verdict=True, carrier_sid=None)


def test_a_second_dial_claim_is_refused():
    given(dialed_call()).when(lambda call: call.request_dial(amd=False, now=NOW)).then_raises(CallStateError)


def test_only_a_claimed_call_can_be_dialed():
    given(live_call()).when(lambda call: call.dialed(CARRIER_SID, NOW)).then_raises(CallStateError, "queued")


def test_the_carrier_sid_is_recorded_once_and_a_repeat_changes_nothing():
    call = live_call()
    call.request_dial(amd=False, now=NOW)
    given(call).when(lambda c: c.dialed(CARRIER_SID, NOW)).then(Call.Dialed, carrier_sid=CARRIER_SID)
    given(call).when(lambda c: c.dialed(CARRIER_SID, later(1))).then()


def test_a_second_carrier_sid_for_the_same_call_is_refused():
    given(dialed_call()).when(lambda call: call.dialed("CA" + "9" * 32, NOW)).then_raises(
        CallStateError, "another carrier id")


def test_an_inbound_call_runs_at_once_without_dial_or_detection():
    given(queued_call(direction="inbound", mode="live")).when(
        lambda call: call.inbound_answered(CARRIER_SID, NOW)).then(
        Call.InboundAnswered, status=IN_PROGRESS, carrier_sid=CARRIER_SID, started_at=NOW, amd_requested=False,
        awaiting_verdict=False)


def test_an_inbound_answer_for_a_call_already_running_is_refused():
    given(started_call()).when(lambda call: call.inbound_answered(CARRIER_SID, NOW)).then_raises(CallStateError)


@pytest.mark.parametrize("command", [
    lambda call: call.answer("human", NOW),
    lambda call: call.open_session("relay", "n", NOW),
    lambda call: call.record_turn(AGENT, "Hi", NOW),
    lambda call: call.end(1, NOW),
    lambda call: call.record_outcome(OUTCOME, 0.5, {}, NOW),
    lambda call: call.complete(NO_COST, NO_COST, NOW),
    lambda call: call.request_transfer(DESTINATIONS, 1, "brief", NOW),
], ids=["answer", "open_session", "record_turn", "end", "record_outcome", "complete", "request_transfer"])
def test_a_queued_call_refuses_what_only_a_running_call_may_do(command):
    given(queued_call()).when(command).then_raises(CallStateError, "queued")


# -- carrier progress -------------------------------------------------------------------------------


def test_carrier_progress_is_recorded_and_a_duplicate_changes_nothing():
    """§9: duplicates and out-of-order callbacks never move the call."""
    call = dialed_call()
    given(call).when(lambda c: c.carrier_progressed("in_progress", NOW)).then(
        Call.CarrierProgressed, returns=True, carrier_status="in_progress")
    given(call).when(lambda c: c.carrier_progressed("in_progress", later(1))).then(returns=False)


def test_progress_after_the_carriers_final_status_is_late_and_ignored():
    call = answered_call()
    call.carrier_ended("completed", 42, NOW)
    given(call).when(lambda c: c.carrier_progressed("ringing", later(1))).then(
        returns=False, carrier_status="completed")


def test_the_carriers_final_status_is_recorded_once_with_a_non_negative_duration():
    call = answered_call()
    given(call).when(lambda c: c.carrier_ended("completed", -5, NOW)).then(
        Call.CarrierEnded, returns=True, carrier_status="completed", carrier_duration_seconds=0)
    given(call).when(lambda c: c.carrier_ended("failed", 30, later(1))).then(
        returns=False, carrier_status="completed", carrier_duration_seconds=0)


# -- answering-machine rule ---------------------------------------------------------------------------


@pytest.mark.parametrize("answered_by", ["human", "unknown"])
def test_a_human_or_unknown_answer_continues_the_call(answered_by):
    """§7 answering-machine rule: ``human`` and ``unknown`` continue."""
    given(dialed_call()).when(lambda call: call.answer(answered_by, NOW)).then(
        Call.Answered, returns=True, answered_by=answered_by, status=IN_PROGRESS, awaiting_verdict=False)


@pytest.mark.parametrize("answered_by", ["machine_start", "machine_end_beep", "machine_end_silence",
                                         "machine_end_other", "fax"])
def test_a_machine_or_fax_answer_abandons_the_call(answered_by):
    """§7 answering-machine rule: ``machine_start``, ``machine_end_*`` and ``fax`` abandon."""
    assert answered_by in MACHINE_ANSWERS
    given(dialed_call()).when(lambda call: call.answer(answered_by, NOW)).then(
        Call.Answered, returns=False, answered_by=answered_by)


@pytest.mark.parametrize(("answered_by", "code"), [("fax", "fax_detected"), ("machine_start", "machine_detected"),
                                                    ("machine_end_beep", "machine_detected")])
def test_an_abandoned_call_fails_with_the_detection_code(answered_by, code):
    call = dialed_call()
    assert call.answer(answered_by, NOW) is False
    given(call).when(lambda c: c.fail(abandon_code(answered_by), "abandoned", later(1))).then(
        Call.Failed, status=FAILED, error_code=code, outcome=None)


# -- voice session ------------------------------------------------------------------------------------


def test_the_first_voice_socket_opens_the_session():
    given(answered_call()).when(lambda call: call.open_session("stream", "nonce-1", NOW)).then(
        Call.VoiceSessionOpened, session_state="open", session_transport="stream", session_nonce="nonce-1",
        session_opened_at=NOW)


def test_a_second_voice_socket_is_refused():
    """§8: the per-call token is single use."""
    given(talking_call()).when(lambda call: call.open_session("relay", "nonce-2", NOW)).then_raises(
        CallStateError, "already opened")


def test_closing_the_session_makes_the_call_ready_to_settle_and_a_second_close_changes_nothing():
    call = talking_call()
    given(call).when(lambda c: c.close_session("hangup", NOW)).then(
        Call.VoiceSessionClosed, session_state="closed", session_closed_at=NOW, ready_to_settle=True)
    given(call).when(lambda c: c.close_session("hangup", later(1))).then(session_closed_at=NOW)


def test_closing_a_session_never_opened_changes_nothing():
    given(answered_call()).when(lambda call: call.close_session("hangup", NOW)).then(session_state="none")


# -- conversation, end, outcome, completion -----------------------------------------------------------


def test_turns_are_appended_in_order_and_form_the_transcript():
    call = given(answered_call()).when(lambda c: c.record_turn(AGENT, "Still on?", NOW)).then(Call.TurnRecorded)
    given(call).when(lambda c: c.record_turn(CALLEE, "Yes.", NOW)).then(
        Call.TurnRecorded, turns=[{"speaker": AGENT, "text": "Still on?"}, {"speaker": CALLEE, "text": "Yes."}],
        transcript="agent: Still on?\ncallee: Yes.")


def test_ending_records_the_duration_never_negative():
    given(talking_call()).when(lambda call: call.end(-3, NOW)).then(
        Call.Ended, duration_seconds=0, ended_at=NOW, status=IN_PROGRESS)


def test_an_outcome_is_recorded_with_its_confidence_and_usage():
    usage = {"input_tokens": 12, "output_tokens": 3}
    given(talking_call()).when(lambda call: call.record_outcome(OUTCOME, 1.0, usage, NOW)).then(
        Call.OutcomeExtracted, outcome=OUTCOME, confidence=1.0, usage=usage)


@pytest.mark.parametrize("confidence", [-0.01, 1.01])
def test_a_confidence_outside_zero_to_one_is_refused(confidence):
    """§7: the extractor's confidence lies in [0, 1]."""
    given(talking_call()).when(lambda call: call.record_outcome(OUTCOME, confidence, {}, NOW)).then_raises(
        CallStateError, r"\[0, 1\]")


def test_completing_adds_the_costs_and_keeps_the_end_time():
    """§7: costs are Decimal; the total is voice plus extraction."""
    given(settled_call()).when(lambda call: call.complete(Decimal("0.0100"), Decimal("0.0020"), later(30))).then(
        Call.Completed, status=COMPLETED, is_terminal=True, cost_voice=Decimal("0.0100"),
        cost_extraction=Decimal("0.0020"), cost_total=Decimal("0.0120"), ended_at=later(20))


def test_a_call_without_an_outcome_does_not_complete():
    given(talking_call()).when(lambda call: call.complete(NO_COST, NO_COST, NOW)).then_raises(
        CallStateError, "only with an outcome")


def test_a_simulated_call_runs_from_start_to_completion():
    call = given(queued_call()).when(lambda c: c.start(NOW)).then(Call.Started, Call.Leased)
    call = given(call).when(lambda c: c.record_turn(AGENT, "Confirmed?", NOW)).then(Call.TurnRecorded)
    call = given(call).when(lambda c: c.end(4, later(4))).then(Call.Ended)
    call = given(call).when(lambda c: c.record_outcome(OUTCOME, 0.8, {}, later(5))).then(Call.OutcomeExtracted)
    given(call).when(lambda c: c.complete(NO_COST, Decimal("0.0005"), later(5))).then(
        Call.Completed, status=COMPLETED, ended_at=later(4), cost_total=Decimal("0.0005"))


# -- failing and cancelling ---------------------------------------------------------------------------


@pytest.mark.parametrize("state", sorted(NON_TERMINAL_CALLS))
def test_any_non_terminal_call_can_fail(state):
    """§7: a watchdog fails any call stuck past its maximum duration."""
    given(NON_TERMINAL_CALLS[state]()).when(lambda call: call.fail("timeout", "stuck", later(900))).then(
        Call.Failed, status=FAILED, is_terminal=True, error_code="timeout", error_message="stuck", outcome=None)


def test_a_failure_keeps_the_costs_already_spent_and_an_earlier_end_time():
    given(settled_call()).when(lambda call: call.fail("extraction_failed", "x" * 600, later(30),
                                                    cost_voice=Decimal("0.0100"))).then(
        Call.Failed, outcome=None, cost_voice=Decimal("0.0100"), cost_total=Decimal("0.0100"), ended_at=later(20),
        error_message="x" * 500)


def test_cancelling_a_queued_call_fails_it_as_cancelled():
    """Cancellation is a failure with ``error_code=cancelled`` (application/calling/lifecycle.py)."""
    given(queued_call()).when(lambda call: call.fail("cancelled", "cancelled by key_test", NOW)).then(
        Call.Failed, status=FAILED, error_code="cancelled", ended_at=NOW)


# -- terminal calls ------------------------------------------------------------------------------------


REFUSED_WHEN_TERMINAL = {
    "start": lambda call: call.start(NOW),
    "request_dial": lambda call: call.request_dial(amd=True, now=NOW),
    "dialed": lambda call: call.dialed(CARRIER_SID, NOW),
    "inbound_answered": lambda call: call.inbound_answered(CARRIER_SID, NOW),
    "answer": lambda call: call.answer("human", NOW),
    "open_session": lambda call: call.open_session("relay", "nonce-9", NOW),
    "request_transfer": lambda call: call.request_transfer(DESTINATIONS, 2, "brief", NOW),
    "record_turn": lambda call: call.record_turn(AGENT, "Hello?", NOW),
    "end": lambda call: call.end(5, NOW),
    "record_outcome": lambda call: call.record_outcome(OUTCOME, 0.5, {}, NOW),
    "complete": lambda call: call.complete(NO_COST, NO_COST, NOW),
    "fail": lambda call: call.fail("timeout", "late", NOW),
}

IGNORED_WHEN_TERMINAL = {
    "carrier_progressed": lambda call: call.carrier_progressed("ringing", later(60)),
    "carrier_ended": lambda call: call.carrier_ended("busy", 0, later(60)),
    "transfer_leg_ended": lambda call: call.transfer_leg_ended(0, "completed", later(60)),
}


@pytest.mark.parametrize("command", sorted(REFUSED_WHEN_TERMINAL))
@pytest.mark.parametrize("state", sorted(TERMINAL_CALLS))
def test_a_terminal_call_refuses_every_command(state, command):
    """§7: ``completed`` and ``failed`` are terminal; a terminal call never moves again."""
    call = TERMINAL_CALLS[state]()
    status = call.status
    given(call).when(REFUSED_WHEN_TERMINAL[command]).then_raises(CallStateError)
    assert call.status == status


@pytest.mark.parametrize("fact", sorted(IGNORED_WHEN_TERMINAL))
@pytest.mark.parametrize("state", sorted(TERMINAL_CALLS))
def test_late_carrier_facts_about_a_terminal_call_change_nothing(state, fact):
    """§9: duplicates and out-of-order callbacks never move a terminal call."""
    call = TERMINAL_CALLS[state]()
    before = dict(vars(call))
    given(call).when(IGNORED_WHEN_TERMINAL[fact]).then(returns=False)
    assert {k: v for k, v in vars(call).items() if k != "_pending_events"} == {
        k: v for k, v in before.items() if k != "_pending_events"}


def test_a_late_transfer_leg_of_a_call_that_failed_mid_transfer_changes_nothing():
    call = transferring_call()
    call.fail("timeout", "stuck", later(900))
    given(call).when(lambda c: c.transfer_leg_ended(0, "completed", later(901))).then(
        returns=False, status=FAILED)
    assert call.transfer is not None and call.transfer.as_dict()["legs"] == []


def test_a_recording_may_attach_to_a_terminal_call_without_moving_it():
    url = "https://api.twilio.com/2010-04-01/Accounts/AC1/Recordings/RE1.mp3"
    given(completed_call()).when(lambda call: call.attach_recording(url, "RE1", later(60))).then(
        Call.RecordingAttached, returns=True, recording_url=url, recording_sid="RE1", status=COMPLETED)


def test_only_the_first_recording_is_kept():
    call = completed_call()
    call.attach_recording("https://example.com/first.mp3", "RE1", later(60))
    given(call).when(lambda c: c.attach_recording("https://example.com/second.mp3", "RE2", later(61))).then(
        returns=False, recording_url="https://example.com/first.mp3", recording_sid="RE1")


# -- transfers -------------------------------------------------------------------------------------------


def test_a_transfer_request_keeps_at_most_five_destinations_and_five_attempts_and_a_short_brief():
    six = [{"label": f"L{i}", "e164": f"+44207946000{i}"} for i in range(6)]
    call = given(talking_call()).when(lambda c: c.request_transfer(six, 9, "b" * 600, NOW)).then(
        Call.TransferRequested, transfer_pending=True, ready_to_settle=False)
    assert call.transfer.as_dict() == {"destinations": six[:5], "max_attempts": 5, "brief": "b" * 500, "legs": [],
                             "status": "requested"}


def test_at_least_one_attempt_is_made():
    call = given(talking_call()).when(lambda c: c.request_transfer(DESTINATIONS, 0, "brief", NOW)).then(
        Call.TransferRequested)
    assert call.transfer is not None and call.transfer.as_dict()["max_attempts"] == 1


def test_a_transfer_without_destinations_is_refused():
    given(talking_call()).when(lambda call: call.request_transfer([], 3, "brief", NOW)).then_raises(
        CallStateError, "no transfer destinations")


def test_a_call_is_transferred_at_most_once():
    given(transferring_call()).when(lambda call: call.request_transfer(DESTINATIONS, 3, "again", NOW)).then_raises(
        CallStateError, "already transferred")


def test_no_destination_is_next_without_a_pending_transfer():
    assert talking_call().next_transfer_destination() is None


def test_the_next_destination_is_tried_after_a_failed_leg():
    call = transferring_call(max_attempts=3)
    assert call.next_transfer_destination() == 0
    given(call).when(lambda c: c.transfer_leg_ended(0, "no_answer", NOW)).then(
        Call.TransferLegEnded, returns=True, transfer_pending=True)
    assert call.next_transfer_destination() == 1


def test_an_answered_leg_completes_the_transfer():
    call = transferring_call(max_attempts=3)
    call.transfer_leg_ended(0, "busy", NOW)
    given(call).when(lambda c: c.transfer_leg_ended(1, "completed", later(1))).then(
        Call.TransferLegEnded, returns=True, transfer_pending=False)
    assert call.transfer is not None and call.transfer.as_dict()["status"] == "completed"
    assert call.transfer.as_dict()["legs"] == [{"index": 0, "dial_status": "busy"}, {"index": 1, "dial_status": "completed"}]
    assert call.next_transfer_destination() is None


@pytest.mark.parametrize(("max_attempts", "destinations", "legs"), [(2, DESTINATIONS, 2), (5, DESTINATIONS[:1], 1)])
def test_the_transfer_fails_once_the_attempts_or_the_destinations_are_spent(max_attempts, destinations, legs):
    call = transferring_call(max_attempts=max_attempts, destinations=destinations)
    for index in range(legs - 1):
        call.transfer_leg_ended(index, "no_answer", NOW)
    given(call).when(lambda c: c.transfer_leg_ended(legs - 1, "failed", later(1))).then(
        Call.TransferLegEnded, returns=True, transfer_pending=False)
    assert call.transfer is not None and call.transfer.as_dict()["status"] == "failed"
    assert call.next_transfer_destination() is None


def test_a_duplicate_or_out_of_order_leg_result_changes_nothing():
    call = transferring_call(max_attempts=3)
    call.transfer_leg_ended(0, "no_answer", NOW)
    given(call).when(lambda c: c.transfer_leg_ended(0, "completed", later(1))).then(returns=False)
    given(call).when(lambda c: c.transfer_leg_ended(2, "completed", later(1))).then(returns=False)
    assert call.transfer is not None and call.transfer.as_dict()["status"] == "requested"


def test_a_leg_result_without_a_transfer_changes_nothing():
    given(talking_call()).when(lambda call: call.transfer_leg_ended(0, "completed", NOW)).then(returns=False)


def test_a_call_settles_only_after_its_transfer_is_over():
    call = transferring_call(max_attempts=1)
    call.close_session("transferred", NOW)
    assert call.ready_to_settle is False
    given(call).when(lambda c: c.transfer_leg_ended(0, "completed", later(1))).then(
        Call.TransferLegEnded, ready_to_settle=True)
