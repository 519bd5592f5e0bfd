"""``/v1/flows``: conversation graphs drafted, previewed and published (SPEC.md Flow; docs/flows.md)."""

from __future__ import annotations

from typing import Annotated, Literal

from litestar import Controller, get, patch, post
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import Parameter
from litestar.status_codes import HTTP_200_OK, HTTP_201_CREATED

from application.errors import ValidationFailedError
from application.flows import flows
from application.principal import Principal
from domain.accounts.scopes import FLOWS_READ, FLOWS_WRITE
from domain.flows.compiler import CompiledFlow
from domain.flows.flow import Flow
from domain.timestamps import iso
from entrypoints.http import cursors
from entrypoints.http.auth import requires_scope
from entrypoints.http.dependencies import provide_calling, service_and_principal
from entrypoints.http.schemas.flows import (CompiledView, FlowCreateRequest, FlowPatchRequest, FlowPreview,
                                            FlowPreviewRequest, FlowProblemView, FlowResponse, FlowsPage,
                                            PublishedView)
from entrypoints.http.schemas.webhooks import ErrorBody
from entrypoints.http.services import CallingService
from projections.flows.queries import list_flows

CURSOR = "flows"
FORBIDDEN = {403: ResponseSpec(ErrorBody, description="The key lacks the scope (insufficient_scope)")}
ERRORS = {**FORBIDDEN, 404: ResponseSpec(ErrorBody, description="No such flow of this account (flow_not_found)")}


def _compiled(compiled: dict) -> CompiledView:  # type: ignore[type-arg]
    return CompiledView(objective=compiled["objective"], outcome_schema=compiled["outcome_schema"],
                        tools=compiled["tools"], system_prompt=compiled["system_prompt"])


def _view(flow: Flow) -> FlowResponse:
    published = flow.published
    return FlowResponse(
        id=flow.flow_id, name=flow.name, state=flow.state, draft_version=flow.draft_version,
        graph_json=flow.graph_json, published_version=flow.published_version,
        published=None if published is None else PublishedView(
            version=published["version"], published_at=iso(published["published_at"]),
            compiled=_compiled(published["compiled"])),
        created_at=iso(flow.created_at), updated_at=iso(flow.updated_at))


def _preview(result: tuple[CompiledFlow | None, list]) -> FlowPreview:  # type: ignore[type-arg]
    compiled, problems = result
    return FlowPreview(ok=compiled is not None, compiled=None if compiled is None else _compiled(compiled.to_json()),
                       errors=[FlowProblemView(node_id=p.node_id, code=p.code, message=p.message) for p in problems])


class FlowsController(Controller):
    path = "/v1/flows"
    tags = ["flows"]
    dependencies = service_and_principal(provide_calling)

    @post("", guards=[requires_scope(FLOWS_WRITE)], sync_to_thread=True, status_code=HTTP_201_CREATED,
          responses=FORBIDDEN, summary="Draft a flow (stored whether or not its graph compiles)")
    def create(self, data: FlowCreateRequest, service: CallingService, principal: Principal) -> FlowResponse:
        return _view(flows.draft_flow(service.calling, principal, name=data.name, graph_json=data.graph_json))

    @get("", guards=[requires_scope(FLOWS_READ)], responses=FORBIDDEN,
         summary="The account's flows in every state, newest first")
    async def list_all(
        self, service: CallingService, principal: Principal,
        flow_state: Annotated[Literal["draft", "published"] | None, Parameter(
            query="state", description="Only the flows in this state")] = None,
        limit: Annotated[int, Parameter(ge=1, le=200)] = 50,
        cursor: Annotated[str | None, Parameter(max_length=cursors.MAX_LENGTH,
                                                description="next_cursor of the previous page")] = None,
    ) -> FlowsPage:
        after = cursors.decode(CURSOR, cursor, int)[0] if cursor is not None else None
        await service.reads.caught_up()
        page = await list_flows(service.reads.pool, tenant_id=principal.tenant_id, limit=limit, state=flow_state,
                                after=after)
        next_cursor = None if page.after is None else cursors.encode(CURSOR, page.after)
        return FlowsPage(data=page.rows, next_cursor=next_cursor)  # type: ignore[arg-type] - the view's rows

    @get("/{flow_id:str}", guards=[requires_scope(FLOWS_READ)], sync_to_thread=True, responses=ERRORS,
         summary="One flow: its draft, and its published artifact once there is one")
    def read(self, service: CallingService, principal: Principal, flow_id: str) -> FlowResponse:
        return _view(flows.owned_flow(service.calling, principal, flow_id))

    @patch("/{flow_id:str}", guards=[requires_scope(FLOWS_WRITE)], sync_to_thread=True, responses=ERRORS,
           summary="Edit the draft (a new draft_version); calls keep the published version until the next publish")
    def edit(self, data: FlowPatchRequest, service: CallingService, principal: Principal, flow_id: str) -> FlowResponse:
        nulls = [name for name in sorted(data.model_fields_set) if getattr(data, name) is None]
        if nulls:
            raise ValidationFailedError([(["body", name], "cannot be null: leave it out to keep it", "null_not_allowed",
                                          None) for name in nulls])
        return _view(flows.edit_flow(service.calling, principal, flow_id, name=data.name,
                                     graph_json=data.graph_json))

    @post("/{flow_id:str}/preview", guards=[requires_scope(FLOWS_READ)], sync_to_thread=True,
          status_code=HTTP_200_OK, responses=ERRORS,
          summary="Compile the draft (or an unsaved graph_json) without storing anything")
    def preview(self, service: CallingService, principal: Principal, flow_id: str,
                data: FlowPreviewRequest | None = None) -> FlowPreview:
        graph = data.graph_json if data is not None else None
        return _preview(flows.preview_flow(service.calling, principal, flow_id, graph))

    @post("/{flow_id:str}/publish", guards=[requires_scope(FLOWS_WRITE)], sync_to_thread=True,
          status_code=HTTP_200_OK, responses=ERRORS,
          summary="Compile the draft and freeze it as the next published version (422 naming each node at fault)")
    def publish(self, service: CallingService, principal: Principal, flow_id: str) -> FlowResponse:
        return _view(flows.publish_flow(service.calling, principal, flow_id))
