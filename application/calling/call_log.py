"""One log line per step of a call's life, written when the step is committed (so a line means it
happened): queued, started (simulated) or dial requested / dialled (live), answered, completed or
failed, each with ``call_id``, ``tenant_id``, and at the end ``duration_seconds`` and ``error_code``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from application import logs

from domain.calls.call import Call

log = logs.get_logger("callwright.calls")

STEPS = {
    Call.Queued: "call.queued",
    Call.Started: "call.started",
    Call.Restarted: "call.restarted",
    Call.DialRequested: "call.dial_requested",
    Call.Dialed: "call.dialled",
    Call.InboundAnswered: "call.answered",
    Call.Answered: "call.answered",
    Call.Completed: "call.completed",
    Call.Failed: "call.failed",
}


def log_steps(events: Iterable[Any], aggregates: Iterable[Any]) -> None:
    calls = {aggregate.id: aggregate for aggregate in aggregates if isinstance(aggregate, Call)}
    if not calls:
        return
    for event in events:
        step = STEPS.get(type(event))
        call = calls.get(event.originator_id) if step is not None else None
        if call is None:
            continue
        fields: dict[str, Any] = {"call_id": call.call_id, "tenant_id": call.tenant_id, "mode": call.mode,
                                  "direction": call.direction}
        if step in ("call.completed", "call.failed"):
            fields.update(status=call.status, duration_seconds=call.duration_seconds, error_code=call.error_code)
        elif step == "call.answered":
            fields["answered_by"] = call.answered_by
        log.info(step, **fields)
