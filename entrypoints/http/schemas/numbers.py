"""Request and response shapes of ``/v1/numbers``.

A number's settings are checked by the domain alone (``domain.numbers.configuration``), so that a
request hears of every problem at once: types, bounds, the shapes of hours, routes and SMS
templates, and the rules between fields. The request model only carries the body through and
documents each field's JSON Schema for the OpenAPI document (docs/numbers.md). PATCH sends only
the fields it changes: ``model_fields_set`` tells an absent field from an explicit null.
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from pydantic import ConfigDict, Field, StringConstraints

from domain.calls.engines import ENGINES
from domain.calls.outcome_schema import definition_json_schema
from domain.numbers import field_rules
from domain.numbers.configuration import NULLABLE
from domain.numbers.hours import OVERFLOW_ACTIONS, VOICEMAIL_MODES
from entrypoints.http.schemas.calls import Strict
from entrypoints.http.schemas.number_shapes import (
    HOURS_SCHEMA,
    ROUTES_SCHEMA,
    SMS_TEMPLATES_SCHEMA,
    RouteView,
    SmsTemplateView,
)


def _doc(name: str, schema: dict[str, Any]) -> Any:
    """A field taken as any JSON (the domain checks it), documented by ``schema``; nullable ones
    say so."""
    if name in NULLABLE and "null" not in str(schema.get("type")):
        schema = ({**schema, "type": [schema["type"], "null"]} if "type" in schema
                  else {"anyOf": [schema, {"type": "null"}]})
    return Field(default=None, json_schema_extra=schema)


def _text(max_length: int, description: str, min_length: int = 0) -> dict[str, Any]:
    return {"type": "string", "minLength": min_length, "maxLength": max_length, "description": description}


_DESTINATION = {"type": "object", "title": "TransferDestination", "required": ["label", "e164"],
                "additionalProperties": False,
                "properties": {"label": _text(field_rules.MAX_LABEL, "How the agent names it", 1),
                               "e164": {"type": "string", "description": "E.164, not the number itself"}}}


class NumberSettings(Strict):
    """The settable fields. null clears the nullable ones and is refused for the others."""

    model_config = ConfigDict(extra="allow", json_schema_extra={"additionalProperties": False})

    objective: Any = _doc("objective", _text(field_rules.MAX_OBJECTIVE, "What the agent pursues on each call", 1))
    greeting: Any = _doc("greeting", _text(field_rules.MAX_GREETING, "Said first on every call"))
    greeting_voice_id: Any = _doc("greeting_voice_id", _text(field_rules.MAX_SHORT_TEXT, "The voice of the greeting", 1))
    persona: Any = _doc("persona", _text(field_rules.MAX_PERSONA, "How the agent comes across"))
    outcome_schema: Any = _doc("outcome_schema", definition_json_schema())
    recording_enabled: Any = _doc("recording_enabled", {"type": "boolean"})
    voice_engine: Any = _doc("voice_engine", {"type": "string", "enum": list(ENGINES),
                                        "description": "null: the account's default engine"})
    flow_id: Any = _doc("flow_id", _text(field_rules.MAX_SHORT_TEXT, "A published flow of the account (flw_…); inbound "
                                                                 "calls then run it", 1))
    transfer_destinations: Any = _doc("transfer_destinations", {
        "type": "array", "items": _DESTINATION, "maxItems": field_rules.MAX_TRANSFER_DESTINATIONS,
        "description": "Ordered; tried one after another"})
    transfer_max_attempts: Any = _doc("transfer_max_attempts", {"type": "integer", "minimum": 1,
                                                          "maximum": field_rules.MAX_TRANSFER_ATTEMPTS})
    language: Any = _doc("language", {"type": "string", "pattern": field_rules.LANGUAGE_TAG.pattern,
                                "description": "BCP-47, e.g. en-US"})
    timezone: Any = _doc("timezone", {"type": "string", "description": "IANA name, e.g. America/New_York; hours_json is "
                                                                 "read in it"})
    hours_json: Any = _doc("hours_json", HOURS_SCHEMA)
    overflow_action: Any = _doc("overflow_action", {
        "type": "string", "enum": list(OVERFLOW_ACTIONS),
        "description": "What a call outside hours_json gets: voicemail, transfer (to the first destination), "
                       "message (says overflow_message, then hangs up) or hangup"})
    overflow_message: Any = _doc("overflow_message", _text(field_rules.MAX_GREETING, "Said to a call outside hours when "
                                                                               "overflow_action is message", 1))
    routes: Any = _doc("routes", ROUTES_SCHEMA)
    voicemail_mode: Any = _doc("voicemail_mode", {
        "type": "string", "enum": list(VOICEMAIL_MODES),
        "description": "off; overflow_only (voicemail only through overflow_action or a route); always (every "
                       "call leaves a voicemail)"})
    voicemail_schema: Any = _doc("voicemail_schema", {**definition_json_schema(),
                                                "description": "The outcome of a voicemail, as an outcome_schema"})
    voicemail_persona: Any = _doc("voicemail_persona", _text(field_rules.MAX_PERSONA, "How the voicemail agent comes "
                                                                                "across"))
    sms_enabled: Any = _doc("sms_enabled", {"type": "boolean", "description": "Send the post-call SMS templates"})
    sms_brand_id: Any = _doc("sms_brand_id", _text(field_rules.MAX_SHORT_TEXT, "The sender brand of the texts", 1))
    sms_templates: Any = _doc("sms_templates", SMS_TEMPLATES_SCHEMA)

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
