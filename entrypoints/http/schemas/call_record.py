"""The call record as ``GET /v1/calls/{call_id}`` answers it (entrypoints/http/serializers.py
``call_record``) and the batch's 207, typed for the OpenAPI document: the handlers build them as
plain data, these types describe them field by field."""

from __future__ import annotations

from typing import Any, Literal

import msgspec

CallStatus = Literal["queued", "in_progress", "completed", "failed"]


class Routing(msgspec.Struct, kw_only=True):
    action: str  # agent, voicemail, transfer, message, hangup
    reason: str
    destination: str | None


class SmsSent(msgspec.Struct, kw_only=True):
    template_id: str
    to: str
    body: str
    status: Literal["sending", "sent", "failed"]
    sent_at: str | None


class CallRecord(msgspec.Struct, kw_only=True):
    call_id: str
    status: CallStatus
    to: str
    from_: str = msgspec.field(name="from")
    objective: str
    outcome: dict[str, Any] | None  # a completed call's, following outcome_schema
    partial_outcome: dict[str, Any] | None  # a failed extraction's valid fields
    transcript: str
    confidence: float | None
    duration_seconds: int | None
    cost_voice: str  # decimal string, four places
    cost_extraction: str
    cost_total: str
    error_code: str | None
    error_message: str | None
    recording_url: str | None
    created_at: str
    started_at: str | None
    ended_at: str | None
    direction: Literal["outbound", "inbound"]
    mode: Literal["live", "simulated"]
    voice_engine: str
    voice_id: str | None
    language: str
    consent_type: str
    answered_by: str | None
    outcome_schema: dict[str, dict[str, Any]]  # {field: {type, optional, description?, values?}}
    metadata: dict[str, Any]
    variables: dict[str, str]
    template_id: str | None
    flow_id: str | None
    flow_version: int | None
    routing: Routing | None
    sms: list[SmsSent]


class BatchError(msgspec.Struct, kw_only=True):
    code: str
    message: str


class BatchItemResult(msgspec.Struct, kw_only=True):
    to: str
    call_id: str | None  # null when rejected
    status: str  # queued, or rejected
    error: BatchError | None = None


class BatchAnswer(msgspec.Struct, kw_only=True):
    accepted: int
    rejected: int
    items: list[BatchItemResult]
