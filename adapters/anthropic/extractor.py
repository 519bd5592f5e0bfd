"""``AnthropicExtractor``: transcript + objective + schema → outcome, through one forced call of
the ``record_outcome`` tool whose input schema is the compiled outcome schema plus a confidence.

It never validates: the runner re-validates and retries once with the problems found."""

from __future__ import annotations

import math
from typing import Any

import structlog

from adapters.anthropic.client import ModelAdapter, calling_model
from adapters.anthropic.prompts import EXTRACTOR_SYSTEM, extraction_prompt
from application.calling.ports import CallBrief, Extraction
from domain.calls.outcome_schema import OutcomeSchema

RECORD_OUTCOME = "record_outcome"
CONFIDENCE = "confidence"
# Field names start with a letter (outcome_types.FIELD_NAME_PATTERN), so this one cannot clash
# when a field is named "confidence".
CONFIDENCE_FALLBACK = "_confidence"
DEFAULT_MAX_TOKENS = 2048

log = structlog.get_logger(__name__)


def confidence_key(schema: OutcomeSchema) -> str:
    return CONFIDENCE_FALLBACK if any(spec.name == CONFIDENCE for spec in schema.fields) else CONFIDENCE


def record_outcome_tool(schema: OutcomeSchema) -> dict[str, Any]:
    key = confidence_key(schema)
    input_schema = schema.json_schema
    input_schema["properties"][key] = {
        "type": "number", "minimum": 0, "maximum": 1,
        "description": "How sure you are that the whole outcome is right, from 0 to 1.",
    }
    input_schema["required"] = [*input_schema["required"], key]
    return {"name": RECORD_OUTCOME, "description": "Record the outcome of the call.", "input_schema": input_schema}


def clamp_confidence(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return 0.0
    return min(1.0, max(0.0, float(value)))


class AnthropicExtractor(ModelAdapter):
    name = "anthropic"
    default_max_tokens = DEFAULT_MAX_TOKENS

    def extract(self, brief: CallBrief, transcript: str, *, problems: list[str] | None = None) -> Extraction:
        today = brief.at or (self._clock() if self._clock is not None else None)
        prompt = extraction_prompt(brief, transcript, problems, today)
        with calling_model("extraction", self.model):
            message = self._client.messages.create(
                model=self.model, max_tokens=self._max_tokens, system=EXTRACTOR_SYSTEM,
                messages=[{"role": "user", "content": prompt}],
                tools=[record_outcome_tool(brief.schema)],
                tool_choice={"type": "tool", "name": RECORD_OUTCOME},
            )
        recorded = next((block.input for block in message.content
                         if block.type == "tool_use" and block.name == RECORD_OUTCOME), None)
        outcome = dict(recorded) if isinstance(recorded, dict) else {}
        confidence = clamp_confidence(outcome.pop(confidence_key(brief.schema), None))
        usage = {"input_tokens": message.usage.input_tokens, "output_tokens": message.usage.output_tokens}
        log.info("outcome.extracted", model=self.model, retry=bool(problems), recorded=recorded is not None,
                 stop_reason=message.stop_reason, **usage)
        return Extraction(outcome=outcome, confidence=confidence, usage=usage)
