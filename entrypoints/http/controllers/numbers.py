"""``/v1/numbers``: a tenant's phone numbers (SPEC.md Numbers). Bring-your-own registration of a
number of the verified carrier account, settings, disconnection, reads and the cursor-paged list.

Every route takes ``numbers:write``: the spec names no scope for number reads and has no
``numbers:read`` (docs/decisions.md 26).
"""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, Response, delete, get, patch, post
from litestar.di import Provide
from litestar.params import Parameter
from litestar.status_codes import HTTP_201_CREATED, HTTP_204_NO_CONTENT

from application.numbers import registry
from application.principal import Principal
from domain.accounts.scopes import NUMBERS_WRITE
from domain.numbers.number import Number
from domain.timestamps import iso
from entrypoints.bootstrap import Container
from entrypoints.http.auth import requires_scope
from entrypoints.http.dependencies import provide_principal
from entrypoints.http.schemas.numbers import ByoNumberCreate, NumberPatch, NumberView, TransferDestinationView

NEXT_CURSOR = "X-Next-Cursor"


def number_view(number: Number) -> NumberView:
    return NumberView(
        id=number.number_id, e164=number.e164, source=number.source, active=number.active,
        objective=number.objective, greeting=number.greeting, persona=number.persona,
        outcome_schema=number.outcome_schema, recording_enabled=number.recording_enabled,
        voice_engine=number.voice_engine,
        transfer_destinations=[TransferDestinationView(label=d["label"], e164=d["e164"])
                               for d in number.transfer_destinations],
        transfer_max_attempts=number.transfer_max_attempts, language=number.language, timezone=number.timezone,
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
