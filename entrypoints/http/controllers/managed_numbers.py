"""What ``POST /v1/numbers`` and ``DELETE /v1/numbers/{id}`` do: managed numbers (SPEC.md "What the
service does" 4), bought on the service's carrier sub-account and released there (docs/numbers.md).

Their routes sit on ``NumbersController`` (one controller per path); reads and settings are its own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec
from litestar import Response
from litestar.openapi import ResponseSpec

from application.numbers import managed
from application.principal import Principal
from domain.calls.idempotency import body_fingerprint
from domain.numbers.number import Number
from entrypoints.http.idempotency import answer_response, checked_key
from entrypoints.http.schemas.managed_numbers import ManagedNumberCreate
from entrypoints.http.schemas.webhooks import ErrorBody
from entrypoints.http.services import NumberingService

_FORBIDDEN = ResponseSpec(ErrorBody, description="The key lacks numbers:write (insufficient_scope), or is "
                                                 "restricted by number_ids (number_not_allowed)")
_UNAVAILABLE = ResponseSpec(ErrorBody, description="Managed numbers are not enabled on this server, or its managed "
                                                   "carrier account is refused (managed_numbers_unavailable); "
                                                   "no Retry-After: the operator must act")
_CARRIER = ResponseSpec(ErrorBody, description="The carrier could not be reached or refused "
                                               "(upstream_unavailable, carrier_refused); nothing was changed")
CREATE_ERRORS = {403: _FORBIDDEN, 409: ResponseSpec(ErrorBody, description=(
    "The Idempotency-Key was used with another body or on another endpoint (idempotency_key_reused), or the "
    "number bought is "
    "registered as another active number (number_taken)")), 502: _CARRIER, 503: _UNAVAILABLE}
DELETE_ERRORS = {403: _FORBIDDEN, 404: ResponseSpec(ErrorBody, description="No such active number (number_not_found)"),
                 409: ResponseSpec(ErrorBody, description="A bring-your-own number: use DELETE /v1/numbers/byo/{id} "
                                                          "(number_not_managed)"),
                 502: _CARRIER, 503: _UNAVAILABLE}


CREATE_SUMMARY = "Buy a managed number in an area code for a supported use case"
CREATE_DESCRIPTION = (
    "Searches the managed carrier account for a number in area_code, buys the first, points its calls and texts "
    "at this service and answers the Number (source managed). 422: use_case_not_supported (ctx.allowed lists the "
    "use cases), no_number_available (at area_code). An Idempotency-Key (24 h) makes a retry answer the first "
    "response and buy nothing more.")
RELEASE_SUMMARY = "Release a managed number at the carrier, then disconnect it (it stays readable, active=false)"


def provision(service: NumberingService, principal: Principal, data: ManagedNumberCreate, idempotency_key: str | None,
              view: Callable[[Number], Any]) -> Response[Any]:
    answer = managed.provision(
        service.calling, service.managed, principal,
        managed.ManagedNumberRequest(area_code=data.area_code, use_case=data.use_case),
        render=lambda number: msgspec.to_builtins(view(number)), key=checked_key(idempotency_key),
        fingerprint=body_fingerprint(data.model_dump(mode="json")))
    return answer_response(answer)


def release(service: NumberingService, principal: Principal, number_id: str) -> None:
    managed.release(service.calling, service.managed, principal, number_id)
