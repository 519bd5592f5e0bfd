"""The scripted agent: offline and deterministic. It asks for each outcome field in turn and
reads the answers back into typed values (the default when no model key is configured)."""

from __future__ import annotations

from adapters.scripted.flow_session import FlowSession
from application.calling.ports import AgentTurn, CallBrief, Extraction
from domain.calls.outcome_schema import FieldSpec
from domain.calls.outcome_types import field_type

CLOSING = "Thank you, that is everything I needed. Goodbye."
TRANSFERRING = "Of course. Let me transfer you now, please hold."
# Words that make the scripted agent hand the call over, when the number has transfer destinations.
TRANSFER_WORDS = ("transfer", "a person", "a human", "representative", "operator")


def label(spec: FieldSpec) -> str:
    return spec.name.replace("_", " ")


def question_for(spec: FieldSpec) -> str:
    text = f"Could you tell me the {label(spec)}"
    if spec.description:
        text += f" ({spec.description.strip().rstrip('?.')})"
    return text + field_type(spec.type).ask(spec.values or ())


class ScriptedSession:
    def __init__(self, brief: CallBrief) -> None:
        self._brief = brief
        self._next = 0

    @property
    def usage(self) -> dict[str, int]:
        return {}

    def respond(self, heard: str | None) -> AgentTurn:
        if self._brief.can_transfer and heard and any(word in heard.lower() for word in TRANSFER_WORDS):
            return AgentTurn(say=TRANSFERRING, transfer=True, transfer_brief=f"The caller asked: {heard.strip()}")
        fields = self._brief.schema.fields
        if self._next >= len(fields):
            return AgentTurn(say=CLOSING, end_call=True)
        spec = fields[self._next]
        self._next += 1
        question = question_for(spec)
        if heard is None:
            return AgentTurn(say=f"Hello, I am calling about the following: {self._brief.objective.strip()} {question}")
        return AgentTurn(say=question)


class ScriptedBrain:
    name = "scripted"
    instant = True  # no I/O: a live call's turn may run on the event loop

    def open(self, brief: CallBrief) -> ScriptedSession | FlowSession:
        return FlowSession(brief) if brief.flow is not None else ScriptedSession(brief)


def _spoken_reply(lines: list[tuple[str, str, str]], start: int) -> str | None:
    """The callee's first spoken line from ``start`` on, keypad entries skipped; None when the agent
    speaks first."""
    for speaker, _, text in lines[start:]:
        if speaker != "callee":
            return None
        if not text.startswith("[keypad:"):
            return text
    return None


def _flow_asks(brief: CallBrief) -> dict[str, list[str]]:
    """A flow's questions by field: what the agent said when it asked each (``FlowSession``)."""
    asks: dict[str, list[str]] = {}
    for node in ((brief.flow or {}).get("graph") or {}).get("nodes", ()):
        if node["type"] == "question":
            asks.setdefault(node["field"], []).append(node["text"])
    return asks


def _monologue(brief: CallBrief, lines: list[tuple[str, str, str]]) -> dict[str, str]:
    """A message no agent asked for (a voicemail): all the caller said fills the schema's first
    text field; the other fields stay unknown."""
    said = " ".join(text for speaker, _, text in lines if speaker == "callee" and not text.startswith("[keypad:"))
    first = next((spec for spec in brief.schema.fields if spec.type == "string"), None)
    return {first.name: said} if first is not None and said else {}


class ScriptedExtractor:
    """Maps the answer that followed each question to the field's type (no model, no tokens)."""

    name = "scripted"

    def extract(self, brief: CallBrief, transcript: str, *, problems: list[str] | None = None) -> Extraction:
        lines = [line.partition(": ") for line in transcript.splitlines()]
        flow_asks = _flow_asks(brief)
        answers: dict[str, str] = {}
        for index, (speaker, _, text) in enumerate(lines):
            if speaker != "agent":
                continue
            for spec in brief.schema.fields:
                asked = [question_for(spec), *flow_asks.get(spec.name, ())]
                if any(text.endswith(question) for question in asked):
                    reply = _spoken_reply(lines, index + 1)
                    if reply is not None:
                        answers[spec.name] = reply
        if not any(speaker == "agent" for speaker, _, _ in lines):
            answers = _monologue(brief, lines)
        outcome: dict = {}
        for spec in brief.schema.fields:
            value = brief.schema.coerce(spec, answers[spec.name]) if spec.name in answers else None
            if value is not None:
                outcome[spec.name] = value
            elif spec.optional:
                outcome[spec.name] = None
        determined = sum(1 for spec in brief.schema.fields if outcome.get(spec.name) is not None)
        confidence = round(determined / len(brief.schema.fields), 2) if brief.schema.fields else 1.0
        return Extraction(outcome=outcome, confidence=confidence, usage={})
