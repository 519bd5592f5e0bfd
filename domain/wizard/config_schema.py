"""The JSON Schema of a wizard configuration (``config_rules.FIELDS``): the input schema of the
language model's forced tool and the ``config`` of the OpenAPI document. It describes; the checks
of ``config_rules`` (those of ``PATCH /v1/numbers/{id}``) decide. Pure."""

from __future__ import annotations

from typing import Any

from domain.calls.outcome_schema import definition_json_schema
from domain.numbers import field_rules, hours, sms_templates
from domain.wizard.config_rules import FIELDS

_TIME = {"type": "string", "pattern": r"^(([01][0-9]|2[0-3]):[0-5][0-9]|24:00)$"}


def _text(limit: int, description: str, minimum: int = 0) -> dict[str, Any]:
    return {"type": "string", "minLength": minimum, "maxLength": limit, "description": description}


def config_json_schema() -> dict[str, Any]:
    condition = {
        "type": "object", "required": ["field", "op"], "additionalProperties": False,
        "description": "When the text is sent: a test of one outcome field (present/absent take no value)",
        "properties": {"field": {"type": "string", "description": "A field of outcome_schema"},
                       "op": {"type": "string", "enum": list(sms_templates.OPS)},
                       "value": {"type": ["string", "number", "integer", "boolean"]}},
    }
    return {
        "type": "object",
        "title": "WizardConfig",
        "description": "A Number configuration that PATCH /v1/numbers/{id} accepts as it is",
        "required": list(FIELDS),
        "additionalProperties": False,
        "properties": {
            "greeting": _text(field_rules.MAX_GREETING, "Said first on every call; names the business"),
            "persona": _text(field_rules.MAX_PERSONA, "How the agent comes across"),
            "objective": _text(field_rules.MAX_OBJECTIVE, "What the agent pursues on each call", 1),
            "outcome_schema": {**definition_json_schema(),
                               "description": "What each call should yield: field name to {type, optional, "
                                              "description, values}"},
            "timezone": {"type": "string", "description": "IANA time zone the hours are read in, e.g. "
                                                          "America/Chicago"},
            "hours_json": {
                "type": "object", "additionalProperties": False,
                "description": "Opening hours: for each day mon..sun a list of [start, end) windows in 24 h HH:MM "
                               "(end may be 24:00); a day left out is closed",
                "properties": {day: {"type": "array", "maxItems": hours.MAX_WINDOWS,
                                     "items": {"type": "array", "prefixItems": [_TIME, _TIME], "minItems": 2,
                                               "maxItems": 2}}
                               for day in hours.DAYS}},
            "overflow_action": {"type": "string", "enum": ["voicemail", "hangup"],
                                "description": "What a call outside the hours gets"},
            "voicemail_mode": {"type": "string", "enum": list(hours.VOICEMAIL_MODES),
                               "description": "overflow_only: voicemail only outside the hours"},
            "voicemail_schema": {**definition_json_schema(), "description": "What a voicemail should yield"},
            "voicemail_persona": _text(field_rules.MAX_PERSONA, "How the voicemail agent comes across"),
            "sms_enabled": {"type": "boolean", "description": "Send the SMS template after calls"},
            "sms_templates": {
                "type": "array", "minItems": 1, "maxItems": 1,
                "description": "One text sent to the caller after a call whose condition holds; placeholders: "
                               "{{ outcome.<field> }}, {{ call.from }}, {{ call.to }}, {{ number.e164 }}",
                "items": {"type": "object", "required": ["name", "body"], "additionalProperties": False,
                          "properties": {"name": _text(sms_templates.MAX_NAME, "A short name", 1),
                                         "body": _text(sms_templates.MAX_BODY, "The text", 1),
                                         "condition": condition}}},
            "transfer_destinations": {"type": "array", "maxItems": 0, "items": {},
                                      "description": "Always empty: the business adds its own numbers"},
        },
    }
