"""The OpenAPI document describes ``outcome_schema`` (SPEC.md "Call create request"): a map of
field name to field definition, with every type of the domain's table."""

from __future__ import annotations

from typing import Any

import pytest

from domain.calls.outcome_types import FIELD_NAME_PATTERN, FIELD_TYPES_TABLE


def _resolve(document: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = document["components"]["schemas"][schema["$ref"].rsplit("/", 1)[-1]]
    return schema


@pytest.mark.parametrize("path", ["/v1/calls", "/v1/calls/batch"])
def test_openapi_documents_the_outcome_schema_field_definitions(client, path):
    document = client.get("/schema/openapi.json").json()
    body = document["paths"][path]["post"]["requestBody"]["content"]["application/json"]["schema"]
    outcome_schema = _resolve(document, _resolve(document, body)["properties"]["outcome_schema"])
    # Optional since a template may give it: an object or null, the object's rules beside.
    assert [member["type"] for member in outcome_schema["oneOf"]] == ["object", "null"]
    outcome_schema = {**outcome_schema, "type": "object"}

    assert outcome_schema["type"] == "object"
    assert outcome_schema["propertyNames"] == {"pattern": FIELD_NAME_PATTERN}
    assert (outcome_schema["minProperties"], outcome_schema["maxProperties"]) == (1, 50)
    definition = _resolve(document, outcome_schema["additionalProperties"])
    assert definition["required"] == ["type"]
    assert set(definition["properties"]) == {"type", "optional", "description", "values"}
    kind = definition["properties"]["type"]
    assert kind["enum"] == [field_type.name for field_type in FIELD_TYPES_TABLE]
    for field_type in FIELD_TYPES_TABLE:
        assert f"`{field_type.name}`: {field_type.summary}" in kind["description"]
    values = definition["properties"]["values"]
    assert (values["maxItems"], values["items"]["maxLength"]) == (100, 100)  # the request limits
    assert "16384 bytes" in outcome_schema["description"]
