"""``/v1/webhooks``: endpoints (the secret once, at creation or rotation), read, change, disable and
re-enable, delivery history, manual retry."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Any, Literal

from litestar import Controller, Response, delete, get, patch, post
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import Parameter
from litestar.status_codes import HTTP_200_OK, HTTP_201_CREATED, HTTP_202_ACCEPTED

from application.errors import ValidationFailedError
from application.principal import Principal
from application.webhooks import deliveries, endpoint_changes, endpoints
from domain.accounts.scopes import WEBHOOKS_READ, WEBHOOKS_WRITE
from domain.timestamps import iso
from domain.webhooks.delivery import STATUSES
from domain.webhooks.endpoint import WebhookEndpoint
from domain.webhooks.targets import NOT_HTTPS, PRIVATE_ADDRESS, UnsafeTargetError
from entrypoints.http import cursors
from entrypoints.http.auth import requires_scope
from entrypoints.http.blocking import run_blocking
from entrypoints.http.dependencies import provide_webhooks, service_and_principal
from entrypoints.http.schemas.pages import DeliveriesPage, WebhookEndpointsList
from entrypoints.http.schemas.webhooks import (
    DeliveryRetry,
    DisabledReason,
    ErrorBody,
    WebhookCreateRequest,
    WebhookEndpointResponse,
    WebhookPatchRequest,
    WebhookSecretResponse,
)
from entrypoints.http.services import WebhooksService
from projections.webhook_deliveries.queries import MAX_LIMIT, list_deliveries

DELIVERIES_CURSOR = "deliveries"
DeliveryStatus = Literal[STATUSES]  # type: ignore[valid-type]


# The server flags that lift a refusal, named in the 422 so a developer knows what to set locally.
DEVELOPMENT_FLAGS = {PRIVATE_ADDRESS: "CALLWRIGHT_WEBHOOK_ALLOW_PRIVATE=1", NOT_HTTPS: "CALLWRIGHT_WEBHOOK_ALLOW_HTTP=1"}
ERRORS = {
    404: ResponseSpec(ErrorBody, description="No such endpoint for this tenant (webhook_not_found)"),
    403: ResponseSpec(ErrorBody, description="The key lacks the scope (insufficient_scope)"),
}
WRITE_ERRORS = {**ERRORS, 409: ResponseSpec(ErrorBody, description="The endpoint was deleted (webhook_deleted)")}


def endpoint_view(endpoint: WebhookEndpoint) -> dict[str, Any]:
    disabled = (DisabledReason(code=endpoint.disabled_code, message=endpoint.disabled_reason or "",
                               at=iso(endpoint.disabled_at) or "") if endpoint.disabled_code is not None else None)
    previous_until = endpoint.previous_valid_until
    return {"id": endpoint.endpoint_id, "url": endpoint.url, "description": endpoint.description,
            "events": list(endpoint.events), "created_at": iso(endpoint.created_at), "active": endpoint.active,
            "deleted_at": iso(endpoint.deleted_at), "disabled": disabled,
            "rotation_grace_ends_at": iso(previous_until)}


async def checked_url(service: WebhooksService, url: str) -> str:
    """The normalized URL, or a 422 at ``body.url`` saying why (and which development flag would
    lift the refusal, when one would)."""
    try:
        async with service.poster() as poster:
            target = await poster.check(url)
    except UnsafeTargetError as exc:
        flag = DEVELOPMENT_FLAGS.get(exc.code)
        message = f"{exc.message} (for local development only, the server allows it with {flag})" if flag else exc.message
        raise ValidationFailedError([(["body", "url"], message, exc.code, url)]) from exc
    return target.url


def _after(cursor: str, offset: int) -> tuple[datetime, uuid.UUID]:
    created_at, delivery_uuid = cursors.decode(DELIVERIES_CURSOR, cursor, str, str, offset=offset)
    try:
        return cursors.moment(created_at, cursor), uuid.UUID(delivery_uuid)
    except ValueError:
        raise cursors.refused(cursor) from None


class WebhooksController(Controller):
    path = "/v1/webhooks"
    tags = ["webhooks"]
    dependencies = service_and_principal(provide_webhooks)

    @post("", guards=[requires_scope(WEBHOOKS_WRITE)], status_code=HTTP_201_CREATED,
          summary="Register an endpoint for call.completed; the signing secret is shown only in this answer")
    async def create(self, data: WebhookCreateRequest, service: WebhooksService,
                     principal: Principal) -> WebhookSecretResponse:
        events = endpoints.check_events(data.events)
        url = await checked_url(service, data.url)
        endpoint, secret = await run_blocking(endpoints.create, service.calling, principal, service.secret_box,
                                              url=url, description=data.description, events=events)
        return WebhookSecretResponse(**endpoint_view(endpoint), secret=secret)

    @get("/{endpoint_id:str}", guards=[requires_scope(WEBHOOKS_READ)], sync_to_thread=True, responses=ERRORS,
         summary="One endpoint (deleted or disabled ones too); never the secret")
    def read(self, service: WebhooksService, principal: Principal, endpoint_id: str) -> WebhookEndpointResponse:
        return WebhookEndpointResponse(**endpoint_view(endpoints.owned(service.calling, principal.tenant_id,
                                                                       endpoint_id)))

    @patch("/{endpoint_id:str}", guards=[requires_scope(WEBHOOKS_WRITE)], responses=WRITE_ERRORS,
           summary="Change url, description, events or active; absent fields stay, description null clears. "
                   "active=true re-enables a disabled endpoint if its URL is accepted")
    async def change(self, data: WebhookPatchRequest, service: WebhooksService, principal: Principal,
                     endpoint_id: str) -> WebhookEndpointResponse:
        given: dict[str, Any] = {name: getattr(data, name) for name in data.model_fields_set}
        if "events" in given:
            given["events"] = endpoints.check_events(given["events"])
        current = await run_blocking(endpoints.owned, service.calling, principal.tenant_id, endpoint_id)
        if "url" in given:
            given["url"] = await checked_url(service, given["url"])
        elif given.get("active") is True and not current.active:
            await checked_url(service, current.url)  # the policy of today decides a re-enabling
        endpoint = await run_blocking(endpoint_changes.change, service.calling, principal, endpoint_id, given)
        return WebhookEndpointResponse(**endpoint_view(endpoint))

    @post("/{endpoint_id:str}/rotate-secret", guards=[requires_scope(WEBHOOKS_WRITE)], sync_to_thread=True,
          status_code=HTTP_201_CREATED, responses=WRITE_ERRORS,
          summary="A new whsec_ secret, shown only in this answer; for 24 h the previous secret also signs "
                  "(X-Service-Signature: sha256=<new>,sha256=<old>)")
    def rotate_secret(self, service: WebhooksService, principal: Principal, endpoint_id: str) -> WebhookSecretResponse:
        endpoint, secret = endpoint_changes.rotate_secret(service.calling, principal, service.secret_box,
                                                          endpoint_id)
        return WebhookSecretResponse(**endpoint_view(endpoint), secret=secret)

    @get("", guards=[requires_scope(WEBHOOKS_READ)], sync_to_thread=True,
         summary="The tenant's endpoints, deleted ones included (active=false); never the secret")
    def list_endpoints(self, service: WebhooksService, principal: Principal) -> WebhookEndpointsList:
        listed = endpoints.listing(service.calling, principal.tenant_id)
        return WebhookEndpointsList(data=[WebhookEndpointResponse(**endpoint_view(e)) for e in listed], next_cursor=None)

    @delete("/{endpoint_id:str}", guards=[requires_scope(WEBHOOKS_WRITE)], sync_to_thread=True,
            status_code=HTTP_200_OK, summary="Soft-delete: nothing more is sent; the history stays readable")
    def remove(self, service: WebhooksService, principal: Principal, endpoint_id: str) -> WebhookEndpointResponse:
        return WebhookEndpointResponse(**endpoint_view(endpoints.delete(service.calling, principal, endpoint_id)))

    @get("/{endpoint_id:str}/deliveries", guards=[requires_scope(WEBHOOKS_READ)],
         summary="Deliveries to this endpoint, newest first, each with its attempts")
    async def list_deliveries(
        self, service: WebhooksService, principal: Principal, endpoint_id: str,
        status: DeliveryStatus | None = None,
        limit: Annotated[int, Parameter(ge=1, le=MAX_LIMIT)] = 25,
        offset: Annotated[int, Parameter(ge=0, le=1_000_000)] = 0,
        cursor: Annotated[str | None, Parameter(max_length=cursors.MAX_LENGTH,
                                                description="next_cursor of the previous page")] = None,
    ) -> DeliveriesPage:
        after = _after(cursor, offset) if cursor is not None else None
        endpoint = await run_blocking(endpoints.owned, service.calling, principal.tenant_id, endpoint_id)
        await service.reads.caught_up()
        page = await list_deliveries(service.reads.pool, tenant_id=principal.tenant_id,
                                     endpoint_id=endpoint.endpoint_id, status=status, limit=limit, offset=offset,
                                     after=after)
        next_cursor = None
        if page.after is not None:
            next_cursor = cursors.encode(DELIVERIES_CURSOR, page.after[0].isoformat(), str(page.after[1]))
        return DeliveriesPage(data=page.rows, next_cursor=next_cursor, total=page.total, limit=limit, offset=offset)

    @post("/{endpoint_id:str}/deliveries/{delivery_id:str}/retry", guards=[requires_scope(WEBHOOKS_WRITE)],
          sync_to_thread=True, status_code=HTTP_202_ACCEPTED,
          summary="Re-post the original payload once (same delivery id, fresh timestamp and signature)")
    def retry(self, service: WebhooksService, principal: Principal, endpoint_id: str,
              delivery_id: str) -> Response[DeliveryRetry]:
        delivery = deliveries.request_retry(service.calling, principal, endpoint_id, delivery_id)
        service.hint([delivery])
        return Response(DeliveryRetry(delivery_id=delivery.delivery_id, delivery_uuid=delivery.delivery_uuid,
                                      status=delivery.status, retry_requested_at=iso(delivery.retry_requested_at)),
                        status_code=HTTP_202_ACCEPTED)
