"""What a number does on its calls (SPEC.md Number): the settable fields, their defaults, the rule
of each (``field_rules.py``, ``hours.py``, ``routes.py``, ``sms_templates.py``) and the rules
between fields, which see the settings as they will be after the change.

Pure: the standard library and the domain. Every problem is collected, never just the first.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from domain.calls import dialing_rules
from domain.calls.outcome_schema import compile_schema
from domain.errors import DialingRuleError, InputProblem, NumberConfigurationError
from domain.numbers import field_rules as rules
from domain.numbers import hours, routes, sms_templates
from domain.numbers.field_rules import MAX_GREETING, MAX_PERSONA, MAX_SHORT_TEXT

# The settable fields, in the order the API shows them. A field added later gets a default in
# ``DEFAULTS`` so numbers registered before it read it from there (events are a stored contract).
FIELDS = ("objective", "greeting", "greeting_voice_id", "persona", "outcome_schema", "recording_enabled",
          "voice_engine", "flow_id", "transfer_destinations", "transfer_max_attempts", "language", "timezone",
          "hours_json", "overflow_action", "overflow_message", "routes", "voicemail_mode", "voicemail_schema",
          "voicemail_persona", "sms_enabled", "sms_brand_id", "sms_templates")
NULLABLE = frozenset({"greeting", "greeting_voice_id", "persona", "voice_engine", "flow_id", "timezone",
                      "hours_json", "overflow_message", "voicemail_persona", "sms_brand_id"})

DEFAULT_OBJECTIVE = ("Answer the call on behalf of the business: find out who is calling and what they need, help "
                     "with it where you can, and otherwise take a clear message with a way to call them back.")
DEFAULT_OUTCOME_SCHEMA: dict[str, Any] = {
    "summary": {"type": "string", "description": "What the caller wanted and what was agreed"},
    "caller_name": {"type": "string", "optional": True},
    "callback_requested": {"type": "boolean", "optional": True},
}
DEFAULT_VOICEMAIL_SCHEMA: dict[str, Any] = {
    "message": {"type": "string", "description": "What the caller said, in a sentence or two"},
    "caller_name": {"type": "string", "optional": True},
    "callback_number": {"type": "string", "optional": True, "description": "A number to call back, if given"},
}
DEFAULT_LANGUAGE = "en-US"
DEFAULT_TRANSFER_ATTEMPTS = 3

DEFAULTS: dict[str, Any] = {
    "objective": DEFAULT_OBJECTIVE,
    "greeting": None,
    "greeting_voice_id": None,  # None: the voice of the number's engine
    "persona": None,
    "outcome_schema": compile_schema(DEFAULT_OUTCOME_SCHEMA).to_definition(),
    "recording_enabled": True,
    "voice_engine": None,  # None: the tenant's default engine
    "flow_id": None,
    "transfer_destinations": [],
    "transfer_max_attempts": DEFAULT_TRANSFER_ATTEMPTS,
    "language": DEFAULT_LANGUAGE,
    "timezone": None,
    "hours_json": None,  # always open
    "overflow_action": "voicemail",
    "overflow_message": None,
    "routes": [],
    "voicemail_mode": "overflow_only",
    "voicemail_schema": compile_schema(DEFAULT_VOICEMAIL_SCHEMA).to_definition(),
    "voicemail_persona": None,
    "sms_enabled": False,
    "sms_brand_id": None,
    "sms_templates": [],
}

# Whether a flow id names a published flow of the tenant (None: none exists yet).
FlowExists = Callable[[str], bool]


def defaults_for(e164: str) -> dict[str, Any]:
    """Every field's default; the time zone is the number's own when it has exactly one."""
    settings = {name: _copy(value) for name, value in DEFAULTS.items()}
    try:
        zones = dialing_rules.parse_destination(e164).time_zones
    except DialingRuleError:
        zones = ()
    if len(zones) == 1:
        settings["timezone"] = zones[0]
    return settings


def complete(settings: Mapping[str, Any]) -> dict[str, Any]:
    """Stored settings with the defaults of fields they predate."""
    return {name: _copy(settings[name]) if name in settings else _copy(DEFAULTS[name]) for name in FIELDS}


def check(fields: Mapping[str, Any], *, own_e164: str, current: Mapping[str, Any] | None = None,
          flow_exists: FlowExists | None = None) -> dict[str, Any]:
    """The normalized values of ``fields`` (any subset of ``FIELDS``), or ``NumberConfigurationError``
    listing every problem with its location relative to the request body. ``current``: the
    settings the fields change (the defaults of a new number), for the rules between fields."""
    problems: list[InputProblem] = []
    checked: dict[str, Any] = {}
    for name, value in fields.items():
        if name not in FIELDS:
            problems.append(([name], f"{name} is not a setting of a number", "extra_forbidden", value))
            continue
        if value is None and name in NULLABLE:
            checked[name] = None
            continue
        found: list[InputProblem] = []
        result = _CHECKS[name](value, own_e164, found)
        problems.extend(([name, *loc], message, kind, bad) for loc, message, kind, bad in found)
        if not found:
            checked[name] = result
    if checked.get("flow_id") is not None and (flow_exists is None or not flow_exists(checked["flow_id"])):
        problems.append((["flow_id"], f"no published flow {checked['flow_id']} of this account", "flow_not_found",
                         checked["flow_id"]))
    merged = {**complete(current if current is not None else defaults_for(own_e164)), **checked}
    _check_together(merged, touched=set(fields), checked=checked, problems=problems)
    if problems:
        raise NumberConfigurationError(problems)
    return checked


def _check_together(merged: dict[str, Any], *, touched: set[str], checked: dict[str, Any],
                    problems: list[InputProblem]) -> None:
    """The rules between fields, on the settings as they will be; each runs when the request names
    one of its fields (a stored setting an older version allowed is not refused for a change of
    another). A fixed value of ``checked`` (SMS conditions in the schema's types) replaces its own."""
    def valid(*names: str) -> bool:
        return not any(name in touched and name not in checked for name in names)

    if {"sms_templates", "outcome_schema"} & touched and valid("sms_templates", "outcome_schema"):
        found: list[InputProblem] = []
        fixed = sms_templates.check_against_schema(merged["sms_templates"], merged["outcome_schema"], found)
        problems.extend((["sms_templates", *loc], message, kind, bad) for loc, message, kind, bad in found)
        if fixed is not None and "sms_templates" in checked:
            checked["sms_templates"] = fixed
    if {"routes", "transfer_destinations"} & touched and valid("routes", "transfer_destinations"):
        found = []
        routes.check_route_destinations(merged["routes"], merged["transfer_destinations"], found)
        problems.extend((["routes", *loc], message, kind, bad) for loc, message, kind, bad in found)
    together = {"overflow_action", "transfer_destinations", "overflow_message", "hours_json", "timezone",
                "voicemail_mode", "routes"}
    if together & touched and valid(*together):
        action = merged["overflow_action"]
        if action == "transfer" and not merged["transfer_destinations"]:
            problems.append((["overflow_action"], "transfer needs at least one transfer destination (the first one "
                             "takes the calls outside hours)", "transfer_destination_missing", action))
        if action == "message" and not (merged["overflow_message"] or "").strip():
            problems.append((["overflow_message"], "overflow_action message speaks overflow_message: set it",
                             "overflow_message_missing", merged["overflow_message"]))
        if merged["hours_json"] is not None and merged["timezone"] is None:
            problems.append((["timezone"], "hours_json is read in the number's time zone: set timezone (an IANA "
                             "name such as America/New_York)", "timezone_required", None))
        voicemail_used = action == "voicemail" or any(r["action"] == "voicemail" for r in merged["routes"])
        if merged["voicemail_mode"] == "off" and voicemail_used:
            problems.append((["voicemail_mode" if "voicemail_mode" in touched else "overflow_action"],
                             "voicemail is off, but overflow_action or a route sends calls to voicemail: choose "
                             "another action or turn voicemail on", "voicemail_off", merged["voicemail_mode"]))


_CHECKS: dict[str, Callable[[Any, str, list[InputProblem]], Any]] = {
    "objective": rules.text(rules.MAX_OBJECTIVE, blank_ok=False),
    "greeting": rules.text(MAX_GREETING, blank_ok=True),
    "greeting_voice_id": rules.text(MAX_SHORT_TEXT, blank_ok=False),
    "persona": rules.text(MAX_PERSONA, blank_ok=True),
    "outcome_schema": rules.outcome_schema,
    "recording_enabled": rules.boolean,
    "voice_engine": rules.voice_engine,
    "flow_id": rules.text(MAX_SHORT_TEXT, blank_ok=False),
    "transfer_destinations": rules.destinations,
    "transfer_max_attempts": rules.attempts,
    "language": rules.language,
    "timezone": rules.timezone,
    "hours_json": hours.check_hours,
    "overflow_action": hours.check_overflow_action,
    "overflow_message": rules.text(MAX_GREETING, blank_ok=False),
    "routes": routes.check_routes,
    "voicemail_mode": hours.check_voicemail_mode,
    "voicemail_schema": rules.outcome_schema,
    "voicemail_persona": rules.text(MAX_PERSONA, blank_ok=True),
    "sms_enabled": rules.boolean,
    "sms_brand_id": rules.text(MAX_SHORT_TEXT, blank_ok=False),
    "sms_templates": sms_templates.check_templates,
}


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value
