"""What a number does on its calls (SPEC.md Number): the settable fields, their defaults and rules.

Pure: the standard library, the dialing rules (E.164 of transfer destinations, the number's time
zones) and the outcome schema compiler. Every problem is collected, never just the first.
"""

from __future__ import annotations

import functools
import re
import zoneinfo
from collections.abc import Mapping
from typing import Any

from domain.calls import dialing_rules
from domain.calls.engines import ENGINES
from domain.calls.outcome_schema import compile_schema
from domain.errors import DialingRuleError, InputProblem, NumberConfigurationError, OutcomeSchemaError

# The settable fields, in the order the API shows them. A field added later gets a default in
# ``DEFAULTS`` so numbers registered before it read it from there (events are a stored contract).
FIELDS = ("objective", "greeting", "persona", "outcome_schema", "recording_enabled", "voice_engine",
          "transfer_destinations", "transfer_max_attempts", "language", "timezone")
NULLABLE = frozenset({"greeting", "persona", "voice_engine", "timezone"})

DEFAULT_OBJECTIVE = ("Answer the call on behalf of the business: find out who is calling and what they need, help "
                     "with it where you can, and otherwise take a clear message with a way to call them back.")
DEFAULT_OUTCOME_SCHEMA: dict[str, Any] = {
    "summary": {"type": "string", "description": "What the caller wanted and what was agreed"},
    "caller_name": {"type": "string", "optional": True},
    "callback_requested": {"type": "boolean", "optional": True},
}
DEFAULT_LANGUAGE = "en-US"
DEFAULT_TRANSFER_ATTEMPTS = 3
MAX_TRANSFER_DESTINATIONS = 5  # SPEC.md Limits
MAX_TRANSFER_ATTEMPTS = 5
MAX_LABEL = 80
MAX_OBJECTIVE = 4000
MAX_GREETING = 1000
MAX_PERSONA = 2000

DEFAULTS: dict[str, Any] = {
    "objective": DEFAULT_OBJECTIVE,
    "greeting": None,
    "persona": None,
    "outcome_schema": compile_schema(DEFAULT_OUTCOME_SCHEMA).to_definition(),
    "recording_enabled": True,
    "voice_engine": None,  # None: the tenant's default engine
    "transfer_destinations": [],
    "transfer_max_attempts": DEFAULT_TRANSFER_ATTEMPTS,
    "language": DEFAULT_LANGUAGE,
    "timezone": None,
}

# [0-9], not \d: other scripts' digits are not E.164.
E164_SHAPE = re.compile(r"\+[1-9][0-9]{1,14}")
# The call request's BCP-47 shape (entrypoints/http/schemas/calls.py ``Language``).
LANGUAGE_TAG = re.compile(r"[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8}){0,4}")


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


def check(fields: Mapping[str, Any], *, own_e164: str) -> dict[str, Any]:
    """The normalized values of ``fields`` (any subset of ``FIELDS``), or ``NumberConfigurationError``
    listing every problem with its location relative to the request body."""
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
    if problems:
        raise NumberConfigurationError(problems)
    return checked


def _text(limit: int, *, blank_ok: bool) -> Any:
    def checked(value: Any, _: str, problems: list[InputProblem]) -> str | None:
        if not isinstance(value, str):
            problems.append(([], "must be a string", "string_type", value))
        elif len(value) > limit:
            problems.append(([], f"must be at most {limit} characters", "string_too_long", value))
        elif not blank_ok and not value.strip():
            problems.append(([], "must not be blank", "string_too_short", value))
        else:
            return value
        return None

    return checked


def _outcome_schema(value: Any, _: str, problems: list[InputProblem]) -> dict[str, Any] | None:
    try:
        return compile_schema(value).to_definition()
    except OutcomeSchemaError as exc:
        problems.extend((list(loc), message, kind, None) for loc, message, kind in exc.problems)
        return None


def _boolean(value: Any, _: str, problems: list[InputProblem]) -> bool | None:
    if isinstance(value, bool):
        return value
    problems.append(([], "must be true or false", "bool_type", value))
    return None


def _voice_engine(value: Any, _: str, problems: list[InputProblem]) -> str | None:
    if value in ENGINES:
        return str(value)
    problems.append(([], f"must be one of {', '.join(ENGINES)} (or null for the tenant's default)", "enum", value))
    return None


def _attempts(value: Any, _: str, problems: list[InputProblem]) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_TRANSFER_ATTEMPTS:
        return value
    problems.append(([], f"must be a whole number from 1 to {MAX_TRANSFER_ATTEMPTS}", "transfer_max_attempts", value))
    return None


def _language(value: Any, _: str, problems: list[InputProblem]) -> str | None:
    if isinstance(value, str) and LANGUAGE_TAG.fullmatch(value):
        return value
    problems.append(([], "must be a BCP-47 language tag such as en-US", "language", value))
    return None


@functools.cache
def _zones() -> frozenset[str]:
    return frozenset(zoneinfo.available_timezones())


def _timezone(value: Any, _: str, problems: list[InputProblem]) -> str | None:
    if isinstance(value, str) and value in _zones():
        return value
    problems.append(([], "must be an IANA time zone such as America/New_York", "timezone", value))
    return None


def _destinations(value: Any, own_e164: str, problems: list[InputProblem]) -> list[dict[str, str]] | None:
    if not isinstance(value, list):
        problems.append(([], "must be a list of {label, e164}", "list_type", value))
        return None
    if len(value) > MAX_TRANSFER_DESTINATIONS:
        problems.append(([], f"a number has at most {MAX_TRANSFER_DESTINATIONS} transfer destinations",
                         "too_long", len(value)))
        return None
    found: list[dict[str, str]] = []
    for index, item in enumerate(value):
        destination = _destination(item, own_e164, [index], problems)
        if destination is None:
            continue
        if any(d["e164"] == destination["e164"] for d in found):
            problems.append(([index, "e164"], "the same number is already a destination", "duplicate_destination",
                             destination["e164"]))
            continue
        found.append(destination)
    return found


def _destination(item: Any, own_e164: str, loc: list[str | int], problems: list[InputProblem]) -> dict[str, str] | None:
    if not isinstance(item, Mapping):
        problems.append((loc, "must be an object {label, e164}", "dict_type", item))
        return None
    before = len(problems)
    for key in item:
        if key not in ("label", "e164"):
            problems.append(([*loc, key], "is not a field of a transfer destination", "extra_forbidden", item[key]))
    label, e164 = item.get("label"), item.get("e164")
    if not isinstance(label, str) or not label.strip() or len(label) > MAX_LABEL:
        problems.append(([*loc, "label"], f"must be text of 1 to {MAX_LABEL} characters", "label", label))
    if not isinstance(e164, str):
        problems.append(([*loc, "e164"], "must be an E.164 number", "invalid_e164", e164))
    else:
        try:
            dialing_rules.parse_destination(e164)
        except DialingRuleError as exc:
            problems.append(([*loc, "e164"], exc.message, exc.code, e164))
        else:
            if e164 == own_e164:
                problems.append(([*loc, "e164"], "a number cannot transfer to itself", "transfer_to_self", e164))
    if len(problems) > before:
        return None
    return {"label": label.strip(), "e164": e164}  # type: ignore[union-attr]


_CHECKS = {
    "objective": _text(MAX_OBJECTIVE, blank_ok=False),
    "greeting": _text(MAX_GREETING, blank_ok=True),
    "persona": _text(MAX_PERSONA, blank_ok=True),
    "outcome_schema": _outcome_schema,
    "recording_enabled": _boolean,
    "voice_engine": _voice_engine,
    "transfer_destinations": _destinations,
    "transfer_max_attempts": _attempts,
    "language": _language,
    "timezone": _timezone,
}


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value
