"""Batch creation (SPEC.md "Batch"): every item is validated first; the accepted ones are built
through the single-call path and saved together in one atomic save."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from application.calling.app import Calling
from application.calling.create import CallRequest, check_shared, complete, queue_call
from application.calling.suppressions import index_of
from application.flows.flows import flowed_request
from application.templates.templates import filled_request
from application.principal import Principal
from domain.calls.call import Call
from domain.errors import RequestRuleError

MAX_ITEMS = 200


@dataclass(frozen=True, kw_only=True)
class BatchItem:
    to: str
    consent_record_id: str | None = None
    variables: dict[str, str] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class BatchResult:
    calls: list[Call]
    items: list[dict[str, Any]]

    @property
    def body(self) -> dict[str, Any]:
        accepted = sum(1 for item in self.items if item["call_id"] is not None)
        return {"accepted": accepted, "rejected": len(self.items) - accepted, "items": self.items}


def _rejected(to: str, code: str, message: str) -> dict[str, Any]:
    return {"to": to, "call_id": None, "status": "rejected", "error": {"code": code, "message": message}}


def prepare_batch(calling: Calling, principal: Principal, shared: CallRequest, items: list[BatchItem],
                  now: datetime) -> BatchResult:
    shared = complete(filled_request(calling, principal, flowed_request(calling, principal, shared, ["body"]),
                                     ["body"]), ["body"])
    schema, caller = check_shared(calling, principal, shared)
    suppressions = index_of(calling, principal.tenant_id)  # one read for every item
    calls: list[Call] = []
    results: list[dict[str, Any]] = []
    seen: set[str] = set()
    for index, item in enumerate(items):
        request = replace(shared, to=item.to, consent_record_id=item.consent_record_id or shared.consent_record_id,
                          variables={**shared.variables, **item.variables}, metadata={**shared.metadata, **item.metadata})
        try:
            call = queue_call(calling, principal, request, now, suppressions, from_number=caller, schema=schema)
        except RequestRuleError as exc:
            _, message, code, _ = exc.within(["body", "items", index])[0]
            results.append(_rejected(item.to, code, message))
            continue
        if call.to in seen:
            results.append(_rejected(item.to, "duplicate_in_batch", "this number already appears earlier in the batch"))
            continue
        seen.add(call.to)
        calls.append(call)
        results.append({"to": item.to, "call_id": call.call_id, "status": call.status, "error": None})
    return BatchResult(calls=calls, items=results)
