"""The error answers of each operation beyond those every keyed route shares (docs.describe_access):
its 409s and the other refusals of its own (application/errors.py maps them to statuses), the
413 of every body over the size limit, and every error body as the one ``Error`` component."""

from __future__ import annotations

from litestar.openapi.spec import (
    Components,
    OpenAPI,
    OpenAPIHeader,
    OpenAPIMediaType,
    OpenAPIResponse,
    OpenAPIType,
    Reference,
    Schema,
)

from entrypoints.http.body import MAX_BODY_BYTES
from entrypoints.http.docs import ERROR_REF, METHODS, RATE_HEADERS, error_answer

# A write whose commit lost to a concurrent one on every try (application/boundary.py).
RACE = "conflict: a concurrent change of the same record won; try again"
REUSED_KEY = ("idempotency_key_reused: this Idempotency-Key was used in the last 24 h with another body, or on "
              "another endpoint (a key is unique per account)")
# Login attempts are counted per client address, not per key (SPEC.md Limits).
ATTEMPTS = "Too many attempts from this address (rate_limited): 10 per 5 minutes; retry after Retry-After seconds"

# (method, path) -> {status: what it means}. A route's own description of a status, if it has one,
# comes first and this one is added after "Or:".
ANSWERS: dict[tuple[str, str], dict[int, str]] = {
    ("POST", "/auth/signup"): {409: "email_taken: an account with this e-mail already exists"},
    ("POST", "/auth/login"): {401: "invalid_credentials: unknown e-mail or wrong password (the same answer for both)",
                              409: RACE, 429: ATTEMPTS},
    ("POST", "/auth/logout"): {401: "invalid_session: the token is not a valid session token", 409: RACE},
    ("POST", "/auth/forgot-password"): {429: ATTEMPTS + " (shared with login)"},
    ("POST", "/auth/verify-email"): {400: "invalid_token, token_used or token_expired",
                                     409: "token_used: a concurrent use of the same token won"},
    ("POST", "/auth/reset-password"): {400: "invalid_token, token_used or token_expired",
                                       409: "token_used: a concurrent use of the same token won"},
    ("POST", "/auth/api-keys/{key_id}/rotate"): {
        409: "key_already_rotated (a key is rotated once; rotate its successor) or key_revoked"},
    ("DELETE", "/auth/api-keys/{key_id}"): {409: RACE},
    ("POST", "/v1/calls"): {409: REUSED_KEY},
    ("POST", "/v1/calls/batch"): {409: REUSED_KEY},
    ("POST", "/v1/calls/{call_id}/cancel"): {409: "call_already_ended: the call is completed or failed; or conflict: "
                                                  "it kept changing while being cancelled"},
    ("POST", "/v1/numbers"): {409: RACE},
    ("PATCH", "/v1/numbers/{number_id}"): {409: RACE},
    ("DELETE", "/v1/numbers/{number_id}"): {409: RACE},
    ("POST", "/v1/numbers/byo"): {409: "number_taken: the E.164 is already an active number, of this account "
                                       "or another; or " + RACE},
    ("DELETE", "/v1/numbers/byo/{number_id}"): {409: RACE},
    ("POST", "/v1/providers/carrier/verify"): {409: RACE, 502: "upstream_unavailable: the carrier could not be "
                                                              "reached to verify the credentials; try again"},
    ("POST", "/v1/providers/select-number"): {409: RACE},
    ("POST", "/v1/suppressions"): {409: RACE},
    ("DELETE", "/v1/suppressions/{e164}"): {409: RACE},
    ("DELETE", "/v1/templates/{template_id}"): {409: RACE},
    ("PATCH", "/v1/flows/{flow_id}"): {409: RACE},
    ("POST", "/v1/flows/{flow_id}/publish"): {409: RACE},
    ("POST", "/v1/webhooks"): {409: RACE},
    ("PATCH", "/v1/webhooks/{endpoint_id}"): {409: RACE},
    ("DELETE", "/v1/webhooks/{endpoint_id}"): {409: RACE},
    ("POST", "/v1/webhooks/{endpoint_id}/rotate-secret"): {409: RACE},
    ("POST", "/v1/webhooks/{endpoint_id}/deliveries/{delivery_id}/retry"): {
        409: "webhook_deleted, webhook_disabled (re-enable it with PATCH active=true first), or "
             "delivery_in_progress (retry it once it has finished)"},
    ("PATCH", "/v1/tenants/me"): {409: RACE},
    ("POST", "/v1/admin/users/{user_id}/approve"): {409: RACE},
    ("PATCH", "/v1/admin/system-defaults"): {409: RACE},
}
_ATTEMPT_HEADERS = {
    "Retry-After": RATE_HEADERS["Retry-After"],
    "X-RateLimit-Limit": "Attempts allowed per window from this address",
    "X-RateLimit-Remaining": "Attempts left in the current window",
    "X-RateLimit-Reset": "Unix time at which the window starts again",
}
_ROUTE_ERROR_REF = "#/components/schemas/ErrorBody"  # what a controller's ResponseSpec(ErrorBody) gives


def _too_large() -> OpenAPIResponse:
    return OpenAPIResponse(
        description=f"payload_too_large: the body is over {MAX_BODY_BYTES} bytes; it is not read, and the "
                    "connection is closed",
        content={"application/json": OpenAPIMediaType(schema=Reference(ref=ERROR_REF))},
        headers={"Connection": OpenAPIHeader(description="close", schema=Schema(type=OpenAPIType.STRING))},
    )


def _merged(own: OpenAPIResponse | Reference | None, status: int, text: str) -> OpenAPIResponse:
    answer = error_answer(text, _ATTEMPT_HEADERS if status == 429 else None)
    if isinstance(own, OpenAPIResponse) and own.description and text not in own.description:
        answer.description = f"{own.description}. Or: {text}"
    return answer


def _one_error_shape(response: OpenAPIResponse | Reference) -> None:
    for media in (response.content or {}).values() if isinstance(response, OpenAPIResponse) else ():
        if isinstance(media.schema, Reference) and media.schema.ref == _ROUTE_ERROR_REF:
            media.schema = Reference(ref=ERROR_REF)


def describe_answers(openapi: OpenAPI) -> None:
    for path, item in (openapi.paths or {}).items():
        for method in METHODS:
            operation = getattr(item, method)
            if operation is None:
                continue
            responses = operation.responses if operation.responses is not None else {}
            for status, text in ANSWERS.get((method.upper(), path), {}).items():
                responses[str(status)] = _merged(responses.get(str(status)), status, text)
            if operation.request_body is not None:
                responses.setdefault("413", _too_large())
            for status, response in responses.items():
                if status >= "4" and status != "422":
                    _one_error_shape(response)
            operation.responses = dict(sorted(responses.items()))
    components = openapi.components if isinstance(openapi.components, Components) else Components()
    for name in ("ErrorBody", "ErrorDetail"):  # the same shape as Error, now referenced by nothing
        (components.schemas or {}).pop(name, None)
