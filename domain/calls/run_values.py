"""What a call runs, as the ``Queued`` event says it: the simulated callee (``Simulation``) and the
published flow version the agent follows (``FlowRun``). Frozen values, built once from the event."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any


@dataclass(frozen=True, kw_only=True)
class Simulation:
    """A simulated call's callee (SPEC.md ``simulation``): what it knows, who it is, who answers and when."""

    facts: Mapping[str, Any] | None = None
    persona: str | None = None
    answered_by: str | None = None  # human (the default), a machine's answer, or no_answer
    at: str | None = None  # ISO 8601: the instant the call takes place

    @classmethod
    def of(cls, stored: Mapping[str, Any] | None) -> Simulation | None:
        return None if stored is None else cls(facts=stored.get("facts"), persona=stored.get("persona"),
                                               answered_by=stored.get("answered_by"), at=stored.get("at"))

    @property
    def instant(self) -> datetime | None:
        return datetime.fromisoformat(self.at) if self.at else None

    def as_dict(self) -> dict[str, Any]:
        """As stored: the fields given."""
        given = {"persona": self.persona, "facts": self.facts, "answered_by": self.answered_by, "at": self.at}
        return {name: value for name, value in given.items() if value is not None}


@dataclass(frozen=True, kw_only=True)
class FlowRun:
    """The published version of a flow a call runs (docs/flows.md), frozen at the call's creation."""

    flow_id: str | None
    version: int | None
    graph: Mapping[str, Any]  # the compiled graph: start, nodes, edges
    system_prompt: str
    tools: tuple[Mapping[str, Any], ...]

    @classmethod
    def of(cls, stored: Mapping[str, Any] | None) -> FlowRun | None:
        return None if stored is None else cls(flow_id=stored.get("flow_id"), version=stored.get("version"),
                                               graph=stored.get("graph") or {}, system_prompt=stored.get("system_prompt", ""),
                                               tools=tuple(stored.get("tools") or ()))

    def as_dict(self) -> dict[str, Any]:
        return {"flow_id": self.flow_id, "version": self.version, "graph": self.graph,
                "system_prompt": self.system_prompt, "tools": list(self.tools)}
