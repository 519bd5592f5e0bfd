"""Bodies and answers of ``/v1/templates`` (SPEC.md Template; docs/templates.md)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
from pydantic import AfterValidator, Field, StringConstraints

from domain.templates.template import TOOL_NAMES
from entrypoints.http.schemas.calls import Language, Objective, OutcomeSchemaDefinition, Strict, Text
from entrypoints.http.schemas.text import safe_text
from entrypoints.http.schemas.pages import _Page

ToolName = Literal["end_call", "press_keys", "transfer_call"]
assert set(ToolName.__args__) == set(TOOL_NAMES)  # type: ignore[attr-defined] - one list, the domain's
Name = Annotated[str, StringConstraints(min_length=1, max_length=200, strip_whitespace=True), AfterValidator(safe_text)]


class ToolSpec(Strict):
    name: ToolName


class TemplateCreateRequest(Strict):
    name: Name
    objective: Objective
    outcome_schema: OutcomeSchemaDefinition
    description: Annotated[Text, StringConstraints(max_length=2000)] | None = None
    context: Annotated[Text, StringConstraints(max_length=4000), Field(
        description="What the agent may use on every call from this template (reaches it as the variable "
                    "'context' unless the call gives one)")] | None = None
    tools: Annotated[list[ToolSpec], Field(max_length=len(TOOL_NAMES), description=(
        "The agent tools calls from this template may use, by name"))] = []
    consent_type: Annotated[str, StringConstraints(max_length=64)] | None = None
    voice_engine: Annotated[Literal["alpha_25", "alpha_31"] | None, Field(
        description="Left out: the workspace default engine when the template is defined (the account's "
                    "voice_engine_default, else the system default), recorded in the template")] = None
    language: Language = "en-US"


class TemplateResponse(msgspec.Struct, kw_only=True):
    id: str
    name: str
    description: str | None
    objective: str
    context: str | None
    outcome_schema: dict[str, Any]
    tools: list[dict[str, Any]]
    consent_type: str | None
    voice_engine: Annotated[str | None, msgspec.Meta(description=(
        "The engine calls from this template get: the one given, or the workspace default when the "
        "template was defined (null only on templates defined before defaults were recorded)"))]
    language: str
    created_at: str
    created_by: str


class TemplatesPage(_Page, kw_only=True):
    data: list[TemplateResponse]  # type: ignore[assignment]
