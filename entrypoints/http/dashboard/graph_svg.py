"""A flow's ``graph_json`` drawn as SVG on the server: a layered, top-down layout (each node in the
row of its distance from ``start``; nodes no walk from ``start`` reaches in rows below), a box per
node with its id, type and label, an arrow per edge (a condition's text beside it), and the
preview's errors drawn on their nodes (class ``graph-error``, the message under the box).

Every text is escaped with ``markupsafe.escape``; the result is ``Markup``. Any JSON is drawn as
far as it makes sense: a graph the compiler refuses is exactly what needs looking at.
"""

from __future__ import annotations

import textwrap
from collections import deque
from typing import Any

from markupsafe import Markup, escape

BOX_W, BOX_H, GAP_X, GAP_Y, MARGIN, PER_ROW = 190, 66, 40, 56, 16, 4
LINE_H, WRAP, MAX_ERROR_LINES, LABEL_WRAP = 14, 32, 8, 25


def _nodes(graph: Any) -> list[tuple[str, dict[str, Any]]]:
    """(id, node) of each node; a node without a usable id is ``#<index>`` (as the compiler names it)."""
    raw = graph.get("nodes") if isinstance(graph, dict) else None
    found: list[tuple[str, dict[str, Any]]] = []
    seen: set[str] = set()
    for index, node in enumerate(raw if isinstance(raw, list) else []):
        node = node if isinstance(node, dict) else {}
        node_id = node.get("id") if isinstance(node.get("id"), str) and node.get("id") else f"#{index}"
        if node_id in seen:
            node_id = f"#{index}"
        seen.add(node_id)
        found.append((node_id, node))
    return found


def _edges(graph: Any, ids: set[str]) -> list[tuple[str, str, str]]:
    raw = graph.get("edges") if isinstance(graph, dict) else None
    edges = []
    for edge in raw if isinstance(raw, list) else []:
        if isinstance(edge, dict) and edge.get("from") in ids and edge.get("to") in ids:
            edges.append((str(edge["from"]), str(edge["to"]), _condition(edge.get("when"))))
    return edges


def _condition(when: Any) -> str:
    if not isinstance(when, dict):
        return ""
    value = when.get("value")
    shown = "" if "value" not in when else (" " + ("true" if value is True else "false" if value is False else str(value)))
    return f"{when.get('field', '?')} {when.get('op', '?')}{shown}"


def _label(node: dict[str, Any]) -> str:
    for key in ("text", "field", "destination"):
        if isinstance(node.get(key), str) and node[key].strip():
            return str(node[key]).strip()
    return ""


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _label_lines(label: str) -> list[str]:
    """At most two lines of the label; the second ends with an ellipsis when more is left out."""
    lines = textwrap.wrap(label, LABEL_WRAP) or [""]
    if len(lines) > 2:
        lines = [lines[0], _short(lines[1] + " " + lines[2], LABEL_WRAP)]
    return [_short(line, LABEL_WRAP) for line in lines[:2]]


def _layers(order: list[str], start: Any, edges: list[tuple[str, str, str]]) -> list[list[str]]:
    """Rows of node ids: breadth-first distance from ``start``; the unreached each start a walk of
    their own below; a row wider than ``PER_ROW`` wraps."""
    after: dict[str, list[str]] = {node_id: [] for node_id in order}
    for source, target, _ in edges:
        after[source].append(target)
    depth: dict[str, int] = {}
    roots = ([start] if start in after else []) + order
    base = 0
    for root in roots:
        if root in depth:
            continue
        depth[root] = base
        queue = deque([root])
        while queue:
            here = queue.popleft()
            for nxt in after[here]:
                if nxt not in depth:
                    depth[nxt] = depth[here] + 1
                    queue.append(nxt)
        base = max(depth.values()) + 1
    rows: list[list[str]] = []
    for level in range(max(depth.values(), default=-1) + 1):
        members = [node_id for node_id in order if depth[node_id] == level]
        rows.extend(members[i:i + PER_ROW] for i in range(0, len(members), PER_ROW))
    return rows


def _error_lines(messages: list[str]) -> list[str]:
    marked = [f"• {message}" for message in messages] if len(messages) > 1 else messages
    lines = [line for message in marked for line in textwrap.wrap(message, WRAP)]
    return lines[:MAX_ERROR_LINES - 1] + ["…"] if len(lines) > MAX_ERROR_LINES else lines


def draw(graph: Any, errors: dict[str, list[str]] | None = None, *, title: str = "Flow graph") -> Markup:
    """The SVG of ``graph``; ``errors`` maps a node id to the preview's messages about it."""
    errors = errors or {}
    nodes = _nodes(graph)
    if not nodes:
        return Markup('<p class="muted">This graph has no nodes to draw.</p>')
    by_id = dict(nodes)
    edges = _edges(graph, set(by_id))
    rows = _layers([node_id for node_id, _ in nodes], graph.get("start"), edges)
    widest = max(len(row) for row in rows)
    width = MARGIN * 2 + widest * BOX_W + (widest - 1) * GAP_X
    place: dict[str, tuple[float, float]] = {}
    y = MARGIN
    for row in rows:
        extra = max(len(_error_lines(errors.get(node_id, []))) for node_id in row) * LINE_H
        left = MARGIN + (width - MARGIN * 2 - (len(row) * BOX_W + (len(row) - 1) * GAP_X)) / 2
        for i, node_id in enumerate(row):
            place[node_id] = (left + i * (BOX_W + GAP_X), y)
        y += BOX_H + extra + GAP_Y
    height = y - GAP_Y + MARGIN
    if any(place[target][1] <= place[source][1] for source, target, _ in edges):
        width += GAP_X  # room for the arrows that go back up the right side
    parts = [f'<svg class="graph" xmlns="http://www.w3.org/2000/svg" role="img" aria-labelledby="graph-title" '
             f'width="{width:.0f}" height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}">',
             f'<title id="graph-title">{escape(title)}</title>',
             '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" markerHeight="8" '
             'orient="auto-start-reverse"><path d="M0 0 L10 5 L0 10 z" class="graph-arrow"/></marker></defs>']
    parts.extend(_edge(place, source, target, when, errors) for source, target, when in edges)
    for node_id, node in nodes:
        parts.append(_node(node_id, node, place[node_id], errors.get(node_id, [])))
    parts.append("</svg>")
    return Markup("".join(parts))


def _edge(place: dict[str, tuple[float, float]], source: str, target: str, when: str,
          errors: dict[str, list[str]]) -> str:
    (sx, sy), (tx, ty) = place[source], place[target]
    drop = BOX_H + len(_error_lines(errors.get(source, []))) * LINE_H
    if ty > sy:  # downwards: bottom centre to top centre
        x1, y1, x2, y2 = sx + BOX_W / 2, sy + drop, tx + BOX_W / 2, ty
        path = f"M{x1:.0f} {y1:.0f} C{x1:.0f} {y1 + 24:.0f} {x2:.0f} {y2 - 24:.0f} {x2:.0f} {y2:.0f}"
    else:  # back or sideways: out of the right side, into the target's right side
        x1, y1, x2, y2 = sx + BOX_W, sy + BOX_H / 2, tx + BOX_W, ty + BOX_H / 2
        bend = max(x1, x2) + GAP_X * 0.8
        path = f"M{x1:.0f} {y1:.0f} C{bend:.0f} {y1:.0f} {bend:.0f} {y2:.0f} {x2:.0f} {y2:.0f}"
    out = f'<path class="graph-edge" d="{path}" marker-end="url(#arrow)"/>'
    if when:
        mx, my = x1 + (x2 - x1) * 0.6, y1 + (y2 - y1) * 0.6
        out += (f'<text class="graph-when" x="{mx:.0f}" y="{my:.0f}" text-anchor="middle">'
                f'{escape(_short(when, 28))}</text>')
    return out


def _node(node_id: str, node: dict[str, Any], at: tuple[float, float], messages: list[str]) -> str:
    x, y = at
    kind = node.get("type") if isinstance(node.get("type"), str) else "?"
    label = _label(node)
    classes = "graph-node graph-error" if messages else "graph-node"
    out = [f'<g class="graph-node-group" data-node-id="{escape(node_id)}">',
           f'<rect class="{classes}" x="{x:.0f}" y="{y:.0f}" width="{BOX_W}" height="{BOX_H}" rx="6"/>',
           f'<text class="graph-id" x="{x + 10:.0f}" y="{y + 19:.0f}">{escape(_short(node_id, 24))}</text>',
           f'<text class="graph-type" x="{x + BOX_W - 10:.0f}" y="{y + 19:.0f}" text-anchor="end">'
           f'{escape(_short(kind, 12))}</text>',
           *(f'<text class="graph-label" x="{x + 10:.0f}" y="{y + 40 + i * 15:.0f}">{escape(line)}</text>'
             for i, line in enumerate(_label_lines(label)))]
    if label and " ".join(_label_lines(label)) != " ".join(label.split()):
        out.append(f"<title>{escape(label)}</title>")
    for i, line in enumerate(_error_lines(messages)):
        out.append(f'<text class="graph-error-text" x="{x:.0f}" y="{y + BOX_H + 14 + i * LINE_H:.0f}">'
                   f"{escape(line)}</text>")
    out.append("</g>")
    return "".join(out)
