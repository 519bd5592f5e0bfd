"""``/v1/webhooks``: endpoints (the secret once, at creation), delivery history, manual retry."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Any, Literal

from litestar import Controller, Response, delete, get, post
from litestar.di import Provide
from litestar.params import Parameter
from litestar.status_codes import HTTP_200_OK, HTTP_201_CREATED, HTTP_202_ACCEPTED

from application.errors import ValidationFailedError
from application.principal import Principal
from application.webhooks import deliveries, endpoints
from domain.accounts.scopes import WEBHOOKS_READ, WEBHOOKS_WRITE
from domain.timestamps import iso
from domain.webhooks.delivery import STATUSES
from domain.webhooks.endpoint import WebhookEndpoint
from domain.webhooks.targets import UnsafeTargetError
from entrypoints.bootstrap import Container
from entrypoints.http import cursors
from entrypoints.http.auth import requires_scope
from entrypoints.http.blocking import run_blocking
from entrypoints.http.dependencies import provide_principal, views_caught_up
from entrypoints.http.schemas.pages import DeliveriesPage, WebhookEndpointsList
from entrypoints.http.schemas.webhooks import WebhookCreateRequest
from projections.webhook_deliveries.queries import MAX_LIMIT, list_deliveries

DELIVERIES_CURSOR = "deliveries"
DeliveryStatus = Literal[STATUSES]  # type: ignore[valid-type]


def endpoint_view(endpoint: WebhookEndpoint) -> dict[str, Any]:
    return {"id": endpoint.endpoint_id, "url": endpoint.url, "description": endpoint.description,
            "events": list(endpoint.events), "created_at": iso(endpoint.created_at), "active": endpoint.active,
            "deleted_at": iso(endpoint.deleted_at)}


def _after(cursor: str, offset: int) -> tuple[datetime, uuid.UUID]:
    created_at, delivery_uuid = cursors.decode(DELIVERIES_CURSOR, cursor, str, str, offset=offset)
    try:
        return cursors.moment(created_at, cursor), uuid.UUID(delivery_uuid)
    except ValueError:
        raise cursors.refused(cursor) from None


class WebhooksController(Controller):
    path = "/v1/webhooks"
    tags = ["webhooks"]
    dependencies = {"principal": Provide(provide_principal, sync_to_thread=False)}

    @post("", guards=[requires_scope(WEBHOOKS_WRITE)], status_code=HTTP_201_CREATED,
          summary="Register an endpoint for call.completed; the signing secret is shown only in this answer")
    async def create(self, data: WebhookCreateRequest, container: Container, principal: Principal) -> dict[str, Any]:
        events = endpoints.check_events(data.events)
        try:
            async with container.webhook_poster() as poster:
                target = await poster.check(data.url)
        except UnsafeTargetError as exc:
            raise ValidationFailedError([(["body", "url"], exc.message, exc.code, data.url)]) from exc
        endpoint, secret = await run_blocking(endpoints.create, container.calling, principal, container.secret_box,
                                              url=target.url, description=data.description, events=events)
        return {**endpoint_view(endpoint), "secret": secret}

    @get("", guards=[requires_scope(WEBHOOKS_READ)], sync_to_thread=True,
         summary="The tenant's endpoints, deleted ones included (active=false); never the secret")
    def list_endpoints(self, container: Container, principal: Principal) -> WebhookEndpointsList:
        listed = endpoints.listing(container.calling, principal.tenant_id)
        return WebhookEndpointsList(data=[endpoint_view(e) for e in listed], next_cursor=None)

    @delete("/{endpoint_id:str}", guards=[requires_scope(WEBHOOKS_WRITE)], sync_to_thread=True,
            status_code=HTTP_200_OK, summary="Soft-delete: nothing more is sent; the history stays readable")
    def remove(self, container: Container, principal: Principal, endpoint_id: str) -> dict[str, Any]:
        return endpoint_view(endpoints.delete(container.calling, principal, endpoint_id))

    @get("/{endpoint_id:str}/deliveries", guards=[requires_scope(WEBHOOKS_READ)],
         summary="Deliveries to this endpoint, newest first, each with its attempts")
    async def list_deliveries(
        self, container: Container, principal: Principal, endpoint_id: str,
        status: DeliveryStatus | None = None,
        limit: Annotated[int, Parameter(ge=1, le=MAX_LIMIT)] = 25,
        offset: Annotated[int, Parameter(ge=0, le=1_000_000)] = 0,
        cursor: Annotated[str | None, Parameter(max_length=cursors.MAX_LENGTH,
                                                description="next_cursor of the previous page")] = None,
    ) -> DeliveriesPage:
        after = _after(cursor, offset) if cursor is not None else None
        endpoint = await run_blocking(endpoints.owned, container.calling, principal.tenant_id, endpoint_id)
        await views_caught_up(container)
        page = await list_deliveries(container.read_pool, tenant_id=principal.tenant_id,
                                     endpoint_id=endpoint.endpoint_id, status=status, limit=limit, offset=offset,
                                     after=after)
        next_cursor = None
        if page.after is not None:
            next_cursor = cursors.encode(DELIVERIES_CURSOR, page.after[0].isoformat(), str(page.after[1]))
        return DeliveriesPage(data=page.rows, next_cursor=next_cursor, total=page.total, limit=limit, offset=offset)

    @post("/{endpoint_id:str}/deliveries/{delivery_id:str}/retry", guards=[requires_scope(WEBHOOKS_WRITE)],
          sync_to_thread=True, status_code=HTTP_202_ACCEPTED,
          summary="Re-post the original payload once (same delivery id, fresh timestamp and signature)")
    def retry(self, container: Container, principal: Principal, endpoint_id: str,
              delivery_id: str) -> Response[dict[str, Any]]:
        delivery = deliveries.request_retry(container.calling, principal, endpoint_id, delivery_id)
        if container.webhook_dispatcher is not None:
            container.webhook_dispatcher.hint([delivery])
        return Response({"delivery_id": delivery.delivery_id, "delivery_uuid": delivery.delivery_uuid,
                         "status": delivery.status, "retry_requested_at": iso(delivery.retry_requested_at)},
                        status_code=HTTP_202_ACCEPTED)
