"""``/auth/api-keys`` (also ``/auth/api_keys``): create, list, rotate and revoke keys."""

from __future__ import annotations

from typing import Any

from litestar import Controller, delete, get, post
from litestar.di import Provide
from litestar.status_codes import HTTP_200_OK, HTTP_201_CREATED

from application.accounts import keys
from application.principal import Principal
from entrypoints.bootstrap import Container
from entrypoints.http.dependencies import provide_principal, views_caught_up
from entrypoints.http.schemas.api_keys import (
    ApiKeyCreateRequest,
    ApiKeyList,
    ApiKeyListItem,
    ApiKeySecretResponse,
    RevokeResponse,
    RotateResponse,
)
from domain.timestamps import iso
from projections.api_keys.queries import list_api_keys

PATHS = ["/auth/api-keys", "/auth/api_keys"]


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
    dependencies = {"principal": Provide(provide_principal, sync_to_thread=False)}

    @post(PATHS, status_code=HTTP_201_CREATED, sync_to_thread=True,
          summary="Create a key; an empty body gives an all-permissions key. The secret is shown once.")
    def create(self, container: Container, principal: Principal, data: ApiKeyCreateRequest | None = None) -> ApiKeySecretResponse:
        data = data or ApiKeyCreateRequest()
        issued = keys.issue_key(
            container.accounts,
            principal,
            name=data.name,
            scopes=tuple(data.scopes) if data.scopes is not None else None,
            number_ids=tuple(data.number_ids) if data.number_ids is not None else None,
        )
        return ApiKeySecretResponse(**_secret_response(issued))

    @get(PATHS, summary="List keys (prefix and metadata only)")
    async def list_keys(self, container: Container, principal: Principal) -> ApiKeyList:
        await views_caught_up(container)
        rows = await list_api_keys(container.read_pool, tenant_id=principal.tenant_id, now=container.clock())
        listed = [ApiKeyListItem(**row) for row in rows]
        return ApiKeyList(data=listed, next_cursor=None, items=listed)

    @post([p + "/{key_id:str}/rotate" for p in PATHS], status_code=HTTP_201_CREATED, sync_to_thread=True,
          summary="Rotate: a new secret with the same scopes; the old key works 24 h more")
    def rotate(self, container: Container, principal: Principal, key_id: str) -> RotateResponse:
        successor, old = keys.rotate_key(container.accounts, principal, key_id)
        return RotateResponse(**_secret_response(successor), old_key_id=old.key_id,
                              old_key_expires_at=iso(old.expires_at) or "")

    @delete([p + "/{key_id:str}" for p in PATHS], status_code=HTTP_200_OK, sync_to_thread=True,
            summary="Revoke (soft): the key stops authenticating at once, the record stays")
    def revoke(self, container: Container, principal: Principal, key_id: str) -> RevokeResponse:
        key = keys.revoke_key(container.accounts, principal, key_id)
        return RevokeResponse(status="revoked", key_id=key.key_id, revoked_at=iso(key.revoked_at) or "")
