"""``/auth/api-keys`` (also ``/auth/api_keys``): create, list, rotate and revoke keys."""

from __future__ import annotations

from typing import Any

from datetime import datetime
from typing import Annotated

from litestar import Controller, delete, get, post
from litestar.params import Parameter
from litestar.status_codes import HTTP_200_OK, HTTP_201_CREATED

from application.accounts import key_history, keys
from application.principal import Principal
from domain.accounts.scopes import AUDIT_READ
from entrypoints.http import cursors
from entrypoints.http.auth import requires_scope
from entrypoints.http.dependencies import provide_accounts, service_and_principal
from entrypoints.http.schemas.api_keys import (
    ApiKeyCreateRequest,
    ApiKeyEventsPage,
    ApiKeyList,
    ApiKeyListItem,
    ApiKeySecretResponse,
    RevokeResponse,
    RotateResponse,
)
from entrypoints.http.schemas.instants import zoned
from entrypoints.http.services import AccountsService
from domain.timestamps import iso
from projections.api_keys.queries import list_api_keys

PATHS = ["/auth/api-keys", "/auth/api_keys"]
EVENTS_CURSOR = "key-events"


def _secret_response(issued: keys.IssuedKey) -> dict[str, Any]:
    key = issued.aggregate
    return {
        "key_id": key.key_id,
        "name": key.name,
        "prefix": key.prefix,
        "scopes": list(key.scopes) if key.scopes is not None else None,
        "number_ids": list(key.number_ids) if key.number_ids is not None else None,
        "created_at": iso(key.created_at) or "",
        "secret": issued.secret,
        "rotated_from": key.rotated_from,
    }


class ApiKeysController(Controller):
    path = ""
    tags = ["api keys"]
    dependencies = service_and_principal(provide_accounts)

    @post(PATHS, status_code=HTTP_201_CREATED, sync_to_thread=True,
          summary="Create a key; an empty body gives an all-permissions key. The secret is shown once.")
    def create(self, service: AccountsService, principal: Principal, data: ApiKeyCreateRequest | None = None) -> ApiKeySecretResponse:
        data = data or ApiKeyCreateRequest()
        issued = keys.issue_key(
            service.accounts,
            principal,
            name=data.name,
            scopes=tuple(data.scopes) if data.scopes is not None else None,
            number_ids=tuple(data.number_ids) if data.number_ids is not None else None,
        )
        return ApiKeySecretResponse(**_secret_response(issued))

    @get(PATHS, summary="List keys (prefix and metadata only)")
    async def list_keys(self, service: AccountsService, principal: Principal) -> ApiKeyList:
        await service.reads.caught_up(accounts_log=True)
        rows = await list_api_keys(service.reads.pool, tenant_id=principal.tenant_id, now=service.clock())
        listed = [ApiKeyListItem(**row) for row in rows]
        return ApiKeyList(data=listed, next_cursor=None, items=listed)

    @post([p + "/{key_id:str}/rotate" for p in PATHS], status_code=HTTP_201_CREATED, sync_to_thread=True,
          summary="Rotate: a new secret with the same scopes; the old key works 24 h more")
    def rotate(self, service: AccountsService, principal: Principal, key_id: str) -> RotateResponse:
        successor, old = keys.rotate_key(service.accounts, principal, key_id)
        return RotateResponse(**_secret_response(successor), old_key_id=old.key_id,
                              old_key_expires_at=iso(old.expires_at) or "")

    @delete([p + "/{key_id:str}" for p in PATHS], status_code=HTTP_200_OK, sync_to_thread=True,
            summary="Revoke (soft): the key stops authenticating at once, the record stays")
    def revoke(self, service: AccountsService, principal: Principal, key_id: str) -> RevokeResponse:
        key = keys.revoke_key(service.accounts, principal, key_id)
        return RevokeResponse(status="revoked", key_id=key.key_id, revoked_at=iso(key.revoked_at) or "")

    @get([p + "/{key_id:str}" for p in PATHS], guards=[requires_scope(AUDIT_READ)], sync_to_thread=True,
         summary="One key as listed; with as_of, as it stood at that instant (replayed from its events)")
    def read(self, service: AccountsService, principal: Principal, key_id: str,
             as_of: Annotated[datetime | None, Parameter(description="ISO 8601 with a zone")] = None) -> ApiKeyListItem:
        return ApiKeyListItem(**key_history.key_as_of(service.accounts, principal, key_id, zoned(as_of, "as_of")))

    @get([p + "/{key_id:str}/events" for p in PATHS], guards=[requires_scope(AUDIT_READ)], sync_to_thread=True,
         summary="A key's history: issued, rotated (successor, expiry), each use in its grace window, revoked, expired")
    def events(self, service: AccountsService, principal: Principal, key_id: str,
               limit: Annotated[int, Parameter(ge=1, le=200)] = 100,
               cursor: Annotated[str | None, Parameter(max_length=cursors.MAX_LENGTH)] = None) -> ApiKeyEventsPage:
        start = cursors.decode(EVENTS_CURSOR, cursor, int)[0] if cursor is not None else 0
        entries = key_history.key_history(service.accounts, principal, key_id)
        page = entries[start:start + limit]
        following = start + len(page)
        return ApiKeyEventsPage(
            data=[{"seq": e.seq, "type": e.type, "at": iso(e.at), "by": e.by, "data": e.data} for e in page],
            next_cursor=cursors.encode(EVENTS_CURSOR, following) if following < len(entries) else None)
