"""Reading the served OpenAPI document in tests: its operations, a schema with its references
followed, and a JSON Schema validator for any schema in it (references resolved in the document)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import jsonschema
from referencing import Registry
from referencing.jsonschema import DRAFT202012

METHODS = ("get", "put", "post", "delete", "patch")
ERROR = "#/components/schemas/Error"


def operations(document: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, item in document["paths"].items():
        for method in METHODS:
            if method in item:
                yield path, method, item[method]


def resolved(document: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = document["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    return schema


def validator(document: dict[str, Any], schema: dict[str, Any]) -> jsonschema.Draft202012Validator:
    """Checks values against ``schema`` as the document states it (formats too)."""
    registry = Registry().with_resource("urn:document", DRAFT202012.create_resource(document))
    located = json.loads(json.dumps(schema).replace('"#/components', '"urn:document#/components'))
    return jsonschema.Draft202012Validator(located, registry=registry, format_checker=jsonschema.FormatChecker())
