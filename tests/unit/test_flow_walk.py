"""Walking a published flow (issue 15 item 4): the next step after each kind of step, branch
conditions on the answers so far, the scripted agent's walk, and how a keypad entry ends."""

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


@pytest.mark.parametrize("spec,keys,entry", [
    ({"ending_mode": "fixed_length", "length": 4}, "482", None),
    ({"ending_mode": "fixed_length", "length": 4}, "4821", "4821"),
    ({"ending_mode": "terminator", "terminators": ["#"]}, "12", None),
    ({"ending_mode": "terminator", "terminators": ["#"]}, "12#", "12"),
    ({"ending_mode": "terminator", "terminators": ["*", "#"]}, "9*", "9"),
    ({"ending_mode": "timeout", "terminators": ["#"]}, "5#", "5"),
    ({"ending_mode": "timeout", "terminators": ["#"]}, "1" * 32, "1" * 32),
])
def test_a_keypad_entry_ends_at_a_terminator_or_its_length(spec, keys, entry):
    assert keypad_entry(spec, keys) == entry
