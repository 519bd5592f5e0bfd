"""The ``call.completed`` payload (SPEC.md Events 3): the spec's fields, plus ``metadata`` (echoed
from the create request) and, for a failed call, ``error_code`` and ``partial_outcome`` (the valid
fields a failed extraction collected, or null; ``outcome`` is then null)."""

from __future__ import annotations

import json
from typing import Any

from domain import ids
from domain.calls.call import Call
from domain.calls.call_rules import FAILED
from domain.calls.pricing import money
from domain.timestamps import iso
from domain.webhooks.endpoint import CALL_COMPLETED


def event_id(call: Call) -> str:
    """``evt_…`` of the call's terminal event: the same call and version always give the same id."""
    return ids.to_public(ids.EVENT, ids.deterministic("call-event", f"{call.id}:{call.version}"))


def call_completed(call: Call) -> dict[str, Any]:
    data: dict[str, Any] = {
        "call_id": call.call_id,
        "status": call.status,
        "to": call.to,
        "from": call.from_number,
        "objective": call.objective,
        "outcome": None if call.status == FAILED else call.outcome,
        "transcript": call.transcript,
        "duration_seconds": call.duration_seconds,
        "cost_total": money(call.cost_total),
        "metadata": call.metadata,
    }
    if call.status == FAILED:
        data["error_code"] = call.error_code
        data["partial_outcome"] = call.partial_outcome
    return {"id": event_id(call), "type": CALL_COMPLETED, "created_at": iso(call.ended_at), "data": data}


def encode(payload: dict[str, Any]) -> str:
    """The body every attempt sends, byte for byte (signatures cover these exact bytes)."""
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
