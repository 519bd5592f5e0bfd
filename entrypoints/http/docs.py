"""OpenAPI 3.1 at ``/schema/openapi.json`` and a Swagger UI at ``/schema`` served from the
installed ``swagger-ui-bundle`` package, so the docs work without a network."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import swagger_ui_bundle
from litestar.openapi import OpenAPIConfig
from litestar.openapi.plugins import JsonRenderPlugin, SwaggerRenderPlugin
from litestar.openapi.spec import (
    OpenAPI,
    OpenAPIHeader,
    OpenAPIMediaType,
    OpenAPIResponse,
    OpenAPIType,
    Reference,
    Schema,
)
from litestar.openapi.spec import Components, SecurityScheme
from litestar.static_files import create_static_files_router

ASSETS = "/schema/assets"


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
    unavailable = OpenAPIResponse(
        description="The database cannot be reached (database_unavailable); nothing was done. Try again after "
                    "Retry-After seconds (with the same Idempotency-Key for a create).",
        content={"application/json": OpenAPIMediaType(schema=Reference(ref="#/components/schemas/Error"))},
        headers={"Retry-After": OpenAPIHeader(description="Seconds to wait before trying again",
                                              schema=Schema(type=OpenAPIType.INTEGER))},
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


def assets_router():
    return create_static_files_router(path=ASSETS, directories=[assets_dir()], include_in_schema=False)
