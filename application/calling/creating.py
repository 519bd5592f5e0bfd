"""``POST /v1/calls`` as one use case: the common create on the event loop, anything else in a thread.

The common case (a simulated call, a key not seen before, rules that hold) never leaves the loop:
one coalesced read of the suppression index's version, the rules, and a commit through the loop's
group committer. Live calls (they read the tenant's carrier credentials), a key used before and a
refusal while a key may hold an earlier answer go through ``run_once`` on a thread.
"""

from __future__ import annotations

from typing import Any

from application.calling.app import Calling
from application.calling.create import LIVE, CallRequest, complete, prepare_call
from application.calling.idempotency import Answer, run_once, save_first_time
from application.calling.suppressions import NOT_REMEMBERED, index_of, remembered_index
from application.errors import ValidationFailedError
from application.ports import FreshReads, Offload
from application.flows.flows import flowed_request
from application.templates.templates import filled_request
from application.principal import Principal
from domain.calls.call import Call
from domain.calls.suppression import SuppressionIndex
from domain.errors import RequestRuleError

ENDPOINT = "POST /v1/calls"
BODY: list[str | int] = ["body"]


def created(call: Call) -> dict[str, Any]:
    return {"call_id": call.call_id, "status": call.status}


async def create_call(calling: Calling, principal: Principal, request: CallRequest, *, key: str | None,
                      fingerprint: str, reads: FreshReads | None, offload: Offload) -> Answer:
    answer = await _on_loop(calling, principal, request, key, fingerprint, reads, offload)
    if answer is not None:
        return answer

    def produce() -> tuple[list[Any], int, dict[str, Any]]:
        ready = complete(filled_request(calling, principal, flowed_request(calling, principal, request, BODY), BODY),
                         BODY)
        call = prepare_call(calling, principal, ready, calling.ports.clock())
        return [call], 201, created(call)

    return await offload(run_once, calling, principal, endpoint=ENDPOINT, key=key, fingerprint=fingerprint,
                         produce=produce)


async def _on_loop(calling: Calling, principal: Principal, request: CallRequest, key: str | None, fingerprint: str,
                   reads: FreshReads | None, offload: Offload) -> Answer | None:
    """The answer, or ``None`` to go through ``run_once``: the key was used before, or the rules
    refused the call while a key may hold an earlier answer to replay."""
    if (reads is None or not calling.commits.asynchronous or request.mode == LIVE or request.from_number is not None
            or request.template_id is not None or request.flow_id is not None):
        return None  # the caller number's rules, a template and a flow are read from the store: in a thread
    version = await reads.calling_version(SuppressionIndex.create_id(principal.tenant_id))
    index = remembered_index(calling, principal.tenant_id, version)
    if index is NOT_REMEMBERED:
        index = await offload(index_of, calling, principal.tenant_id)
    now = calling.ports.clock()
    try:
        call = prepare_call(calling, principal, complete(request, BODY), now, suppressions=index)
    except (ValidationFailedError, RequestRuleError):
        if key is None:
            raise
        return None
    return await save_first_time(calling, principal, endpoint=ENDPOINT, key=key, fingerprint=fingerprint,
                                 aggregates=[call], status=201, body=created(call), now=now)
