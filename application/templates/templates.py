"""Templates (SPEC.md Template; docs/templates.md): define one, read or soft-delete the tenant's
own, and fill a call request from one (``template_id`` on ``POST /v1/calls`` and batches).

Another tenant's template, a deleted one and a made-up id all read as not found: 404 on the
template's own routes, 422 ``template_not_found`` at ``template_id`` in a call's body.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from application.calling.app import Calling
from application.calling.create import CallRequest
from application.errors import NotFoundError, ValidationFailedError
from application.principal import Principal
from domain import ids
from domain.templates.template import TEMPLATE, Template


def define_template(calling: Calling, principal: Principal, **fields: Any) -> Template:
    """A new template; without ``voice_engine`` it takes the workspace default of this moment
    (the tenant's, else the system's), recorded in its ``Defined`` event (SPEC.md Template)."""
    if fields.get("voice_engine") is None:
        fields["voice_engine"] = calling.ports.voice_routing(principal.tenant_id).default_engine
    template = Template.define(tenant_id=principal.tenant_id, by=principal.actor, at=calling.ports.clock(), **fields)
    calling.commit(template)
    return template


def owned_template(calling: Calling, principal: Principal, template_id: str) -> Template:
    template = calling.find_owned(Template, TEMPLATE, template_id, principal.tenant_id, loc="template_id",
                                  noun="template")
    if template.deleted:
        raise NotFoundError(f"no template {template_id}", code="template_not_found")
    return template


def delete_template(calling: Calling, principal: Principal, template_id: str) -> Template:
    def attempt() -> Template:
        template = owned_template(calling, principal, template_id)  # deleted meanwhile: 404
        template.delete(principal.actor, calling.ports.clock())
        calling.commit(template)
        return template

    return calling.retry_on_conflict(attempt, attempts=5)


def filled_request(calling: Calling, principal: Principal, request: CallRequest,
                   loc: list[str | int]) -> CallRequest:
    """``request`` with its template's values where it left fields out (the request wins where
    both give one); a request without ``template_id`` as it is."""
    if request.template_id is None:
        return request
    template = _referenced(calling, principal, request.template_id, [*loc, "template_id"])
    given = {"objective": request.objective, "outcome_schema": request.outcome_schema,
             "consent_type": request.consent_type, "voice_engine": request.voice_engine,
             "language": request.language, "variables": request.variables}
    return replace(request, **template.fill(given))


def _referenced(calling: Calling, principal: Principal, template_id: str, loc: list[str | int]) -> Template:
    try:
        template = calling.find(Template, ids.from_public(TEMPLATE, template_id))
    except ids.MalformedIdError:
        template = None
    if template is None or template.tenant_id != principal.tenant_id or template.deleted:
        raise ValidationFailedError([(loc, "names no template of this account (deleted ones included)",
                                      "template_not_found", template_id)])
    return template
