"""Request and response shapes of ``/v1/calls`` and ``/v1/suppressions``."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Annotated, Any, Literal

import msgspec
from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationInfo,
    field_validator,
)

from domain.calls.outcome_schema import definition_json_schema
from domain.calls.outcome_types import FIELD_NAME_PATTERN
from entrypoints.http.schemas.instants import bounded_instant
from entrypoints.http.schemas.text import safe_json, safe_text

AnsweredBy = Literal[
    "human", "unknown", "machine_start", "machine_end_beep", "machine_end_silence", "machine_end_other", "fax",
    "no_answer",
]
Text = Annotated[str, AfterValidator(safe_text)]
Objective = Annotated[str, StringConstraints(min_length=1, max_length=4000), AfterValidator(safe_text)]
ShortText = Annotated[str, StringConstraints(min_length=1, max_length=128), AfterValidator(safe_text)]
Language = Annotated[str, StringConstraints(pattern=r"^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8}){0,4}$", max_length=35)]
FieldName = Annotated[str, StringConstraints(pattern=FIELD_NAME_PATTERN)]
VariableName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")]
VariableValue = Annotated[str, StringConstraints(max_length=2000), AfterValidator(safe_text)]
MAX_METADATA_BYTES = 16_384


def _bounded_metadata(value: dict[str, Any]) -> dict[str, Any]:
    if len(value) > 50:
        raise ValueError("metadata may have at most 50 keys")
    size = len(json.dumps(value, ensure_ascii=False, default=str).encode("utf-8", "surrogatepass"))
    if size > MAX_METADATA_BYTES:
        raise ValueError(f"metadata may be at most {MAX_METADATA_BYTES} bytes of JSON")
    return safe_json(value)


Metadata = Annotated[dict[str, Any], AfterValidator(_bounded_metadata)]
# Documented from the domain's type table, checked by the domain alone (its 422s, every problem):
# a pydantic model here would answer the same faults in other words.
OutcomeSchemaDefinition = Annotated[dict[str, Any], Field(json_schema_extra=definition_json_schema())]
Variables = Annotated[dict[VariableName, VariableValue], Field(max_length=50)]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SimulationSpec(Strict):
    persona: Annotated[str, StringConstraints(max_length=2000), AfterValidator(safe_text)] | None = None
    facts: Annotated[dict[FieldName, Any], Field(max_length=50), AfterValidator(safe_json)] | None = None
    answered_by: AnsweredBy | None = None
    at: Annotated[AwareDatetime, AfterValidator(bounded_instant), Field(description=(
        "The instant the simulated call takes place: call hours and suppressions are judged at it, and "
        "the agent's sense of today and now is it. Default: the time of the request."))] | None = None


class CallOptions(Strict):
    """Fields a single call and a batch share."""

    template_id: Annotated[str, StringConstraints(max_length=64), Field(
        description="A template (tpl_…) that fills every field this request leaves out")] | None = None
    flow_id: Annotated[str, StringConstraints(max_length=64), Field(
        description="A published flow (flw_…): the call runs its latest published version, whose objective and "
                    "outcome_schema it takes (give neither)")] | None = None
    objective: Annotated[Objective, Field(description="Required unless template_id or flow_id gives it")] | None = None
    outcome_schema: Annotated[dict[str, Any] | None, Field(json_schema_extra={
        **definition_json_schema(), "description": "Required unless template_id gives it. "
        + definition_json_schema().get("description", "")})] = None
    consent_type: Annotated[str, StringConstraints(max_length=64)] | None = None
    voice_id: ShortText | None = None
    voice_engine: Literal["alpha_25", "alpha_31"] | None = None
    language: Annotated[Language, Field(description="BCP-47; default en-US (or the template's)")] | None = None
    from_number: Annotated[str, StringConstraints(max_length=32)] | None = None
    mode: Literal["live", "simulated"] = "live"
    simulation: SimulationSpec | None = None

    @field_validator("simulation")
    @classmethod
    def _at_is_for_simulated_calls(cls, value: SimulationSpec | None, info: ValidationInfo) -> SimulationSpec | None:
        if value is not None and value.at is not None and info.data.get("mode", "live") != "simulated":
            raise ValueError("simulation.at applies to simulated calls only (mode: simulated); "
                             "a live call happens when it is made")
        return value


class CallCreateRequest(CallOptions):
    to: Annotated[str, StringConstraints(max_length=64)]  # the dialing rules explain a bad number
    consent_record_id: ShortText | None = None
    metadata: Metadata | None = None
    variables: Variables | None = None


class BatchItemRequest(Strict):
    to: Annotated[str, StringConstraints(max_length=64)]  # the dialing rules explain a bad number
    consent_record_id: ShortText | None = None
    metadata: Metadata | None = None
    variables: Variables | None = None


class BatchRequest(CallOptions):
    items: Annotated[list[BatchItemRequest], Field(min_length=1, max_length=200)]
    metadata: Metadata | None = None
    variables: Variables | None = None


class SuppressionRequest(Strict):
    e164: Annotated[str, StringConstraints(min_length=1, max_length=64)]
    reason: Annotated[str, StringConstraints(max_length=500), AfterValidator(safe_text)] | None = None
    expires_at: Annotated[datetime, AfterValidator(bounded_instant)] | None = None


class CallCreated(msgspec.Struct, kw_only=True):
    call_id: str
    status: str


class SuppressionAdded(msgspec.Struct, kw_only=True):
    e164: str
    reason: str | None
    expires_at: str | None  # ISO 8601; null: for good
    added_by: str  # who: a key (key_…), a user (usr_…) or the service
    added_at: str


class SuppressionRemoved(msgspec.Struct, kw_only=True):
    status: Literal["removed"]
    e164: str
    removed_at: str | None
