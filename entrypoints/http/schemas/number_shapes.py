"""The shapes of a number's structured settings in the OpenAPI document (docs/numbers.md): opening
hours, routes and SMS templates. Requests take them as plain JSON so that the domain's rules
(``domain/numbers``) report every problem at once; answers are typed Structs.
"""

from __future__ import annotations

from typing import Any

import msgspec

from domain.numbers import hours, routes, sms_templates
from domain.numbers.field_rules import MAX_LABEL

_TIME = {"type": "string", "pattern": r"^(([01][0-9]|2[0-3]):[0-5][0-9]|24:00)$", "examples": ["09:00"]}

HOURS_SCHEMA: dict[str, Any] = {
    "type": ["object", "null"],
    "title": "OpeningHours",
    "description": "Opening hours in the number's `timezone`: for each day (`mon`..`sun`) a list of non-overlapping "
                   "`[start, end)` windows in 24 h `HH:MM` (`end` may be `24:00`). A day left out is closed; null "
                   "means always open. Outside the hours a call gets `overflow_action`.",
    "additionalProperties": False,
    "properties": {day: {"type": "array", "maxItems": hours.MAX_WINDOWS,
                         "items": {"type": "array", "prefixItems": [_TIME, _TIME], "minItems": 2, "maxItems": 2}}
                   for day in hours.DAYS},
    "examples": [{"mon": [["09:00", "12:30"], ["13:30", "17:30"]], "sat": [["10:00", "14:00"]]}],
}

ROUTES_SCHEMA: dict[str, Any] = {
    "type": "array",
    "title": "Routes",
    "description": "Tried in order when a call arrives; the first whose `match` holds decides (`agent`: the "
                   "number's agent takes the call; `transfer`: to the destination with that label; `voicemail`).",
    "maxItems": routes.MAX_ROUTES,
    "items": {
        "type": "object",
        "title": "Route",
        "required": ["match", "action"],
        "additionalProperties": False,
        "properties": {
            "match": {"type": "object", "minProperties": 1, "maxProperties": 1, "additionalProperties": False,
                      "properties": {
                          "caller_prefix": {"type": "string", "pattern": r"^\+[1-9][0-9]{0,14}$",
                                            "description": "The caller's E.164 starts with it"},
                          "keypad": {"type": "string", "enum": list(routes.KEYPAD_KEYS),
                                     "description": "The caller pressed this key"}}},
            "action": {"type": "string", "enum": list(routes.ROUTE_ACTIONS)},
            "destination": {"type": "string", "minLength": 1, "maxLength": MAX_LABEL,
                            "description": "A transfer destination's label; for `transfer` only (required there)"},
        },
    },
    "examples": [[{"match": {"keypad": "2"}, "action": "transfer", "destination": "Front desk"},
                  {"match": {"caller_prefix": "+44"}, "action": "agent"}]],
}

_CONDITION = {
    "type": "object",
    "title": "SmsCondition",
    "required": ["field", "op"],
    "additionalProperties": False,
    "description": "When the message is sent: a test of one outcome field (`present`/`absent` take no `value`; "
                   "`gt`/`lt` take a number and need a number field).",
    "properties": {"field": {"type": "string"}, "op": {"type": "string", "enum": list(sms_templates.OPS)},
                   "value": {"type": ["string", "number", "integer", "boolean"]}},
}

SMS_TEMPLATES_SCHEMA: dict[str, Any] = {
    "type": "array",
    "title": "SmsTemplates",
    "maxItems": sms_templates.MAX_TEMPLATES,
    "description": "Texts sent after a call whose `condition` holds on its outcome. The body's placeholders: "
                   "`{{ outcome.<field> }}`, `{{ call.from }}`, `{{ call.to }}`, `{{ number.e164 }}`. Send each "
                   "template's `id` back to keep it; one without gets a new id.",
    "items": {
        "type": "object",
        "title": "SmsTemplate",
        "required": ["name", "body"],
        "additionalProperties": False,
        "properties": {
            "id": {"type": "string", "pattern": "^smt_[0-9a-f]{32}$", "description": "Assigned by the service"},
            "name": {"type": "string", "minLength": 1, "maxLength": sms_templates.MAX_NAME},
            "body": {"type": "string", "minLength": 1, "maxLength": sms_templates.MAX_BODY},
            "condition": _CONDITION,
        },
    },
    "examples": [[{"name": "Booked", "body": "Thanks {{ outcome.caller_name }}, see you soon. {{ number.e164 }}",
                   "condition": {"field": "callback_requested", "op": "eq", "value": True}}]],
}


class RouteMatchView(msgspec.Struct, kw_only=True, omit_defaults=True):
    caller_prefix: str | None = None
    keypad: str | None = None


class RouteView(msgspec.Struct, kw_only=True, omit_defaults=True):
    match: RouteMatchView
    action: str
    destination: str | None = None


class SmsConditionView(msgspec.Struct, kw_only=True, omit_defaults=True):
    field: str
    op: str
    value: str | int | float | bool | None = None


class SmsTemplateView(msgspec.Struct, kw_only=True):
    id: str
    name: str
    body: str
    condition: SmsConditionView | None


def route_view(route: dict[str, Any]) -> RouteView:
    return RouteView(match=RouteMatchView(**route["match"]), action=route["action"],
                     destination=route.get("destination"))


def template_view(template: dict[str, Any]) -> SmsTemplateView:
    condition = template.get("condition")
    return SmsTemplateView(id=template["id"], name=template["name"], body=template["body"],
                           condition=SmsConditionView(**condition) if condition is not None else None)


class SmsPreview(msgspec.Struct, kw_only=True):
    """What the template would send after a call whose outcome is the example one built from the
    number's outcome_schema (each field a fixed example of its type)."""

    would_fire: bool
    rendered_body: str
