"""``/v1/audit-events``: the tenant's account history, newest first, filtered; its hash chain's
head; and the whole trail as JSONL, oldest first, for ``callwright audit verify`` (docs/audit.md)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime
from typing import Annotated, Any

import msgspec
from litestar import Controller, get
from litestar.params import Parameter
from litestar.response import Stream

from application.errors import FieldError
from application.principal import Principal
from domain.accounts.scopes import AUDIT_READ
from entrypoints.http.auth import requires_scope
from entrypoints.http.dependencies import provide_accounts, service_and_principal
from entrypoints.http.schemas.instants import zoned
from entrypoints.http.schemas.pages import AuditEventsPage
from entrypoints.http.services import AccountsService
from projections.audit_events.queries import AuditFilters, audit_head, export_audit_events, list_audit_events

Name = Annotated[str | None, Parameter(max_length=64, pattern=r"^[A-Za-z0-9_.:-]+$")]
Instant = Annotated[datetime | None, Parameter(description="ISO 8601 with a zone")]


class AuditHead(msgspec.Struct, kw_only=True, frozen=True):
    hash: str  # the genesis, 64 zeros, while the trail is empty
    id: str | None
    occurred_at: str | None
    rows: int


def _filters(type_: str | None, subject: str | None, actor: str | None, start: datetime | None,
             end: datetime | None) -> AuditFilters:
    return AuditFilters(event_type=type_, subject=subject, actor=actor, start=zoned(start, "start"),
                        end=zoned(end, "end"))


async def _lines(rows: AsyncIterator[dict[str, Any]]) -> AsyncIterator[bytes]:
    encoder = msgspec.json.Encoder()
    async for row in rows:
        yield encoder.encode(row) + b"\n"


class AuditController(Controller):
    path = "/v1/audit-events"
    tags = ["audit"]
    dependencies = service_and_principal(provide_accounts)

    @get("", guards=[requires_scope(AUDIT_READ)],
         summary="Audit trail: keys issued, rotated, used in grace, revoked; logins; approvals (newest first)")
    async def list_events(
        self,
        service: AccountsService,
        principal: Principal,
        limit: Annotated[int, Parameter(ge=1, le=200)] = 50,
        cursor: Annotated[str | None, Parameter(max_length=20)] = None,
        type: Name = None,  # noqa: A002 - the query parameter's name
        subject: Name = None,
        actor: Name = None,
        start: Instant = None,
        end: Instant = None,
    ) -> AuditEventsPage:
        before = None
        if cursor is not None:
            # isdigit() alone admits "²" and other non-ASCII digits that int() refuses
            if not (cursor.isascii() and cursor.isdigit()) or int(cursor) >= 2**63:
                raise FieldError(["query", "cursor"], "cursor must be a value returned as next_cursor", code="value_error", value=cursor)
            before = int(cursor)
        filters = _filters(type, subject, actor, start, end)
        await service.reads.caught_up(accounts_log=True)
        page = await list_audit_events(service.reads.pool, tenant_id=principal.tenant_id, limit=limit, before=before,
                                       filters=filters)
        # items: the pre-0.2 name of data, kept for one release (SPEC.md Versioning §2, CHANGELOG.md)
        return AuditEventsPage(data=page.items, items=page.items, next_cursor=page.next_cursor)

    @get("/head", guards=[requires_scope(AUDIT_READ)],
         summary="The latest hash of the trail's chain: keep it to check a later export against it")
    async def head(self, service: AccountsService, principal: Principal) -> AuditHead:
        await service.reads.caught_up(accounts_log=True)
        return AuditHead(**await audit_head(service.reads.pool, tenant_id=principal.tenant_id))

    @get("/export.jsonl", guards=[requires_scope(AUDIT_READ)], media_type="application/x-ndjson",
         summary="The trail as JSON lines, oldest first (streamed), each row with prev_hash and hash")
    async def export(self, service: AccountsService, principal: Principal, type: Name = None,  # noqa: A002
                     subject: Name = None, actor: Name = None, start: Instant = None, end: Instant = None) -> Stream:
        filters = _filters(type, subject, actor, start, end)
        await service.reads.caught_up(accounts_log=True)
        rows = export_audit_events(service.reads.pool, tenant_id=principal.tenant_id, filters=filters)
        return Stream(_lines(rows), media_type="application/x-ndjson",
                      headers={"Content-Disposition": 'attachment; filename="audit-events.jsonl"'})
