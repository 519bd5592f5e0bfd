"""The scripted agent on a flow: it walks the published graph step by step (``domain/flows/walk.py``):
says the messages, asks each question with its own words and reads the answer into its field,
follows the branches on the answers so far, and ends or transfers where the graph does. Back after
a transfer nobody answered (``CallBrief.flow_resume``), it goes on at the transfer's fallback step
with the answers it had."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from application.calling.ports import AgentTurn, CallBrief
from domain.flows import walk

CLOSING = "Thank you, goodbye."
TRANSFERRING = "Let me transfer you now, please hold."


class FlowSession:
    def __init__(self, brief: CallBrief) -> None:
        assert brief.flow is not None
        self._brief = brief
        self._graph: Mapping[str, Any] = brief.flow["graph"]
        resume = brief.flow_resume or {}
        self._at: str | None = resume.get("step") or self._graph["start"]
        self._asking: Mapping[str, Any] | None = None
        self.answers: dict[str, Any] = dict(resume.get("answers") or {})
        self._keyed = {node["field"] for node in self._graph["nodes"] if node["type"] == walk.QUESTION
                       and node.get("keypad")}  # their digits stay out of what a transfer records

    @property
    def usage(self) -> dict[str, int]:
        return {}

    @property
    def keypad_step(self) -> Mapping[str, Any] | None:
        """The question step now waiting for digits on the keypad, if any (its ``keypad`` settings)."""
        return self._asking if self._asking is not None and self._asking.get("keypad") else None

    def respond(self, heard: str | None) -> AgentTurn:
        if self._asking is not None:
            self._record(self._asking, heard)
            self._at, self._asking = walk.next_step(self._graph, self._asking["id"], self.answers), None
        said: list[str] = []
        for _ in range(len(self._graph["nodes"]) + 1):  # a walk without a question in between ends: no loop
            if self._at is None:
                break
            step = walk.step(self._graph, self._at)
            kind = step["type"]
            if kind == walk.QUESTION:
                self._asking = step
                return AgentTurn(say=" ".join([*said, step["text"]]))
            if kind == walk.END:
                return AgentTurn(say=" ".join([*said, step.get("text") or CLOSING]), end_call=True)
            if kind == walk.TRANSFER:
                return AgentTurn(say=" ".join([*said, TRANSFERRING]), end_call=True, transfer=True,
                                 transfer_brief=f"From step {step['id']} of the call flow.",
                                 transfer_to=step["destination"], transfer_step=step["id"],
                                 flow_answers={name: value for name, value in self.answers.items()
                                               if name not in self._keyed})
            if kind == walk.MESSAGE:
                said.append(step["text"])
            self._at = walk.next_step(self._graph, step["id"], self.answers)
        return AgentTurn(say=" ".join([*said, CLOSING]), end_call=True)

    def _record(self, step: Mapping[str, Any], heard: str | None) -> None:
        if not heard:
            return
        try:
            value = self._brief.schema.coerce(step["field"], heard)
        except KeyError:
            return
        if value is not None:
            self.answers[step["field"]] = value
