"""``outcome_schema`` typed in the OpenAPI document: wherever one appears (a call, a batch, a template,
a number's ``outcome_schema`` and ``voicemail_schema``, a flow's compiled artifact), it is a map of
field name to an ``OutcomeField`` component. Both come from the domain's own description of a
definition (``definition_json_schema``): its types, ``optional``, ``description``, ``values`` and
limits are the ones ``compile_schema`` checks. The domain alone validates a request, so its 422s
list every problem at once; this only documents the rules."""

from __future__ import annotations

import dataclasses
from typing import Any

from litestar.openapi.spec import Components, OpenAPI, OpenAPIFormat, OpenAPIType, Reference, Schema

from domain.calls.outcome_schema import definition_json_schema

OUTCOME_FIELD = "OutcomeField"
OUTCOME_SCHEMAS = ("outcome_schema", "voicemail_schema")  # every property holding a definition
_FIELDS = {field.metadata.get("alias", field.name): field.name for field in dataclasses.fields(Schema)}
_ONE = {"items", "additionalProperties", "propertyNames", "not", "if", "then", "else", "contains"}
_MANY = {"allOf", "anyOf", "oneOf", "prefixItems"}


def as_schema(raw: dict[str, Any]) -> Schema:
    """A JSON Schema written as a dict, as the framework's ``Schema`` (keywords it names only)."""
    found: dict[str, Any] = {}
    for key, value in raw.items():
        if key == "type":
            value = [OpenAPIType(t) for t in value] if isinstance(value, list) else OpenAPIType(value)
        elif key == "format":
            value = OpenAPIFormat(value)
        elif key == "properties":
            value = {name: as_schema(item) for name, item in value.items()}
        elif key in _ONE and isinstance(value, dict):
            value = as_schema(value)
        elif key in _MANY:
            value = [as_schema(item) for item in value]
        found[_FIELDS[key]] = value
    return Schema(**found)


def outcome_field() -> Schema:
    raw = {key: value for key, value in definition_json_schema()["additionalProperties"].items() if key != "title"}
    raw["description"] = ("One field of an outcome_schema: its type, whether the outcome may leave it out, what it "
                          "means, and for an enum its values")
    return as_schema(raw)


def _is_null(schema: Schema | Reference) -> bool:
    return isinstance(schema, Schema) and schema.type == OpenAPIType.NULL


def _typed(old: Schema | Reference) -> Schema:
    """The definition map in place of ``old``, keeping its description, nullability and minimum."""
    described = definition_json_schema()
    own = old if isinstance(old, Schema) else Schema()
    nullable = any(_is_null(s) for s in own.one_of or ()) or (
        isinstance(own.type, list) and OpenAPIType.NULL in own.type)
    # A nullable one is "an object or null" with the object's rules beside (they hold for objects only).
    return Schema(type=None if nullable else OpenAPIType.OBJECT,
                  one_of=[Schema(type=OpenAPIType.OBJECT), Schema(type=OpenAPIType.NULL)] if nullable else None,
                  description=own.description or "A map of field name to field definition, in order",
                  min_properties=own.min_properties, max_properties=described["maxProperties"],
                  property_names=as_schema(described["propertyNames"]),
                  additional_properties=Reference(ref=f"#/components/schemas/{OUTCOME_FIELD}"))


def describe_outcome_schemas(openapi: OpenAPI) -> None:
    components = openapi.components if isinstance(openapi.components, Components) else Components()
    schemas = components.schemas or {}
    for schema in schemas.values():
        for name, prop in (schema.properties or {}).items() if isinstance(schema, Schema) else ():
            if name in OUTCOME_SCHEMAS:
                schema.properties[name] = _typed(prop)  # type: ignore[index]
    components.schemas = {**schemas, OUTCOME_FIELD: outcome_field()}
    openapi.components = components
