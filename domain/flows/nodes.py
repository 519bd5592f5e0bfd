"""One node of a flow's graph, checked on its own and normalized: its type, its keys, its text,
a question's outcome field and keypad. Pure: stdlib, the outcome field types and ``domain.text``."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from domain.calls.outcome_types import ENUM, FIELD_NAME_PATTERN, FIELD_TYPES, INTEGER, STRING, is_field_name
from domain.flows import keypad
from domain.flows.problems import FlowProblems, quoted, shown
from domain.text import unsafe_text

MESSAGE, QUESTION, BRANCH, TRANSFER, END = "message", "question", "branch", "transfer", "end"
NODE_TYPES = (MESSAGE, QUESTION, BRANCH, TRANSFER, END)
# Where a call may end: an end, and a transfer a destination answered (one nobody answered takes the
# transfer's one outgoing edge when it has it, and ends the call when it has none).
TERMINAL_TYPES = (TRANSFER, END)
# The product spec forbids both (SPEC.md Flow: "Snippet and custom-tool nodes are rejected").
UNSUPPORTED = {"snippet": "snippet_not_supported", "custom_tool": "custom_tool_not_supported"}
NODE_KEYS = {
    MESSAGE: ("id", "type", "text"),
    QUESTION: ("id", "type", "text", "field", "field_type", "values", "keypad"),
    BRANCH: ("id", "type"),
    TRANSFER: ("id", "type", "destination"),
    END: ("id", "type", "text"),
}
KEYPAD_FIELD_TYPES = (STRING, INTEGER)
NODE_ID_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"
_NODE_ID = re.compile(NODE_ID_PATTERN)
MAX_TEXT = 2000
MAX_DESTINATION = 64


def is_node_id(value: Any) -> bool:
    return isinstance(value, str) and _NODE_ID.fullmatch(value) is not None


def read_node(raw: Any, index: int, keypad_defaults: Mapping[str, Any],
              problems: FlowProblems) -> dict[str, Any] | None:
    """The node normalized (its id valid; parts that failed their check are None), or None when it
    has no usable id. An unknown or refused type gives ``{"id", "type"}`` only."""
    if not isinstance(raw, Mapping):
        problems.add(f"#{index}", "invalid_node", f"node {index} must be an object with an id and a type")
        return None
    node_id = raw.get("id")
    label = node_id if is_node_id(node_id) else f"#{index}"
    if label != node_id:
        problems.add(label, "invalid_node", f"node {index} needs an id matching {NODE_ID_PATTERN}")
    type_ = raw.get("type")
    if not isinstance(type_, str) or type_ not in NODE_TYPES:
        _refuse_type(label, type_, problems)
        return {"id": node_id, "type": type_ if isinstance(type_, str) else None} if label == node_id else None
    if unknown := [key for key in raw if key not in NODE_KEYS[type_]]:
        problems.add(label, "invalid_node", f"a {type_} node takes only {', '.join(NODE_KEYS[type_])}; "
                                            f"remove {quoted(unknown)}")
    node: dict[str, Any] = {"id": node_id, "type": type_}
    if type_ in (MESSAGE, QUESTION):
        node["text"] = _text(raw.get("text"), label, f"a {type_} node", problems)
    if type_ == END:
        node["text"] = None if raw.get("text") is None else _text(raw["text"], label, "an end node", problems)
    if type_ == QUESTION:
        _read_question(raw, label, node, keypad_defaults, problems)
    if type_ == TRANSFER:
        node["destination"] = _destination(raw.get("destination"), label, problems)
    return node if label == node_id else None


def _refuse_type(label: str, type_: Any, problems: FlowProblems) -> None:
    if isinstance(type_, str) and type_ in UNSUPPORTED:
        problems.add(label, UNSUPPORTED[type_], f"{type_} nodes are not supported in a flow; "
                                                "use message, question, branch, transfer or end nodes")
    else:
        why = "is missing" if type_ is None else f"{shown(type_)} is not a node type"
        problems.add(label, "unknown_node_type", f"the node's type {why}; use one of {', '.join(NODE_TYPES)}")


def _read_question(raw: Mapping[str, Any], label: str, node: dict[str, Any],
                   keypad_defaults: Mapping[str, Any], problems: FlowProblems) -> None:
    field, type_ = raw.get("field"), raw.get("field_type")
    node["field"] = field if is_field_name(field) else None
    if node["field"] is None:
        problems.add(label, "invalid_field", f"a question needs a field: the outcome field name, "
                                             f"matching {FIELD_NAME_PATTERN}")
    node["field_type"] = type_ if isinstance(type_, str) and type_ in FIELD_TYPES else None
    if node["field_type"] is None:
        problems.add(label, "invalid_field_type", f"a question needs a field_type, one of {', '.join(FIELD_TYPES)}")
    if type_ == ENUM:
        node["values"] = _values(raw.get("values"), label, problems)
    elif raw.get("values") is not None and node["field_type"] is not None:
        problems.add(label, "invalid_field_type", f"values are only for field_type enum, not {type_}")
    node["keypad"] = None  # null counts as left out, here as for every optional key
    if raw.get("keypad") is not None and node["field_type"] is not None:
        node["keypad"] = _keypad(raw["keypad"], label, type_, keypad_defaults, problems)


def _values(value: Any, label: str, problems: FlowProblems) -> list[str] | None:
    if (not isinstance(value, list | tuple) or not value
            or any(not isinstance(item, str) or unsafe_text(item) for item in value)):
        problems.add(label, "invalid_field_type", "an enum question needs values: a non-empty list of strings")
        return None
    return list(value)


def _keypad(raw: Any, label: str, type_: str, defaults: Mapping[str, Any],
            problems: FlowProblems) -> dict[str, Any] | None:
    if type_ not in KEYPAD_FIELD_TYPES:
        problems.add(label, "invalid_keypad", f"keypad entry is only for a string or integer question, not {type_}")
        return None
    own, faults = keypad.read_block(raw, "the question's keypad")
    spec, missing = keypad.merged(defaults, own, "the question's keypad") if not faults else (None, [])
    for fault in faults + missing:
        problems.add(label, "invalid_keypad", fault)
    return spec


def _text(value: Any, label: str, what: str, problems: FlowProblems) -> str | None:
    why = _text_fault(value, MAX_TEXT)
    if why is not None:
        problems.add(label, "missing_text", f"{what} needs a text that {why}")
        return None
    return value.strip()


def _destination(value: Any, label: str, problems: FlowProblems) -> str | None:
    why = _text_fault(value, MAX_DESTINATION)
    if why is not None:
        problems.add(label, "missing_destination", f"a transfer node needs a destination label that {why}")
        return None
    return value.strip()


def _text_fault(value: Any, limit: int) -> str | None:
    if not isinstance(value, str):
        return f"is a non-blank string of at most {limit} characters"
    if not value.strip():
        return "is not blank"
    if len(value.strip()) > limit:
        return f"has at most {limit} characters (it has {len(value.strip())})"
    if (unsafe := unsafe_text(value)) is not None:
        return unsafe.replace("must not", "does not")
    return None
