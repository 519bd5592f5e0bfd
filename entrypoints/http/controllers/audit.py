"""``GET /v1/audit-events``: the tenant's account history, newest first."""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, get
from litestar.di import Provide
from litestar.params import Parameter

from application.errors import FieldError
from application.principal import Principal
from domain.accounts.scopes import AUDIT_READ
from entrypoints.bootstrap import Container
from entrypoints.http.auth import requires_scope
from entrypoints.http.dependencies import provide_principal, views_caught_up
from entrypoints.http.schemas.pages import AuditEventsPage
from projections.audit_events.queries import list_audit_events


class AuditController(Controller):
    path = "/v1/audit-events"
    tags = ["audit"]
    dependencies = {"principal": Provide(provide_principal, sync_to_thread=False)}

    @get("", guards=[requires_scope(AUDIT_READ)], summary="Audit trail: keys issued, rotated, used in grace, revoked; logins; approvals")
    async def list_events(
        self,
        container: Container,
        principal: Principal,
        limit: Annotated[int, Parameter(ge=1, le=200)] = 50,
        cursor: Annotated[str | None, Parameter(max_length=20)] = None,
        type: Annotated[str | None, Parameter(max_length=64, pattern=r"^[A-Za-z0-9_.:-]+$")] = None,  # noqa: A002 - the query parameter's name
    ) -> AuditEventsPage:
        before = None
        if cursor is not None:
            # isdigit() alone admits "²" and other non-ASCII digits that int() refuses
            if not (cursor.isascii() and cursor.isdigit()) or int(cursor) >= 2**63:
                raise FieldError(["query", "cursor"], "cursor must be a value returned as next_cursor", code="value_error", value=cursor)
            before = int(cursor)
        await views_caught_up(container)
        page = await list_audit_events(container.read_pool, tenant_id=principal.tenant_id, limit=limit, before=before, event_type=type)
        # items: the pre-0.2 name of data, kept for one release (SPEC.md Versioning §2, CHANGELOG.md)
        return AuditEventsPage(data=page.items, items=page.items, next_cursor=page.next_cursor)
