"""``/v1/suppressions``: numbers never to call; each change records who made it."""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, delete, get, post
from litestar.params import Parameter
from litestar.status_codes import HTTP_200_OK, HTTP_201_CREATED

from application.calling import suppressions
from application.principal import Principal
from domain.accounts.scopes import CALLS_CREATE, CALLS_READ
from entrypoints.http import cursors
from entrypoints.http.auth import requires_scope
from entrypoints.http.dependencies import provide_calling, service_and_principal
from entrypoints.http.schemas.calls import SuppressionAdded, SuppressionRemoved, SuppressionRequest
from entrypoints.http.schemas.pages import SuppressionsPage
from entrypoints.http.services import CallingService
from domain.timestamps import iso
from projections.suppressions.queries import list_suppressions

CURSOR = "suppressions"


class SuppressionsController(Controller):
    path = "/v1/suppressions"
    tags = ["suppressions"]
    dependencies = service_and_principal(provide_calling)

    @get("", guards=[requires_scope(CALLS_READ)], summary="Suppressed numbers (active ones unless include_removed)")
    async def list_entries(
        self, service: CallingService, principal: Principal,
        include_removed: bool = False,
        limit: Annotated[int, Parameter(ge=1, le=200)] = 100,
        offset: Annotated[int, Parameter(ge=0, le=1_000_000)] = 0,
        cursor: Annotated[str | None, Parameter(max_length=cursors.MAX_LENGTH,
                                                description="next_cursor of the previous page")] = None,
    ) -> SuppressionsPage:
        after = None
        if cursor is not None:
            added_at, e164 = cursors.decode(CURSOR, cursor, str, str, offset=offset)
            after = (cursors.moment(added_at, cursor), e164)
        await service.reads.caught_up()
        page = await list_suppressions(service.reads.pool, tenant_id=principal.tenant_id, now=service.calling.ports.clock(),
                                       include_removed=include_removed, limit=limit, offset=offset, after=after)
        next_cursor = None
        if page.after is not None:
            next_cursor = cursors.encode(CURSOR, page.after[0].isoformat(), page.after[1])
        return SuppressionsPage(data=page.rows, next_cursor=next_cursor, limit=limit, offset=offset)

    @post("", guards=[requires_scope(CALLS_CREATE)], sync_to_thread=True, status_code=HTTP_201_CREATED,
          summary="Suppress a number: calls to it are refused with type 'suppressed'")
    def add(self, data: SuppressionRequest, service: CallingService, principal: Principal) -> SuppressionAdded:
        entry = suppressions.add(service.calling, principal, e164=data.e164, reason=data.reason,
                                 expires_at=data.expires_at)
        return SuppressionAdded(e164=entry.e164, reason=entry.reason, expires_at=iso(entry.expires_at),
                                added_by=entry.added_by, added_at=iso(entry.added_at) or "")

    @delete("/{e164:str}", guards=[requires_scope(CALLS_CREATE)], sync_to_thread=True, status_code=HTTP_200_OK,
            summary="Lift a suppression")
    def remove(self, service: CallingService, principal: Principal, e164: str) -> SuppressionRemoved:
        entry = suppressions.remove(service.calling, principal, e164=e164)
        return SuppressionRemoved(status="removed", e164=entry.e164, removed_at=iso(entry.removed_at))
