"""``/v1/numbers``: a tenant's phone numbers (SPEC.md Numbers). Bring-your-own registration of a
number of the verified carrier account, settings, disconnection, reads and the cursor-paged list.

Every route takes ``numbers:write``: the spec names no scope for number reads and has no
``numbers:read`` (docs/decisions.md 26).
"""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, Response, delete, get, patch, post
from litestar.di import Provide
from litestar.openapi import ResponseSpec
from litestar.params import Parameter
from litestar.status_codes import HTTP_201_CREATED, HTTP_204_NO_CONTENT

from application.numbers import registry, sms
from application.principal import Principal
from domain.accounts.scopes import NUMBERS_WRITE
from domain.numbers.number import Number
from domain.timestamps import iso
from entrypoints.bootstrap import Container
from entrypoints.http.auth import requires_scope
from entrypoints.http.controllers import managed_numbers as managed
from entrypoints.http.idempotency import IdempotencyKey
from entrypoints.http.dependencies import provide_principal
from entrypoints.http.schemas.webhooks import ErrorBody
from entrypoints.http.schemas.managed_numbers import ManagedNumberCreate
from entrypoints.http.schemas.number_shapes import SmsPreview, route_view, template_view
from entrypoints.http.schemas.numbers import (
    ByoNumberCreate,
    NumberPatch,
    NumberView,
    SmsPreviewRequest,
    TransferDestinationView,
)

NEXT_CURSOR = "X-Next-Cursor"
PREVIEW_ERRORS = {
    403: ResponseSpec(ErrorBody, description="The key lacks numbers:write, or its number_ids leave the number out "
                                             "(insufficient_scope, number_not_allowed)"),
    404: ResponseSpec(ErrorBody, description="No such number of this account, or no such template on it "
                                             "(number_not_found, template_not_found)"),
}


def number_view(number: Number) -> NumberView:
    return NumberView(
        id=number.number_id, e164=number.e164, source=number.source, active=number.active,
        objective=number.objective, greeting=number.greeting, greeting_voice_id=number.greeting_voice_id,
        greeting_audio_fresh=number.greeting_audio_fresh, persona=number.persona,
        outcome_schema=number.outcome_schema, recording_enabled=number.recording_enabled,
        voice_engine=number.voice_engine, flow_id=number.flow_id,
        transfer_destinations=[TransferDestinationView(label=d["label"], e164=d["e164"])
                               for d in number.transfer_destinations],
        transfer_max_attempts=number.transfer_max_attempts, language=number.language, timezone=number.timezone,
        hours_json=number.hours_json, overflow_action=number.overflow_action,
        overflow_message=number.overflow_message, routes=[route_view(r) for r in number.routes],
        voicemail_mode=number.voicemail_mode, voicemail_schema=number.voicemail_schema,
        voicemail_persona=number.voicemail_persona, sms_enabled=number.sms_enabled,
        sms_brand_id=number.sms_brand_id, sms_templates=[template_view(t) for t in number.sms_templates],
        created_at=iso(number.created_at) or "", updated_at=iso(number.updated_at),
        disconnected_at=iso(number.disconnected_at),
    )


class NumbersController(Controller):
    path = "/v1/numbers"
    tags = ["numbers"]
    dependencies = {"principal": Provide(provide_principal, sync_to_thread=False)}
    guards = [requires_scope(NUMBERS_WRITE)]

    @get("", sync_to_thread=True,
         summary="The tenant's active numbers, oldest first; the next page's cursor is in X-Next-Cursor")
    def list_numbers(
        self, container: Container, principal: Principal,
        limit: Annotated[int, Parameter(ge=1, le=registry.MAX_LIMIT)] = registry.DEFAULT_LIMIT,
        cursor: Annotated[str | None, Parameter(max_length=200)] = None,
    ) -> Response[list[NumberView]]:
        page = registry.list_numbers(container.calling, principal, limit, cursor)
        headers = {}
        if page.next_cursor is not None:
            headers = {NEXT_CURSOR: page.next_cursor,
                       "Link": f'</v1/numbers?limit={limit}&cursor={page.next_cursor}>; rel="next"'}
        return Response([number_view(n) for n in page.numbers], headers=headers)

    @post("/byo", sync_to_thread=True, status_code=HTTP_201_CREATED,
          summary="Register a number of your verified carrier account as an inbound line")
    def register_byo(self, data: ByoNumberCreate, container: Container, principal: Principal) -> NumberView:
        request = registry.ByoNumberRequest(e164=data.e164, settings=data.given())
        return number_view(registry.register_byo(container.calling, principal, request))

    @post("", sync_to_thread=True, status_code=HTTP_201_CREATED, responses=managed.CREATE_ERRORS,
          summary=managed.CREATE_SUMMARY, description=managed.CREATE_DESCRIPTION)
    def provision(self, data: ManagedNumberCreate, container: Container, principal: Principal,
                  idempotency_key: IdempotencyKey = None) -> Response[NumberView]:
        return managed.provision(container, principal, data, idempotency_key, number_view)

    @delete("/{number_id:str}", sync_to_thread=True, status_code=HTTP_204_NO_CONTENT,
            responses=managed.DELETE_ERRORS, summary=managed.RELEASE_SUMMARY)
    def release(self, container: Container, principal: Principal, number_id: str) -> None:
        managed.release(container, principal, number_id)

    @get("/{number_id:str}", sync_to_thread=True, summary="One number (disconnected ones show active=false)")
    def show(self, container: Container, principal: Principal, number_id: str) -> NumberView:
        return number_view(registry.get(container.calling, principal, number_id))

    @patch("/{number_id:str}", sync_to_thread=True, summary="Change some settings; absent fields stay as they are")
    def change(self, data: NumberPatch, container: Container, principal: Principal, number_id: str) -> NumberView:
        return number_view(registry.update(container.calling, principal, number_id, data.given()))

    @delete("/byo/{number_id:str}", sync_to_thread=True, status_code=HTTP_204_NO_CONTENT,
            summary="Disconnect a bring-your-own number; its E.164 can be registered again")
    def disconnect(self, container: Container, principal: Principal, number_id: str) -> None:
        registry.disconnect(container.calling, principal, number_id)

    @post("/{number_id:str}/sms/preview", sync_to_thread=True, status_code=200,
          summary="Dry-run an SMS template against an example outcome built from the number's outcome_schema",
          responses=PREVIEW_ERRORS)
    def preview_sms(self, data: SmsPreviewRequest, container: Container, principal: Principal,
                    number_id: str) -> SmsPreview:
        found = sms.preview(container.calling, principal, number_id, data.template_id)
        return SmsPreview(would_fire=found.would_fire, rendered_body=found.rendered_body)
