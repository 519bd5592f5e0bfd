"""Walking a compiled flow (its normalized graph, ``CompiledFlow.graph``): which step follows which,
given the answers so far. Pure; the scripted agent walks with it, and so may any runtime.

A message or question step has one next step. A branch takes its first conditional edge whose
condition holds on the answers, else its default edge. An ``end`` step ends the walk, and so does a
``transfer`` step a destination answered; when none answered, the walk goes on along the transfer's
one outgoing edge if it has one (``next_step`` gives it), and ends otherwise.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from domain.flows.nodes import BRANCH, END, MESSAGE, QUESTION, TRANSFER

__all__ = ["BRANCH", "END", "MESSAGE", "QUESTION", "TRANSFER", "condition_holds", "next_step", "step"]


def step(graph: Mapping[str, Any], node_id: str) -> Mapping[str, Any]:
    return next(node for node in graph["nodes"] if node["id"] == node_id)


def condition_holds(condition: Mapping[str, Any], answers: Mapping[str, Any]) -> bool:
    """``{field, op, value}`` on the answers (values as the outcome schema normalizes them, so
    dates and UTC date-times compare as their ISO text)."""
    answer = answers.get(condition["field"])
    op = condition["op"]
    if op == "present":
        return answer is not None
    if op == "absent":
        return answer is None
    if answer is None:
        return False
    wanted = condition.get("value")
    if op == "eq":
        return bool(answer == wanted)
    if op == "ne":
        return bool(answer != wanted)
    try:
        return bool(answer > wanted) if op == "gt" else bool(answer < wanted)
    except TypeError:
        return False


def next_step(graph: Mapping[str, Any], node_id: str, answers: Mapping[str, Any]) -> str | None:
    """The step after ``node_id``; None after an end or a transfer without an edge (after a transfer
    with one: the step a failed transfer continues at)."""
    edges = [edge for edge in graph["edges"] if edge["from"] == node_id]
    for edge in edges:
        if edge.get("when") is not None and condition_holds(edge["when"], answers):
            return str(edge["to"])
    default = next((edge for edge in edges if edge.get("when") is None), None)
    return str(default["to"]) if default is not None else None
