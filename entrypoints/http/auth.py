"""Authentication, rate limiting and the verification gate, before any handler runs.

``/v1/*`` takes API keys only (a session token gets 401 telling the caller to use a key);
the dashboard routes under ``/auth`` take a key or a session. Scopes are checked by guards.
"""

from __future__ import annotations

from typing import Any

from litestar.connection import ASGIConnection
from litestar.handlers import BaseRouteHandler

from application.accounts import sessions as session_use_cases
from application.accounts.administration import require_admin
from application.accounts.authentication import authenticate_key, identified, remembered_key
from application.errors import ApplicationError, AuthenticationError, PermissionDeniedError, RateLimitedError
from application.ports import RateDecision
from application.principal import Principal
from domain.accounts import api_key as key_rules
from domain.accounts.tenant import APPROVED
from entrypoints.http.blocking import run_blocking
from entrypoints.http.errors import error_bytes, status_and_headers
from entrypoints.http.services import Admission, HttpServices

WINDOW = 60  # seconds: limits are per minute
KEY_ONLY = "key"
KEY_OR_SESSION = "key_or_session"
SESSION_ROUTES = ("/auth/me", "/auth/api-keys", "/auth/api_keys")
# The scope extension through which the dashboard (``entrypoints.http.dashboard.api``) calls the API's
# own routes in process for a session it has already authenticated. Only code in this process can
# set a scope key: nothing a client sends over the network becomes one.
DASHBOARD_SESSION = "callwright.dashboard_session"


def policy_for(path: str) -> str | None:
    if path.startswith("/v1/"):
        return KEY_ONLY
    if any(path == p or path.startswith(p + "/") for p in SESSION_ROUTES):
        return KEY_OR_SESSION
    return None


def bearer_token(scope: dict[str, Any]) -> str | None:
    for name, value in scope.get("headers", ()):
        if name == b"authorization":
            scheme, _, token = value.decode("latin-1").strip().partition(" ")
            if scheme.lower() == "bearer" and token.strip():
                return token.strip()
            return None
    return None


def refuse_over_limit(decision: RateDecision, principal: Principal) -> None:
    """The 429 of a refused hit, with its rate headers."""
    if not decision.allowed:
        raise identified(RateLimitedError(
            f"rate limit of {decision.limit} requests per minute exceeded",
            retry_after=decision.retry_after,
            headers=rate_headers(decision),
        ), principal.key_id, principal.tenant_id)


def rate_headers(decision: RateDecision) -> dict[str, str]:
    return {
        "X-RateLimit-Limit": str(decision.limit),
        "X-RateLimit-Remaining": str(decision.remaining),
        "X-RateLimit-Reset": str(decision.reset_at),
    }


async def count_hit(admission: Admission, principal: Principal) -> RateDecision:
    """This request's hit in its key's (or dashboard user's) budget, from this process's lease of the
    shared budget (``RateLeases``)."""
    bucket = f"key:{principal.key_id}" if principal.key_id else f"user:{principal.user_id}"
    return await admission.fresh.hit(bucket, limit=admission.tier_limit(principal.tier), window_seconds=WINDOW,
                                     now=admission.clock())


class AuthMiddleware:
    def __init__(self, app: Any, admission: Admission) -> None:
        self.app = app
        self.admission = admission

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        policy = policy_for(scope.get("path", "")) if scope["type"] == "http" else None
        if policy is None:
            await self.app(scope, receive, send)
            return
        token, method, path = bearer_token(scope), scope.get("method", "GET"), scope.get("path", "")
        session = (scope.get("extensions") or {}).get(DASHBOARD_SESSION)
        try:
            principal = session or await self._remembered(token)
            if principal is None:
                principal = await run_blocking(self._authenticate, token, policy, method, path)
            # A dashboard page's own calls are not counted again: the page's request was
            # (``entrypoints.http.dashboard.session``), however many API answers it shows.
            decision = None if session else await count_hit(self.admission, principal)
            if decision is not None:
                refuse_over_limit(decision, principal)
        except ApplicationError as exc:
            await self._reject(send, exc, None, scope)
            return
        extra = [(k.lower().encode(), v.encode()) for k, v in rate_headers(decision).items()] if decision else []
        if policy == KEY_ONLY and principal.verification_status != APPROVED:
            gate = identified(PermissionDeniedError(
                "this account is pending review; API calls are refused until an operator approves it",
                code="account_pending_review",
            ), principal.key_id, principal.tenant_id)
            await self._reject(send, gate, extra, scope)
            return
        scope.setdefault("state", {})["principal"] = principal

        async def send_with_limits(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        await self.app(scope, receive, send_with_limits)

    async def _remembered(self, token: str | None) -> Principal | None:
        """The hot path, on the event loop: an active key this process has already looked up, whose
        key and tenant have not changed since, as the watcher of the accounts log vouches
        (``AccountChanges``: no database). When it cannot vouch (stalled, or the database away), one
        coalesced read of the accounts head does: an unmoved head means nothing changed."""
        if token is None:
            return None
        remembered = remembered_key(self.admission.accounts, token)
        if remembered is None:
            return None
        head, principal, vouched = remembered
        if vouched:
            return principal
        if await self.admission.fresh.accounts_head() != head:
            return None
        return principal

    def _authenticate(self, token: str | None, policy: str, method: str, path: str) -> Principal:
        """The full path: key or session, read through the caches (the request is counted after)."""
        accounts = self.admission.accounts
        if token is None:
            raise AuthenticationError(
                "send your API key as 'Authorization: Bearer sk_live_…'", code="missing_credentials"
            )
        if token.startswith(key_rules.SECRET_PREFIX):
            return authenticate_key(accounts, token, method=method, path=path)
        if accounts.ports.sessions.looks_like_session(token):
            if policy == KEY_ONLY:
                raise AuthenticationError(
                    "session tokens are only for the dashboard; /v1 routes need an API key "
                    "('Authorization: Bearer sk_live_…')",
                    code="api_key_required",
                )
            return session_use_cases.authenticate_session(accounts, token)
        raise AuthenticationError("invalid API key", code="invalid_api_key")

    async def _reject(self, send: Any, exc: ApplicationError, extra: list[tuple[bytes, bytes]] | None,
                      scope: dict[str, Any]) -> None:
        status, named = status_and_headers(exc)
        # The request line (``entrypoints.http.context``) names the refusal and, when the key was
        # recognised (revoked, expired, rate-limited, pending review), its id and tenant.
        scope.setdefault("state", {})["refusal"] = {
            "error_code": exc.code, "key_id": getattr(exc, "key_id", None), "tenant_id": getattr(exc, "tenant_id", None)}
        headers = [(b"content-type", b"application/json"), *(extra or [])]
        headers += [(k.lower().encode(), v.encode()) for k, v in named.items()]
        if isinstance(exc, AuthenticationError):
            headers.append((b"www-authenticate", b'Bearer realm="callwright"'))
        body = error_bytes(exc.code, exc.message)
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})


def principal_of(connection: ASGIConnection[Any, Any, Any, Any]) -> Principal:
    principal = connection.scope.get("state", {}).get("principal")
    if principal is None:  # pragma: no cover - the middleware runs before every guarded route
        raise AuthenticationError("not authenticated", code="missing_credentials")
    return principal


def requires_scope(scope_name: str) -> Any:
    # async: a synchronous guard would cost a thread hop per request for a set lookup
    async def guard(connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler) -> None:
        principal_of(connection).require_scope(scope_name)

    guard.__name__ = f"requires_{scope_name.replace(':', '_')}"
    return guard


async def admin_only(connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler) -> None:
    services: HttpServices = connection.app.state.services
    await run_blocking(require_admin, services.admission.accounts, principal_of(connection))
