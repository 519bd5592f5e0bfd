"""The caller's ``outcome_schema`` (SPEC.md "Call create request"): compile once, validate outcomes.

Pure and framework-free: stdlib only. Every problem is collected, never just the first.
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from typing import Any

from domain.calls import spoken_answers
from domain.errors import OutcomeInvalidError, OutcomeSchemaError, Problem

BOOLEAN, STRING, DATETIME, DATE, INTEGER, NUMBER, ENUM, ARRAY = (
    "boolean", "string", "datetime", "date", "integer", "number", "enum", "array",
)
FIELD_TYPES = (BOOLEAN, STRING, DATETIME, DATE, INTEGER, NUMBER, ENUM, ARRAY)
MAX_FIELDS = 50
MAX_DESCRIPTION = 500
DEFINITION_KEYS = ("type", "optional", "description", "values")
JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"

_FIELD_NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_JSON_TYPES = {
    BOOLEAN: {"type": "boolean"},
    STRING: {"type": "string"},
    DATETIME: {"type": "string", "format": "date-time"},
    DATE: {"type": "string", "format": "date"},
    INTEGER: {"type": "integer"},
    NUMBER: {"type": "number"},
    ENUM: {"type": "string"},
    ARRAY: {"type": "array", "items": {"type": "string"}},
}


@dataclass(frozen=True, slots=True)
class FieldSpec:
    name: str
    type: str
    optional: bool = False
    description: str | None = None
    values: tuple[str, ...] | None = None  # enum only


@dataclass(frozen=True, slots=True)
class CompiledSchema:
    fields: tuple[FieldSpec, ...]
    _json_schema: dict[str, Any] = field(repr=False, compare=False)

    @property
    def json_schema(self) -> dict[str, Any]:
        """JSON Schema 2020-12 of a conforming outcome (a copy: the compiled one never changes)."""
        return copy.deepcopy(self._json_schema)

    def field(self, name: str) -> FieldSpec:
        for spec in self.fields:
            if spec.name == name:
                return spec
        raise KeyError(name)

    def to_definition(self) -> dict[str, dict[str, Any]]:
        """The canonical request form: what an event stores and ``compile_schema`` accepts again."""
        out: dict[str, dict[str, Any]] = {}
        for spec in self.fields:
            entry: dict[str, Any] = {"type": spec.type, "optional": spec.optional}
            if spec.description is not None:
                entry["description"] = spec.description
            if spec.values is not None:
                entry["values"] = list(spec.values)
            out[spec.name] = entry
        return out

    def validate(self, outcome: Mapping[str, Any]) -> dict[str, Any]:
        """The normalized outcome, or ``OutcomeInvalidError`` listing every problem."""
        if not isinstance(outcome, Mapping):
            raise OutcomeInvalidError([([], "the outcome must be an object", "dict_type")])
        problems: list[Problem] = []
        known = {spec.name for spec in self.fields}
        for key in outcome:
            if key not in known:
                problems.append(([_loc(key)], "is not a field of the outcome_schema", "extra_forbidden"))
        normalized: dict[str, Any] = {}
        for spec in self.fields:
            if spec.name not in outcome:
                if not spec.optional:
                    problems.append(([spec.name], "required field is missing", "missing"))
                continue
            value = outcome[spec.name]
            if value is None and spec.optional:
                normalized[spec.name] = None
                continue
            result = _check_value(spec, value)
            if isinstance(result, _Fault):
                problems.extend(([spec.name, *loc], msg, kind) for loc, msg, kind in result.problems)
            else:
                normalized[spec.name] = result
        if problems:
            raise OutcomeInvalidError(problems)
        return normalized

    def coerce(self, field: FieldSpec | str, text: str) -> Any:
        """A lenient reading of a spoken or typed answer as the field's type; None if undetermined."""
        spec = self.field(field) if isinstance(field, str) else field
        candidate = spoken_answers.candidate(spec.type, text, spec.values or ())
        if candidate is None:
            return None
        result = _check_value(spec, candidate)
        return None if isinstance(result, _Fault) else result


def compile_schema(definition: Mapping[str, Any]) -> CompiledSchema:
    if not isinstance(definition, Mapping):
        raise OutcomeSchemaError([([], "outcome_schema must be an object of field definitions", "dict_type")])
    problems: list[Problem] = []
    if not definition:
        problems.append(([], "outcome_schema needs at least one field", "too_short"))
    if len(definition) > MAX_FIELDS:
        problems.append(([], f"outcome_schema has {len(definition)} fields; at most {MAX_FIELDS} are allowed", "too_long"))
    specs: list[FieldSpec] = []
    for name, raw in definition.items():
        found = len(problems)
        if not isinstance(name, str) or _FIELD_NAME.fullmatch(name) is None:
            problems.append(([_loc(name)], "field names must match ^[a-z][a-z0-9_]{0,63}$", "field_name_invalid"))
        spec = _compile_field(_loc(name), raw, problems)
        if spec is not None and len(problems) == found:
            specs.append(spec)
    if problems:
        raise OutcomeSchemaError(problems)
    return CompiledSchema(fields=tuple(specs), _json_schema=_json_schema(specs))


def _compile_field(name: str | int, raw: Any, problems: list[Problem]) -> FieldSpec | None:
    if not isinstance(raw, Mapping):
        problems.append(([name], "a field definition must be an object with a 'type'", "dict_type"))
        return None
    for key in raw:
        if key not in DEFINITION_KEYS:
            problems.append(([name, _loc(key)], f"unknown key; allowed: {', '.join(DEFINITION_KEYS)}", "extra_forbidden"))
    type_ = raw.get("type")
    if "type" not in raw:
        problems.append(([name, "type"], "type is required", "missing"))
    elif not isinstance(type_, str) or type_ not in FIELD_TYPES:
        problems.append(([name, "type"], f"type must be one of {', '.join(FIELD_TYPES)}", "enum"))
    optional = raw.get("optional", False)
    if not isinstance(optional, bool):
        problems.append(([name, "optional"], "optional must be true or false", "bool_type"))
    description = raw.get("description")
    if description is not None and not isinstance(description, str):
        problems.append(([name, "description"], "description must be a string", "string_type"))
    elif description is not None and len(description) > MAX_DESCRIPTION:
        problems.append(([name, "description"], f"description is longer than {MAX_DESCRIPTION} characters", "string_too_long"))
    values = _compile_values(name, type_, raw, problems)
    if not isinstance(name, str) or not isinstance(type_, str) or type_ not in FIELD_TYPES:
        return None
    return FieldSpec(name, type_, optional is True, description, values)


def _compile_values(name: str | int, type_: Any, raw: Mapping[str, Any], problems: list[Problem]) -> tuple[str, ...] | None:
    if type_ != ENUM:
        if "values" in raw and isinstance(type_, str) and type_ in FIELD_TYPES:
            problems.append(([name, "values"], "values is allowed only for type enum", "extra_forbidden"))
        return None
    values = raw.get("values")
    if "values" not in raw:
        problems.append(([name, "values"], "an enum needs a non-empty list of values", "missing"))
        return None
    if not isinstance(values, list | tuple):
        problems.append(([name, "values"], "values must be a list of strings", "list_type"))
        return None
    if not values:
        problems.append(([name, "values"], "an enum needs at least one value", "too_short"))
    seen: set[str] = set()
    for i, value in enumerate(values):
        if not isinstance(value, str):
            problems.append(([name, "values", i], "enum values must be strings", "string_type"))
        elif not value.strip():
            problems.append(([name, "values", i], "enum values must not be blank", "string_too_short"))
        elif value in seen:
            problems.append(([name, "values", i], f"duplicate enum value {value!r}", "unique_items"))
        else:
            seen.add(value)
    return tuple(values)


def _json_schema(specs: list[FieldSpec]) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    for spec in specs:
        prop = copy.deepcopy(_JSON_TYPES[spec.type])
        if spec.values is not None:
            prop["enum"] = list(spec.values)
        if spec.optional:  # optional fields may be absent or null
            prop["type"] = [prop["type"], "null"]
            if "enum" in prop:
                prop["enum"].append(None)
        if spec.description is not None:
            prop["description"] = spec.description
        properties[spec.name] = prop
    return {
        "$schema": JSON_SCHEMA_DIALECT,
        "type": "object",
        "properties": properties,
        "required": [spec.name for spec in specs if not spec.optional],
        "additionalProperties": False,
    }


@dataclass(frozen=True, slots=True)
class _Fault:
    problems: list[tuple[list[str | int], str, str]]


def _fault(message: str, kind: str) -> _Fault:
    return _Fault([([], message, kind)])


def _check_boolean(spec: FieldSpec, value: Any) -> Any:
    return value if isinstance(value, bool) else _fault("must be true or false", "bool_type")


def _check_string(spec: FieldSpec, value: Any) -> Any:
    return value if isinstance(value, str) else _fault("must be a string", "string_type")


def _check_integer(spec: FieldSpec, value: Any) -> Any:
    if isinstance(value, bool):
        return _fault("must be an integer, not a boolean", "int_type")
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    return _fault("must be an integer", "int_type")


def _check_number(spec: FieldSpec, value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return _fault("must be a number", "float_type")
    if isinstance(value, float) and not math.isfinite(value):
        return _fault("must be a finite number", "finite_number")
    return int(value) if isinstance(value, int) else float(value)


def _check_enum(spec: FieldSpec, value: Any) -> Any:
    if not isinstance(value, str):
        return _fault("must be a string", "string_type")
    if value not in (spec.values or ()):
        return _fault(f"must be one of {', '.join(map(repr, spec.values or ()))}", "enum")
    return value


def _check_datetime(spec: FieldSpec, value: Any) -> Any:
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


def _check_date(spec: FieldSpec, value: Any) -> Any:
    if not isinstance(value, str) or _DATE.fullmatch(value) is None:
        return _fault("must be a date as YYYY-MM-DD", "date_parsing")
    try:
        date.fromisoformat(value)
    except ValueError:
        return _fault("is not a real calendar date", "date_parsing")
    return value


def _check_array(spec: FieldSpec, value: Any) -> Any:
    if not isinstance(value, list | tuple):
        return _fault("must be an array of strings", "list_type")
    bad = [([i], "must be a string", "string_type") for i, item in enumerate(value) if not isinstance(item, str)]
    return _Fault(bad) if bad else list(value)


_CHECKS: dict[str, Callable[[FieldSpec, Any], Any]] = {
    BOOLEAN: _check_boolean,
    STRING: _check_string,
    DATETIME: _check_datetime,
    DATE: _check_date,
    INTEGER: _check_integer,
    NUMBER: _check_number,
    ENUM: _check_enum,
    ARRAY: _check_array,
}


def _check_value(spec: FieldSpec, value: Any) -> Any:
    return _CHECKS[spec.type](spec, value)


def _loc(key: Any) -> str | int:
    return key if isinstance(key, str | int) and not isinstance(key, bool) else repr(key)
