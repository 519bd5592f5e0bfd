"""The API's own routes, called in process on behalf of a dashboard session.

The session was authenticated by ``session``; ``AuthMiddleware`` takes its principal from a scope
extension (``DASHBOARD_SESSION``) that only this process can set, so every page sees what the API
would answer that user: the same use cases, read models, scopes, rate limits and errors. ``/v1``
itself keeps refusing session tokens sent by a client.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import httpx

from application.principal import Principal
from entrypoints.http.auth import DASHBOARD_SESSION

BASE = "http://callwright.internal"


@dataclass(frozen=True)
class Answer:
    """One answer of the API: its status, its JSON (or text) and the headers a page may need."""

    status: int
    body: Any
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    @property
    def error(self) -> dict[str, str]:
        """``{code, message}`` of a refusal; a 422's problems are summed up in its message."""
        if self.ok:
            return {}
        if isinstance(self.body, dict) and isinstance(self.body.get("error"), dict):
            return {"code": str(self.body["error"].get("code", "")), "message": str(self.body["error"].get("message", ""))}
        if self.status == 422:
            return {"code": "validation_error",
                    "message": "; ".join(f"{where}: {msg}" if where else msg for where, msg in self.problems)}
        return {"code": f"http_{self.status}", "message": str(self.body)[:300]}

    @property
    def problems(self) -> list[tuple[str, str]]:
        """A 422's problems (SPEC.md's ``{detail: [{loc, msg, …}]}``) as (where, message): where is the
        ``loc`` without its leading ``body``/``query``, dotted (``outcome_schema.price.type``)."""
        found = self.body.get("detail") if self.status == 422 and isinstance(self.body, dict) else None
        if not isinstance(found, list):
            return []
        return [(".".join(str(part) for part in (p.get("loc") or [])[1:]), str(p.get("msg", "")))
                for p in found if isinstance(p, dict)]

    def problem_for(self, name: str) -> str | None:
        """The message of the first problem at or under the form field ``name``."""
        return next((msg for where, msg in self.problems if where == name or where.startswith(name + ".")), None)


def _as_session(app: Any, principal: Principal | None) -> Any:
    async def asgi(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if principal is not None:
            scope = {**scope, "extensions": {**(scope.get("extensions") or {}), DASHBOARD_SESSION: principal}}
        await app(scope, receive, send)

    return asgi


class Api:
    """``await api.get("/v1/calls", params=…)``: the answer of the route, as that session."""

    def __init__(self, app: Any, principal: Principal | None, client_host: str = "127.0.0.1") -> None:
        self._transport = httpx.ASGITransport(app=_as_session(app, principal), client=(client_host, 0))

    async def request(self, method: str, path: str, *, params: Any = None, json: Any = None,
                      headers: dict[str, str] | None = None) -> Answer:
        async with httpx.AsyncClient(transport=self._transport, base_url=BASE, timeout=30.0) as client:
            response = await client.request(method, path, params=params, json=json, headers=headers)
        kind = response.headers.get("content-type", "")
        body: Any = response.json() if "json" in kind and response.content else response.text
        return Answer(response.status_code, body, dict(response.headers))

    async def get(self, path: str, **options: Any) -> Answer:
        return await self.request("GET", path, **options)

    async def post(self, path: str, **options: Any) -> Answer:
        return await self.request("POST", path, **options)

    async def patch(self, path: str, **options: Any) -> Answer:
        return await self.request("PATCH", path, **options)

    async def delete(self, path: str, **options: Any) -> Answer:
        return await self.request("DELETE", path, **options)
