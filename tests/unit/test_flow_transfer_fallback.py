"""A flow's transfer step nobody answered (SPEC.md Flow: graph-based conversation logic, compiled and
frozen at publish; docs/flows.md): with one outgoing edge, the live call is not settled when the
transfer fails but goes back to the agent at that edge's step, in a second voice session, with the
answers the walk had; without one, the failed transfer ends the call as before."""

from __future__ import annotations

from typing import Any

from domain.calls.call import Call
from domain.calls.call_rules import CallStateError
from domain.flows.compiler import compile_flow
from tests.support.aggregates import given
from tests.support.calls import DESTINATIONS, later, talking_call

DESK = [DESTINATIONS[0]]


def flow_payload(fallback: bool) -> dict[str, Any]:
    """What a call keeps of a published flow (``Call.flow``): ask, transfer, and (``fallback``) a
    question taking a message when nobody answered."""
    graph = {
        "start": "ask",
        "nodes": [{"id": "ask", "type": "question", "text": "Is it urgent?", "field": "urgent", "field_type": "boolean"},
                  {"id": "desk", "type": "transfer", "destination": "Front desk"},
                  {"id": "note", "type": "question", "text": "What is your message?", "field": "message",
                   "field_type": "string"},
                  {"id": "bye", "type": "end"}],
        "edges": [{"from": "ask", "to": "desk"}, {"from": "note", "to": "bye"}],
    }
    if fallback:
        graph["edges"].insert(1, {"from": "desk", "to": "note"})
    else:
        graph["nodes"] = graph["nodes"][:2]
        graph["edges"] = graph["edges"][:1]
    artifact, problems = compile_flow("Messages", graph)
    assert problems == [] and artifact is not None
    return {"flow_id": "flw_test", "version": 1, "graph": artifact.graph, "system_prompt": artifact.system_prompt,
            "tools": artifact.tools}


def failed_flow_transfer(fallback: bool = True) -> Call:
    """A live call whose flow's transfer step dialled the desk, which did not answer."""
    call = talking_call(flow=flow_payload(fallback))
    call.request_transfer(DESK, 1, "From step desk of the call flow.", later(14), step="desk",
                          answers={"urgent": True})
    call.close_session("agent_ended", later(15), "nonce-1")
    call.transfer_leg_ended(0, "no_answer", later(16))
    return call


def test_a_failed_transfer_with_an_edge_goes_back_to_the_agent_at_its_step_instead_of_settling():
    """SPEC.md Flow: the transfer's one outgoing edge is taken when no destination answered."""
    call = failed_flow_transfer()
    assert call.transfer is not None and call.transfer.as_dict()["status"] == "failed"
    assert call.transfer_fallback == {"step": "note", "answers": {"urgent": True}}
    assert (call.resuming, call.may_open_session, call.ready_to_settle) == (True, True, False)

    call = given(call).when(lambda c: c.open_session("relay", "nonce-2", later(17))).then(
        Call.VoiceSessionOpened, session_state="open", resuming=False, ready_to_settle=False,
        session_opened_at=later(11))  # the conversation's duration runs from the first session
    assert call.transfer is not None and call.transfer.as_dict()["resumed"] is True
    given(call).when(lambda c: c.close_session("agent_ended", later(30), "nonce-2")).then(
        Call.VoiceSessionClosed, ready_to_settle=True)


def test_a_failed_transfer_without_an_edge_ends_the_call_as_before():
    call = failed_flow_transfer(fallback=False)
    assert (call.transfer_fallback, call.resuming, call.ready_to_settle) == (None, False, True)
    given(call).when(lambda c: c.open_session("relay", "nonce-2", later(17))).then_raises(
        CallStateError, "already opened")


def test_the_resumed_session_needs_a_new_token_and_the_first_sessions_late_close_leaves_it_open():
    call = failed_flow_transfer()
    given(call).when(lambda c: c.open_session("relay", "nonce-1", later(17))).then_raises(CallStateError, "used")
    call.open_session("relay", "nonce-2", later(17))
    given(call).when(lambda c: c.close_session("carrier_closed", later(18), "nonce-1")).then(session_state="open")
    given(call).when(lambda c: c.open_session("relay", "nonce-3", later(19))).then_raises(
        CallStateError, "already opened")


def test_the_flow_may_transfer_again_once_back_with_the_agent():
    call = failed_flow_transfer()
    given(call).when(lambda c: c.request_transfer(DESK, 1, "again", later(17))).then_raises(
        CallStateError, "already transferred")  # not before the agent is back
    call.open_session("relay", "nonce-2", later(17))
    given(call).when(lambda c: c.request_transfer(DESK, 1, "again", later(18), step="desk")).then(
        Call.TransferRequested, transfer_pending=True)


def test_a_caller_who_hangs_up_before_the_agent_is_back_settles_the_call():
    call = failed_flow_transfer()
    given(call).when(lambda c: c.carrier_ended("completed", 40, later(20))).then(
        Call.CarrierEnded, resuming=False, ready_to_settle=True)


def test_a_transfer_that_connects_settles_the_call_whatever_its_edge():
    call = talking_call(flow=flow_payload(fallback=True))
    call.request_transfer(DESK, 1, "brief", later(14), step="desk", answers={})
    call.close_session("agent_ended", later(15))
    given(call).when(lambda c: c.transfer_leg_ended(0, "completed", later(16))).then(
        Call.TransferLegEnded, transfer_fallback=None, resuming=False, ready_to_settle=True)


def test_keypad_digits_stay_out_of_the_transfer_request_and_come_back_from_their_entries():
    """SPEC.md Flow: keypad digits are masked by default. The transfer request (an event the call's
    history shows) never holds them; the step the call goes on at still has the field's value."""
    schema = {"urgent": {"type": "boolean"}, "message": {"type": "string", "optional": True},
              "pin": {"type": "string", "optional": True}}
    call = talking_call(flow=flow_payload(fallback=True), outcome_schema=schema)
    call.record_keypad_entry("pin", "4821", later(13))
    call.request_transfer(DESK, 1, "brief", later(14), step="desk", answers={"urgent": True, "pin": "4821"})
    requested = call.collect_events()[-1]
    assert isinstance(requested, Call.TransferRequested) and requested.answers == {"urgent": True}
    call.close_session("agent_ended", later(15), "nonce-1")
    call.transfer_leg_ended(0, "no_answer", later(16))
    assert call.transfer_fallback == {"step": "note", "answers": {"urgent": True, "pin": "4821"}}
