"""The field types of an ``outcome_schema`` and the one field-name rule: per type its JSON Schema
fragment, a short description, how the agent names it and asks for it, how an answer is read
and how a value is checked. The compiler, the prompts, the scripted agent and the docs render
from this table. Pure: stdlib only.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date, datetime, timezone
from types import MappingProxyType
from typing import Any

from domain.calls import spoken_answers

BOOLEAN, STRING, DATETIME, DATE, INTEGER, NUMBER, ENUM, ARRAY = (
    "boolean", "string", "datetime", "date", "integer", "number", "enum", "array",
)

FIELD_NAME_PATTERN = r"^[a-z][a-z0-9_]{0,63}$"
FIELD_NAME_RULE = f"field names must match {FIELD_NAME_PATTERN}"
_FIELD_NAME = re.compile(FIELD_NAME_PATTERN)
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def is_field_name(name: Any) -> bool:
    return isinstance(name, str) and _FIELD_NAME.fullmatch(name) is not None


@dataclass(frozen=True, slots=True)
class Fault:
    """A value that failed its type's check: (loc inside the value, message, type code) each."""

    problems: list[tuple[list[str | int], str, str]]


def _fault(message: str, kind: str) -> Fault:
    return Fault([([], message, kind)])


Values = tuple[str, ...]  # an enum's values; empty for every other type


@dataclass(frozen=True, slots=True)
class FieldType:
    name: str
    json_schema: Mapping[str, Any]  # the fragment of a value of this type (read-only)
    summary: str  # what a value looks like, for the API docs
    kind: Callable[[Values], str]  # how the agent's prompt names it: "yes or no", "one of: ..."
    ask: Callable[[Values], str]  # what ends a spoken question for it: "? Yes or no?"
    read: Callable[[str, Values], Any]  # a lenient reading of a spoken answer; None: not settled
    check: Callable[[Any, Values], Any]  # the normalized value, or a ``Fault``


def _check_boolean(value: Any, _: Values) -> Any:
    return value if isinstance(value, bool) else _fault("must be true or false", "bool_type")


def _check_string(value: Any, _: Values) -> Any:
    return value if isinstance(value, str) else _fault("must be a string", "string_type")


def _check_integer(value: Any, _: Values) -> Any:
    if isinstance(value, bool):
        return _fault("must be an integer, not a boolean", "int_type")
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    return _fault("must be an integer", "int_type")


def _check_number(value: Any, _: Values) -> Any:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return _fault("must be a number", "float_type")
    if isinstance(value, float) and not math.isfinite(value):
        return _fault("must be a finite number", "finite_number")
    return int(value) if isinstance(value, int) else float(value)


def _check_enum(value: Any, values: Values) -> Any:
    if not isinstance(value, str):
        return _fault("must be a string", "string_type")
    if value not in values:
        return _fault(f"must be one of {', '.join(map(repr, values))}", "enum")
    return value


def _check_datetime(value: Any, _: Values) -> Any:
    if not isinstance(value, str):
        return _fault("must be an ISO 8601 date-time string", "string_type")
    try:
        parsed = datetime.fromisoformat(value) if value.isascii() and "T" in value.upper() else None
    except ValueError:
        parsed = None
    if parsed is None:
        return _fault("must be an ISO 8601 date-time such as 2026-03-08T14:30:00Z", "datetime_parsing")
    if parsed.tzinfo is None or parsed.utcoffset() is None:
        return _fault("must include a time zone offset (Z or +HH:MM)", "timezone_aware")
    try:
        utc = parsed.astimezone(timezone.utc)
    except OverflowError:
        return _fault("is out of range once converted to UTC", "datetime_parsing")
    return utc.replace(tzinfo=None).isoformat() + "Z"


def _check_date(value: Any, _: Values) -> Any:
    if not isinstance(value, str) or _DATE.fullmatch(value) is None:
        return _fault("must be a date as YYYY-MM-DD", "date_parsing")
    try:
        date.fromisoformat(value)
    except ValueError:
        return _fault("is not a real calendar date", "date_parsing")
    return value


def _check_array(value: Any, _: Values) -> Any:
    if not isinstance(value, list | tuple):
        return _fault("must be an array of strings", "list_type")
    bad = [([i], "must be a string", "string_type") for i, item in enumerate(value) if not isinstance(item, str)]
    return Fault(bad) if bad else list(value)


def _options(values: Values) -> str:
    if len(values) > 1:
        return ", ".join(values[:-1]) + f" or {values[-1]}"
    return values[0] if values else ""


def _fixed(text: str) -> Callable[[Values], str]:
    return lambda _values: text


def _type(name: str, json_schema: dict[str, Any], summary: str, kind: Callable[[Values], str],
          ask: Callable[[Values], str], read: Callable[[str, Values], Any],
          check: Callable[[Any, Values], Any]) -> FieldType:
    return FieldType(name, MappingProxyType(json_schema), summary, kind, ask, read, check)


FIELD_TYPES_TABLE: tuple[FieldType, ...] = (
    _type(BOOLEAN, {"type": "boolean"}, "true or false", _fixed("yes or no"), _fixed("? Yes or no?"),
          spoken_answers.boolean, _check_boolean),
    _type(STRING, {"type": "string"}, "free text", _fixed("text"), _fixed("?"),
          spoken_answers.string, _check_string),
    _type(DATETIME, {"type": "string", "format": "date-time"},
          "an ISO 8601 date-time with a time zone offset, normalized to UTC (2026-03-08T14:30:00Z)",
          _fixed("a date and time"), _fixed("? A date and time, please."), spoken_answers.datetime, _check_datetime),
    _type(DATE, {"type": "string", "format": "date"}, "a calendar date as YYYY-MM-DD", _fixed("a date"),
          _fixed("? A date, please."), spoken_answers.date, _check_date),
    _type(INTEGER, {"type": "integer"}, "a whole number", _fixed("a whole number"), _fixed("?"),
          spoken_answers.number, _check_integer),
    _type(NUMBER, {"type": "number"}, "a finite number", _fixed("a number"), _fixed("?"),
          spoken_answers.number, _check_number),
    _type(ENUM, {"type": "string"}, "exactly one of the field's `values` (required for this type only)",
          lambda values: "one of: " + ", ".join(f'"{value}"' for value in values),
          lambda values: f"? The options are {_options(values)}." if values else "?",
          spoken_answers.enum, _check_enum),
    _type(ARRAY, {"type": "array", "items": {"type": "string"}}, "a list of strings", _fixed("a list"),
          _fixed("? You can list several."), spoken_answers.array, _check_array),
)
TYPES: Mapping[str, FieldType] = MappingProxyType({t.name: t for t in FIELD_TYPES_TABLE})
FIELD_TYPES: tuple[str, ...] = tuple(TYPES)


def field_type(name: str) -> FieldType:
    return TYPES[name]


def types_summary() -> str:
    """One line per type (``- boolean: true or false``), for docs and descriptions."""
    return "\n".join(f"- `{t.name}`: {t.summary}" for t in FIELD_TYPES_TABLE)
