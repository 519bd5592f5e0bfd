"""The flow compiler (SPEC.md Flow: a graph of nodes compiled and frozen at publish): every refusal
with its code and the node it names, the artifact of a valid graph, required and optional fields,
keypad defaults (digits masked by default; the block beside the nodes recorded and told to the agent;
``fixed-length`` as the spec spells it, ``fixed_length`` an alias), a transfer's one edge (where a
call goes when no destination answered), clarify_on_uncertainty, and deterministic bytes."""

from __future__ import annotations

import copy
import json
import re
from datetime import datetime, timezone
from typing import Any

import pytest

from domain.calls.outcome_schema import compile_schema
from domain.flows import walk
from domain.flows.compiler import MAX_NODES, CompiledFlow, FlowProblem, compile_flow
from domain.flows.flow import Flow
from tests.support.aggregates import given


def order_check() -> dict[str, Any]:
    """The brief's example graph, fixed up: every message and question leads on."""
    return {
        "start": "greet",
        "nodes": [
            {"id": "greet", "type": "message", "text": "  Hello, this is Acme about your order.  "},
            {"id": "ask", "type": "question", "text": "Is your order confirmed?", "field": "confirmed",
             "field_type": "boolean"},
            {"id": "pin", "type": "question", "text": "Please enter your PIN.", "field": "pin", "field_type": "string",
             "keypad": {"ending_mode": "terminator", "terminators": ["#"], "length": 4, "timeout_s": 5}},
            {"id": "route", "type": "branch"},
            {"id": "desk", "type": "transfer", "destination": "Front desk"},
            {"id": "bye", "type": "end", "text": "Thank you, goodbye."},
        ],
        "edges": [
            {"from": "greet", "to": "ask"},
            {"from": "ask", "to": "pin"},
            {"from": "pin", "to": "route"},
            {"from": "route", "to": "desk", "when": {"field": "confirmed", "op": "eq", "value": False}},
            {"from": "route", "to": "bye"},
        ],
        "clarify_on_uncertainty": {},
    }


def chain(*nodes: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """Nodes joined in the order given, starting at the first."""
    edges = [{"from": a["id"], "to": b["id"]} for a, b in zip(nodes, nodes[1:])]
    return {"start": nodes[0]["id"], "nodes": list(nodes), "edges": edges, **extra}


def msg(node_id: str, text: str = "Hello.") -> dict[str, Any]:
    return {"id": node_id, "type": "message", "text": text}


def ask(node_id: str, field: str, field_type: str = "boolean", **extra: Any) -> dict[str, Any]:
    return {"id": node_id, "type": "question", "text": f"What is {field}?", "field": field, "field_type": field_type,
            **extra}


def end(node_id: str = "bye", **extra: Any) -> dict[str, Any]:
    return {"id": node_id, "type": "end", **extra}


def compiled(graph: Any, name: str = "Order check") -> CompiledFlow:
    flow, problems = compile_flow(name, graph)
    assert problems == [] and flow is not None
    return flow


def refused(graph: Any) -> list[tuple[str, str]]:
    flow, problems = compile_flow("Order check", graph)
    assert flow is None and problems
    return [(problem.node_id, problem.code) for problem in problems]


# --- the artifact --------------------------------------------------------------------------------


def test_the_example_graph_compiles_to_its_objective_schema_tools_and_prompt():
    flow = compiled(order_check())
    assert flow.objective == 'Follow the call flow "Order check" step by step and collect: confirmed, pin.'
    assert flow.outcome_schema == {
        "confirmed": {"type": "boolean", "optional": False, "description": "Is your order confirmed?"},
        "pin": {"type": "string", "optional": False, "description": "Please enter your PIN."},
    }
    assert compile_schema(flow.outcome_schema).to_definition() == flow.outcome_schema
    pin_keypad = {"ending_mode": "terminator", "terminators": ["#"], "length": 4, "timeout_s": 5, "masked": True}
    assert flow.tools == [
        {"name": "end_call"},
        {"name": "transfer_call", "destinations": ["Front desk"]},
        {"name": "collect_digits", "fields": {"pin": pin_keypad}},
    ]
    assert flow.system_prompt.split("\n") == [
        'You are running the call flow "Order check". Follow its steps in order, starting at step greet, '
        "and only move on to another step when the steps say so.",
        "",
        "Step greet (message): Say: Hello, this is Acme about your order.",
        "Then go to step ask.",
        "",
        "Step ask (question): Ask: Is your order confirmed? Record the answer as confirmed (boolean).",
        "Then go to step pin.",
        "",
        "Step pin (question): Ask: Please enter your PIN. Record the answer as pin (string).",
        "The caller enters it on the keypad (they finish by pressing #); never read the digits back.",
        "Then go to step route.",
        "",
        "Step route (branch): Choose the next step from the answers recorded so far.",
        "If confirmed is false go to step desk.",
        "Otherwise go to step bye.",
        "",
        "Step desk (transfer): Transfer the caller to Front desk with transfer_call.",
        "",
        "Step bye (end): Say: Thank you, goodbye. then end the call with end_call.",
        "",
        "If you did not understand an answer or are unsure of it, ask the caller to repeat it instead of guessing.",
    ]
    assert flow.to_json() == {"objective": flow.objective, "outcome_schema": flow.outcome_schema,
                              "tools": flow.tools, "system_prompt": flow.system_prompt}


def test_the_normalized_graph_lists_nodes_breadth_first_with_every_default_explicit():
    graph = order_check()
    graph["nodes"].reverse()  # the input's node order does not matter, the walk from start does
    flow = compiled(graph)
    assert [node["id"] for node in flow.graph["nodes"]] == ["greet", "ask", "pin", "route", "desk", "bye"]
    assert flow.graph["start"] == "greet" and flow.graph["clarify_on_uncertainty"] is True
    assert flow.graph["nodes"][0] == {"id": "greet", "type": "message", "text": "Hello, this is Acme about your order."}
    assert flow.graph["nodes"][1]["keypad"] is None
    assert flow.graph["nodes"][2]["keypad"]["masked"] is True
    assert flow.graph["edges"][3] == {"from": "route", "to": "desk",
                                      "when": {"field": "confirmed", "op": "eq", "value": False}}
    assert flow.graph["edges"][4] == {"from": "route", "to": "bye", "when": None}
    assert "graph" not in flow.to_json()
    assert json.loads(flow.canonical_bytes())["graph"] == flow.graph


def test_the_same_input_compiles_to_the_same_bytes_and_key_order_does_not_matter():
    first = compiled(order_check()).canonical_bytes()
    assert compiled(order_check()).canonical_bytes() == first
    shuffled = order_check()
    shuffled["nodes"] = [dict(reversed(list(node.items()))) for node in shuffled["nodes"]]
    shuffled = dict(reversed(list(shuffled.items())))
    assert compiled(shuffled).canonical_bytes() == first
    assert first == json.dumps(json.loads(first), sort_keys=True, separators=(",", ":"),
                               ensure_ascii=False).encode("utf-8")


def test_the_artifact_cannot_be_changed_through_to_json():
    flow = compiled(order_check())
    flow.to_json()["tools"].append({"name": "x"})
    assert len(flow.tools) == 3


def test_a_field_asked_on_only_one_branch_is_optional_and_one_every_path_asks_is_required():
    graph = {
        "start": "ask",
        "nodes": [ask("ask", "confirmed"), {"id": "route", "type": "branch"},
                  ask("why", "reason", "string"), ask("rate", "rating", "integer"),
                  ask("rate_again", "rating", "integer"), end()],
        "edges": [{"from": "ask", "to": "route"},
                  {"from": "route", "to": "why", "when": {"field": "confirmed", "op": "eq", "value": False}},
                  {"from": "route", "to": "rate"}, {"from": "why", "to": "rate_again"},
                  {"from": "rate", "to": "bye"}, {"from": "rate_again", "to": "bye"}],
    }
    schema = compiled(graph).outcome_schema
    assert list(schema) == ["confirmed", "reason", "rating"]  # breadth-first: route's edges in list order
    assert {name: spec["optional"] for name, spec in schema.items()} == {
        "confirmed": False, "reason": True, "rating": False}  # rating: asked on both paths, by two nodes


def test_a_loop_back_to_a_question_keeps_its_field_required():
    graph = {
        "start": "ask",
        "nodes": [ask("ask", "age", "integer"), {"id": "check", "type": "branch"}, end()],
        "edges": [{"from": "ask", "to": "check"},
                  {"from": "check", "to": "ask", "when": {"field": "age", "op": "lt", "value": 0}},
                  {"from": "check", "to": "bye"}],
    }
    flow = compiled(graph)
    assert flow.outcome_schema["age"]["optional"] is False
    assert "If age is less than 0 go to step ask." in flow.system_prompt.split("\n")


def test_keypad_questions_take_the_graphs_keypad_defaults_and_their_own_values_win():
    """SPEC.md Flow, "Optional blocks beside nodes": ``keypad``. The block beside the nodes gives
    every keypad question (a question with a ``keypad`` of its own) the keys it does not set; a key
    the question sets wins over the flow's default."""
    graph = chain(ask("pin", "pin", "string", keypad={}),
                  ask("code", "code", "integer", keypad={"ending_mode": "fixed-length", "length": 6, "masked": False}),
                  ask("ext", "ext", "integer", keypad={"timeout_s": 9}),
                  ask("name", "name", "string"),  # no keypad of its own: asked aloud, the flow's block aside
                  end(),
                  keypad={"ending_mode": "timeout", "timeout_s": 3, "terminators": ["*", "#"]})
    flow = compiled(graph)
    assert flow.tools[-1] == {"name": "collect_digits", "fields": {
        "code": {"ending_mode": "fixed-length", "terminators": ["*", "#"], "length": 6, "timeout_s": 3,
                 "masked": False},
        "ext": {"ending_mode": "timeout", "terminators": ["*", "#"], "length": None, "timeout_s": 9, "masked": True},
        "pin": {"ending_mode": "timeout", "terminators": ["*", "#"], "length": None, "timeout_s": 3, "masked": True},
    }}
    lines = flow.system_prompt.split("\n")
    assert "The caller enters it on the keypad (they finish by pausing 3 seconds); never read the digits back." in lines
    assert "The caller enters it on the keypad (exactly 6 digits); never read the digits back." in lines
    assert "The caller enters it on the keypad (they finish by pausing 9 seconds); never read the digits back." in lines
    assert flow.graph["nodes"][3]["keypad"] is None
    assert flow.graph["keypad"] == {"ending_mode": "timeout", "timeout_s": 3, "terminators": ["*", "#"]}


def test_fixed_length_is_spelled_as_the_spec_spells_it_and_fixed_length_is_an_alias():
    """SPEC.md Flow: ``keypad`` ``ending_mode`` modes are terminator, fixed-length, timeout. The spec's
    spelling compiles (it was refused as invalid_keypad); ``fixed_length`` still does, to the same
    bytes, and the artifact shows the spec's spelling whichever came in."""
    def graph(mode: str, **extra: Any) -> dict[str, Any]:
        return chain(ask("pin", "pin", "string", keypad={"ending_mode": mode, "length": 4}), end(), **extra)

    spec, alias = compiled(graph("fixed-length")), compiled(graph("fixed_length"))
    assert spec.canonical_bytes() == alias.canonical_bytes()
    assert spec.tools[-1]["fields"]["pin"]["ending_mode"] == "fixed-length"
    assert spec.graph["nodes"][0]["keypad"]["ending_mode"] == "fixed-length"
    assert "The caller enters it on the keypad (exactly 4 digits); never read the digits back." in (
        spec.system_prompt.split("\n"))
    beside = [compiled(graph("timeout", keypad={"ending_mode": mode})) for mode in ("fixed-length", "fixed_length")]
    assert beside[0].canonical_bytes() == beside[1].canonical_bytes()
    assert beside[0].graph["keypad"] == {"ending_mode": "fixed-length"}
    assert refused(chain(ask("a", "pin", "string", keypad={"ending_mode": "fixed length", "length": 4}), end())) == [
        ("a", "invalid_keypad")]


def test_a_keypad_block_beside_the_nodes_is_recorded_and_tells_the_agent_digits_may_be_collected():
    """SPEC.md Flow, "Optional blocks beside nodes": ``keypad`` collects touch-tone digits. The block
    changes the compiled artifact: the normalized graph records it and the system prompt tells the
    agent that digits may be collected on the keypad (how an entry ends by default, if it says);
    a flow without it compiles as before, with no ``keypad`` in its graph."""
    plain = chain(msg("hi"), ask("pin", "pin", "string", keypad={"ending_mode": "terminator"}), end())
    without = compiled(plain)
    with_block = compiled({**plain, "keypad": {"ending_mode": "fixed-length", "length": 6}})
    bare = compiled({**plain, "keypad": {}})

    assert with_block.canonical_bytes() != without.canonical_bytes()
    assert with_block.to_json() != without.to_json()  # the frozen columns differ too
    assert "keypad" not in without.graph and "keypad" not in without.system_prompt.split("\n\n")[-1]
    assert with_block.graph["keypad"] == {"ending_mode": "fixed-length", "length": 6}
    assert with_block.system_prompt.split("\n\n")[-1] == (
        "Answers may be collected as touch-tone digits the caller enters on the phone keypad, at the steps that "
        "say so; unless a step says otherwise, exactly 6 digits. Never read keyed digits back.")
    assert bare.graph["keypad"] == {} and bare.system_prompt.split("\n\n")[-1] == (
        "Answers may be collected as touch-tone digits the caller enters on the phone keypad, at the steps that "
        "say so. Never read keyed digits back.")
    pin = with_block.tools[-1]["fields"]["pin"]  # its own ending_mode wins; the length is the flow's
    assert (pin["ending_mode"], pin["length"]) == ("terminator", 6)
    clarified = compiled({**plain, "keypad": {}, "clarify_on_uncertainty": {}})
    assert clarified.system_prompt.split("\n\n")[-2:] == [bare.system_prompt.split("\n\n")[-1],
                                                           "If you did not understand an answer or are unsure of "
                                                           "it, ask the caller to repeat it instead of guessing."]


def test_a_flow_without_questions_collects_nothing_and_ends_without_words():
    flow = compiled(chain(msg("hi"), end(), clarify_on_uncertainty=None))
    assert flow.objective == 'Follow the call flow "Order check" step by step.'
    assert flow.outcome_schema == {} and flow.tools == [{"name": "end_call"}]
    assert flow.system_prompt.split("\n")[-1] == "Step bye (end): End the call with end_call."
    assert flow.graph["nodes"][1] == {"id": "bye", "type": "end", "text": None}
    assert flow.graph["clarify_on_uncertainty"] is False


def test_enum_questions_list_their_values_and_conditions_are_normalized_by_the_field_type():
    graph = {
        "start": "size",
        "nodes": [ask("size", "size", "enum", values=["small", "large"]), ask("when", "visit_at", "datetime"),
                  {"id": "route", "type": "branch"}, {"id": "desk", "type": "transfer", "destination": " Sales "},
                  {"id": "desk2", "type": "transfer", "destination": "Billing"}, end()],
        "edges": [{"from": "size", "to": "when"}, {"from": "when", "to": "route"},
                  {"from": "route", "to": "desk", "when": {"field": "visit_at", "op": "gt",
                                                           "value": "2026-03-08T15:30:00+01:00"}},
                  {"from": "route", "to": "desk2", "when": {"field": "size", "op": "ne", "value": "small"}},
                  {"from": "route", "to": "bye", "when": {"field": "visit_at", "op": "absent"}},
                  {"from": "route", "to": "bye"}],
    }
    flow = compiled(graph)
    assert flow.outcome_schema["size"] == {"type": "enum", "optional": False, "description": "What is size?",
                                           "values": ["small", "large"]}
    lines = flow.system_prompt.split("\n")
    assert 'Step size (question): Ask: What is size? Record the answer as size (enum; one of: "small", "large").' in lines
    assert lines[lines.index("Step route (branch): Choose the next step from the answers recorded so far.") + 1:][:4] == [
        'If visit_at is after "2026-03-08T14:30:00Z" go to step desk.',
        'If size is not "small" go to step desk2.',
        "If visit_at has not been answered go to step bye.",
        "Otherwise go to step bye.",
    ]
    assert flow.tools[1] == {"name": "transfer_call", "destinations": ["Billing", "Sales"]}


def test_a_question_text_is_cut_to_500_characters_for_the_field_description():
    flow = compiled(chain(ask("a", "notes", "string") | {"text": "x" * 1500}, end()))
    assert flow.outcome_schema["notes"]["description"] == "x" * 500
    assert flow.graph["nodes"][0]["text"] == "x" * 1500


# --- the refusals, one code at a time ------------------------------------------------------------


@pytest.mark.parametrize("graph,expected", [
    ([], [("#graph", "invalid_node")]),
    ({"start": "a", "nodes": []}, [("#graph", "invalid_node"), ("a", "start_missing")]),
    ({"start": "a", "nodes": [msg("a")], "edges": {}}, [("#graph", "invalid_node"), ("a", "next_edge"),
                                                                  ("a", "no_path_to_end")]),
    (chain(msg("a"), end()) | {"nodes": [msg("a"), end(), "bye"]}, [("#2", "invalid_node")]),
    (chain(msg("a"), end()) | {"nodes": [msg("a"), end(), {"id": "no spaces", "type": "end"}]}, [("#2", "invalid_node")]),
    (chain(msg("a"), end()) | {"nodes": [msg("a"), end(), {"id": 7, "type": "end"}]}, [("#2", "invalid_node")]),
    (chain(msg("a") | {"label": "x"}, end()), [("a", "invalid_node")]),
    (chain(msg("a"), {"id": "t", "type": "transfer", "destination": "Desk", "text": "x"}), [("t", "invalid_node")]),
], ids=["graph-not-object", "nodes-empty", "edges-not-list", "node-not-object", "bad-id", "id-not-string",
        "unknown-node-key", "transfer-with-text"])
def test_an_unreadable_shape_is_invalid_node(graph, expected):
    assert refused(graph) == expected


def test_unknown_top_level_keys_are_invalid_graph():
    assert refused(chain(msg("a"), end(), variables={}, notes="x")) == [("#graph", "invalid_graph")]


def test_a_repeated_id_is_a_duplicate_node():
    graph = chain(msg("a"), end())
    graph["nodes"].append(end("a"))
    assert refused(graph) == [("a", "duplicate_node")]


@pytest.mark.parametrize("start,node_id", [("nowhere", "nowhere"), (None, "#graph"), (3, "#graph")])
def test_a_start_naming_no_node_is_start_missing(start, node_id):
    assert refused(chain(msg("a"), end()) | {"start": start}) == [(node_id, "start_missing")]


def test_more_than_max_nodes_is_too_many_nodes_at_the_first_node_past_the_limit():
    nodes = [msg(f"n{i}") for i in range(MAX_NODES)] + [end("last")]
    assert refused(chain(*nodes)) == [("last", "too_many_nodes")]
    compiled(chain(*nodes[1:]))  # exactly MAX_NODES is fine


@pytest.mark.parametrize("type_,code", [("snippet", "snippet_not_supported"),
                                        ("custom_tool", "custom_tool_not_supported"),
                                        ("webhook", "unknown_node_type"), (None, "unknown_node_type")])
def test_snippet_and_custom_tool_nodes_are_refused_and_other_types_unknown(type_, code):
    # SPEC.md Flow: "Snippet and custom-tool nodes are rejected by the compiler."
    assert refused(chain(msg("a"), {"id": "x", "type": type_}, end())) == [("x", code)]


@pytest.mark.parametrize("node", [msg("a", "   "), {"id": "a", "type": "message"}, msg("a", "x" * 2001),
                                  ask("a", "ok") | {"text": 5}, msg("a", "nul\x00")])
def test_a_message_or_question_without_a_usable_text_is_missing_text(node):
    assert refused(chain(node, end())) == [("a", "missing_text")]


@pytest.mark.parametrize("text", ["", "  ", 5, "x" * 2001])
def test_an_end_text_is_optional_but_if_given_must_be_usable(text):
    compiled(chain(msg("a"), end("b", text=None)))
    assert refused(chain(msg("a"), end("b", text=text))) == [("b", "missing_text")]


@pytest.mark.parametrize("field", ["Confirmed", "1st", "", None, "x" * 65])
def test_a_question_field_that_is_not_an_outcome_field_name_is_invalid_field(field):
    assert refused(chain(ask("a", "ok") | {"field": field}, end())) == [("a", "invalid_field")]


def test_a_schema_the_outcome_compiler_refuses_is_invalid_field_on_the_question():
    graph = chain(msg("hi"), ask("size", "size", "enum", values=["small", "small"]), end())
    flow, problems = compile_flow("Order check", graph)
    assert flow is None
    assert [(p.node_id, p.code) for p in problems] == [("size", "invalid_field")]
    assert "duplicate enum value 'small'" in problems[0].message
    many = [ask(f"q{i}", f"field_{i}") for i in range(51)]
    assert refused(chain(*many, end())) == [("q50", "invalid_field")]  # at most 50 fields


@pytest.mark.parametrize("extra", [{"field_type": "text"}, {"field_type": None}, {"field_type": "enum"},
                                   {"field_type": "enum", "values": []}, {"values": ["a"]}])
def test_a_question_type_that_is_not_an_outcome_type_is_invalid_field_type(extra):
    assert refused(chain(ask("a", "ok") | extra, end())) == [("a", "invalid_field_type")]


@pytest.mark.parametrize("graph,node_id", [
    (chain(ask("a", "ok", keypad={"ending_mode": "timeout"}), end()), "a"),  # boolean
    (chain(ask("a", "pin", "string", keypad={"ending_mode": "hash"}), end()), "a"),
    (chain(ask("a", "pin", "string", keypad={"ending_mode": "fixed_length"}), end()), "a"),
    (chain(ask("a", "pin", "string", keypad={}), end()), "a"),  # no ending_mode anywhere
    (chain(ask("a", "pin", "string", keypad={"ending_mode": "terminator", "terminators": ["##"]}), end()), "a"),
    (chain(ask("a", "pin", "integer", keypad={"ending_mode": "timeout", "timeout_s": 31}), end()), "a"),
    (chain(ask("a", "pin", "integer", keypad={"ending_mode": "timeout", "beep": True}), end()), "a"),
    (chain(ask("a", "pin", "integer", keypad={"ending_mode": "timeout"}), end(), keypad={"length": 0}), "#graph"),
])
def test_a_keypad_block_that_breaks_its_rules_is_invalid_keypad(graph, node_id):
    assert refused(graph) == [(node_id, "invalid_keypad")]


@pytest.mark.parametrize("destination", [None, "", "   ", "x" * 65, 12])
def test_a_transfer_without_a_label_is_missing_destination(destination):
    assert refused(chain(msg("a"), {"id": "t", "type": "transfer", "destination": destination})) == [
        ("t", "missing_destination")]


def test_an_edge_naming_no_node_is_dangling_at_its_source_or_else_at_the_missing_id():
    graph = chain(msg("a"), end())
    graph["edges"] += [{"from": "a", "to": "ghost"}]
    assert refused(graph) == [("a", "dangling_edge")]  # the edge is left out: a still has its one next
    graph = chain(msg("a"), end())
    graph["edges"] += [{"from": "ghost", "to": "a"}]
    assert refused(graph) == [("ghost", "dangling_edge")]


def test_a_message_or_question_needs_exactly_one_next_edge():
    assert refused({"start": "a", "nodes": [msg("a")]}) == [("a", "next_edge"), ("a", "no_path_to_end")]
    graph = chain(ask("a", "ok"), end())
    graph["nodes"].append(end("other"))
    graph["edges"].append({"from": "a", "to": "other"})
    assert refused(graph) == [("a", "next_edge")]


def test_a_when_on_a_message_edge_is_a_condition_outside_a_branch():
    graph = chain(ask("a", "ok"), end())
    graph["edges"][0]["when"] = {"field": "ok", "op": "present"}
    assert refused(graph) == [("a", "condition_outside_branch")]


def test_an_end_has_no_outgoing_edge():
    graph = chain(msg("a"), end("t"), end())
    assert refused(graph) == [("t", "edge_from_terminal")]


def transfer(node_id: str = "desk", destination: str = "Front desk") -> dict[str, Any]:
    return {"id": node_id, "type": "transfer", "destination": destination}


def test_a_transfer_may_have_one_edge_to_the_step_taken_when_no_destination_answered():
    """SPEC.md Flow (graph-based conversation logic, compiled at publish): a ``transfer`` node may have
    one outgoing edge, the step a call takes when no destination answered (here a question that
    takes a message); it was refused as edge_from_terminal. A field asked only after that edge is
    optional: a transfer that connects ends the call without it."""
    graph = chain(ask("ok", "confirmed"), transfer(), ask("note", "message", "string"), end())
    flow = compiled(graph)
    assert flow.graph["edges"][1] == {"from": "desk", "to": "note", "when": None}
    assert walk.next_step(flow.graph, "desk", {}) == "note"
    assert flow.outcome_schema["message"]["optional"] is True and flow.outcome_schema["confirmed"]["optional"] is False
    assert flow.system_prompt.split("\n\n")[2].split("\n") == [
        "Step desk (transfer): Transfer the caller to Front desk with transfer_call.",
        "If nobody answers, the call comes back to you: go to step note."]
    alone = compiled(chain(ask("ok", "confirmed"), transfer()))  # without the edge: the transfer ends the call
    assert walk.next_step(alone.graph, "desk", {}) is None
    assert alone.system_prompt.split("\n")[-1] == "Step desk (transfer): Transfer the caller to Front desk with transfer_call."


def test_a_transfer_with_more_than_one_outgoing_edge_is_refused_naming_it():
    """SPEC.md Flow (the graph compiles at publish, or is refused): more than one edge out of a
    transfer is its own problem, ``transfer_fallback_edges``, at the transfer node; a ``when`` on
    its one edge is a condition outside a branch."""
    graph = chain(ask("ok", "confirmed"), transfer(), ask("note", "message", "string"), end())
    graph["edges"].append({"from": "desk", "to": "bye"})
    flow, problems = compile_flow("Order check", graph)
    assert flow is None and [(p.node_id, p.code) for p in problems] == [("desk", "transfer_fallback_edges")]
    assert "at most one outgoing edge" in problems[0].message and "(it has 2)" in problems[0].message
    graph["edges"].pop()
    graph["edges"][1]["when"] = {"field": "confirmed", "op": "present"}
    assert refused(graph) == [("desk", "condition_outside_branch")]


@pytest.mark.parametrize("edges", [
    [{"to": "yes", "when": {"field": "ok", "op": "eq", "value": True}}],  # no default
    [{"to": "yes"}],  # no condition
    [{"to": "yes", "when": {"field": "ok", "op": "eq", "value": True}}, {"to": "yes"}, {"to": "bye"}],  # two defaults
])
def test_a_branch_needs_conditions_and_exactly_one_default_edge(edges):
    graph = {"start": "a", "nodes": [ask("a", "ok"), {"id": "b", "type": "branch"}, end("yes"), end()],
             "edges": [{"from": "a", "to": "b"}, *({"from": "b", **edge} for edge in edges)]}
    assert ("b", "branch_default_edge") in refused(graph)
    assert {code for _, code in refused(graph)} <= {"branch_default_edge", "unreachable_node"}


def branching(when: Any, field_type: str = "boolean", **extra: Any) -> dict[str, Any]:
    return {"start": "a", "nodes": [ask("a", "ok", field_type, **extra), {"id": "b", "type": "branch"}, end("yes"), end()],
            "edges": [{"from": "a", "to": "b"}, {"from": "b", "to": "yes", "when": when}, {"from": "b", "to": "bye"}]}


def test_a_condition_on_a_field_no_question_asks_is_unknown_field():
    assert refused(branching({"field": "paid", "op": "present"})) == [("b", "unknown_field")]


@pytest.mark.parametrize("when,field_type", [
    ({"field": "ok", "op": "is", "value": True}, "boolean"),
    ({"field": "ok", "op": "eq"}, "boolean"),
    ({"field": "ok", "op": "present", "value": True}, "boolean"),
    ({"field": "ok", "op": "eq", "value": "yes"}, "boolean"),
    ({"field": "ok", "op": "gt", "value": True}, "boolean"),
    ({"field": "ok", "op": "gt", "value": "b"}, "string"),
    ({"field": "ok", "op": "eq", "value": 2.5}, "integer"),
    ({"field": "ok", "op": "lt", "value": "2026-02-30"}, "date"),
    ({"field": "ok", "op": "eq", "value": "medium"}, "enum"),
    ({"field": "ok", "op": "eq", "value": True, "also": 1}, "boolean"),
    ("ok == true", "boolean"),
])
def test_a_condition_that_breaks_its_rules_is_invalid_condition(when, field_type):
    extra = {"values": ["small", "large"]} if field_type == "enum" else {}
    assert refused(branching(when, field_type, **extra)) == [("b", "invalid_condition")]


def test_ordered_comparisons_work_on_numbers_and_dates():
    for field_type, value in [("integer", 3), ("number", 2.5), ("date", "2026-03-08"),
                              ("datetime", "2026-03-08T10:00:00Z")]:
        compiled(branching({"field": "ok", "op": "lt", "value": value}, field_type))


def test_a_node_the_start_cannot_reach_is_unreachable():
    graph = chain(msg("a"), end())
    graph["nodes"] += [msg("island"), end("island_end")]
    graph["edges"] += [{"from": "island", "to": "island_end"}]
    assert refused(graph) == [("island", "unreachable_node"), ("island_end", "unreachable_node")]


def test_a_cycle_with_no_exit_has_no_path_to_end_at_each_node_on_it():
    graph = {"start": "a", "nodes": [msg("a"), ask("b", "ok"), msg("c"), end()],
             "edges": [{"from": "a", "to": "b"}, {"from": "b", "to": "c"}, {"from": "c", "to": "a"}]}
    assert refused(graph) == [("bye", "unreachable_node"), ("a", "no_path_to_end"), ("b", "no_path_to_end"),
                              ("c", "no_path_to_end")]


def test_one_field_asked_with_two_types_is_a_conflict_at_the_later_node():
    assert refused(chain(ask("a", "ok"), ask("b", "ok", "string"), end())) == [("b", "field_type_conflict")]
    assert refused(chain(ask("a", "size", "enum", values=["s", "m"]), ask("b", "size", "enum", values=["s"]),
                         end())) == [("b", "field_type_conflict")]
    assert refused(chain(ask("a", "pin", "string", keypad={"ending_mode": "timeout"}), ask("b", "pin", "string"),
                         end())) == [("b", "field_type_conflict")]
    flow = compiled(chain(ask("a", "ok"), ask("b", "ok"), end()))  # the same type twice is fine
    assert list(flow.outcome_schema) == ["ok"] and flow.outcome_schema["ok"]["description"] == "What is ok?"


def test_a_draft_with_several_problems_reports_every_one_in_a_fixed_order():
    graph = {
        "start": "greet",
        "nodes": [msg("greet", ""), {"id": "s", "type": "snippet"}, ask("q", "Bad"), ask("q", "ok"),
                  {"id": "t", "type": "transfer"}, {"id": "route", "type": "branch"}, ask("q2", "ok", "integer"), end()],
        "edges": [{"from": "greet", "to": "s"}, {"from": "s", "to": "q"}, {"from": "q", "to": "route"},
                  {"from": "route", "to": "t", "when": {"field": "nope", "op": "eq", "value": 1}},
                  {"from": "route", "to": "q2"}, {"from": "q2", "to": "bye"}, {"from": "bye", "to": "greet"},
                  {"from": "t", "to": "void"}],
        "colour": "blue",
    }
    expected = [("#graph", "invalid_graph"), ("greet", "missing_text"), ("s", "snippet_not_supported"),
                ("q", "invalid_field"), ("q", "duplicate_node"), ("t", "missing_destination"),
                ("route", "unknown_field"), ("t", "dangling_edge"), ("bye", "edge_from_terminal")]
    assert refused(graph) == expected
    assert refused(copy.deepcopy(graph)) == expected


def test_every_problem_is_json_with_a_node_id_a_snake_case_code_and_a_message():
    _, problems = compile_flow("x", {"start": 1, "nodes": [5, {"id": "a", "type": "question"}], "edges": [None],
                                     "keypad": {"terminators": "#"}})
    assert problems
    for problem in problems:
        assert isinstance(problem, FlowProblem)
        assert set(problem.to_json()) == {"node_id", "code", "message"}
        assert problem.node_id and re.fullmatch(r"[a-z]+(_[a-z]+)*", problem.code) and len(problem.message) > 10


def test_a_flow_stored_before_the_spec_spelling_is_shown_with_it():
    """SPEC.md Flow: ``ending_mode`` modes are terminator, fixed-length, timeout. Events stored with
    ``fixed_length`` (a draft, a frozen artifact) replay into a flow that shows ``fixed-length``;
    a new draft is stored with it."""
    at = datetime(2026, 11, 25, tzinfo=timezone.utc)
    old = chain(ask("pin", "pin", "string", keypad={"ending_mode": "fixed_length", "length": 4}), end(),
                keypad={"ending_mode": "fixed_length"})
    stored = Flow(tenant_id="ten_" + "0" * 32, flow_id="flw_" + "0" * 32, name="Pins", graph_json=old, by="key_test",
                  at=at)  # as the Drafted event of an older version held it
    artifact = compiled(old)
    frozen = {**artifact.to_json(), "tools": [*artifact.tools[:-1], {"name": "collect_digits", "fields": {
        "pin": {**artifact.tools[-1]["fields"]["pin"], "ending_mode": "fixed_length"}}}]}
    stored._published(version=1, draft_version=1, compiled=frozen, graph={**artifact.graph, "nodes": [
        {**artifact.graph["nodes"][0], "keypad": {**artifact.graph["nodes"][0]["keypad"], "ending_mode": "fixed_length"}},
        *artifact.graph["nodes"][1:]]}, by="key_test", at=at)
    events = stored.collect_events()
    assert events[0].graph_json["keypad"] == {"ending_mode": "fixed_length"}

    flow = given(events).aggregate
    assert flow.graph_json["keypad"] == {"ending_mode": "fixed-length"}
    assert flow.graph_json["nodes"][0]["keypad"] == {"ending_mode": "fixed-length", "length": 4}
    assert flow.published is not None
    assert flow.published["compiled"]["tools"][-1]["fields"]["pin"]["ending_mode"] == "fixed-length"
    assert flow.published["graph"]["nodes"][0]["keypad"]["ending_mode"] == "fixed-length"
    assert old["keypad"] == {"ending_mode": "fixed_length"}  # what came in is left alone
    new = Flow.draft(tenant_id="ten_" + "0" * 32, name="Pins", graph_json=old, by="key_test", at=at)
    assert new.collect_events()[0].graph_json["nodes"][0]["keypad"]["ending_mode"] == "fixed-length"
