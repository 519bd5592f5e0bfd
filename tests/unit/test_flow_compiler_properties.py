"""The flow compiler on generated graphs: valid ones (messages and questions leading through branches,
some looping back, to end and transfer nodes, a transfer perhaps leading on to where a call goes when
no destination answered) compile, deterministically, with every node reachable; each kind of
breakage is refused with its code and a node to blame; nothing an API client can send makes it raise."""

from __future__ import annotations

import copy
import json
from datetime import datetime, timedelta, timezone
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from domain.calls.outcome_schema import compile_schema
from domain.calls.outcome_types import (
    ARRAY, BOOLEAN, DATE, DATETIME, ENUM, FIELD_TYPES, INTEGER, NUMBER, STRING,
)
from domain.flows.compiler import compile_flow
from domain.flows.flow import Flow

FIELDS = ("confirmed", "pin", "age", "size", "visit_on", "visit_at", "amount", "tags", "notes")
ORDERED = (INTEGER, NUMBER, DATE, DATETIME)
SAFE_TEXT = st.characters(codec="utf-8", exclude_categories=("Cc", "Cs"))
TEXTS = st.text(SAFE_TEXT, min_size=1, max_size=40).filter(str.strip)
LABELS = st.text(SAFE_TEXT, min_size=1, max_size=20).filter(str.strip)
KEYPADS = st.one_of(
    st.fixed_dictionaries({"ending_mode": st.just("terminator")},
                          optional={"terminators": st.lists(st.sampled_from("0123456789*#"), min_size=1, max_size=3,
                                                            unique=True)}),
    st.fixed_dictionaries({"ending_mode": st.sampled_from(["fixed-length", "fixed_length"]),
                           "length": st.integers(1, 32)}),
    st.fixed_dictionaries({"ending_mode": st.just("timeout")},
                          optional={"timeout_s": st.integers(1, 30), "masked": st.booleans()}),
)
GRAPH_KEYPADS = st.fixed_dictionaries({}, optional={"terminators": st.just(["*"]), "timeout_s": st.integers(1, 30),
                                                    "masked": st.booleans(), "length": st.integers(1, 32)})


@st.composite
def field_specs(draw: st.DrawFn) -> dict[str, Any]:
    type_ = draw(st.sampled_from(FIELD_TYPES))
    spec: dict[str, Any] = {"field_type": type_}
    if type_ == ENUM:
        spec["values"] = draw(st.lists(LABELS, min_size=1, max_size=4, unique=True))
    if type_ in (STRING, INTEGER) and draw(st.booleans()):
        spec["keypad"] = draw(KEYPADS)
    return spec


def values_of(type_: str, values: list[str] | None) -> st.SearchStrategy[Any]:
    return {
        BOOLEAN: st.booleans(),
        STRING: st.text(SAFE_TEXT, max_size=10),
        INTEGER: st.integers(-10**6, 10**6),
        NUMBER: st.one_of(st.integers(-10**6, 10**6), st.floats(allow_nan=False, allow_infinity=False)),
        DATE: st.dates().map(lambda day: day.isoformat()),
        DATETIME: st.datetimes(min_value=datetime(1900, 1, 1), max_value=datetime(2100, 1, 1),
                               timezones=st.sampled_from([timezone.utc, timezone(timedelta(hours=5, minutes=30))]))
        .map(lambda at: at.isoformat()),
        ENUM: st.sampled_from(values or ["x"]),
        ARRAY: st.lists(st.text(SAFE_TEXT, max_size=5), max_size=3),
    }[type_]


@st.composite
def valid_graphs(draw: st.DrawFn) -> dict[str, Any]:
    """A tree of steps grown from the start, where a step may also lead to one already finished (a DAG)
    and a branch's condition may loop back to a step before it (a cycle its default edge leaves)."""
    budget = draw(st.integers(0, 12))
    specs: dict[str, dict[str, Any]] = {}
    nodes: list[dict[str, Any]] = []
    edges: list[dict[str, Any]] = []
    finished: list[str] = []

    def follow(ancestors: list[str]) -> str:
        if finished and draw(st.booleans()):
            return draw(st.sampled_from(finished))
        return grow(ancestors)

    def grow(ancestors: list[str]) -> str:
        nonlocal budget
        goes_on = budget > 0 and draw(st.integers(0, 3)) > 0
        kind = draw(st.sampled_from(["message", "question", "branch"] if goes_on else ["end", "transfer"]))
        budget -= 1
        node: dict[str, Any] = {"id": f"n{len(nodes)}", "type": kind}
        nodes.append(node)
        here = [*ancestors, node["id"]]
        if kind in ("message", "question") or (kind == "end" and draw(st.booleans())):
            node["text"] = draw(TEXTS)
        if kind == "question":
            field = draw(st.sampled_from(FIELDS))
            node.update({"field": field, **copy.deepcopy(specs.setdefault(field, draw(field_specs())))})
        if kind == "transfer":
            node["destination"] = draw(LABELS)
            if draw(st.booleans()):  # where the call goes when no destination answered
                edges.append({"from": node["id"], "to": follow(here)})
        if kind in ("message", "question"):
            edges.append({"from": node["id"], "to": follow(here)})
        if kind == "branch":
            for _ in range(draw(st.integers(1, 3))):
                loop = draw(st.booleans())
                target = draw(st.sampled_from(here)) if loop else follow(here)
                edges.append({"from": node["id"], "to": target, "when": None})  # filled in below
            edges.append({"from": node["id"], "to": follow(here)})
        finished.append(node["id"])
        return node["id"]

    start = grow([])
    asked = sorted({node["field"] for node in nodes if node["type"] == "question"})
    if not asked and any(node["type"] == "branch" for node in nodes):
        field = draw(st.sampled_from(FIELDS))
        specs[field] = draw(field_specs())
        nodes.append({"id": "first", "type": "question", "text": draw(TEXTS), "field": field,
                      **copy.deepcopy(specs[field])})
        edges.append({"from": "first", "to": start})
        start, asked = "first", [field]
    for edge in edges:
        if "when" in edge:
            field = draw(st.sampled_from(asked))
            type_, values = specs[field]["field_type"], specs[field].get("values")
            ops = ["eq", "ne", "present", "absent"] + (["gt", "lt"] if type_ in ORDERED else [])
            op = draw(st.sampled_from(ops))
            edge["when"] = {"field": field, "op": op}
            if op not in ("present", "absent"):
                edge["when"]["value"] = draw(values_of(type_, values))
    graph: dict[str, Any] = {"start": start, "nodes": draw(st.permutations(nodes)), "edges": draw(st.permutations(edges))}
    if draw(st.booleans()):
        graph["clarify_on_uncertainty"] = {}
    if draw(st.booleans()):
        graph["keypad"] = draw(GRAPH_KEYPADS)
    return graph


# --- breakages: each takes a valid graph and returns the code it must be refused with ------------


def _of_type(graph: dict[str, Any], *types: str) -> list[dict[str, Any]]:
    return [node for node in graph["nodes"] if node["type"] in types]


def drop_node(graph: dict[str, Any], data: st.DataObject) -> str:
    victim = data.draw(st.sampled_from([node for node in graph["nodes"] if node["id"] != graph["start"]]))
    graph["nodes"].remove(victim)
    return "dangling_edge"  # every other node is reached by some edge, which now points nowhere


def dangle(graph: dict[str, Any], data: st.DataObject) -> str:
    source = data.draw(st.sampled_from(graph["nodes"]))["id"]
    graph["edges"].insert(data.draw(st.integers(0, len(graph["edges"]))), {"from": source, "to": "ghost"})
    return "dangling_edge"


def trap_in_cycle(graph: dict[str, Any], data: st.DataObject) -> str:
    steps = _of_type(graph, "message", "question")
    graph["nodes"] += [{"id": "loop_a", "type": "message", "text": "Again."},
                       {"id": "loop_b", "type": "message", "text": "And again."}]
    graph["edges"] += [{"from": "loop_a", "to": "loop_b"}, {"from": "loop_b", "to": "loop_a"}]
    if steps:
        step = data.draw(st.sampled_from(steps))["id"]
        next(edge for edge in graph["edges"] if edge["from"] == step)["to"] = "loop_a"
    else:
        graph["start"] = "loop_a"
    return "no_path_to_end"


def add_refused_node(code: str, type_: str) -> Any:
    def mutate(graph: dict[str, Any], data: st.DataObject) -> str:
        graph["nodes"].insert(data.draw(st.integers(0, len(graph["nodes"]))), {"id": "odd", "type": type_})
        return code

    return mutate


def retype_a_field(graph: dict[str, Any], data: st.DataObject) -> str:
    question = data.draw(st.sampled_from(_of_type(graph, "question")))
    other = BOOLEAN if question["field_type"] != BOOLEAN else STRING
    graph["nodes"].append({"id": "again", "type": "question", "text": "Once more?", "field": question["field"],
                           "field_type": other})
    return "field_type_conflict"


def drop_default_edge(graph: dict[str, Any], data: st.DataObject) -> str:
    branch = data.draw(st.sampled_from(_of_type(graph, "branch")))["id"]
    graph["edges"].remove(next(e for e in graph["edges"] if e["from"] == branch and e.get("when") is None))
    return "branch_default_edge"


def leave_a_terminal(graph: dict[str, Any], data: st.DataObject) -> str:
    terminal = data.draw(st.sampled_from(_of_type(graph, "end", "transfer")))
    if terminal["type"] == "end":
        graph["edges"].append({"from": terminal["id"], "to": graph["start"]})
        return "edge_from_terminal"
    graph["edges"] += [{"from": terminal["id"], "to": graph["start"]}, {"from": terminal["id"], "to": graph["start"]}]
    return "transfer_fallback_edges"  # a transfer has at most one edge, to where a failed transfer goes


def repeat_a_node(graph: dict[str, Any], data: st.DataObject) -> str:
    graph["nodes"].append(copy.deepcopy(data.draw(st.sampled_from(graph["nodes"]))))
    return "duplicate_node"


def condition_a_step(graph: dict[str, Any], data: st.DataObject) -> str:
    step = data.draw(st.sampled_from(_of_type(graph, "message", "question")))["id"]
    next(edge for edge in graph["edges"] if edge["from"] == step)["when"] = {"field": "x", "op": "present"}
    return "condition_outside_branch"


def ask_an_unknown_field(graph: dict[str, Any], data: st.DataObject) -> str:
    edge = data.draw(st.sampled_from([edge for edge in graph["edges"] if edge.get("when")]))
    edge["when"]["field"] = "never_asked"
    return "unknown_field"


def lose_the_start(graph: dict[str, Any], data: st.DataObject) -> str:
    graph["start"] = data.draw(st.sampled_from(["ghost", None, 0]))
    return "start_missing"


def add_a_top_level_key(graph: dict[str, Any], data: st.DataObject) -> str:
    graph[data.draw(st.sampled_from(["variables", "version", "Nodes"]))] = {}
    return "invalid_graph"


def blank_a_text(graph: dict[str, Any], data: st.DataObject) -> str:
    data.draw(st.sampled_from(_of_type(graph, "message", "question")))["text"] = data.draw(st.sampled_from(["", " \n"]))
    return "missing_text"


def applicable(graph: dict[str, Any]) -> list[Any]:
    found = [dangle, trap_in_cycle, add_refused_node("snippet_not_supported", "snippet"),
             add_refused_node("custom_tool_not_supported", "custom_tool"), add_refused_node("unknown_node_type", "menu"),
             leave_a_terminal, repeat_a_node, lose_the_start, add_a_top_level_key]
    if len(graph["nodes"]) > 1:
        found.append(drop_node)
    if _of_type(graph, "question"):
        found.append(retype_a_field)
    if _of_type(graph, "branch"):
        found += [drop_default_edge, ask_an_unknown_field]
    if _of_type(graph, "message", "question"):
        found += [condition_a_step, blank_a_text]
    return found


# --- properties ----------------------------------------------------------------------------------


def reachable(graph: dict[str, Any]) -> set[str]:
    seen, todo = {graph["start"]}, [graph["start"]]
    while todo:
        here = todo.pop()
        for edge in graph["edges"]:
            if edge["from"] == here and edge["to"] not in seen:
                seen.add(edge["to"])
                todo.append(edge["to"])
    return seen


@settings(max_examples=200, deadline=None)
@given(valid_graphs())
def test_property_a_valid_graph_compiles_the_same_every_time_with_every_node_reachable(graph):
    before = copy.deepcopy(graph)
    flow, problems = compile_flow("Generated", graph)
    assert problems == [] and flow is not None
    assert graph == before  # the input is left as it was
    again, _ = compile_flow("Generated", copy.deepcopy(graph))
    assert again is not None and again.canonical_bytes() == flow.canonical_bytes()
    assert json.loads(flow.canonical_bytes())["outcome_schema"] == flow.outcome_schema
    ids = [node["id"] for node in flow.graph["nodes"]]
    assert sorted(ids) == sorted(node["id"] for node in graph["nodes"])
    assert ids[0] == flow.graph["start"] and reachable(flow.graph) == set(ids)
    asked = [node["field"] for node in flow.graph["nodes"] if node["type"] == "question"]
    assert list(flow.outcome_schema) == list(dict.fromkeys(asked))  # first seen, breadth-first
    if flow.outcome_schema:
        assert compile_schema(flow.outcome_schema).to_definition() == flow.outcome_schema
    assert flow.tools[0] == {"name": "end_call"}
    assert all(f"Step {node_id} (" in flow.system_prompt for node_id in ids)


@settings(max_examples=200, deadline=None)
@given(valid_graphs(), st.data())
def test_property_a_broken_graph_is_refused_naming_the_breakage_and_a_node(graph, data):
    breakage = data.draw(st.sampled_from(applicable(graph)), label="breakage")
    code = breakage(graph, data)
    flow, problems = compile_flow("Generated", graph)
    assert flow is None and problems
    assert code in [problem.code for problem in problems]
    assert all(isinstance(problem.node_id, str) and problem.node_id for problem in problems)
    assert compile_flow("Generated", copy.deepcopy(graph))[1] == problems


SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=8),
                    st.sampled_from(["\ud800", "a\x00", "", " "]))
JSON = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
                                                                                           max_size=4), max_leaves=20)
KNOWN = st.sampled_from(["a", "b", "c", "message", "question", "branch", "transfer", "end", "snippet", "ok", "pin",
                         *FIELD_TYPES, "eq", "gt", "present", "terminator", "fixed-length", "fixed_length", "timeout",
                         "#", 4, True])
LOOSE = st.one_of(KNOWN, JSON, st.lists(KNOWN, max_size=3))
NODE_KEYS = ["id", "type", "text", "field", "field_type", "values", "keypad", "destination", "label"]
NODES = st.dictionaries(st.sampled_from(NODE_KEYS), LOOSE, max_size=7)
WHENS = st.one_of(LOOSE, st.dictionaries(st.sampled_from(["field", "op", "value", "x"]), LOOSE, max_size=4))
EDGES = st.one_of(st.dictionaries(st.sampled_from(["from", "to", "when", "x"]), st.one_of(KNOWN, WHENS), max_size=4),
                  JSON)
LOOSE_KEYPADS = st.dictionaries(st.sampled_from(["ending_mode", "terminators", "length", "timeout_s", "masked", "x"]),
                                LOOSE, max_size=5)
GRAPHS = st.fixed_dictionaries({}, optional={
    "start": LOOSE, "nodes": st.one_of(st.lists(st.one_of(NODES, JSON), max_size=6), JSON),
    "edges": st.one_of(st.lists(EDGES, max_size=8), JSON), "clarify_on_uncertainty": LOOSE,
    "keypad": st.one_of(LOOSE_KEYPADS, JSON), "other": JSON})


@st.composite
def fuzzed_graphs(draw: st.DrawFn) -> dict[str, Any]:
    """A valid graph with a few of its values, anywhere, replaced by arbitrary JSON."""
    graph = draw(valid_graphs())
    for _ in range(draw(st.integers(1, 3))):
        where = draw(st.sampled_from(["graph", "node", "edge"]))
        pool = graph.get(f"{where}s") if where != "graph" else None
        target = draw(st.sampled_from(pool)) if isinstance(pool, list) and pool else graph
        target = target if isinstance(target, dict) else graph
        keys = sorted(set(target) | {"when", "keypad", "values", "text"}, key=str)
        target[draw(st.sampled_from(keys))] = draw(LOOSE)
    return graph


@settings(max_examples=200, deadline=None)
@given(st.one_of(JSON, GRAPHS, fuzzed_graphs()))
def test_property_compile_flow_never_raises_and_either_compiles_or_names_a_node(graph_json):
    flow, problems = compile_flow("Anything", graph_json)
    if flow is None:
        assert problems and all(isinstance(problem.node_id, str) and problem.node_id for problem in problems)
    else:
        assert problems == [] and flow.canonical_bytes() == compile_flow("Anything", graph_json)[0].canonical_bytes()


@settings(max_examples=100, deadline=None)
@given(valid_graphs())
def test_property_what_preview_shows_is_what_publish_freezes(graph):
    """Preview compiles the draft and stores nothing; publish freezes the artifact in ``Published``.
    For the same draft they are the same artifact (and the event holds exactly it)."""
    at = datetime(2026, 11, 25, tzinfo=timezone.utc)
    flow = Flow.draft(tenant_id="ten_" + "0" * 32, name="Generated", graph_json=graph, by="key_test", at=at)
    previewed, _ = compile_flow(flow.name, flow.graph_json)
    assert previewed is not None
    published, _ = compile_flow(flow.name, flow.graph_json)
    assert published is not None
    flow.publish(published, by="key_test", now=at)
    frozen = flow.collect_events()[-1]
    assert isinstance(frozen, Flow.Published)
    assert (frozen.compiled, frozen.graph) == (previewed.to_json(), previewed.graph)
