"""A fault in a flow's graph, located at a node, and the ordered list they are collected in.
Pure: stdlib only."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

GRAPH = "#graph"  # the node_id of a problem with the graph's own shape


@dataclass(frozen=True, slots=True)
class FlowProblem:
    node_id: str  # the node's id; "#<index>" for a node without a usable id; "#graph" for the graph
    code: str
    message: str

    def to_json(self) -> dict[str, Any]:
        return {"node_id": self.node_id, "code": self.code, "message": self.message}


class FlowProblems(list[FlowProblem]):
    """Problems in the order they were found: the graph's shape, its nodes, edges, paths, fields."""

    def add(self, node_id: str, code: str, message: str) -> None:
        self.append(FlowProblem(node_id or GRAPH, code, message))


def shown(value: Any) -> str:
    """A value a caller sent, for a message: short, and never the repr of a whole structure."""
    if isinstance(value, str):
        return repr(value) if len(value) <= 64 else repr(value[:64]) + "..."
    if value is None or isinstance(value, bool | float) or (isinstance(value, int) and value.bit_length() <= 64):
        return repr(value)
    return f"a {type(value).__name__}"


def quoted(keys: Any) -> str:
    """Keys a caller sent, sorted so the message never depends on dict order."""
    return ", ".join(sorted(shown(key) for key in keys))
