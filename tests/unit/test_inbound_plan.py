"""Where a number sends an inbound call (docs/numbers.md "Inbound calls"): hours first, then routes
by caller, then the keypad menu, then voicemail or the agent; and the commands that record it on
the ``Call`` (routing once, voicemail, the agent's tokens) with what makes the call ready to settle."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import pytest

from adapters.anthropic.prompts import agent_system_prompt
from application.calling.runner import brief_for
from domain.calls.call import Call
from domain.calls.call_rules import CallStateError
from domain.calls.outcome_schema import OutcomeSchema
from domain.numbers import inbound_plan as plan
from tests.support.aggregates import given
from tests.support.calls import CARRIER_SID, later, live_call

DESK = {"label": "Desk", "e164": "+14155550123"}
SALES = {"label": "Sales", "e164": "+14155550124"}
WEEKDAYS = {day: [["09:00", "17:00"]] for day in ("mon", "tue", "wed", "thu", "fri")}
# 2026-11-25 is a Wednesday: 15:00 UTC is 10:00 in New York (open), 23:00 UTC is 18:00 (closed).
OPEN_AT = datetime(2026, 11, 25, 15, 0, tzinfo=timezone.utc)
CLOSED_AT = datetime(2026, 11, 25, 23, 0, tzinfo=timezone.utc)


@dataclass
class Line:
    hours_json: dict[str, list[list[str]]] | None = field(default_factory=lambda: dict(WEEKDAYS))
    timezone: str | None = "America/New_York"
    overflow_action: str = "voicemail"
    routes: list[dict[str, Any]] = field(default_factory=list)
    voicemail_mode: str = "overflow_only"
    transfer_destinations: list[dict[str, str]] = field(default_factory=lambda: [DESK, SALES])


def test_an_open_number_with_no_routes_gives_the_call_to_the_agent():
    assert plan.on_answer(Line(), caller="+447700900123", at=OPEN_AT) == plan.Route(action="agent", reason="open")


def test_always_open_hours_never_overflow():
    assert plan.on_answer(Line(hours_json=None), caller="+1", at=CLOSED_AT).action == "agent"


@pytest.mark.parametrize("action", ["voicemail", "message", "hangup"])
def test_a_closed_number_gives_the_call_its_overflow_action(action):
    assert plan.on_answer(Line(overflow_action=action), caller="+1", at=CLOSED_AT) == plan.Route(
        action=action, reason="closed")


def test_closed_transfer_goes_to_the_first_destination_only():
    route = plan.on_answer(Line(overflow_action="transfer"), caller="+1", at=CLOSED_AT)
    assert route == plan.Route(action="transfer", reason="closed", destination="Desk", destinations=(DESK,))


def test_hours_come_before_every_route():
    line = Line(routes=[{"match": {"caller_prefix": "+44"}, "action": "agent"}], overflow_action="hangup")
    assert plan.on_answer(line, caller="+447700900123", at=CLOSED_AT).action == "hangup"


def test_the_first_caller_prefix_route_that_matches_wins_and_names_its_destination():
    line = Line(routes=[{"match": {"caller_prefix": "+4420"}, "action": "voicemail"},
                        {"match": {"caller_prefix": "+44"}, "action": "transfer", "destination": "Sales"},
                        {"match": {"keypad": "1"}, "action": "agent"}])
    assert plan.on_answer(line, caller="+447700900123", at=OPEN_AT) == plan.Route(
        action="transfer", reason="caller_prefix", destination="Sales", destinations=(SALES,))
    assert plan.on_answer(line, caller="+442071838750", at=OPEN_AT).action == "voicemail"


def test_keypad_routes_ask_for_a_key_and_the_key_decides():
    line = Line(routes=[{"match": {"keypad": "1"}, "action": "voicemail"},
                        {"match": {"keypad": "2"}, "action": "transfer", "destination": "Desk"}])
    assert plan.on_answer(line, caller="+447700900123", at=OPEN_AT) is plan.ASK_KEYPAD
    assert plan.on_keypad(line, "2") == plan.Route(action="transfer", reason="keypad", destination="Desk",
                                                   destinations=(DESK,))
    assert plan.on_keypad(line, "1").action == "voicemail"
    assert plan.on_keypad(line, "9") == plan.Route(action="agent", reason="open")  # no route: the default
    assert plan.on_keypad(line, "") == plan.Route(action="agent", reason="open")  # no key in time


def test_voicemail_always_takes_what_no_route_took():
    line = Line(voicemail_mode="always", routes=[{"match": {"caller_prefix": "+1"}, "action": "agent"}])
    assert plan.on_answer(line, caller="+447700900123", at=OPEN_AT) == plan.Route(action="voicemail",
                                                                                   reason="voicemail_always")
    assert plan.on_answer(line, caller="+14155550999", at=OPEN_AT).action == "agent"


def test_a_route_whose_destination_was_removed_falls_back_to_the_agent():
    line = Line(routes=[{"match": {"caller_prefix": "+44"}, "action": "transfer", "destination": "Gone"}])
    assert plan.on_answer(line, caller="+447700900123", at=OPEN_AT) == plan.Route(action="agent",
                                                                                   reason="caller_prefix")


def test_the_routing_outcome_follows_its_own_schema():
    schema = OutcomeSchema.compile(plan.ROUTED_SCHEMA, limits=False)
    transfer = {"action": "transfer", "reason": "keypad", "destination": "Desk"}
    assert schema.validate(plan.routed_outcome(transfer, True)) == {
        "route": "transfer", "reason": "keypad", "destination": "Desk", "transferred": True}
    hangup = {"action": "hangup", "reason": "closed", "destination": None}
    assert schema.validate(plan.routed_outcome(hangup, None)) == {
        "route": "hangup", "reason": "closed", "destination": None, "transferred": None}


# -- on the Call ------------------------------------------------------------------------------------


def inbound_call() -> Call:
    call = live_call(direction="inbound", consent_type="inbound")
    call.inbound_answered(CARRIER_SID, later(1))
    return call


def routed(action: str, **extra: Any) -> Call:
    call = inbound_call()
    call.route_inbound(action=action, reason="closed", destination=None, persona="Warm", record=True,
                       now=later(2), **extra)
    call.collect_events()
    return call


def test_a_call_is_routed_once_with_its_persona_objective_and_schema():
    schema = OutcomeSchema.compile({"message": {"type": "string"}}, limits=False)
    call = given(inbound_call()).when(lambda c: c.route_inbound(
        action="voicemail", reason="closed", destination=None, persona="Warm", record=True, now=later(2),
        objective="Take a message", outcome_schema=schema)).then(
        Call.InboundRouted, returns=True, persona="Warm", record_inbound=True, objective="Take a message",
        routing={"action": "voicemail", "reason": "closed", "destination": None})
    assert call.outcome_schema == schema
    given(call).when(lambda c: c.route_inbound(action="agent", reason="open", destination=None, persona=None,
                                               record=False, now=later(3))).then(returns=False)


def test_an_outbound_call_is_never_routed():
    call = live_call()
    call.request_dial(amd=False, now=later(1))
    given(call).when(lambda c: c.route_inbound(action="agent", reason="open", destination=None, persona=None,
                                               record=False, now=later(2))).then_raises(CallStateError)


def test_a_voicemail_is_ready_to_settle_once_its_text_arrived_and_the_text_is_the_callers_turn():
    call = routed("voicemail")
    given(call).when(lambda c: c.voicemail_recorded("https://api.twilio.com/RE1", "RE1", 7, later(9))).then(
        Call.VoicemailRecorded, returns=True, ready_to_settle=False)
    given(call).when(lambda c: c.carrier_final("completed", 12, later(10))).then(Call.CarrierEnded)
    assert (call.status, call.ready_to_settle) == ("in_progress", False)
    given(call).when(lambda c: c.voicemail_transcribed("  Call me   back ", later(11))).then(
        Call.VoicemailTranscribed, returns=True, ready_to_settle=True, transcript="callee: Call me back")
    given(call).when(lambda c: c.voicemail_transcribed("again", later(12))).then(returns=False)


def test_a_voicemail_call_that_ends_with_no_message_fails_as_hung_up():
    given(routed("voicemail")).when(lambda c: c.carrier_final("completed", 4, later(10))).then(
        Call.CarrierEnded, Call.Failed, status="failed", error_code="hung_up")


@pytest.mark.parametrize("action", ["message", "hangup"])
def test_a_call_given_its_closing_instructions_is_ready_to_settle_at_once_and_the_carrier_end_fails_nothing(action):
    call = routed(action)
    assert call.ready_to_settle
    given(call).when(lambda c: c.carrier_final("completed", 3, later(10))).then(
        Call.CarrierEnded, status="in_progress", ready_to_settle=True)


def test_a_transferred_call_is_ready_to_settle_once_its_leg_ended():
    call = routed("transfer")
    assert not call.ready_to_settle  # the destination is about to be dialled
    call.request_transfer([DESK], 1, "", later(3))
    assert not call.ready_to_settle
    call.transfer_leg_ended(0, "completed", later(20))
    assert (call.status, call.ready_to_settle) == ("in_progress", True)


def test_the_agents_tokens_add_up_and_nothing_is_recorded_for_none():
    call = inbound_call()
    call.collect_events()
    given(call).when(lambda c: c.record_agent_usage({"input_tokens": 0}, later(2))).then()
    given(call).when(lambda c: c.record_agent_usage({"input_tokens": 100, "output_tokens": 20}, later(3))).then(
        Call.AgentUsageRecorded, agent_usage={"input_tokens": 100, "output_tokens": 20})
    given(call).when(lambda c: c.record_agent_usage({"input_tokens": 5}, later(4))).then(
        Call.AgentUsageRecorded, agent_usage={"input_tokens": 105, "output_tokens": 20})


def test_an_inbound_calls_agent_is_told_the_call_came_in_and_takes_the_numbers_persona():
    call = routed("agent")
    prompt = agent_system_prompt(brief_for(call))
    assert "live inbound phone call" in prompt and "Your persona:\nWarm" in prompt
    outbound = agent_system_prompt(brief_for(live_call()))
    assert "live outbound phone call" in outbound and "persona" not in outbound
