"""The closed set of errors a use case may raise; ``entrypoints.http.errors`` maps them."""

from __future__ import annotations

from typing import Any


class ApplicationError(Exception):
    code = "error"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code


class NotFoundError(ApplicationError):
    code = "not_found"


class ConflictError(ApplicationError):
    code = "conflict"


class InProgressError(ConflictError):
    """The same request is still being worked on by another; answered 409 with ``Retry-After``."""

    code = "request_in_progress"

    def __init__(self, message: str, *, retry_after: int, code: str | None = None) -> None:
        super().__init__(message, code=code)
        self.retry_after = retry_after


class AuthenticationError(ApplicationError):
    code = "unauthenticated"


class PermissionDeniedError(ApplicationError):
    code = "forbidden"


class InvalidTokenError(ApplicationError):
    code = "invalid_token"


class RateLimitedError(ApplicationError):
    code = "rate_limited"

    def __init__(self, message: str, *, retry_after: int, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.headers = headers or {}


class FieldError(ApplicationError):
    """A request field broke a rule only the model can check; answered as 422."""

    code = "value_error"

    def __init__(self, loc: list[str | int], message: str, *, code: str, value: Any = None,
                 ctx: dict[str, Any] | None = None) -> None:
        super().__init__(message, code=code)
        self.loc = loc
        self.value = value
        self.ctx = ctx or {}


class ValidationFailedError(ApplicationError):
    """Several request problems found by the model; answered as 422 listing them all."""

    code = "validation_failed"

    def __init__(self, problems: list[tuple[list[str | int], str, str, Any]],
                 contexts: list[dict[str, Any]] | None = None) -> None:
        super().__init__("; ".join(message for _, message, _, _ in problems) or "invalid request")
        self.problems = problems  # (loc, message, type code, input)
        self.contexts = contexts or [{} for _ in problems]  # each problem's ``ctx``


class UpstreamUnavailableError(ApplicationError):
    """A provider the request depends on could not be reached or failed on its side; answered 502."""

    code = "upstream_unavailable"


class FeatureUnavailableError(ApplicationError):
    """The server is not set up for this feature (an operator's setting is missing); answered 503."""

    code = "feature_unavailable"


class ClientGoneError(ApplicationError):
    """The client closed the request before its work was committed: nothing was saved."""

    code = "client_closed_request"
