"""A flow's edges: each ``{from, to, when?}`` checked against the nodes, a branch's conditions against
the fields its questions ask, and each node's outgoing edges against its type. Pure: stdlib and the
outcome field types."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from domain.calls.outcome_types import DATE, DATETIME, ENUM, INTEGER, NUMBER, Fault, field_type
from domain.flows.nodes import BRANCH, END, MESSAGE, QUESTION, TRANSFER
from domain.flows.problems import GRAPH, FlowProblems, quoted, shown
from domain.text import unsafe_text

EDGE_KEYS = ("from", "to", "when")
CONDITION_KEYS = ("field", "op", "value")
OPS = ("eq", "ne", "gt", "lt", "present", "absent")
VALUELESS_OPS = ("present", "absent")
ORDERED_TYPES = (INTEGER, NUMBER, DATE, DATETIME)

FieldTypes = Mapping[str, tuple[str, list[str] | None] | None]  # field -> (type, enum values); None: unknown


def read_edges(raw_edges: Sequence[Any], nodes: Mapping[str, dict[str, Any]], fields: FieldTypes,
               problems: FlowProblems) -> list[dict[str, Any]]:
    """The edges between known nodes, normalized to ``{from, to, when}`` (``when`` None for a default
    edge), in input order; a malformed condition is kept as given, after its problem."""
    edges: list[dict[str, Any]] = []
    for index, raw in enumerate(raw_edges):
        if not isinstance(raw, Mapping):
            problems.add(GRAPH, "invalid_graph", f"edge {index} must be an object {{from, to, when}}")
            continue
        source, target = raw.get("from"), raw.get("to")
        known_source = isinstance(source, str) and source in nodes
        if unknown := [key for key in raw if key not in EDGE_KEYS]:
            problems.add(source if known_source else GRAPH, "invalid_graph",
                         f"edge {index} has unknown keys {quoted(unknown)}; allowed: {', '.join(EDGE_KEYS)}")
        if not known_source:
            problems.add(source if isinstance(source, str) else GRAPH, "dangling_edge",
                         f"edge {index} starts at {shown(source)}, which names no node; 'from' must be a node's id")
            continue
        if not (isinstance(target, str) and target in nodes):
            problems.add(source, "dangling_edge",
                         f"edge {index} from {shown(source)} goes to {shown(target)}, which names no node; "
                         "'to' must be a node's id")
            continue
        when = raw.get("when")
        if when is not None and nodes[source]["type"] == BRANCH:
            when = read_condition(when, fields, source, problems)
        edges.append({"from": source, "to": target, "when": when})
    return edges


def read_condition(raw: Any, fields: FieldTypes, node_id: str, problems: FlowProblems) -> Any:
    """The condition normalized (its value as the field's type normalizes it), or ``raw`` after
    reporting why it cannot be used."""
    if not isinstance(raw, Mapping):
        problems.add(node_id, "invalid_condition", "a when must be an object {field, op, value}")
        return raw
    before = len(problems)
    if unknown := [key for key in raw if key not in CONDITION_KEYS]:
        problems.add(node_id, "invalid_condition",
                     f"a when has unknown keys {quoted(unknown)}; allowed: {', '.join(CONDITION_KEYS)}")
    field, op = raw.get("field"), raw.get("op")
    if not isinstance(field, str) or field not in fields:
        problems.add(node_id, "unknown_field",
                     f"the condition tests {shown(field)}, which no question of the flow asks")
    if not isinstance(op, str) or op not in OPS:
        problems.add(node_id, "invalid_condition", f"the condition's op {shown(op)} must be one of {', '.join(OPS)}")
        return raw
    if op in VALUELESS_OPS:
        if "value" in raw:
            problems.add(node_id, "invalid_condition", f"the op {op} takes no value; remove it")
        return raw if len(problems) > before else {"field": field, "op": op}
    if "value" not in raw:
        problems.add(node_id, "invalid_condition", f"the op {op} needs a value to compare {shown(field)} with")
        return raw
    value = raw["value"]
    known = fields.get(field) if isinstance(field, str) else None
    if known is not None:
        value = _checked_value(field, op, value, *known, node_id, problems)
    return raw if len(problems) > before else {"field": field, "op": op, "value": value}


def _checked_value(field: str, op: str, value: Any, type_: str, values: list[str] | None, node_id: str,
                   problems: FlowProblems) -> Any:
    if op in ("gt", "lt") and type_ not in ORDERED_TYPES:
        problems.add(node_id, "invalid_condition",
                     f"{op} compares only {', '.join(ORDERED_TYPES)} fields; {shown(field)} is {type_}")
        return value
    checked = field_type(type_).check(value, tuple(values or ()))
    if isinstance(checked, Fault):
        why = "; ".join(message for _, message, _ in checked.problems)
        problems.add(node_id, "invalid_condition", f"the value compared with {shown(field)} ({type_}) {why}")
        return value
    if isinstance(checked, str) and (unsafe := unsafe_text(checked)) is not None:
        problems.add(node_id, "invalid_condition", f"the value compared with {shown(field)} {unsafe}")
    if isinstance(checked, list) and any(unsafe_text(item) for item in checked):
        problems.add(node_id, "invalid_condition", f"the values compared with {shown(field)} must be plain text")
    return checked


def check_outgoing(nodes: Mapping[str, dict[str, Any]], edges: Sequence[dict[str, Any]],
                   problems: FlowProblems) -> None:
    """Each node's outgoing edges against its type, in node order: a message or a question has one
    next step, a branch its conditions and one default, an end none, and a transfer at most one (the
    step a call takes when no destination answered; without it a failed transfer ends the call)."""
    outgoing: dict[str, list[dict[str, Any]]] = {node_id: [] for node_id in nodes}
    for edge in edges:
        outgoing[edge["from"]].append(edge)
    for node_id, node in nodes.items():
        out, type_ = outgoing[node_id], node["type"]
        conditional = [edge for edge in out if edge["when"] is not None]
        if type_ in (MESSAGE, QUESTION):
            if conditional:
                problems.add(node_id, "condition_outside_branch",
                             f"a {type_} node's edge cannot carry a when; only a branch chooses between edges")
            if len(out) != 1:
                problems.add(node_id, "next_edge",
                             f"a {type_} node needs exactly one outgoing edge to its next step (it has {len(out)})")
        elif type_ == END and out:
            problems.add(node_id, "edge_from_terminal",
                         f"an end node ends the flow and cannot have outgoing edges (it has {len(out)})")
        elif type_ == TRANSFER:
            if conditional:
                problems.add(node_id, "condition_outside_branch",
                             "a transfer node's edge cannot carry a when; only a branch chooses between edges")
            if len(out) > 1:
                problems.add(node_id, "transfer_fallback_edges",
                             f"a transfer node has at most one outgoing edge, to the step a call takes when no "
                             f"destination answered (it has {len(out)}); keep one, or branch after it")
        elif type_ == BRANCH and (not conditional or len(out) - len(conditional) != 1):
            problems.add(node_id, "branch_default_edge",
                         f"a branch needs at least one edge with a when and exactly one default edge without "
                         f"(it has {len(conditional)} and {len(out) - len(conditional)})")


def condition_field_types(nodes: Mapping[str, dict[str, Any]]) -> dict[str, tuple[str, list[str] | None] | None]:
    """Each field a question asks, with the type its first question gives (None when not usable)."""
    fields: dict[str, tuple[str, list[str] | None] | None] = {}
    for node in nodes.values():
        if node["type"] == QUESTION and node["field"] is not None and fields.get(node["field"]) is None:
            type_ = node["field_type"]
            usable = type_ is not None and (type_ != ENUM or node.get("values") is not None)
            fields[node["field"]] = (type_, node.get("values")) if usable else None
    return fields
