"""Publishing a flow (SPEC.md Flow): its graph compiled into the frozen artifact a call runs
(objective, outcome_schema, tools, system prompt) and the normalized graph the runtime walks, or
every problem that refuses it. Deterministic: the same name and graph give the same bytes. Pure:
stdlib and other ``domain`` modules."""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any

from domain.calls.outcome_schema import MAX_DESCRIPTION, compile_schema
from domain.calls.outcome_types import ENUM
from domain.errors import OutcomeSchemaError
from domain.flows import paths
from domain.flows.graph import MAX_NODES, FlowGraph, read_graph
from domain.flows.nodes import TRANSFER
from domain.flows.problems import FlowProblem, FlowProblems
from domain.flows.prompt import system_prompt

__all__ = ["MAX_NODES", "CompiledFlow", "FlowProblem", "compile_flow"]


@dataclass(frozen=True, slots=True)
class CompiledFlow:
    objective: str
    outcome_schema: dict[str, Any]  # a definition, as compile_schema takes it ({} for a flow that asks nothing)
    tools: list[dict[str, Any]]
    system_prompt: str
    graph: dict[str, Any]  # normalized: what a runtime walks

    def to_json(self) -> dict[str, Any]:
        """The API's ``compiled``: what the frozen columns hold."""
        return copy.deepcopy({"objective": self.objective, "outcome_schema": self.outcome_schema,
                              "tools": self.tools, "system_prompt": self.system_prompt})

    def canonical_bytes(self) -> bytes:
        whole = {**self.to_json(), "graph": self.graph}
        return json.dumps(whole, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def compile_flow(name: str, graph_json: Any) -> tuple[CompiledFlow | None, list[FlowProblem]]:
    """Either (artifact, []) or (None, problems) with every problem found, in a deterministic order."""
    graph, problems = read_graph(graph_json)
    if graph is None:
        return None, list(problems)
    schema = _outcome_schema(graph, problems)
    if problems or graph.start is None:
        return None, list(problems)
    normalized = _normalized(graph)
    fields = list(schema)
    objective = f'Follow the call flow "{name}" step by step' + (
        f" and collect: {', '.join(fields)}" if fields else "") + "."
    return CompiledFlow(objective, schema, _tools(graph), system_prompt(name, normalized), normalized), []


def _askers(graph: FlowGraph) -> dict[str, list[dict[str, Any]]]:
    """Each field with a usable type, and the questions asking it, breadth-first from the start."""
    askers: dict[str, list[dict[str, Any]]] = {}
    for node in graph.questions():
        type_ = node["field_type"]
        if node["field"] is not None and type_ is not None and (type_ != ENUM or node.get("values") is not None):
            askers.setdefault(node["field"], []).append(node)
    return askers


def _outcome_schema(graph: FlowGraph, problems: FlowProblems) -> dict[str, Any]:
    """One field per question field, first seen breadth-first; required when every path to an ending
    asks it. Refusals of ``compile_schema`` become ``invalid_field`` on the field's first question."""
    askers = _askers(graph)
    walkable = graph.start is not None and len(graph.nodes) <= MAX_NODES
    endings = graph.endings()
    definition: dict[str, Any] = {}
    for field, nodes in askers.items():
        first = nodes[0]
        entry: dict[str, Any] = {"type": first["field_type"]}
        if first["field_type"] == ENUM:
            entry["values"] = list(first["values"])
        if first["text"] is not None:
            entry["description"] = first["text"][:MAX_DESCRIPTION]
        required = walkable and paths.is_required(graph.start, graph.successors,  # type: ignore[arg-type]
                                                  [node["id"] for node in nodes], endings)
        entry["optional"] = not required
        definition[field] = entry
    if not definition:
        return {}
    try:
        return compile_schema(definition, limits=True).to_definition()
    except OutcomeSchemaError as exc:
        last = list(definition)[-1]  # a limit of the whole schema: the field that went past it
        for loc, message, _ in exc.problems:
            field, where = (str(loc[0]), ".".join(map(str, loc[1:]))) if loc and loc[0] in definition else (last, "")
            problems.add(askers[field][0]["id"], "invalid_field",
                         f"the outcome field {field!r}{' at ' + where if where else ''} is refused: {message}")
        return {}


def _tools(graph: FlowGraph) -> list[dict[str, Any]]:
    tools: list[dict[str, Any]] = [{"name": "end_call"}]
    destinations = sorted({node["destination"] for node in graph.nodes.values() if node["type"] == TRANSFER})
    if destinations:
        tools.append({"name": "transfer_call", "destinations": destinations})
    digits: dict[str, Any] = {}
    for node in graph.questions():
        if node["keypad"] is not None:
            digits.setdefault(node["field"], copy.deepcopy(node["keypad"]))
    if digits:
        tools.append({"name": "collect_digits", "fields": {field: digits[field] for field in sorted(digits)}})
    return tools


def _normalized(graph: FlowGraph) -> dict[str, Any]:
    outgoing: dict[str, list[dict[str, Any]]] = {node_id: [] for node_id in graph.nodes}
    for edge in graph.edges:
        outgoing[edge["from"]].append(edge)
    normalized = {
        "start": graph.start,
        "nodes": [graph.nodes[node_id] for node_id in graph.order],
        "edges": [edge for node_id in graph.order for edge in outgoing[node_id]],
        "clarify_on_uncertainty": graph.clarify_on_uncertainty,
    }
    if graph.keypad is not None:  # only then: a flow without the block compiles as it always has
        normalized["keypad"] = graph.keypad
    return copy.deepcopy(normalized)
