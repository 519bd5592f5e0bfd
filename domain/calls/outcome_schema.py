"""The caller's ``outcome_schema`` (SPEC.md "Call create request") as one value: compiled once
from its definition, it validates outcomes, reads spoken answers and gives its JSON Schema.

Pure and framework-free: stdlib only. Every problem is collected, never just the first. The
field types themselves are described in ``outcome_types``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from domain.calls.outcome_limits import (
    MAX_ENUM_VALUE_LENGTH,
    MAX_ENUM_VALUES,
    MAX_SCHEMA_BYTES,
    Problems,
    schema_bytes,
)
from domain.calls.outcome_types import (
    ENUM,
    FIELD_NAME_PATTERN,
    FIELD_NAME_RULE,
    FIELD_TYPES,
    Fault,
    field_type,
    is_field_name,
    types_summary,
)
from domain.errors import OutcomeInvalidError, OutcomeSchemaError, Problem

MAX_FIELDS = 50
MAX_DESCRIPTION = 500
DEFINITION_KEYS = ("type", "optional", "description", "values")
JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


@dataclass(frozen=True, slots=True)
class FieldSpec:
    name: str
    type: str
    optional: bool = False
    description: str | None = None
    values: tuple[str, ...] | None = None  # enum only


@dataclass(frozen=True, slots=True)
class OutcomeSchema:
    """Immutable: copies of it are itself. Two schemas are equal when their fields are."""

    fields: tuple[FieldSpec, ...]
    _json_schema: dict[str, Any] = field(repr=False, compare=False)

    @classmethod
    def compile(cls, definition: Mapping[str, Any], *, limits: bool = True) -> OutcomeSchema:
        """From a request's definition, or ``OutcomeSchemaError`` listing every problem.
        ``limits=False`` for a stored definition: the size limits apply to requests only."""
        return compile_schema(definition, limits=limits)

    @classmethod
    def of(cls, value: OutcomeSchema | Mapping[str, Any], *, limits: bool = False) -> OutcomeSchema:
        """The value itself, or one compiled from a definition: by default a stored one (what events
        stored before the value had its own transcoding), without the request limits."""
        return value if isinstance(value, OutcomeSchema) else compile_schema(value, limits=limits)

    def __copy__(self) -> OutcomeSchema:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> OutcomeSchema:
        return self

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
        """The canonical request form: what an event stores and ``compile`` accepts again."""
        out: dict[str, dict[str, Any]] = {}
        for spec in self.fields:
            entry: dict[str, Any] = {"type": spec.type, "optional": spec.optional}
            if spec.description is not None:
                entry["description"] = spec.description
            if spec.values is not None:
                entry["values"] = list(spec.values)
            out[spec.name] = entry
        return out

    def partial(self, outcome: Any) -> dict[str, Any]:
        """The fields of ``outcome`` that are valid on their own, normalized (what a failed
        extraction did collect); missing, null, invalid and unknown fields are left out."""
        if not isinstance(outcome, Mapping):
            return {}
        valid = {spec.name: _check_value(spec, outcome[spec.name]) for spec in self.fields
                 if outcome.get(spec.name) is not None}
        return {name: value for name, value in valid.items() if not isinstance(value, Fault)}

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
            if isinstance(result, Fault):
                problems.extend(([spec.name, *loc], msg, kind) for loc, msg, kind in result.problems)
            else:
                normalized[spec.name] = result
        if problems:
            raise OutcomeInvalidError(problems)
        return normalized

    def coerce(self, field: FieldSpec | str, text: str) -> Any:
        """A lenient reading of a spoken or typed answer as the field's type; None if undetermined."""
        spec = self.field(field) if isinstance(field, str) else field
        candidate = field_type(spec.type).read(text, spec.values or ())
        if candidate is None:
            return None
        result = _check_value(spec, candidate)
        return None if isinstance(result, Fault) else result


def definition_json_schema() -> dict[str, Any]:
    """JSON Schema of a definition (what a request's ``outcome_schema`` looks like), for the docs;
    ``compile_schema`` is what checks one."""
    field_definition = {
        "type": "object",
        "title": "OutcomeFieldDefinition",
        "required": ["type"],
        "additionalProperties": False,
        "properties": {
            "type": {"type": "string", "enum": list(FIELD_TYPES), "description": "The value's type:\n" + types_summary()},
            "optional": {"type": "boolean", "default": False,
                         "description": "An optional field may be absent or null in the outcome."},
            "description": {"type": "string", "maxLength": MAX_DESCRIPTION,
                            "description": "What the field means; the agent reads it."},
            "values": {"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": MAX_ENUM_VALUE_LENGTH},
                       "minItems": 1, "maxItems": MAX_ENUM_VALUES, "uniqueItems": True,
                       "description": f"The allowed values; for type `{ENUM}` only (required there)."},
        },
        # values: required for an enum, refused for every other type
        "if": {"properties": {"type": {"const": ENUM}}, "required": ["type"]},
        "then": {"required": ["values"]},
        "else": {"not": {"required": ["values"]}},
    }
    return {
        "type": "object",
        "description": ("The outcome to reach: a map of field name to field definition, in order. At most "
                        f"{MAX_FIELDS} fields, {MAX_ENUM_VALUES} values of up to {MAX_ENUM_VALUE_LENGTH} characters "
                        f"per enum, and {MAX_SCHEMA_BYTES} bytes as compact JSON."),
        "minProperties": 1,
        "maxProperties": MAX_FIELDS,
        "propertyNames": {"pattern": FIELD_NAME_PATTERN},
        "additionalProperties": field_definition,
    }


def compile_schema(definition: Mapping[str, Any], *, limits: bool = True) -> OutcomeSchema:
    if not isinstance(definition, Mapping):
        raise OutcomeSchemaError([([], "outcome_schema must be an object of field definitions", "dict_type")])
    problems = Problems()
    if not definition:
        problems.append(([], "outcome_schema needs at least one field", "too_short"))
    if len(definition) > MAX_FIELDS:
        problems.over([], f"outcome_schema has {len(definition)} fields; at most {MAX_FIELDS} are allowed",
                      "too_long", max_length=MAX_FIELDS)
    if limits:
        if (size := schema_bytes(definition)) > MAX_SCHEMA_BYTES:
            problems.over([], f"outcome_schema is {size} bytes of JSON; at most {MAX_SCHEMA_BYTES} are allowed",
                          "too_long", max_bytes=MAX_SCHEMA_BYTES)
    specs: list[FieldSpec] = []
    for name, raw in definition.items():
        found = len(problems)
        if not is_field_name(name):
            problems.append(([_loc(name)], FIELD_NAME_RULE, "field_name_invalid"))
        spec = _compile_field(_loc(name), raw, problems, limits)
        if spec is not None and len(problems) == found:
            specs.append(spec)
    if problems:
        raise OutcomeSchemaError(list(problems), ctx=problems.contexts())
    return OutcomeSchema(fields=tuple(specs), _json_schema=_json_schema(specs))


def _compile_field(name: str | int, raw: Any, problems: Problems, limits: bool) -> FieldSpec | None:
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
        problems.over([name, "description"], f"description is longer than {MAX_DESCRIPTION} characters",
                      "string_too_long", max_length=MAX_DESCRIPTION)
    values = _compile_values(name, type_, raw, problems, limits)
    if not isinstance(name, str) or not isinstance(type_, str) or type_ not in FIELD_TYPES:
        return None
    return FieldSpec(name, type_, optional is True, description, values)


def _compile_values(name: str | int, type_: Any, raw: Mapping[str, Any], problems: Problems,
                    limits: bool) -> tuple[str, ...] | None:
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
    if limits and len(values) > MAX_ENUM_VALUES:
        problems.over([name, "values"], f"an enum has {len(values)} values; at most {MAX_ENUM_VALUES} are allowed",
                      "too_long", max_length=MAX_ENUM_VALUES)
    seen: set[str] = set()
    for i, value in enumerate(values):
        if limits and i == MAX_ENUM_VALUES:
            break  # refused already: its values past the limit are not read one by one
        if not isinstance(value, str):
            problems.append(([name, "values", i], "enum values must be strings", "string_type"))
        elif not value.strip():
            problems.append(([name, "values", i], "enum values must not be blank", "string_too_short"))
        elif limits and len(value) > MAX_ENUM_VALUE_LENGTH:
            problems.over([name, "values", i], f"an enum value is longer than {MAX_ENUM_VALUE_LENGTH} characters",
                          "string_too_long", max_length=MAX_ENUM_VALUE_LENGTH)
        elif value in seen:
            problems.append(([name, "values", i], f"duplicate enum value {value!r}", "unique_items"))
        else:
            seen.add(value)
    return tuple(values)


def _json_schema(specs: list[FieldSpec]) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    for spec in specs:
        prop = copy.deepcopy(dict(field_type(spec.type).json_schema))
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


def _check_value(spec: FieldSpec, value: Any) -> Any:
    return field_type(spec.type).check(value, spec.values or ())


def _loc(key: Any) -> str | int:
    return key if isinstance(key, str | int) and not isinstance(key, bool) else repr(key)
