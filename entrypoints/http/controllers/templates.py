"""``/v1/templates``: reusable call configurations (SPEC.md Template; docs/templates.md)."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Controller, get, post
from litestar import delete as delete_route
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import Parameter
from litestar.status_codes import HTTP_201_CREATED, HTTP_204_NO_CONTENT

from application.principal import Principal
from application.templates import templates
from domain.accounts.scopes import TEMPLATES_READ, TEMPLATES_WRITE
from domain.templates.template import Template
from domain.timestamps import iso
from entrypoints.http import cursors
from entrypoints.http.auth import requires_scope
from entrypoints.http.dependencies import provide_calling, service_and_principal
from entrypoints.http.schemas.templates import TemplateCreateRequest, TemplateResponse, TemplatesPage
from entrypoints.http.schemas.webhooks import ErrorBody
from entrypoints.http.services import CallingService
from projections.templates.queries import list_templates

CURSOR = "templates"
ERRORS = {
    403: ResponseSpec(ErrorBody, description="The key lacks the scope (insufficient_scope)"),
    404: ResponseSpec(ErrorBody, description="No such template of this account, or it was deleted "
                                             "(template_not_found)"),
}


def _view(template: Template) -> TemplateResponse:
    return TemplateResponse(
        id=template.template_id, name=template.name, description=template.description, objective=template.objective,
        context=template.context, outcome_schema=template.outcome_schema, tools=template.tools,
        consent_type=template.consent_type, voice_engine=template.voice_engine, language=template.language,
        created_at=iso(template.created_at), created_by=template.created_by)


class TemplatesController(Controller):
    path = "/v1/templates"
    tags = ["templates"]
    dependencies = service_and_principal(provide_calling)

    @post("", guards=[requires_scope(TEMPLATES_WRITE)], sync_to_thread=True, status_code=HTTP_201_CREATED,
          responses={403: ERRORS[403]}, summary="Define a template: a call configuration calls name by template_id")
    def create(self, data: TemplateCreateRequest, service: CallingService, principal: Principal) -> TemplateResponse:
        fields: dict[str, Any] = data.model_dump(mode="json")
        return _view(templates.define_template(service.calling, principal, **fields))

    @get("", guards=[requires_scope(TEMPLATES_READ)], responses={403: ERRORS[403]},
         summary="The account's templates, newest first")
    async def list_all(
        self, service: CallingService, principal: Principal,
        limit: Annotated[int, Parameter(ge=1, le=200)] = 50,
        cursor: Annotated[str | None, Parameter(max_length=cursors.MAX_LENGTH,
                                                description="next_cursor of the previous page")] = None,
    ) -> TemplatesPage:
        after = cursors.decode(CURSOR, cursor, int)[0] if cursor is not None else None
        await service.reads.caught_up()
        page = await list_templates(service.reads.pool, tenant_id=principal.tenant_id, limit=limit, after=after)
        next_cursor = None if page.after is None else cursors.encode(CURSOR, page.after)
        return TemplatesPage(data=page.rows, next_cursor=next_cursor)  # type: ignore[arg-type] - the stored records

    @get("/{template_id:str}", guards=[requires_scope(TEMPLATES_READ)], sync_to_thread=True, responses=ERRORS,
         summary="One template")
    def read(self, service: CallingService, principal: Principal, template_id: str) -> TemplateResponse:
        return _view(templates.owned_template(service.calling, principal, template_id))

    @delete_route("/{template_id:str}", guards=[requires_scope(TEMPLATES_WRITE)], sync_to_thread=True,
                  status_code=HTTP_204_NO_CONTENT, responses=ERRORS,
                  summary="Delete a template: later reads answer 404; calls made from it keep their record")
    def delete(self, service: CallingService, principal: Principal, template_id: str) -> None:
        templates.delete_template(service.calling, principal, template_id)
