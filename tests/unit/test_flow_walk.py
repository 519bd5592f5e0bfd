"""Walking a published flow (issue 15 item 4): the next step after each kind of step, branch
conditions on the answers so far, the scripted agent's walk (and where it goes on after a transfer
nobody answered), and how a keypad entry ends."""

from __future__ import annotations

import pytest

from adapters.scripted.flow_session import FlowSession
from application.calling.conversation import keypad_entry
from application.calling.ports import CallBrief
from domain.calls.outcome_schema import OutcomeSchema
from domain.flows import walk
from domain.flows.compiler import compile_flow

GRAPH = {
    "start": "hi",
    "nodes": [{"id": "hi", "type": "message", "text": "Hello."},
              {"id": "age", "type": "question", "text": "How old are you?", "field": "age", "field_type": "integer"},
              {"id": "route", "type": "branch"},
              {"id": "adult", "type": "end", "text": "Welcome."},
              {"id": "desk", "type": "transfer", "destination": "Desk"}],
    "edges": [{"from": "hi", "to": "age"}, {"from": "age", "to": "route"},
              {"from": "route", "to": "desk", "when": {"field": "age", "op": "lt", "value": 18}},
              {"from": "route", "to": "adult"}],
}


def compiled():
    artifact, problems = compile_flow("Ages", GRAPH)
    assert problems == []
    return artifact


@pytest.mark.parametrize("condition,answers,holds", [
    ({"field": "a", "op": "eq", "value": True}, {"a": True}, True),
    ({"field": "a", "op": "ne", "value": True}, {"a": True}, False),
    ({"field": "a", "op": "gt", "value": 3}, {"a": 4}, True),
    ({"field": "a", "op": "lt", "value": 3}, {"a": 4}, False),
    ({"field": "a", "op": "lt", "value": "2026-12-01"}, {"a": "2026-11-30"}, True),
    ({"field": "a", "op": "present"}, {"a": 0}, True),
    ({"field": "a", "op": "absent"}, {}, True),
    ({"field": "a", "op": "eq", "value": 1}, {}, False),
    ({"field": "a", "op": "gt", "value": 3}, {"a": "x"}, False),  # incomparable: does not hold
])
def test_conditions(condition, answers, holds):
    assert walk.condition_holds(condition, answers) is holds


def test_a_branch_takes_its_first_holding_edge_else_its_default():
    graph = compiled().graph
    assert walk.next_step(graph, "hi", {}) == "age"
    assert walk.next_step(graph, "route", {"age": 12}) == "desk"
    assert walk.next_step(graph, "route", {"age": 40}) == "adult"
    assert walk.next_step(graph, "route", {}) == "adult"
    assert walk.next_step(graph, "adult", {}) is None


def test_the_scripted_agent_walks_the_flow_and_transfers_where_it_says():
    artifact = compiled()
    brief = CallBrief(objective=artifact.objective, schema=OutcomeSchema.compile(artifact.outcome_schema),
                      flow={"graph": artifact.graph})
    session = FlowSession(brief)
    first = session.respond(None)
    assert (first.say, first.end_call) == ("Hello. How old are you?", False)
    last = session.respond("I am twelve")
    assert (last.transfer, last.end_call, last.transfer_to, session.answers) == (True, True, "Desk", {"age": 12})
    assert (last.transfer_step, last.flow_answers) == ("desk", {"age": 12})  # where a failed transfer goes on from


FALLBACK = {
    "start": "age",
    "nodes": [{"id": "age", "type": "question", "text": "How old are you?", "field": "age", "field_type": "integer"},
              {"id": "desk", "type": "transfer", "destination": "Desk"},
              {"id": "note", "type": "question", "text": "Nobody is free. What is your message?", "field": "message",
               "field_type": "string"},
              {"id": "route", "type": "branch"},
              {"id": "minor", "type": "end", "text": "We will call your parents."},
              {"id": "bye", "type": "end", "text": "We will call you back."}],
    "edges": [{"from": "age", "to": "desk"}, {"from": "desk", "to": "note"}, {"from": "note", "to": "route"},
              {"from": "route", "to": "minor", "when": {"field": "age", "op": "lt", "value": 18}},
              {"from": "route", "to": "bye"}],
}


def test_the_scripted_agent_back_after_a_transfer_nobody_answered_goes_on_at_its_edge():
    """SPEC.md Flow: a transfer step's one outgoing edge is where the call goes when no destination
    answered. The agent's new session starts there (``CallBrief.flow_resume``), with the answers it
    had, and its branches still read them."""
    artifact, problems = compile_flow("Messages", FALLBACK)
    assert problems == [] and artifact is not None
    schema = OutcomeSchema.compile(artifact.outcome_schema)
    first = FlowSession(CallBrief(objective=artifact.objective, schema=schema, flow={"graph": artifact.graph}))
    first.respond(None)
    transferring = first.respond("I am twelve")
    assert (transferring.transfer, transferring.transfer_step, transferring.flow_answers) == (True, "desk", {"age": 12})

    back = FlowSession(CallBrief(objective=artifact.objective, schema=schema, flow={"graph": artifact.graph},
                                 flow_resume={"step": "note", "answers": {"age": 12}}))
    asked = back.respond(None)
    assert (asked.say, asked.end_call, asked.transfer) == ("Nobody is free. What is your message?", False, False)
    last = back.respond("Please call me back")
    assert (last.say, last.end_call, last.transfer) == ("We will call your parents.", True, False)
    assert back.answers == {"age": 12, "message": "Please call me back"}


def test_the_scripted_agents_transfer_leaves_keypad_digits_out_of_the_answers_it_hands_on():
    graph = {"start": "pin", "nodes": [
        {"id": "pin", "type": "question", "text": "Key in your PIN.", "field": "pin", "field_type": "string",
         "keypad": {"ending_mode": "fixed-length", "length": 4}},
        {"id": "desk", "type": "transfer", "destination": "Desk"}], "edges": [{"from": "pin", "to": "desk"}]}
    artifact, problems = compile_flow("Pins", graph)
    assert problems == [] and artifact is not None
    session = FlowSession(CallBrief(objective=artifact.objective, schema=OutcomeSchema.compile(artifact.outcome_schema),
                                    flow={"graph": artifact.graph}))
    session.respond(None)
    turn = session.respond("4821")
    assert (turn.transfer_step, turn.flow_answers, session.answers) == ("desk", {}, {"pin": "4821"})


@pytest.mark.parametrize("spec,keys,entry", [
    ({"ending_mode": "fixed-length", "length": 4}, "482", None),
    ({"ending_mode": "fixed-length", "length": 4}, "4821", "4821"),
    ({"ending_mode": "fixed_length", "length": 4}, "4821", "4821"),  # a version published before the spec's spelling
    ({"ending_mode": "terminator", "terminators": ["#"]}, "12", None),
    ({"ending_mode": "terminator", "terminators": ["#"]}, "12#", "12"),
    ({"ending_mode": "terminator", "terminators": ["*", "#"]}, "9*", "9"),
    ({"ending_mode": "timeout", "terminators": ["#"]}, "5#", "5"),
    ({"ending_mode": "timeout", "terminators": ["#"]}, "1" * 32, "1" * 32),
])
def test_a_keypad_entry_ends_at_a_terminator_or_its_length(spec, keys, entry):
    assert keypad_entry(spec, keys) == entry
