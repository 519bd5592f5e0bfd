"""The system prompt of a compiled flow: one block per step, in the order the normalized graph lists
them, each saying what to do there and where to go next. Pure: stdlib and the outcome field types."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from domain.calls.outcome_types import DATE, DATETIME, ENUM, field_type
from domain.flows import keypad
from domain.flows.nodes import BRANCH, END, MESSAGE, QUESTION, TRANSFER

OP_WORDS = {"eq": "is", "ne": "is not", "gt": "is greater than", "lt": "is less than",
            "present": "has been answered", "absent": "has not been answered"}
TIME_OP_WORDS = {"gt": "is after", "lt": "is before"}  # for date and datetime fields
CLARIFY = ("If you did not understand an answer or are unsure of it, ask the caller to repeat it "
           "instead of guessing.")


def system_prompt(name: str, graph: Mapping[str, Any]) -> str:
    """From the normalized graph (``CompiledFlow.graph``): blocks separated by a blank line."""
    types = {node["field"]: node["field_type"] for node in graph["nodes"] if node["type"] == QUESTION}
    outgoing: dict[str, list[dict[str, Any]]] = {node["id"]: [] for node in graph["nodes"]}
    for edge in graph["edges"]:
        outgoing[edge["from"]].append(edge)
    intro = (f'You are running the call flow "{name}". Follow its steps in order, starting at step '
             f'{graph["start"]}, and only move on to another step when the steps say so.')
    blocks = [intro, *("\n".join(_step(node, outgoing[node["id"]], types)) for node in graph["nodes"])]
    if graph.get("keypad") is not None:
        blocks.append(keypad_clause(graph["keypad"]))
    if graph["clarify_on_uncertainty"]:
        blocks.append(CLARIFY)
    return "\n\n".join(blocks)


def keypad_clause(defaults: Mapping[str, Any]) -> str:
    """What a flow's keypad block (beside the nodes) tells the agent: digits may be collected on the
    keypad, how an entry ends unless a step says otherwise, and never to read them back."""
    how = ""
    if "ending_mode" in defaults:
        how = f"; unless a step says otherwise, {keypad.describe({**keypad.DEFAULTS, **defaults})}"
    return (f"Answers may be collected as touch-tone digits the caller enters on the phone keypad, at the steps "
            f"that say so{how}. Never read keyed digits back.")


def _step(node: Mapping[str, Any], out: list[dict[str, Any]], types: Mapping[str, str]) -> list[str]:
    head = f"Step {node['id']} ({node['type']}):"
    type_ = node["type"]
    if type_ == MESSAGE:
        return [f"{head} Say: {node['text']}", f"Then go to step {out[0]['to']}."]
    if type_ == QUESTION:
        lines = [f"{head} Ask: {node['text']} Record the answer as {node['field']} ({_field_kind(node)})."]
        if node["keypad"] is not None:
            lines.append(f"The caller enters it on the keypad ({keypad.describe(node['keypad'])}); "
                         "never read the digits back.")
        return [*lines, f"Then go to step {out[0]['to']}."]
    if type_ == BRANCH:
        lines = [f"{head} Choose the next step from the answers recorded so far."]
        lines += [_condition(edge, types) for edge in out if edge["when"] is not None]
        return [*lines, *(f"Otherwise go to step {edge['to']}." for edge in out if edge["when"] is None)]
    if type_ == TRANSFER:
        lines = [f"{head} Transfer the caller to {node['destination']} with transfer_call."]
        return [*lines, *(f"If nobody answers, the call comes back to you: go to step {edge['to']}." for edge in out)]
    if type_ == END and node["text"] is not None:
        return [f"{head} Say: {node['text']} then end the call with end_call."]
    return [f"{head} End the call with end_call."]


def _field_kind(node: Mapping[str, Any]) -> str:
    if node["field_type"] == ENUM:
        return f"enum; {field_type(ENUM).kind(tuple(node['values']))}"
    return str(node["field_type"])


def _condition(edge: Mapping[str, Any], types: Mapping[str, str]) -> str:
    when = edge["when"]
    op = when["op"]
    words = TIME_OP_WORDS.get(op, OP_WORDS[op]) if types[when["field"]] in (DATE, DATETIME) else OP_WORDS[op]
    value = f" {json.dumps(when['value'], ensure_ascii=False)}" if "value" in when else ""
    return f"If {when['field']} {words}{value} go to step {edge['to']}."
