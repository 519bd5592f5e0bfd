"""The rows of the read-side lists, typed for the OpenAPI document: the projections' queries build
them as plain data (projections/*/queries.py), these types describe them field by field."""

from __future__ import annotations

from typing import Any

import msgspec

from entrypoints.http.schemas.call_record import CallStatus


class CallSummary(msgspec.Struct, kw_only=True):
    """A row of ``GET /v1/calls`` (projections/calls_list/queries.py); the whole record is
    ``GET /v1/calls/{call_id}``."""

    call_id: str
    status: CallStatus
    to: str
    from_: str = msgspec.field(name="from")
    objective: str
    confidence: float | None
    duration_seconds: int | None
    cost_total: str | None  # decimal string, four places
    error_code: str | None
    recording_url: str | None
    created_at: str
    mode: str
    direction: str
    voice_engine: str
    has_outcome: bool
    metadata: dict[str, Any]


class SuppressionEntry(msgspec.Struct, kw_only=True):
    e164: str
    reason: str | None
    expires_at: str | None
    added_by: str
    added_at: str
    removed_by: str | None
    removed_at: str | None
    active: bool  # neither removed nor expired


class AuditEvent(msgspec.Struct, kw_only=True):
    """One row of the hash-chained audit trail (docs/audit.md)."""

    id: str  # aud_…
    tenant_id: str
    type: str
    actor: str
    subject: str
    occurred_at: str
    data: dict[str, Any]
    prev_hash: str  # the previous row's hash (64 zeros for the first)
    hash: str


class DeliveryAttempt(msgspec.Struct, kw_only=True):
    attempt: int
    manual: bool  # a retry asked for with POST …/retry
    response_status: int | None  # null when no answer came
    response_body: str  # truncated
    latency_ms: int
    error: str | None
    at: str


class DeliveryView(msgspec.Struct, kw_only=True):
    """A row of ``GET /v1/webhooks/{endpoint_id}/deliveries`` with every attempt of it."""

    delivery_id: str  # dlv_…
    delivery_uuid: str  # the X-Service-Delivery-Id header
    endpoint_id: str
    event_id: str
    event_type: str
    call_id: str
    status: str  # pending, delivered, failed, permanently_failed, cancelled
    attempts: list[DeliveryAttempt]
    next_attempt_at: str | None
    created_at: str


class EngineStats(msgspec.Struct, kw_only=True):
    """One engine's terminal calls in the window (projections/voice_model_stats/queries.py)."""

    voice_engine: str
    calls: int
    completed: int
    failed: int
    completion_rate: float | None
    mean_confidence: float | None
    p50_duration_seconds: float | None
    p95_duration_seconds: float | None
    cost_total: str  # decimal string
    cost_per_call: str | None
