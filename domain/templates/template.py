"""A template: a reusable call configuration (SPEC.md Template; docs/templates.md). A call made
with ``template_id`` takes every field its request leaves out from the template.

``Defined`` holds every field; ``Deleted`` is a soft delete (later reads answer 404, calls made
from the template keep their record). A template never changes after it is defined: a new
configuration is a new template, so a call's ``template_id`` always names what it was made from.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from eventsourcing.domain import event

from domain import ids
from domain.base import TenantAggregate
from domain.calls import dialing_rules
from domain.calls.outcome_schema import OutcomeSchema

TEMPLATE = "tpl"
# The agent's tools a template may name (its ``tools``: ``[{"name": ...}]``); end_call is always there.
TOOL_NAMES = ("end_call", "press_keys", "transfer_call")
# What a template gives a call that leaves the field out (``context`` reaches the agent as a variable).
FILLED = ("objective", "outcome_schema", "consent_type", "voice_engine", "language")
CONTEXT_VARIABLE = "context"


class Template(TenantAggregate):
    @staticmethod
    def create_id(template_id: str) -> uuid.UUID:
        """``MalformedIdError`` (a ``ValueError``) when ``template_id`` is no ``tpl_…`` id."""
        return ids.from_public(TEMPLATE, template_id)

    @staticmethod
    def public_id(aggregate_id: uuid.UUID) -> str:
        return ids.to_public(TEMPLATE, aggregate_id)

    @classmethod
    def define(cls, *, tenant_id: str, name: str, objective: str, outcome_schema: Any, by: str, at: datetime,
               description: str | None = None, context: str | None = None, tools: list[dict[str, Any]] | None = None,
               consent_type: str | None = None, voice_engine: str | None = None,
               language: str = "en-US") -> Template:
        """A new template; its outcome schema and consent type follow a call's rules (the same
        ``RequestRuleError``s, at the same ``loc``)."""
        schema = OutcomeSchema.of(outcome_schema, limits=True)
        if consent_type is not None:
            dialing_rules.check_consent(consent_type)
        return cls(tenant_id=tenant_id, template_id=ids.to_public(TEMPLATE, uuid.uuid4()), name=name, description=description,
                   objective=objective, context=context, outcome_schema=schema.to_definition(),
                   tools=[dict(tool) for tool in tools or ()], consent_type=consent_type, voice_engine=voice_engine,
                   language=language, by=by, at=at)

    @event("Defined")
    def __init__(self, tenant_id: str, template_id: str, name: str, description: str | None, objective: str,
                 context: str | None, outcome_schema: dict[str, Any], tools: list[dict[str, Any]],
                 consent_type: str | None, voice_engine: str | None, language: str, by: str, at: datetime) -> None:
        self.tenant_id = tenant_id
        self.template_id = template_id
        self.name = name
        self.description = description
        self.objective = objective
        self.context = context
        self.outcome_schema = outcome_schema
        self.tools = tools
        self.consent_type = consent_type
        # The engine given, or the workspace default when it was defined (application.templates);
        # None only in templates defined before defaults were recorded: the account's routing at each call.
        self.voice_engine = voice_engine
        self.language = language
        self.created_by = by
        self.created_at = at
        self.deleted_at: datetime | None = None

    @property
    def deleted(self) -> bool:
        return self.deleted_at is not None

    def delete(self, by: str, now: datetime) -> bool:
        """Soft delete; False when it was already deleted."""
        if self.deleted:
            return False
        self._deleted(by=by, at=now)
        return True

    @event("Deleted")
    def _deleted(self, by: str, at: datetime) -> None:
        self.deleted_at = at

    def fill(self, given: dict[str, Any]) -> dict[str, Any]:
        """``given`` (a call request's fields, None where left out) with this template's values
        where ``given`` has none; ``variables`` gain ``context`` unless they hold one."""
        filled = {name: given.get(name) if given.get(name) is not None else getattr(self, name) for name in FILLED}
        variables = dict(given.get("variables") or {})
        if self.context and CONTEXT_VARIABLE not in variables:
            variables[CONTEXT_VARIABLE] = self.context
        return {**given, **filled, "variables": variables}
