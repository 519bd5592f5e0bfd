"""The call record: what ``GET /v1/calls/{call_id}`` and ``POST .../cancel`` answer and the OpenAPI
document shows (``CallRecord.of`` a call), and the batch's 207.

The record is the one definition of a call's fields at the edge: the calls list row
(``list_rows.CallSummary``), the CSV export's columns, the ``call.completed`` payload
(``domain/webhooks/payload.py``) and the client's ``Call`` type each carry a subset of them, and
``tests/contract/test_call_record_shapes.py`` fails when one names a field the record does not
have, types it differently, or shows another value for the same call."""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from domain.calls.call import Call
from domain.calls.pricing import money
from domain.calls.sms import CallSms
from domain.timestamps import iso

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
    routing: Routing | None  # an inbound call's routing by its number (docs/numbers.md "Inbound calls")
    sms: list[SmsSent]  # post-call messages of the call's number (docs/numbers.md)

    @classmethod
    def of(cls, call: Call, sms: CallSms | None = None) -> CallRecord:
        """The full call record: every field of SPEC.md's Call plus the additive ones; ``sms``, the
        call's post-call messages (those of release 0.1.0 are on the call itself)."""
        routing, flow = call.routing, call.flow
        messages = [*call.sms.values(), *(sms.messages.values() if sms is not None else ())]
        return cls(
            call_id=call.call_id,
            status=call.status,  # type: ignore[arg-type]  # one of CallStatus
            to=call.to,
            from_=call.from_number,
            objective=call.objective,
            outcome=call.outcome if call.status == "completed" else None,
            partial_outcome=call.partial_outcome if call.status == "failed" else None,
            transcript=call.transcript,
            confidence=call.confidence,
            duration_seconds=call.duration_seconds,
            cost_voice=money(call.cost_voice),
            cost_extraction=money(call.cost_extraction),
            cost_total=money(call.cost_total),
            error_code=call.error_code,
            error_message=call.error_message,
            recording_url=call.recording_url,
            created_at=iso(call.created_at),  # type: ignore[arg-type]  # always set
            started_at=iso(call.started_at),
            ended_at=iso(call.ended_at),
            direction=call.direction,  # type: ignore[arg-type]
            mode=call.mode,  # type: ignore[arg-type]
            voice_engine=call.voice_engine,
            voice_id=call.voice_id,
            language=call.language,
            consent_type=call.consent_type,
            answered_by=call.answered_by,
            outcome_schema=call.outcome_schema.to_definition(),
            metadata=call.metadata,
            variables=call.variables,
            template_id=call.template_id,
            flow_id=flow.flow_id if flow is not None else None,  # the flow the call runs, and which published version (docs/flows.md)
            flow_version=flow.version if flow is not None else None,
            routing=None if routing is None else Routing(action=routing.action, reason=routing.reason,
                                                         destination=routing.destination),
            sms=[SmsSent(template_id=m.template_id, to=m.to, body=m.body, status=m.status,  # type: ignore[arg-type]
                         sent_at=iso(m.sent_at)) for m in messages],
        )


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
