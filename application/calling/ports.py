"""Ports of the calling boundary: the agent brain, the outcome extractor and the simulated callee."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from domain.calls.outcome_schema import OutcomeSchema


@dataclass(frozen=True, kw_only=True)
class CallBrief:
    """What the agent knows before the call: the goal, the outcome to reach, the context."""

    objective: str
    schema: OutcomeSchema
    variables: dict[str, str] = field(default_factory=dict)
    language: str = "en-US"
    model: str | None = None  # the engine profile's model; None: the brain's default
    can_transfer: bool = False  # the number has transfer destinations: offer ``transfer_call``
    at: datetime | None = None  # when the call takes place (a simulated call's ``simulation.at``); None: now
    inbound: bool = False  # the other party called the number (the callee is the caller)
    persona: str | None = None  # how the agent comes across (an inbound number's ``persona``)
    flow: Mapping[str, Any] | None = None  # a flow's published version: {graph, system_prompt, tools, ...}
    # A flow call back with the agent after a transfer nobody answered: {step, answers}, where the
    # walk goes on and the answers it had (``Call.transfer_fallback``); None: the flow starts at its start.
    flow_resume: Mapping[str, Any] | None = None


@dataclass(frozen=True, kw_only=True)
class AgentTurn:
    say: str | None = None
    press_keys: str | None = None
    end_call: bool = False
    transfer: bool = False  # hand the caller over to the number's transfer destinations
    transfer_brief: str = ""  # what the person taking the call should know
    transfer_to: str | None = None  # a destination's label (a flow's transfer step); None: the number's, in order
    transfer_step: str | None = None  # the flow's transfer step, where a transfer nobody answered may go on
    flow_answers: Mapping[str, Any] | None = None  # with ``transfer_step``: the flow's answers so far


class AgentSession(Protocol):
    def respond(self, heard: str | None) -> AgentTurn:
        """The agent's next move; ``heard`` is None when the agent speaks first."""
        ...

    @property
    def usage(self) -> dict[str, int]: ...


class AgentBrain(Protocol):
    """An ``instant`` attribute set to True says its sessions answer without I/O, in microseconds
    (a live call then takes its turns on the event loop instead of a thread)."""

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


class SpeechListener(Protocol):
    def feed(self, frame: bytes) -> str | None:
        """One inbound audio frame; a finished utterance's text when this frame ended it. Called on
        the event loop for every frame (50 a second per call): it must only buffer and detect; an
        engine that decodes μ-law, resamples or recognises speech does that on its own thread."""
        ...

    @property
    def speaking(self) -> bool:
        """The caller is speaking now (an utterance has begun and not ended): barge-in."""
        ...


class SpeechEngine(Protocol):
    """Speech to text and text to speech for the audio stream transport (μ-law 8 kHz frames)."""

    def listener(self) -> SpeechListener: ...

    def speak(self, text: str) -> list[bytes]:
        """The 20 ms frames that say ``text`` (called on a worker thread, with the agent's turn)."""
        ...


@dataclass(frozen=True, kw_only=True)
class KeypadPress:
    """A simulated callee's answer on the keypad: ``digits`` for a flow's keypad ``field``."""

    field: str
    digits: str
    masked: bool = True  # shown as ``*`` in the transcript


class Callee(Protocol):
    """The other party of a simulated call."""

    def reply(self, agent_said: str) -> str | KeypadPress | None:
        """What the callee says back (or presses); None when the callee hangs up."""
        ...
