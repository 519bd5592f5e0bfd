"""Request and response shapes of ``/v1/numbers``.

A number's settings are defined once, in the domain (``domain.numbers.settings.NumberSettings``):
their names, types, defaults and rules. They are checked by the domain alone, so that a request
hears of every problem at once: types, bounds, the shapes of hours, routes and SMS templates, and
the rules between fields. The request model has one field per setting, taken from the domain's
list; it only carries the body through and documents each field's JSON Schema
(``SETTING_SCHEMAS``) for the OpenAPI document (docs/numbers.md). PATCH sends only the fields it
changes: ``model_fields_set`` tells an absent field from an explicit null.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import msgspec
from pydantic import ConfigDict, Field, StringConstraints, create_model

from domain.calls.engines import ENGINES
from domain.calls.outcome_schema import definition_json_schema
from domain.numbers import field_rules
from domain.numbers.hours import OVERFLOW_ACTIONS, VOICEMAIL_MODES
from domain.numbers.number import Number
from domain.numbers.settings import FIELDS, NULLABLE
from domain.timestamps import iso
from entrypoints.http.schemas.calls import Strict
from entrypoints.http.schemas.number_shapes import (
    HOURS_SCHEMA,
    ROUTES_SCHEMA,
    SMS_TEMPLATES_SCHEMA,
    RouteView,
    SmsTemplateView,
    route_view,
    template_view,
)


def _text(max_length: int, description: str, min_length: int = 0) -> dict[str, Any]:
    return {"type": "string", "minLength": min_length, "maxLength": max_length, "description": description}


_DESTINATION = {"type": "object", "title": "TransferDestination", "required": ["label", "e164"],
                "additionalProperties": False,
                "properties": {"label": _text(field_rules.MAX_LABEL, "How the agent names it", 1),
                               "e164": {"type": "string", "description": "E.164, not the number itself"}}}

# The JSON Schema of each setting in the OpenAPI document; nullable ones get null added.
SETTING_SCHEMAS: dict[str, dict[str, Any]] = {
    "objective": _text(field_rules.MAX_OBJECTIVE, "What the agent pursues on each call", 1),
    "greeting": _text(field_rules.MAX_GREETING, "Said first on every call"),
    "greeting_voice_id": _text(field_rules.MAX_SHORT_TEXT, "The voice of the greeting", 1),
    "persona": _text(field_rules.MAX_PERSONA, "How the agent comes across"),
    "outcome_schema": definition_json_schema(),
    "recording_enabled": {"type": "boolean"},
    "voice_engine": {"type": "string", "enum": list(ENGINES), "description": "null: the account's default engine"},
    "flow_id": _text(field_rules.MAX_SHORT_TEXT, "A published flow of the account (flw_…); inbound calls then run it",
                     1),
    "transfer_destinations": {"type": "array", "items": _DESTINATION,
                              "maxItems": field_rules.MAX_TRANSFER_DESTINATIONS,
                              "description": "Ordered; tried one after another"},
    "transfer_max_attempts": {"type": "integer", "minimum": 1, "maximum": field_rules.MAX_TRANSFER_ATTEMPTS},
    "language": {"type": "string", "pattern": field_rules.LANGUAGE_TAG.pattern, "description": "BCP-47, e.g. en-US"},
    "timezone": {"type": "string", "description": "IANA name, e.g. America/New_York; hours_json is read in it"},
    "hours_json": HOURS_SCHEMA,
    "overflow_action": {
        "type": "string", "enum": list(OVERFLOW_ACTIONS),
        "description": "What a call outside hours_json gets: voicemail, transfer (to the first destination), "
                       "message (says overflow_message, then hangs up) or hangup"},
    "overflow_message": _text(field_rules.MAX_GREETING, "Said to a call outside hours when overflow_action is "
                                                        "message", 1),
    "routes": ROUTES_SCHEMA,
    "voicemail_mode": {
        "type": "string", "enum": list(VOICEMAIL_MODES),
        "description": "off; overflow_only (voicemail only through overflow_action or a route); always (every "
                       "call leaves a voicemail)"},
    "voicemail_schema": {**definition_json_schema(), "description": "The outcome of a voicemail, as an outcome_schema"},
    "voicemail_persona": _text(field_rules.MAX_PERSONA, "How the voicemail agent comes across"),
    "sms_enabled": {"type": "boolean", "description": "Send the post-call SMS templates"},
    "sms_brand_id": _text(field_rules.MAX_SHORT_TEXT, "The sender brand of the texts", 1),
    "sms_templates": SMS_TEMPLATES_SCHEMA,
}


def _doc(name: str) -> Any:
    """A field taken as any JSON (the domain checks it), documented by its schema; nullable ones
    say so."""
    schema = SETTING_SCHEMAS[name]
    if name in NULLABLE and "null" not in str(schema.get("type")):
        schema = ({**schema, "type": [schema["type"], "null"]} if "type" in schema
                  else {"anyOf": [schema, {"type": "null"}]})
    return Field(default=None, json_schema_extra=schema)


if set(SETTING_SCHEMAS) != set(FIELDS):
    raise RuntimeError(f"document exactly the settings of a number: {sorted(set(SETTING_SCHEMAS) ^ set(FIELDS))}")

if TYPE_CHECKING:
    _SettingFields = Strict
else:  # one field per setting, in the domain's order
    _SettingFields = create_model("_SettingFields", __base__=Strict, **{name: (Any, _doc(name)) for name in FIELDS})


class NumberSettings(_SettingFields):
    """The settable fields. null clears the nullable ones and is refused for the others."""

    model_config = ConfigDict(extra="allow", json_schema_extra={"additionalProperties": False})

    def given(self) -> dict[str, Any]:
        """Only the fields the body named (unknown ones too: the domain refuses them by name)."""
        named = {name: getattr(self, name) for name in self.model_fields_set if name in type(self).model_fields}
        return {**named, **(self.model_extra or {})}


class ByoNumberCreate(NumberSettings):
    e164: Annotated[str, StringConstraints(min_length=1, max_length=32)] = Field(
        description="An E.164 number of your verified carrier account")

    def given(self) -> dict[str, Any]:
        return {name: value for name, value in super().given().items() if name != "e164"}


class NumberPatch(NumberSettings):
    pass


class TransferDestinationView(msgspec.Struct, kw_only=True):
    label: str
    e164: str


class NumberView(msgspec.Struct, kw_only=True):
    """SPEC.md Number: every field (docs/numbers.md), plus ``source``, ``active``, ``language``,
    ``overflow_message`` and the timestamps. ``greeting_audio_fresh`` is false from a change of
    the greeting or its voice until its audio is rendered again."""

    id: str
    e164: str
    source: str
    active: bool
    objective: str
    greeting: str | None
    greeting_voice_id: str | None
    greeting_audio_fresh: bool
    persona: str | None
    outcome_schema: dict[str, Any]
    recording_enabled: bool
    voice_engine: str | None
    flow_id: str | None
    transfer_destinations: list[TransferDestinationView]
    transfer_max_attempts: int
    language: str
    timezone: str | None
    hours_json: dict[str, list[list[str]]] | None
    overflow_action: str
    overflow_message: str | None
    routes: list[RouteView]
    voicemail_mode: str
    voicemail_schema: dict[str, Any]
    voicemail_persona: str | None
    sms_enabled: bool
    sms_brand_id: str | None
    sms_templates: list[SmsTemplateView]
    created_at: str
    updated_at: str | None
    disconnected_at: str | None


class SmsPreviewRequest(Strict):
    template_id: Annotated[str, StringConstraints(min_length=1, max_length=64)] = Field(
        description="The id of one of the number's sms_templates (smt_…)")


def number_view(number: Number) -> NumberView:
    """A number as the API shows it: its settings as they are, the nested ones as their views."""
    settings = {name: getattr(number.configured, name) for name in FIELDS}
    settings.update(
        transfer_destinations=[TransferDestinationView(label=d["label"], e164=d["e164"])
                               for d in number.transfer_destinations],
        routes=[route_view(r) for r in number.routes],
        sms_templates=[template_view(t) for t in number.sms_templates])
    return NumberView(id=number.number_id, e164=number.e164, source=number.source, active=number.active,
                      greeting_audio_fresh=number.greeting_audio_fresh, created_at=iso(number.created_at) or "",
                      updated_at=iso(number.updated_at), disconnected_at=iso(number.disconnected_at), **settings)
