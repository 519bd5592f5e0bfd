"""Ports of the calling boundary: the agent brain, the outcome extractor and the simulated callee."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from domain.calls.outcome_schema import CompiledSchema


@dataclass(frozen=True, kw_only=True)
class CallBrief:
    """What the agent knows before the call: the goal, the outcome to reach, the context."""

    objective: str
    schema: CompiledSchema
    variables: dict[str, str] = field(default_factory=dict)
    language: str = "en-US"


@dataclass(frozen=True, kw_only=True)
class AgentTurn:
    say: str | None = None
    press_keys: str | None = None
    end_call: bool = False


class AgentSession(Protocol):
    def respond(self, heard: str | None) -> AgentTurn:
        """The agent's next move; ``heard`` is None when the agent speaks first."""
        ...

    @property
    def usage(self) -> dict[str, int]: ...


class AgentBrain(Protocol):
    name: str

    def open(self, brief: CallBrief) -> AgentSession: ...


@dataclass(frozen=True, kw_only=True)
class Extraction:
    outcome: dict[str, Any]
    confidence: float
    usage: dict[str, int]


class OutcomeExtractor(Protocol):
    name: str

    def extract(self, brief: CallBrief, transcript: str, *, problems: list[str] | None = None) -> Extraction:
        """Turn the transcript into an outcome; ``problems`` explains why a first attempt was refused."""
        ...


class Callee(Protocol):
    """The other party of a simulated call."""

    def reply(self, agent_said: str) -> str | None:
        """What the callee says back; None when the callee hangs up."""
        ...
