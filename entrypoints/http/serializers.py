"""Wire views of aggregates that several routes return."""

from __future__ import annotations

from typing import Any

from litestar.serialization import encode_json

from application.head_cache import HeadCache
from domain.calls.call import Call
from domain.calls.pricing import money
from domain.timestamps import iso


_ENCODED = HeadCache(maxsize=2_000)  # a call's record as JSON, by the call's version


def call_record_json(call: Call) -> bytes:
    """``call_record`` encoded, remembered by the call's version: a record is read far more often
    than its call changes."""
    version = call.version
    body = _ENCODED.get(call.call_id, version)
    if body is None:
        body = encode_json(call_record(call))
        if call.version == version:  # not moved while encoding (a cached aggregate fast-forwarded)
            _ENCODED.put(call.call_id, version, body)
    return body


def call_record(call: Call) -> dict[str, Any]:
    """The full call record: every field of SPEC.md's Call plus the additive ones."""
    return {
        "call_id": call.call_id,
        "status": call.status,
        "to": call.to,
        "from": call.from_number,
        "objective": call.objective,
        "outcome": call.outcome if call.status == "completed" else None,
        "partial_outcome": call.partial_outcome if call.status == "failed" else None,
        "transcript": call.transcript,
        "confidence": call.confidence,
        "duration_seconds": call.duration_seconds,
        "cost_voice": money(call.cost_voice),
        "cost_extraction": money(call.cost_extraction),
        "cost_total": money(call.cost_total),
        "error_code": call.error_code,
        "error_message": call.error_message,
        "recording_url": call.recording_url,
        "created_at": iso(call.created_at),
        "started_at": iso(call.started_at),
        "ended_at": iso(call.ended_at),
        "direction": call.direction,
        "mode": call.mode,
        "voice_engine": call.voice_engine,
        "voice_id": call.voice_id,
        "language": call.language,
        "consent_type": call.consent_type,
        "answered_by": call.answered_by,
        "outcome_schema": call.outcome_schema.to_definition(),
        "metadata": call.metadata,
        "variables": call.variables,
        "template_id": getattr(call, "template_id", None),
        # The flow the call runs, and which published version of it (docs/flows.md).
        "flow_id": (getattr(call, "flow", None) or {}).get("flow_id"),
        "flow_version": (getattr(call, "flow", None) or {}).get("version"),
        # An inbound call's routing by its number (docs/numbers.md "Inbound calls"): {action, reason,
        # destination}; null for an outbound call or one not routed yet.
        "routing": getattr(call, "routing", None),
        # Post-call messages of the call's number (docs/numbers.md): status sending | sent | failed.
        "sms": [{"template_id": m["template_id"], "to": m["to"], "body": m["body"], "status": m["status"],
                 "sent_at": iso(m["sent_at"])} for m in getattr(call, "sms", ())],
    }
