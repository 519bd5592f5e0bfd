"""Walks of a flow's graph: breadth-first from the start (edges in input order), which nodes can
still reach an ending, and which fields every path to an ending asks. Pure: stdlib only."""

from __future__ import annotations

from collections import deque
from collections.abc import Collection, Mapping, Sequence
from typing import Any

Adjacency = Mapping[str, Sequence[str]]


def adjacency(node_ids: Sequence[str], edges: Sequence[Mapping[str, Any]]) -> dict[str, list[str]]:
    """Each node's successors, in edge order."""
    successors: dict[str, list[str]] = {node_id: [] for node_id in node_ids}
    for edge in edges:
        successors[edge["from"]].append(edge["to"])
    return successors


def breadth_first(start: str, successors: Adjacency, removed: Collection[str] = ()) -> list[str]:
    """The nodes reachable from ``start`` without passing a ``removed`` one, in the order met."""
    if start in removed:
        return []
    order, seen, queue = [start], {start}, deque([start])
    while queue:
        for target in successors[queue.popleft()]:
            if target not in seen and target not in removed:
                seen.add(target)
                order.append(target)
                queue.append(target)
    return order


def reaching(targets: Collection[str], successors: Adjacency) -> set[str]:
    """The nodes from which some node of ``targets`` can be reached (themselves included)."""
    predecessors: dict[str, list[str]] = {node_id: [] for node_id in successors}
    for source, targets_of in successors.items():
        for target in targets_of:
            predecessors[target].append(source)
    found = set(targets)
    queue = deque(node_id for node_id in successors if node_id in found)
    while queue:
        for source in predecessors[queue.popleft()]:
            if source not in found:
                found.add(source)
                queue.append(source)
    return found


def is_required(start: str, successors: Adjacency, askers: Collection[str], endings: Collection[str]) -> bool:
    """True when every path from ``start`` to an ending passes one of ``askers``: without them, no
    ending is reachable."""
    return not any(node_id in endings for node_id in breadth_first(start, successors, set(askers)))
