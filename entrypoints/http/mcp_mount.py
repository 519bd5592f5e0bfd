"""The hosted tool interface (SPEC.md "Tool interface"), served by ``callwright serve`` itself:
Streamable HTTP at ``/mcp`` and SSE at ``/mcp/sse`` with its message endpoint ``/mcp/messages/``.

Every request needs ``Authorization: Bearer <API key>``: no key, a bad one, a revoked or expired
one, or a session token is a 401 before any MCP message is read, in the API's error shape. A tool
then calls the REST API in process (``httpx.ASGITransport`` on this same application) with the
bearer of the message that invoked it, so scopes, ``number_ids``, verification, idempotency and
rate limits apply exactly as they do to a REST client. Streamable HTTP runs stateless: any API
process can answer any request, and nothing of a session outlives its request.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlsplit

import httpx
from callwright_client import AsyncClient
from litestar import Litestar
from litestar.handlers import asgi
from mcp.server.mcpserver import Context
from mcp.server.transport_security import TransportSecuritySettings

from application.accounts.app import Accounts
from application.accounts.authentication import authenticate_key
from application.errors import ApplicationError, AuthenticationError
from domain.accounts import api_key as key_rules
from entrypoints.http.auth import bearer_token
from entrypoints.http.blocking import run_blocking
from entrypoints.http.errors import error_bytes, status_and_headers
from entrypoints.mcp.tools import build_server

PREFIX = "/mcp"
SSE_PATH, MESSAGE_PATH = "/sse", "/messages/"
MAX_BODY = 1_000_000  # the REST API's own limit
INTERNAL_BASE = "http://callwright.internal"  # never resolved: requests go through the ASGI transport
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")


def transport_security(public_base_url: str | None) -> TransportSecuritySettings:
    """DNS-rebinding protection stays on: loopback names, plus the public base URL's host."""
    hosts = [f"{host}:*" for host in LOOPBACK_HOSTS] + list(LOOPBACK_HOSTS)
    origins = [f"http://{host}:*" for host in LOOPBACK_HOSTS]
    if public_base_url:
        public = urlsplit(public_base_url)
        hosts += [public.netloc, f"{public.hostname}:*", public.hostname or public.netloc]
        origins += [f"{public.scheme}://{public.netloc}"]
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts,
                                     allowed_origins=origins)


class HostedTools:
    """The MCP server of one application and the two transports' ASGI entry points."""

    def __init__(self, accounts: Accounts, public_base_url: str | None, app_for: Callable[[], Litestar]) -> None:
        self.accounts = accounts
        self._app_for = app_for
        self.server = build_server(self._client_for)
        security = transport_security(public_base_url)
        self.sse = self.server.sse_app(sse_path=SSE_PATH, message_path=MESSAGE_PATH, transport_security=security,
                                       max_request_body_size=MAX_BODY)
        self.server.streamable_http_app(stateless_http=True, transport_security=security,
                                        max_request_body_size=MAX_BODY)

    async def _client_for(self, ctx: Context | None) -> AsyncClient:
        request = ctx.request_context.request if ctx is not None else None
        token = bearer_token(getattr(request, "scope", None) or {})
        if token is None:  # the guard below let the request in, so this is a transport without headers
            raise AuthenticationError("send your API key as 'Authorization: Bearer sk_live_…'",
                                      code="missing_credentials")
        transport = httpx.ASGITransport(app=self._app_for(), client=("127.0.0.1", 0))
        return AsyncClient(api_key=token, base_url=INTERNAL_BASE, transport=transport)

    @asynccontextmanager
    async def lifespan(self, _app: Litestar) -> AsyncIterator[None]:
        async with self.server.session_manager.run():
            yield

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        # Litestar hands a mount the path below its prefix, with a trailing slash on sub-paths.
        below = scope["path"].rstrip("/") or "/"
        if below not in ("/", SSE_PATH, MESSAGE_PATH.rstrip("/")):
            await _answer(send, 404, error_bytes("not_found", f"no tool transport at {PREFIX}{below}"))
            return
        try:
            await self._authenticate(scope)
        except ApplicationError as exc:
            status, named = status_and_headers(exc)
            extra = [(k.lower().encode(), v.encode()) for k, v in named.items()]
            extra.append((b"www-authenticate", b'Bearer realm="callwright"'))
            await _answer(send, status, error_bytes(exc.code, exc.message), extra)
            return
        if below == "/":
            await self.server.session_manager.handle_request({**scope, "path": PREFIX}, receive, send)
            return
        path = PREFIX + (SSE_PATH if below == SSE_PATH else MESSAGE_PATH)
        await self.sse({**scope, "path": path, "raw_path": path.encode(), "root_path": PREFIX}, receive, send)

    async def _authenticate(self, scope: dict[str, Any]) -> None:
        token = bearer_token(scope)
        if token is None:
            raise AuthenticationError("send your API key as 'Authorization: Bearer sk_live_…'",
                                      code="missing_credentials")
        if not token.startswith(key_rules.SECRET_PREFIX):
            raise AuthenticationError("the tool interface takes an API key ('Authorization: Bearer sk_live_…')",
                                      code="invalid_api_key")
        await run_blocking(authenticate_key, self.accounts, token, method=scope.get("method", "GET"),
                           path=PREFIX + scope["path"])


async def _answer(send: Any, status: int, body: bytes, extra: list[tuple[bytes, bytes]] | None = None) -> None:
    headers = [(b"content-type", b"application/json"), *(extra or [])]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def mount(tools: HostedTools) -> Any:
    """The Litestar route: a mount at ``/mcp`` (so ``/mcp``, ``/mcp/sse`` and ``/mcp/messages/``)."""

    @asgi(PREFIX, is_mount=True, copy_scope=True)
    async def tool_interface(scope: Any, receive: Any, send: Any) -> None:
        await tools(scope, receive, send)

    return tool_interface
