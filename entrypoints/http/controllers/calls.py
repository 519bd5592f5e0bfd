"""``/v1/calls``: create (single and batch, with ``Idempotency-Key``), read and cancel."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Controller, Response, get, post
from litestar.di import Provide
from litestar.params import Parameter
from litestar.status_codes import HTTP_200_OK

from application.calling import batch as batch_use_case
from application.calling.create import CallRequest, prepare_call
from application.calling.idempotency import Answer, run_once
from application.calling.lifecycle import cancel_call, owned_call
from application.errors import FieldError
from application.principal import Principal
from domain.accounts.scopes import CALLS_CREATE, CALLS_READ
from domain.calls.idempotency import body_fingerprint, is_valid_key
from entrypoints.bootstrap import Container
from entrypoints.http.auth import requires_scope
from entrypoints.http.dependencies import provide_principal
from entrypoints.http.schemas.calls import BatchRequest, CallCreateRequest
from entrypoints.http.serializers import call_record

IdempotencyKey = Annotated[str | None, Parameter(header="Idempotency-Key", required=False)]


def _key(value: str | None) -> str | None:
    if value is not None and not is_valid_key(value):
        raise FieldError(["header", "Idempotency-Key"],
                         "Idempotency-Key must be 1 to 255 characters from A-Z a-z 0-9 _ . : -",
                         code="invalid_idempotency_key", value=value[:300])
    return value


def _answer(answer: Answer) -> Response[dict[str, Any]]:
    headers = {"Idempotent-Replayed": "true"} if answer.replayed else None
    return Response(answer.body, status_code=answer.status_code, headers=headers)


def _request(data: CallCreateRequest | BatchRequest, to: str = "") -> CallRequest:
    return CallRequest(
        to=getattr(data, "to", to),
        objective=data.objective,
        outcome_schema=data.outcome_schema,
        consent_type=data.consent_type,
        consent_record_id=getattr(data, "consent_record_id", None),
        voice_id=data.voice_id,
        voice_engine=data.voice_engine,
        language=data.language,
        from_number=data.from_number,
        metadata=data.metadata or {},
        variables=data.variables or {},
        mode=data.mode,
        simulation=data.simulation.model_dump(exclude_none=True) if data.simulation else None,
    )


class CallsController(Controller):
    path = "/v1/calls"
    tags = ["calls"]
    dependencies = {"principal": Provide(provide_principal, sync_to_thread=False)}

    @post("", guards=[requires_scope(CALLS_CREATE)], sync_to_thread=True, status_code=201,
          summary="Create a call; it is queued and runs asynchronously")
    def create(self, data: CallCreateRequest, container: Container, principal: Principal,
               idempotency_key: IdempotencyKey = None) -> Response[dict[str, Any]]:
        calling = container.calling
        request = _request(data)

        def produce():
            call = prepare_call(calling, principal, request, calling.ports.clock())
            return [call], 201, {"call_id": call.call_id, "status": call.status}

        return _answer(run_once(calling, principal, endpoint="POST /v1/calls", key=_key(idempotency_key),
                                fingerprint=body_fingerprint(data.model_dump(mode="json")), produce=produce))

    @post("/batch", guards=[requires_scope(CALLS_CREATE)], sync_to_thread=True, status_code=207,
          summary="Create up to 200 calls; each item is accepted or rejected with a reason")
    def create_batch(self, data: BatchRequest, container: Container, principal: Principal,
                     idempotency_key: IdempotencyKey = None) -> Response[dict[str, Any]]:
        calling = container.calling
        shared = _request(data)
        items = [
            batch_use_case.BatchItem(to=item.to, consent_record_id=item.consent_record_id,
                                     variables=item.variables or {}, metadata=item.metadata or {})
            for item in data.items
        ]

        def produce():
            result = batch_use_case.prepare_batch(calling, principal, shared, items, calling.ports.clock())
            return list(result.calls), 207, result.body

        return _answer(run_once(calling, principal, endpoint="POST /v1/calls/batch", key=_key(idempotency_key),
                                fingerprint=body_fingerprint(data.model_dump(mode="json")), produce=produce))

    @get("/{call_id:str}", guards=[requires_scope(CALLS_READ)], sync_to_thread=True,
         summary="One call: status, outcome, transcript, costs")
    def read(self, container: Container, principal: Principal, call_id: str) -> dict[str, Any]:
        return call_record(owned_call(container.calling, principal, call_id))

    @post("/{call_id:str}/cancel", guards=[requires_scope(CALLS_CREATE)], sync_to_thread=True,
          status_code=HTTP_200_OK, summary="Cancel a call that has not ended (it fails with error_code=cancelled)")
    def cancel(self, container: Container, principal: Principal, call_id: str) -> dict[str, Any]:
        return call_record(cancel_call(container.calling, principal, call_id))


