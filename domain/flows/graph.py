"""Reading a flow's ``graph_json`` (SPEC.md Flow): its shape, its nodes and edges, whether every step
is reachable and can reach an ending, and whether its questions agree on their fields. Every problem
is collected, in a fixed order. Pure: stdlib and other ``domain`` modules."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from domain.calls.outcome_types import ENUM
from domain.flows import keypad, paths
from domain.flows.edges import check_outgoing, condition_field_types, read_edges
from domain.flows.nodes import NODE_TYPES, QUESTION, TERMINAL_TYPES, is_node_id, read_node
from domain.flows.problems import GRAPH, FlowProblem, FlowProblems, quoted, shown

__all__ = ["MAX_NODES", "FlowGraph", "FlowProblem", "read_graph"]

MAX_NODES = 200
GRAPH_KEYS = ("start", "nodes", "edges", "clarify_on_uncertainty", "keypad")


@dataclass(frozen=True, slots=True)
class FlowGraph:
    """A read graph: its nodes normalized (those with a usable, unique id, in input order), the
    edges between them, and the walk from the start."""

    start: str | None  # None when it names no node
    nodes: dict[str, dict[str, Any]]
    edges: list[dict[str, Any]]
    clarify_on_uncertainty: bool
    keypad: dict[str, Any] | None  # the block beside the nodes (its valid keys); None when there is none
    order: list[str]  # breadth-first from the start, then the nodes it never reaches in input order
    successors: dict[str, list[str]]

    def questions(self) -> list[dict[str, Any]]:
        return [self.nodes[node_id] for node_id in self.order if self.nodes[node_id]["type"] == QUESTION]

    def endings(self) -> set[str]:
        """The terminal nodes, and those of a refused type: what they would do is unknown, so the
        walk does not blame the nodes before them."""
        return {node_id for node_id, node in self.nodes.items()
                if node["type"] in TERMINAL_TYPES or node["type"] not in NODE_TYPES}


def read_graph(graph_json: Any) -> tuple[FlowGraph | None, FlowProblems]:
    """The graph as far as it could be read, and every problem found (None: not an object at all)."""
    problems = FlowProblems()
    if not isinstance(graph_json, Mapping):
        problems.add(GRAPH, "invalid_node", "the graph must be an object {start, nodes, edges}")
        return None, problems
    if unknown := [key for key in graph_json if key not in GRAPH_KEYS]:
        problems.add(GRAPH, "invalid_graph", f"the graph has unknown keys {quoted(unknown)}; "
                                             f"allowed: {', '.join(GRAPH_KEYS)}")
    clarify = graph_json.get("clarify_on_uncertainty")
    if clarify is not None and not isinstance(clarify, Mapping):
        problems.add(GRAPH, "invalid_graph", "clarify_on_uncertainty must be an object ({} enables it)")
    keypad_defaults: dict[str, Any] = {}
    keypad_block: dict[str, Any] | None = None
    if graph_json.get("keypad") is not None:  # the defaults of every keypad question
        keypad_defaults, faults = keypad.read_block(graph_json["keypad"], "the graph's keypad")
        for fault in faults:
            problems.add(GRAPH, "invalid_keypad", fault)
        keypad_block = {key: list(value) if isinstance(value, tuple) else value
                        for key, value in keypad_defaults.items()}
    raw_nodes, raw_edges = _lists(graph_json, problems)

    nodes: dict[str, dict[str, Any]] = {}
    clean: set[str] = set()
    for index, raw in enumerate(raw_nodes):
        before = len(problems)
        node = read_node(raw, index, keypad_defaults, problems)
        if node is None:
            continue
        if node["id"] in nodes:
            problems.add(node["id"], "duplicate_node", f"node {index} repeats the id {node['id']!r}; "
                                                       "every node needs an id of its own")
            continue
        nodes[node["id"]] = node
        if len(problems) == before:
            clean.add(node["id"])
    if len(raw_nodes) > MAX_NODES:
        extra = raw_nodes[MAX_NODES]
        problems.add(extra["id"] if isinstance(extra, Mapping) and is_node_id(extra.get("id"))
                     else f"#{MAX_NODES}", "too_many_nodes",
                     f"a flow has at most {MAX_NODES} nodes; this one has {len(raw_nodes)}")
    start = graph_json.get("start")
    if not (isinstance(start, str) and start in nodes):
        problems.add(start if isinstance(start, str) else GRAPH, "start_missing",
                     f"start must be the id of one of the nodes, not {shown(start)}")
        start = None

    edges = read_edges(raw_edges, nodes, condition_field_types(nodes), problems)
    check_outgoing(nodes, edges, problems)
    successors = paths.adjacency(list(nodes), edges)
    reached = paths.breadth_first(start, successors) if start is not None else []
    seen = set(reached)
    graph = FlowGraph(start, nodes, edges, isinstance(clarify, Mapping), keypad_block,
                      reached + [node_id for node_id in nodes if node_id not in seen], successors)
    if start is not None:
        _check_paths(graph, reached, problems)
    _check_fields(graph, clean, problems)
    return graph, problems


def _lists(graph_json: Mapping[str, Any], problems: FlowProblems) -> tuple[list[Any], list[Any]]:
    raw_nodes = graph_json.get("nodes")
    if not isinstance(raw_nodes, list) or not raw_nodes:
        problems.add(GRAPH, "invalid_node", "nodes must be a non-empty list of node objects")
        raw_nodes = raw_nodes if isinstance(raw_nodes, list) else []
    raw_edges = graph_json.get("edges")
    if raw_edges is not None and not isinstance(raw_edges, list):
        problems.add(GRAPH, "invalid_node", "edges must be a list of {from, to, when} objects")
    return raw_nodes, raw_edges if isinstance(raw_edges, list) else []


def _check_paths(graph: FlowGraph, reached: list[str], problems: FlowProblems) -> None:
    seen = set(reached)
    for node_id in graph.nodes:
        if node_id not in seen:
            problems.add(node_id, "unreachable_node", f"no path from the start {graph.start!r} leads to this "
                                                      "node; connect it with an edge or remove it")
    can_end = paths.reaching(graph.endings(), graph.successors)
    for node_id in graph.nodes:
        if node_id in seen and node_id not in can_end:
            problems.add(node_id, "no_path_to_end", "no path from this node reaches an end or transfer node, "
                                                    "so a call here could never finish; add an exit")


def _check_fields(graph: FlowGraph, clean: set[str], problems: FlowProblems) -> None:
    """A field is asked with one type (and one list of enum values, one keypad) everywhere; the first
    question in input order sets it."""
    first: dict[str, dict[str, Any]] = {}
    for node in graph.nodes.values():
        if node["type"] != QUESTION or node["field"] is None or node["field_type"] is None:
            continue
        if node["field_type"] == ENUM and node.get("values") is None:
            continue
        seen = first.setdefault(node["field"], node)
        if seen is node:
            continue
        if (seen["field_type"], seen.get("values")) != (node["field_type"], node.get("values")):
            problems.add(node["id"], "field_type_conflict",
                         f"the field {node['field']!r} is asked as {_kind(seen)} by node {seen['id']!r} and as "
                         f"{_kind(node)} here; ask it the same way or use another field name")
        elif seen["keypad"] != node["keypad"] and seen["id"] in clean and node["id"] in clean:
            problems.add(node["id"], "field_type_conflict",
                         f"the field {node['field']!r} is collected with other keypad settings by node "
                         f"{seen['id']!r}; give both questions the same keypad")


def _kind(node: Mapping[str, Any]) -> str:
    values = node.get("values")
    return f"enum {values!r}" if values is not None else str(node["field_type"])
