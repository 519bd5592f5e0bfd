"""An example on every request body and every 2xx answer of the OpenAPI document.

A request body's example is written out whole (docs_example_values.REQUESTS: a body the service
accepts). An answer's is built from its schema: every required field, and an optional one where
VALUES names it for its component; each takes the value VALUES gives its name (``Component.field``
first, then ``field``) or else one that fits its type, so a new field or route has an example from
the day it is documented. Downloads (CSV, JSON lines) are strings. A contract test checks every
example against its schema.
"""

from __future__ import annotations

import copy
from typing import Any

import msgspec
from litestar.openapi.spec import (
    OpenAPI,
    OpenAPIMediaType,
    OpenAPIResponse,
    OpenAPIType,
    PathItem,
    RequestBody,
    Schema,
)

from entrypoints.http.docs import METHODS
from entrypoints.http.docs_example_values import DOWNLOADS, REQUESTS, TIMESTAMP, VALUES

JSON = "application/json"
_SCALARS: dict[str, Any] = {"string": "text", "integer": 1, "number": 0.5, "boolean": True, "null": None}
_JSON_TYPES = {type(None): "null", bool: "boolean", int: "integer", float: "number", str: "string", list: "array"}
_FORMATS = {"date-time": TIMESTAMP, "date": TIMESTAMP[:10], "uuid": "3f2c8e1a-7b4d-4c55-9e1f-0a6b2d4c8e9f",
            "email": "ada@example.com", "uri": "https://example.com"}


def _component(ref: str) -> str:
    return ref.rsplit("/", 1)[-1]


def _kinds(schema: dict[str, Any]) -> set[str]:
    """The JSON types a schema names (a component's is an object); none: it does not say."""
    found: set[str] = set()
    for one in (schema, *(branch for key in ("oneOf", "anyOf") for branch in schema.get(key, ()))):
        kind = "object" if "$ref" in one else one.get("type")
        found.update(kind if isinstance(kind, list) else [kind] if kind else [])
    return found


def _fits(schema: dict[str, Any], value: Any) -> bool:
    """Whether a value of VALUES may stand for the field: one of its values where it names them,
    else of one of its types."""
    if "const" in schema:
        return bool(value == schema["const"])
    if "enum" in schema:
        return value in schema["enum"]
    kinds = _kinds(schema)
    kind = _JSON_TYPES.get(type(value), "object")
    return not kinds or kind in kinds or (kind == "integer" and "number" in kinds)


class Examples:
    """Examples of the schemas of one document (as JSON, its ``$ref``s into ``components``)."""

    def __init__(self, components: dict[str, Any]) -> None:
        self.components = components

    def request(self, schema: dict[str, Any]) -> Any:
        branch = self._branch(schema)
        if "$ref" in branch and (name := _component(branch["$ref"])) in REQUESTS:
            return copy.deepcopy(REQUESTS[name])
        return self.build(branch, required_only=True)

    def build(self, schema: dict[str, Any], owner: str | None = None, *, required_only: bool = False) -> Any:
        if "$ref" in schema:
            name = _component(schema["$ref"])
            return self.build(self.components[name], name, required_only=required_only)
        for key in ("const", "example"):
            if key in schema:
                return copy.deepcopy(schema[key])
        if schema.get("examples"):
            return copy.deepcopy(schema["examples"][0])
        if schema.get("enum"):
            return next((value for value in schema["enum"] if value is not None), None)
        if schema.get("allOf"):
            parts = [self.build(part, owner, required_only=required_only) for part in schema["allOf"]]
            return {k: v for part in parts if isinstance(part, dict) for k, v in part.items()} if all(
                isinstance(part, dict) for part in parts) else parts[0]
        branch = self._branch(schema)
        if branch is not schema:
            return self.build({**{k: v for k, v in schema.items() if k not in ("oneOf", "anyOf")}, **branch}, owner,
                              required_only=required_only)
        kind = schema.get("type")
        if isinstance(kind, list):
            kind = next((t for t in kind if t != "null"), "null")
        if kind == "object" or "properties" in schema:
            return self._object(schema, owner or schema.get("title"), required_only)
        if kind == "array":
            items = self.build(schema.get("items") or {}, owner, required_only=required_only)
            return [items] * max(1, schema.get("minItems", 1))
        if kind == "string" and schema.get("format") in _FORMATS:
            return _FORMATS[schema["format"]]
        if kind in ("integer", "number"):
            return schema.get("minimum", _SCALARS[kind])
        return _SCALARS.get(kind or "null")

    def _object(self, schema: dict[str, Any], owner: str | None, required_only: bool) -> dict[str, Any]:
        required = set(schema.get("required", ()))
        found: dict[str, Any] = {}
        for name, field in (schema.get("properties") or {}).items():
            if name not in required and (required_only or f"{owner}.{name}" not in VALUES):
                continue
            given = [VALUES[key] for key in (f"{owner}.{name}", name) if key in VALUES]
            if given and _fits(field, given[0]):
                found[name] = copy.deepcopy(given[0])
            else:
                found[name] = self.build(field, required_only=required_only)
        more = schema.get("additionalProperties")
        if not found and isinstance(more, dict) and more:
            found["key"] = self.build(more, required_only=required_only)
        return found

    @staticmethod
    def _branch(schema: dict[str, Any]) -> dict[str, Any]:
        """The first branch of a oneOf or anyOf that is not null (the schema itself when it has none)."""
        for key in ("oneOf", "anyOf"):
            for branch in schema.get(key) or ():
                if branch.get("type") != "null":
                    return branch  # type: ignore[no-any-return]
        return schema


def _kept(value: Any) -> msgspec.Raw:
    """The example as JSON already: the framework drops ``None`` from the dicts of the document it
    renders, and an example keeps its nulls."""
    return msgspec.Raw(msgspec.json.encode(value))


def describe_examples(openapi: OpenAPI) -> None:
    document = openapi.to_schema()
    examples = Examples(document.get("components", {}).get("schemas", {}))
    for path, item in (openapi.paths or {}).items():
        for method in METHODS:
            operation = getattr(item, method)
            if operation is None:
                continue
            served = document["paths"][path][method]
            if isinstance(operation.request_body, RequestBody):
                for media_type, media in operation.request_body.content.items():
                    media.example = _kept(examples.request(served["requestBody"]["content"][media_type]["schema"]))
            for status, answer in (operation.responses or {}).items():
                if not status.startswith("2") or not isinstance(answer, OpenAPIResponse):
                    continue
                for media_type, media in (answer.content or {}).items():
                    if media_type == JSON:
                        schema = served["responses"][status]["content"][media_type]["schema"]
                        media.example = _kept(examples.build(schema))
                    else:
                        _download(path, media)
    for name, hook in (openapi.webhooks or {}).items():  # what each endpoint receives
        body = hook.post.request_body if isinstance(hook, PathItem) and hook.post is not None else None
        if isinstance(body, RequestBody):
            for media_type, media in body.content.items():
                media.example = _kept(examples.build(document["webhooks"][name]["post"]["requestBody"]["content"]
                                                     [media_type]["schema"]))


def _download(path: str, media: OpenAPIMediaType) -> None:
    media.schema = Schema(type=OpenAPIType.STRING, description="The file, streamed")
    media.example = DOWNLOADS.get(path)  # none yet: the contract test names the route
