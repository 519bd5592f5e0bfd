"""What can go wrong, as one exception family: every failure a caller sees is a ``CallwrightError``.

The API answers ``{"error": {"code", "message"}}`` for every error except 422, which is
``{"detail": [{loc, msg, type, input, ctx}, ...]}`` listing every problem at once; the class is
chosen by status so callers can ``except NotFoundError`` without reading codes.
"""

from __future__ import annotations

from typing import Any

import httpx

from callwright_client._retry import retry_after_seconds


class CallwrightError(Exception):
    """Base of every error the client raises. ``status`` is the HTTP status (None when no answer
    came), ``code`` the API's stable error code, ``body`` the decoded answer (or its text)."""

    def __init__(self, message: str, status: int | None = None, code: str | None = None, body: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code
        self.body = body

    def __str__(self) -> str:
        prefix = " ".join(str(part) for part in (self.status, self.code) if part is not None)
        return f"{prefix}: {self.message}" if prefix else self.message


class ConfigurationError(CallwrightError):
    """The client cannot be built as asked (no API key in the arguments or the environment)."""


class APIConnectionError(CallwrightError):
    """No answer: the server could not be reached, or the connection failed, after every retry."""


class WaitTimeout(CallwrightError):
    """``calls.wait`` gave up before the call ended; ``call`` is the last record read."""

    def __init__(self, message: str, call: Any = None) -> None:
        super().__init__(message)
        self.call = call


class ValidationError(CallwrightError):
    """422: ``detail`` lists every problem (``loc``, ``msg``, ``type``, ``input``, ``ctx``)."""

    def __init__(self, message: str, status: int | None = None, code: str | None = None, body: Any = None) -> None:
        super().__init__(message, status, code, body)
        found = body.get("detail") if isinstance(body, dict) else None
        self.detail: list[dict[str, Any]] = found if isinstance(found, list) else []


class AuthenticationError(CallwrightError):
    """401: the key is missing, unknown, revoked or expired."""


class PermissionDeniedError(CallwrightError):
    """403: the key lacks the scope, or the account is not approved yet."""


class NotFoundError(CallwrightError):
    """404: no such resource for this account."""


class ConflictError(CallwrightError):
    """409: the resource's state forbids it, or an ``Idempotency-Key`` was reused with another body
    (``idempotency_key_reused``), or its first request was still at work after every retry
    (``provision_in_progress``: send it again later with the same key)."""


class RateLimitError(CallwrightError):
    """429 after every retry; ``retry_after`` is the server's ``Retry-After`` in seconds."""

    def __init__(self, message: str, status: int | None = None, code: str | None = None, body: Any = None,
                 retry_after: float | None = None) -> None:
        super().__init__(message, status, code, body)
        self.retry_after = retry_after


class ServerError(CallwrightError):
    """5xx after every retry the request allowed."""


BY_STATUS: dict[int, type[CallwrightError]] = {
    401: AuthenticationError, 403: PermissionDeniedError, 404: NotFoundError, 409: ConflictError,
    422: ValidationError,
}
VALIDATION_CODE = "validation_error"


def _decoded(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return response.text


def _problems_text(detail: list[Any]) -> str:
    parts = []
    for problem in detail:
        if isinstance(problem, dict):
            where = ".".join(str(part) for part in problem.get("loc", []))
            parts.append(f"{where}: {problem.get('msg', '')}" if where else str(problem.get("msg", "")))
    return "; ".join(parts) or "the request is invalid"


def error_from_response(response: httpx.Response) -> CallwrightError:
    """The exception for an answer of status 400 or more."""
    status = response.status_code
    body = _decoded(response)
    code: str | None = None
    message = response.reason_phrase or f"HTTP {status}"
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        code = body["error"].get("code")
        message = str(body["error"].get("message") or message)
    elif isinstance(body, dict) and isinstance(body.get("detail"), list):
        code, message = VALIDATION_CODE, _problems_text(body["detail"])
    if status == 429:
        return RateLimitError(message, status, code, body, retry_after=retry_after_seconds(response.headers))
    cls = ServerError if status >= 500 else BY_STATUS.get(status, CallwrightError)
    return cls(message, status, code, body)
