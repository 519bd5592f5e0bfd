"""OpenAPI 3.1 at ``/schema/openapi.json`` and a Swagger UI at ``/schema`` served from the
installed ``swagger-ui-bundle`` package, so the docs work without a network."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import swagger_ui_bundle
from litestar import Response
from litestar.exceptions import InternalServerException
from litestar.openapi import OpenAPIConfig
from litestar.openapi.plugins import JsonRenderPlugin, SwaggerRenderPlugin
from litestar.enums import ParamType
from litestar.openapi.spec import (
    OpenAPI,
    OpenAPIFormat,
    OpenAPIHeader,
    OpenAPIMediaType,
    OpenAPIResponse,
    OpenAPIType,
    Operation,
    Parameter,
    PathItem,
    Reference,
    RequestBody,
    Schema,
    Tag,
)
from litestar.openapi.spec import Components, SecurityScheme
from litestar.static_files import create_static_files_router

ASSETS = "/schema/assets"
ERROR_REF = "#/components/schemas/Error"  # every {error: {code, message}} answer
METHODS = ("get", "put", "post", "delete", "patch")  # the operations of a path item


def assets_dir() -> Path:
    return Path(swagger_ui_bundle.swagger_ui_path)


def operation_id(route_handler: Any, http_method: str, path_components: list[Any]) -> str:
    """Unique per method and path, so aliased paths (``/auth/api_keys``) get their own ids."""
    parts = [c if isinstance(c, str) else "{" + c.name + "}" for c in path_components]
    return f"{http_method.lower()}:/{'/'.join(parts)}"


def openapi_config(version: str) -> OpenAPIConfig:
    swagger = SwaggerRenderPlugin(
        js_url=f"{ASSETS}/swagger-ui-bundle.js",
        css_url=f"{ASSETS}/swagger-ui.css",
        standalone_preset_js_url=f"{ASSETS}/swagger-ui-standalone-preset.js",
        path=["/", "/swagger"],
        favicon="",
    )
    return OpenAPIConfig(
        title="callwright",
        version=version,
        description="Voice calls on which an AI agent pursues an objective and returns a typed outcome.",
        path="/schema",
        operation_id_creator=operation_id,
        render_plugins=[JsonRenderPlugin(), swagger],
        components=Components(
            security_schemes={"ApiKey": SecurityScheme(type="http", scheme="bearer", description="sk_live_… API key")}
        ),
        security=[{"ApiKey": []}],
    )


_VALIDATION_ERROR = Schema(
    type=OpenAPIType.OBJECT,
    required=["detail"],
    properties={
        "detail": Schema(
            type=OpenAPIType.ARRAY,
            items=Schema(
                type=OpenAPIType.OBJECT,
                required=["loc", "msg", "type", "input", "ctx"],
                properties={
                    "loc": Schema(type=OpenAPIType.ARRAY, items=Schema(one_of=[Schema(type=OpenAPIType.STRING), Schema(type=OpenAPIType.INTEGER)])),
                    "msg": Schema(type=OpenAPIType.STRING),
                    "type": Schema(type=OpenAPIType.STRING),
                    "input": Schema(),
                    "ctx": Schema(type=OpenAPIType.OBJECT),
                },
            ),
        )
    },
    description="Every problem found in body, query and path.",
)
_ERROR = Schema(
    type=OpenAPIType.OBJECT,
    required=["error"],
    properties={
        "error": Schema(
            type=OpenAPIType.OBJECT,
            required=["code", "message"],
            properties={"code": Schema(type=OpenAPIType.STRING), "message": Schema(type=OpenAPIType.STRING)},
        )
    },
)


# Routes that never touch the database (and /readyz, whose 503 has a body of its own).
_WITHOUT_DATABASE = {"/healthz", "/readyz", "/metrics"}


def describe_errors(openapi: OpenAPI) -> None:
    """Replace the framework's generic 400 description with the answers the service really gives,
    and add the 503 every route that uses the database gives while it cannot be reached."""
    components = openapi.components if isinstance(openapi.components, Components) else Components()
    components.schemas = {**(components.schemas or {}), "ValidationError": _VALIDATION_ERROR, "Error": _ERROR}
    openapi.components = components
    invalid = OpenAPIResponse(
        description="Validation failed", content={"application/json": OpenAPIMediaType(schema=Reference(ref="#/components/schemas/ValidationError"))}
    )
    unavailable = error_answer(
        "The database cannot be reached (database_unavailable); nothing was done. Try again after "
        "Retry-After seconds (with the same Idempotency-Key for a create).",
        {"Retry-After": RATE_HEADERS["Retry-After"]},
    )
    for path, item in (openapi.paths or {}).items():
        for operation in (item.get, item.put, item.post, item.delete, item.patch):
            if operation is None or operation.responses is None:
                continue
            if operation.responses.pop("400", None) is not None:
                operation.responses["422"] = invalid
            if path not in _WITHOUT_DATABASE:
                own = operation.responses.get("503")
                answer = unavailable
                if isinstance(own, OpenAPIResponse):  # a 503 of the route's own, beside the database's
                    answer = OpenAPIResponse(description=f"{own.description} Or: {unavailable.description}",
                                             content=unavailable.content, headers=unavailable.headers)
                operation.responses["503"] = answer


# Callbacks the carrier calls and aliases kept for old clients: served, not part of the public document.
HIDDEN_PREFIXES = ("/webhooks/carrier/", "/auth/api_keys")
# The order a user reads: calls first, what they are configured with next, the account last.
TAG_ORDER = ("calls", "analytics", "templates", "flows", "numbers", "wizard", "push", "webhooks", "suppressions",
             "providers", "audit", "api keys", "auth", "tenants", "admin", "operations")
RATE_HEADERS = {
    "Retry-After": "Seconds to wait before trying again",
    "X-RateLimit-Limit": "Requests allowed per minute for this key",
    "X-RateLimit-Remaining": "Requests left in the current minute",
    "X-RateLimit-Reset": "Unix time at which the budget is whole again",
}


def error_answer(description: str, headers: dict[str, str] | None = None) -> OpenAPIResponse:
    return OpenAPIResponse(
        description=description,
        content={"application/json": OpenAPIMediaType(schema=Reference(ref=ERROR_REF))},
        headers={name: OpenAPIHeader(description=text, schema=Schema(type=OpenAPIType.INTEGER))
                 for name, text in (headers or {}).items()} or None,
    )


def describe_access(openapi: OpenAPI, needs_key: Any) -> None:
    """Security only where it applies: a route the auth middleware lets through without a key shows
    no padlock; every other one documents its 401 and its 429 with the rate headers. Carrier
    callbacks and aliases leave the document; tags come in TAG_ORDER."""
    openapi.paths = {path: item for path, item in (openapi.paths or {}).items()
                     if not path.startswith(HIDDEN_PREFIXES)}
    unauthorized = error_answer("No API key, or one that is unknown, revoked or expired (invalid_api_key)")
    limited = error_answer("Rate limit exceeded (rate_limited): retry after Retry-After seconds", RATE_HEADERS)
    refused = error_answer("The account is pending review (account_pending_review) or the key lacks the route's scope "
                     "(insufficient_scope)")
    missing = error_answer("Nothing of this account at this path (<noun>_not_found): another account's ids are as unknown")
    used: set[str] = set()
    for path, item in openapi.paths.items():
        for operation in (item.get, item.put, item.post, item.delete, item.patch):
            if operation is None:
                continue
            used.update(operation.tags or ())
            if not needs_key(path):
                operation.security = []
                continue
            responses = operation.responses if operation.responses is not None else {}
            responses.setdefault("401", unauthorized)
            responses.setdefault("403", refused)
            if "{" in path:
                responses.setdefault("404", missing)
            responses.setdefault("429", limited)
            operation.responses = responses
    openapi.tags = [Tag(name=name) for name in (*[t for t in TAG_ORDER if t in used], *sorted(used - set(TAG_ORDER)))]


def _text(description: str | None = None, nullable: bool = False) -> Schema:
    types = [OpenAPIType.STRING, OpenAPIType.NULL] if nullable else OpenAPIType.STRING
    return Schema(type=types, description=description)


# domain/webhooks/payload.py: SPEC.md's fields, metadata, and for a failed call error_code and partial_outcome.
_CALL_COMPLETED_DATA = Schema(
    type=OpenAPIType.OBJECT, description="The call, as it ended (GET /v1/calls/{call_id} has the whole record)",
    required=["call_id", "status", "to", "from", "objective", "outcome", "transcript", "duration_seconds",
              "cost_total", "metadata"],
    properties={
        "call_id": _text("cll_…"), "status": Schema(type=OpenAPIType.STRING, enum=["completed", "failed"]),
        "to": _text("E.164"), "from": _text("E.164"), "objective": _text(),
        "outcome": Schema(type=[OpenAPIType.OBJECT, OpenAPIType.NULL], description="Per outcome_schema; null for a "
                                                                                      "failed call"),
        "transcript": _text(), "duration_seconds": Schema(type=[OpenAPIType.INTEGER, OpenAPIType.NULL]),
        "cost_total": _text("Decimal string"), "metadata": Schema(type=OpenAPIType.OBJECT),
        "error_code": _text("Failed calls only", nullable=True),
        "partial_outcome": Schema(type=[OpenAPIType.OBJECT, OpenAPIType.NULL],
                                  description="Failed calls only: the valid fields a failed extraction collected"),
    },
)


def describe_webhooks(openapi: OpenAPI) -> None:
    """``call.completed`` as an OpenAPI 3.1 webhook: the POST each endpoint receives (SPEC.md Events)."""
    signed = {
        "X-Service-Signature": ("sha256=<hex>: HMAC-SHA256 of '<timestamp>.<raw body>' with the endpoint secret "
                                "(one per secret while a rotation is in grace, comma-separated)"),
        "X-Service-Timestamp": "Unix seconds of this attempt; reject one more than about 5 minutes old",
        "X-Service-Event": "The event type: call.completed",
        "X-Service-Delivery-Id": "UUID, the same on every retry of one delivery",
    }
    payload = Schema(type=OpenAPIType.OBJECT, title="CallCompleted", required=["id", "type", "created_at", "data"],
                     properties={
                         "id": Schema(type=OpenAPIType.STRING, description="evt_…"),
                         "type": Schema(type=OpenAPIType.STRING, const="call.completed"),
                         "created_at": Schema(type=OpenAPIType.STRING, format=OpenAPIFormat.DATE_TIME),
                         "data": _CALL_COMPLETED_DATA,
                     })
    operation = Operation(
        summary="A call reached a terminal state (completed or failed)",
        description="Retried after 5 s, 30 s and 2 min on a non-2xx answer or a transport failure.",
        parameters=[Parameter(name=name, param_in=ParamType.HEADER, required=True, description=text,
                              schema=Schema(type=OpenAPIType.STRING)) for name, text in signed.items()],
        request_body=RequestBody(required=True, content={"application/json": OpenAPIMediaType(schema=payload)}),
        responses={"2XX": OpenAPIResponse(description="Received: any 2xx ends the delivery")},
        security=[],
    )
    openapi.webhooks = {"call.completed": PathItem(post=operation)}


def assets_router():
    return create_static_files_router(path=ASSETS, directories=[assets_dir()], include_in_schema=False,
                                      exception_handlers={ValueError: _no_such_asset, InternalServerException: _no_such_asset})


def _no_such_asset(request: Any, _exc: Exception) -> Response[Any]:
    """A file name the file system cannot hold (a NUL byte; too long, which Litestar reports as a server
    error) names no asset: 404."""
    del request
    return Response({"error": {"code": "not_found", "message": "no such asset"}}, status_code=404)
