"""A number's post-call SMS templates from the API's side: the preview of one template
(SPEC.md Numbers and SMS), rendered against the example outcome of the number's outcome_schema."""

from __future__ import annotations

from dataclasses import dataclass

from application.calling.app import Calling
from application.errors import NotFoundError
from application.numbers.registry import owned
from application.principal import Principal
from domain.numbers import sms_templates


@dataclass(frozen=True)
class Preview:
    would_fire: bool
    rendered_body: str


def preview(calling: Calling, principal: Principal, number_id: str, template_id: str) -> Preview:
    """Whether the template would be sent, and its text, after a call whose outcome is the example
    one (each field a fixed value of its type; the caller ``sms_templates.EXAMPLE_CALLER``). 404
    ``template_not_found`` when the number has no template of that id."""
    number = owned(calling, principal, number_id)
    template = next((t for t in number.sms_templates if t["id"] == template_id), None)
    if template is None:
        raise NotFoundError(f"number {number_id} has no SMS template {template_id}", code="template_not_found")
    would_fire, body = sms_templates.preview(template, number.outcome_schema, number_e164=number.e164)
    return Preview(would_fire=would_fire, rendered_body=body)
