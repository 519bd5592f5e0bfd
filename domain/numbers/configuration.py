"""What a number does on its calls (SPEC.md Number): the settable fields with their defaults and
rules (``settings.NumberSettings``), and the rules between fields, which see the settings as they
will be after the change.

Pure: the standard library and the domain. Every problem is collected, never just the first.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from domain.calls import dialing_rules
from domain.errors import DialingRuleError, InputProblem, NumberConfigurationError
from domain.numbers import routes, sms_templates
from domain.numbers.settings import CHECKS, DEFAULT_OBJECTIVE, FIELDS, NULLABLE, NumberSettings

__all__ = ["DEFAULTS", "DEFAULT_OBJECTIVE", "FIELDS", "NULLABLE", "FlowExists", "check", "complete", "defaults_for"]

DEFAULTS: dict[str, Any] = NumberSettings().as_dict()  # each field's default, by name

# Whether a flow id names a published flow of the tenant (None: none exists yet).
FlowExists = Callable[[str], bool]


def defaults_for(e164: str) -> dict[str, Any]:
    """Every field's default; the time zone is the number's own when it has exactly one."""
    settings = NumberSettings().as_dict()
    try:
        zones = dialing_rules.parse_destination(e164).time_zones
    except DialingRuleError:
        zones = ()
    if len(zones) == 1:
        settings["timezone"] = zones[0]
    return settings


def complete(settings: Mapping[str, Any]) -> dict[str, Any]:
    """Stored settings with the defaults of fields they predate."""
    return NumberSettings.of(settings).as_dict()


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
        result = CHECKS[name](value, own_e164, found)
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
