"""The one place errors become HTTP answers.

422 always has SPEC.md's ``{detail: [{loc, msg, type, input, ctx}]}`` shape (body, query, path
and malformed JSON); everything else is ``{error: {code, message}}``. Anything unexpected is a
logged 500 that reveals nothing.
"""

from __future__ import annotations

from typing import Any

import msgspec
import structlog
from litestar import Request, Response
from litestar.exceptions import HTTPException, NotFoundException, SerializationException, ValidationException
from litestar.status_codes import HTTP_422_UNPROCESSABLE_ENTITY

from application.errors import (
    ApplicationError,
    AuthenticationError,
    ClientGoneError,
    ConflictError,
    FeatureUnavailableError,
    FieldError,
    InProgressError,
    InvalidTokenError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitedError,
    UpstreamUnavailableError,
    ValidationFailedError,
)
from domain.errors import RequestRuleError

log = structlog.get_logger(__name__)

STATUS: dict[type[ApplicationError], int] = {
    AuthenticationError: 401,
    PermissionDeniedError: 403,
    NotFoundError: 404,
    ConflictError: 409,
    InvalidTokenError: 400,
    RateLimitedError: 429,
    UpstreamUnavailableError: 502,
    FeatureUnavailableError: 503,  # no Retry-After: waiting will not help
    ClientGoneError: 499,  # nobody reads it: for the access log and metrics
}

_DEFAULT_CODES = {400: "bad_request", 401: "unauthenticated", 403: "forbidden", 404: "not_found",
                  405: "method_not_allowed", 409: "conflict", 413: "payload_too_large",
                  415: "unsupported_media_type", 429: "rate_limited"}


def error_body(code: str, message: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message}}


def error_bytes(code: str, message: str) -> bytes:
    return msgspec.json.encode(error_body(code, message))


def _jsonable(value: Any) -> Any:
    try:
        msgspec.json.encode(value)
    except (TypeError, msgspec.EncodeError, OverflowError):
        return str(value)
    return value


def detail(loc: list[Any], msg: str, type_: str, value: Any = None, ctx: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"loc": loc, "msg": msg, "type": type_, "input": _jsonable(value), "ctx": {k: _jsonable(v) for k, v in (ctx or {}).items()}}


def unprocessable(details: list[dict[str, Any]]) -> Response[Any]:
    return Response({"detail": details}, status_code=HTTP_422_UNPROCESSABLE_ENTITY)


def _validation_details(request: Request[Any, Any, Any], exc: ValidationException) -> list[dict[str, Any]]:
    cause = exc.__cause__
    errors = getattr(cause, "errors", None)
    if callable(errors):
        errors = errors()
    if isinstance(errors, list) and all(isinstance(e, dict) and "loc" in e for e in errors):
        # pydantic request model: every error, already in the spec's terms
        return [
            detail(["body", *e.get("loc", ())], e.get("msg", "invalid value"), e.get("type", "value_error"), e.get("input"), e.get("ctx"))
            for e in errors
        ]
    found: list[dict[str, Any]] = []
    for item in exc.extra if isinstance(exc.extra, list) else []:
        source = getattr(item.get("source"), "value", item.get("source")) or "body"
        key = item.get("key")
        if source == "body" and key == "data":
            # an empty body leaves Litestar's whole-body parameter unset ("KeyError: 'data'")
            found.append(detail(["body"], "a JSON body is required", "missing"))
            continue
        loc = [str(source), key] if key else [str(source)]
        raw = request.query_params.get(key) if source == "query" and key else None
        if source == "path" and key:
            raw = request.path_params.get(key)
        message = item.get("message", "invalid value")
        kind = "missing" if "missing" in message.lower() else "type_error"
        found.append(detail(loc, message, kind, raw))
    return found or [detail(["body"], exc.detail or "invalid request", "value_error")]


def handle_validation(request: Request[Any, Any, Any], exc: ValidationException) -> Response[Any]:
    return unprocessable(_validation_details(request, exc))


def handle_http(request: Request[Any, Any, Any], exc: HTTPException) -> Response[Any]:
    # Litestar re-raises a body decoding failure as a plain 400 whose cause is the decoder's error;
    # its message varies ("JSON is malformed", "Input data was truncated", ...), so test the cause.
    if exc.status_code == 400 and isinstance(exc.__cause__, SerializationException):
        return unprocessable([detail(["body"], f"the body is not valid JSON: {exc.detail}", "json_invalid")])
    code = _DEFAULT_CODES.get(exc.status_code, "error")
    message = exc.detail if exc.status_code < 500 else "internal error"
    if isinstance(exc, NotFoundException):
        message = "no such route" if message == "Not Found" else message
    headers = dict(exc.headers or {})
    if exc.status_code == 413:  # the rest of the body is never read: the connection cannot carry another request
        headers["Connection"] = "close"
    return Response(error_body(code, str(message)), status_code=exc.status_code, headers=headers or None)


def status_and_headers(exc: ApplicationError) -> tuple[int, dict[str, str]]:
    """The status of an application error that is not a 422, and the headers that go with it."""
    status = next((s for cls, s in STATUS.items() if isinstance(exc, cls)), 400)
    if isinstance(exc, RateLimitedError):
        return status, {**exc.headers, "Retry-After": str(exc.retry_after)}
    if isinstance(exc, InProgressError):
        return status, {"Retry-After": str(exc.retry_after)}
    return status, {}


def handle_application(request: Request[Any, Any, Any], exc: ApplicationError) -> Response[Any]:
    if isinstance(exc, FieldError):
        return unprocessable([detail(exc.loc, exc.message, exc.code, exc.value, exc.ctx)])
    if isinstance(exc, ValidationFailedError):
        return unprocessable([detail(loc, message, kind, value, ctx)
                              for (loc, message, kind, value), ctx in zip(exc.problems, exc.contexts, strict=True)])
    status, headers = status_and_headers(exc)
    return Response(error_body(exc.code, exc.message), status_code=status, headers=headers or None)


def handle_request_rule(request: Request[Any, Any, Any], exc: RequestRuleError) -> Response[Any]:
    """A domain rule refused the request body: its problems, located in the body."""
    return unprocessable([detail(loc, message, kind, value, ctx)
                          for (loc, message, kind, value), ctx in zip(exc.within(["body"]), exc.contexts, strict=True)])


# How long a client waits before it tries again while the database cannot be reached: about what
# the pools take to notice its return (they retry every 2 s at most).
DATABASE_RETRY_AFTER_SECONDS = 2


def database_unavailable() -> Response[Any]:
    return Response(error_body("database_unavailable", "the database cannot be reached; try again shortly"),
                    status_code=503, headers={"Retry-After": str(DATABASE_RETRY_AFTER_SECONDS)})


def handle_unexpected(request: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
    services = getattr(request.app.state, "services", None)
    if services is not None and services.database_outage(exc):
        log.warning("request.database_unavailable", path=request.url.path, error=type(exc).__name__)
        return database_unavailable()
    log.error("request.failed", path=request.url.path, exc_info=exc)
    return Response(error_body("internal_error", "internal error"), status_code=500)


EXCEPTION_HANDLERS: dict[Any, Any] = {
    ValidationException: handle_validation,
    HTTPException: handle_http,
    ApplicationError: handle_application,
    RequestRuleError: handle_request_rule,
    Exception: handle_unexpected,
}
