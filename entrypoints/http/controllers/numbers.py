"""``/v1/numbers``: a tenant's phone numbers (SPEC.md Numbers). Bring-your-own registration of a
number of the verified carrier account, settings, disconnection, reads and the cursor-paged list.

Every route takes ``numbers:write``: the spec names no scope for number reads and has no
``numbers:read`` (docs/decisions.md 26).
"""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, Response, delete, get, patch, post
from litestar.openapi import ResponseSpec
from litestar.params import Parameter
from litestar.status_codes import HTTP_201_CREATED, HTTP_204_NO_CONTENT

from application.numbers import registry, sms
from application.principal import Principal
from domain.accounts.scopes import NUMBERS_WRITE
from entrypoints.http.auth import requires_scope
from entrypoints.http.controllers import managed_numbers as managed
from entrypoints.http.dependencies import provide_numbering, service_and_principal
from entrypoints.http.idempotency import IdempotencyKey
from entrypoints.http.schemas.managed_numbers import ManagedNumberCreate
from entrypoints.http.schemas.number_shapes import SmsPreview
from entrypoints.http.schemas.numbers import (
    ByoNumberCreate,
    NumberPatch,
    NumberView,
    SmsPreviewRequest,
    number_view,
)
from entrypoints.http.schemas.webhooks import ErrorBody
from entrypoints.http.services import NumberingService

NEXT_CURSOR = "X-Next-Cursor"
PREVIEW_ERRORS = {
    403: ResponseSpec(ErrorBody, description="The key lacks numbers:write, or its number_ids leave the number out "
                                             "(insufficient_scope, number_not_allowed)"),
    404: ResponseSpec(ErrorBody, description="No such number of this account, or no such template on it "
                                             "(number_not_found, template_not_found)"),
}


class NumbersController(Controller):
    path = "/v1/numbers"
    tags = ["numbers"]
    dependencies = service_and_principal(provide_numbering)
    guards = [requires_scope(NUMBERS_WRITE)]

    @get("", sync_to_thread=True,
         summary="The tenant's active numbers, oldest first; the next page's cursor is in X-Next-Cursor")
    def list_numbers(
        self, service: NumberingService, principal: Principal,
        limit: Annotated[int, Parameter(ge=1, le=registry.MAX_LIMIT)] = registry.DEFAULT_LIMIT,
        cursor: Annotated[str | None, Parameter(max_length=200)] = None,
    ) -> Response[list[NumberView]]:
        page = registry.list_numbers(service.calling, principal, limit, cursor)
        headers = {}
        if page.next_cursor is not None:
            headers = {NEXT_CURSOR: page.next_cursor,
                       "Link": f'</v1/numbers?limit={limit}&cursor={page.next_cursor}>; rel="next"'}
        return Response([number_view(n) for n in page.numbers], headers=headers)

    @post("/byo", sync_to_thread=True, status_code=HTTP_201_CREATED,
          summary="Register a number of your verified carrier account as an inbound line")
    def register_byo(self, data: ByoNumberCreate, service: NumberingService, principal: Principal) -> NumberView:
        request = registry.ByoNumberRequest(e164=data.e164, settings=data.given())
        return number_view(registry.register_byo(service.calling, principal, request))

    @post("", sync_to_thread=True, status_code=HTTP_201_CREATED, responses=managed.CREATE_ERRORS,
          summary=managed.CREATE_SUMMARY, description=managed.CREATE_DESCRIPTION)
    def provision(self, data: ManagedNumberCreate, service: NumberingService, principal: Principal,
                  idempotency_key: IdempotencyKey = None) -> Response[NumberView]:
        return managed.provision(service, principal, data, idempotency_key, number_view)

    @delete("/{number_id:str}", sync_to_thread=True, status_code=HTTP_204_NO_CONTENT,
            responses=managed.DELETE_ERRORS, summary=managed.RELEASE_SUMMARY)
    def release(self, service: NumberingService, principal: Principal, number_id: str) -> None:
        managed.release(service, principal, number_id)

    @get("/{number_id:str}", sync_to_thread=True, summary="One number (disconnected ones show active=false)")
    def show(self, service: NumberingService, principal: Principal, number_id: str) -> NumberView:
        return number_view(registry.get(service.calling, principal, number_id))

    @patch("/{number_id:str}", sync_to_thread=True, summary="Change some settings; absent fields stay as they are")
    def change(self, data: NumberPatch, service: NumberingService, principal: Principal, number_id: str) -> NumberView:
        return number_view(registry.update(service.calling, principal, number_id, data.given()))

    @delete("/byo/{number_id:str}", sync_to_thread=True, status_code=HTTP_204_NO_CONTENT,
            summary="Disconnect a bring-your-own number; its E.164 can be registered again")
    def disconnect(self, service: NumberingService, principal: Principal, number_id: str) -> None:
        registry.disconnect(service.calling, principal, number_id)

    @post("/{number_id:str}/sms/preview", sync_to_thread=True, status_code=200,
          summary="Dry-run an SMS template against an example outcome built from the number's outcome_schema",
          responses=PREVIEW_ERRORS)
    def preview_sms(self, data: SmsPreviewRequest, service: NumberingService, principal: Principal,
                    number_id: str) -> SmsPreview:
        found = sms.preview(service.calling, principal, number_id, data.template_id)
        return SmsPreview(would_fire=found.would_fire, rendered_body=found.rendered_body)
