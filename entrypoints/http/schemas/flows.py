"""Bodies and answers of ``/v1/flows`` (SPEC.md Flow; docs/flows.md)."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from pydantic import AfterValidator, Field, StringConstraints

from entrypoints.http.schemas.calls import Strict
from entrypoints.http.schemas.pages import _Page
from entrypoints.http.schemas.text import safe_json, safe_text

Name = Annotated[str, StringConstraints(min_length=1, max_length=200, strip_whitespace=True), AfterValidator(safe_text)]
GRAPH_DOC = (
    'The conversation graph: {"start": <node id>, "nodes": [...], "edges": [...], "clarify_on_uncertainty": {}?, '
    '"keypad": {...}?}. Node types message, question, branch, transfer, end; every shape in docs/flows.md. '
    "A draft is stored whether or not it compiles; publish refuses one that does not.")
Graph = Annotated[dict[str, Any], AfterValidator(safe_json), Field(description=GRAPH_DOC, json_schema_extra={
    "example": {"start": "ask", "nodes": [
        {"id": "ask", "type": "question", "text": "Can you make it tomorrow?", "field": "confirmed",
         "field_type": "boolean"},
        {"id": "bye", "type": "end", "text": "Thank you, goodbye."}], "edges": [{"from": "ask", "to": "bye"}]}})]


class FlowCreateRequest(Strict):
    name: Name
    graph_json: Graph


class FlowPatchRequest(Strict):
    """A new draft: the fields given replace the draft's (neither may be null)."""

    name: Name | None = None
    graph_json: Graph | None = None


class FlowPreviewRequest(Strict):
    graph_json: Annotated[Graph | None, Field(description="An unsaved graph to compile instead of the draft")] = None


class CompiledView(msgspec.Struct, kw_only=True):
    objective: str
    outcome_schema: dict[str, Any]
    tools: list[dict[str, Any]]
    system_prompt: str


class PublishedView(msgspec.Struct, kw_only=True):
    version: int
    published_at: str
    compiled: CompiledView


class FlowResponse(msgspec.Struct, kw_only=True):
    id: str
    name: str
    state: str  # draft | published
    draft_version: int
    graph_json: dict[str, Any]
    published_version: int | None
    published: PublishedView | None  # null before the first publish
    created_at: str
    updated_at: str


class FlowProblemView(msgspec.Struct, kw_only=True):
    node_id: str
    code: str
    message: str


class FlowPreview(msgspec.Struct, kw_only=True):
    ok: bool
    compiled: CompiledView | None
    errors: list[FlowProblemView]


class FlowSummary(msgspec.Struct, kw_only=True):
    id: str
    name: str
    state: str
    draft_version: int
    published_version: int | None
    created_at: str
    updated_at: str


class FlowsPage(_Page, kw_only=True):
    data: list[FlowSummary]  # type: ignore[assignment]
